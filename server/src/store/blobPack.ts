import * as fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { DeskError } from '../core/errors';
import { writeAll } from './durableFile';

/**
 * One blob pack: an immutable file holding many small blobs and their sorted index. It is written
 * whole under a temp name, made durable and only then renamed into `packs/`, so a pack under its
 * final name is always complete; the index is inside the same file, so no index ever names bytes
 * that are not there. Packs are never changed after that, only removed once their blobs are in
 * another pack (consolidation).
 *
 * Format 1 (integers big-endian):
 *
 *     header   "DESKPACK" | u32 format | u32 count                                          16 bytes
 *     data     the blobs' bytes, one after another, in the order they were added
 *     index    fanout   256 × u32: how many entries have a first name byte ≤ b             1,024 bytes
 *              crcs     256 × u32: crc32 of the entries of first byte b (one "bucket")      1,024 bytes
 *              entries  count × (name 32 | offset u64 | size u32), sorted by name         44 bytes each
 *     trailer  u64 index offset | u32 count | u32 crc32 of header, fanout and crcs | "DESKPEND"   24 bytes
 *
 * A reader checks the trailer, header and fanout when it opens a pack (2 KB), and loads the entries
 * of one bucket when a lookup first needs it (checking its crc, its order and its bounds), so a cold
 * process pays for the buckets it touches, not for the whole index. The blobs' bytes are verified by
 * the store against their names on every read.
 */
export const packFormat = 1;
const headerMagic = Buffer.from('DESKPACK', 'latin1');
const trailerMagic = Buffer.from('DESKPEND', 'latin1');
const headerBytes = 16;
const tableBytes = 256 * 4;
const entryBytes = 44;
const trailerBytes = 24;
const nameBytes = 32;

export interface PackEntry {
	/** The blob's sha256, 64 lowercase hex. */
	name: string;
	offset: number;
	size: number;
}

/** A pack that cannot be trusted: truncated, not a pack, or with an index that fails its checks. */
export function packDamaged(file: string, reason: string): DeskError {
	return new DeskError(
		'store.corrupt',
		`Blob pack ${file} is damaged (${reason}); none of its blobs is served from it. The file is left as it is.`,
		{ file, reason },
	);
}

export class PackReader {
	/** Entries of each bucket, loaded and checked on first use. */
	private readonly buckets: Array<Buffer | undefined> = new Array<Buffer | undefined>(256);
	private fd: number | undefined;

	private constructor(
		readonly file: string,
		fd: number,
		/** Size of the pack file in bytes. */
		readonly bytes: number,
		readonly count: number,
		private readonly indexOffset: number,
		private readonly fanout: Uint32Array,
		private readonly crcs: Uint32Array,
	) {
		this.fd = fd;
	}

	/**
	 * Opens a pack and checks its frame (sizes, magic numbers, fanout, the crc of the tables).
	 * Throws `store.corrupt` for a damaged pack, and the file system's error (ENOENT: removed by a
	 * consolidation meanwhile) as it is.
	 */
	static open(file: string): PackReader {
		const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
		try {
			const stat = fs.fstatSync(fd);
			if (!stat.isFile()) {
				throw packDamaged(file, 'not a regular file');
			}
			const size = stat.size;
			if (size < headerBytes + 2 * tableBytes + trailerBytes) {
				throw packDamaged(file, `truncated: ${size} bytes`);
			}
			const trailer = readExactly(fd, file, size - trailerBytes, trailerBytes);
			if (!trailer.subarray(16).equals(trailerMagic)) {
				throw packDamaged(file, 'truncated or not a blob pack: no trailer at its end');
			}
			const indexOffset = readU64(trailer, 0);
			const count = trailer.readUInt32BE(8);
			if (indexOffset < headerBytes || indexOffset + 2 * tableBytes + count * entryBytes + trailerBytes !== size) {
				throw packDamaged(
					file,
					`truncated: its trailer describes ${indexOffset + 2 * tableBytes + count * entryBytes + trailerBytes} bytes, the file has ${size}`,
				);
			}
			const header = readExactly(fd, file, 0, headerBytes);
			if (!header.subarray(0, 8).equals(headerMagic)) {
				throw packDamaged(file, 'not a blob pack: wrong magic number');
			}
			if (header.readUInt32BE(8) !== packFormat) {
				throw new DeskError(
					'store.unknownSchema',
					`Blob pack ${file} has format ${header.readUInt32BE(8)}; this Agent Desk knows ${packFormat}.`,
					{ file, format: header.readUInt32BE(8) },
				);
			}
			if (header.readUInt32BE(12) !== count) {
				throw packDamaged(file, 'its header and trailer disagree on the number of blobs');
			}
			const tables = readExactly(fd, file, indexOffset, 2 * tableBytes);
			if (crc32(tables, crc32(header)) >>> 0 !== trailer.readUInt32BE(12)) {
				throw packDamaged(file, 'the checksum of its index tables does not match');
			}
			const fanout = new Uint32Array(256);
			const crcs = new Uint32Array(256);
			for (let b = 0; b < 256; b++) {
				fanout[b] = tables.readUInt32BE(b * 4);
				crcs[b] = tables.readUInt32BE(tableBytes + b * 4);
				if (b > 0 && fanout[b]! < fanout[b - 1]!) {
					throw packDamaged(file, 'its fanout table is not ordered');
				}
			}
			if (fanout[255] !== count) {
				throw packDamaged(file, 'its fanout table does not add up to its number of blobs');
			}
			return new PackReader(file, fd, size, count, indexOffset, fanout, crcs);
		} catch (error) {
			fs.closeSync(fd);
			throw error;
		}
	}

