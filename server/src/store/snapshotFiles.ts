import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { canonicalManifest, decodeManifest, encodeManifest } from '../assets/manifest';
import type { FolderIdentity, FolderScan, ScanOptions, SnapshotFiles } from '../assets/ports';
import type { Manifest, ManifestEntry } from '../assets/types';
import { DeskError, isDeskError } from '../core/errors';
import { ConfinedDir, entryKindText, shownName, utf8Name, type EntryKind } from './confinedDir';
import type { BlobStore } from './blobStore';
import { tempPrefix, writeAll } from './durableFile';
import { makeWritable, readInFolder, removeInFolder, sameFolder, swappedFolder, writeInFolder } from './folderFiles';
import {
	checkMount,
	mountFileMode,
	mountFolderMode,
	readMountStamp,
	sameStamp,
	writeMountStamp,
	type MountCheck,
} from './mountCheck';
import { changedTooRecently } from './racyStat';
import { StatPool } from './statPool';

/** Files larger than this are streamed into the store rather than read whole. */
const streamAbove = 32 * 1024 * 1024;
const statCacheFormat = 2;
/** Folders deeper than this are reported, not walked (each level holds a descriptor while walked). */
const maxDepth = 256;
/** The longest path a manifest holds (`isSafeRelativePath`). */
const maxPathLength = 4096;
/** Reads of a file that keeps changing before it is reported instead of recorded. */
const readAttempts = 4;
/** Files stat'ed at once, and folders held open at most before they are. */
const flushFiles = 8192;
const flushFolders = 256;

/** A folder's descriptor with the count of files and sub-folders still to be read through it. */
interface HeldDir {
	dir: ConfinedDir;
	refs: number;
}

