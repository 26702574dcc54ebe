/**
 * Project memory on disk (glossary: Project memory): `<repo>/.desk-memory/<root>.json` is the only
 * copy of a root's memories. Every change is a batch queued in the project database
 * (`memory_queue`, so every window and the command line share one queue and a batch survives a
 * reload), then applied by whichever process drains the root first, under the root's lock
 * (`.desk/memory-locks/<root>.lock`, O_EXCL with stale takeover): the file is read again, a request
 * already in its `requests` is skipped, the batches are applied to a copy and validated whole, the
 * result replaces the file by one durable rename (with the requests' receipts in it), and only then
 * are the queue rows deleted. A crash before the rename leaves the old file and the rows (applied
 * by the next drain); one after it leaves the receipts (the next drain skips them).
 *
 * A file that cannot be read as memory is never replaced by an empty one: a write finding it
 * damaged moves it aside as `<root>.json.corrupt-<time>` and says so.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeskError, describeError, isDeskError } from '../core/errors';
import { noFaults, type Faults } from '../core/faults';
import type { Logger } from '../core/logger';
import {
	applyMemoryBatch,
	memoriesNewestFirst,
	memoryFileName,
	memoryFolderName,
	parseMemoryFile,
	serializeMemoryFile,
	type MemoryBatch,
} from '../lineage/memory';
import type { LineageRoot, MemoryFile, MemoryRequestReceipt, MemoryView } from '../lineage/types';
import { quarantine, tempPrefix, writeFileDurably } from './durableFile';
import type { SqlMemory } from './sqlMemory';
import { StoreLock } from './storeLock';

/** What memory reads of the repository's HEAD, through the desk's own git reader (no git program). */
export interface MemoryGit {
	/** HEAD's bytes at `rel`; undefined when there is no HEAD or no such file in it. */
	headFile(rel: string): Uint8Array | undefined;
	/** HEAD's blob ids of `paths` (a path not in HEAD is absent from the map). */
	headBlobs(paths: readonly string[]): Map<string, string>;
}

/** What a batch came to: its receipt's result, or why it was refused. */
export type BatchOutcome =
	{ ok: true; result: MemoryRequestReceipt['result']; replayed: boolean } | { ok: false; error: DeskError };

/** The largest memory file read: four times what a valid one may be (a larger one is damaged). */
const maxReadBytes = 1024 * 1024;

export class ProjectMemory {
	private readonly locks = new Map<string, StoreLock>();
	/** The sha256 of each root's file as last written or told, so a watcher event for our own write tells nobody twice. */
	private readonly seen = new Map<string, string>();
	private watchers: fs.FSWatcher[] = [];
	private watchTimer: NodeJS.Timeout | undefined;

	constructor(
		/** The repository's top: the folder is `<top>/.desk-memory`. */
		readonly top: string,
		readonly sql: SqlMemory,
		private readonly options: {
			/** Where the roots' lock files are (`<top>/.desk/memory-locks`). */
			locksFolder: string;
			git: MemoryGit;
			logger: Logger;
			faults?: Faults;
			/** How long a drain waits for another process's (`memory.locked` after). */
			lockTimeoutMs?: number;
			/** Told after a batch changed a root's file, and when the file changed on disk (watch()). */
			changed?: (root: string) => void;
			now?: () => Date;
		},
	) {}

	get folder(): string {
		return path.join(this.top, memoryFolderName);
	}

	/** The file of `root`, relative to the repository (as git and the Memory view name it). */
	relativePath(root: string): string {
		return `${memoryFolderName}/${memoryFileName(root)}`;
	}

	filePath(root: string): string {
		return path.join(this.folder, memoryFileName(root));
	}

	private get faults(): Faults {
		return this.options.faults ?? noFaults;
	}

	private now(): Date {
		return this.options.now?.() ?? new Date();
	}

