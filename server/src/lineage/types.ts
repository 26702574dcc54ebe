/**
 * Lineage, boards and project memory as records (glossary: Lineage, Tally, Catch-up, Project memory):
 * what the domain, the store, the protocol and the client share. Ids are the AI objects' (a node is
 * a Task, a conversation is a Run); times are ISO strings.
 */
import type { ActorRef, TokenUsage } from '../ai/types';

/** A root's name: lowercase letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 64. */
export const rootNamePattern = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** The root every project lists. */
export const mainRoot = 'main';
/** The tag that says what a lineage Task is (`tally` or `branch`), and the one naming its root. */
export const lineageKindTag = 'desk.lineage.kind';
export const lineageRootTag = 'desk.lineage.root';

/** A listed root of the project's lineage and what hangs from it. */
export interface LineageRoot {
	name: string;
	about: string;
	listed_at: string;
	/** Who listed it (an actor label). */
	listed_by: string;
	/** The tally's Task, once the first branch of the root started; absent while the root is empty. */
	tally?: string;
	/** Branches ever forked from this root (any depth), those still working, and those landed. */
	branches: number;
	live: number;
	landed: number;
	/** Its project memory file (`.desk-memory/<root>.json`). */
	memory: { exists: boolean; memories: number; uncommitted: boolean; corrupt?: string };
}

export type LineageNodeKind = 'tally' | 'branch';

/**
 * Where a branch stands, from its runs and its board: `queued` (waiting for the shared checkout),
 * `running`, `gate` (a run waits for the person's decision), `landed`, `abandoned`, `failed` (its last
 * run failed and nobody retried it).
 */
export type BranchState = 'queued' | 'running' | 'gate' | 'landed' | 'abandoned' | 'failed';

/** How a branch is carried out: frozen at the fork from its starter's launch and the branch settings. */
export interface BranchConfig {
	/** The agent of `agentDesk.agents` the branch's runs use. */
	agent: string;
	/** The template's nodes (`["work"]`, `["plan","work"]`). */
	template: string[];
	isolation: 'shared' | 'worktree';
	maxAttempts?: number;
	/** The launch whose plugs (at the versions its Go froze) the branch's runs get, when the starter had one. */
	fromLaunch?: string;
	/**
	 * The desk tools its runs may be shown: its starter's, as the grant chain narrows them (a starter
	 * whose agent had none grants none), and no more than the fork asked for. Absent: every tool its
	 * agent is given (its starter had them all).
	 */
	tools?: string[];
	/** The passive notes its runs may post to its starter (`maxNotesPerBranch` at the fork). */
	maxNotes?: number;
}

/** The limits along a grant chain; each refusal (`lineage.limit`) names the one it hit. */
export interface LineageLimits {
	/** Branches in a chain (a branch of the person's conversation has depth 1). */
	maxDepth: number;
	/** Branches one node may start. */
	maxBranchesPerNode: number;
	/** Branches of the project not yet ended. */
	maxLiveBranches: number;
	/** Token budget of the tally section of a catch-up. */
	tallyTokens: number;
	/** Token budget of the memory index a branch starts with. */
	memoryTokens: number;
	/** Passive notes one branch may post to its starter (board_post); the desk's own notes are not counted. */
	maxNotesPerBranch: number;
}

export const defaultLineageLimits: LineageLimits = {
	maxDepth: 2,
	maxBranchesPerNode: 5,
	maxLiveBranches: 4,
	tallyTokens: 1500,
	memoryTokens: 1000,
	maxNotesPerBranch: 50,
};

/** A tally or a branch (a Task). */
export interface LineageNode {
	node: string;
	kind: LineageNodeKind;
	root: string;
	/** What was forked: the tally, or a branch for a branch of a branch. */
	fork_of?: string;
	/** The node (Task) and run that started it; no run when the person did. */
	starter_node?: string;
	starter_run?: string;
	/** `["branch:<task>", "root:main", "ultimate:<run or person>"]`: fork ancestry before starter ancestry, each once. */
	grant_chain: string[];
	depth: number;
	config: BranchConfig;
	queued: boolean;
	created_at: string;
}

/**
 * What a board holds: `board.started.by` (who started the branch), `input` (its prompt, the only
 * reply-enabled kind), `report` (its final answer when its work ended, on its own board and delivered
 * to the starter's, active), `note` (passive: one-way updates and final answers while something is
 * pending), `answer` (the starter's answer to a report), and on a tally `intent`, `abstract` (liquid
 * until the landing freezes it) and `landed`.
 */
export type BoardMessageKind =
	'board.started.by' | 'input' | 'report' | 'note' | 'answer' | 'intent' | 'abstract' | 'landed';