interface PendingFile {
	held: HeldDir;
	name: string;
	rel: string;
}

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
		// Regular files the walk met (those that vanished or changed kind since included).
		let found = 0;
		// Every folder is walked and every file read through descriptors (ConfinedDir): a folder
		// swapped for a link at any moment leads nowhere, and nothing outside `folder` is read.
		let root: ConfinedDir;
		try {
			root = ConfinedDir.open(folder);
		} catch (error) {
			throw new DeskError(
				'asset.noFolder',
				`The working folder ${folder} cannot be read: ${(error as Error).message}`,
				{ folder },
			);
		}
		const library = this.libraryIdentity();
		const rootStat = root.stat();
		if (options.folderIs && !sameFolder(rootStat, options.folderIs)) {
			root.close();
			throw swappedFolder(folder);
		}
		if (library && rootStat.dev === library.dev && rootStat.ino === library.ino) {
			root.close();
			throw new DeskError(
				'asset.unsafePath',
				`The working folder ${folder} is the desk's own library folder; it is not snapshotted.`,
				{ folder },
			);
		}
		const open = new Set<HeldDir>();
		const hold = (dir: ConfinedDir): HeldDir => {
			const held: HeldDir = { dir, refs: 1 };
			open.add(held);
			return held;
		};
		const release = (held: HeldDir): void => {
			held.refs -= 1;
			if (held.refs === 0) {
				open.delete(held);
				held.dir.close();
			}
		};
		const stack: Array<{ parent: HeldDir; name: string; rel: string; depth: number }> = [];
		let pending: PendingFile[] = [];
		const visit = (held: HeldDir, rel: string, depth: number): void => {
			let entries: Array<{ name: Buffer | string; kind: EntryKind }>;
			try {
				entries = namesOf(held.dir);
			} catch (error) {
				if (rel === '') {
					throw new DeskError(
						'asset.noFolder',
						`The working folder ${folder} cannot be read: ${(error as Error).message}`,
						{ folder },
					);
				}
				skipped.push({ path: rel, reason: `unreadable folder: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
				return;
			}
			for (const entry of entries) {
				const name = typeof entry.name === 'string' ? entry.name : utf8Name(entry.name);
				const childRel = (rel === '' ? '' : `${rel}/`) + (name ?? shownName(entry.name));
				if (name === undefined) {
					skipped.push({ path: childRel, reason: 'a name that is not UTF-8 (shown with \\x escapes): not stored' });
				} else if (name.startsWith(tempPrefix)) {
					skipped.push({
						path: childRel,
						reason: "a temporary file of the desk's (an interrupted write): not content",
					});
				} else if (childRel.length > maxPathLength) {
					skipped.push({ path: childRel, reason: `a path longer than ${maxPathLength} characters: not stored` });
				} else if (entry.kind === 'dir') {
					if (depth + 1 > maxDepth) {
						skipped.push({ path: childRel, reason: `a folder deeper than ${maxDepth} levels: not walked` });
					} else {
						held.refs += 1;
						stack.push({ parent: held, name, rel: childRel, depth: depth + 1 });
					}
				} else if (entry.kind === 'file') {
					held.refs += 1;
					pending.push({ held, name, rel: childRel });
				} else {
					skipped.push({ path: childRel, reason: entryKindText(entry.kind) });
				}
			}
		};
		// Stats the files met so far in parallel on worker threads (one lstat after another is what
		// an unchanged snapshot spends most of its time on), through their folders' descriptors,
		// then hashes what the stat cache does not know. Run whenever many files or folders are held.
		const flush = async (): Promise<void> => {
			const taken = pending;
			pending = [];
			const stats = await this.stats.lstatAll(taken.map((f) => f.held.dir.statPath(f.name)));
			for (const [index, file] of taken.entries()) {
				try {
					options.signal?.throwIfAborted();
					found++;
					const stat = stats[index];
					if (stat === undefined || stat.size === -1) {
						skipped.push({ path: file.rel, reason: 'vanished while the folder was read' });
						continue;
					}
					if (stat.size === -2) {
						skipped.push({
							path: file.rel,
							reason: 'changed into something other than a file while the folder was read',
						});
						continue;
					}
					const known = cache.get(file.rel);
					let hash: string | undefined;
					let stored: 0 | 1 = batch ? 1 : 0;
					// What is recorded: the lstat when the cache still knows the file, else the fstat
					// of the descriptor the bytes came from, and the size of those bytes.
					let facts: { size: number; mtimeMs: number; ctimeMs: number; ino: number; mode: number } = stat;
					if (
						known &&
						known[0] === stat.size &&
						known[1] === stat.mtimeMs &&
						known[2] === stat.ctimeMs &&
						known[3] === stat.ino
					) {
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
						const read = await this.readFile(file.held.dir, file.name, batch);
						if (typeof read === 'string') {
							skipped.push({ path: file.rel, reason: read });
							continue;
						}
						hash = read.hash;
						facts = {
							size: read.size,
							mtimeMs: read.stat.mtimeMs,
							ctimeMs: read.stat.ctimeMs,
							ino: read.stat.ino,
							mode: read.stat.mode,
						};
						filesRead++;
						bytesRead += read.size;
					}
					if (!changedTooRecently(facts.mtimeMs, started)) {
						// Unchanged only when every stat field still matches: a chmod changes ctime alone.
						if (
							known &&
							known[4] === hash &&
							known[5] === stored &&
							known[0] === facts.size &&
							known[1] === facts.mtimeMs &&
							known[2] === facts.ctimeMs &&
							known[3] === facts.ino
						) {
							nextCache.set(file.rel, known);
							unchanged++;
						} else {
							nextCache.set(file.rel, [facts.size, facts.mtimeMs, facts.ctimeMs, facts.ino, hash, stored]);
						}
					}
					files.push({ path: file.rel, hash, size: facts.size, executable: (facts.mode & 0o111) !== 0 });
					if (files.length % 500 === 0) {
						options.onProgress?.(files.length);
					}
				} finally {
					release(file.held);
				}
			}
		};
		try {
			const rootHeld = hold(root);
			visit(rootHeld, '', 0);
			release(rootHeld);
			while (stack.length > 0) {
				options.signal?.throwIfAborted();
				const next = stack.pop()!;
				let dir: ConfinedDir | undefined;
				try {
					dir = next.parent.dir.child(next.name);
				} catch (error) {
					skipped.push({
						path: next.rel,
						reason: isDeskError(error, 'attachment.notRegular')
							? 'changed into a link or something other than a folder while the folder was read (never followed)'
							: `unreadable folder: ${(error as Error).message}`,
					});
				} finally {
					release(next.parent);
				}
				if (dir === undefined) {
					if (!skipped.some((s) => s.path === next.rel)) {
						skipped.push({ path: next.rel, reason: 'vanished while the folder was read' });
					}
					continue;
				}
				const stat = dir.stat();
				if (library && stat.dev === library.dev && stat.ino === library.ino) {
					dir.close();
					skipped.push({ path: next.rel, reason: "the desk's own library folder: never snapshotted into itself" });
					continue;
				}
				const held = hold(dir);
				visit(held, next.rel, next.depth);
				release(held);
				if (pending.length >= flushFiles || (pending.length > 0 && open.size >= flushFolders)) {
					await flush();
				}
			}
			await flush();
			skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
			const held = this.statCaches.get(assetId);
			// A scan that stores must not hand back a manifest that only a check (AtGo) computed.
			if (
				unchanged === found &&
				cache.size === found &&
				held?.entries === cache &&
				held.scan &&
				(!batch || this.blobs.has(held.scan.manifestHash))
			) {
				options.onProgress?.(files.length);
				return { ...held.scan, skipped, filesRead, bytesRead };
			}
			// Names are valid UTF-8 from readdir: never empty, '.', '..', or holding '/' or NUL; so
			// no two entries share a path.
			const manifest = canonicalManifest(files);
			const manifestBytes = encodeManifest(manifest);
			const manifestHash = createHash('sha256').update(manifestBytes).digest('hex');
			if (batch) {
				batch.add(manifestBytes, manifestHash);
				await batch.commit();
			}
			const scan = { manifest, manifestHash, lookalikes: lookalikes(files.map((f) => f.path)) };
			if (unchanged === found && cache.size === found && held?.entries === cache) {
				held.scan = scan;
			} else {
				this.saveStatCache(assetId, nextCache, scan);
			}
			options.onProgress?.(files.length);
			return { ...scan, skipped, filesRead, bytesRead };
		} catch (error) {
			batch?.abort();
			throw error;
		} finally {
			for (const held of open) {
				held.dir.close();
			}
		}
	}

	/** Device and inode of the library folder, so that a walk never descends into it. */
	private libraryIdentity(): { dev: number; ino: number } | undefined {
		try {
			const stat = fs.statSync(this.libraryDir);
			return { dev: stat.dev, ino: stat.ino };
		} catch {
			return undefined;
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
				throw new DeskError(
					'asset.folderNotEmpty',
					`${folder} exists and is not a folder; a new asset needs a folder that does not exist or is empty.`,
					{ folder },
				);
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
			throw new DeskError(
				'asset.folderNotEmpty',
				`${folder} is not empty; a new asset needs a folder that does not exist or is empty.`,
				{ folder, entries: names.length },
			);
		}
		fs.mkdirSync(folder, { recursive: true });
		return fs.realpathSync(folder);
	}

	writeInFolder(folder: string, rel: string, bytes: Uint8Array, executable = false, folderIs?: FolderIdentity): void {
		writeInFolder(folder, rel, bytes, { executable, ...(folderIs ? { folderIs } : {}) });
	}

	/** Removes a file from an asset's working folder; a link on the way is refused, a missing file is fine. */
	removeInFolder(folder: string, rel: string): void {
		removeInFolder(folder, rel);
	}

	readWorkingFile(folder: string, rel: string, maxBytes: number): Buffer | undefined {
		return readInFolder(folder, rel, maxBytes);
	}

	/**
	 * Lays a version out read-only (files 0444, executables 0555, folders 0555), built beside its
	 * final name and renamed into place, so a half-built mount is never seen. A mount already there
	 * is reused only when it still is the version: every file and folder the manifest names and
	 * nothing else, each file of its size and hash and mode, each folder read-only. A file whose stat
	 * the mount's stamp vouches for (unchanged since it was last read) is not read again. One that
	 * differs (a file made writable and edited, one added or removed) is rebuilt and the old one removed.
	 */
	mount(assetId: string, version: number, manifest: Manifest): string {
		const parent = path.join(this.libraryDir, 'mounts', assetId);
		const name = String(version);
		const target = path.join(parent, name);
		const stampFile = this.mountStampFile(assetId, version);
		fs.mkdirSync(parent, { recursive: true });
		const mounts = ConfinedDir.open(parent);
		try {
			const existing = mounts.lstat(name);
			let check: MountCheck | undefined;
			if (existing !== undefined) {
				const stamp = readMountStamp(stampFile);
				check = checkMount(mounts, name, manifest, stamp);
				if (check.difference === undefined) {
					if (!sameStamp(check.stamp, stamp)) {
						writeMountStamp(stampFile, check.stamp);
					}
					this.onMountReused?.(target, { files: check.files, read: check.read });
					return target;
				}
			}
			// The files laid out anew are read once before their stat vouches for them.
			fs.rmSync(stampFile, { force: true });
			const tempName = `${tempPrefix}${version}-${randomBytes(6).toString('hex')}`;
			// The changed mount is moved aside first (a folder is not renamed over one that holds
			// anything), the new one put in its place, and the old one removed after.
			const oldName =
				existing === undefined ? undefined : `${tempPrefix}old-${version}-${randomBytes(6).toString('hex')}`;
			try {
				this.layOut(mounts, tempName, version, manifest);
				if (oldName !== undefined) {
					this.onMountRebuilt?.(target, check!.difference!);
					renameUnlessGone(mounts, name, oldName);
				}
				mounts.rename(tempName, name);
			} catch (error) {
				removeReadOnlyTree(parent, mounts, tempName);
				if (mounts.lstat(name)?.isDirectory()) {
					return target; // Another process built the same mount first.
				}
				throw error;
			} finally {
				if (oldName !== undefined) {
					removeReadOnlyTree(parent, mounts, oldName);
				}
			}
			mounts.fsync();
		} finally {
			mounts.close();
		}
		return target;
	}

	/**
	 * Told when a mount found changed is rebuilt: its path and what differed. Set by the desk to log
	 * it; a mount a run or a person changed means something wrote where nothing should.
	 */
	onMountRebuilt: ((mount: string, difference: string) => void) | undefined;

	/** Told when a mount is reused as it is: how many files it has and how many had to be read to tell. */
	onMountReused: ((mount: string, counts: { files: number; read: number }) => void) | undefined;

	/** What vouches for a mount's files without reading them (see mountCheck.ts); a cache, not content. */
	private mountStampFile(assetId: string, version: number): string {
		return path.join(this.libraryDir, 'cache', 'mount', assetId, `${version}.json`);
	}

	/** Writes the version's files into `parent/<name>` (made here), every folder read-only at the end. */
	private layOut(mounts: ConfinedDir, name: string, version: number, manifest: Manifest): void {
		// Every folder and file is made through the descriptor of the folder it is in, never through a link.
		const temp = mounts.child(name, true, 0o755)!;
		const folders = new Map<string, ConfinedDir>([['', temp]]);
		try {
			const seen = new Set<string>();
			for (const file of manifest.files) {
				if (seen.has(file.path)) {
					// Only a snapshot from before names were read as bytes could hold one path twice.
					throw new DeskError(
						'manifest.corrupt',
						`Version ${version} names ${JSON.stringify(file.path)} twice; it cannot be laid out. Take a new snapshot of the folder.`,
						{ path: file.path, version },
					);
				}
				seen.add(file.path);
				// Paths were checked when the manifest was read (no '', '.', '..', NUL or leading '/').
				const parts = file.path.split('/');
				const fileName = parts.pop()!;
				let dir = temp;
				let at = '';
				for (const part of parts) {
					at = at === '' ? part : `${at}/${part}`;
					let next = folders.get(at);
					if (!next) {
						next = dir.child(part, true, 0o755)!;
						folders.set(at, next);
					}
					dir = next;
				}
				const fd = dir.createFile(fileName, mountFileMode(file));
				try {
					writeAll(fd, this.blobs.get(file.hash));
					fs.fsyncSync(fd);
				} finally {
					fs.closeSync(fd);
				}
			}
			for (const dir of folders.values()) {
				dir.chmod(mountFolderMode);
				dir.fsync();
			}
		} finally {
			for (const dir of folders.values()) {
				dir.close();
			}
		}
	}

	/**
	 * Hashes (and with a batch, stores) a file read through one descriptor opened in its folder's
	 * descriptor, without following a link and without blocking (a file swapped for a FIFO is
	 * refused, never waited on). Hash and size come from the same bytes; a file whose fstat changed
	 * while it was read, or whose bytes do not match its size, is read again, and after
	 * `readAttempts` reads that never settled it is reported (a string: the reason), never recorded.
	 */
	private async readFile(
		dir: ConfinedDir,
		name: string,
		batch: ReturnType<BlobStore['batch']> | undefined,
	): Promise<{ hash: string; size: number; stat: fs.Stats } | string> {
		let opened: { fd: number; stat: fs.Stats };
		try {
			opened = dir.openFile(name);
		} catch (error) {
			if (isDeskError(error, 'attachment.notRegular')) {
				return 'changed into a link or something other than a file while the folder was read (never followed)';
			}
			if (isDeskError(error, 'attachment.unavailable')) {
				return 'vanished while the folder was read';
			}
			return `unreadable file: ${((error as DeskError).data?.errno as string | undefined) ?? (error as Error).message}`;
		}
		const { fd } = opened;
		try {
			let before = opened.stat;
			for (let attempt = 0; attempt < readAttempts; attempt++) {
				if (attempt > 0) {
					await new Promise((resolve) => setImmediate(resolve));
					before = fs.fstatSync(fd);
				}
				let hash: string;
				let size: number;
				let bytes: Buffer | undefined;
				if (before.size > streamAbove) {
					const stream = () => fs.createReadStream('', { fd, autoClose: false, start: 0, highWaterMark: 1024 * 1024 });
					if (batch) {
						// Stored as it streams: a torn read leaves an unreferenced blob, never a version.
						({ hash, size } = await this.blobs.putStream(stream()));
					} else {
						const hasher = createHash('sha256');
						size = 0;
						for await (const chunk of stream() as AsyncIterable<Buffer>) {
							hasher.update(chunk);
							size += chunk.length;
						}
						hash = hasher.digest('hex');
					}
				} else {
					// One byte more than the size: a file that grew while read is seen to have.
					bytes = readAt(fd, before.size + 1);
					size = bytes.length;
					hash = createHash('sha256').update(bytes).digest('hex');
				}
				const after = fs.fstatSync(fd);
				if (
					size === before.size &&
					size === after.size &&
					after.mtimeMs === before.mtimeMs &&
					after.ctimeMs === before.ctimeMs
				) {
					if (bytes) {
						batch?.add(bytes, hash);
					}
					return { hash, size, stat: after };
				}
			}
			return `kept changing while it was read (${readAttempts} reads): not stored`;
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
			const value = JSON.parse(fs.readFileSync(file, 'utf8')) as {
				format?: number;
				entries?: Record<string, StatEntry>;
			};
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

/** Renames `from` to `to` in `dir`; one already gone (another process moved it) is fine. */
function renameUnlessGone(dir: ConfinedDir, from: string, to: string): void {
	try {
		dir.rename(from, to);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
			throw error;
		}
	}
}

/**
 * Removes the folder `name` of the mounts folder `parent`, read-only as it is: its folders get
 * their write bit back first (through descriptors, never through a link). Best effort: what cannot
 * be removed is left under its `.desk-tmp-` name, never mistaken for a mount.
 */
function removeReadOnlyTree(parent: string, mounts: ConfinedDir, name: string): void {
	try {
		makeWritable(path.join(parent, name));
		mounts.removeTree(name);
	} catch {
		// Left for a later removal; the mount in place is what counts.
	}
}

/**
 * A folder's entries with their names as bytes. Read as strings first (faster, and what almost every
 * folder holds): a decoded name without U+FFFD was valid UTF-8, so its bytes are its encoding; only a
 * folder with a U+FFFD in some name is read again raw, to tell a real U+FFFD from a replaced byte.
 */
function namesOf(dir: ConfinedDir): Array<{ name: Buffer | string; kind: EntryKind }> {
	const entries = dir.entries();
	return entries.some((e) => e.name.includes('\uFFFD')) ? dir.rawEntries() : entries;
}

/** Reads from offset 0 up to `limit` bytes, or to the end of the file. */
function readAt(fd: number, limit: number): Buffer {
	const buffer = Buffer.allocUnsafe(limit);
	let total = 0;
	while (total < limit) {
		const read = fs.readSync(fd, buffer, total, limit - total, total);
		if (read === 0) {
			break;
		}
		total += read;
	}
	return buffer.subarray(0, total);
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
