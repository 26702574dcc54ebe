import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { describeError, DeskError, isDeskError } from '../core/errors';
import { silentLogger, type Logger } from '../core/logger';
import { maxBlobBytes } from '../core/inputLimits';
import { PackWriter, type PackReader } from './blobPack';
import { newPackName, PackFolder, packsToMerge } from './blobPacks';
import { fsyncFolder, removeStaleTempFiles, tempPrefix, writeAll, writeFileDurably } from './durableFile';
import { StoreLock } from './storeLock';

/**
 * Content-addressed, immutable blob storage, named by sha256 and verified against its name on
 * every read (`blob.corrupt`, never served).
 *
 * Layout 2:
 * - `packs/pack-<time>-<random>.pack`: blobs up to `packThresholdBytes` (64 KiB), many to a file,
 *   with their sorted index inside the same file (`blobPack.ts`). A batch writes one pack, `put` of
 *   a small blob a pack of one; a pack is written under a temp name, fsynced, renamed into place and
 *   its folder fsynced, so it is seen whole or not at all. When there are more than `maxPacks`,
 *   the small ones are merged into one (`consolidate`): the new pack is durable before the old ones
 *   are removed, so every blob is in some pack at every moment.
 * - `sha256/<first two hex>/<64 hex>`: larger blobs, one file each (a file wastes at most one
 *   4 KiB block, under 7% of a blob over 64 KiB), and every blob of layout 1.
 * - `tmp/<pid>-<random>/`: temp files of each process; a dead process's are removed.
 *
 * Several processes share a store. Writers never write the same file: each pack has a fresh name,
 * and a loose blob's name is its content. Consolidations take `packs.lock` (one at a time; a
 * process that finds it held skips its turn) and remove only packs whose blobs they copied and
 * verified into a pack already durable. A reader that misses lists the pack folder again, so it
 * sees packs that others added; a pack removed while a reader holds it open stays readable.
 */
export const blobLayoutVersion = 2;
/** Layouts this code reads: 1 (every blob a file of its own) is upgraded in place, losing nothing. */
const readableLayouts = [1, 2];
const hashPattern = /^[0-9a-f]{64}$/;

export interface BlobStoreOptions {
	/** Largest blob accepted, in bytes. */
	maxBlobBytes?: number;
	/** Blobs up to this size go into packs; larger ones are files of their own. */
	packThresholdBytes?: number;
	/** More packs than this are consolidated after a write. */
	maxPacks?: number;
	/** Where failures that fail no caller are reported (a consolidation that could not finish). */
	logger?: Logger;
}

/** Where a blob's bytes are: a pack (at an offset) or a file of its own (offset 0). */
export interface BlobLocation {
	file: string;
	offset: number;
	size: number;
	packed: boolean;
}

export class BlobStore {
	private readonly maxBlobBytes: number;
	/** @internal */
	readonly packThresholdBytes: number;
	private readonly maxPacks: number;
	private readonly logger: Logger;
	/** True while small blobs of an upgraded layout-1 store are still files of their own. */
	looseToPack = false;
	/** This process's temp folder, made on the first write: most processes (a `desk` query) never write. */
	private ownTempDir: string | undefined;
	private readonly packDir: string;
	private readonly packs: PackFolder;
	private readonly packLock: StoreLock;
	/** Packs that held a damaged blob when this process consolidated: left out of its next merges. */
	private readonly unmergeable = new Set<string>();

