import * as fs from 'node:fs';
import * as path from 'node:path';
import { inflateSync } from 'node:zlib';

/**
 * A read-only reader of a repository's objects (packs with their v2 indexes, and loose objects),
 * for the one hot path where isomorphic-git's per-call overhead is too much: walking tens of
 * thousands of first-parent commits (it probes the file system on every readCommit; ~0.3 ms a
 * commit against git's ~5 µs). It runs no program and follows no repository configuration; what it
 * cannot read (SHA-256 repositories, alternates, pack index v1) it reports as not found, and the
 * caller falls back to isomorphic-git.
 */

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

export interface GitObject {
	type: ObjectType;
	data: Buffer;
}

const typeNames: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const ofsDelta = 6;
const refDelta = 7;
/** Packs up to this size are read into memory whole; larger ones are read object by object. */
const wholePackLimit = 64 * 1024 * 1024;

export class GitObjectStore {
	private packs: Pack[] | undefined;
	private packDirMtime = -1;

	constructor(private readonly gitDir: string) {}

	/** The object, or undefined when it is not in a pack or loose (or the repository is of a kind this reader does not know). */
	read(oid: string): GitObject | undefined {
		if (!/^[0-9a-f]{40}$/.test(oid)) {
			return undefined;
		}
		const key = Buffer.from(oid, 'hex');
		// The packs known so far first; the pack folder is looked at again only when they miss
		// (a fetch or gc since), so a walk of 20,000 commits costs no 20,000 stat calls.
		const found = this.readPacked(key, this.packs ?? this.loadPacks()) ?? this.readLoose(oid);
		if (found || this.packs === undefined) {
			return found;
		}
		const before = this.packs;
		const now = this.loadPacks();
		return now === before ? undefined : this.readPacked(key, now);
	}

	private readPacked(key: Buffer, packs: Pack[]): GitObject | undefined {
		for (const pack of packs) {
			const found = pack.read(key, (base) => this.readRaw(base));
			if (found) {
				return found;
			}
		}
		return undefined;
	}

	close(): void {
		for (const pack of this.packs ?? []) {
			pack.close();
		}
		this.packs = undefined;
	}

	/** Ref-delta bases; a chain longer than any git writes is treated as a cycle. */
	private resolving = 0;

	private readRaw(key: Buffer): GitObject | undefined {
		if (this.resolving >= 64) {
			return undefined;
		}
		this.resolving++;
		try {
			return this.read(key.toString('hex'));
		} finally {
			this.resolving--;
		}
	}

	private readLoose(oid: string): GitObject | undefined {
		let bytes: Buffer;
		try {
			bytes = inflateSync(fs.readFileSync(path.join(this.gitDir, 'objects', oid.slice(0, 2), oid.slice(2))));
		} catch {
			return undefined;
		}
		const space = bytes.indexOf(0x20);
		const nul = bytes.indexOf(0);
		const type = bytes.subarray(0, space).toString('latin1') as ObjectType;
		if (space < 0 || nul < space || !['commit', 'tree', 'blob', 'tag'].includes(type)) {
			return undefined;
		}
		return { type, data: bytes.subarray(nul + 1) };
	}

	private loadPacks(): Pack[] {
		const dir = path.join(this.gitDir, 'objects', 'pack');
		let mtime: number;
		try {
			mtime = fs.statSync(dir).mtimeMs;
		} catch {
			return [];
		}
		// A repack or fetch adds or removes packs, and changes the folder's mtime.
		if (this.packs && mtime === this.packDirMtime) {
			return this.packs;
		}
		this.close();
		const packs: Pack[] = [];
		for (const name of fs.readdirSync(dir)) {
			if (name.endsWith('.idx')) {
				const pack = Pack.open(path.join(dir, name), path.join(dir, `${name.slice(0, -4)}.pack`));
				if (pack) {
					packs.push(pack);
				}
			}
		}
		this.packs = packs;
		this.packDirMtime = mtime;
		return packs;
	}
}

class Pack {
	private whole: Buffer | undefined;
	/** Objects resolved from deltas, by offset: a first-parent walk resolves each chain once. */
	private readonly resolved = new Map<number, GitObject>();

