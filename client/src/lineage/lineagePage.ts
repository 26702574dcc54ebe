import type { BoardMessage, LineageTree, RunDetail } from '../../../server/src/protocol/protocol';
import { escapeHtml } from '../common/html';
import { visibleLines } from '../common/markdownText';
import {
	boardKindText,
	branchStateWords,
	costText,
	findBranch,
	grantChainText,
	isDeliveredReport,
	tokensText,
	type LineageBranch,
} from './lineageText';

/*
 * The Lineage section of a run's page (glossary: Lineage, Catch-up): where the run's task stands in
 * its lineage (its starter, its grant chain), the branches it started with their state, its board as
 * a timeline, what became of its landing's memorize and what the summary agent's answers cost, and
 * the tally and memory sections its prompts contained, exactly as the run's ContextSnapshot pinned them. HTML with every value escaped; its only links are the lineage commands
 * the page allows (lineagePageCommands). No VS Code import: tested in plain Node.
 */

type SnapshotItem = NonNullable<RunDetail['snapshot']>['items'][number];

/** What the section is made from: the run, its task's board and the project's lineage tree (absent when they could not be read). */
export interface LineageFacts {
	project: string;
	detail: RunDetail;
	tree?: LineageTree;
	board?: readonly BoardMessage[];
}

/** The commands the section's links run (the run page allows them besides the gate's). */
export const lineagePageCommands = [
	'agentDesk.branchFromHere',
	'agentDesk.answerReport',
	'agentDesk.continueWithReports',
	'agentDesk.openBoard',
] as const;

function html(text: string | number | undefined): string {
	return text === undefined || text === '' ? '—' : escapeHtml(visibleLines(String(text)));
}

function link(command: (typeof lineagePageCommands)[number], args: unknown[], label: string, primary = false): string {
	return `<a class="button ${primary ? 'primary' : 'secondary'}" href="command:${command}?${html(encodeURIComponent(JSON.stringify(args)))}">${html(label)}</a>`;
}

/**
 * The context items the desk pinned for a branch's catch-up: the "Other branches of <root>" (tally)
 * and "Project memory" sections. Recognised by their locator, whatever the order they were pinned in.
 */
export function lineageSnapshotItems(items: readonly SnapshotItem[]): SnapshotItem[] {
	return items.filter(
		(item) =>
			item.kind === 'snippet' &&
			(/^(desk[.:/])?(lineage|tally|memory|catch-?up)\b/i.test(item.path) ||
				/^(Other branches of|Project memory)\b/.test(item.path)),
	);
}

/** Whether a run has anything of a lineage to show: its task is a branch, it started branches, its board has messages, or its prompts had a catch-up. */
export function hasLineageSection(facts: LineageFacts): boolean {
	const { detail, tree, board } = facts;
	return (
		(tree !== undefined &&
			(findBranch(tree, detail.task.object_id) !== undefined ||
				(tree.by_starter_run[detail.run.object_id]?.length ?? 0) > 0)) ||
		(board?.length ?? 0) > 0 ||
		lineageSnapshotItems(detail.snapshot?.items ?? []).length > 0
	);
}

