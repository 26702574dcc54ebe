import * as fs from 'node:fs';
import * as path from 'node:path';
import { inflateSync } from 'node:zlib';
import { DeskError } from '../core/errors';
import type { ByteLru } from './byteLru';
import type { Inflater } from './inflater';

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

export interface GitObject {
	type: ObjectType;
	data: Buffer;
}

const typeNames: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const ofsDelta = 6;
const refDelta = 7;
/** The largest object this reader inflates; git itself refuses to work with much larger ones. */
export const maxObjectBytes = 1024 * 1024 * 1024;
/** Longer delta chains than any git writes (its default is 50, --aggressive 250) are damage or a trap. */
const maxChainLength = 10_000;

/** Caches shared by the packs of one object store: index buckets, pack windows and resolved objects, by bytes. */
export interface PackCaches {
	/** Bytes of index buckets held by all packs, and the most they may hold. */
	index: { used: number; budget: number };
	/** Key `packId * 2^40 + offset`: objects (and delta bases) resolved from that pack. */
	objects: ByteLru<number, GitObject>;
	/** Key `packId * 2^32 + window number`: windows of the pack's bytes, as git maps them. */
	windows: ByteLru<number, Buffer>;
	/** One zlib state for the many small streams of a walk or a tree (see Inflater). */
	inflater: Inflater;
}

/**
 * Packs are read in windows of this size (git maps them in windows too): objects read together,
 * such as the commits of a history (a repack puts them side by side) or the trees of a version,
 * then cost one read for many instead of two each.
 */
export const packWindowBytes = 64 * 1024;

/** The walk's window (see Pack.peekAt); objects larger than this are read the usual way. */
const streamWindowBytes = 128 * 1024;

export interface Bucket {
	/** Index of the bucket's first object in the whole index. */
	first: number;
	oids: Buffer;
	/** v2: 4-byte offsets (high bit: index into the large offsets); v1: the entries themselves. */
	offsets: Buffer;
}

/**
 * One pack and its index, read object by object: the index is read a fanout bucket at a time
 * (objects whose oid starts with the same byte) and kept in a bounded cache, objects are read
 * with positioned reads of just their bytes, so a pack of any size costs memory in proportion
 * to what is asked of it. Versions 1 and 2 of the index, packs of version 2 and 3, SHA-1 and
 * SHA-256 object names.
 */
export class Pack {
	private closed = false;
	/** The oids and offsets of each fanout bucket read so far (objects whose oid starts with that byte). */
	private readonly buckets: Array<Bucket | undefined> = new Array<Bucket | undefined>(256);
	private bucketBytes = 0;
	/** The walk's window (see peekAt): where it starts in the pack and how many bytes it holds. */
	private stream: Buffer | undefined;
	private streamStart = 0;
	private streamLength = 0;

	private constructor(
		readonly id: number,
		readonly packFile: string,
		private readonly idxFd: number,
		private readonly packFd: number,
		private readonly packSize: number,
		private readonly version: 1 | 2,
		private readonly fanout: Uint32Array,
		private readonly hashLength: number,
		private readonly caches: PackCaches,
		/** Why the pack cannot be read, when its index is whole but the pack is not (truncated, swapped). */
		readonly damage: string | undefined,
	) {}

	get count(): number {
		return this.fanout[255]!;
	}

