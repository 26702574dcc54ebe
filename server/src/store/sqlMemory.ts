/**
 * The project database's part of project memory (glossary: Project memory): the `memory_queue` of
 * batches not yet applied to `.desk-memory/<root>.json` (a row goes once its batch is in the file),
 * and `lineage_memos`, the summary model's answers by model and input, beside the memorizes a landing
 * owes (`owed:land:<run>`, see {@link OwedMemorize}). The memories themselves are never here: the
 * file is the only copy.
 */
import { sha256Hex } from '../ai/canonical';
import type { MemoryBatch } from '../lineage/memory';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';

/** Reads through the database outside a write, or through the transaction inside one. */
type Query = Pick<WriteTransaction, 'all' | 'get'>;

export interface QueuedBatch {
	seq: number;
	request: string;
	batch: MemoryBatch;
}

/**
 * A memorize the landing of `run` owes its root (glossary: Project memory): written before the
 * landing's Decision, with the settings that name its summary agent, and deleted once the run
 * records what became of it, so a desk stopped in between resumes it on its next start. A memo
 * row of its own (key `owed:land:<run>`, no answer yet): `model` is the summary agent's name,
 * `answer` this record's JSON. `claimedBy` is the process carrying it out; another process takes
 * it over only once that one is gone.
 */
export interface OwedMemorize {
	run: string;
	settings: unknown;
	claimedBy: number;
	at: string;
}

const owedKey = (run: string) => `owed:land:${run}`;

export class SqlMemory {
	constructor(readonly db: DurableDatabase) {}

	/** Queues `batch` (one row per request: a second enqueue of the same request adds nothing). */
	enqueue(batch: MemoryBatch, at: string): void {
		this.db.write((tx) =>
			tx.run(
				'INSERT INTO memory_queue (root, request_id, batch, enqueued_at) VALUES (?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING',
				[batch.root, batch.request, JSON.stringify(batch), at],
			),
		);
	}

	/** The batches of `root` still to apply, in the order they were queued. */
	queued(root: string, query: Query = this.db): QueuedBatch[] {
		return query
			.all<{ seq: number; request_id: string; batch: string }>(
				'SELECT seq, request_id, batch FROM memory_queue WHERE root = ? ORDER BY seq',
				[root],
			)
			.map((row) => ({ seq: row.seq, request: row.request_id, batch: JSON.parse(row.batch) as MemoryBatch }));
	}

	/** The roots with batches waiting. */
	queuedRoots(): string[] {
		return this.db.all<{ root: string }>('SELECT DISTINCT root FROM memory_queue ORDER BY root').map((r) => r.root);
	}

	pending(root: string): number {
		return this.db.get<{ n: number }>('SELECT count(*) AS n FROM memory_queue WHERE root = ?', [root])?.n ?? 0;
	}

	/** Whether `request` is still queued. */
	isQueued(request: string): boolean {
		return this.db.get('SELECT 1 AS one FROM memory_queue WHERE request_id = ?', [request]) !== undefined;
	}

	/** Deletes the rows of batches now applied (or refused). */
	remove(seqs: readonly number[]): void {
		if (seqs.length === 0) {
			return;
		}
		this.db.write((tx) => {
			for (const seq of seqs) {
				tx.run('DELETE FROM memory_queue WHERE seq = ?', [seq]);
			}
		});
	}

	/** A memoised answer of the summary model, or undefined. */
	memo(key: string): { model: string; answer: string } | undefined {
		return this.db.get<{ model: string; answer: string }>(
			'SELECT model, answer FROM lineage_memos WHERE memo_key = ?',
			[key],
		);
	}

	/**
	 * Keeps the model's answer to an input: the first answer stays (a second call found it and asked
	 * nothing). `alongside` writes in the same transaction (what the answer cost, on the run).
	 */
	saveMemo(
		key: string,
		model: string,
		inputSha256: string,
		answer: string,
		at: string,
		alongside?: (tx: WriteTransaction) => void,
	): void {
		this.db.write((tx) => {
			tx.run(
				'INSERT INTO lineage_memos (memo_key, model, input_sha256, answer, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (memo_key) DO NOTHING',
				[key, model, inputSha256, answer, at],
			);
			alongside?.(tx);
		});
	}

