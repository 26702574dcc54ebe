/**
 * `desk runs …` and `desk history …`: what the runs of a repository recorded, and the AI objects
 * carried to and from its `refs/desk/history`.
 */
import { checkRefName } from '../../git/refName';
import { exportHistory, importHistory } from '../../operations/history';
import { listRuns, showRun } from '../../operations/runs';
import type { TokenCounts, TokenUsage } from '../../ai/types';
import { summaryAgentUsages } from '../../ai/tokenUsage';
import type { RunDetail, RunSummary, RunsOverview, TaskView, UsageRollup } from '../../runs/types';
import { expectArgs, oneId } from '../args';
import type { Command, CommandContext } from '../context';
import { operationCommand } from '../operationCommand';
import { placeOfCommand } from '../projects';
import { terminalSafe as t, writeMessage } from '../terminal';

/** The history ref --ref names, if any: one git would refuse is refused as git names it (git.badRef). */
function refOf({ values }: CommandContext): { ref?: string } {
	return values.ref !== undefined ? { ref: checkRefName(values.ref) } : {};
}

/** `desk runs list [--all]`: a read, which never makes a project database; --all lists runs that never started too. */
const runsList = operationCommand(listRuns, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		return { ...(await placeOfCommand(context)), ...(context.values.all ? { all: true } : {}) };
	},
	text: (overview) => formatOverview(overview),
});

/** `desk runs show ID`: the run's line, then its usage per model, its PatchSets, checks and decision. */
const runsShow = operationCommand(showRun, {
	params: async (context) => ({ ...(await placeOfCommand(context)), id: oneId(context.rest, context.command) }),
	text: (detail) => formatRunDetail(detail),
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
	return `${t(r.id)}  ${t(r.status)}${r.never_started ? ' (never started)' : ''}  ${t(title)}  ${t(r.model ?? '-')}${runUsageText(r)}${r.decision ? `  → ${t(r.decision)}` : ''}`;
}

/**
 * A run's tokens and cost as ` 1234 tokens $0.0123`, saying what is not certain: an estimated cost,
 * a cost unknown for some model, usage that is at least what is counted (or unknown).
 */
function runUsageText(r: RunSummary): string {
	if (r.total_tokens === undefined) {
		return '';
	}
	if (r.usage_incomplete && r.total_tokens === 0) {
		return ' usage unknown (output ended early)';
	}
	const tokens = `${r.usage_incomplete ? ' at least' : ''} ${r.total_tokens} tokens`;
	const cost =
		r.cost_usd !== undefined
			? ` ${r.unpriced_models || r.usage_incomplete ? 'at least ' : ''}$${r.cost_usd.toFixed(4)}${r.cost_estimated ? ' (estimated)' : ''}`
			: r.unpriced_models
				? ' cost unknown'
				: '';
	return `${tokens}${cost}${r.usage_incomplete ? ' (usage incomplete)' : ''}`;
}

/** A rollup of runs as `12,345 tokens · $0.1234 (estimated)`, with the runs that make it uncertain. */
export function rollupText(u: UsageRollup): string {
	const notes = [
		u.cost_estimated ? 'cost estimated' : '',
		u.incomplete_runs > 0 ? `usage incomplete in ${u.incomplete_runs} run${u.incomplete_runs === 1 ? '' : 's'}` : '',
		u.unpriced_runs > 0 ? `cost unknown for ${u.unpriced_runs} run${u.unpriced_runs === 1 ? '' : 's'}` : '',
	].filter(Boolean);
	return `${u.total_tokens} tokens · $${u.cost_usd.toFixed(4)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/** The run's usage per model (and the agent's own totals where they disagree), one line each. */
function usageLines(detail: RunDetail): string[] {
	const usage = detail.provenance?.token_usage;
	if (!usage) {
		return [];
	}
	const counts = (c: TokenCounts) =>
		[
			`${c.input_tokens} in`,
			c.cache_read_tokens !== undefined ? `${c.cache_read_tokens} cache read` : '',
			c.cache_creation_tokens !== undefined ? `${c.cache_creation_tokens} cache write` : '',
			`${c.output_tokens} out`,
			c.reasoning_tokens !== undefined ? `${c.reasoning_tokens} reasoning` : '',
			c.other_tokens !== undefined ? `${c.other_tokens} other` : '',
			`${c.total_tokens} total`,
			c.cost_usd !== undefined ? `$${c.cost_usd.toFixed(4)}${c.cost_estimated ? ' (estimated)' : ''}` : 'cost unknown',
		]
			.filter(Boolean)
			.join(', ');
	const lines = (usage.models ?? []).map((m) => `  model ${t(m.model)}: ${counts(m)}`);
	const facts = [
		usage.turns !== undefined ? `${usage.turns} turns` : '',
		usage.duration_ms !== undefined ? `${(usage.duration_ms / 1000).toFixed(1)} s by the agent` : '',
	].filter(Boolean);
	lines.push(`  usage: ${counts(usage)}${facts.length > 0 ? `; ${facts.join(', ')}` : ''}`);
	if (usage.agent_totals) {
		lines.push(`  the agent's own total: ${counts(usage.agent_totals)}`);
	}
	if (usage.incomplete) {
		lines.push(
			usage.total_tokens === 0
				? '  usage unknown: the output ended before the agent reported it'
				: '  usage incomplete: the output ended before the agent reported it all; at least the above',
		);
	}
	return lines;
}

