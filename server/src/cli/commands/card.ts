/**
 * `desk card …`: the launch card of a project (its ticket, suggestions and plugs) and Go, which
 * freezes it into a launch and makes the run.
 */
import { DeskError } from '../../core/errors';
import { maxTicketBytes } from '../../core/inputLimits';
import { humanBytes } from '../../attachments/names';
import { plugRoles, type PlugRole, type SuggestResult } from '../../launch/types';
import { getCard, launchGo, plugAsset, setTicket, suggestAssets, unplugAsset } from '../../operations/card';
import type { CardView } from '../../protocol/protocol';
import { expectArgs, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { invokeFromCommandLine, operationCommand } from '../operationCommand';
import { projectOfCommand } from '../projects';
import { terminalSafe as t, terminalSafeLines } from '../terminal';

/** The card of --project NAME, else of the repository at --repo PATH or around the current folder. */
function cardProject(context: CommandContext): Promise<string> {
	expectArgs(context.rest, 0, context.command);
	return projectOfCommand(context);
}

function cardText({ card }: CardView): string {
	return `${terminalSafeLines(card.ticket) || '(no ticket yet)'}\n${card.plugs.map((p) => `  ${t(p.role).padEnd(12)} ${t(p.id)}`).join('\n') || '  (nothing plugged)'}`;
}

/** `desk card show` */
const cardShow = operationCommand(getCard, {
	params: async (context) => ({ project: await cardProject(context) }),
	text: cardText,
	// The command line shows the card itself (the launch card's record), not the editor's view of it.
	json: (view) => view.card,
});

/** `desk card suggest [--ticket TEXT | --ticket-file F]`: the ticket given is saved on the card first. */
const cardSuggest = operationCommand(suggestAssets, {
	async params(context) {
		const { values } = context;
		const project = await cardProject(context);
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
			await invokeFromCommandLine(setTicket, context, { project, ticket });
		}
		// A script asks once: the answer waits for the complete index.
		return { project, complete: true };
	},
	text: suggestionsText,
	json: (result) => result.suggestions,
});

function suggestionsText({ suggestions }: SuggestResult): string {
	return (
		suggestions
			.map(
				(s) =>
					`${s.score !== undefined ? s.score.toFixed(2).padStart(6) : '     —'}  ${t(s.asset_id)}  ${t(s.name)}  ${t(s.role)}  (${t(s.reason)})`,
			)
			.join('\n') || '(no suggestions)'
	);
}

/** `desk card go [--request-id ID]`: Go without carrying the run out (`desk run go` carries it out). */
const cardGo = operationCommand(launchGo, {
	params: async (context) => ({ project: await cardProject(context), execute: false }),
	text: (record) =>
		`launched ${t(record.launch_id)}: run ${t(record.run)}\n${record.plugs.map((p) => `  ${t(p.role).padEnd(12)} ${t(p.name)} v${p.version}`).join('\n')}`,
});

/** --asset ID, which plug and unplug need. */
function assetOf({ command, values }: CommandContext): string {
	if (!values.asset) {
		throw new UsageError(`${command} needs --asset ID`);
	}
	return values.asset;
}

/** `desk card unplug --asset ID` */
const cardUnplug = operationCommand(unplugAsset, {
	params: async (context) => ({ project: await cardProject(context), id: assetOf(context) }),
	text: (_view, context) => `unplugged ${t(assetOf(context))}`,
	json: (view) => view.card,
});

/** --role, refused by the rule of plugging's own words (launch.badRole) rather than as a bad param. */
function roleOf(role: string): PlugRole {
	const known = plugRoles.find((r) => r === role);
	if (known === undefined) {
		throw new DeskError(
			'launch.badRole',
			`A plug's role is reference, target or instructions; not ${JSON.stringify(role)}.`,
			{
				role,
			},
		);
	}
	return known;
}

function plugged({ values }: CommandContext): string {
	return `plugged ${t(values.asset!)} as ${t(values.role ?? 'reference')}`;
}

/** `desk card plug --asset ID --role reference|target|instructions [--nodes a,b] [--files GLOB]... [--copy FROM=TO]...` */
const cardPlug = operationCommand(plugAsset, {
	async params(context) {
		const { values } = context;
		const id = assetOf(context);
		const copy = (values.copy ?? []).map((spec) => {
			const eq = spec.indexOf('=');
			if (eq <= 0) {
				throw new UsageError(`--copy takes FROM=TO, not ${spec}`);
			}
			return { from: spec.slice(0, eq), to: spec.slice(eq + 1) };
		});
		return {
			project: await cardProject(context),
			id,
			role: roleOf(values.role ?? 'reference'),
			nodes: values.nodes ? values.nodes.split(',').filter(Boolean) : [],
			files: values.files ?? [],
			copy,
		};
	},
	text: (_view, context) => plugged(context),
	json: (view) => view.card,
});

/**
 * `desk card keep --asset ID`: keeps a suggestion, as the card's Keep does in the editor (launchKeep,
 * glossary: Suggestion): the asset must be among the suggestions for the card's ticket, and it is
 * plugged in the role its suggestion names (instructions for a skill, reference for the rest) by the
 * same operation as the editor's Keep. Refused with `launch.notSuggested` otherwise: `card plug`
 * plugs any asset in any role.
 */
const cardKeep = operationCommand(plugAsset, {
	async params(context) {
		const id = assetOf(context);
		const project = await cardProject(context);
		const { suggestions } = await invokeFromCommandLine(suggestAssets, context, { project, complete: true });
		const kept = suggestions.find((s) => s.asset_id === id);
		if (kept === undefined) {
			throw new DeskError(
				'launch.notSuggested',
				`${id} is not among the suggestions for the card's ticket (plugged already, retired, the main asset, or not matched); \`desk card suggest\` lists them, \`desk card plug\` plugs any asset.`,
				{ asset: id, project },
			);
		}
		return { project, id, role: kept.role };
	},
	text: (view, context) =>
		`kept ${t(assetOf(context))} as ${t(view.card.plugs.find((p) => p.id === assetOf(context))?.role ?? '')}`,
	json: (view) => view.card,
});

export const cardCommands: ReadonlyArray<[string, Command]> = [
	['card show', cardShow],
	['card suggest', cardSuggest],
	['card plug', cardPlug],
	['card keep', cardKeep],
	['card unplug', cardUnplug],
	['card go', cardGo],
];