	constructor(
		readonly root: string,
		options: BlobStoreOptions = {},
	) {
		this.maxBlobBytes = options.maxBlobBytes ?? maxBlobBytes;
		this.packThresholdBytes = Math.min(options.packThresholdBytes ?? 64 * 1024, this.maxBlobBytes);
		this.maxPacks = Math.max(2, options.maxPacks ?? 16);
		this.logger = options.logger ?? silentLogger;
		this.packDir = path.join(root, 'packs');
		fs.mkdirSync(this.packDir, { recursive: true });
		this.packs = new PackFolder(this.packDir);
		this.packLock = new StoreLock(path.join(root, 'packs.lock'), 0);
		const layoutFile = path.join(root, 'layout.json');
		if (!fs.existsSync(layoutFile)) {
			writeLayout(layoutFile);
		} else {
			let saved: { layout?: unknown; looseToPack?: unknown };
			try {
				saved = JSON.parse(fs.readFileSync(layoutFile, 'utf8')) as { layout?: unknown; looseToPack?: unknown };
			} catch (error) {
				throw new DeskError(
					'store.corrupt',
					`${layoutFile} cannot be read: ${(error as Error).message}. The blobs beside it are untouched.`,
					{ file: layoutFile },
				);
			}
			const layout = saved.layout;
			if (typeof layout !== 'number' || !readableLayouts.includes(layout)) {
				throw new DeskError(
					'store.unknownSchema',
					`Blob store ${root} has layout ${String(layout)}; this Agent Desk knows ${blobLayoutVersion}.`,
					{ root, layout },
				);
			}
			if (layout < blobLayoutVersion) {
				// Layout 1's files stay where they are and are read as before; new small blobs go into
				// packs, which an Agent Desk of layout 1 cannot read, so it is told to stop here. The
				// small loose files are still to be packed (packLoose, which the desk server runs a
				// slice at a time when it is idle).
				writeLayout(layoutFile, true);
				this.looseToPack = true;
			} else {
				this.looseToPack = saved.looseToPack === true;
			}
		}
	}

	static isHash(value: unknown): value is string {
		return typeof value === 'string' && hashPattern.test(value);
	}

	/** Stores `bytes` and returns their sha256. Storing the same bytes twice is a no-op. */
	put(bytes: Uint8Array): string {
		if (bytes.length > this.maxBlobBytes) {
			throw tooLarge(bytes.length, this.maxBlobBytes);
		}
		const hash = createHash('sha256').update(bytes).digest('hex');
		if (this.has(hash)) {
			return hash;
		}
		if (bytes.length <= this.packThresholdBytes) {
			this.writePack([[hash, bytes]]);
		} else {
			this.commitTemp(hash, (fd) => writeAll(fd, bytes));
		}
		return hash;
	}

	/**
	 * Streams a file into the store without holding it in memory. The bytes hashed are the bytes
	 * written, so a file changing under us can only produce a blob that matches its own name.
	 */
	async putFile(source: string): Promise<{ hash: string; size: number }> {
		return this.putStream(fs.createReadStream(source, { highWaterMark: 1024 * 1024 }));
	}

	/** As putFile, from a stream already open (a descriptor the caller checked). */
	async putStream(input: AsyncIterable<Buffer> | NodeJS.ReadableStream): Promise<{ hash: string; size: number }> {
		const hasher = createHash('sha256');
		let size = 0;
		// Held in memory while the blob may still be small enough for a pack; a temp file after that.
		const head: Buffer[] = [];
		let out: { path: string; fd: number } | undefined;
		try {
			for await (const chunk of input as AsyncIterable<Buffer>) {
				size += chunk.length;
				if (size > this.maxBlobBytes) {
					throw tooLarge(size, this.maxBlobBytes);
				}
				hasher.update(chunk);
				if (out) {
					writeAll(out.fd, chunk);
				} else if (size <= this.packThresholdBytes) {
					head.push(Buffer.from(chunk));
				} else {
					out = this.newTempFile();
					for (const part of head) {
						writeAll(out.fd, part);
					}
					head.length = 0;
					writeAll(out.fd, chunk);
				}
			}
			if (out) {
				fs.fsyncSync(out.fd);
			}
		} catch (error) {
			if (out) {
				fs.closeSync(out.fd);
				fs.rmSync(out.path, { force: true });
			}
			throw error;
		}
		const hash = hasher.digest('hex');
		if (!out) {
			if (!this.has(hash)) {
				this.writePack([[hash, Buffer.concat(head)]]);
			}
			return { hash, size };
		}
		fs.closeSync(out.fd);
		if (this.has(hash)) {
			fs.rmSync(out.path, { force: true });
		} else {
			this.publish(out.path, hash);
		}
		return { hash, size };
	}

