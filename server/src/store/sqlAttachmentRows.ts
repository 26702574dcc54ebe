import type { AttachmentAudit, AttachmentRows, TaskAttachments } from '../attachments/ports';
import type { AttachmentRow } from '../attachments/types';
import { recordAnswer, type ClientRequest } from './clientRequests';
import type { DurableDatabase } from './durableDatabase';

const auditColumns = 'attachment_id, task_id, name, action, actor, via, at';

/** The SQL adapter of `AttachmentRows`: the project database's `attachments`, `attachment_audit` and `project_journal`. */
export class SqlAttachmentRows implements AttachmentRows {
	constructor(private readonly db: DurableDatabase) {}

	get trackingSince(): number {
		return this.db.trackingSince;
	}

	insert(row: AttachmentRow, request?: ClientRequest): void {
		this.db.write((tx) => {
			tx.run(
				'INSERT INTO attachments (id, task_id, name, size, sha256, media_type, source, run_id, note, added_by, created_at, unavailable) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
				[
					row.id,
					row.task_id,
					row.name,
					row.size,
					row.sha256,
					row.media_type,
					row.source,
					row.run_id,
					row.note,
					row.added_by,
					row.created_at,
					row.unavailable,
				],
			);
			recordAnswer(tx, request, row, row.created_at);
		});
	}

	ingestedBefore(taskId: string, runId: string, name: string, sha256: string): string | undefined {
		return this.db.get<{ id: string }>(
			"SELECT id FROM attachments WHERE task_id = ? AND run_id = ? AND name = ? AND sha256 = ? AND source = 'run'",
			[taskId, runId, name, sha256],
		)?.id;
	}

	list(taskId?: string): AttachmentRow[] {
		return taskId === undefined
			? this.db.all<AttachmentRow>('SELECT * FROM attachments ORDER BY created_at, id')
			: this.db.all<AttachmentRow>('SELECT * FROM attachments WHERE task_id = ? ORDER BY created_at, id', [taskId]);
	}

	ids(): Set<string> {
		return new Set(this.db.all<{ id: string }>('SELECT id FROM attachments').map((r) => r.id));
	}

	tasks(): TaskAttachments[] {
		return this.db.all<TaskAttachments>(
			'SELECT task_id, COUNT(*) AS count, COALESCE(SUM(size), 0) AS bytes FROM attachments GROUP BY task_id ORDER BY MAX(created_at) DESC',
		);
	}

	usage(taskId: string): { taskFiles: number; taskBytes: number; projectBytes: number } {
		const task = this.db.get<{ files: number; bytes: number }>(
			'SELECT COUNT(*) AS files, COALESCE(SUM(size), 0) AS bytes FROM attachments WHERE task_id = ? AND unavailable IS NULL',
			[taskId],
		) ?? { files: 0, bytes: 0 };
		const project = this.db.get<{ bytes: number }>(
			'SELECT COALESCE(SUM(size), 0) AS bytes FROM attachments WHERE unavailable IS NULL',
		) ?? { bytes: 0 };
		return { taskFiles: task.files, taskBytes: task.bytes, projectBytes: project.bytes };
	}

	remove(row: AttachmentRow, audit: { actor: string; via: string; at: string; line: string }): void {
		this.db.write((tx) => {
			tx.run('DELETE FROM attachments WHERE id = ?', [row.id]);
			tx.run(`INSERT INTO attachment_audit (${auditColumns}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
				row.id,
				row.task_id,
				row.name,
				'delete',
				audit.actor,
				audit.via,
				audit.at,
			]);
			tx.run('INSERT INTO project_journal (at, task_id, kind, line) VALUES (?, ?, ?, ?)', [
				audit.at,
				row.task_id,
				'delete',
				audit.line,
			]);
		});
	}

	audit(taskId?: string): AttachmentAudit[] {
		return taskId === undefined
			? this.db.all<AttachmentAudit>(`SELECT ${auditColumns} FROM attachment_audit ORDER BY seq DESC`)
			: this.db.all<AttachmentAudit>(
					`SELECT ${auditColumns} FROM attachment_audit WHERE task_id = ? ORDER BY seq DESC`,
					[taskId],
				);
	}

	journal(at: string, taskId: string, kind: string, line: string): void {
		this.db.write((tx) =>
			tx.run('INSERT INTO project_journal (at, task_id, kind, line) VALUES (?, ?, ?, ?)', [at, taskId, kind, line]),
		);
	}

	journalLines(taskId?: string): string[] {
		return (
			taskId === undefined
				? this.db.all<{ line: string }>('SELECT line FROM project_journal ORDER BY seq')
				: this.db.all<{ line: string }>('SELECT line FROM project_journal WHERE task_id = ? ORDER BY seq', [taskId])
		).map((r) => r.line);
	}
}
