/**
 * What the lineage needs from the rest of the desk (glossary: Lineage): the project database's
 * lineage tables read and written in one durable transaction with the AI objects, launch records and
 * boards of a fork; the memory files' state; the repository's head. Filled by the composition root.
 */
import type { AiObject } from '../ai/types';
import type { LaunchRecord } from '../launch/types';
import type { WriteTransaction } from '../store/durableDatabase';
import type { BoardTx } from './boardPorts';
import type { LineageRoot } from './types';

/** A row of `lineage_roots`. */
export interface RootRow {
	name: string;
	about: string;
	listed_at: string;
	listed_by: string;
	tally_task: string | null;
}

/** A row of `lineage_nodes`: `grant_chain` and `config` are JSON. */
export interface NodeRow {
	node_id: string;
	kind: 'tally' | 'branch';
	root: string;
	fork_of: string | null;
	starter_node: string | null;
	starter_run: string | null;
	grant_chain: string;
	depth: number;
	config: string;
	queued: number;
	created_at: string;
}

/** A row of `call_receipts`: the first answer of a lineage call, by the caller's scope and key. */
export interface ReceiptRow {
	scope: string;
	request_key: string;
	tool: string;
	request_hash: string;
	harness_call_id: string | null;
	run_id: string | null;
	result: string;
	at: string;
}

/** What the lineage reads: in a transaction, what it sees is what it writes against. */
export interface LineageReads {
	roots(): RootRow[];
	root(name: string): RootRow | undefined;
	node(id: string): NodeRow | undefined;
	nodes(): NodeRow[];
	/** Branch nodes (or the tally) forked from `node` or started by it: `starter_node = node`. */
	startedBy(node: string): NodeRow[];
	receipt(scope: string, key: string): ReceiptRow | undefined;
	object<T extends AiObject>(id: string): T | undefined;
	/** AI objects of a run by type (its Decision, its Provenance), oldest first. */
	byRun<T extends AiObject>(runId: string, type: T['object_type']): T[];
	/** The launch record whose Go (or fork) made the task's first run; undefined when none did. */
	launchRecordOfRun(runId: string): LaunchRecord | undefined;
	/** Counts of a node's board by kind, and the reports not answered. */
	boardCounts(node: string): { messages: number; reports: number; unanswered: number; notes: number };
	/** The newest abstract of a branch on its tally's board, frozen or liquid. */
	abstractOf(node: string): string | undefined;
}

/** The writes of one durable transaction of the project database. */
export interface LineageWrites extends LineageReads {
	/** Lists a root; false when a root of that name is listed already (nothing written). */
	insertRoot(row: RootRow): boolean;
	/** Makes `task` the root's tally; false when the root has one already (another fork made it). */
	setTally(root: string, task: string): boolean;
	putObjects(objects: readonly AiObject[]): void;
	insertLaunchRecord(record: LaunchRecord): void;
	insertNode(row: NodeRow): void;
	/** Clears `queued` of a branch; false when it was not queued (another process started it). */
	unqueue(node: string): boolean;
	insertReceipt(row: ReceiptRow): void;
	readonly board: BoardTx;
	/** Writes of another area in this same transaction (the checkout's claim of a branch's run). */
	alongside<T>(write: (tx: WriteTransaction) => T): T;
}

export interface LineageStore {
	read<T>(body: (reads: LineageReads) => T): T;
	write<T>(body: (writes: LineageWrites) => T): T;
}

/**
 * A root's memory file as the Roots view counts it. The memory part of the desk fills this; until
 * it does, {@link noMemoryStatus} reads nothing and says the file is not there.
 */
export interface MemoryStatus {
	of(root: string): LineageRoot['memory'];
}

export const noMemoryStatus: MemoryStatus = {
	of: () => ({ exists: false, memories: 0, uncommitted: false }),
};
