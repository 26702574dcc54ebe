/** Attachments as the protocol and the CLI show them (glossary: Attachment): a task's files and what an ingest did. */

export type AttachmentSource = 'run' | 'hand' | 'remote';

export interface AttachmentRow {
	/** 128 random bits in hex: the file's name in the store. Nothing a run chose names a file on disk. */
	id: string;
	task_id: string;
	/** The cleaned name: a label only. */
	name: string;
	size: number;
	sha256: string;
	media_type: string;
	source: AttachmentSource;
	run_id: string | null;
	note: string;
	added_by: string;
	created_at: string;
	/** Why the bytes are not in this store (a remote run's file its result had no room for); null when they are. */
	unavailable: string | null;
}

export interface Refusal {
	name: string;
	reason: string;
}

/** What one ingest did: attached, refused (and removed from the outbox), kept for the next ingest. */
export interface IngestReport {
	added: AttachmentRow[];
	refused: Refusal[];
	kept: Refusal[];
	/** Files attached by an earlier ingest of the same run (after a crash): removed, not attached again. */
	already: string[];
}

/** What the store needs to know of the task an outbox belongs to. */
export interface OutboxTask {
	/** Done, failed or cancelled: no attempt of it will come. */
	ended: boolean;
	/** Its last run, which what its outbox still holds is attributed to. */
	lastRun?: string;
	/**
	 * The values of the secrets its runs' agents were given, scrubbed from what its outbox still holds
	 * (as each attempt's own ingest scrubs them): known again from the runs' settings, never stored.
	 */
	secrets?: readonly string[];
}

/** What tidying the outboxes at start-up did, by task id. */
export interface OutboxTidy {
	/** Outboxes of tasks the project does not hold: removed with what they held. */
	removed: string[];
	/** Outboxes of ended tasks: emptied into the store and removed. */
	ended: string[];
	/** Outboxes of ended tasks that still keep a file an ingest could not take (a full disk): tried again at the next start-up. */
	kept: string[];
	/** Outboxes of tasks the project does not hold, unchanged since before its database's tracking start: left alone. */
	notVouched: string[];
}
