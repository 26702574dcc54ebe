import type { CarriedBy, RunDetail, TokenCounts } from '../../../server/src/protocol/protocol';
import { instructionsWords, skillsDeliveries } from '../../../server/src/runs/instructions';
import { escapeHtml } from '../common/html';
import { visibleLines } from '../common/markdownText';
import { lineagePageCommands, lineagePageStyle } from '../lineage/lineagePage';
import {
	argsSummary,
	conversationStyle,
	logLink,
	renderConversation,
	splitToolCalls,
	type PageLinks,
	type TextPreview,
} from './runConversation';
import { runCostText, runTokensText, usdText } from './runTooltips';
import { decisionWords, followUpFacts, formatDuration, runName, runOfTask, runState, runStatusText } from './runWords';

export { argsSummary, callTree, splitToolCalls, type CallNode } from './runConversation';

/*
 * The text of a run's page (HTML with every value escaped, links only to the gate's commands): built
 * from a RunDetail alone, with no VS Code import, so it is tested in plain Node. `RunPages`
 * (runDocuments.ts) shows it in an editor tab.
 */

function html(text: string | number | undefined): string {
	if (text === undefined || text === '') {
		return '—';
	}
	// Names, paths, the model and summaries come from the agent: controls and bidi overrides shown as escapes.
	return escapeHtml(visibleLines(String(text)));
}

function table(headers: string[], rows: Array<Array<string | number | undefined>>, className?: string): string {
	return `<table${className ? ` class="${className}"` : ''}><thead><tr>${headers.map((h) => `<th>${html(h)}</th>`).join('')}</tr></thead><tbody>${rows
		.map((row) => `<tr>${row.map((cell) => `<td>${html(cell)}</td>`).join('')}</tr>`)
		.join('')}</tbody></table>`;
}

/** How the run's agent received its instructions plugs (its `desk.skills` tag); unknown for a run from before it was recorded. */
function instructionsText(skills: string | undefined): string | undefined {
	const known = skillsDeliveries.find((s) => s === skills);
	return known && instructionsWords[known];
}

/** Which process carries the run out (its `desk.carried_by` tag), in words that say what a reload does to it. */
function carriedByText(carriedBy: string | undefined): string | undefined {
	const words: Record<CarriedBy, string> = {
		'own process': 'its own process: it goes on when this window reloads or closes',
		window:
			"this window's desk (no process of its own could be started): reloading or closing the window stops the run and puts its files in the checkout back",
		'command line': 'the desk command line that started it',
	};
	return carriedBy !== undefined && Object.hasOwn(words, carriedBy) ? words[carriedBy as CarriedBy] : undefined;
}

/** A two-column table of what is known; rows without a value are left out. */
function facts(rows: Array<[string, string | number | undefined]>): string {
	return `<table class="facts"><tbody>${rows
		.filter(([, v]) => v !== undefined && v !== '')
		.map(([k, v]) => `<tr><th>${html(k)}</th><td>${html(v)}</td></tr>`)
		.join('')}</tbody></table>`;
}

/** The Task's own fields (glossary: AI objects), from the ticket's sections: what the work is and when it is done. */
function renderTask(d: RunDetail): string {
	// Lists a Task always has once read (model.ts's fromJson); a page built from less shows none.
	const { description, constraints = [], acceptance_criteria: criteria = [] } = d.task;
	if (!description && constraints.length === 0 && criteria.length === 0) {
		return '';
	}
	const list = (title: string, items: string[]) =>
		items.length > 0 ? `<h3>${html(title)}</h3><ul>${items.map((c) => `<li>${html(c)}</li>`).join('')}</ul>` : '';
	return `<h2>Task</h2>${description ? `<p class="text">${html(description)}</p>` : ''}${list('Acceptance criteria', criteria)}${list('Constraints', constraints)}`;
}

/**
 * The body of a run's page: what a reviewer wants to know, in the order they ask it. Every value is
 * escaped. With `links` (the run's project and id) its calls, messages and checks link to their
 * whole texts; `previews` are the beginnings of outputs the page was asked to show.
 */