	/**
	 * Is the blob in the store? Cheap, as snapshots ask it for every file: a lookup in the packs this
	 * process knows (a binary search in an index bucket it has read once), a stat of the loose file,
	 * and on a miss a stat of the pack folder, listed again only if another process changed it.
	 */
	has(hash: string): boolean {
		const file = this.pathOf(hash);
		if (this.packs.find(hash) || fs.existsSync(file)) {
			return true;
		}
		return this.packs.refresh() && this.packs.find(hash) !== undefined;
	}

	/** Reads a blob and verifies it; flipped bytes are refused with `blob.corrupt`, never served. */
	get(hash: string): Buffer {
		try {
			return this.read(hash);
		} catch (error) {
			// A failing disk under a pack (EIO) or too many open files (EMFILE) is an I/O error with a
			// code, like one reading a loose file; the desk's own refusals pass as they are.
			if (error instanceof DeskError) {
				throw error;
			}
			throw new DeskError(
				'store.io',
				`Could not read blob ${hash}: ${(error as Error).message}`,
				{ hash },
				{ cause: error },
			);
		}
	}

	private read(hash: string): Buffer {
		const file = this.pathOf(hash);
		const packed = this.packs.find(hash);
		if (packed) {
			return verified(hash, packed.pack.read(packed.offset, packed.size), packed.pack.file, packed.offset);
		}
		let bytes: Buffer | undefined;
		try {
			bytes = fs.readFileSync(file);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
				throw new DeskError('store.io', `Could not read blob ${hash}: ${(error as Error).message}`, { hash });
			}
		}
		if (bytes) {
			return verified(hash, bytes, file, 0);
		}
		// Packed by another process since this one listed the packs (a batch, or loose blobs moved
		// into a pack after this process looked for the file)?
		this.packs.refresh(true);
		const later = this.packs.find(hash);
		if (later) {
			return verified(hash, later.pack.read(later.offset, later.size), later.pack.file, later.offset);
		}
		const damage = this.packs.damage;
		if (damage) {
			throw new DeskError(
				'store.corrupt',
				`Blob ${hash} is in none of the store's readable packs and files, and it may be in a damaged one: ${damage.message}`,
				{ hash, file: damage.data['file'] },
			);
		}
		throw new DeskError('blob.missing', `Blob ${hash} is not in the store.`, { hash });
	}

	/** Where a blob's bytes are (for diagnostics and tests), or undefined when it is not stored. */
	locate(hash: string): BlobLocation | undefined {
		const file = this.pathOf(hash);
		const packed = this.packs.find(hash) ?? (this.packs.refresh(true) ? this.packs.find(hash) : undefined);
		if (packed) {
			return { file: packed.pack.file, offset: packed.offset, size: packed.size, packed: true };
		}
		try {
			return { file, offset: 0, size: fs.statSync(file).size, packed: false };
		} catch {
			return undefined;
		}
	}

	/** The names of every stored blob, packed and loose (each once). */
	list(): string[] {
		this.packs.refresh(true);
		const names = new Set<string>();
		for (const pack of this.packs.packs) {
			for (const entry of pack.entries()) {
				names.add(entry.name);
			}
		}
		for (const { hash } of this.looseBlobs()) {
			names.add(hash);
		}
		return [...names].sort();
	}

	/** Where a loose blob lives. Refuses anything but 64 lowercase hex before touching the disk. */
	pathOf(hash: string): string {
		if (!BlobStore.isHash(hash)) {
			throw new DeskError('blob.badHash', `Not a sha256 blob name: ${JSON.stringify(String(hash).slice(0, 80))}.`, {
				hash: String(hash).slice(0, 80),
			});
		}
		return path.join(this.root, 'sha256', hash.slice(0, 2), hash);
	}

	/**
	 * A batch of blobs made durable together: small ones are appended to one pack, larger ones go
	 * to temp files, and commit() fsyncs them all in parallel, renames them into place and fsyncs
	 * their folders. One fsync after another per file would make a snapshot of thousands of files
	 * wait on the disk thousands of times; a blob under its final name is still always whole and
	 * durable.
	 */
	batch(): BlobBatch {
		return new BlobBatch(this, this.maxBlobBytes);
	}

	/**
	 * Merges packs into one: the small ones that break the geometric progression (see
	 * `packsToMerge`), or all of them. Every blob copied is verified; the new pack is durable before
	 * the old ones are removed. Returns undefined when another process is consolidating.
	 */
	consolidate(options: { all?: boolean } = {}): { merged: number; blobs: number } | undefined {
		return this.underPackLock(() => {
			this.packs.refresh(true);
			const candidates = this.packs.packs.filter((p) => !this.unmergeable.has(p.file));
			const inputs = options.all ? [...candidates] : packsToMerge(candidates);
			if (inputs.length < 2) {
				return { merged: 0, blobs: 0 };
			}
			const writer = new PackWriter(this.tempPath());
			const name = newPackName();
			let current: PackReader | undefined;
			try {
				for (const input of inputs) {
					current = input;
					for (const entry of input.entries()) {
						if (!writer.has(entry.name)) {
							writer.add(
								entry.name,
								verified(entry.name, input.read(entry.offset, entry.size), input.file, entry.offset),
							);
						}
					}
				}
				current = undefined;
				this.finishPack(writer, name);
			} catch (error) {
				writer.abort();
				if (current && isDeskError(error, 'blob.corrupt')) {
					this.unmergeable.add(current.file);
				} else if (current && isDeskError(error, 'store.corrupt')) {
					this.packs.markDamaged(current, error);
				}
				throw error;
			}
			this.packs.adopt(name);
			for (const input of inputs) {
				fs.rmSync(input.file, { force: true });
				this.packs.forget(input);
			}
			fsyncFolder(this.packDir);
			return { merged: inputs.length, blobs: writer.count };
		});
	}

	/**
	 * Moves loose blobs small enough for a pack (those of layout 1) into packs: each pack is durable
	 * before the files it holds are removed, so a kill at any point loses nothing (a second run packs
	 * what is left). A loose blob whose bytes do not match its name is left where it is and named.
	 * Returns undefined when another process is consolidating.
	 */
	packLoose(options: { maxFiles?: number } = {}): { packed: number; corrupt: string[]; done: boolean } | undefined {
		return this.underPackLock(() => {
			let packed = 0;
			let seen = 0;
			let done = true;
			const corrupt: string[] = [];
			let writer: PackWriter | undefined;
			let moved: string[] = [];
			const flush = () => {
				if (!writer) {
					return;
				}
				const name = newPackName();
				try {
					this.finishPack(writer, name);
				} catch (error) {
					writer.abort();
					throw error;
				}
				this.packs.adopt(name);
				packed += writer.count;
				writer = undefined;
				const folders = new Set<string>();
				for (const file of moved) {
					fs.rmSync(file, { force: true });
					folders.add(path.dirname(file));
				}
				moved = [];
				for (const folder of folders) {
					fsyncFolder(folder);
				}
			};
			for (const { hash, file } of this.looseBlobs()) {
				if (options.maxFiles !== undefined && seen >= options.maxFiles) {
					done = false;
					break;
				}
				seen++;
				let bytes: Buffer;
				try {
					const stat = fs.lstatSync(file);
					if (!stat.isFile() || stat.size > this.packThresholdBytes) {
						continue;
					}
					bytes = fs.readFileSync(file);
				} catch (error) {
					if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
						continue;
					}
					throw error;
				}
				if (createHash('sha256').update(bytes).digest('hex') !== hash) {
					corrupt.push(hash);
					continue;
				}
				writer ??= new PackWriter(this.tempPath());
				writer.add(hash, bytes);
				moved.push(file);
				if (writer.dataBytes >= 64 * 1024 * 1024) {
					flush();
				}
			}
			flush();
			this.consolidateIfNeeded();
			if (done && this.looseToPack) {
				writeLayout(path.join(this.root, 'layout.json'));
				this.looseToPack = false;
			}
			return { packed, corrupt, done };
		});
	}

	/** Closes the packs this process holds open and removes its temp folder; the store is not used after. */
	close(): void {
		if (this.consolidationScheduled && !this.closed) {
			this.consolidateIfNeeded();
		}
		this.closed = true;
		this.packs.close();
		try {
			if (this.ownTempDir !== undefined) {
				fs.rmdirSync(this.ownTempDir);
			}
		} catch (error) {
			// A batch left open keeps its temp files (ENOTEMPTY); a later opener removes them.
			if (!['ENOENT', 'ENOTEMPTY'].includes((error as NodeJS.ErrnoException).code ?? '')) {
				throw error;
			}
		}
	}

	/** @internal */
	newTempFile(): { path: string; fd: number } {
		const temp = this.tempPath();
		return {
			path: temp,
			fd: fs.openSync(
				temp,
				fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
				0o600,
			),
		};
	}

	/** @internal */
	newPackWriter(): PackWriter {
		return new PackWriter(this.tempPath());
	}

	/** @internal Renames a durable temp file to its blob name (no folder fsync). Returns the folder. */
	publishTemp(temp: string, hash: string): string {
		const target = this.pathOf(hash);
		const folder = path.dirname(target);
		fs.mkdirSync(folder, { recursive: true });
		fs.chmodSync(temp, 0o444);
		fs.renameSync(temp, target);
		return folder;
	}

	/** @internal Renames a durable, closed pack into the pack folder (no folder fsync). Returns the folder. */
	publishPack(temp: string, name: string): string {
		fs.chmodSync(temp, 0o444);
		fs.renameSync(temp, path.join(this.packDir, name));
		return this.packDir;
	}

	/**
	 * @internal A pack published and its folder fsynced: known from now on. Consolidation, which may
	 * rewrite most of the store, runs after the write that led here has returned (in the server,
	 * after the request is answered; a `desk` command does it before it exits), never inside it.
	 */
	packPublished(name: string): void {
		this.packs.adopt(name);
		if (!this.consolidationScheduled && this.packs.packs.length > this.maxPacks) {
			this.consolidationScheduled = true;
			setImmediate(() => {
				this.consolidationScheduled = false;
				if (!this.closed) {
					this.consolidateIfNeeded();
				}
			});
		}
	}

	private consolidationScheduled = false;
	private closed = false;

	private writePack(blobs: Array<[string, Uint8Array]>): void {
		const writer = new PackWriter(this.tempPath());
		const name = newPackName();
		try {
			for (const [hash, bytes] of blobs) {
				writer.add(hash, bytes);
			}
			this.finishPack(writer, name);
		} catch (error) {
			writer.abort();
			throw new DeskError(
				'store.io',
				`Could not store ${blobs.length === 1 ? `blob ${blobs[0]![0]}` : `${blobs.length} blobs`}: ${(error as Error).message}`,
				{},
				{ cause: error },
			);
		}
		this.packPublished(name);
	}

	/** Completes a pack, makes it durable and renames it into place, durably. */
	private finishPack(writer: PackWriter, name: string): void {
		writer.finish();
		writer.syncNow();
		writer.close();
		this.publishPack(writer.temp, name);
		fsyncFolder(this.packDir);
	}

	private consolidateIfNeeded(): void {
		this.packs.refresh();
		if (this.packs.packs.length <= this.maxPacks) {
			return;
		}
		try {
			this.consolidate();
		} catch (error) {
			// The write that led here is durable already; the packs are merged at a later write.
			this.logger.warn(`Blob packs in ${this.packDir} were not consolidated: ${describeError(error)}`);
		}
	}

	/** Runs `body` holding `packs.lock`; undefined when another process holds it. */
	private underPackLock<T>(body: () => T): T | undefined {
		let entered = false;
		try {
			return this.packLock.withLock(() => {
				entered = true;
				return body();
			});
		} catch (error) {
			if (!entered && isDeskError(error, 'store.locked')) {
				return undefined;
			}
			throw error;
		}
	}

	private *looseBlobs(): Generator<{ hash: string; file: string }> {
		const top = path.join(this.root, 'sha256');
		let folders: string[];
		try {
			folders = fs.readdirSync(top);
		} catch {
			return;
		}
		for (const folder of folders.sort()) {
			if (!/^[0-9a-f]{2}$/.test(folder)) {
				continue;
			}
			let names: string[];
			try {
				names = fs.readdirSync(path.join(top, folder));
			} catch {
				continue;
			}
			for (const name of names.sort()) {
				if (hashPattern.test(name) && name.startsWith(folder)) {
					yield { hash: name, file: path.join(top, folder, name) };
				}
			}
		}
	}

	/**
	 * Each process writes its temp files in a folder of its own, so that one process cleaning up
	 * after killed writers never removes the temps of a live one's long snapshot.
	 */
	private get tempDir(): string {
		if (this.ownTempDir === undefined) {
			const tempRoot = path.join(this.root, 'tmp');
			fs.mkdirSync(tempRoot, { recursive: true });
			removeDeadWritersTemps(tempRoot);
			const dir = path.join(tempRoot, `${process.pid}-${randomBytes(3).toString('hex')}`);
			fs.mkdirSync(dir, { recursive: true });
			this.ownTempDir = dir;
		}
		return this.ownTempDir;
	}

	private tempPath(): string {
		return path.join(this.tempDir, `${tempPrefix}${randomBytes(8).toString('hex')}`);
	}

	private commitTemp(hash: string, fill: (fd: number) => void): void {
		const temp = this.tempPath();
		const fd = fs.openSync(
			temp,
			fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
			0o600,
		);
		try {
			fill(fd);
			fs.fsyncSync(fd);
		} catch (error) {
			fs.closeSync(fd);
			fs.rmSync(temp, { force: true });
			throw new DeskError(
				'store.io',
				`Could not store blob ${hash}: ${(error as Error).message}`,
				{ hash },
				{ cause: error },
			);
		}
		fs.closeSync(fd);
		this.publish(temp, hash);
	}

	private publish(temp: string, hash: string): void {
		fsyncFolder(this.publishTemp(temp, hash));
	}
}