	private constructor(
		/** Opened when the pack is found: a gc that deletes the file later leaves it readable to us. */
		private readonly fd: number,
		private readonly packSize: number,
		private readonly fanout: Uint32Array,
		private readonly oids: Buffer,
		private readonly offsets: Buffer,
		private readonly largeOffsets: Buffer,
	) {}

	static open(idxFile: string, packFile: string): Pack | undefined {
		let idx: Buffer;
		let fd: number;
		let packSize: number;
		try {
			idx = fs.readFileSync(idxFile);
			fd = fs.openSync(packFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
			packSize = fs.fstatSync(fd).size;
		} catch {
			return undefined;
		}
		// Version 2 only: magic "\377tOc", then version 2.
		if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) {
			fs.closeSync(fd);
			return undefined;
		}
		const fanout = new Uint32Array(256);
		for (let i = 0; i < 256; i++) {
			fanout[i] = idx.readUInt32BE(8 + i * 4);
		}
		const count = fanout[255]!;
		const oidsStart = 8 + 1024;
		const offsetsStart = oidsStart + count * 20 + count * 4;
		const largeStart = offsetsStart + count * 4;
		if (idx.length < largeStart + 40) {
			fs.closeSync(fd);
			return undefined;
		}
		return new Pack(fd, packSize, fanout, idx.subarray(oidsStart, oidsStart + count * 20), idx.subarray(offsetsStart, largeStart), idx.subarray(largeStart, idx.length - 40));
	}

	read(key: Buffer, readBase: (key: Buffer) => GitObject | undefined): GitObject | undefined {
		const offset = this.find(key);
		return offset === undefined ? undefined : this.readAt(offset, readBase, 0);
	}

	close(): void {
		fs.closeSync(this.fd);
		this.whole = undefined;
		this.resolved.clear();
	}

	private find(key: Buffer): number | undefined {
		const first = key[0]!;
		let low = first === 0 ? 0 : this.fanout[first - 1]!;
		let high = this.fanout[first]!;
		while (low < high) {
			const mid = (low + high) >>> 1;
			const order = key.compare(this.oids, mid * 20, mid * 20 + 20);
			if (order === 0) {
				const small = this.offsets.readUInt32BE(mid * 4);
				return small & 0x80000000 ? Number(this.largeOffsets.readBigUInt64BE((small & 0x7fffffff) * 8)) : small;
			}
			if (order < 0) {
				high = mid;
			} else {
				low = mid + 1;
			}
		}
		return undefined;
	}

	private readAt(offset: number, readBase: (key: Buffer) => GitObject | undefined, depth: number): GitObject | undefined {
		const cached = this.resolved.get(offset);
		if (cached) {
			return cached;
		}
		if (depth > 10_000) {
			return undefined;
		}
		let head = this.bytes(offset, 64);
		let at = 0;
		let c = head[at++]!;
		const type = (c >> 4) & 7;
		let size = c & 15;
		let shift = 4;
		while (c & 0x80) {
			c = head[at++]!;
			size += (c & 0x7f) * 2 ** shift;
			shift += 7;
		}
		let base: GitObject | undefined;
		if (type === ofsDelta) {
			c = head[at++]!;
			let back = c & 127;
			while (c & 128) {
				c = head[at++]!;
				back = (back + 1) * 128 + (c & 127);
			}
			if (back <= 0 || back > offset) {
				return undefined; // A base outside the pack: damage, not something to follow.
			}
			base = this.readAt(offset - back, readBase, depth + 1);
		} else if (type === refDelta) {
			base = readBase(Buffer.from(head.subarray(at, at + 20)));
			at += 20;
		} else if (!typeNames[type]) {
			return undefined;
		}
		if ((type === ofsDelta || type === refDelta) && !base) {
			return undefined;
		}
		const data = this.inflateAt(offset + at, size);
		if (!base) {
			return { type: typeNames[type]!, data };
		}
		const object = { type: base.type, data: applyDelta(base.data, data) };
		if (this.resolved.size > 256) {
			this.resolved.delete(this.resolved.keys().next().value!);
		}
		this.resolved.set(offset, object);
		head = Buffer.alloc(0);
		return object;
	}