	/** Where a blob is in this pack, or undefined. Throws `store.corrupt` if its bucket is damaged. */
	find(name: Buffer): { offset: number; size: number } | undefined {
		const bucket = this.bucket(name[0]!);
		let low = 0;
		let high = bucket.length / entryBytes;
		while (low < high) {
			const mid = (low + high) >>> 1;
			const at = mid * entryBytes;
			const order = bucket.compare(name, 0, nameBytes, at, at + nameBytes);
			if (order === 0) {
				return { offset: readU64(bucket, at + nameBytes), size: bucket.readUInt32BE(at + nameBytes + 8) };
			}
			if (order < 0) {
				low = mid + 1;
			} else {
				high = mid;
			}
		}
		return undefined;
	}

	/** The bytes at a place `find` returned, unverified (the store hashes them). */
	read(offset: number, size: number): Buffer {
		return readExactly(this.openFd(), this.file, offset, size);
	}

	/** Every entry, bucket by bucket (so in name order), each bucket checked as it is loaded. */
	*entries(): Generator<PackEntry> {
		for (let b = 0; b < 256; b++) {
			const bucket = this.bucket(b);
			for (let at = 0; at < bucket.length; at += entryBytes) {
				yield {
					name: bucket.toString('hex', at, at + nameBytes),
					offset: readU64(bucket, at + nameBytes),
					size: bucket.readUInt32BE(at + nameBytes + 8),
				};
			}
		}
	}

	close(): void {
		if (this.fd !== undefined) {
			fs.closeSync(this.fd);
			this.fd = undefined;
		}
	}

	private openFd(): number {
		if (this.fd === undefined) {
			throw new DeskError('store.closed', `Blob pack ${this.file} was closed.`, { file: this.file });
		}
		return this.fd;
	}

	private bucket(b: number): Buffer {
		const loaded = this.buckets[b];
		if (loaded) {
			return loaded;
		}
		const first = b === 0 ? 0 : this.fanout[b - 1]!;
		const count = this.fanout[b]! - first;
		const bucket =
			count === 0
				? Buffer.alloc(0)
				: readExactly(
						this.openFd(),
						this.file,
						this.indexOffset + 2 * tableBytes + first * entryBytes,
						count * entryBytes,
					);
		if (crc32(bucket) >>> 0 !== this.crcs[b]) {
			throw packDamaged(
				this.file,
				`the checksum of its index entries ${b.toString(16).padStart(2, '0')}… does not match`,
			);
		}
		for (let at = 0; at < bucket.length; at += entryBytes) {
			if (
				bucket[at] !== b ||
				(at > 0 && bucket.compare(bucket, at - entryBytes, at - entryBytes + nameBytes, at, at + nameBytes) <= 0)
			) {
				throw packDamaged(this.file, `its index entries ${b.toString(16).padStart(2, '0')}… are out of order`);
			}
			const offset = readU64(bucket, at + nameBytes);
			if (offset < headerBytes || offset + bucket.readUInt32BE(at + nameBytes + 8) > this.indexOffset) {
				throw packDamaged(this.file, 'an index entry points outside its data');
			}
		}
		this.buckets[b] = bucket;
		return bucket;
	}
}

/**
 * Builds a pack in a temp file: blobs are appended as they are added (through a 1 MiB buffer, so a
 * snapshot of thousands of small files makes few writes), and `finish()` appends the sorted index
 * and the trailer and writes the header. The caller makes it durable and renames it into place.
 */
export class PackWriter {
	private readonly fd: number;
	private closed = false;
	private readonly entries = new Map<string, { offset: number; size: number }>();
	private readonly stage = Buffer.allocUnsafe(1024 * 1024);
	private staged = 0;
	/** Where the next blob goes. */
	private position = headerBytes;