export class BlobBatch {
	/** The pack the batch's small blobs are appended to, made on the first one. */
	private pack: PackWriter | undefined;
	/** hash → temp file of a large blob, written and closed (thousands of open files would exhaust descriptors). */
	private readonly loose = new Map<string, string>();

	constructor(
		private readonly store: BlobStore,
		private readonly maxBlobBytes: number,
	) {}

	get size(): number {
		return (this.pack?.count ?? 0) + this.loose.size;
	}

	/** Adds bytes (if the store and the batch do not have them yet) and returns their hash. */
	add(bytes: Uint8Array, knownHash?: string): string {
		if (bytes.length > this.maxBlobBytes) {
			throw tooLarge(bytes.length, this.maxBlobBytes);
		}
		const hash = knownHash ?? createHash('sha256').update(bytes).digest('hex');
		if (this.pack?.has(hash) || this.loose.has(hash) || this.store.has(hash)) {
			return hash;
		}
		try {
			if (bytes.length <= this.store.packThresholdBytes) {
				this.pack ??= this.store.newPackWriter();
				this.pack.add(hash, bytes);
				return hash;
			}
		} catch (error) {
			throw new DeskError(
				'store.io',
				`Could not store blob ${hash}: ${(error as Error).message}`,
				{ hash },
				{ cause: error },
			);
		}
		const temp = this.store.newTempFile();
		try {
			writeAll(temp.fd, bytes);
		} catch (error) {
			fs.rmSync(temp.path, { force: true });
			throw new DeskError(
				'store.io',
				`Could not store blob ${hash}: ${(error as Error).message}`,
				{ hash },
				{ cause: error },
			);
		} finally {
			fs.closeSync(temp.fd);
		}
		this.loose.set(hash, temp.path);
		return hash;
	}

