/**
 * `desk card …`: the launch card of a project (its ticket, suggestions and plugs) and Go, which
 * freezes it into a launch and makes the run.
 */
import { DeskError } from '../../core/errors';
import { maxTicketBytes } from '../../core/inputLimits';
import { humanBytes } from '../../attachments/names';
import type { PlugRole } from '../../launch/types';
import { expectArgs, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { print } from '../output';
import { projectPath, repoTop } from '../projects';
import { terminalSafe as t, terminalSafeLines } from '../terminal';

/** The card of --project NAME, else of the repository at --repo PATH or around the current folder. */
async function launchesOf({ command, rest, values, open }: CommandContext) {
	expectArgs(rest, 0, command);
	const opened = await open();
	const top = values.project ? projectPath(opened, values.project) : await repoTop(values.repo ?? process.cwd());
	return { top, launches: await opened.launches(top) };
}

/** `desk card show` */
async function cardShow(context: CommandContext): Promise<number> {
	const { launches } = await launchesOf(context);
	const card = launches.card();
	print(
		context.out,
		card,
		() =>
			`${terminalSafeLines(card.ticket) || '(no ticket yet)'}\n${card.plugs.map((p) => `  ${t(p.role).padEnd(12)} ${t(p.id)}`).join('\n') || '  (nothing plugged)'}`,
	);
	return 0;
}

/** `desk card suggest [--ticket TEXT | --ticket-file F]` */
async function cardSuggest(context: CommandContext): Promise<number> {
	const { values, out } = context;
	const { launches } = await launchesOf(context);
	const ticket =
		values['ticket-file'] !== undefined
			? readInputText(values['ticket-file'], 'the ticket file', maxTicketBytes)
			: values.ticket;
	if (ticket !== undefined && ticket.length > maxTicketBytes) {
		throw new DeskError('input.tooLarge', `The ticket is over the limit of ${humanBytes(maxTicketBytes)}.`, {
			size: ticket.length,
			limit: maxTicketBytes,
		});
	}
	if (ticket !== undefined) {
		launches.setTicket(ticket);
	}
	const suggestions = await launches.suggest();
	print(
		out,
		suggestions,
		() =>
			suggestions
				.map(
					(s) =>
						`${s.score !== undefined ? s.score.toFixed(2).padStart(6) : '     —'}  ${t(s.asset_id)}  ${t(s.name)}  ${t(s.role)}  (${t(s.reason)})`,
				)
				.join('\n') || '(no suggestions)',
	);
	return 0;
}

/** `desk card go [--request-id ID]` */
async function cardGo(context: CommandContext): Promise<number> {
	const { out, madeBy, requestOf } = context;
	const { top, launches } = await launchesOf(context);
	const { result: record } = await launches.goOnce(madeBy, new Date(), requestOf('desk card go', { top }));
	print(
		out,
		record,
		() =>
			`launched ${t(record.launch_id)}: run ${t(record.run)}\n${record.plugs.map((p) => `  ${t(p.role).padEnd(12)} ${t(p.name)} v${p.version}`).join('\n')}`,
	);
	return 0;
}

/** `desk card unplug --asset ID` */
async function cardUnplug(context: CommandContext): Promise<number> {
	const { command, values, out } = context;
	const { launches } = await launchesOf(context);
	if (!values.asset) {
		throw new UsageError(`${command} needs --asset ID`);
	}
	print(out, launches.unplug(values.asset), () => `unplugged ${t(values.asset!)}`);
	return 0;
}

/** `desk card plug --asset ID --role reference|target|instructions [--nodes a,b] [--files GLOB]... [--copy FROM=TO]...` */
async function cardPlug(context: CommandContext): Promise<number> {
	const { command, values, out } = context;
	const { launches } = await launchesOf(context);
	if (!values.asset) {
		throw new UsageError(`${command} needs --asset ID`);
	}
	const copy: Record<string, string> = {};
	for (const spec of values.copy ?? []) {
		const eq = spec.indexOf('=');
		if (eq <= 0) {
			throw new UsageError(`--copy takes FROM=TO, not ${spec}`);
		}
		copy[spec.slice(0, eq)] = spec.slice(eq + 1);
	}
	const card = await launches.plug(values.asset, (values.role ?? 'reference') as PlugRole, {
		nodes: values.nodes ? values.nodes.split(',').filter(Boolean) : [],
		files: values.files ?? [],
		copy,
	});
	print(out, card, () => `plugged ${t(values.asset!)} as ${t(values.role ?? 'reference')}`);
	return 0;
}

export const cardCommands: ReadonlyArray<[string, Command]> = [
	['card show', cardShow],
	['card suggest', cardSuggest],
	['card plug', cardPlug],
	['card unplug', cardUnplug],
	['card go', cardGo],
];
