import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { canonicalManifest, decodeManifest, encodeManifest, isSafeRelativePath } from '../assets/manifest';
import type { FolderScan, ScanOptions, SnapshotFiles } from '../assets/ports';
import type { Manifest, ManifestEntry } from '../assets/types';
import { DeskError } from '../core/errors';
import type { BlobStore } from './blobStore';
import { fsyncFolder, tempPrefix, writeAll } from './durableFile';
import { removeInFolder, writeInFolder, writeNewFile } from './folderFiles';
import { StatPool } from './statPool';

/** Files larger than this are streamed into the store rather than read whole. */
const streamAbove = 32 * 1024 * 1024;
/**
 * A file modified this close to the scan may be modified again within the same timestamp tick,
 * keeping its size and mtime: its stat is not trusted next time ("racy" files, as git calls them).
 * Timestamps here have millisecond resolution or better and tick every few milliseconds; on a file
 * system with whole-second timestamps the window is two seconds.
 */
const racyWindowMs = 100;
const coarseRacyWindowMs = 2_000;
const statCacheFormat = 2;

/** [size, mtimeMs, ctimeMs, ino, sha256, 1 when the blob is in the store] of a file when it was last hashed. */
type StatEntry = [number, number, number, number, string, 0 | 1];

/** A stat cache this process holds, with the manifest of the scan that wrote it (when it did). */
interface HeldStatCache {
	entries: Map<string, StatEntry>;
	fileMtimeMs: number;
	scan?: { manifest: Manifest; manifestHash: string; lookalikes: string[][] };
}

/**
 * The snapshot engine's file work over node:fs and the blob store. Unchanged files are recognised
 * from a stat cache (per asset, a file under `<library>/cache/stat/`) without being read again.
 */
export class NodeSnapshotFiles implements SnapshotFiles {
	/** The stat caches read or written by this process, with the cache file's mtime then. */
	private readonly statCaches = new Map<string, HeldStatCache>();
	private readonly stats = new StatPool();

	constructor(
		private readonly libraryDir: string,
		private readonly blobs: BlobStore,
	) {}