	async commit(): Promise<void> {
		const pack = this.pack;
		const loose = [...this.loose.entries()];
		const folders = new Set<string>();
		let packName: string | undefined;
		try {
			pack?.finish();
			await Promise.all([pack?.sync(), inParallel(loose, 16, ([, temp]) => fsyncFile(temp))]);
			pack?.close();
			if (pack) {
				packName = newPackName();
				folders.add(this.store.publishPack(pack.temp, packName));
			}
			for (const [hash, temp] of loose) {
				folders.add(this.store.publishTemp(temp, hash));
			}
		} catch (error) {
			this.abort();
			throw new DeskError(
				'store.io',
				`Could not make blobs durable: ${(error as Error).message}`,
				{},
				{ cause: error },
			);
		}
		this.pack = undefined;
		this.loose.clear();
		await inParallel([...folders], 16, async (folder) => fsyncFolder(folder));
		if (packName) {
			this.store.packPublished(packName);
		}
	}

	/** Drops every blob of the batch that was not committed. */
	abort(): void {
		this.pack?.abort();
		this.pack = undefined;
		for (const temp of this.loose.values()) {
			fs.rmSync(temp, { force: true });
		}
		this.loose.clear();
	}
}

/** Reads back as `hash` only bytes that hash to it. */
function verified(hash: string, bytes: Buffer, file: string, offset: number): Buffer {
	const actual = createHash('sha256').update(bytes).digest('hex');
	if (actual !== hash) {
		throw new DeskError('blob.corrupt', `Blob ${hash} is damaged: its bytes hash to ${actual}.`, {
			hash,
			actual,
			file,
			offset,
		});
	}
	return bytes;
}

