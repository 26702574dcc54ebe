import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { actor, newRun, newTask } from '../../../server/src/ai/model';
import type { Task } from '../../../server/src/ai/types';
import { AiStore } from '../../../server/src/store/aiStore';
import type { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { openTestDatabase } from '../../helpers/testDatabase';

/**
 * A project database with lineage rows written straight into the contract's tables (roots, nodes,
 * the tally's board), as the fork and the board would write them: what catch-up reads.
 */
export class LineageRows {
	readonly ai: AiStore;
	private seq = 0;

	private constructor(readonly db: DurableDatabase) {
		this.ai = new AiStore(db);
	}

	static async open(folder: string): Promise<LineageRows> {
		const db = await openTestDatabase(path.join(folder, 'project.db'), [...projectMigrations], {
			schema: projectSchema,
		});
		return new LineageRows(db);
	}

	/** A root with its tally task. */
	root(name: string): { tally: Task } {
		const tally = newTask(actor('system', 'agent-desk'), `Tally of ${name}`);
		this.ai.put([tally]);
		this.db.write((tx) => {
			tx.run(
				"INSERT INTO lineage_roots (name, about, listed_at, listed_by, tally_task) VALUES (?, '', '2026-12-02T12:00:00Z', 'test', ?)",
				[name, tally.object_id],
			);
			tx.run(
				`INSERT INTO lineage_nodes (node_id, kind, root, grant_chain, depth, config, created_at)
				 VALUES (?, 'tally', ?, '[]', 0, '{}', '2026-12-02T12:00:00Z')`,
				[tally.object_id, name],
			);
		});
		return { tally };
	}

	/** A branch of `root` (its Task and one Run), its intent on the tally's board. */
	branch(root: string, tally: Task, title: string): { node: string; run: string } {
		const task = newTask(actor('human', 'desk-user'), title);
		const run = newRun(actor('system', 'agent-desk'), task, '0'.repeat(40));
		this.ai.put([task, run]);
		this.db.write((tx) =>
			tx.run(
				`INSERT INTO lineage_nodes (node_id, kind, root, fork_of, grant_chain, depth, config, created_at)
				 VALUES (?, 'branch', ?, ?, ?, 1, '{}', ?)`,
				[
					task.object_id,
					root,
					tally.object_id,
					JSON.stringify([`branch:${task.object_id}`, `root:${root}`]),
					this.at(),
				],
			),
		);
		this.post(tally.object_id, 'intent', task.object_id, `Intent: ${title}`);
		return { node: task.object_id, run: run.object_id };
	}

	/** A run of a task that is no branch (the person's own conversation). */
	plainRun(title: string): string {
		const task = newTask(actor('human', 'desk-user'), title);
		const run = newRun(actor('system', 'agent-desk'), task, '0'.repeat(40));
		this.ai.put([task, run]);
		return run.object_id;
	}

	/** A message on `node`'s board, from `from`; returns its id. */
	post(
		node: string,
		kind: string,
		from: string | null,
		text: string,
		options: { data?: Record<string, unknown>; frozen?: boolean } = {},
	): string {
		const id = randomUUID();
		this.db.write((tx) => {
			if (kind === 'abstract' && from !== null) {
				// A new liquid abstract supersedes the branch's previous liquid one.
				tx.run(
					"UPDATE board_messages SET superseded_by = ? WHERE node = ? AND kind = 'abstract' AND from_node = ? AND frozen = 0 AND superseded_by IS NULL",
					[id, node, from],
				);
			}
			tx.run(
				`INSERT INTO board_messages (message_id, request_id, node, kind, from_node, reply_enabled, passive, frozen, text, data, created_at)
				 VALUES (?, ?, ?, ?, ?, 0, 1, ?, ?, ?, ?)`,
				[
					id,
					`test:${id}`,
					node,
					kind,
					from,
					options.frozen ? 1 : 0,
					text,
					options.data ? JSON.stringify(options.data) : null,
					this.at(),
				],
			);
		});
		return id;
	}

	/** A landing as the board records it: the branch's abstract frozen and a `landed` entry on the tally. */
	land(tally: string, branch: string, commit: string, subject: string): void {
		const abstract = this.db.get<{ text: string }>(
			"SELECT text FROM board_messages WHERE node = ? AND kind = 'abstract' AND from_node = ? AND superseded_by IS NULL",
			[tally, branch],
		);
		this.db.write((tx) =>
			tx.run(
				"UPDATE board_messages SET frozen = 1 WHERE node = ? AND kind = 'abstract' AND from_node = ? AND superseded_by IS NULL",
				[tally, branch],
			),
		);
		this.post(tally, 'landed', branch, `landed ${subject}`, {
			data: { commit, subject, touched: [], abstract: abstract?.text ?? '' },
		});
	}

	private at(): string {
		this.seq += 1;
		return new Date(Date.UTC(2026, 11, 2, 12, 0, this.seq)).toISOString();
	}
}