	async scan(assetId: string, folder: string, options: ScanOptions): Promise<FolderScan> {
		const started = Date.now();
		const cache = this.loadStatCache(assetId);
		const nextCache = new Map<string, StatEntry>();
		const files: ManifestEntry[] = [];
		const skipped: FolderScan['skipped'] = [];
		const batch = options.store ? this.blobs.batch() : undefined;
		let filesRead = 0;
		let bytesRead = 0;
		// Files whose cache entry still holds exactly: when every file does, the folder is as the last
		// scan left it, and so is its manifest.
		let unchanged = 0;
		try {
			// Walk the folders first, then stat the files in parallel on libuv's threads: one lstat
			// after another is what an unchanged snapshot spends most of its time on.
			const found: Array<{ rel: string; abs: string }> = [];
			const stack: string[] = [''];
			while (stack.length > 0) {
				options.signal?.throwIfAborted();
				const rel = stack.pop()!;
				const abs = rel === '' ? folder : path.join(folder, rel);
				let entries: fs.Dirent[];
				try {
					entries = fs.readdirSync(abs, { withFileTypes: true });
				} catch (error) {
					if (rel === '') {
						throw new DeskError('asset.noFolder', `The working folder ${folder} cannot be read: ${(error as Error).message}`, { folder });
					}
					skipped.push({ path: rel, reason: `unreadable folder: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
					continue;
				}
				for (const entry of entries) {
					const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
					if (entry.isDirectory()) {
						stack.push(childRel);
					} else if (entry.isFile()) {
						found.push({ rel: childRel, abs: `${abs}/${entry.name}` });
					} else {
						skipped.push({ path: childRel, reason: kindOf(entry) });
					}
				}
			}
			const stats = await this.stats.lstatAll(found.map((f) => f.abs));
			for (const [index, { rel: childRel, abs: childAbs }] of found.entries()) {
				options.signal?.throwIfAborted();
				const stat = stats[index];
				if (stat === undefined || stat.size === -1) {
					skipped.push({ path: childRel, reason: 'vanished while the folder was read' });
					continue;
				}
				if (stat.size === -2) {
					skipped.push({ path: childRel, reason: 'changed into something other than a file while the folder was read' });
					continue;
				}
				const known = cache.get(childRel);
				let hash: string | undefined;
				let stored: 0 | 1 = batch ? 1 : 0;
				if (known && known[0] === stat.size && known[1] === stat.mtimeMs && known[2] === stat.ctimeMs && known[3] === stat.ino) {
					hash = known[4];
					stored = known[5];
					if (batch && stored === 0) {
						// Known from a check that stored nothing (AtGo): store it now.
						if (!this.blobs.has(hash)) {
							hash = undefined;
						}
						stored = 1;
					}
				}
				if (hash === undefined) {
					hash = await this.readFile(childAbs, stat.size, batch);
					filesRead++;
					bytesRead += stat.size;
				}
				const window = stat.mtimeMs % 1000 === 0 ? coarseRacyWindowMs : racyWindowMs;
				if (started - stat.mtimeMs > window) {
					// Unchanged only when every stat field still matches: a chmod changes ctime alone.
					if (known && known[4] === hash && known[5] === stored && known[0] === stat.size && known[1] === stat.mtimeMs && known[2] === stat.ctimeMs && known[3] === stat.ino) {
						nextCache.set(childRel, known);
						unchanged++;
					} else {
						nextCache.set(childRel, [stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino, hash, stored]);
					}
				}
				files.push({ path: childRel, hash, size: stat.size, executable: (stat.mode & 0o111) !== 0 });
				if (files.length % 500 === 0) {
					options.onProgress?.(files.length);
				}
			}
			const held = this.statCaches.get(assetId);
			// A scan that stores must not hand back a manifest that only a check (AtGo) computed.
			if (unchanged === found.length && cache.size === found.length && held?.entries === cache && held.scan && (!batch || this.blobs.has(held.scan.manifestHash))) {
				options.onProgress?.(files.length);
				return { ...held.scan, skipped, filesRead, bytesRead };
			}
			// Names come from readdir: never empty, '.', '..', or holding '/' or NUL.
			const manifest = canonicalManifest(files);
			const manifestBytes = encodeManifest(manifest);
			const manifestHash = createHash('sha256').update(manifestBytes).digest('hex');
			if (batch) {
				batch.add(manifestBytes, manifestHash);
				await batch.commit();
			}
			const scan = { manifest, manifestHash, lookalikes: lookalikes(files.map((f) => f.path)) };
			if (unchanged === found.length && cache.size === found.length && held?.entries === cache) {
				held.scan = scan;
			} else {
				this.saveStatCache(assetId, nextCache, scan);
			}
			options.onProgress?.(files.length);
			return { ...scan, skipped, filesRead, bytesRead };
		} catch (error) {
			batch?.abort();
			throw error;
		}
	}

	close(): void {
		this.stats.close();
	}

	putManifest(manifest: Manifest): string {
		return this.blobs.put(encodeManifest(canonicalManifest(manifest.files)));
	}

	readManifest(hash: string): Manifest {
		return decodeManifest(this.blobs.get(hash), hash);
	}

	readBlob(hash: string): Buffer {
		return this.blobs.get(hash);
	}

	prepareFolder(id: string, dir: string | undefined): string {
		const folder = dir === undefined ? path.join(this.libraryDir, 'assets', 'folders', id) : path.resolve(dir);
		let names: string[] | undefined;
		try {
			const stat = fs.lstatSync(folder);
			if (!stat.isDirectory()) {
				throw new DeskError('asset.folderNotEmpty', `${folder} exists and is not a folder; a new asset needs a folder that does not exist or is empty.`, { folder });
			}
			names = fs.readdirSync(folder);
		} catch (error) {
			if (error instanceof DeskError) {
				throw error;
			}
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
				throw new DeskError('store.io', `Could not look at ${folder}: ${(error as Error).message}`, { folder });
			}
		}
		if (names !== undefined && names.length > 0) {
			throw new DeskError('asset.folderNotEmpty', `${folder} is not empty; a new asset needs a folder that does not exist or is empty.`, { folder, entries: names.length });
		}
		fs.mkdirSync(folder, { recursive: true });
		return fs.realpathSync(folder);
	}

	writeInFolder(folder: string, rel: string, bytes: Uint8Array, executable = false): void {
		writeInFolder(folder, rel, bytes, { executable });
	}

	/** Removes a file from an asset's working folder; a link on the way is refused, a missing file is fine. */
	removeInFolder(folder: string, rel: string): void {
		removeInFolder(folder, rel);
	}

	readWorkingFile(folder: string, rel: string, maxBytes: number): Buffer | undefined {
		if (!isSafeRelativePath(rel)) {
			return undefined;
		}
		let fd: number | undefined;
		try {
			// O_NOFOLLOW guards the last component only: the folder holding it must still be inside.
			const parent = fs.realpathSync(path.dirname(path.join(folder, rel)));
			const root = fs.realpathSync(folder);
			if (parent !== root && !parent.startsWith(`${root}${path.sep}`)) {
				return undefined;
			}
			fd = fs.openSync(path.join(parent, path.basename(rel)), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
			if (!fs.fstatSync(fd).isFile()) {
				return undefined;
			}
			const buffer = Buffer.alloc(maxBytes);
			const read = fs.readSync(fd, buffer, 0, maxBytes, 0);
			return buffer.subarray(0, read);
		} catch {
			return undefined;
		} finally {
			if (fd !== undefined) {
				fs.closeSync(fd);
			}
		}
	}

	mount(assetId: string, version: number, manifest: Manifest): string {
		const parent = path.join(this.libraryDir, 'mounts', assetId);
		const target = path.join(parent, String(version));
		if (fs.existsSync(target)) {
			return target;
		}
		fs.mkdirSync(parent, { recursive: true });
		// Built beside its final name and renamed into place: a half-built mount is never seen.
		const temp = path.join(parent, `${tempPrefix}${version}-${randomBytes(6).toString('hex')}`);
		fs.mkdirSync(temp);
		try {
			for (const file of manifest.files) {
				// Paths were checked when the manifest was read; every folder below is made here, so
				// there is no link to follow.
				const abs = path.join(temp, file.path);
				fs.mkdirSync(path.dirname(abs), { recursive: true });
				writeNewFile(abs, this.blobs.get(file.hash), file.executable ? 0o555 : 0o444, true);
			}
			fs.renameSync(temp, target);
		} catch (error) {
			fs.rmSync(temp, { recursive: true, force: true });
			if (fs.existsSync(target)) {
				return target; // Another process built the same mount first.
			}
			throw error;
		}
		fsyncFolder(parent);
		return target;
	}

	/**
	 * Hashes (and with a batch, stores) a file read through one descriptor opened without following
	 * a link and without blocking (a file swapped for a FIFO is refused, never waited on).
	 */
	private async readFile(file: string, size: number, batch: ReturnType<BlobStore['batch']> | undefined): Promise<string> {
		const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
		try {
			if (!fs.fstatSync(fd).isFile()) {
				throw new DeskError('asset.unsafePath', `${file} changed into something other than a file while it was read.`, { file });
			}
			if (size > streamAbove) {
				if (batch) {
					return (await this.blobs.putStream(fs.createReadStream('', { fd, autoClose: false, highWaterMark: 1024 * 1024 }))).hash;
				}
				const hasher = createHash('sha256');
				for await (const chunk of fs.createReadStream('', { fd, autoClose: false, highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
					hasher.update(chunk);
				}
				return hasher.digest('hex');
			}
			const bytes = fs.readFileSync(fd);
			const hash = createHash('sha256').update(bytes).digest('hex');
			batch?.add(bytes, hash);
			return hash;
		} finally {
			fs.closeSync(fd);
		}
	}

	private statCacheFile(assetId: string): string {
		return path.join(this.libraryDir, 'cache', 'stat', `${assetId}.json`);
	}

	private loadStatCache(assetId: string): Map<string, StatEntry> {
		const file = this.statCacheFile(assetId);
		let mtimeMs: number;
		try {
			mtimeMs = fs.statSync(file).mtimeMs;
		} catch {
			return new Map();
		}
		const held = this.statCaches.get(assetId);
		if (held && held.fileMtimeMs === mtimeMs) {
			return held.entries;
		}
		try {
			const value = JSON.parse(fs.readFileSync(file, 'utf8')) as { format?: number; entries?: Record<string, StatEntry> };
			if (value.format === statCacheFormat && value.entries && typeof value.entries === 'object') {
				const entries = new Map(Object.entries(value.entries));
				this.statCaches.set(assetId, { entries, fileMtimeMs: mtimeMs });
				return entries;
			}
		} catch {
			// An unreadable cache: every file is read again, which is always correct.
		}
		return new Map();
	}

	private saveStatCache(assetId: string, entries: Map<string, StatEntry>, scan: HeldStatCache['scan']): void {
		// A cache: written by rename so it is never torn, but not fsynced; losing it costs a re-read.
		const file = this.statCacheFile(assetId);
		fs.mkdirSync(path.dirname(file), { recursive: true });
		const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
		fs.writeFileSync(temp, JSON.stringify({ format: statCacheFormat, entries: Object.fromEntries(entries) }));
		fs.renameSync(temp, file);
		this.statCaches.set(assetId, { entries, fileMtimeMs: fs.statSync(file).mtimeMs, scan });
	}
}

function kindOf(entry: fs.Dirent): string {
	if (entry.isSymbolicLink()) {
		return 'a link (never followed)';
	}
	if (entry.isFIFO()) {
		return 'a FIFO';
	}
	if (entry.isSocket()) {
		return 'a socket';
	}
	if (entry.isBlockDevice() || entry.isCharacterDevice()) {
		return 'a device';
	}
	return 'not a regular file';
}

/** Paths that differ only by case or Unicode normalisation: kept apart, but worth telling about. */
function lookalikes(paths: string[]): string[][] {
	const groups = new Map<string, string[]>();
	for (const p of paths) {
		const key = p.normalize('NFC').toLowerCase();
		const group = groups.get(key) ?? [];
		group.push(p);
		groups.set(key, group);
	}
	return [...groups.values()].filter((g) => g.length > 1);
}