export function renderRunBody(
	d: RunDetail,
	actions = '',
	lineage = '',
	links?: PageLinks,
	previews?: ReadonlyMap<string, TextPreview>,
): string {
	const s = d.summary;
	const parts: string[] = [];
	const state = runState(s);
	parts.push(
		`<h1>${html(runName(d))} of “${html(d.task.title)}” <span class="status ${state === 'gate' ? 'gate' : s.status}">${html(runStatusText(s))}</span></h1>`,
	);
	if (actions) {
		parts.push(actions);
	}
	parts.push(
		facts([
			['Started', s.started_at],
			["Agent's work", s.duration_ms !== undefined ? formatDuration(s.duration_ms) : undefined],
			['Waited for review', s.gate_wait_ms !== undefined ? formatDuration(s.gate_wait_ms) : undefined],
			[
				'Decision',
				d.decision
					? `${decisionWords[d.decision.decision_type]}${d.decision.result_commit_sha ? ` as ${d.decision.result_commit_sha.slice(0, 12)}` : d.decision.tags['desk.version'] ? ` as v${d.decision.tags['desk.version']}` : ''}${d.decision.rationale ? ` — ${d.decision.rationale}` : ''}`
					: undefined,
			],
			['Error', d.run.error],
			...followUpFacts(d),
			['Baseline commit', d.run.commit],
			[
				'Agent',
				d.run.tags['desk.agent']
					? `${d.run.tags['desk.agent']} in ${d.run.tags['desk.isolation'] === 'shared' ? 'the shared checkout' : d.run.tags['desk.isolation'] === 'worktree' ? 'a worktree of its own' : 'a folder of its own'}`
					: undefined,
			],
			['Instructions', instructionsText(d.run.tags['desk.skills'])],
			['Sandbox', d.run.tags['desk.sandbox']],
			// While an agent works: whether a window reload stops it (glossary: Carrier).
			['Carried by', state === 'running' ? carriedByText(d.run.tags['desk.carried_by']) : undefined],
			[
				'Environment',
				d.run.environment ? `${d.run.environment.os}/${d.run.environment.arch} in ${d.run.environment.cwd}` : undefined,
			],
			['Id', d.run.object_id],
		]),
	);
	parts.push(renderEvidence(d, links));
	// Where the run stands in its lineage (lineage/lineagePage.ts), when it takes part in one.
	if (lineage) {
		parts.push(lineage);
	}
	parts.push(renderConversation(d, links, previews));
	const { desk } = splitToolCalls(d.tool_invocations);
	parts.push(
		`<h2>Desk tool calls (${desk.length})</h2>`,
		desk.length === 0
			? '<p class="muted">The agent called no desk tool (asset_search, asset_snapshot, attach, …).</p>'
			: table(
					['Tool', 'Arguments', 'Status', 'Result', 'Agent’s call id'],
					desk.map((t) => [
						t.tool_name,
						argsSummary(t.args),
						t.status,
						clipped(t.result_summary, 160),
						t.external_ids?.tool_use_id,
					]),
					'calls desk-calls',
				),
	);
	parts.push(`<h2>PatchSets (${d.patchsets.length})</h2>`);
	for (const [i, p] of d.patchsets.entries()) {
		parts.push(
			`<h3>PatchSet ${i + 1} — ${html(p.apply_status)}</h3>`,
			p.rationale ? `<p class="text">${html(p.rationale)}</p>` : '',
			table(
				['File', 'Change', '+', '−'],
				p.touched.map((f) => [f.path, f.change_type, f.lines_added, f.lines_deleted]),
			),
		);
	}
	parts.push('<h2>Provenance</h2>');
	if (d.provenance) {
		parts.push(renderProvenance(d.provenance, d.summary));
	} else {
		parts.push('<p class="muted">No provenance was recorded.</p>');
	}
	parts.push(renderTask(d));
	for (const [i, plan] of [d.plan, ...(d.revisions ?? [])].entries()) {
		if (!plan) {
			continue;
		}
		parts.push(
			i === 0 ? '<h2>Plan</h2>' : `<h3>Plan revision ${i} by ${html(plan.created_by.id)}</h3>`,
			table(
				['#', 'Step', 'Status'],
				plan.steps.map((step, n) => [
					n + 1,
					step.description,
					step.statuses[step.statuses.length - 1]?.status ?? 'pending',
				]),
			),
		);
	}
	parts.push(renderGiven(d));
	return parts.join('\n');
}

/** Kinds of what the agent was given (ContextSnapshot items), in words. */
const givenKinds: Record<string, string> = {
	file: 'file',
	url: 'link',
	snippet: 'text',
	command: 'command output',
	image: 'image',
};

/**
 * What the agent was given (glossary: ContextSnapshot): the desk's reading of the ticket (the
 * Intent's content) and the assets, files, notes and instructions pinned at Go, with the beginning of each.
 */
function renderGiven(d: RunDetail): string {
	const items = d.snapshot?.items ?? [];
	if (!d.intent?.content && items.length === 0) {
		return '';
	}
	return `<h2>What the agent was given</h2>${d.intent?.content ? `<p class="text">${html(d.intent.content)}</p>` : ''}${
		items.length > 0
			? table(
					['What', 'Kind', 'Beginning'],
					items.map((i) => [i.path, givenKinds[i.kind] ?? i.kind, clipped(i.preview, 120)]),
					'given',
				)
			: ''
	}`;
}