/** The section, headed "Lineage"; a short line with *Branch from Here…* for a run outside any lineage. */
export function renderLineageSection(facts: LineageFacts): string {
	const { project, detail, tree, board = [] } = facts;
	const runId = detail.run.object_id;
	const parts: string[] = ['<h2 id="lineage">Lineage</h2>'];
	const actions = [link('agentDesk.branchFromHere', [project, runId], 'Branch from Here…')];
	if (board.length > 0) {
		actions.push(link('agentDesk.openBoard', [project, runId], 'Open Board'));
	}
	const reports = board.filter(isDeliveredReport);
	if (reports.length > 0) {
		actions.push(link('agentDesk.continueWithReports', [project, runId], 'Continue with Reports'));
	}
	if (tree === undefined) {
		parts.push('<p class="muted">The lineage could not be read (see the log).</p>');
	}
	const self = tree ? findBranch(tree, detail.task.object_id) : undefined;
	if (self) {
		const { node } = self;
		parts.push(
			facts_([
				[
					'Branch of',
					`root ${node.root}${node.fork_of && node.depth > 1 ? ` (a branch of branch ${node.fork_of})` : ''}, depth ${node.depth}`,
				],
				['State', branchStateWords[self.state]],
				['Started by', node.starter_run ? `run ${node.starter_run}` : 'you, from the editor'],
				['Grant chain', grantChainText(node.grant_chain)],
				[
					'Runs with',
					`${node.config.agent} ${node.config.isolation === 'worktree' ? 'in a worktree of its own' : 'in the shared checkout'}${node.config.template.length ? `, nodes ${node.config.template.join(', ')}` : ''}${node.config.maxAttempts ? `, at most ${node.config.maxAttempts} attempts` : ''}`,
				],
				[
					'Subtree',
					`${tokensText(self.subtree.tokens)} · ${costText(self.subtree.cost_usd)} · ${self.subtree.branches} branch${self.subtree.branches === 1 ? '' : 'es'}`,
				],
				['Abstract', self.abstract],
			]),
		);
	} else if (tree) {
		parts.push('<p class="muted">This run’s task is no branch: it is a conversation you drive.</p>');
	}
	const started = tree
		? (tree.by_starter_run[runId] ?? []).map((id) => findBranch(tree, id)).filter((b): b is LineageBranch => !!b)
		: [];
	parts.push(`<h3>Branches it started (${started.length})</h3>`);
	parts.push(
		started.length === 0
			? '<p class="muted">None.</p>'
			: `<table class="branches"><thead><tr><th>Branch</th><th>State</th><th>Runs</th><th>Tokens</th><th>Cost</th><th>Board</th></tr></thead><tbody>${started
					.map(
						(b) =>
							`<tr><td>${html(b.title)}</td><td><span class="state ${b.state}">${html(branchStateWords[b.state])}</span></td><td>${b.runs.length}</td><td>${html(tokensText(b.subtree.tokens))}</td><td>${html(costText(b.subtree.cost_usd))}</td><td>${html(`${b.board.reports} report${b.board.reports === 1 ? '' : 's'}, ${b.board.notes} note${b.board.notes === 1 ? '' : 's'}`)}</td></tr>`,
					)
					.join('')}</tbody></table>`,
	);
	parts.push(`<h3>Board (${board.length})</h3>`);
	if (board.length === 0) {
		parts.push('<p class="muted">No message on this task’s board.</p>');
	} else {
		const rows = [...board]
			.sort((a, b) => a.seq - b.seq)
			.map((m) => {
				const answer =
					isDeliveredReport(m) && !m.answered_by
						? link('agentDesk.answerReport', [project, m.id], 'Answer…')
						: m.kind === 'report'
							? html(m.answered_by ? 'answered' : '')
							: '';
				return `<tr class="${m.passive ? 'passive' : 'active'}"><td class="when">${html(m.created_at.slice(0, 16).replace('T', ' '))}</td><td class="kind">${html(boardKindText(m))}</td><td class="from">${html(senderText(m, tree))}</td><td class="text">${html(m.text)}</td><td>${answer}</td></tr>`;
			});
		parts.push(
			`<table class="board"><thead><tr><th>When</th><th>Kind</th><th>From</th><th>Text</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
		);
	}
	parts.push(...memorizeParts(detail));
	const items = lineageSnapshotItems(detail.snapshot?.items ?? []);
	parts.push('<h3 id="told">What its prompts were told</h3>');
	if (items.length === 0) {
		parts.push(
			`<p class="muted">${self ? 'No catch-up section was pinned in this run’s context snapshot.' : 'Only a branch’s prompts get the tally and memory sections.'}</p>`,
		);
	} else {
		for (const item of items) {
			parts.push(
				`<h4>${html(item.path)}${item.blob ? ` <span class="muted">blob ${html(item.blob.slice(0, 12))}</span>` : ''}</h4><pre class="told">${html(item.preview ?? '')}</pre>`,
			);
		}
	}
	parts.splice(1, 0, `<nav class="actions lineage" aria-label="Lineage">${actions.join('')}</nav>`);
	return parts.join('\n');
}

type Invocation = RunDetail['tool_invocations'][number];
type Usage = { total_tokens: number; cost_usd?: number };

/**
 * The memorize of a landed branch (glossary: Project memory): what became of it (its last outcome),
 * and what the summary agent's answers cost, each answer once (a memo reused after a restart costs
 * nothing again). Nothing when the run's landing was not memorized.
 */
function memorizeParts(detail: RunDetail): string[] {
	const outcome = detail.tool_invocations.filter((i) => i.tool_name === 'memorize').at(-1);
	const answers = detail.tool_invocations.filter((i) => i.tool_name === 'summary_agent');
	if (!outcome && answers.length === 0) {
		return [];
	}
	const usages = answers.map(answerUsage);
	const tokens = usages.reduce((n, u) => n + u.total_tokens, 0);
	const costs = usages.filter((u) => u.cost_usd !== undefined);
	const models = [
		...new Set(answers.map((i) => (i.args as { model?: unknown }).model).filter((m) => typeof m === 'string')),
	];
	return [
		'<h3 id="memorize">Memory</h3>',
		facts_([
			[
				'Memorized',
				outcome ? `${outcome.status === 'ok' ? '' : 'failed: '}${outcome.result_summary ?? ''}` : 'not finished yet',
			],
			[
				'Summary agent',
				answers.length === 0
					? 'not asked'
					: `${models.join(', ') || 'unknown model'} · ${answers.length} answer${answers.length === 1 ? '' : 's'} · ${tokensText(tokens)}${costs.length > 0 ? ` · ${costText(costs.reduce((n, u) => n + u.cost_usd!, 0))}` : ''}`,
			],
		]),
	];
}

function answerUsage(invocation: Invocation): Usage {
	const usage = (invocation.args as { usage?: Partial<Usage> } | undefined)?.usage;
	const total = typeof usage?.total_tokens === 'number' && usage.total_tokens >= 0 ? usage.total_tokens : 0;
	return typeof usage?.cost_usd === 'number' && usage.cost_usd >= 0
		? { total_tokens: total, cost_usd: usage.cost_usd }
		: { total_tokens: total };
}

/** Who wrote a board message: the branch by its title when the tree knows it, else its run; nothing for the person. */
function senderText(message: BoardMessage, tree: LineageTree | undefined): string {
	const branch = message.from_node && tree ? findBranch(tree, message.from_node) : undefined;
	if (branch) {
		return `branch “${branch.title}”`;
	}
	return message.from_run
		? `run ${message.from_run.slice(0, 8)}…`
		: message.from_node
			? `task ${message.from_node.slice(0, 8)}…`
			: 'you';
}

function facts_(rows: Array<[string, string | number | undefined]>): string {
	return `<table class="facts"><tbody>${rows
		.filter(([, v]) => v !== undefined && v !== '')
		.map(([k, v]) => `<tr><th>${html(k)}</th><td>${html(v)}</td></tr>`)
		.join('')}</tbody></table>`;
}

/** The style the section adds to the run page's. */
export const lineagePageStyle = `
pre.told { white-space: pre-wrap; overflow-wrap: anywhere; padding: 8px 12px; background: var(--vscode-textCodeBlock-background); border-radius: 3px; }
table.board { width: 100%; } table.board td.text { white-space: pre-wrap; overflow-wrap: anywhere; width: 55%; } table.board td.when, table.board td.kind { white-space: nowrap; } table.board td.from { max-width: 16em; }
table.board tr.passive td { color: var(--vscode-descriptionForeground); }
.state.landed { color: var(--vscode-testing-iconPassed); } .state.failed { color: var(--vscode-testing-iconFailed); } .state.gate, .state.queued { color: var(--vscode-charts-yellow); }
nav.actions.lineage { margin-top: 0; }
h4 { margin: 12px 0 4px; font-size: 0.95em; }
`;
