import type { RunSummary, RunsOverview } from '../../../server/src/protocol/protocol';
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
	return `**Run** of ${escapeMarkdown(title)}\n\n| | |\n|---|---|\n| Status | ${runStatusText(run)} |\n| Started | ${escapeMarkdown(run.started_at)} |\n${run.duration_ms !== undefined ? `| Duration | ${formatDuration(run.duration_ms)} |\n` : ''}| Model | ${escapeMarkdown(`${run.provider ?? '—'} ${run.model ?? ''}`)} |\n| Tokens | ${run.total_tokens ?? '—'} |\n| Cost | ${run.cost_usd !== undefined ? `$${run.cost_usd.toFixed(4)}` : '—'} |\n| PatchSets | ${run.patchsets} |\n| Evidence | ${run.evidence} |\n${run.error ? `\n$(error) **Failed:** ${escapeMarkdown(run.error).replace(/\n+/g, ' ')}\n` : ''}`;
}