	constructor(readonly temp: string) {
		this.fd = fs.openSync(
			temp,
			fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
			0o600,
		);
		// The header's place: it is written last, when the count is known.
		this.stage.fill(0, 0, headerBytes);
		this.staged = headerBytes;
	}

	get count(): number {
		return this.entries.size;
	}

	/** Bytes of blob data added so far. */
	get dataBytes(): number {
		return this.position - headerBytes;
	}

	has(name: string): boolean {
		return this.entries.has(name);
	}

	/** Adds a blob under its name (the caller hashed it); a name already added is ignored. */
	add(name: string, bytes: Uint8Array): void {
		if (this.entries.has(name)) {
			return;
		}
		if (bytes.length > this.stage.length - this.staged) {
			this.flush();
		}
		if (bytes.length > this.stage.length) {
			writeAll(this.fd, bytes);
		} else {
			// Copied now: the caller may reuse its buffer once add() returns.
			this.stage.set(bytes, this.staged);
			this.staged += bytes.length;
		}
		this.entries.set(name, { offset: this.position, size: bytes.length });
		this.position += bytes.length;
	}

	/** Writes the index, the trailer and the header. The file is complete, not yet durable. */
	finish(): void {
		this.flush();
		const names = [...this.entries.keys()].sort();
		const fanout = Buffer.alloc(tableBytes);
		const crcs = Buffer.alloc(tableBytes);
		const index = Buffer.alloc(names.length * entryBytes);
		let bucketStart = 0;
		let b = 0;
		const closeBuckets = (upTo: number, end: number) => {
			for (; b < upTo; b++) {
				crcs.writeUInt32BE(crc32(index.subarray(bucketStart * entryBytes, end * entryBytes)) >>> 0, b * 4);
				fanout.writeUInt32BE(end, b * 4);
				bucketStart = end;
			}
		};
		for (const [i, name] of names.entries()) {
			const first = Number.parseInt(name.slice(0, 2), 16);
			closeBuckets(first, i);
			const { offset, size } = this.entries.get(name)!;
			const at = i * entryBytes;
			index.write(name, at, nameBytes, 'hex');
			writeU64(index, offset, at + nameBytes);
			index.writeUInt32BE(size, at + nameBytes + 8);
		}
		closeBuckets(256, names.length);
		const header = Buffer.alloc(headerBytes);
		headerMagic.copy(header, 0);
		header.writeUInt32BE(packFormat, 8);
		header.writeUInt32BE(names.length, 12);
		const trailer = Buffer.alloc(trailerBytes);
		writeU64(trailer, this.position, 0);
		trailer.writeUInt32BE(names.length, 8);
		trailer.writeUInt32BE(crc32(crcs, crc32(fanout, crc32(header))) >>> 0, 12);
		trailerMagic.copy(trailer, 16);
		writeAll(this.fd, Buffer.concat([fanout, crcs, index, trailer]));
		let written = 0;
		while (written < headerBytes) {
			written += fs.writeSync(this.fd, header, written, headerBytes - written, written);
		}
	}

	syncNow(): void {
		fs.fsyncSync(this.fd);
	}

	sync(): Promise<void> {
		return new Promise((resolve, reject) => fs.fsync(this.fd, (error) => (error ? reject(error) : resolve())));
	}

	close(): void {
		if (!this.closed) {
			this.closed = true;
			fs.closeSync(this.fd);
		}
	}

	/** Closes and removes the temp file. */
	abort(): void {
		this.close();
		fs.rmSync(this.temp, { force: true });
	}

	private flush(): void {
		if (this.staged > 0) {
			writeAll(this.fd, this.stage.subarray(0, this.staged));
			this.staged = 0;
		}
	}
}

function readExactly(fd: number, file: string, position: number, length: number): Buffer {
	const buffer = Buffer.allocUnsafe(length);
	let done = 0;
	while (done < length) {
		const n = fs.readSync(fd, buffer, done, length - done, position + done);
		if (n === 0) {
			throw packDamaged(file, `truncated: ${length} bytes at ${position} cannot be read`);
		}
		done += n;
	}
	return buffer;
}

function readU64(buffer: Buffer, at: number): number {
	return buffer.readUInt32BE(at) * 0x1_0000_0000 + buffer.readUInt32BE(at + 4);
}

function writeU64(buffer: Buffer, value: number, at: number): void {
	buffer.writeUInt32BE(Math.floor(value / 0x1_0000_0000), at);
	buffer.writeUInt32BE(value % 0x1_0000_0000, at + 4);
}