	/**
	 * Opens a pack by its index. A damaged index throws `git.corrupt`; a pack that does not match its
	 * index (truncated, another pack's bytes) opens with `damage` set, so that asking it for an object
	 * it lists fails with a clear error instead of wrong bytes.
	 */
	static open(id: number, idxFile: string, packFile: string, hashLength: number, caches: PackCaches): Pack {
		let idxFd: number | undefined;
		let packFd: number | undefined;
		try {
			idxFd = openRegular(idxFile);
			packFd = openRegular(packFile);
			const idxSize = fs.fstatSync(idxFd).size;
			const packSize = fs.fstatSync(packFd).size;
			const head = readExactly(idxFd, 0, Math.min(idxSize, 8 + 1024));
			const version = head.length >= 8 && head.readUInt32BE(0) === 0xff744f63 ? head.readUInt32BE(4) : 1;
			if (version !== 1 && version !== 2) {
				throw corrupt(idxFile, `index version ${version} is not one this reader knows (1 or 2)`);
			}
			const fanoutStart = version === 2 ? 8 : 0;
			if (head.length < fanoutStart + 1024) {
				throw corrupt(idxFile, `the index is ${idxSize} bytes, too short for its header`);
			}
			const fanout = new Uint32Array(256);
			for (let i = 0; i < 256; i++) {
				fanout[i] = head.readUInt32BE(fanoutStart + i * 4);
				if (i > 0 && fanout[i]! < fanout[i - 1]!) {
					throw corrupt(idxFile, 'its fanout table is not sorted');
				}
			}
			const count = fanout[255]!;
			const fixed =
				version === 2
					? 8 + 1024 + count * (hashLength + 8) + 2 * hashLength
					: 1024 + count * (hashLength + 4) + 2 * hashLength;
			const fits =
				version === 2
					? idxSize >= fixed && (idxSize - fixed) % 8 === 0 && (idxSize - fixed) / 8 <= count
					: idxSize === fixed;
			if (!fits) {
				throw corrupt(
					idxFile,
					`the index is ${idxSize} bytes; ${count} objects need ${fixed}${version === 2 ? ' plus large offsets' : ''} (truncated, or not a ${hashLength === 20 ? 'SHA-1' : 'SHA-256'} index)`,
				);
			}
			const expectedPackChecksum = readExactly(idxFd, idxSize - 2 * hashLength, hashLength);
			let damage: string | undefined;
			if (packSize < 12 + hashLength) {
				damage = `the pack is ${packSize} bytes, too short for its header`;
			} else {
				const packHead = readExactly(packFd, 0, 12);
				const packVersion = packHead.readUInt32BE(4);
				if (packHead.toString('latin1', 0, 4) !== 'PACK' || (packVersion !== 2 && packVersion !== 3)) {
					damage = 'it does not start with a version 2 or 3 pack header';
				} else if (packHead.readUInt32BE(8) !== count) {
					damage = `it holds ${packHead.readUInt32BE(8)} objects and its index lists ${count}`;
				} else if (!readExactly(packFd, packSize - hashLength, hashLength).equals(expectedPackChecksum)) {
					damage = `its trailing checksum is not the one its index records (truncated or replaced: ${packSize} bytes)`;
				}
			}
			return new Pack(id, packFile, idxFd, packFd, packSize, version, fanout, hashLength, caches, damage);
		} catch (error) {
			if (idxFd !== undefined) {
				fs.closeSync(idxFd);
			}
			if (packFd !== undefined) {
				fs.closeSync(packFd);
			}
			throw error;
		}
	}

	close(): void {
		if (!this.closed) {
			this.closed = true;
			fs.closeSync(this.idxFd);
			fs.closeSync(this.packFd);
			this.dropBuckets();
			this.stream = undefined;
		}
	}

	private dropBuckets(): void {
		this.buckets.fill(undefined);
		this.caches.index.used -= this.bucketBytes;
		this.bucketBytes = 0;
	}

	/** The offset of the object in the pack, or undefined when the index does not list it. */
	find(key: Buffer): number | undefined {
		const first = key[0]!;
		const bucket = this.bucket(first);
		const h = this.hashLength;
		const stride = this.version === 2 ? h : h + 4;
		const skip = this.version === 2 ? 0 : 4;
		let low = 0;
		let high = bucket.oids.length / stride;
		// Most steps of the search are decided by the first four bytes, compared as a number.
		const head = key.readUInt32BE(0);
		while (low < high) {
			const mid = (low + high) >>> 1;
			const at = mid * stride + skip;
			const other = bucket.oids.readUInt32BE(at);
			const order = head !== other ? (head < other ? -1 : 1) : key.compare(bucket.oids, at, at + h);
			if (order === 0) {
				return this.offsetAt(bucket, mid);
			}
			if (order < 0) {
				high = mid;
			} else {
				low = mid + 1;
			}
		}
		return undefined;
	}

