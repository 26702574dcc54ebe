import type { RunSummary, RunsOverview } from '../../../server/src/protocol/protocol';
import { markdownLines, markdownText as escapeMarkdown } from '../common/markdownText';
import { formatDuration, runStatusText } from './runWords';

/*
 * The Runs view's tooltips as Markdown: the ticket, the agent's error and the model come from a
 * person or an agent, so every one is escaped. No VS Code import: tested in plain Node.
 */

type Intent = RunsOverview['intents'][number]['intent'];

/** The tooltip of an intent's row: the whole ticket (its first line in bold), its content, status and time. */
export function intentTooltip(intent: Intent, status: string): string {
	const [first = '', ...more] = intent.prompt.trim().split('\n');
	return `**${escapeMarkdown(first)}**${more.length ? `  \n${markdownLines(more.join('\n'))}` : ''}\n\n${intent.content ? `${markdownLines(intent.content)}\n\n` : ''}${escapeMarkdown(status)} · ${escapeMarkdown(intent.created_at)}${intent.commit ? ` · commit ${escapeMarkdown(intent.commit.slice(0, 12))}` : ''}`;
}

/** The tooltip of a run's row (theme icons on: `$(error)` before a failure), `title` its task's. */
export function runTooltip(run: RunSummary, title: string): string {
	return `**Run** of ${escapeMarkdown(title)}\n\n| | |\n|---|---|\n| Status | ${runStatusText(run)} |\n| Started | ${escapeMarkdown(run.started_at)} |\n${run.duration_ms !== undefined ? `| Duration | ${formatDuration(run.duration_ms)} |\n` : ''}| Model | ${escapeMarkdown(`${run.provider ?? '—'} ${run.model ?? ''}`)} |\n| Tokens | ${run.total_tokens ?? '—'} |\n| Cost | ${run.cost_usd !== undefined ? `$${run.cost_usd.toFixed(4)}` : '—'} |\n| PatchSets | ${run.patchsets} |\n| Evidence | ${run.evidence} |\n${run.error ? `\n$(error) **Failed:** ${escapeMarkdown(run.error).replace(/\n+/g, ' ')}\n` : ''}`;
}
