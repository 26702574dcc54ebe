/**
 * How a preview reads an attachment (glossary: Preview): it decides from the recorded type first
 * (a type the desk never shows is offered for Save As… without a byte read), then from the first
 * piece the server checked (bytes that are not what the record claims: that piece only), and reads
 * the rest in pieces, checking the digest over the whole. Pure: no VS Code here.
 */
import { createHash } from 'node:crypto';
import { previewable } from '../../../server/src/attachments/names';
import type { AttachmentContent, AttachmentRow } from '../../../server/src/protocol/protocol';

/** The bytes one request asks for: a 32 MiB file is 32 answers, not one of 43 MiB of base64. */
export const pieceBytes = 1 << 20;

/** Reads `maxBytes` of the attachment from `offset` (ReadAttachment). */
export type ReadPiece = (offset: number, maxBytes: number) => Promise<AttachmentContent>;

/**
 * What opening `row` shows: its bytes, whole and checked (`content`), or the Save As… page, with
 * the type the server checked when it read the first piece (`shownAs`, else the record alone decided).
 */
export type Opening = { content: AttachmentContent } | { download: AttachmentRow; shownAs?: string };

export async function readForOpening(row: AttachmentRow, readPiece: ReadPiece): Promise<Opening> {
	if (!previewable(row.media_type)) {
		return { download: row };
	}
	const first = await readPiece(0, pieceBytes);
	if (!first.inline) {
		return { download: first.row, shownAs: first.inline_type };
	}
	return { content: await readRest(first, readPiece) };
}

/** The attachment whole, read in pieces, its digest checked against its record. */
export async function readWhole(readPiece: ReadPiece): Promise<AttachmentContent> {
	return readRest(await readPiece(0, pieceBytes), readPiece);
}

async function readRest(first: AttachmentContent, readPiece: ReadPiece): Promise<AttachmentContent> {
	const { row } = first;
	const pieces = [Buffer.from(first.base64, 'base64')];
	let offset = pieces[0]!.length;
	while (offset < row.size) {
		const next = await readPiece(offset, pieceBytes);
		const bytes = Buffer.from(next.base64, 'base64');
		if (next.row.id !== row.id || next.row.sha256 !== row.sha256 || bytes.length === 0) {
			throw new Error(`${row.name} changed while it was read; open it again.`);
		}
		pieces.push(bytes);
		offset += bytes.length;
	}
	const whole = Buffer.concat(pieces);
	if (whole.length !== row.size || createHash('sha256').update(whole).digest('hex') !== row.sha256) {
		throw new Error(
			`${row.name}: the bytes read do not match the digest recorded; it was changed behind the desk's back.`,
		);
	}
	return { ...first, base64: whole.toString('base64'), truncated: false };
}
