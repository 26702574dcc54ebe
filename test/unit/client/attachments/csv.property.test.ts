/**
 * The CSV/TSV reader of the table preview against a writer: generated tables (fields holding the
 * delimiter, quotes, CR, LF, a byte order mark) written the RFC 4180 way with any row ending (LF,
 * CRLF, CR), a final row ending or none, and a byte order mark or none, read back as the same rows;
 * a cap keeps the first rows and counts them all; a quoted field cut before its closing quote is
 * read to the end and reported unterminated. fast-check prints the seed and the smallest failing table.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseDelimited } from '../../../../client/src/attachments/csv';

const field = fc.oneof(
	{
		weight: 3,
		arbitrary: fc.string({
			unit: fc.constantFrom('a', 'b', ' ', ',', '\t', '"', '\n', '\r', '\ufeff', 'é', '😀'),
			maxLength: 6,
		}),
	},
	{ weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
);
const table = fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 });
const layout = fc.record({
	delimiter: fc.constantFrom(',', '\t'),
	ending: fc.constantFrom('\n', '\r\n', '\r'),
	finalEnding: fc.boolean(),
	bom: fc.boolean(),
});

/** RFC 4180: a field is quoted when it holds the delimiter, a quote or a line break (or would lose a leading BOM), quotes doubled. */
function writeField(value: string, delimiter: string, force = false): string {
	const quote =
		force ||
		value.includes(delimiter) ||
		value.includes('"') ||
		value.includes('\n') ||
		value.includes('\r') ||
		value.startsWith('\ufeff');
	return quote ? `"${value.replaceAll('"', '""')}"` : value;
}

function writeRow(row: string[], delimiter: string): string {
	// A row of one empty field is written "" so it is not an empty line, which ends the file or nothing.
	return row.length === 1 && row[0] === '' ? '""' : row.map((value) => writeField(value, delimiter)).join(delimiter);
}

function write(
	rows: string[][],
	options: { delimiter: string; ending: string; finalEnding: boolean; bom: boolean },
): string {
	return (
		(options.bom ? '\ufeff' : '') +
		rows.map((row) => writeRow(row, options.delimiter)).join(options.ending) +
		(options.finalEnding ? options.ending : '')
	);
}

describe('the CSV/TSV reader (property)', () => {
	it('reads back the rows a writer wrote', () => {
		fc.assert(
			fc.property(table, layout, (rows, options) => {
				assert.deepStrictEqual(parseDelimited(write(rows, options), options.delimiter, 1000), {
					rows,
					total: rows.length,
					unterminated: false,
				});
			}),
			{ numRuns: 1000, includeErrorInReport: true },
		);
	});

	it('keeps the first rows up to the cap and counts them all', () => {
		fc.assert(
			fc.property(table, layout, fc.nat(10), (rows, options, cap) => {
				assert.deepStrictEqual(parseDelimited(write(rows, options), options.delimiter, cap), {
					rows: rows.slice(0, cap),
					total: rows.length,
					unterminated: false,
				});
			}),
			{ numRuns: 500, includeErrorInReport: true },
		);
	});

	it('a quoted last field cut before its closing quote is read to the end and reported unterminated', () => {
		fc.assert(
			fc.property(table, layout, (rows, options) => {
				const last = rows.at(-1)!;
				const cut = writeField(last.at(-1)!, options.delimiter, true).slice(0, -1);
				const lastLine = [...last.slice(0, -1).map((value) => writeField(value, options.delimiter)), cut].join(
					options.delimiter,
				);
				const text =
					(options.bom ? '\ufeff' : '') +
					[...rows.slice(0, -1).map((row) => writeRow(row, options.delimiter)), lastLine].join(options.ending);
				assert.deepStrictEqual(parseDelimited(text, options.delimiter, 1000), {
					rows,
					total: rows.length,
					unterminated: true,
				});
			}),
			{ numRuns: 500, includeErrorInReport: true },
		);
	});
});
