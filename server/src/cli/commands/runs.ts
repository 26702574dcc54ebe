/**
 * `desk runs …` and `desk history …`: what the runs of a repository recorded, and the AI objects
 * carried to and from its `refs/desk/history`.
 */
import { checkRefName } from '../../git/refName';
import { exportHistory, importHistory } from '../../operations/history';
import { listRuns, showRun } from '../../operations/runs';
import type { TokenUsage } from '../../ai/types';
import type { RunDetail, RunSummary, RunsOverview } from '../../runs/types';
import { expectArgs, oneId } from '../args';
import type { Command, CommandContext } from '../context';
import { operationCommand } from '../operationCommand';
import { placeOfCommand } from '../projects';
import { terminalSafe as t, writeMessage } from '../terminal';

/** The history ref --ref names, if any: one git would refuse is refused as git names it (git.badRef). */
function refOf({ values }: CommandContext): { ref?: string } {
	return values.ref !== undefined ? { ref: checkRefName(values.ref) } : {};
}

/** `desk runs list`: a read, which never makes a project database. */
const runsList = operationCommand(listRuns, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		return placeOfCommand(context);
	},
	text: (overview) => formatOverview(overview),
});

/** `desk runs show ID` */
const runsShow = operationCommand(showRun, {
	params: async (context) => ({ ...(await placeOfCommand(context)), id: oneId(context.rest, context.command) }),
	text: (detail) => formatRunSummary(detail.summary, detail.task.title),
});

/** `desk history export [--ref REF]`: a write (a ref), so it may make the project database. */
const historyExport = operationCommand(exportHistory, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		return { ...(await placeOfCommand(context)), ...refOf(context) };
	},
	text: (result, { values }) =>
		result.commit
			? `${result.objects} objects written to ${t(values.ref ?? 'refs/desk/history')} (${t(result.commit.slice(0, 12))})`
			: 'no change since the last export',
});

/**
 * `desk history import [--ref REF]`: a fresh clone's history brought in, so it may make the project
 * database. Each refused object is named on stderr with its reason code and reason; exit 2 then.
 */
const historyImport = operationCommand(importHistory, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		return { ...(await placeOfCommand(context)), ...refOf(context) };
	},
	text: (result) =>
		`${result.added} added, ${result.unchanged} already here${result.refused.length ? `, ${result.refused.length} refused` : ''}`,
	exitCode(result) {
		for (const refused of result.refused) {
			writeMessage(process.stderr, `desk: refused ${t(refused.path)} (${refused.code}): ${t(refused.reason)}\n`);
		}
		return result.refused.length > 0 ? 2 : 0;
	},
});

export const runViewCommands: ReadonlyArray<[string, Command]> = [
	['runs list', runsList],
	['runs show', runsShow],
	['history export', historyExport],
	['history import', historyImport],
];

export function formatRunSummary(r: RunSummary, title: string): string {
	const cost = r.cost_usd !== undefined ? ` $${r.cost_usd.toFixed(4)}` : '';
	const tokens = r.total_tokens !== undefined ? ` ${r.total_tokens} tokens` : '';
	return `${t(r.id)}  ${t(r.status)}  ${t(title)}  ${t(r.model ?? '-')}${tokens}${cost}${r.decision ? `  → ${t(r.decision)}` : ''}`;
}

export function formatRunDetail(detail: RunDetail): string {
	const lines = [formatRunSummary(detail.summary, detail.task.title)];
	if (detail.summary.error) {
		lines.push(`  error: ${t(detail.summary.error)}`);
	}
	for (const patch of detail.patchsets) {
		lines.push(
			`  patchset ${t(patch.object_id)} ${t(patch.apply_status)}: ${patch.touched.map((touched) => `${t(touched.path)} +${touched.lines_added} -${touched.lines_deleted}`).join(', ')}`,
		);
	}
	for (const evidence of detail.evidence) {
		lines.push(
			`  check ${t(evidence.tags['desk.check'] ?? evidence.tool)}: ${t(evidence.summary ?? `exit ${evidence.exit_code}`)}`,
		);
	}
	lines.push(...memorizeLines(detail));
	if (detail.decision) {
		lines.push(
			`  decision: ${t(detail.decision.decision_type)}${detail.decision.result_commit_sha ? ` ${t(detail.decision.result_commit_sha)}` : ''}`,
		);
	} else if (detail.summary.at_gate) {
		lines.push(
			`  waiting at the gate: desk run decide ${t(detail.summary.id)} --decision commit|retry|abandon|checkpoint`,
		);
	}
	return lines.join('\n');
}

/** The memorize of a branch's landing: its last outcome and what the summary agent's answers cost in all. */
function memorizeLines(detail: RunDetail): string[] {
	const outcome = detail.tool_invocations.filter((i) => i.tool_name === 'memorize').at(-1);
	const usages = detail.tool_invocations
		.filter((i) => i.tool_name === 'summary_agent')
		.map((i) => (i.args as { usage?: TokenUsage }).usage)
		.filter((u): u is TokenUsage => u !== undefined);
	if (!outcome && usages.length === 0) {
		return [];
	}
	const costs = usages.filter((u) => u.cost_usd !== undefined);
	const spent: TokenUsage = {
		input_tokens: 0,
		output_tokens: 0,
		total_tokens: usages.reduce((n, u) => n + u.total_tokens, 0),
		...(costs.length > 0 ? { cost_usd: costs.reduce((n, u) => n + u.cost_usd!, 0) } : {}),
	};
	return [`  memorize: ${t(outcome?.result_summary ?? 'not finished')}${usages.length > 0 ? usageText(spent) : ''}`];
}

/** What the summary agent's answers cost, as ` · summary agent: N tokens $C`; nothing when it was not asked. */
export function usageText(usage: TokenUsage | undefined): string {
	return usage
		? ` · summary agent: ${usage.total_tokens} tokens${usage.cost_usd !== undefined ? ` $${usage.cost_usd.toFixed(4)}` : ''}`
		: '';
}

function formatOverview(overview: RunsOverview): string {
	const lines: string[] = [];
	for (const view of overview.intents) {
		lines.push(`${t(view.status).padEnd(9)} ${t(view.intent.prompt)}`);
		for (const task of view.tasks) {
			lines.push(`  ${t(task.task.status).padEnd(9)} ${t(task.task.title)}`);
			for (const r of task.runs) {
				lines.push(`    ${formatRunSummary(r, '')}`);
			}
		}
	}
	for (const task of overview.tasks) {
		lines.push(`${t(task.task.status).padEnd(9)} ${t(task.task.title)}`);
	}
	return lines.join('\n') || '(no runs yet)';
}