	/**
	 * `.desk-memory` as a folder of the repository's own, or undefined when it is not there (made
	 * when `create`). A link in its place (a repository can commit one) would have the desk write
	 * wherever it leads: refused with `project.unsafeDataFolder`, nothing followed.
	 */
	private checkedFolder(create: boolean): string | undefined {
		const folder = this.folder;
		let stat = fs.lstatSync(folder, { throwIfNoEntry: false });
		if (stat === undefined) {
			if (!create) {
				return undefined;
			}
			try {
				fs.mkdirSync(folder, { mode: 0o755 });
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
					throw new DeskError('store.io', `Could not make ${folder}: ${(error as Error).message}`, { file: folder });
				}
			}
			stat = fs.lstatSync(folder);
		}
		if (!stat.isDirectory()) {
			throw new DeskError(
				'project.unsafeDataFolder',
				`${folder} is ${stat.isSymbolicLink() ? 'a link' : 'not a folder'}, not the desk's memory folder; the desk does not follow it. Remove it and try again.`,
				{ path: folder, found: stat.isSymbolicLink() ? 'a link' : 'not a folder' },
			);
		}
		return folder;
	}

	/** The file's bytes, or undefined when there is none. Never through a link. */
	readText(root: string): string | undefined {
		if (this.checkedFolder(false) === undefined) {
			return undefined;
		}
		const file = this.filePath(root);
		let fd: number;
		try {
			fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code === 'ENOENT') {
				return undefined;
			}
			if (code === 'ELOOP') {
				throw new DeskError('memory.corrupt', `${file} is a link, not a memory file; the desk does not follow it.`, {
					file,
					problem: 'a link',
				});
			}
			throw new DeskError('store.io', `Could not read ${file}: ${(error as Error).message}`, { file });
		}
		try {
			const stat = fs.fstatSync(fd);
			if (!stat.isFile()) {
				throw new DeskError('memory.corrupt', `${file} is not a file.`, { file, problem: 'not a file' });
			}
			if (stat.size > maxReadBytes) {
				throw new DeskError('memory.corrupt', `${file} is ${stat.size} bytes, far over what a memory file may be.`, {
					file,
					problem: 'too large',
				});
			}
			return fs.readFileSync(fd, 'utf8');
		} finally {
			fs.closeSync(fd);
		}
	}

	/** The root's memory as its file holds it now (undefined: no file). `memory.corrupt`, `memory.unknownFormat` name the file. */
	read(root: string): MemoryFile | undefined {
		const text = this.readText(root);
		return text === undefined ? undefined : this.parse(root, text);
	}

	private parse(root: string, text: string): MemoryFile {
		try {
			return parseMemoryFile(text, root);
		} catch (error) {
			if (isDeskError(error)) {
				throw new DeskError(error.code, error.message, { ...error.data, root, file: this.relativePath(root) });
			}
			throw error;
		}
	}

	/** HEAD's blob ids of `paths` (what a memory's evidence records). */
	headBlobs(paths: readonly string[]): Map<string, string> {
		return this.options.git.headBlobs(paths);
	}

	/** Batches queued for `root` and not yet applied. */
	pending(root: string): number {
		return this.sql.pending(root);
	}

	/**
	 * Applies `batch` once: a request the file answered already returns its stored result
	 * (`replayed`); a batch refused against the file as it is now (`memory.badBatch`,
	 * `memory.notFound`) is refused before it is queued; else it is queued and the root drained.
	 */
	submit(batch: MemoryBatch): { result: MemoryRequestReceipt['result']; replayed: boolean } {
		const current = this.readForWrite(batch.root);
		// Refused now when it cannot apply: a queued batch that fails later would fail in silence.
		const checked = applyMemoryBatch(current, batch);
		if (checked.conflict) {
			throw reused(batch);
		}
		if (checked.replayed) {
			return { result: checked.result, replayed: true };
		}
		this.sql.enqueue(batch, this.now().toISOString());
		let outcome: BatchOutcome | undefined;
		try {
			outcome = this.drain(batch.root).get(batch.request);
		} catch (error) {
			if (isDeskError(error, 'memory.locked')) {
				// The batch stays queued: the next drain (any process's, or this one's next start) applies it.
				throw new DeskError(
					'memory.locked',
					`${error.message} The change is queued and is applied once the lock is free; the same request again answers it.`,
					{ ...error.data, queued: true, request: batch.request },
				);
			}
			throw error;
		}
		if (outcome) {
			if (!outcome.ok) {
				throw outcome.error;
			}
			return { result: outcome.result, replayed: outcome.replayed };
		}
		// Another process drained it first: its receipt is in the file.
		const stored = this.read(batch.root)?.requests[batch.request];
		if (stored) {
			return { result: stored.result, replayed: false };
		}
		throw new DeskError(
			'memory.badBatch',
			`The memory change ${batch.request} was refused when another desk process applied the queue; the file is unchanged by it.`,
			{ request: batch.request, root: batch.root },
		);
	}

	/**
	 * The file read for a change: a damaged one is moved aside (`<root>.json.corrupt-<time>`) under
	 * the root's lock, and `memory.corrupt` names where it went; another format is refused as it is.
	 */
	private readForWrite(root: string): MemoryFile | undefined {
		try {
			return this.read(root);
		} catch (error) {
			if (!isDeskError(error, 'memory.corrupt')) {
				throw error;
			}
			return this.withLock(root, () => this.readOrSetAside(root));
		}
	}

	/** Under the lock: the file, or (damaged) moved aside and refused. */
	private readOrSetAside(root: string): MemoryFile | undefined {
		try {
			return this.read(root);
		} catch (error) {
			if (!isDeskError(error, 'memory.corrupt') || error.data.problem === 'a link') {
				throw error;
			}
			const kept = quarantine(this.filePath(root), this.now());
			this.options.logger.error(`${this.filePath(root)} is damaged (${String(error.data.problem)}); kept as ${kept}`);
			throw new DeskError(
				'memory.corrupt',
				`The memory file of ${root} was damaged (${String(error.data.problem)}); it is kept as ${path.basename(kept)} beside it and nothing was written. Repair it and put it back, or remember again into a new file.`,
				{ ...error.data, keptAs: path.relative(this.top, kept) },
			);
		}
	}

	private withLock<T>(root: string, body: () => T): T {
		let lock = this.locks.get(root);
		if (!lock) {
			fs.mkdirSync(this.options.locksFolder, { recursive: true, mode: 0o700 });
			lock = new StoreLock(path.join(this.options.locksFolder, `${root}.lock`), this.options.lockTimeoutMs ?? 10_000);
			this.locks.set(root, lock);
		}
		try {
			return lock.withLock(body);
		} catch (error) {
			if (isDeskError(error, 'store.locked')) {
				throw new DeskError(
					'memory.locked',
					`The memory of ${root} is being written by another desk process (${String(error.data.pid ?? '?')}); try again.`,
					{ root, pid: error.data.pid },
				);
			}
			throw error;
		}
	}

	/**
	 * Applies the batches queued for `root`, under its lock: each request once, refused ones dropped
	 * from the queue with their reason, one durable rename for all, then the rows deleted. Returns
	 * what each request it saw came to.
	 */
	drain(root: string): Map<string, BatchOutcome> {
		const outcomes = new Map<string, BatchOutcome>();
		if (this.sql.pending(root) === 0) {
			return outcomes;
		}
		let changed = false;
		this.withLock(root, () => {
			const rows = this.sql.queued(root);
			if (rows.length === 0) {
				return;
			}
			this.removeTempFiles(root);
			let file: MemoryFile | undefined;
			try {
				file = this.readOrSetAside(root);
			} catch (error) {
				if (!isDeskError(error)) {
					throw error;
				}
				// Nothing can apply to a damaged file or one of another format: every waiting batch is refused.
				for (const row of rows) {
					outcomes.set(row.request, { ok: false, error });
				}
				this.sql.remove(rows.map((r) => r.seq));
				return;
			}
			const before = file;
			for (const row of rows) {
				try {
					const applied = applyMemoryBatch(file, row.batch);
					if (applied.conflict) {
						throw reused(row.batch);
					}
					file = applied.file;
					outcomes.set(row.request, { ok: true, result: applied.result, replayed: applied.replayed });
				} catch (error) {
					if (!isDeskError(error)) {
						throw error;
					}
					outcomes.set(row.request, { ok: false, error });
					this.options.logger.warn(`memory of ${root}: ${row.request} refused: ${error.message}`);
				}
			}
			if (file !== undefined && file !== before) {
				this.checkedFolder(true);
				const text = serializeMemoryFile(file);
				writeFileDurably(this.filePath(root), Buffer.from(text, 'utf8'), () =>
					this.faults.point('memory.beforeRename'),
				);
				this.seen.set(root, sha256(text));
				changed = true;
				this.faults.point('memory.afterRename.beforeQueueDelete');
			}
			this.sql.remove(rows.map((r) => r.seq));
		});
		if (changed) {
			this.options.changed?.(root);
		}
		return outcomes;
	}

	/**
	 * At start: temp files a killed write left are removed and every root's queue drained (a
	 * refused batch is logged: its caller is gone).
	 */
	drainAll(): void {
		for (const root of this.sql.queuedRoots()) {
			try {
				for (const [request, outcome] of this.drain(root)) {
					if (!outcome.ok) {
						this.options.logger.warn(`memory of ${root}: queued ${request} refused: ${outcome.error.message}`);
					}
				}
			} catch (error) {
				this.options.logger.warn(`memory of ${root}: the queue was not drained: ${describeError(error)}`);
			}
		}
		for (const root of this.tempFileRoots()) {
			try {
				this.withLock(root, () => this.removeTempFiles(root));
			} catch (error) {
				this.options.logger.warn(`memory of ${root}: temp files not removed: ${describeError(error)}`);
			}
		}
	}

	/** Roots with temp files in the folder. */
	private tempFileRoots(): string[] {
		const roots = new Set<string>();
		for (const name of this.folderNames()) {
			const match = new RegExp(`^${escapeRegExp(tempPrefix)}(.+)\\.json-[0-9a-f]+$`).exec(name);
			if (match) {
				roots.add(match[1]!);
			}
		}
		return [...roots];
	}

	private folderNames(): string[] {
		try {
			return this.checkedFolder(false) === undefined ? [] : fs.readdirSync(this.folder);
		} catch {
			return [];
		}
	}

	/**
	 * Removes the temp files of `root`'s writes: under its lock no write of it is under way in any
	 * process, so each is one a killed writer left.
	 */
	private removeTempFiles(root: string): void {
		const prefix = `${tempPrefix}${memoryFileName(root)}-`;
		for (const name of this.folderNames()) {
			if (name.startsWith(prefix)) {
				const file = path.join(this.folder, name);
				try {
					if (fs.lstatSync(file).isFile()) {
						fs.rmSync(file, { force: true });
					}
				} catch {
					// Gone already.
				}
			}
		}
	}

	/**
	 * The Memory view's data: the file's memories newest first, whether it differs from HEAD's
	 * (uncommitted), and for each memory the cited files whose blob in HEAD is not the one recorded
	 * (evidence changed). `memory.corrupt`, `memory.unknownFormat` when the file cannot be read.
	 */
	view(root: string): MemoryView {
		const text = this.readText(root);
		const file = text === undefined ? undefined : this.parse(root, text);
		const uncommitted = this.uncommitted(root, text);
		const memories = file ? memoriesNewestFirst(file) : [];
		const changed = this.changedEvidence(memories.map(([, m]) => m));
		return {
			root,
			path: this.relativePath(root),
			exists: text !== undefined,
			uncommitted,
			memories: memories.map(([id, memory]) => ({
				id,
				memory,
				evidence_changed: (memory.evidence ?? [])
					.filter((e) => e.blob !== undefined && changed.get(e.path) !== e.blob)
					.map((e) => e.path),
			})),
			pending: this.sql.pending(root),
		};
	}

	/** Whether the file (`text`, undefined: none) differs from HEAD's. */
	private uncommitted(root: string, text: string | undefined): boolean {
		const head = this.options.git.headFile(this.relativePath(root));
		return text === undefined
			? head !== undefined
			: head === undefined || Buffer.compare(Buffer.from(text), head) !== 0;
	}

	/** A root's memory file as the Roots view counts it; a damaged one says why, never throws. */
	status(root: string): LineageRoot['memory'] {
		let text: string | undefined;
		try {
			text = this.readText(root);
			const file = text === undefined ? undefined : this.parse(root, text);
			return {
				exists: text !== undefined,
				memories: file ? Object.keys(file.memories).length : 0,
				uncommitted: this.uncommitted(root, text),
			};
		} catch (error) {
			return {
				exists: text !== undefined,
				memories: 0,
				uncommitted: text !== undefined,
				corrupt: error instanceof Error ? error.message : String(error),
			};
		}
	}

	private changedEvidence(memories: ReadonlyArray<MemoryFile['memories'][string]>): Map<string, string> {
		const paths = new Set<string>();
		for (const memory of memories) {
			for (const e of memory.evidence ?? []) {
				paths.add(e.path);
			}
		}
		return paths.size === 0 ? new Map() : this.options.git.headBlobs([...paths]);
	}

	/**
	 * Tells `changed` when a root's file changes on disk by another hand (a `git pull`, an edit, another
	 * process): watches the repository's top for the folder and the folder for its files.
	 */
	watch(): void {
		if (this.watchers.length > 0) {
			return;
		}
		const schedule = () => {
			clearTimeout(this.watchTimer);
			this.watchTimer = setTimeout(() => this.lookAgain(), 150);
			this.watchTimer.unref();
		};
		const watchFolder = () => {
			if (this.watchers.length > 1 || this.checkedFolderQuietly() === undefined) {
				return;
			}
			try {
				const watcher = fs.watch(this.folder, { persistent: false }, schedule);
				watcher.on('error', () => watcher.close());
				this.watchers.push(watcher);
			} catch {
				// Not there after all: the top's watcher tries again when it appears.
			}
		};
		try {
			const top = fs.watch(this.top, { persistent: false }, (_event, name) => {
				if (name === null || String(name) === memoryFolderName) {
					watchFolder();
					schedule();
				}
			});
			top.on('error', () => top.close());
			this.watchers.push(top);
		} catch (error) {
			this.options.logger.warn(`not watching ${this.folder}: ${(error as Error).message}`);
			return;
		}
		watchFolder();
		this.lookAgain(false);
	}

	private checkedFolderQuietly(): string | undefined {
		try {
			return this.checkedFolder(false);
		} catch {
			return undefined;
		}
	}

	/** Reads each root's file and tells of those that differ from what was last seen. */
	private lookAgain(tell = true): void {
		const names = new Set(this.folderNames().filter((n) => n.endsWith('.json') && !n.startsWith('.')));
		const roots = new Set([...this.seen.keys(), ...[...names].map((n) => n.slice(0, -'.json'.length))]);
		for (const root of roots) {
			let sum: string;
			try {
				const text = names.has(memoryFileName(root)) ? this.readText(root) : undefined;
				sum = text === undefined ? 'none' : sha256(text);
			} catch {
				sum = 'unreadable';
			}
			if (this.seen.get(root) !== sum) {
				this.seen.set(root, sum);
				if (tell) {
					this.options.changed?.(root);
				}
			}
		}
	}

	close(): void {
		clearTimeout(this.watchTimer);
		for (const watcher of this.watchers) {
			watcher.close();
		}
		this.watchers = [];
	}
}

function reused(batch: MemoryBatch): DeskError {
	return new DeskError(
		'request.idReused',
		`Request ${batch.request} was used before for another memory change; a repeat must send the same params, a new change a new id.`,
		{ requestId: batch.request },
	);
}

function sha256(text: string): string {
	return createHash('sha256').update(text).digest('hex');
}

function escapeRegExp(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