	private inflateAt(position: number, size: number): Buffer {
		// Deflate adds a few bytes per 16 KiB; start with room for that and grow if the stream is cut.
		let length = size + 64 + (size >> 10);
		for (;;) {
			const input = this.bytes(position, length);
			try {
				// An output chunk of the object's size: the default 16 KiB per call is most of the cost
				// (allocation and garbage) when thousands of small commits are read.
				return inflateSync(input, { chunkSize: Math.max(64, size) });
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'Z_BUF_ERROR' || position + length >= this.packSize) {
					throw error;
				}
				length *= 2;
			}
		}
	}

	private bytes(position: number, length: number): Buffer {
		const end = Math.min(this.packSize, position + length);
		if (this.packSize <= wholePackLimit) {
			if (!this.whole) {
				this.whole = Buffer.allocUnsafe(this.packSize);
				fs.readSync(this.fd, this.whole, 0, this.packSize, 0);
			}
			return this.whole.subarray(position, end);
		}
		const buffer = Buffer.allocUnsafe(end - position);
		const read = fs.readSync(this.fd, buffer, 0, buffer.length, position);
		return buffer.subarray(0, read);
	}
}

function applyDelta(base: Buffer, delta: Buffer): Buffer {
	let at = 0;
	const varint = () => {
		let value = 0;
		let shift = 0;
		let c;
		do {
			c = delta[at++]!;
			value += (c & 0x7f) * 2 ** shift;
			shift += 7;
		} while (c & 0x80);
		return value;
	};
	if (varint() !== base.length) {
		throw new Error('delta base size does not match its base');
	}
	const declared = varint();
	const out = Buffer.alloc(declared);
	let written = 0;
	while (at < delta.length) {
		const op = delta[at++]!;
		if (op & 0x80) {
			let copyOffset = 0;
			let copySize = 0;
			for (let bit = 0; bit < 4; bit++) {
				if (op & (1 << bit)) {
					copyOffset += delta[at++]! * 2 ** (8 * bit);
				}
			}
			for (let bit = 0; bit < 3; bit++) {
				if (op & (16 << bit)) {
					copySize += delta[at++]! << (8 * bit);
				}
			}
			if (copySize === 0) {
				copySize = 0x10000;
			}
			if (copyOffset + copySize > base.length || written + copySize > declared) {
				throw new Error('delta copies outside its base or result');
			}
			written += base.copy(out, written, copyOffset, copyOffset + copySize);
		} else if (op > 0) {
			if (at + op > delta.length || written + op > declared) {
				throw new Error('delta inserts past its end');
			}
			written += delta.copy(out, written, at, at + op);
			at += op;
		} else {
			throw new Error('invalid delta instruction 0');
		}
	}
	if (written !== declared) {
		throw new Error(`delta made ${written} bytes, not the ${declared} it declares`);
	}
	return out;
}

export interface ParsedCommit {
	tree: string;
	parents: string[];
	/** Seconds since the epoch and the committer's offset in minutes east of UTC. */
	committerTime: number;
	committerOffsetMinutes: number;
	message: string;
}

/** The fields of a commit object this desk reads; header continuation lines (signatures) are skipped. */
export function parseCommit(data: Buffer): ParsedCommit | undefined {
	const text = data.toString('utf8');
	const commit: ParsedCommit = { tree: '', parents: [], committerTime: 0, committerOffsetMinutes: 0, message: '' };
	let at = 0;
	while (at < text.length) {
		const end = text.indexOf('\n', at);
		const lineEnd = end < 0 ? text.length : end;
		if (lineEnd === at) {
			commit.message = text.slice(at + 1);
			break;
		}
		// Only the first characters tell the header; a signature's continuation lines start with a space.
		if (text.startsWith('parent ', at)) {
			commit.parents.push(text.slice(at + 7, lineEnd));
		} else if (text.startsWith('tree ', at)) {
			commit.tree = text.slice(at + 5, lineEnd);
		} else if (text.startsWith('committer ', at)) {
			const match = / (\d+) ([+-])(\d\d)(\d\d)$/.exec(text.slice(at, lineEnd));
			if (match) {
				commit.committerTime = Number(match[1]);
				commit.committerOffsetMinutes = (match[2] === '-' ? -1 : 1) * (Number(match[3]) * 60 + Number(match[4]));
			}
		}
		at = lineEnd + 1;
	}
	return commit.tree ? commit : undefined;
}
