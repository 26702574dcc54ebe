import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inflateSync } from 'node:zlib';
import { DeskError } from '../core/errors';
import { ByteLru } from './byteLru';
import { Inflater } from './inflater';
import { maxObjectBytes, Pack, type GitObject, type ObjectType, type PackCaches } from './pack';

export type { GitObject, ObjectType };

/** How long a pack folder listing is trusted before it is looked at again (a gc or fetch may change it). */
const packListFreshMs = 2_000;
/** `objects/info/alternates` may name further object folders; git stops at this depth too. */
const maxAlternateDepth = 5;

export interface ObjectStoreOptions {
	/** Bytes of resolved objects and delta bases kept (default 48 MiB). */
	objectCacheBytes?: number;
	/** Bytes of pack index buckets kept (default 32 MiB). */
	indexCacheBytes?: number;
	/** Bytes of pack windows kept (default 32 MiB). */
	windowCacheBytes?: number;
	/** False: every stream through `inflateSync` (the path taken where Node's zlib handle is not as expected). */
	reuseZlibState?: boolean;
}

/**
 * The one reader of a repository's objects: packs through their indexes (see Pack), loose objects,
 * and the object folders `objects/info/alternates` names. It reads only the objects it is asked for,
 * keeps bounded caches, verifies every object it returns against its name, runs no program and
 * follows no configuration. A pack added by a fetch or gc is found on the next miss (or within two
 * seconds); a pack removed by gc is closed then, and until then stays readable through its open
 * descriptor.
 */
export class GitObjectStore {
	private readonly caches: PackCaches;
	private readonly folders: ObjectFolder[];
	private nextPackId = 1;
	/** Ref-delta bases being resolved: a chain longer than any git writes is a cycle. */
	private resolving = 0;

	constructor(
		private readonly objectsDir: string,
		readonly hashLength: 20 | 32 = 20,
		options: ObjectStoreOptions = {},
	) {
		this.caches = {
			index: { used: 0, budget: options.indexCacheBytes ?? 32 * 1024 * 1024 },
			objects: new ByteLru<number, GitObject>(options.objectCacheBytes ?? 48 * 1024 * 1024),
			windows: new ByteLru<number, Buffer>(options.windowCacheBytes ?? 32 * 1024 * 1024),
			inflater: new Inflater(options.reuseZlibState ?? true),
		};
		this.folders = collectFolders(objectsDir, maxAlternateDepth).map(
			(dir) => new ObjectFolder(dir, hashLength, this.caches, () => this.nextPackId++),
		);
	}

	/** The object; `git.missingObject` when no pack or loose file has it, `git.corrupt` when the one that has it is damaged. */
	read(oid: string): GitObject {
		const found = this.tryRead(oid);
		if (!found) {
			const damaged = this.damagedPacks();
			if (damaged.length > 0) {
				throw new DeskError(
					'git.corrupt',
					`Object ${oid} is not in ${this.objectsDir}, which has a damaged pack: ${damaged[0]}`,
					{ oid, damaged },
				);
			}
			throw new DeskError('git.missingObject', `Object ${oid} is not in ${this.objectsDir}.`, { oid });
		}
		return found;
	}

	/**
	 * The object, or undefined when it is not there (a shallow clone's end, a ref to nothing).
	 * `verify: false` skips hashing it (as git itself does on every read): for a walk of thousands
	 * of commits whose bytes are only listed, where zlib's own checksum and the parse still catch
	 * damage. Everything a person reads or lands is verified.
	 */
	tryRead(oid: string, options: { verify?: boolean } = {}): GitObject | undefined {
		if (oid.length !== this.hashLength * 2 || !/^[0-9a-f]+$/.test(oid)) {
			throw new DeskError(
				'git.badRef',
				`${JSON.stringify(oid.slice(0, 80))} is not a ${this.hashLength === 20 ? 'SHA-1' : 'SHA-256'} object name.`,
				{ oid: oid.slice(0, 80) },
			);
		}
		const key = Buffer.from(oid, 'hex');
		const object = this.lookup(key, oid, false) ?? this.lookup(key, oid, true);
		if (object && options.verify !== false) {
			verify(object, key, this.hashLength, oid);
		}
		return object;
	}