type Provenance = NonNullable<RunDetail['provenance']>;
type Counts = TokenCounts;

/** A count, or — where the agent did not report that part. */
function countCell(n: number | undefined): string {
	return n === undefined ? '—' : n.toLocaleString('en-US');
}

function costCell(c: Counts): string {
	return c.cost_usd === undefined ? 'unknown' : `${usdText(c.cost_usd)}${c.cost_estimated ? ' estimated' : ''}`;
}

/**
 * The Provenance (glossary: Provenance): the model, the usage in words, and a table per model with
 * its total; the agent's own total beside it where it disagrees; what is not certain said.
 */
function renderProvenance(p: Provenance, summary: RunDetail['summary']): string {
	const u = p.token_usage;
	const requested = (p.parameters as { requested_model?: unknown } | undefined)?.requested_model;
	const parts = [
		facts([
			['Model', `${p.provider} ${p.model}${typeof requested === 'string' ? ` (asked for ${requested})` : ''}`],
			['Temperature', p.temperature],
			['Max tokens', p.max_tokens],
			['Tokens', u ? runTokensText(summary) : undefined],
			['Cost', u ? runCostText(summary) || 'unknown' : undefined],
			['Turns', u?.turns],
			["Agent's duration", u?.duration_ms !== undefined ? formatDuration(u.duration_ms) : undefined],
		]),
	];
	if (!u) {
		return parts.join('');
	}
	if (u.incomplete) {
		parts.push(
			`<p class="warning">${html(
				u.total_tokens === 0
					? "Usage unknown: the agent's output ended before it reported what it spent (or its format reports nothing)."
					: "Usage incomplete: the agent's output ended before it reported all it spent; these counts are at least what was spent.",
			)}</p>`,
		);
	}
	const row = (label: string, c: Counts) => [
		label,
		countCell(c.input_tokens),
		countCell(c.cache_read_tokens),
		countCell(c.cache_creation_tokens),
		countCell(c.output_tokens),
		countCell(c.reasoning_tokens),
		countCell(c.other_tokens),
		countCell(c.total_tokens),
		costCell(c),
	];
	const rows = [...(u.models ?? []).map((m) => row(m.model || 'unnamed model', m)), row('Total', u)];
	if (u.agent_totals) {
		rows.push(row("The agent's own total", u.agent_totals));
	}
	parts.push(
		table(
			['Model', 'Input', 'Cache read', 'Cache write', 'Output', 'Reasoning', 'Other', 'Total', 'Cost'],
			rows,
			'usage',
		),
	);
	const notes = [
		u.agent_totals
			? "The agent's own total disagrees with the sum of what it reported per model (Claude Code's result line counts its main agent only, its per-model report its subagents and helper models too): both are shown, the total is the sum."
			: '',
		u.cost_estimated
			? "An estimated cost is computed from the desk's price table (the setting agentDesk.runs.prices), not given by the agent."
			: '',
		summary.unpriced_models
			? `No cost is known for ${summary.unpriced_models.join(', ')}: the agent gave none and the price table has none (add it to agentDesk.runs.prices).`
			: '',
		'Input counts every token the model read, those read from and written to its cache included; output every token it wrote, its reasoning included; other, what the agent counts as neither (thoughts, tool-use prompts).',
	].filter(Boolean);
	parts.push(...notes.map((note) => `<p class="muted">${html(note)}</p>`));
	return parts.join('');
}

