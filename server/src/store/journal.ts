import * as fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { writeFileDurably } from './durableFile';

/**
 * The write-ahead journal of a sql.js database: one record per acknowledged transaction, appended
 * and fdatasync'ed before the transaction commits in memory, replayed on load over the last full
 * export. It keeps the cost of a durable small change independent of the database's size.
 *
 * File layout (format version 1):
 *   magic "DESKJRN1" (8 bytes)
 *   records: u32le payload length, u32le crc32 of the payload, payload (UTF-8 JSON of JournalRecord)
 */
export const journalMagic = Buffer.from('DESKJRN1', 'ascii');
const recordHeaderBytes = 8;

/** A value a statement may bind. Byte arrays travel through JSON as `{ "$b64": "..." }`. */
export type SqlValue = string | number | null | Uint8Array;

export interface JournalRecord {
	/** Monotonic over the life of the database; the base export names the last seq it contains. */
	seq: number;
	statements: Array<[sql: string, params: SqlValue[]]>;
}

export interface JournalScan {
	records: JournalRecord[];
	/** Byte length of the valid prefix; anything after it is a torn tail or damage. */
	validBytes: number;
	/** Why scanning stopped before the end of the file, if it did. */
	damage?: 'torn-tail' | 'bad-checksum' | 'bad-magic' | 'bad-record';
}

export function encodeRecord(record: JournalRecord): Buffer {
	const payload = Buffer.from(
		JSON.stringify(record, (_key, value: unknown) =>
			value instanceof Uint8Array ? { $b64: Buffer.from(value).toString('base64') } : value,
		),
		'utf8',
	);
	const header = Buffer.alloc(recordHeaderBytes);
	header.writeUInt32LE(payload.length, 0);
	header.writeUInt32LE(crc32(payload), 4);
	return Buffer.concat([header, payload]);
}

export function scanJournal(bytes: Buffer): JournalScan {
	if (bytes.length === 0) {
		return { records: [], validBytes: 0 };
	}
	if (bytes.length < journalMagic.length || !bytes.subarray(0, journalMagic.length).equals(journalMagic)) {
		// A journal torn while its header was first written is shorter than the magic.
		const torn = bytes.length < journalMagic.length && journalMagic.subarray(0, bytes.length).equals(bytes);
		return { records: [], validBytes: 0, damage: torn ? 'torn-tail' : 'bad-magic' };
	}
	const records: JournalRecord[] = [];
	let offset = journalMagic.length;
	while (offset < bytes.length) {
		if (bytes.length - offset < recordHeaderBytes) {
			return { records, validBytes: offset, damage: 'torn-tail' };
		}
		const length = bytes.readUInt32LE(offset);
		const checksum = bytes.readUInt32LE(offset + 4);
		const end = offset + recordHeaderBytes + length;
		if (end > bytes.length) {
			return { records, validBytes: offset, damage: 'torn-tail' };
		}
		const payload = bytes.subarray(offset + recordHeaderBytes, end);
		if (crc32(payload) !== checksum) {
			return { records, validBytes: offset, damage: 'bad-checksum' };
		}
		const record = parseRecord(payload);
		if (record === undefined) {
			return { records, validBytes: offset, damage: 'bad-record' };
		}
		records.push(record);
		offset = end;
	}
	return { records, validBytes: offset };
}

function parseRecord(payload: Buffer): JournalRecord | undefined {
	let value: unknown;
	try {
		value = JSON.parse(payload.toString('utf8'), (_key, v: unknown) => {
			if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { $b64?: unknown }).$b64 === 'string') {
				return new Uint8Array(Buffer.from((v as { $b64: string }).$b64, 'base64'));
			}
			return v;
		});
	} catch {
		return undefined;
	}
	const record = value as Partial<JournalRecord> | null;
	if (record === null || typeof record !== 'object' || !Number.isSafeInteger(record.seq) || !Array.isArray(record.statements)) {
		return undefined;
	}
	return record as JournalRecord;
}

/** The open journal file that new records are appended to. */
export class JournalWriter {
	private fd: number;
	private size: number;

	private constructor(private readonly file: string, fd: number, size: number) {
		this.fd = fd;
		this.size = size;
	}

	/** Opens `file` for appending, cutting it to `validBytes` (dropping a torn tail) first. */
	static open(file: string, validBytes: number): JournalWriter {
		if (validBytes === 0) {
			writeFileDurably(file, journalMagic);
			validBytes = journalMagic.length;
		}
		const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW);
		if (fs.fstatSync(fd).size !== validBytes) {
			fs.ftruncateSync(fd, validBytes);
			fs.fsyncSync(fd);
		}
		return new JournalWriter(file, fd, validBytes);
	}

	get bytes(): number {
		return this.size;
	}

	/**
	 * Appends one record and makes it durable. On failure (disk full, I/O error) the file is cut back
	 * to where it was, so a failed append never leaves half a record for the next one to follow.
	 */
	append(record: JournalRecord): void {
		const bytes = encodeRecord(record);
		try {
			writeAllAt(this.fd, bytes, this.size);
			fs.fdatasyncSync(this.fd);
			this.size += bytes.length;
		} catch (error) {
			try {
				fs.ftruncateSync(this.fd, this.size);
			} catch {
				// The append failed and so did the repair; the checksum makes the next load stop here.
			}
			throw error;
		}
	}

	/** Starts an empty journal after a full export made every record in it redundant. */
	reset(): void {
		fs.closeSync(this.fd);
		writeFileDurably(this.file, journalMagic);
		this.fd = fs.openSync(this.file, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW);
		this.size = journalMagic.length;
	}

	close(): void {
		fs.closeSync(this.fd);
	}
}

function writeAllAt(fd: number, bytes: Uint8Array, position: number): void {
	let offset = 0;
	while (offset < bytes.length) {
		offset += fs.writeSync(fd, bytes, offset, bytes.length - offset, position + offset);
	}
}
