import type { RunSummary, RunsOverview, TokenUsage, UsageRollup } from '../../../server/src/protocol/protocol';
import { markdownLines, markdownText as escapeMarkdown } from '../common/markdownText';
import { formatDuration, runStatusText } from './runWords';

/*
 * The Runs view's tooltips as Markdown: the ticket, the agent's error and the model come from a
 * person or an agent, so every one is escaped. No VS Code import: tested in plain Node.
 */

type Intent = RunsOverview['intents'][number]['intent'];

/** The tooltip of an intent's row: the whole ticket (its first line in bold), its content, status and time. */
export function intentTooltip(intent: Intent, status: string, followed?: string): string {
	const [first = '', ...more] = intent.prompt.trim().split('\n');
	return `${followed !== undefined ? `Follow-up of ‘${escapeMarkdown(followed)}’\n\n` : ''}**${escapeMarkdown(first)}**${more.length ? `  \n${markdownLines(more.join('\n'))}` : ''}\n\n${intent.content ? `${markdownLines(intent.content)}\n\n` : ''}${escapeMarkdown(status)} · ${escapeMarkdown(intent.created_at)}${intent.commit ? ` · commit ${escapeMarkdown(intent.commit.slice(0, 12))}` : ''}`;
}

/**
 * The follow-up chain of an intent (glossary: Follow-up): the first line of the intent its `parent`
 * names among `intents`, or its id when that one is not listed; undefined for an intent that is none's follow-up.
 */
export function followUpOf(intent: Intent, intents: ReadonlyArray<{ intent: Intent }>): string | undefined {
	if (!intent.parent) {
		return undefined;
	}
	const parent = intents.find((i) => i.intent.object_id === intent.parent)?.intent;
	return parent ? (parent.prompt.trim().split('\n', 1)[0] ?? '') : intent.parent;
}

/** The description of an intent's row: its status, and what it follows up. */
export function intentDescription(status: string, followed: string | undefined): string {
	const cut = followed && [...followed].length > 40 ? `${[...followed].slice(0, 39).join('')}…` : followed;
	return cut === undefined ? status : `${status} · follow-up of ‘${cut}’`;
}

/** The tooltip of a run's row (theme icons on: `$(error)` before a failure), `title` its task's. */
export function runTooltip(run: RunSummary, title: string): string {
	return `**Run** of ${escapeMarkdown(title)}\n\n| | |\n|---|---|\n| Status | ${runStatusText(run)} |\n| Started | ${escapeMarkdown(run.started_at)} |\n${run.duration_ms !== undefined ? `| Agent's work | ${formatDuration(run.duration_ms)} |\n` : ''}${run.gate_wait_ms !== undefined ? `| Waited for review | ${formatDuration(run.gate_wait_ms)} |\n` : ''}| Model | ${escapeMarkdown(`${run.provider ?? '—'} ${run.model ?? ''}`)} |\n| Tokens | ${escapeMarkdown(runTokensText(run) || '—')} |\n| Cost | ${escapeMarkdown(runCostText(run) || '—')} |\n| PatchSets | ${run.patchsets} |\n| Evidence | ${run.evidence} |\n${run.error ? `\n$(error) **Failed:** ${escapeMarkdown(run.error).replace(/\n+/g, ' ')}\n` : ''}`;
}

/*
 * Usage in words (glossary: Provenance), the same on the run page, its row and its tooltip: what is
 * not certain is said, never left for the reader to guess — a cost estimated from the price table,
 * a cost unknown for some model, tokens that are at least a count (or unknown) because the agent's
 * output ended before it reported them.
 */

/** A count of tokens: "12,345 tokens". */
export function tokenCount(tokens: number): string {
	return `${tokens.toLocaleString('en-US')} token${tokens === 1 ? '' : 's'}`;
}

/** An amount: "$0.0123". */
export function usdText(usd: number): string {
	return `$${usd.toFixed(4)}`;
}

/** A run's tokens: "12,345 tokens", "at least 12,345 tokens", "usage unknown"; empty when none was recorded. */
export function runTokensText(run: Pick<RunSummary, 'total_tokens' | 'usage_incomplete'>): string {
	if (run.total_tokens === undefined) {
		return '';
	}
	if (run.usage_incomplete) {
		return run.total_tokens === 0 ? 'usage unknown' : `at least ${tokenCount(run.total_tokens)}`;
	}
	return tokenCount(run.total_tokens);
}

/** A run's cost: "$0.0123", "$0.0123 estimated", "at least $0.0123" (a model unpriced), "cost unknown". */
export function runCostText(
	run: Pick<RunSummary, 'total_tokens' | 'cost_usd' | 'cost_estimated' | 'unpriced_models' | 'usage_incomplete'>,
): string {
	const atLeast = run.unpriced_models !== undefined || run.usage_incomplete === true;
	if (run.cost_usd === undefined) {
		return run.unpriced_models ? 'cost unknown' : '';
	}
	return `${atLeast ? 'at least ' : ''}${usdText(run.cost_usd)}${run.cost_estimated ? ' estimated' : ''}`;
}

/** A run's row: "12,345 tokens · $0.0123 estimated", and "usage incomplete" when it is. */
export function runUsageWords(run: RunSummary): string {
	return [runTokensText(run), runCostText(run), run.usage_incomplete && run.total_tokens ? 'usage incomplete' : '']
		.filter(Boolean)
		.join(' · ');
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What makes a sum of runs uncertain: "estimated, usage incomplete in 1 run, cost unknown for 2 runs"; empty when nothing. */
export function rollupNotes(usage: UsageRollup): string {
	return [
		usage.cost_estimated ? 'estimated' : '',
		usage.incomplete_runs > 0 ? `usage incomplete in ${plural(usage.incomplete_runs, 'run')}` : '',
		usage.unpriced_runs > 0 ? `cost unknown for ${plural(usage.unpriced_runs, 'run')}` : '',
	]
		.filter(Boolean)
		.join(', ');
}

/** Several runs added up: "3 runs · 12,345 tokens · $0.0123, estimated, usage incomplete in 1 run". */
export function rollupWords(usage: UsageRollup): string {
	if (usage.runs === 0) {
		return 'no run yet';
	}
	const notes = rollupNotes(usage);
	return `${plural(usage.runs, 'run')} · ${tokenCount(usage.total_tokens)} · ${usdText(usage.cost_usd)}${notes ? `, ${notes}` : ''}`;
}

/** A subagent call's usage: "at least 24,343 tokens · $0.0166 estimated". */
export function callUsageWords(usage: TokenUsage): string {
	return [
		runTokensText({ total_tokens: usage.total_tokens, usage_incomplete: usage.incomplete === true }),
		usage.cost_usd !== undefined
			? `${usage.incomplete ? 'at least ' : ''}${usdText(usage.cost_usd)}${usage.cost_estimated ? ' estimated' : ''}`
			: '',
	]
		.filter(Boolean)
		.join(' · ');
}