	/**
	 * The object at `offset`, deltas resolved (ofs-deltas within this pack, ref-deltas through
	 * `readBase`, which may find the base in another pack or loose). Throws `git.corrupt` for a
	 * damaged pack, a delta that does not fit its base, or a stream that does not inflate to the
	 * size its header declares.
	 */
	readAt(offset: number, readBase: (oid: Buffer) => GitObject): GitObject {
		if (this.damage) {
			throw corrupt(this.packFile, this.damage);
		}
		const chain: Array<{ offset: number; delta: Buffer }> = [];
		let base: GitObject | undefined;
		let at = offset;
		while (base === undefined) {
			const cached = this.caches.objects.get(this.id * 2 ** 40 + at);
			if (cached) {
				base = cached;
				break;
			}
			if (chain.length > maxChainLength) {
				throw corrupt(this.packFile, `a delta chain at offset ${offset} is longer than ${maxChainLength}`);
			}
			const entry = this.entryAt(at);
			const data = this.inflateAt(entry.dataAt, entry.size, at);
			if (entry.type === ofsDelta) {
				chain.push({ offset: at, delta: data });
				at = entry.baseOffset!;
			} else if (entry.type === refDelta) {
				chain.push({ offset: at, delta: data });
				base = readBase(entry.baseOid!);
			} else {
				base = { type: typeNames[entry.type]!, data };
				if (chain.length > 0) {
					this.caches.objects.set(this.id * 2 ** 40 + at, base, data.length);
				}
			}
		}
		for (let i = chain.length - 1; i >= 0; i--) {
			const link = chain[i]!;
			base = { type: base.type, data: applyDelta(base.data, link.delta, this.packFile, link.offset) };
			// Bases of deltas are asked for again and again (trees of neighbouring versions share them).
			this.caches.objects.set(this.id * 2 ** 40 + link.offset, base, base.data.length);
		}
		return base;
	}

	/**
	 * For a walk: the object at `offset` when the pack stores it whole and it inflates cleanly, its bytes
	 * valid only until the next `peekAt` of any pack of the store (they live in the inflater's scratch
	 * buffer); undefined otherwise (a delta, a large object, damage), and the caller reads it with
	 * `readAt`, which resolves it or says what is wrong. With `enough`, only the start of the object
	 * that satisfies it (see Inflater.inflatePrefix). Reads through one window of its own that
	 * moves along with the walk, so a walk neither fills the window cache nor allocates per object.
	 */
	peekAt(offset: number, enough?: (made: Buffer, length: number) => boolean): GitObject | undefined {
		if (this.damage || offset < 12 || offset >= this.packSize - this.hashLength) {
			return undefined;
		}
		const headLength = Math.min(16 + this.hashLength, this.packSize - this.hashLength - offset);
		this.streamFill(offset, headLength);
		// The bytes straight from the window (a view of them costs an object per commit).
		const window = this.stream!;
		const base = offset - this.streamStart;
		let at = 0;
		let c = window[base + at++]!;
		const type = (c >> 4) & 7;
		let size = c & 15;
		let shift = 4;
		while (c & 0x80 && at < headLength && shift <= 56) {
			c = window[base + at++]!;
			size += (c & 0x7f) * 2 ** shift;
			shift += 7;
		}
		const position = offset + at;
		const most = Math.min(this.packSize - this.hashLength - position, size + 64 + (size >> 10));
		if (c & 0x80 || !typeNames[type] || most > streamWindowBytes) {
			return undefined;
		}
		this.streamFill(position, most);
		const start = position - this.streamStart;
		const data = enough
			? this.caches.inflater.inflatePrefix(this.stream!, size, enough, start, most)
			: this.caches.inflater.inflateTransient(this.stream!, size, start, most);
		return data && { type: typeNames[type]!, data };
	}

	/** Makes the walk's own window hold `length` bytes (at most its size) from `position`, re-read from there when it does not. */
	private streamFill(position: number, length: number): void {
		if (position >= this.streamStart && position + length <= this.streamStart + this.streamLength) {
			return;
		}
		this.stream ??= Buffer.allocUnsafe(streamWindowBytes);
		const wanted = Math.min(streamWindowBytes, this.packSize - position);
		let done = 0;
		while (done < wanted) {
			const read = fs.readSync(this.packFd, this.stream, done, wanted - done, position + done);
			if (read === 0) {
				break;
			}
			done += read;
		}
		this.streamStart = position;
		this.streamLength = done;
		if (done < length) {
			throw corrupt(this.packFile, `it ends at ${position + done} bytes, inside data its index points at`);
		}
	}