function writeLayout(file: string, looseToPack = false): void {
	writeFileDurably(
		file,
		Buffer.from(
			JSON.stringify({ layout: blobLayoutVersion, hash: 'sha256', ...(looseToPack ? { looseToPack } : {}) }) + '\n',
		),
	);
}

/** fsync through a fresh read-only descriptor; on Linux it flushes the file's data all the same. */
async function fsyncFile(file: string): Promise<void> {
	const handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
	try {
		await handle.sync();
	} finally {
		await handle.close();
	}
}

async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			await work(items[next++]!);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Removes temp folders of processes that are gone, and loose temp files of older layouts. */
function removeDeadWritersTemps(tempRoot: string): void {
	removeStaleTempFiles(tempRoot);
	for (const name of fs.readdirSync(tempRoot)) {
		const pid = Number.parseInt(name.split('-')[0] ?? '', 10);
		if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) {
			continue;
		}
		try {
			process.kill(pid, 0);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ESRCH') {
				fs.rmSync(path.join(tempRoot, name), { recursive: true, force: true });
			}
		}
	}
}

function tooLarge(size: number, limit: number): DeskError {
	return new DeskError('blob.tooLarge', `A blob of ${size} bytes is over the limit of ${limit} bytes.`, {
		size,
		limit,
	});
}
