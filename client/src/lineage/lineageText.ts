import type {
	BoardDidReport,
	BoardMessage,
	LineageRoot,
	LineageTree,
	NotificationParamsOf,
} from '../../../server/src/protocol/protocol';
import { markdownLines, markdownText } from '../common/markdownText';

/*
 * What the Runs view and the notifications say of roots, tallies, branches and boards (glossary:
 * Lineage, Tally). Titles, prompts, abstracts and board texts come from people and agents: every
 * Markdown string escapes them, and a plain label is made inert by the tree (inertTreeItem) or the
 * message helpers. No VS Code import: tested in plain Node.
 */

export type LineageTreeRoot = LineageTree['roots'][number];
export type LineageBranch = LineageTreeRoot['branches'][number];
export type BranchState = LineageBranch['state'];

/** A branch's state in the words of the views. */
export const branchStateWords: Record<BranchState, string> = {
	queued: 'waiting for the checkout',
	running: 'working',
	gate: 'at the gate',
	landed: 'landed',
	abandoned: 'abandoned',
	failed: 'failed',
};

/** The codicon and theme colour of a branch's state (the Runs view's run icons, the same meanings). */
export const branchStateIcons: Record<BranchState, [string, string?]> = {
	queued: ['watch', 'charts.yellow'],
	running: ['sync~spin', 'charts.blue'],
	gate: ['eye', 'charts.yellow'],
	landed: ['pass-filled', 'testing.iconPassed'],
	abandoned: ['circle-slash', 'disabledForeground'],
	failed: ['error', 'testing.iconFailed'],
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : word.endsWith('ch') ? 'es' : 's'}`;

/** "1 memory", "14 memories". */
export function memoriesText(n: number): string {
	return `${n} ${n === 1 ? 'memory' : 'memories'}`;
}

/** Tokens as the views count them: "812 tokens", "41.2k tokens", "1.3M tokens". */
export function tokensText(tokens: number): string {
	if (tokens < 1000) {
		return `${tokens} token${tokens === 1 ? '' : 's'}`;
	}
	if (tokens < 1_000_000) {
		return `${(tokens / 1000).toFixed(tokens < 10_000 ? 1 : 0).replace(/\.0$/, '')}k tokens`;
	}
	return `${(tokens / 1_000_000).toFixed(1).replace(/\.0$/, '')}M tokens`;
}

/** A cost in dollars: cents once it reaches one, four decimals below (a scripted or cheap run costs fractions of a cent). */
export function costText(usd: number): string {
	return usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** Every branch of a list and the branches below them, depth first. */
export function allBranches(branches: readonly LineageBranch[]): LineageBranch[] {
	return branches.flatMap((b) => [b, ...allBranches(b.children)]);
}

/** The branch (a Task) of that id anywhere in the tree. */
export function findBranch(tree: LineageTree, node: string): LineageBranch | undefined {
	for (const root of tree.roots) {
		const found = allBranches(root.branches).find((b) => b.node.node === node);
		if (found) {
			return found;
		}
	}
	return undefined;
}

/** Whether the tree has anything to show besides the `main` root every project lists: a branch, or another root. */
export function hasLineage(tree: LineageTree): boolean {
	return tree.roots.length > 1 || tree.roots.some((r) => r.branches.length > 0 || r.root.branches > 0);
}

/**
 * The row of a root: `main` and "tally · 3 branches (1 working · 1 at the gate · 1 landed) · 41.2k
 * tokens · $0.63", or "no branch yet" while it is empty.
 */
export function rootDescription(root: LineageTreeRoot): string {
	const every = allBranches(root.branches);
	if (every.length === 0 && root.root.branches === 0) {
		return root.root.about ? `no branch yet · ${oneLine(root.root.about)}` : 'no branch yet';
	}
	const counts = (['queued', 'running', 'gate', 'landed', 'abandoned', 'failed'] as const)
		.map((state) => [state, every.filter((b) => b.state === state).length] as const)
		.filter(([, n]) => n > 0)
		.map(([state, n]) => `${n} ${branchStateWords[state]}`);
	const tokens = root.branches.reduce((n, b) => n + b.subtree.tokens, 0);
	const cost = root.branches.reduce((n, b) => n + b.subtree.cost_usd, 0);
	const total = Math.max(every.length, root.root.branches);
	return [
		root.tally ? 'tally' : '',
		`${plural(total, 'branch')}${counts.length ? ` (${counts.join(' · ')})` : ''}`,
		tokensText(tokens),
		costText(cost),
	]
		.filter(Boolean)
		.join(' · ');
}

/** A root's tooltip (Markdown, every name escaped). */
export function rootTooltip(root: LineageRoot): string {
	const memory = root.memory.corrupt
		? `damaged: ${markdownText(root.memory.corrupt)}`
		: root.memory.exists
			? `${memoriesText(root.memory.memories)}${root.memory.uncommitted ? ', uncommitted' : ''}`
			: 'none yet';
	return [
		`**Root** ${markdownText(root.name)}${root.about ? ` — ${markdownText(root.about)}` : ''}`,
		`${plural(root.branches, 'branch')}: ${root.live} working, ${root.landed} landed`,
		`Project memory: ${memory}`,
		`Listed ${markdownText(root.listed_at.slice(0, 16).replace('T', ' '))} by ${markdownText(root.listed_by)}`,
	].join('\n\n');
}

/**
 * What a branch's row says after its title: its state (queued ones "waiting for the checkout"), its
 * runs, the tokens and cost of it and every branch below it, and a report still to answer.
 */
export function branchDescription(branch: LineageBranch): string {
	const below = branch.subtree.branches > 1 ? ` (${branch.subtree.branches} branches)` : '';
	return [
		branchStateWords[branch.state],
		plural(branch.runs.length, 'run'),
		`${tokensText(branch.subtree.tokens)}${below}`,
		costText(branch.subtree.cost_usd),
		branch.board.unanswered > 0 ? `${plural(branch.board.unanswered, 'report')} to answer` : '',
	]
		.filter(Boolean)
		.join(' · ');
}

/** A branch's tooltip: title, state, root, who started it, the grant chain, how it runs, and its abstract. */
export function branchTooltip(branch: LineageBranch): string {
	const { node } = branch;
	const config = [
		node.config.agent,
		node.config.isolation === 'worktree' ? 'in a worktree of its own' : 'in the shared checkout',
		node.config.template.length ? `nodes ${node.config.template.join(', ')}` : '',
	]
		.filter(Boolean)
		.map((part) => markdownText(part))
		.join(' · ');
	return [
		`**Branch** ${markdownText(branch.title)}`,
		`${markdownText(branchStateWords[branch.state])} · root ${markdownText(node.root)} · depth ${node.depth}`,
		`Started by ${node.starter_run ? `run ${markdownText(node.starter_run)}` : 'you'} · ${markdownText(node.created_at.slice(0, 16).replace('T', ' '))}`,
		`Grant chain: ${grantChainMarkdown(node.grant_chain)}`,
		`Runs with ${config}`,
		`Board: ${plural(branch.board.reports, 'report')} (${branch.board.unanswered} to answer), ${plural(branch.board.notes, 'note')}`,
		...(branch.abstract
			? [`${branch.state === 'landed' ? 'Frozen abstract' : 'Abstract'}:  \n${markdownLines(branch.abstract, 12)}`]
			: []),
	].join('\n\n');
}

function grantChainMarkdown(chain: readonly string[]): string {
	return chain.map((c) => markdownText(c)).join(' → ');
}

/** A grant chain as text: `branch:… → root:main → ultimate:…`. */
export function grantChainText(chain: readonly string[]): string {
	return chain.join(' → ');
}

/**
 * What a board message is, for the person: a word, and the codicon its row shows (🔔 report, 💬 note,
 * ↩ answer in the design's words; icons rather than emoji, which many Linux desktops draw as boxes).
 */
export const boardKindWords: Record<BoardMessage['kind'], { icon: string; word: string }> = {
	report: { icon: 'bell', word: 'Report' },
	note: { icon: 'comment', word: 'Note' },
	answer: { icon: 'reply', word: 'Answer' },
	input: { icon: 'mail', word: 'Prompt' },
	'board.started.by': { icon: 'type-hierarchy-sub', word: 'Started' },
	intent: { icon: 'target', word: 'Intent' },
	abstract: { icon: 'note', word: 'Abstract' },
	landed: { icon: 'git-commit', word: 'Landed' },
};

/** A board message's kind in words, with a report's outcome: "Report (landed as abc1234)". */
export function boardKindText(message: BoardMessage): string {
	const { word } = boardKindWords[message.kind] ?? { word: message.kind };
	const outcome =
		message.kind === 'report' && message.data
			? ` (${outcomeText(message.data['outcome'], message.data['commit'], message.data['version'])})`
			: '';
	return `${word}${outcome}`;
}

/** "1 report · 2 notes": what a Board row counts (kinds it has none of are left out). */
export function boardCounts(messages: readonly BoardMessage[]): string {
	const count = (kind: BoardMessage['kind']) => messages.filter((m) => m.kind === kind).length;
	const parts = (['report', 'note', 'answer'] as const).filter((k) => count(k) > 0).map((k) => plural(count(k), k));
	return parts.length ? parts.join(' · ') : 'no message';
}

/**
 * A report delivered to this board by a branch (the starter's copy, the one the starter answers),
 * not the branch's own record of its report.
 */
export function isDeliveredReport(message: BoardMessage): boolean {
	return message.kind === 'report' && message.from_node !== undefined && message.from_node !== message.node;
}

/**
 * A board's messages with each report delivered here marked answered when its branch's own report
 * was: the starter's one answer replies to the branch's record of the report (on the branch's
 * board), so the copy on the starter's board learns it from the branch's counts in the tree.
 */
export function withAnswers(messages: readonly BoardMessage[], tree: LineageTree | undefined): BoardMessage[] {
	return messages.map((m) => {
		if (!isDeliveredReport(m) || m.answered_by !== undefined || !tree) {
			return m;
		}
		const branch = findBranch(tree, m.from_node!);
		return branch && branch.board.reports > 0 && branch.board.unanswered === 0
			? { ...m, answered_by: `the answer on the board of ${branch.node.node}` }
			: m;
	});
}

/** A board newest first (the order the Board node lists it in). */
export function newestFirst(messages: readonly BoardMessage[]): BoardMessage[] {
	return [...messages].sort((a, b) => b.seq - a.seq);
}

/** What a report says happened, in words: "landed as abc1234", "abandoned", "failed", "stopped with the desk". */
export function outcomeText(outcome: unknown, commit?: unknown, version?: unknown): string {
	switch (outcome) {
		case 'landed':
			return typeof commit === 'string'
				? `landed as ${commit.slice(0, 7)}`
				: typeof version === 'number'
					? `landed as v${version}`
					: 'landed';
		case 'abandoned':
			return 'was abandoned';
		case 'failed':
			return 'failed';
		case 'stopped':
			return 'stopped with the desk; nothing was landed';
		default:
			return typeof outcome === 'string' ? outcome : 'ended';
	}
}

/**
 * A board message's row: its kind (a report with its outcome), then the first line of its text; its
 * description says when and whether it was answered. A report's text opens with its outcome line
 * ("landed as abc1234ff… (Desk-Run: …)"), which the kind already says shorter: the row shows the
 * line after it, the branch's own words. A prompt carried to a run is markdown: its heading's words show.
 */
export function boardLabel(message: BoardMessage): string {
	const outcome = message.kind === 'report' ? message.data?.['outcome'] : undefined;
	let text = message.text.trim();
	if (typeof outcome === 'string' && text.startsWith(outcome)) {
		text = text.split('\n').slice(1).join('\n');
	}
	if (message.kind === 'input') {
		text = text.replace(/^#+\s+/, '');
	}
	const line = oneLine(text);
	return line ? `${boardKindText(message)}: ${line}` : boardKindText(message);
}

export function boardDescription(message: BoardMessage): string {
	return [
		message.created_at.slice(0, 16).replace('T', ' '),
		message.passive && message.kind !== 'answer' && message.kind !== 'note' ? 'passive' : '',
		message.kind === 'report' ? (message.answered_by ? 'answered' : 'not answered yet') : '',
		message.kind === 'abstract' ? (message.frozen ? 'frozen' : message.superseded_by ? 'superseded' : 'liquid') : '',
	]
		.filter(Boolean)
		.join(' · ');
}

/** A board message's tooltip: the whole text (escaped, in lines), its kind, when and from which run. */
export function boardTooltip(message: BoardMessage): string {
	const { word } = boardKindWords[message.kind] ?? { word: message.kind };
	return [
		`**${markdownText(word)}** · ${markdownText(message.created_at.slice(0, 16).replace('T', ' '))}${message.from_run ? ` · from run ${markdownText(message.from_run)}` : ''}`,
		markdownLines(message.text, 30),
		...(message.kind === 'report'
			? [message.answered_by ? 'Answered.' : 'Not answered yet: *Answer Report…* ends the exchange.']
			: []),
	].join('\n\n');
}

/** The one notification of an active report: "Branch ‘Document the parser’ landed as abc1234." */
export function reportMessage(
	report: Pick<NotificationParamsOf<typeof BoardDidReport>, 'title' | 'outcome'>,
	commit?: string,
): string {
	return `Agent Desk: branch ‘${oneLine(report.title)}’ ${outcomeText(report.outcome, commit)}.`;
}

/** The first line of a text, for a row (the whole text is in its tooltip). */
export function oneLine(text: string, max = 120): string {
	const first = text.trim().split('\n', 1)[0] ?? '';
	return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/**
 * A board as a plain-text document (Open Board): oldest first, each message with its mark, kind,
 * time, sender and whole text indented under it. Plain text renders nothing: a link in a message
 * stays text. Controls are shown by the caller (visibleLines).
 */
export function boardDocument(title: string, messages: readonly BoardMessage[]): string {
	const lines = [
		`Board of ${oneLine(title, 200)}`,
		`${messages.length} message${messages.length === 1 ? '' : 's'}, oldest first`,
		'',
	];
	for (const m of [...messages].sort((a, b) => a.seq - b.seq)) {
		const flags = [
			m.passive ? 'passive' : 'active',
			m.kind === 'report' ? (m.answered_by ? 'answered' : 'not answered yet') : '',
			m.frozen ? 'frozen' : '',
		]
			.filter(Boolean)
			.join(', ');
		lines.push(
			`${boardKindText(m)} · ${m.created_at.slice(0, 19).replace('T', ' ')} · ${m.from_run ? `from run ${m.from_run}` : m.from_node ? `from task ${m.from_node}` : 'from you'} (${flags})`,
			...m.text.split(/\r?\n/).map((line) => `    ${line}`),
			'',
		);
	}
	return lines.join('\n');
}
