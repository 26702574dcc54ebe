import { DeskError } from '../core/errors';
import {
	readSavedCatchUp,
	savedCatchUpJson,
	type CatchUpReads,
	type CommitAuthor,
	type LandedEntry,
	type LiveBranch,
	type SavedCatchUp,
	type TallyView,
} from '../lineage/catchUp';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';

/** Reads through the database outside a write, or through the transaction inside one. */
type Query = Pick<WriteTransaction, 'all' | 'get'>;

/**
 * The SQL side of catch-up (glossary: Catch-up): the baselines of `lineage_catchup`, the branch a
 * run belongs to, and the tally's board entries (live branches, their abstracts and intents,
 * landings), read from a project database.
 */
export class SqlCatchUp implements CatchUpReads {
	constructor(
		private readonly db: DurableDatabase,
		private readonly query: Query = db,
	) {}

	/** The same reads inside a transaction of the caller's. */
	within(tx: WriteTransaction): SqlCatchUp {
		return new SqlCatchUp(this.db, tx);
	}

	saved(node: string, ref: string): SavedCatchUp | undefined {
		const row = this.query.get<{ baseline: string; section: string }>(
			'SELECT baseline, section FROM lineage_catchup WHERE node = ? AND ref = ?',
			[node, ref],
		);
		return row ? readSavedCatchUp(row.section, row.baseline, `${node} on ${ref}`) : undefined;
	}

	started(node: string): boolean {
		return this.query.get('SELECT 1 AS one FROM lineage_catchup WHERE node = ? LIMIT 1', [node]) !== undefined;
	}

	/** Saves what a node's input was told of the target, in the caller's transaction (the one that pins it on the run). */
	save(tx: WriteTransaction, node: string, ref: string, saved: SavedCatchUp, at: string): void {
		tx.run(
			`INSERT INTO lineage_catchup (node, ref, baseline, section, at) VALUES (?, ?, ?, ?, ?)
			 ON CONFLICT (node, ref) DO UPDATE SET baseline = excluded.baseline, section = excluded.section, at = excluded.at`,
			[node, ref, saved.baseline, savedCatchUpJson(saved), at],
		);
	}

	authors(runs: readonly string[]): Map<string, Exclude<CommitAuthor, { kind: 'outside' }>> {
		const found = new Map<string, Exclude<CommitAuthor, { kind: 'outside' }>>();
		for (const run of runs) {
			const row = this.query.get<{ task: string; json: string; kind: string | null }>(
				`SELECT t.object_id AS task, t.json AS json, n.kind AS kind FROM ai_objects r
				 JOIN ai_objects t ON t.object_id = r.ref_task
				 LEFT JOIN lineage_nodes n ON n.node_id = t.object_id
				 WHERE r.object_id = ? AND r.object_type = 'run'`,
				[run],
			);
			if (!row) {
				continue;
			}
			const title = titleOf(row.json);
			found.set(
				run,
				row.kind === 'branch' ? { kind: 'branch', node: row.task, title, run } : { kind: 'run', run, title },
			);
		}
		return found;
	}

	/**
	 * The branch whose run `run` is: its node (Task) and root. `ai.notFound` when there is no such
	 * run; `lineage.notBranch` when its task is not a branch of a lineage.
	 */
	branchOfRun(run: string): { node: string; root: string; title: string } {
		const row = this.query.get<{ task: string; json: string; kind: string | null; root: string | null }>(
			`SELECT t.object_id AS task, t.json AS json, n.kind AS kind, n.root AS root FROM ai_objects r
			 JOIN ai_objects t ON t.object_id = r.ref_task
			 LEFT JOIN lineage_nodes n ON n.node_id = t.object_id
			 WHERE r.object_id = ? AND r.object_type = 'run'`,
			[run],
		);
		if (!row) {
			throw new DeskError('ai.notFound', `No run ${run} in this project.`, { id: run, type: 'run' });
		}
		if (row.kind !== 'branch' || row.root === null) {
			throw new DeskError(
				'lineage.notBranch',
				`Run ${run} is not a run of a branch: its task ${row.task} was not started by a branch of a lineage, so nothing is caught up for it.`,
				{ run, task: row.task },
			);
		}
		return { node: row.task, root: row.root, title: titleOf(row.json) };
	}