	/** The header of the entry at `offset`: its type, inflated size, and where its base and data are. */
	private entryAt(offset: number): {
		type: number;
		size: number;
		dataAt: number;
		baseOffset?: number;
		baseOid?: Buffer;
	} {
		if (offset < 12 || offset >= this.packSize - this.hashLength) {
			throw corrupt(this.packFile, `an object offset ${offset} lies outside the pack`);
		}
		const head = this.read(offset, Math.min(16 + this.hashLength, this.packSize - this.hashLength - offset));
		let at = 0;
		const next = () => {
			if (at >= head.length) {
				throw corrupt(this.packFile, `the object header at offset ${offset} runs past the end`);
			}
			return head[at++]!;
		};
		let c = next();
		const type = (c >> 4) & 7;
		let size = c & 15;
		let shift = 4;
		while (c & 0x80) {
			c = next();
			size += (c & 0x7f) * 2 ** shift;
			shift += 7;
			if (shift > 56) {
				throw corrupt(this.packFile, `the object header at offset ${offset} declares an impossible size`);
			}
		}
		if (size > maxObjectBytes) {
			throw new DeskError(
				'git.unsupported',
				`An object of ${size} bytes in ${path.basename(this.packFile)} is larger than the ${maxObjectBytes} bytes this reader inflates.`,
				{ pack: this.packFile, offset, size },
			);
		}
		if (type === ofsDelta) {
			c = next();
			let back = c & 127;
			while (c & 128) {
				c = next();
				back = (back + 1) * 128 + (c & 127);
			}
			if (back <= 0 || back > offset - 12) {
				throw corrupt(this.packFile, `the delta at offset ${offset} names a base outside the pack`);
			}
			return { type, size, dataAt: offset + at, baseOffset: offset - back };
		}
		if (type === refDelta) {
			if (at + this.hashLength > head.length) {
				throw corrupt(this.packFile, `the delta at offset ${offset} is cut short`);
			}
			return {
				type,
				size,
				dataAt: offset + at + this.hashLength,
				baseOid: Buffer.from(head.subarray(at, at + this.hashLength)),
			};
		}
		if (!typeNames[type]) {
			throw corrupt(this.packFile, `the object at offset ${offset} has type ${type}, not one git writes`);
		}
		return { type, size, dataAt: offset + at };
	}

	private inflateAt(position: number, size: number, offset: number): Buffer {
		const available = this.packSize - this.hashLength - position;
		// The deflated stream's length is not recorded: read what it can take at most (deflate adds a few
		// bytes per 16 KiB), or for a large object a part first, and more when zlib says it needs more.
		const most = Math.min(available, size + 64 + (size >> 10));
		let length = size < 1024 * 1024 ? most : Math.min(most, 64 * 1024 + (size >> 2));
		for (;;) {
			const input = this.read(position, length);
			if (length === most) {
				const whole = this.caches.inflater.inflate(input, size);
				if (whole) {
					return whole;
				}
			}
			let data: Buffer;
			try {
				// An output chunk of the object's size: the default 16 KiB per call is most of the cost
				// when thousands of small commits and trees are read; the cap refuses a stream that inflates
				// past its declared size (a bomb) without making it.
				data = inflateSync(input, {
					chunkSize: Math.min(Math.max(64, size), 1024 * 1024),
					maxOutputLength: Math.max(1, size),
				});
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code === 'Z_BUF_ERROR' && length < most) {
					length = Math.min(most, length * 2);
					continue;
				}
				throw corrupt(this.packFile, `the object at offset ${offset} does not inflate (${(error as Error).message})`);
			}
			if (data.length !== size) {
				throw corrupt(
					this.packFile,
					`the object at offset ${offset} inflates to ${data.length} bytes, not the ${size} its header declares`,
				);
			}
			return data;
		}
	}

	private bucket(first: number): Bucket {
		const cached = this.buckets[first];
		if (cached) {
			return cached;
		}
		const start = first === 0 ? 0 : this.fanout[first - 1]!;
		const end = this.fanout[first]!;
		const count = this.count;
		const h = this.hashLength;
		let bucket: Bucket;
		if (this.version === 2) {
			bucket = {
				first: start,
				oids: this.readIdx(8 + 1024 + start * h, (end - start) * h),
				offsets: this.readIdx(8 + 1024 + count * h + count * 4 + start * 4, (end - start) * 4),
			};
		} else {
			const entries = this.readIdx(1024 + start * (h + 4), (end - start) * (h + 4));
			bucket = { first: start, oids: entries, offsets: entries };
		}
		const bytes = bucket.oids.length + (bucket.offsets === bucket.oids ? 0 : bucket.offsets.length) + 64;
		// Past the budget (an index of millions of objects), this pack starts over with the buckets it needs now.
		if (this.caches.index.used + bytes > this.caches.index.budget) {
			this.dropBuckets();
		}
		this.buckets[first] = bucket;
		this.bucketBytes += bytes;
		this.caches.index.used += bytes;
		return bucket;
	}

	private offsetAt(bucket: Bucket, index: number): number {
		if (this.version === 1) {
			return bucket.offsets.readUInt32BE(index * (this.hashLength + 4));
		}
		const small = bucket.offsets.readUInt32BE(index * 4);
		if (!(small & 0x80000000)) {
			return small;
		}
		const count = this.count;
		const large = this.readIdx(8 + 1024 + count * (this.hashLength + 8) + (small & 0x7fffffff) * 8, 8);
		return Number(large.readBigUInt64BE(0));
	}

	private readIdx(position: number, length: number): Buffer {
		return readExactly(this.idxFd, position, length, this.packFile.replace(/\.pack$/, '.idx'));
	}

	/** Bytes of the pack: small reads through the window cache, large ones straight from the file. */
	private read(position: number, length: number): Buffer {
		const first = Math.floor(position / packWindowBytes);
		const last = Math.floor((position + length - 1) / packWindowBytes);
		if (length > packWindowBytes || length <= 0) {
			return readExactly(this.packFd, position, length, this.packFile);
		}
		const start = position - first * packWindowBytes;
		if (first === last) {
			return this.window(first).subarray(start, start + length);
		}
		// Across two windows: the bytes themselves, rather than both windows copied into one.
		return readExactly(this.packFd, position, length, this.packFile);
	}

	private window(index: number): Buffer {
		const key = this.id * 2 ** 32 + index;
		const cached = this.caches.windows.get(key);
		if (cached) {
			return cached;
		}
		const position = index * packWindowBytes;
		const window = readExactly(
			this.packFd,
			position,
			Math.min(packWindowBytes, this.packSize - position),
			this.packFile,
		);
		this.caches.windows.set(key, window, window.length);
		return window;
	}
}