/** `text` cut to `max` characters (a result can be a whole record): the page stays a table one can read. */
function clipped(text: string | undefined, max: number): string | undefined {
	return text !== undefined && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The Evidence of the run's checks (glossary: Checks), PatchSet by PatchSet: each check with passed or failed,
 * its exit code and summary, and the command it ran.
 */
function renderEvidence(d: RunDetail, links: PageLinks | undefined): string {
	const attempt = new Map(d.patchsets.map((p, i) => [p.object_id, i + 1]));
	const rows = d.evidence.map((e) => {
		const passed = e.exit_code === 0;
		const result =
			e.exit_code === undefined
				? '<span class="result">no result</span>'
				: `<span class="result ${passed ? 'passed' : 'failed'}">${passed ? '✓ passed' : '✗ failed'}</span>`;
		const patchset = e.patchset_id ? attempt.get(e.patchset_id) : undefined;
		return `<tr><td>${html(e.tags['desk.check'] ?? e.tool)}</td><td>${result}</td><td>${html(e.exit_code)}</td><td>${html(e.summary)}</td><td><code>${html(e.command)}</code></td><td>${html(patchset)}</td><td>${logLink(e, links)}</td></tr>`;
	});
	const passed = d.evidence.filter((e) => e.exit_code === 0).length;
	const heading = `<h2>Evidence (${d.evidence.length === 0 ? 'no checks' : `${passed} passed, ${d.evidence.length - passed} failed`})</h2>`;
	if (rows.length === 0) {
		// While the agent works its change is not checked yet: that is no reason to set checks up.
		return runState(d.summary) === 'running'
			? `${heading}<p class="muted">No check has run yet: the checks run on the agent's change once it is done.</p>`
			: `${heading}<p class="muted">No check ran: give the target asset checks (Set Checks…) or the project some (setting agentDesk.checks).</p>`;
	}
	return `${heading}<table class="evidence"><thead><tr><th>Check</th><th>Result</th><th>Exit</th><th>Summary</th><th>Command</th><th>PatchSet</th><th>Log</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The commands the run page's links may run (command: URIs); nothing else is allowed. */
export const runPageCommands = [
	'agentDesk.reviewRun',
	'agentDesk.approveRun',
	'agentDesk.retryRun',
	'agentDesk.abandonRun',
	'agentDesk.checkpointRun',
	'agentDesk.cancelRun',
	'agentDesk.rollbackRun',
	'agentDesk.resumeRun',
	'agentDesk.openRun',
	'agentDesk.openRunText',
	...lineagePageCommands,
] as const;

function commandLink(
	command: Exclude<(typeof runPageCommands)[number], (typeof lineagePageCommands)[number] | 'agentDesk.openRunText'>,
	args: unknown[],
	label: string,
	kind: 'primary' | 'secondary' = 'secondary',
): string {
	return `<a class="button ${kind}" href="command:${command}?${html(encodeURIComponent(JSON.stringify(args)))}">${html(label)}</a>`;
}

/** The gate's row of decisions for where the run stands (or Cancel while an agent works on it). */
export function renderActions(project: string, d: RunDetail): string {
	const args = [project, d.run.object_id];
	const state = runState(d.summary);
	const hasPatch = d.patchsets.length > 0;
	const links: string[] = [];
	let note = '';
	if (state === 'running') {
		note = 'An agent is working on this run.';
		links.push(commandLink('agentDesk.cancelRun', args, 'Cancel Run'));
	} else if (state === 'gate') {
		const last = d.patchsets[d.patchsets.length - 1];
		const checks = last ? d.evidence.filter((e) => e.patchset_id === last.object_id) : [];
		const failed = checks.filter((e) => e.exit_code !== 0).length;
		note = `Waiting for your review: ${last ? `${last.touched.length} file${last.touched.length === 1 ? '' : 's'} changed` : 'no change'}, checks: ${checks.length - failed} passed, ${failed} failed.`;
		if (hasPatch) {
			links.push(
				commandLink('agentDesk.reviewRun', args, 'Review Change'),
				commandLink('agentDesk.approveRun', args, 'Approve and Land', 'primary'),
			);
		}
		links.push(commandLink('agentDesk.retryRun', args, 'Retry'), commandLink('agentDesk.abandonRun', args, 'Abandon'));
		if (hasPatch) {
			links.push(commandLink('agentDesk.checkpointRun', args, 'Checkpoint'));
		}
	} else if (state === 'failed') {
		note = 'The run failed: retry it (a new run of the same task) or abandon the task.';
		if (hasPatch) {
			links.push(commandLink('agentDesk.reviewRun', args, 'Review Change'));
		}
		links.push(
			commandLink('agentDesk.retryRun', args, 'Retry', 'primary'),
			commandLink('agentDesk.abandonRun', args, 'Abandon'),
		);
	} else {
		if (hasPatch) {
			links.push(commandLink('agentDesk.reviewRun', args, 'Review Change'));
		}
		// A landed run can be rolled back, a checkpoint resumed: each once (glossary: Rollback, Checkpoint).
		const decided = d.summary.decision;
		if (decided === 'commit' && !d.summary.rolled_back_by) {
			links.push(commandLink('agentDesk.rollbackRun', args, 'Rollback…'));
		} else if (decided === 'checkpoint' && !d.summary.resumed_by) {
			note = 'Its change is kept as a checkpoint: resume it in a new run of the task.';
			links.push(commandLink('agentDesk.resumeRun', args, 'Resume from Checkpoint', 'primary'));
		}
		const followUp = d.summary.rolled_back_by ?? d.summary.resumed_by;
		if (followUp) {
			note = `${d.summary.rolled_back_by ? 'Rolled back' : 'Resumed'} by ${runOfTask(d.task, followUp)}.`;
			links.push(commandLink('agentDesk.openRun', [project, followUp], 'Open That Run'));
		}
	}
	return links.length === 0 && !note
		? ''
		: `<nav class="actions" aria-label="Decisions">${note ? `<span class="note">${html(note)}</span>` : ''}${links.join('')}</nav>`;
}

/** What a run page's tab keeps across a window reload (VS Code's webview state): the run it shows. */
export interface RunPageState {
	project: string;
	run: string;
}

/**
 * The run a restored run page's tab showed, read from the state its script kept (the calls it had
 * open and its scroll beside), when it names one; undefined otherwise.
 */
export function readRunPageState(state: unknown): RunPageState | undefined {
	if (state === null || typeof state !== 'object') {
		return undefined;
	}
	const { project, run } = state as Record<string, unknown>;
	return typeof project === 'string' && project !== '' && typeof run === 'string' && /^[0-9a-f-]{36}$/.test(run)
		? { project, run }
		: undefined;
}

/**
 * The whole run page around `body`: its CSP (styles and images only from `cspSource`; one script,
 * the page's own, by `script.nonce`, which keeps the page in place as the run changes) and its style.
 * Without `script` the page runs none. `script.shows` names the run on the page's body, whence the
 * script keeps it in the tab's state, so that a window reload restores the tab (glossary: Carrier).
 */
export function runPageHtml(
	cspSource: string,
	body: string,
	script?: { nonce: string; src: string; shows?: RunPageState },
): string {
	const scripts = script ? ` script-src 'nonce-${script.nonce}';` : '';
	const shows = script?.shows
		? ` data-project="${escapeHtml(script.shows.project)}" data-run="${escapeHtml(script.shows.run)}"`
		: '';
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; img-src ${cspSource};${scripts}">
${
	script
		? `<script defer nonce="${escapeHtml(script.nonce)}" src="${escapeHtml(script.src)}"></script>
`
		: ''
}<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 24px 24px; line-height: 1.45; }
h1 { font-size: 1.5em; font-weight: 600; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 4px; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 8px 0; } th, td { text-align: left; padding: 3px 12px 3px 0; vertical-align: top; border-bottom: 1px solid var(--vscode-editorWidget-border, transparent); }
th { color: var(--vscode-descriptionForeground); font-weight: 600; } table.facts th { width: 10em; }
blockquote { margin: 0; padding: 4px 12px; border-left: 3px solid var(--vscode-textBlockQuote-border); background: var(--vscode-textBlockQuote-background); }
.status { white-space: nowrap; font-size: 0.6em; padding: 2px 8px; border-radius: 10px; vertical-align: middle; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.status.completed { background: var(--vscode-testing-iconPassed); color: var(--vscode-editor-background); } .status.failed { background: var(--vscode-testing-iconFailed); color: var(--vscode-editor-background); }
.status.gate { background: var(--vscode-charts-yellow); color: var(--vscode-editor-background); }
.actions { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin: 4px 0 16px; padding: 10px 12px; border: 1px solid var(--vscode-panel-border); border-radius: 4px; background: var(--vscode-editorWidget-background); }
.actions .note { flex-basis: 100%; margin-bottom: 4px; }
a.button { display: inline-block; padding: 4px 12px; border-radius: 2px; text-decoration: none; border: 1px solid var(--vscode-button-border, transparent); }
a.button.primary { background: var(--vscode-button-background); color: var(--vscode-button-foreground); } a.button.primary:hover { background: var(--vscode-button-hoverBackground); }
a.button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); } a.button.secondary:hover { background: var(--vscode-button-secondaryHoverBackground); }
a.button:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
.text, table.facts td { white-space: pre-wrap; } td code { word-break: break-all; }
table.calls { width: 100%; } table.calls th { white-space: nowrap; }
/* A result can be a record without spaces: it wraps anywhere rather than push the columns after it off the page. */
table.desk-calls td:nth-child(4), table.own-calls td:nth-child(5) { overflow-wrap: anywhere; } table.desk-calls td:nth-child(4) { width: 40%; }
.warning { color: var(--vscode-editorWarning-foreground); }
table.usage td:not(:first-child), table.usage th:not(:first-child) { text-align: right; }
.result.passed { color: var(--vscode-testing-iconPassed); } .result.failed { color: var(--vscode-testing-iconFailed); } .muted { color: var(--vscode-descriptionForeground); }
${conversationStyle}
${lineagePageStyle}</style></head><body${shows}>${body}</body></html>`;
}