	/**
	 * For a walk over thousands of objects that keeps only a few fields of each: the object named by
	 * `key` (its raw bytes), unverified (as `tryRead(oid, { verify: false })`), its bytes valid only
	 * until the next `peek` when it came whole from a pack (no memory of its own); anything else is
	 * read as `tryRead` reads it. With `enough`, a packed object's bytes may stop where `enough` is
	 * satisfied (see Pack.peekAt).
	 */
	peek(key: Buffer, enough?: (made: Buffer, length: number) => boolean): GitObject | undefined {
		if (key.length === this.hashLength) {
			for (const folder of this.folders) {
				const found = folder.peekPacked(key, enough);
				if (found) {
					return found;
				}
			}
		}
		return this.tryRead(key.toString('hex'), { verify: false });
	}

	has(oid: string): boolean {
		try {
			return this.tryRead(oid) !== undefined;
		} catch {
			return false;
		}
	}

	close(): void {
		for (const folder of this.folders) {
			folder.close();
		}
		this.caches.objects.clear();
		this.caches.windows.clear();
		this.caches.inflater.close();
	}

	/** Descriptions of packs that do not match their indexes. */
	damagedPacks(): string[] {
		return this.folders.flatMap((f) => f.damaged());
	}

	/** Looks in every folder; with `rescan`, after looking at the pack folders again (a miss). */
	private lookup(key: Buffer, oid: string, rescan: boolean): GitObject | undefined {
		for (const folder of this.folders) {
			if (rescan && !folder.rescan()) {
				continue;
			}
			const found =
				folder.readPacked(key, (base) => this.readBase(base)) ?? (rescan ? undefined : folder.readLoose(oid));
			if (found) {
				return found;
			}
		}
		return undefined;
	}

	private readBase(key: Buffer): GitObject {
		if (this.resolving >= 64) {
			throw new DeskError(
				'git.corrupt',
				`Ref-delta bases in ${this.objectsDir} form a chain longer than 64 (a cycle).`,
				{ oid: key.toString('hex') },
			);
		}
		this.resolving++;
		try {
			const oid = key.toString('hex');
			const base = this.lookup(key, oid, false) ?? this.lookup(key, oid, true);
			if (!base) {
				throw new DeskError('git.corrupt', `A delta in ${this.objectsDir} names base ${oid}, which is not there.`, {
					oid,
				});
			}
			return base;
		} finally {
			this.resolving--;
		}
	}
}

/** One `objects` folder: its packs (listed again when the folder changes) and loose objects. */
class ObjectFolder {
	private packs: Pack[] | undefined;
	private listedAt = 0;
	private packDirMtime = -1;
	/** Where the last object was found: objects asked together are usually in the same pack. */
	private lastHit = 0;
	private readonly broken = new Map<string, string>();

	constructor(
		private readonly dir: string,
		private readonly hashLength: number,
		private readonly caches: PackCaches,
		private readonly newPackId: () => number,
	) {}

	readPacked(key: Buffer, readBase: (key: Buffer) => GitObject): GitObject | undefined {
		const found = this.findPacked(key);
		return found && found.pack.readAt(found.offset, readBase);
	}

	/** The object through its pack's `peekAt`, when a pack holds it whole; undefined otherwise. */
	peekPacked(key: Buffer, enough?: (made: Buffer, length: number) => boolean): GitObject | undefined {
		const found = this.findPacked(key);
		return found && found.pack.peekAt(found.offset, enough);
	}

	/** The pack that lists `key`, and where in it: the pack of the last hit asked first (objects asked together are usually together). */
	private findPacked(key: Buffer): { pack: Pack; offset: number } | undefined {
		const packs = this.currentPacks();
		for (let i = 0; i < packs.length; i++) {
			const index = (this.lastHit + i) % packs.length;
			const pack = packs[index]!;
			const offset = pack.find(key);
			if (offset !== undefined) {
				this.lastHit = index;
				return { pack, offset };
			}
		}
		return undefined;
	}

	readLoose(oid: string): GitObject | undefined {
		const file = path.join(this.dir, oid.slice(0, 2), oid.slice(2));
		let raw: Buffer;
		try {
			const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
			try {
				if (!fs.fstatSync(fd).isFile()) {
					return undefined;
				}
				raw = fs.readFileSync(fd);
			} finally {
				fs.closeSync(fd);
			}
		} catch {
			return undefined;
		}
		let bytes: Buffer;
		try {
			bytes = inflateSync(raw, { maxOutputLength: maxObjectBytes + 64 });
		} catch (error) {
			throw new DeskError('git.corrupt', `Loose object ${oid} does not inflate: ${(error as Error).message}.`, {
				oid,
				file,
			});
		}
		const space = bytes.indexOf(0x20);
		const nul = bytes.indexOf(0);
		const type = bytes.toString('latin1', 0, Math.max(space, 0));
		const size = Number(bytes.toString('latin1', space + 1, Math.max(nul, 0)));
		if (
			space < 0 ||
			nul < space ||
			!['commit', 'tree', 'blob', 'tag'].includes(type) ||
			size !== bytes.length - nul - 1
		) {
			throw new DeskError('git.corrupt', `Loose object ${oid} has no valid header.`, { oid, file });
		}
		return { type: type as ObjectType, data: bytes.subarray(nul + 1) };
	}