export function formatRunDetail(detail: RunDetail): string {
	const lines = [formatRunSummary(detail.summary, detail.task.title), ...usageLines(detail)];
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
			`  decision: ${t(detail.decision.decision_type)}${detail.decision.result_commit_sha ? ` ${t(detail.decision.result_commit_sha)}` : versionLanded(detail.decision.tags)}`,
		);
	} else if (detail.summary.at_gate) {
		lines.push(
			`  waiting at the gate: desk run decide ${t(detail.summary.id)} --decision commit|retry|abandon|checkpoint`,
		);
	}
	return lines.join('\n');
}

/** A landing on a snapshot target: the version cut and its manifest (glossary: Ending). */
function versionLanded(tags: Record<string, string>): string {
	const version = tags['desk.version'];
	return version === undefined
		? ''
		: ` v${t(version)}${tags['desk.manifest'] ? ` (manifest ${t(tags['desk.manifest'].slice(0, 12))})` : ''}`;
}

/** The memorize of a branch's landing: its last outcome and what the summary agent's answers cost in all. */
function memorizeLines(detail: RunDetail): string[] {
	const outcome = detail.tool_invocations.filter((i) => i.tool_name === 'memorize').at(-1);
	const usages = summaryAgentUsages(detail.tool_invocations);
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

/** The tree of `desk runs list`: each intent and task with its runs' usage added up, a branch's with its subtree's too. */
export function formatOverview(overview: RunsOverview): string {
	const lines: string[] = [];
	const taskLine = (task: TaskView, indent: string) => {
		const subtree = task.subtree_usage;
		const below = subtree && subtree.runs > task.usage.runs ? `  · with its branches: ${rollupText(subtree)}` : '';
		return `${indent}${t(task.task.status).padEnd(9)} ${t(task.task.title)}  · ${rollupText(task.usage)}${below}`;
	};
	for (const view of overview.intents) {
		lines.push(`${t(view.status).padEnd(9)} ${t(view.intent.prompt)}  · ${rollupText(view.usage)}`);
		for (const task of view.tasks) {
			lines.push(taskLine(task, '  '));
			for (const r of task.runs) {
				lines.push(`    ${formatRunSummary(r, '')}`);
			}
		}
	}
	for (const task of overview.tasks) {
		lines.push(taskLine(task, ''));
	}
	if (overview.hidden_runs) {
		const n = overview.hidden_runs;
		lines.push(
			`(${n} run${n === 1 ? '' : 's'} that never started ${n === 1 ? 'is' : 'are'} not listed; --all lists ${n === 1 ? 'it' : 'them'})`,
		);
	}
	return lines.join('\n') || '(no runs yet)';
}
