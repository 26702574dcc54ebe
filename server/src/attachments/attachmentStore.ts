import { createHash, randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { DeskError, isDeskError } from '../core/errors';
import type { Logger } from '../core/logger';
import { scrubBytes } from '../core/secrets';
import type { ClientRequest } from '../store/clientRequests';
import { ConfinedDir, shownName, utf8Name, withFileAt, type OpenedFile } from '../store/confinedDir';
import { cleanComponents, cleanName, detectType, exactBytes, humanBytes, typeByName } from './names';
import type { AttachmentAudit, AttachmentRows, TaskAttachments } from './ports';
import type { AttachmentRow, AttachmentSource, IngestReport, OutboxTask, OutboxTidy } from './types';

/** Every attach is checked against all of them; a file over one is refused and named, never truncated. */
export interface AttachmentLimits {
	fileBytes: number;
	taskFiles: number;
	taskBytes: number;
	projectBytes: number;
}

export const defaultLimits: AttachmentLimits = {
	fileBytes: 32 * 1024 * 1024,
	taskFiles: 100,
	taskBytes: 128 * 1024 * 1024,
	projectBytes: 1024 * 1024 * 1024,
};

export interface AttachMeta {
	name: string;
	source: AttachmentSource;
	runId?: string;
	note?: string;
	addedBy: string;
	/** The client's request id (Attach File): its answer is the row, recorded with it. */
	request?: ClientRequest;
}

const outboxFolder = 'outbox';
const tempPrefix = 'tmp-';
const idPattern = /^[0-9a-f]{32}$/;
const taskIdPattern = /^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$/;
const envOutbox = 'DESK_TASK_ATTACHMENTS';
const envTask = 'DESK_TASK_ID';

/**
 * A project's attachments (glossary: Attachment): the files runs made for a person, kept with their task in
 * `<project>/.desk/attachments/<id>`, recorded in the project database. The store is in an agent's
 * reach (a run writes its outbox inside it), so every file is reached through {@link ConfinedDir}:
 * a link anywhere leads nowhere, and a file is read only through the descriptor that was checked.
 */
export class AttachmentStore {
	private readonly limits: AttachmentLimits;

	constructor(
		/** The rows, the audit and the journal, in the project database (`store/sqlAttachmentRows.ts`). */
		private readonly rows: AttachmentRows,
		/** `<project>/.desk/attachments` */
		readonly storeDir: string,
		private readonly logger: Logger,
		options: { limits?: Partial<AttachmentLimits> } = {},
	) {
		this.limits = { ...defaultLimits, ...options.limits };
	}

	/** The store folder, made with its `.gitignore` on first use. */
	private root(): ConfinedDir {
		const root = ConfinedDir.openMade(this.storeDir);
		if (!root.lstat('.gitignore')) {
			// A project that does not ignore .desk/ still cannot commit a run's attachments by accident.
			this.writeInto(root, '.gitignore', Buffer.from('# Agent Desk attachments: never committed.\n*\n'));
		}
		return root;
	}

	/** OutboxDir: where a task's run puts files for the person. */
	outboxDir(taskId: string): string {
		checkTaskId(taskId);
		return path.join(this.storeDir, outboxFolder, taskId);
	}

	/** PrepareOutbox: the task's outbox exists (empty or not); its absolute path. */
	prepareOutbox(taskId: string): string {
		const root = this.root();
		try {
			root.child(outboxFolder, true)!.child(checkTaskId(taskId), true)!.close();
		} finally {
			root.close();
		}
		return this.outboxDir(taskId);
	}

	/** Env: what an agent working on the task is given. */
	static env(taskId: string, outbox: string): Record<string, string> {
		return { [envOutbox]: outbox, [envTask]: taskId };
	}

	/** PromptSection: what every prompt says about the outbox. Short, since every prompt has it. */
	static promptSection(outbox: string): string {
		return `To hand the person a file that is not part of the change (a report, a chart, a screenshot, a data export), copy it into ${outbox} (also in $${envOutbox}). Every file there is attached to the task when this step ends; at most ${exactBytes(defaultLimits.fileBytes)} a file.`;
	}

	/** Outboxes: the tasks that have an outbox in the store. */
	outboxes(): string[] {
		const root = this.root();
		try {
			const outboxes = root.child(outboxFolder);
			if (!outboxes) {
				return [];
			}
			try {
				return outboxes
					.entries()
					.filter((e) => e.kind === 'dir')
					.map((e) => e.name)
					.sort();
			} finally {
				outboxes.close();
			}
		} finally {
			root.close();
		}
	}

	/** CloseOutbox: removes the task's outbox once an attempt is over, when it is empty. */
	closeOutbox(taskId: string): boolean {
		const root = this.root();
		try {
			const outboxes = root.child(outboxFolder);
			if (!outboxes) {
				return true;
			}
			try {
				return outboxes.rmdir(checkTaskId(taskId)) || !outboxes.lstat(taskId);
			} finally {
				outboxes.close();
			}
		} finally {
			root.close();
		}
	}

	/** RemoveOutbox: the outbox and whatever is in it (links removed, never followed). */
	removeOutbox(taskId: string): void {
		const root = this.root();
		try {
			const outboxes = root.child(outboxFolder);
			if (outboxes) {
				try {
					outboxes.removeTree(checkTaskId(taskId));
				} finally {
					outboxes.close();
				}
			}
		} finally {
			root.close();
		}
	}

	/**
	 * The task has ended (done, failed, cancelled: no attempt of it will come): what its outbox still
	 * holds is ingested once more, attributed to `runId` (its last run, so a file that run's own ingest
	 * took is not attached twice), and the outbox removed (RemoveOutbox). A file kept again (a full
	 * disk) keeps the outbox, for the next start-up to try. `secrets` are scrubbed from what is taken.
	 */
	endOutbox(
		taskId: string,
		options: { runId?: string; secrets?: readonly string[]; addedBy?: string } = {},
	): IngestReport {
		const report = this.ingest(taskId, options);
		if (report.kept.length === 0) {
			this.removeOutbox(taskId);
		}
		return report;
	}

	/**
	 * At start-up, every outbox in the store (Outboxes): one whose task the project does not hold is
	 * removed with what it holds (RemoveOutbox), one of a task that has ended is emptied and removed
	 * ({@link endOutbox}, scrubbed of the task's secrets); an open task's stays for its next attempt or its end. A folder whose name
	 * is not a task id is no outbox and is left alone, and so is an outbox of an unknown task that
	 * has not changed since the database's tracking start: a database started (empty, or rebuilt
	 * after damage) after it was written cannot say its task is gone.
	 */
	tidyOutboxes(taskOf: (taskId: string) => OutboxTask | undefined): OutboxTidy {
		const tidy: OutboxTidy = { removed: [], ended: [], kept: [], notVouched: [] };
		for (const taskId of this.outboxes().filter((name) => taskIdPattern.test(name))) {
			const task = taskOf(taskId);
			if (task === undefined) {
				const changed = this.outboxChangedAt(taskId);
				if (changed !== undefined && changed <= this.rows.trackingSince) {
					tidy.notVouched.push(taskId);
					continue;
				}
				this.removeOutbox(taskId);
				tidy.removed.push(taskId);
			} else if (task.ended) {
				const report = this.endOutbox(taskId, {
					...(task.lastRun !== undefined ? { runId: task.lastRun } : {}),
					addedBy: 'run',
					secrets: task.secrets ?? [],
				});
				(report.kept.length === 0 ? tidy.ended : tidy.kept).push(taskId);
			}
		}
		return tidy;
	}

	/** When the outbox folder last changed (an entry made or removed in it), in ms; undefined when it is not there. */
	private outboxChangedAt(taskId: string): number | undefined {
		const root = this.root();
		try {
			const outboxes = root.child(outboxFolder);
			try {
				return outboxes?.lstat(checkTaskId(taskId))?.mtimeMs;
			} finally {
				outboxes?.close();
			}
		} finally {
			root.close();
		}
	}

	/**
	 * Ingest: every regular file at any depth of the task's outbox is attached under its path there;
	 * links, devices, FIFOs, sockets and hard links to files elsewhere are named in the report,
	 * never followed or read. The outbox is emptied of what was handled and left in place; a file that
	 * failed for a reason that may pass (a full disk, a locked database) stays for the next ingest.
	 * A missing outbox is an empty report. Run twice, or again after a crash, each file is attached once.
	 */
	ingest(
		taskId: string,
		options: { runId?: string; secrets?: readonly string[]; addedBy?: string } = {},
	): IngestReport {
		checkTaskId(taskId);
		const report: IngestReport = { added: [], refused: [], kept: [], already: [] };
		const root = this.root();
		try {
			const outboxes = root.child(outboxFolder);
			const outbox = outboxes?.child(taskId);
			outboxes?.close();
			if (!outbox) {
				return report;
			}
			try {
				this.ingestFolder(root, outbox, [], taskId, options, report);
			} finally {
				outbox.close();
			}
		} finally {
			root.close();
		}
		if (report.added.length + report.refused.length + report.kept.length + report.already.length > 0) {
			this.journal(taskId, 'ingest', AttachmentStore.summary(taskId, report));
		}
		return report;
	}

	private ingestFolder(
		root: ConfinedDir,
		dir: ConfinedDir,
		prefix: readonly Buffer[],
		taskId: string,
		options: { runId?: string; secrets?: readonly string[]; addedBy?: string },
		report: IngestReport,
	): void {
		// Names as the bytes the file system holds: one that is not UTF-8 is reached, attached under its
		// escaped form and removed like any other (decoded, it named nothing and stayed for ever).
		for (const entry of dir.rawEntries().sort((a, b) => Buffer.compare(a.name, b.name))) {
			const rel = [...prefix, entry.name];
			const name = outboxName(rel);
			if (entry.kind === 'dir') {
				let sub: ConfinedDir | undefined;
				try {
					sub = dir.child(entry.name);
				} catch (error) {
					// Swapped for a link since it was listed: not followed.
					report.refused.push({ name, reason: describeRefusal(error) });
					dir.discard(entry.name);
					continue;
				}
				if (sub) {
					try {
						this.ingestFolder(root, sub, rel, taskId, options, report);
					} finally {
						sub.close();
					}
					dir.rmdir(entry.name);
				}
				continue;
			}
			if (entry.kind !== 'file') {
				report.refused.push({ name, reason: kindReason[entry.kind] ?? 'not a regular file: not read' });
				dir.discard(entry.name);
				continue;
			}
			let outcome: 'added' | 'refused' | 'kept' | 'already';
			try {
				outcome = this.ingestFile(root, dir, entry.name, name, taskId, options, report);
			} catch (error) {
				if (!mayPass(error)) {
					throw error;
				}
				report.kept.push({ name, reason: describeRefusal(error) });
				outcome = 'kept';
			}
			if (outcome !== 'kept') {
				dir.discard(entry.name);
			}
		}
	}

	private ingestFile(
		root: ConfinedDir,
		dir: ConfinedDir,
		entryName: Buffer,
		name: string,
		taskId: string,
		options: { runId?: string; secrets?: readonly string[]; addedBy?: string },
		report: IngestReport,
	): 'added' | 'refused' | 'already' {
		// The bytes, or why the file is refused.
		let bytes: Buffer | string;
		try {
			bytes = dir.withFile(entryName, (file) => {
				if (file.stat.nlink > 1) {
					return 'a hard link to a file elsewhere: not read';
				}
				if (file.stat.size > this.limits.fileBytes) {
					return `${exactBytes(file.stat.size)} is over the ${exactBytes(this.limits.fileBytes)} limit of a file`;
				}
				const read = file.read(this.limits.fileBytes);
				return read.more
					? `it grew over the ${exactBytes(this.limits.fileBytes)} limit of a file while it was read`
					: read.bytes;
			});
		} catch (error) {
			if (isDeskError(error, 'attachment.notRegular') || isDeskError(error, 'attachment.unavailable')) {
				report.refused.push({ name, reason: describeRefusal(error) });
				return 'refused';
			}
			throw error;
		}
		if (typeof bytes === 'string') {
			report.refused.push({ name, reason: bytes });
			return 'refused';
		}
		const stored = options.secrets?.length ? scrubBytes(bytes, options.secrets) : bytes;
		const sha256 = createHash('sha256').update(stored).digest('hex');
		if (options.runId !== undefined) {
			if (this.rows.ingestedBefore(taskId, options.runId, name, sha256) !== undefined) {
				report.already.push(name);
				return 'already';
			}
		}
		const room = this.room(taskId, stored.length);
		if (room) {
			report.refused.push({ name, reason: room });
			return 'refused';
		}
		report.added.push(
			this.store(root, taskId, stored, sha256, {
				name,
				source: 'run',
				...(options.runId ? { runId: options.runId } : {}),
				addedBy: options.addedBy ?? 'run',
			}),
		);
		return 'added';
	}

	/**
	 * Add: attaches the file at `file` by hand, or by a run's agent (`runId`: its desk tool `attach`,
	 * which, like the outbox, never reads a hard link to a file elsewhere); refused when it is not a
	 * regular file or there is no room.
	 */
	add(
		taskId: string,
		file: string,
		meta: {
			name?: string;
			note?: string;
			addedBy: string;
			runId?: string;
			request?: ClientRequest;
			/** Scrubbed from the bytes on the way in, as a run's outbox is (its agent's secret environment). */
			secrets?: readonly string[];
			/** Opens `file` as its caller confines it (an agent's, from its run's folder with no link on the way); by its path otherwise. */
			open?: <T>(body: (opened: OpenedFile) => T) => T;
		},
	): AttachmentRow {
		checkTaskId(taskId);
		const read = (opened: OpenedFile): Buffer => {
			if (!opened.stat.isFile()) {
				throw new DeskError('attachment.notRegular', `${file} is not a regular file.`, { path: file });
			}
			if (meta.runId !== undefined && opened.stat.nlink > 1) {
				throw new DeskError('attachment.notRegular', `${file} is a hard link to a file elsewhere: not read.`, {
					path: file,
				});
			}
			if (opened.stat.size > this.limits.fileBytes) {
				throw tooLarge(file, opened.stat.size, this.limits.fileBytes);
			}
			const read = opened.read(this.limits.fileBytes);
			if (read.more) {
				throw tooLarge(file, 'grew', this.limits.fileBytes);
			}
			return read.bytes;
		};
		const bytes = meta.open
			? meta.open(read)
			: withFileAt(file, read, (error) =>
					error.code === 'ELOOP'
						? new DeskError('attachment.notRegular', `${file} is a link; attach the file it points to.`, { path: file })
						: new DeskError('attachment.unavailable', `${file} cannot be read: ${error.message}`, {
								path: file,
								errno: error.code,
							}),
				);
		return this.put(
			taskId,
			{
				name: meta.name ?? path.basename(file),
				source: meta.runId === undefined ? 'hand' : 'run',
				...(meta.runId === undefined ? {} : { runId: meta.runId }),
				addedBy: meta.addedBy,
				...(meta.note ? { note: meta.note } : {}),
				...(meta.request ? { request: meta.request } : {}),
			},
			bytes,
			this.limits.fileBytes,
			meta.secrets,
		);
	}

	/**
	 * Put: stores `bytes` as a new attachment of the task. `limit` bounds the file; `secrets` are
	 * scrubbed on the way in, and the size and digest recorded are of what was stored.
	 */
	put(
		taskId: string,
		meta: AttachMeta,
		bytes: Buffer,
		limit = this.limits.fileBytes,
		secrets: readonly string[] = [],
	): AttachmentRow {
		checkTaskId(taskId);
		const name = cleanName(meta.name);
		if (bytes.length > Math.min(limit, this.limits.fileBytes)) {
			throw tooLarge(name, bytes.length, Math.min(limit, this.limits.fileBytes));
		}
		const stored = secrets.length ? scrubBytes(bytes, secrets) : bytes;
		const room = this.room(taskId, stored.length);
		if (room) {
			throw new DeskError('attachment.quota', `${name}: ${room}.`, { name, size: stored.length });
		}
		const root = this.root();
		try {
			const row = this.store(root, taskId, stored, createHash('sha256').update(stored).digest('hex'), {
				...meta,
				name,
			});
			this.journal(
				taskId,
				'attach',
				`task ${taskId}: attached ${row.name} (${humanBytes(row.size)}, ${meta.source}${meta.runId ? ` run ${meta.runId}` : ''})`,
			);
			return row;
		} finally {
			root.close();
		}
	}

	/** Record: an attachment whose bytes are not in this store, with why; size and digest as reported. */
	record(taskId: string, meta: AttachMeta, size: number, sha256: string, unavailable: string): AttachmentRow {
		checkTaskId(taskId);
		if (!/^[0-9a-f]{64}$/.test(sha256) || !Number.isSafeInteger(size) || size < 0) {
			throw new DeskError(
				'attachment.badName',
				'A recorded attachment needs its size and a sha256 digest (64 hex characters).',
				{ size, sha256 },
			);
		}
		const row = this.row(
			taskId,
			{ ...meta, name: cleanName(meta.name) },
			size,
			sha256,
			typeByName(meta.name),
			unavailable.trim() || 'not in this store',
		);
		this.rows.insert(row);
		return row;
	}

	/** The task's attachments, oldest first (all tasks' when no task is named). */
	list(taskId?: string): AttachmentRow[] {
		return this.rows.list(taskId);
	}

	/** Tasks with attachments: count and total size of each. */
	tasks(): TaskAttachments[] {
		return this.rows.tasks();
	}

	/** Room: why the task cannot take one more file of `size` bytes, or '' when it can. */
	room(taskId: string, size: number): string {
		const usage = this.rows.usage(taskId);
		const task = { files: usage.taskFiles, bytes: usage.taskBytes };
		const project = { bytes: usage.projectBytes };
		if (size > this.limits.fileBytes) {
			return `${exactBytes(size)} is over the ${exactBytes(this.limits.fileBytes)} limit of a file`;
		}
		if (task.files + 1 > this.limits.taskFiles) {
			return `the task has ${task.files} attachments, the most it may have`;
		}
		if (task.bytes + size > this.limits.taskBytes) {
			return `the task's attachments would come to ${exactBytes(task.bytes + size)}, over its ${exactBytes(this.limits.taskBytes)} limit`;
		}
		if (project.bytes + size > this.limits.projectBytes) {
			return `the project's attachments would come to ${exactBytes(project.bytes + size)}, over its ${exactBytes(this.limits.projectBytes)} limit`;
		}
		return '';
	}

	/**
	 * Open: the stored bytes of an attachment, read through the store's descriptor: a regular file,
	 * reached without a link, the same file after opening as before, of the size recorded, and
	 * (when read whole) of the digest recorded. `offset` and `maxBytes` read a part of it only, so a
	 * view can take it in pieces (and check the digest itself over the whole).
	 */
	read(row: AttachmentRow, options: { offset?: number; maxBytes?: number } = {}): Buffer {
		if (row.unavailable !== null) {
			throw new DeskError('attachment.unavailable', `${row.name} is not in the store: ${row.unavailable}.`, {
				id: row.id,
			});
		}
		if (!idPattern.test(row.id)) {
			throw new DeskError('attachment.badName', `${row.id} is not an attachment id.`, { id: row.id });
		}
		const root = this.root();
		try {
			const before = root.lstat(row.id);
			if (!before) {
				throw new DeskError('attachment.unavailable', `${row.name}: its file is missing from the store.`, {
					id: row.id,
				});
			}
			return root.withFile(row.id, ({ stat, read }) => {
				if (!before.isFile() || before.ino !== stat.ino || before.dev !== stat.dev) {
					throw new DeskError('attachment.changed', `${row.name}: the store's file was replaced while it was opened.`, {
						id: row.id,
					});
				}
				if (stat.size !== row.size) {
					throw new DeskError(
						'attachment.changed',
						`${row.name}: the stored file is ${stat.size} bytes, not the ${row.size} recorded; it was changed behind the desk's back.`,
						{ id: row.id, size: stat.size },
					);
				}
				const offset = Math.min(options.offset ?? 0, row.size);
				const limit = Math.min(options.maxBytes ?? row.size, row.size - offset);
				const { bytes } = read(limit, offset);
				if (limit === row.size && createHash('sha256').update(bytes).digest('hex') !== row.sha256) {
					throw new DeskError('attachment.changed', `${row.name}: the stored bytes do not match the digest recorded.`, {
						id: row.id,
					});
				}
				return bytes;
			});
		} finally {
			root.close();
		}
	}

	/**
	 * Delete: removes one attachment at a person's request — its row, then its file — with an audit
	 * row and a journal line naming who asked and through which surface.
	 */
	delete(taskId: string, ref: string, actor: string, via: string): AttachmentRow {
		const row = resolveAttachment(this.list(taskId), ref);
		const at = new Date().toISOString();
		this.rows.remove(row, {
			actor,
			via,
			at,
			line: `task ${taskId}: ${actor} deleted attachment ${row.name} (${row.id}) via ${via}`,
		});
		if (row.unavailable === null) {
			const root = this.root();
			try {
				root.unlink(row.id);
				root.fsync();
			} finally {
				root.close();
			}
		}
		return row;
	}

	/** The audit rows of deletions, newest first. */
	audit(taskId?: string): AttachmentAudit[] {
		return this.rows.audit(taskId);
	}

	/** Journal lines of the project, oldest first. */
	journalLines(taskId?: string): string[] {
		return this.rows.journalLines(taskId);
	}

	/**
	 * Sweep: removes what the store holds that no row names (a row deleted by something that could not
	 * remove its file, a copy abandoned half-way). Only what is older than `minAgeMs`, so a file another
	 * process stored but has not yet recorded is left alone, and only what is newer than the database's
	 * tracking start: a database started (empty, or after damage) when the files were already there
	 * cannot say they are orphans.
	 */
	sweep(minAgeMs: number, now = Date.now()): number {
		const known = this.rows.ids();
		const since = this.rows.trackingSince;
		const root = this.root();
		let removed = 0;
		try {
			for (const entry of root.entries()) {
				if (entry.name === '.gitignore' || entry.name === outboxFolder || known.has(entry.name)) {
					continue;
				}
				if (!idPattern.test(entry.name) && !entry.name.startsWith(tempPrefix)) {
					continue;
				}
				const stat = root.lstat(entry.name);
				if (!stat || now - stat.mtimeMs < minAgeMs || stat.mtimeMs <= since || stat.isDirectory()) {
					continue;
				}
				root.unlink(entry.name);
				removed += 1;
			}
		} finally {
			root.close();
		}
		if (removed > 0) {
			this.logger.info(`attachments: swept ${removed} file(s) no row names`);
		}
		return removed;
	}

	/** How many stored files no row names (after a database was started empty or rebuilt: kept, never swept). */
	unrecordedFiles(): number {
		const known = this.rows.ids();
		const root = this.root();
		try {
			return root.entries().filter((e) => idPattern.test(e.name) && !known.has(e.name)).length;
		} finally {
			root.close();
		}
	}

	/** Summary: the one line the journal records for an ingest. */
	static summary(taskId: string, report: IngestReport): string {
		const parts = [`task ${taskId}: attached ${report.added.length} file${report.added.length === 1 ? '' : 's'}`];
		if (report.added.length > 0) {
			parts[0] += ` (${humanBytes(report.added.reduce((n, r) => n + r.size, 0))})`;
		}
		// One line, however many files: the first few are named, the rest counted.
		const some = <T>(items: T[], show: (item: T) => string) =>
			`${items.slice(0, 10).map(show).join('; ')}${items.length > 10 ? `; and ${items.length - 10} more` : ''}`;
		if (report.refused.length > 0) {
			parts.push(`refused ${some(report.refused, (r) => `${r.name}: ${r.reason}`)}`);
		}
		if (report.kept.length > 0) {
			parts.push(`kept for the next ingest ${some(report.kept, (r) => r.name)}`);
		}
		if (report.already.length > 0) {
			parts.push(`${report.already.length} attached before`);
		}
		return parts.join('; ');
	}

	private store(root: ConfinedDir, taskId: string, bytes: Buffer, sha256: string, meta: AttachMeta): AttachmentRow {
		const id = randomBytes(16).toString('hex');
		this.writeInto(root, id, bytes);
		const row = this.row(taskId, meta, bytes.length, sha256, detectType(meta.name, bytes.subarray(0, 4096)), null, id);
		try {
			this.rows.insert(row, meta.request);
		} catch (error) {
			// Not recorded (or attached already under this request id): the file goes too (else Sweep takes it later).
			root.unlink(id);
			throw error;
		}
		return row;
	}

	/** Writes a new file durably under a temp name the sweep knows (made exclusively, fsynced, renamed into place, the folder fsynced). */
	private writeInto(root: ConfinedDir, name: string, bytes: Buffer): void {
		root.writeDurably(name, bytes, `${tempPrefix}${randomBytes(8).toString('hex')}`);
	}

	private row(
		taskId: string,
		meta: AttachMeta,
		size: number,
		sha256: string,
		mediaType: string,
		unavailable: string | null,
		id = randomBytes(16).toString('hex'),
	): AttachmentRow {
		return {
			id,
			task_id: taskId,
			name: meta.name,
			size,
			sha256,
			media_type: mediaType,
			source: meta.source,
			run_id: meta.runId ?? null,
			note: meta.note ?? '',
			added_by: meta.addedBy,
			created_at: new Date().toISOString(),
			unavailable,
		};
	}

	private journal(taskId: string, kind: string, line: string): void {
		this.rows.journal(new Date().toISOString(), taskId, kind, line);
	}
}

/**
 * Resolve: the attachment `ref` names among a task's rows: its full id, an id prefix of at least six
 * characters that only one has, or its exact name. More than one match is an error, never a guess.
 */
export function resolveAttachment(rows: readonly AttachmentRow[], ref: string): AttachmentRow {
	const byId = rows.find((r) => r.id === ref);
	if (byId) {
		return byId;
	}
	const matches = new Map<string, AttachmentRow>();
	if (ref.length >= 6 && /^[0-9a-f]+$/.test(ref)) {
		for (const row of rows.filter((r) => r.id.startsWith(ref))) {
			matches.set(row.id, row);
		}
	}
	for (const row of rows.filter((r) => r.name === ref)) {
		matches.set(row.id, row);
	}
	if (matches.size === 1) {
		return [...matches.values()][0]!;
	}
	if (matches.size > 1) {
		throw new DeskError(
			'attachment.ambiguous',
			`${JSON.stringify(ref)} matches ${matches.size} attachments (${[...matches.values()].map((r) => `${r.id.slice(0, 8)} ${r.name}`).join(', ')}); give more of the id.`,
			{ ref, ids: [...matches.keys()] },
		);
	}
	throw new DeskError(
		'attachment.notFound',
		`No attachment of the task is ${JSON.stringify(ref)} (an id, an id prefix of six characters or more, or an exact name).`,
		{ ref },
	);
}

/** The task id when it is one (letters, digits, `.`, `_`, `-`; no path), else `attachment.badName`. */
export function checkTaskId(taskId: string): string {
	if (!taskIdPattern.test(taskId)) {
		throw new DeskError('attachment.badName', `${JSON.stringify(taskId)} is not a task id.`, { task: taskId });
	}
	return taskId;
}

/** `size` 'grew': the file was within the limit when looked at and went over it while it was read. */
function tooLarge(name: string, size: number | 'grew', limit: number): DeskError {
	const over = `over the ${exactBytes(limit)} limit of a file`;
	return new DeskError(
		'attachment.tooLarge',
		`${name} ${size === 'grew' ? `grew ${over} while it was read` : `is ${exactBytes(size)}, ${over}`}; it is refused, not truncated.`,
		{ name, size: size === 'grew' ? limit + 1 : size, limit },
	);
}

/**
 * The name a file of an outbox is attached under, from the bytes of its path's components: a
 * component that is not UTF-8 is escaped (`\xNN` for each byte that is not, `\\` for a backslash),
 * so that distinct files keep distinct names and each can be told by its bytes.
 */
export function outboxName(components: readonly Buffer[]): string {
	return cleanComponents(
		components.flatMap((raw) => {
			const text = utf8Name(raw);
			return text === undefined ? [shownName(raw)] : text.replace(/\\/g, '/').split('/');
		}),
	);
}

const kindReason: Record<string, string> = {
	link: 'a link: not followed',
	fifo: 'a FIFO: not read',
	socket: 'a socket: not read',
	device: 'a device: not read',
	other: 'not a regular file: not read',
};

function describeRefusal(error: unknown): string {
	if (isDeskError(error, 'attachment.notRegular')) {
		return 'not a regular file (a link, or swapped for one): not followed';
	}
	if (isDeskError(error, 'attachment.unavailable')) {
		return 'it disappeared while the outbox was read';
	}
	return error instanceof Error ? error.message : String(error);
}

/** Failures that may pass by the next ingest: the file stays in the outbox. */
function mayPass(error: unknown): boolean {
	if (isDeskError(error, 'store.locked') || isDeskError(error, 'store.io')) {
		return true;
	}
	const code = (error as NodeJS.ErrnoException).code;
	return (
		code === 'ENOSPC' ||
		code === 'EIO' ||
		code === 'EAGAIN' ||
		code === 'EMFILE' ||
		code === 'ENFILE' ||
		code === 'EDQUOT'
	);
}
