/**
 * `desk task cancel`, `desk intent cancel` and `desk intent follow-up` (glossary: Ending, Follow-up).
 * A follow-up's run starts in this process; the command carries it out, as `run go` does.
 */
import { DeskError } from '../../core/errors';
import { maxTicketBytes } from '../../core/inputLimits';
import { cancelIntent, cancelTask, followUp } from '../../operations/endings';
import type { EndingResult } from '../../runs/types';
import { oneId, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { operationCommand } from '../operationCommand';
import { projectOfCommand } from '../projects';
import { terminalSafe as t } from '../terminal';
import { carriedOut, reportStates, settingsOf } from './run';

function endingParams(context: CommandContext) {
	return {
		...(context.values.reason !== undefined ? { reason: context.values.reason } : {}),
	};
}

function endingText(result: EndingResult): string {
	const lines = [
		...result.cancelled_runs.map((run) => `run ${t(run)}: cancelled`),
		...result.abandoned_runs.map((run) => `run ${t(run)}: abandoned`),
		...result.tasks.map((task) => `task ${t(task)}: cancelled`),
	];
	if (result.intent_status) {
		lines.push(`intent: ${t(result.intent_status)}`);
	}
	return lines.join('\n');
}

/** `desk task cancel ID [--reason TEXT]` */
const taskCancel = operationCommand(cancelTask, {
	params: async (context) => ({
		project: await projectOfCommand(context),
		task: oneId(context.rest, context.command),
		...endingParams(context),
	}),
	text: endingText,
});

/** `desk intent cancel ID [--reason TEXT]` */
const intentCancel = operationCommand(cancelIntent, {
	params: async (context) => ({
		project: await projectOfCommand(context),
		intent: oneId(context.rest, context.command),
		...endingParams(context),
	}),
	text: endingText,
});

/** The follow-up's ticket: --ticket TEXT or --ticket-file F, one of them. */
function ticketOf({ values }: CommandContext): string {
	if ((values.ticket === undefined) === (values['ticket-file'] === undefined)) {
		throw new UsageError('intent follow-up needs --ticket TEXT or --ticket-file F');
	}
	const ticket = values.ticket ?? readInputText(values['ticket-file']!, 'the ticket file', maxTicketBytes);
	if (Buffer.byteLength(ticket) > maxTicketBytes) {
		throw new DeskError('input.tooLarge', `The ticket is over the limit of ${maxTicketBytes} bytes.`, {
			size: Buffer.byteLength(ticket),
			limit: maxTicketBytes,
		});
	}
	return ticket;
}

/** `desk intent follow-up ID (--ticket TEXT | --ticket-file F) [--settings FILE] [--agent NAME] [--request-id ID]` */
const intentFollowUp = operationCommand(followUp, {
	async params(context) {
		const project = await projectOfCommand(context);
		const from = oneId(context.rest, context.command);
		const ticket = ticketOf(context);
		await reportStates(context, project);
		return { project, from, ticket, settings: settingsOf(context) };
	},
	text: (record) => `follow-up ${t(record.intent)} launched: run ${t(record.run)}`,
	follow: async (record, context) => carriedOut(context, await projectOfCommand(context), record.run),
});

export const endingCommands: ReadonlyArray<[string, Command]> = [
	['task cancel', taskCancel],
	['intent cancel', intentCancel],
	['intent follow-up', intentFollowUp],
];