function openRegular(file: string): number {
	// O_NONBLOCK: a FIFO planted where a pack should be must not hang the desk.
	const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
	if (!fs.fstatSync(fd).isFile()) {
		fs.closeSync(fd);
		throw corrupt(file, 'it is not a regular file');
	}
	return fd;
}

function readExactly(fd: number, position: number, length: number, file = ''): Buffer {
	const buffer = Buffer.allocUnsafe(length);
	let done = 0;
	while (done < length) {
		const read = fs.readSync(fd, buffer, done, length - done, position + done);
		if (read === 0) {
			throw corrupt(file, `it ends at ${position + done} bytes, inside data its index points at`);
		}
		done += read;
	}
	return buffer;
}

function corrupt(file: string, reason: string): DeskError {
	return new DeskError('git.corrupt', `${path.basename(file) || 'A pack'} is damaged: ${reason}.`, { file, reason });
}

/** Applies a git delta (a varint base size, a varint result size, copy and insert instructions). */
export function applyDelta(base: Buffer, delta: Buffer, file = '', offset = 0): Buffer {
	let at = 0;
	const fail = (reason: string) => corrupt(file, `the delta at offset ${offset} ${reason}`);
	const varint = () => {
		let value = 0;
		let shift = 0;
		let c;
		do {
			if (at >= delta.length || shift > 49) {
				throw fail('has a size field cut short');
			}
			c = delta[at++]!;
			value += (c & 0x7f) * 2 ** shift;
			shift += 7;
		} while (c & 0x80);
		return value;
	};
	if (varint() !== base.length) {
		throw fail('was made for a base of another size');
	}
	const declared = varint();
	if (declared > maxObjectBytes) {
		throw fail(`declares a result of ${declared} bytes`);
	}
	const out = Buffer.allocUnsafe(declared);
	let written = 0;
	while (at < delta.length) {
		const op = delta[at++]!;
		if (op & 0x80) {
			let copyOffset = 0;
			let copySize = 0;
			for (let bit = 0; bit < 4; bit++) {
				if (op & (1 << bit)) {
					copyOffset += (delta[at++] ?? 0) * 2 ** (8 * bit);
				}
			}
			for (let bit = 0; bit < 3; bit++) {
				if (op & (16 << bit)) {
					copySize += (delta[at++] ?? 0) << (8 * bit);
				}
			}
			if (at > delta.length) {
				throw fail('ends inside a copy instruction');
			}
			if (copySize === 0) {
				copySize = 0x10000;
			}
			if (copyOffset + copySize > base.length || written + copySize > declared) {
				throw fail('copies outside its base or result');
			}
			written += base.copy(out, written, copyOffset, copyOffset + copySize);
		} else if (op > 0) {
			if (at + op > delta.length || written + op > declared) {
				throw fail('inserts past its end');
			}
			written += delta.copy(out, written, at, at + op);
			at += op;
		} else {
			throw fail('holds the reserved instruction 0');
		}
	}
	if (written !== declared) {
		throw fail(`made ${written} bytes, not the ${declared} it declares`);
	}
	return out;
}