export interface BoardMessage {
	seq: number;
	id: string;
	/** The stable id of the effect that wrote it (`dlv:<node>:in`, `land:<run>`, …). */
	request_id: string;
	/** Whose board. */
	node: string;
	kind: BoardMessageKind;
	from_node?: string;
	from_run?: string;
	reply_enabled: boolean;
	in_reply_to?: string;
	passive: boolean;
	/** Abstracts: frozen by the landing; superseded by the next liquid one. */
	frozen: boolean;
	superseded_by?: string;
	text: string;
	/**
	 * Facts by kind: a report's `{outcome: 'landed'|'abandoned'|'failed'|'stopped', commit?, version?,
	 * decision?, run}`, a landed entry's `{commit?, version?, subject, touched: string[], abstract}`.
	 */
	data?: Record<string, unknown>;
	created_at: string;
	/** A report: whether the starter answered it (and with which message). */
	answered_by?: string;
}

/** What forking a branch answers (the receipt's result; `replayed` when the same call came before). */
export interface BranchResult {
	/** The branch's Task, its first run, its root and that root's tally. */
	node: string;
	run: string;
	intent: string;
	root: string;
	tally: string;
	/** True while it waits for the shared checkout. */
	queued: boolean;
	grant_chain: string[];
	replayed: boolean;
}

/** A branch as the tree shows it: its node, state, runs, board counts and its subtree's cost. */
export interface LineageTreeNode {
	node: LineageNode;
	title: string;
	state: BranchState;
	/** Its runs, oldest first, with their status. */
	runs: Array<{ id: string; status: string }>;
	board: { messages: number; reports: number; unanswered: number; notes: number };
	/** Tokens and cost of this branch and every branch below it. */
	subtree: { tokens: number; cost_usd: number; branches: number };
	/** The liquid (or, once landed, frozen) abstract's text. */
	abstract?: string;
	children: LineageTreeNode[];
}

export interface LineageTree {
	roots: Array<{ root: LineageRoot; tally?: string; branches: LineageTreeNode[] }>;
	/** Branches by the run that started them (the Runs view nests them under it). */
	by_starter_run: Record<string, string[]>;
}

/** One memory of a root (glossary: Project memory). */
export interface Memory {
	title: string;
	text: string;
	tags?: string[];
	created_at: string;
	updated_at: string;
	created_by: ActorRef;
	/** Where it came from: the person or a conversation remembering it, or a landing memorized by the summary model. */
	source:
		| { kind: 'remember'; run?: string }
		| {
				kind: 'landing';
				run: string;
				commit?: string;
				version?: number;
				decision?: string;
				model: string;
				memo: string;
		  };
	/** Files it cites, with their git blob when remembered: a changed blob marks it "evidence changed". */
	evidence?: Array<{ path: string; blob?: string }>;
}

/** A request applied to a memory file: its receipt, written by the same rename as its effect. */
export interface MemoryRequestReceipt {
	op: 'remember' | 'forget' | 'memorize';
	at: string;
	by: string;
	request_hash: string;
	result: { added?: string[]; updated?: string[]; removed?: string[] };
}

/** `.desk-memory/<root>.json`, format `agent-desk-memory/1`. */
export interface MemoryFile {
	format: 'agent-desk-memory/1';
	root: string;
	memories: Record<string, Memory>;
	requests: Record<string, MemoryRequestReceipt>;
}

/** A root's memory as the Memory view shows it: the file's memories, and what git and the evidence say of them. */
export interface MemoryView {
	root: string;
	/** The file, relative to the repository. */
	path: string;
	exists: boolean;
	/** The file differs from the one in HEAD (or is not in it). */
	uncommitted: boolean;
	memories: Array<{ id: string; memory: Memory; evidence_changed: string[] }>;
	/** Batches enqueued and not yet applied. */
	pending: number;
}

/** What a branch's next input is told besides its prompt: other branches of its root, and its root's memory. */
export interface CatchUpSection {
	node: string;
	root: string;
	/** The target ref and the tip read from it; `walked` is false when the tip was the saved baseline (no commit walk). */
	ref: string;
	tip?: string;
	walked: boolean;
	/** The "Other branches of <root>" section, within the tally token budget. */
	tally: string;
	/** The "Project memory" section with recent landings (a branch's first input), within the memory budget. */
	memory: string;
}

/** What memorizing a landing did. */
export interface MemorizeResult {
	applied?: { added: string[]; updated: string[]; removed: string[] };
	/** Why memory was left unchanged (no summary model, refused twice, nothing to remember). */
	skipped?: string;
	memo_hit: boolean;
	retried: boolean;
	replayed: boolean;
	/** What the answers the summary agent gave this call cost (absent when it was asked nothing: a memo, a receipt). */
	usage?: TokenUsage;
}
