import { fromJson } from '../ai/model';
import type { AiObject } from '../ai/types';
import { encodeLaunchRecord, readLaunchRecord } from '../launch/storedFormats';
import type { LaunchRecord } from '../launch/types';
import type { BoardTx } from '../lineage/boardPorts';
import type { LineageReads, LineageStore, LineageWrites, NodeRow, ReceiptRow, RootRow } from '../lineage/ports';
import type { AiStore } from './aiStore';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';
import { sqlBoardTx } from './sqlBoard';

/** What reads a project database: the database itself (every process's changes applied) or a transaction. */
type Query = Pick<WriteTransaction, 'all' | 'get'>;

/** The lineage's tables of a project database (project schema v8). */
export class SqlLineage implements LineageStore {
	constructor(
		private readonly db: DurableDatabase,
		private readonly ai: AiStore,
	) {}

	read<T>(body: (reads: LineageReads) => T): T {
		return body(new SqlLineageReads(this.db));
	}

	/** Reads inside a transaction of another area's (a run's claim on the checkout). */
	readIn<T>(tx: WriteTransaction, body: (reads: LineageReads) => T): T {
		return body(new SqlLineageReads(tx));
	}

	write<T>(body: (writes: LineageWrites) => T): T {
		return this.db.write((tx) => body(new SqlLineageWrites(tx, this.ai)));
	}
}

class SqlLineageReads implements LineageReads {
	constructor(protected readonly query: Query) {}

	roots(): RootRow[] {
		return this.query.all<RootRow>(
			'SELECT name, about, listed_at, listed_by, tally_task FROM lineage_roots ORDER BY name',
		);
	}

	root(name: string): RootRow | undefined {
		return this.query.get<RootRow>(
			'SELECT name, about, listed_at, listed_by, tally_task FROM lineage_roots WHERE name = ?',
			[name],
		);
	}

	node(id: string): NodeRow | undefined {
		return this.query.get<NodeRow>('SELECT * FROM lineage_nodes WHERE node_id = ?', [id]);
	}

	nodes(): NodeRow[] {
		return this.query.all<NodeRow>('SELECT * FROM lineage_nodes ORDER BY created_at, node_id');
	}

	startedBy(node: string): NodeRow[] {
		return this.query.all<NodeRow>('SELECT * FROM lineage_nodes WHERE starter_node = ? ORDER BY created_at, node_id', [
			node,
		]);
	}

	receipt(scope: string, key: string): ReceiptRow | undefined {
		return this.query.get<ReceiptRow>('SELECT * FROM call_receipts WHERE scope = ? AND request_key = ?', [scope, key]);
	}

	object<T extends AiObject>(id: string): T | undefined {
		const row = this.query.get<{ json: string }>('SELECT json FROM ai_objects WHERE object_id = ?', [id]);
		return row ? (fromJson(JSON.parse(row.json)) as T) : undefined;
	}

	byRun<T extends AiObject>(runId: string, type: T['object_type']): T[] {
		return this.query
			.all<{ json: string }>('SELECT json FROM ai_objects WHERE ref_run = ? AND object_type = ? ORDER BY object_id', [
				runId,
				type,
			])
			.map((r) => fromJson(JSON.parse(r.json)) as T);
	}

	launchRecordOfRun(runId: string): LaunchRecord | undefined {
		const claimed = this.query.get<{ json: string }>(
			'SELECT r.json FROM run_control c JOIN launch_records r ON r.launch_id = c.launch_id WHERE c.run_id = ?',
			[runId],
		);
		if (claimed) {
			return readLaunchRecord(claimed.json);
		}
		// A run whose control row is gone (or never was): the record of its task.
		const run = this.object<AiObject & { task?: string }>(runId);
		if (!run?.task) {
			return undefined;
		}
		for (const row of this.query.all<{ json: string }>('SELECT json FROM launch_records ORDER BY created_at')) {
			try {
				const record = readLaunchRecord(row.json);
				if (record.task === run.task) {
					return record;
				}
			} catch {
				// A record this desk cannot read is not the branch's configuration.
			}
		}
		return undefined;
	}

	boardCounts(node: string): { messages: number; reports: number; unanswered: number; notes: number } {
		const row = this.query.get<{ messages: number; reports: number; unanswered: number; notes: number }>(
			`SELECT COUNT(*) AS messages,
				COALESCE(SUM(kind = 'report'), 0) AS reports,
				COALESCE(SUM(kind = 'report' AND NOT EXISTS (SELECT 1 FROM board_messages a WHERE a.in_reply_to = m.message_id AND a.kind = 'answer')), 0) AS unanswered,
				COALESCE(SUM(kind = 'note'), 0) AS notes
			 FROM board_messages m WHERE node = ?`,
			[node],
		);
		return row ?? { messages: 0, reports: 0, unanswered: 0, notes: 0 };
	}

	abstractOf(node: string): string | undefined {
		return this.query.get<{ text: string }>(
			"SELECT text FROM board_messages WHERE kind = 'abstract' AND from_node = ? AND superseded_by IS NULL ORDER BY seq DESC LIMIT 1",
			[node],
		)?.text;
	}
}

class SqlLineageWrites extends SqlLineageReads implements LineageWrites {
	readonly board: BoardTx;

	constructor(
		private readonly tx: WriteTransaction,
		private readonly ai: AiStore,
	) {
		super(tx);
		this.board = sqlBoardTx(tx);
	}

	insertRoot(row: RootRow): boolean {
		if (this.root(row.name)) {
			return false;
		}
		this.tx.run('INSERT INTO lineage_roots (name, about, listed_at, listed_by, tally_task) VALUES (?, ?, ?, ?, ?)', [
			row.name,
			row.about,
			row.listed_at,
			row.listed_by,
			row.tally_task,
		]);
		return true;
	}

	setTally(root: string, task: string): boolean {
		if (this.root(root)?.tally_task !== null) {
			return false;
		}
		this.tx.run('UPDATE lineage_roots SET tally_task = ? WHERE name = ? AND tally_task IS NULL', [task, root]);
		return true;
	}

	putObjects(objects: readonly AiObject[]): void {
		this.ai.putIn(this.tx, objects);
	}

	insertLaunchRecord(record: LaunchRecord): void {
		this.tx.run('INSERT INTO launch_records (launch_id, created_at, json) VALUES (?, ?, ?)', [
			record.launch_id,
			record.created_at,
			encodeLaunchRecord(record),
		]);
	}

	insertNode(row: NodeRow): void {
		this.tx.run(
			`INSERT INTO lineage_nodes (node_id, kind, root, fork_of, starter_node, starter_run, grant_chain, depth, config, queued, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			[
				row.node_id,
				row.kind,
				row.root,
				row.fork_of,
				row.starter_node,
				row.starter_run,
				row.grant_chain,
				row.depth,
				row.config,
				row.queued,
				row.created_at,
			],
		);
	}

	unqueue(node: string): boolean {
		if (this.node(node)?.queued !== 1) {
			return false;
		}
		this.tx.run('UPDATE lineage_nodes SET queued = 0 WHERE node_id = ?', [node]);
		return true;
	}

	insertReceipt(row: ReceiptRow): void {
		this.tx.run(
			`INSERT INTO call_receipts (scope, request_key, tool, request_hash, harness_call_id, run_id, result, at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			[row.scope, row.request_key, row.tool, row.request_hash, row.harness_call_id, row.run_id, row.result, row.at],
		);
	}

	alongside<T>(write: (tx: WriteTransaction) => T): T {
		return write(this.tx);
	}
}