	/** Records that the landing of `run` owes a memorize with `settings`, claimed by this process (`pid`). */
	oweMemorize(run: string, agent: string, settings: unknown, pid: number, at: string): void {
		const record: OwedMemorize = { run, settings, claimedBy: pid, at };
		const json = JSON.stringify(record);
		this.db.write((tx) =>
			tx.run(
				'INSERT INTO lineage_memos (memo_key, model, input_sha256, answer, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (memo_key) DO UPDATE SET model = excluded.model, input_sha256 = excluded.input_sha256, answer = excluded.answer, at = excluded.at',
				[owedKey(run), agent, sha256Hex(json), json, at],
			),
		);
	}

	/** The runs whose landing owes a memorize. */
	owedRuns(): string[] {
		return this.db
			.all<{ memo_key: string }>("SELECT memo_key FROM lineage_memos WHERE memo_key LIKE 'owed:land:%' ORDER BY at")
			.map((row) => row.memo_key.slice(owedKey('').length));
	}

	/**
	 * Claims the memorize `run` owes for process `pid`: `busy` with the claimant when another process
	 * that is alive holds it, undefined when none is owed; `from` is who held it before (`pid` itself:
	 * this process is carrying it out already).
	 */
	claimOwed(
		run: string,
		pid: number,
		alive: (pid: number) => boolean,
	): { owed: OwedMemorize; from: number } | { busy: number } | undefined {
		if (this.db.get('SELECT 1 AS one FROM lineage_memos WHERE memo_key = ?', [owedKey(run)]) === undefined) {
			// Most memorizes owe nothing: no write for them.
			return undefined;
		}
		return this.db.write((tx) => {
			const row = tx.get<{ answer: string }>('SELECT answer FROM lineage_memos WHERE memo_key = ?', [owedKey(run)]);
			if (!row) {
				return undefined;
			}
			const owed = JSON.parse(row.answer) as OwedMemorize;
			if (owed.claimedBy !== pid && alive(owed.claimedBy)) {
				return { busy: owed.claimedBy };
			}
			const mine: OwedMemorize = { ...owed, claimedBy: pid };
			tx.run('UPDATE lineage_memos SET answer = ? WHERE memo_key = ?', [JSON.stringify(mine), owedKey(run)]);
			return { owed: mine, from: owed.claimedBy };
		});
	}

	/**
	 * The memorize `run` owed is settled (its outcome recorded on the run by `alongside`, in the same
	 * transaction; or nothing was owed after all): the row goes, unless another process claimed it since.
	 */
	settleOwed(run: string, pid: number, alongside?: (tx: WriteTransaction) => void): void {
		this.db.write((tx) => {
			alongside?.(tx);
			const row = tx.get<{ answer: string }>('SELECT answer FROM lineage_memos WHERE memo_key = ?', [owedKey(run)]);
			if (row && (JSON.parse(row.answer) as OwedMemorize).claimedBy === pid) {
				tx.run('DELETE FROM lineage_memos WHERE memo_key = ?', [owedKey(run)]);
			}
		});
	}

	/** Whether `name` is a listed root of the project (`main` always is). */
	isListedRoot(name: string): boolean {
		return name === 'main' || this.db.get('SELECT 1 AS one FROM lineage_roots WHERE name = ?', [name]) !== undefined;
	}

	/** The abstract a branch's landing froze (its last), on the branch's board or its tally's. */
	frozenAbstract(branch: string): string | undefined {
		return this.db.get<{ text: string }>(
			"SELECT text FROM board_messages WHERE kind = 'abstract' AND frozen = 1 AND (node = ? OR from_node = ?) ORDER BY seq DESC LIMIT 1",
			[branch, branch],
		)?.text;
	}

	/** The listed roots' names. */
	listedRoots(): string[] {
		const names = this.db.all<{ name: string }>('SELECT name FROM lineage_roots ORDER BY name').map((r) => r.name);
		return names.includes('main') ? names : ['main', ...names];
	}
}