	/** Looks at the pack folder again; true when its packs changed (worth looking up again). */
	rescan(): boolean {
		const before = this.packs;
		this.listedAt = 0;
		return this.currentPacks() !== before;
	}

	damaged(): string[] {
		return [
			...this.broken.values(),
			...(this.packs ?? []).filter((p) => p.damage).map((p) => `${path.basename(p.packFile)}: ${p.damage}`),
		];
	}

	close(): void {
		for (const pack of this.packs ?? []) {
			pack.close();
		}
		this.packs = undefined;
	}

	private currentPacks(): Pack[] {
		const now = Date.now();
		if (this.packs && now - this.listedAt < packListFreshMs) {
			return this.packs;
		}
		this.listedAt = now;
		const packDir = path.join(this.dir, 'pack');
		let mtime: number;
		try {
			mtime = fs.statSync(packDir).mtimeMs;
		} catch {
			mtime = -2;
		}
		// Adding or removing a pack changes the folder's mtime.
		if (this.packs && mtime === this.packDirMtime) {
			return this.packs;
		}
		this.packDirMtime = mtime;
		const names = mtime === -2 ? [] : fs.readdirSync(packDir).filter((n) => n.endsWith('.idx'));
		const old = new Map((this.packs ?? []).map((p) => [p.packFile, p]));
		const packs: Pack[] = [];
		this.broken.clear();
		for (const name of names) {
			const packFile = path.join(packDir, `${name.slice(0, -4)}.pack`);
			const kept = old.get(packFile);
			if (kept) {
				old.delete(packFile);
				packs.push(kept);
				continue;
			}
			if (!fs.existsSync(packFile)) {
				continue; // An index whose pack is not there (yet, or any more).
			}
			try {
				packs.push(Pack.open(this.newPackId(), path.join(packDir, name), packFile, this.hashLength, this.caches));
			} catch (error) {
				this.broken.set(name, `${name}: ${(error as Error).message}`);
			}
		}
		for (const gone of old.values()) {
			gone.close();
		}
		// Largest first: the big pack of a clone holds most objects; later small ones hold the rest.
		packs.sort((a, b) => b.count - a.count);
		this.packs = packs;
		this.lastHit = 0;
		return packs;
	}
}

function verify(object: GitObject, key: Buffer, hashLength: number, oid: string): void {
	const hash = createHash(hashLength === 20 ? 'sha1' : 'sha256')
		.update(`${object.type} ${object.data.length}\0`)
		.update(object.data)
		.digest();
	if (!hash.equals(key)) {
		throw new DeskError('git.corrupt', `Object ${oid} is damaged: its bytes hash to ${hash.toString('hex')}.`, {
			oid,
			actual: hash.toString('hex'),
		});
	}
}

/** The objects folder and the folders its alternates name, depth first, each once. */
function collectFolders(objectsDir: string, depth: number, seen = new Set<string>()): string[] {
	const resolved = path.resolve(objectsDir);
	if (seen.has(resolved) || depth < 0) {
		return [];
	}
	seen.add(resolved);
	const folders = [resolved];
	let text = '';
	try {
		const fd = fs.openSync(path.join(resolved, 'info', 'alternates'), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
		try {
			if (fs.fstatSync(fd).isFile()) {
				text = fs.readFileSync(fd, 'utf8').slice(0, 64 * 1024);
			}
		} finally {
			fs.closeSync(fd);
		}
	} catch {
		return folders;
	}
	for (const line of text.split('\n')) {
		const entry = line.trim();
		if (entry === '' || entry.startsWith('#') || entry.startsWith('"')) {
			continue; // Quoted (C-style) paths are rare; they are left out rather than guessed at.
		}
		folders.push(...collectFolders(path.resolve(resolved, entry), depth - 1, seen));
	}
	return folders;
}
