import type { ClientRequest } from '../store/clientRequests';
import type { AttachmentRow } from './types';

/**
 * What the attachment store needs from the project database: its rows (`attachments`), the audit
 * of deletions (`attachment_audit`) and the project's journal lines. The SQL adapter is
 * `store/sqlAttachmentRows.ts`; the files themselves stay in the store folder (see attachmentStore.ts).
 */
export interface AttachmentRows {
	/** When the database began recording (ms): a file older than that may predate it, so no row naming it proves nothing. */
	readonly trackingSince: number;
	/** Records a row, and the answer to the client's request id with it in the same transaction (throws when the id was answered meanwhile). */
	insert(row: AttachmentRow, request?: ClientRequest): void;
	/** The id of a file a run's earlier ingest attached under the same name and digest, if any. */
	ingestedBefore(taskId: string, runId: string, name: string, sha256: string): string | undefined;
	/** The task's rows, oldest first (all tasks' when no task is named). */
	list(taskId?: string): AttachmentRow[];
	/** Every row's id. */
	ids(): Set<string>;
	/** Tasks with attachments: count and total size of each, the one attached to last first. */
	tasks(): TaskAttachments[];
	/** What the files in the store come to: the task's count and bytes, and the project's bytes (rows whose bytes are elsewhere not counted). */
	usage(taskId: string): { taskFiles: number; taskBytes: number; projectBytes: number };
	/** Removes a row with its audit row and journal line, in one transaction. */
	remove(row: AttachmentRow, audit: { actor: string; via: string; at: string; line: string }): void;
	/** The audit rows of deletions, newest first. */
	audit(taskId?: string): AttachmentAudit[];
	/** Adds a line to the project's journal. */
	journal(at: string, taskId: string, kind: string, line: string): void;
	/** Journal lines of the project, oldest first. */
	journalLines(taskId?: string): string[];
}

export interface TaskAttachments {
	task_id: string;
	count: number;
	bytes: number;
}

export interface AttachmentAudit {
	attachment_id: string;
	task_id: string;
	name: string;
	action: string;
	actor: string;
	via: string;
	at: string;
}