	tally(root: string, node: string): TallyView {
		const tally = this.query.get<{ tally_task: string | null }>('SELECT tally_task FROM lineage_roots WHERE name = ?', [
			root,
		])?.tally_task;
		const branches = this.query.all<{ node_id: string; json: string | null }>(
			`SELECT n.node_id AS node_id, t.json AS json FROM lineage_nodes n
			 LEFT JOIN ai_objects t ON t.object_id = n.node_id
			 WHERE n.root = ? AND n.kind = 'branch' ORDER BY n.created_at, n.node_id`,
			[root],
		);
		const titles = new Map(branches.map((b) => [b.node_id, b.json === null ? b.node_id : titleOf(b.json)]));
		const board =
			tally === null || tally === undefined
				? []
				: this.query.all<BoardRow>(
						`SELECT kind, from_node, text, data, frozen, superseded_by, created_at FROM board_messages
						 WHERE node = ? AND kind IN ('intent', 'abstract', 'landed') ORDER BY seq`,
						[tally],
					);
		const ended = new Set(
			this.query
				.all<{ node: string }>(
					`SELECT DISTINCT m.node AS node FROM board_messages m JOIN lineage_nodes n ON n.node_id = m.node
					 WHERE n.root = ? AND m.kind = 'report'`,
					[root],
				)
				.map((r) => r.node),
		);
		const landed: LandedEntry[] = [];
		const intents = new Map<string, string>();
		const abstracts = new Map<string, string>();
		for (const row of board) {
			const data = dataOf(row.data);
			const branch = branchOf(row, data);
			if (row.kind === 'landed') {
				if (branch !== undefined) {
					ended.add(branch);
				}
				landed.push({
					...(branch !== undefined ? { node: branch } : {}),
					title: (branch !== undefined ? titles.get(branch) : undefined) ?? 'a branch',
					text: typeof data.abstract === 'string' && data.abstract !== '' ? data.abstract : row.text,
					...(typeof data.commit === 'string' ? { commit: data.commit } : {}),
					...(typeof data.version === 'number' ? { version: data.version } : {}),
					...(typeof data.subject === 'string' ? { subject: data.subject } : {}),
					at: row.created_at,
				});
			} else if (branch !== undefined && row.kind === 'intent') {
				intents.set(branch, row.text);
			} else if (branch !== undefined && row.kind === 'abstract' && row.frozen === 0 && row.superseded_by === null) {
				// The liquid one: a landing froze the others, and a newer one supersedes the older.
				abstracts.set(branch, row.text);
			}
		}
		const live: LiveBranch[] = branches
			.filter((b) => b.node_id !== node && !ended.has(b.node_id))
			.map((b) => ({
				node: b.node_id,
				title: titles.get(b.node_id)!,
				...(abstracts.has(b.node_id) ? { abstract: abstracts.get(b.node_id)! } : {}),
				...(intents.has(b.node_id) ? { intent: intents.get(b.node_id)! } : {}),
			}));
		return { live, landed: landed.reverse() };
	}
}

interface BoardRow {
	kind: string;
	from_node: string | null;
	text: string;
	data: string | null;
	frozen: number;
	superseded_by: string | null;
	created_at: string;
}

/** The branch a tally entry is about: named in its data (`branch`), else the node it came from. */
function branchOf(row: BoardRow, data: Record<string, unknown>): string | undefined {
	const named = data.branch ?? data.node;
	return typeof named === 'string' ? named : (row.from_node ?? undefined);
}

/** A board entry's facts; an entry whose data is not a JSON object has none (its text still counts). */
function dataOf(text: string | null): Record<string, unknown> {
	if (text === null) {
		return {};
	}
	try {
		const value = JSON.parse(text) as unknown;
		return value !== null && typeof value === 'object' && !Array.isArray(value)
			? (value as Record<string, unknown>)
			: {};
	} catch {
		return {};
	}
}

function titleOf(taskJson: string): string {
	try {
		const title = (JSON.parse(taskJson) as { title?: unknown }).title;
		return typeof title === 'string' && title !== '' ? title : 'untitled task';
	} catch {
		return 'untitled task';
	}
}
