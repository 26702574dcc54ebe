/**
 * `desk board …` (glossary: Lineage): a node's board listed, a note posted for a branch's run, a
 * report answered once, and Continue with Reports (carried out here, like `run go`).
 */
import type { BoardMessage } from '../../lineage/types';
import { answerReport, continueWithReports, listBoard, postToBoard } from '../../operations/board';
import { projectTop, runStatus } from '../../operations/runs';
import { UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { invokeFromCommandLine, operationCommand } from '../operationCommand';
import { projectOfCommand } from '../projects';
import { terminalSafe as t } from '../terminal';
import { settingsOf } from './run';
import { formatRunDetail } from './runs';

/** A board message on one line (and its text below it). */
export function formatBoardMessage(message: BoardMessage): string {
	const flags = [
		message.passive ? 'passive' : 'active',
		...(message.frozen ? ['frozen'] : []),
		...(message.superseded_by ? ['superseded'] : []),
		...(message.answered_by ? [`answered by ${message.answered_by}`] : []),
	];
	const outcome = typeof message.data?.outcome === 'string' ? ` ${message.data.outcome}` : '';
	const from = message.from_node ? ` from ${message.from_node}` : '';
	const head = `#${message.seq} ${message.kind}${outcome} ${message.id}${from} (${flags.join(', ')})`;
	return `${t(head)}\n${t(message.text)
		.split('\n')
		.map((line) => `  ${line}`)
		.join('\n')}`;
}

/** Two positional arguments: `ID TEXT`. */
function idAndText({ rest, command }: CommandContext, id: string): [string, string] {
	if (rest.length !== 2) {
		throw new UsageError(`${command} ${id} TEXT`);
	}
	return [rest[0]!, rest[1]!];
}

/** `desk board list NODE [--since SEQ]` */
const boardList = operationCommand(listBoard, {
	async params(context) {
		const { rest, values, command } = context;
		if (rest.length !== 1) {
			throw new UsageError(`${command} NODE`);
		}
		const since = values.since === undefined ? undefined : Number(values.since);
		if (since !== undefined && (!Number.isSafeInteger(since) || since < 0)) {
			throw new UsageError('--since takes a message seq (0, 1, ...)');
		}
		return { project: await projectOfCommand(context), node: rest[0]!, ...(since !== undefined ? { since } : {}) };
	},
	text: ({ messages }) => (messages.length === 0 ? 'the board is empty' : messages.map(formatBoardMessage).join('\n')),
});

/** `desk board post RUN TEXT [--kind note|abstract]` */
const boardPost = operationCommand(postToBoard, {
	async params(context) {
		const [run, text] = idAndText(context, 'RUN');
		const kind = (['note', 'abstract'] as const).find((k) => k === context.values.kind);
		if (context.values.kind !== undefined && kind === undefined) {
			throw new UsageError('--kind takes note or abstract');
		}
		return { project: await projectOfCommand(context), run, text, ...(kind ? { kind } : {}) };
	},
	text: (message) => formatBoardMessage(message),
});

/** `desk board answer REPORT TEXT` */
const boardAnswer = operationCommand(answerReport, {
	async params(context) {
		const [report, text] = idAndText(context, 'REPORT');
		return { project: await projectOfCommand(context), report, text };
	},
	text: (message) => formatBoardMessage(message),
});

/** `desk board continue RUN [--settings FILE] [--agent NAME] [--isolation shared|worktree]`: the new run carried out here; exit 2 when it failed. */
const boardContinue = operationCommand(continueWithReports, {
	async params(context) {
		const { rest, command } = context;
		if (rest.length !== 1) {
			throw new UsageError(`${command} RUN`);
		}
		return { project: await projectOfCommand(context), run: rest[0]!, settings: settingsOf(context) };
	},
	text: (result) => `continued as run ${t(result.run)} with ${result.reports} report(s)`,
	async follow(result, context) {
		const desk = await context.open();
		const project = await projectOfCommand(context);
		await desk.runs(projectTop(desk, project));
		await desk.runEnded(result.run);
		const detail = await invokeFromCommandLine(runStatus, context, { project, id: result.run });
		return {
			value: { ...result, detail },
			text: () => `continued with ${result.reports} report(s)\n${formatRunDetail(detail)}`,
			exitCode: detail.summary.status === 'failed' ? 2 : 0,
		};
	},
});

export const boardCommands: ReadonlyArray<[string, Command]> = [
	['board list', boardList],
	['board post', boardPost],
	['board answer', boardAnswer],
	['board continue', boardContinue],
];
