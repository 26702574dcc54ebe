import * as fs from 'node:fs';
import { crc32 } from 'node:zlib';

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

/**
 * Reads journal records. `bytes` is the file's content from byte `from` on: from 0 the magic is
 * checked first. Offsets in the result are positions in the file.
 */
export function scanJournal(bytes: Buffer, from = 0): JournalScan {
	let offset = 0;
	if (from === 0) {
		if (bytes.length === 0) {
			return { records: [], validBytes: 0 };
		}
		if (bytes.length < journalMagic.length || !bytes.subarray(0, journalMagic.length).equals(journalMagic)) {
			// A journal torn while its header was first written is shorter than the magic.
			const torn = bytes.length < journalMagic.length && journalMagic.subarray(0, bytes.length).equals(bytes);
			return { records: [], validBytes: 0, damage: torn ? 'torn-tail' : 'bad-magic' };
		}
		offset = journalMagic.length;
	}
	const records: JournalRecord[] = [];
	const stop = (damage: JournalScan['damage']): JournalScan => ({ records, validBytes: from + offset, damage });
	while (offset < bytes.length) {
		if (bytes.length - offset < recordHeaderBytes) {
			return stop('torn-tail');
		}
		const length = bytes.readUInt32LE(offset);
		const checksum = bytes.readUInt32LE(offset + 4);
		const end = offset + recordHeaderBytes + length;
		if (end > bytes.length) {
			return stop('torn-tail');
		}
		const payload = bytes.subarray(offset + recordHeaderBytes, end);
		if (crc32(payload) !== checksum) {
			return stop('bad-checksum');
		}
		const record = parseRecord(payload);
		if (record === undefined) {
			return stop('bad-record');
		}
		records.push(record);
		offset = end;
	}
	return { records, validBytes: from + offset };
}

/**
 * Valid records found after damage at `start` (an index into `bytes`), by looking for a record
 * header whose checksum and payload are right. A torn append is only ever the last thing in the
 * journal (each append is made durable before the next begins, and a failed one is cut back), so a
 * valid record after the damage means acknowledged transactions follow it: damage in the middle,
 * not a torn tail.
 */
export function recordsAfterDamage(bytes: Buffer, start: number): number {
	const opening = Buffer.from('{"seq":', 'utf8');
	for (let at = bytes.indexOf(opening, start + recordHeaderBytes + 1); at >= 0; at = bytes.indexOf(opening, at + 1)) {
		const header = at - recordHeaderBytes;
		const length = bytes.readUInt32LE(header);
		if (header <= start || at + length > bytes.length) {
			continue;
		}
		const payload = bytes.subarray(at, at + length);
		if (crc32(payload) === bytes.readUInt32LE(header + 4) && parseRecord(payload) !== undefined) {
			return scanJournal(bytes.subarray(header), 1).records.length;
		}
	}
	return 0;
}

function parseRecord(payload: Buffer): JournalRecord | undefined {
	let value: unknown;
	try {
		value = JSON.parse(payload.toString('utf8'), (_key, v: unknown) => {
			if (
				v !== null &&
				typeof v === 'object' &&
				!Array.isArray(v) &&
				typeof (v as { $b64?: unknown }).$b64 === 'string'
			) {
				return new Uint8Array(Buffer.from((v as { $b64: string }).$b64, 'base64'));
			}
			return v;
		});
	} catch {
		return undefined;
	}
	const record = value as Partial<JournalRecord> | null;
	if (
		record === null ||
		typeof record !== 'object' ||
		!Number.isSafeInteger(record.seq) ||
		!Array.isArray(record.statements)
	) {
		return undefined;
	}
	return record as JournalRecord;
}

/**
 * Appends `bytes` at `position` and makes them durable. On failure (disk full, I/O error) the file
 * is cut back to `position`, so a failed append never leaves half a record for the next to follow.
 */
export function appendDurably(fd: number, bytes: Uint8Array, position: number): void {
	try {
		let written = 0;
		while (written < bytes.length) {
			written += fs.writeSync(fd, bytes, written, bytes.length - written, position + written);
		}
		fs.fdatasyncSync(fd);
	} catch (error) {
		try {
			fs.ftruncateSync(fd, position);
		} catch {
			// The repair failed too; the checksum makes every reader stop at `position`.
		}
		throw error;
	}
}
