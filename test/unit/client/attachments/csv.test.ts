/** The CSV/TSV reader of the table preview, in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDelimited } from '../../../../client/src/attachments/csv';
describe('Attachment previews: the CSV/TSV reader', () => {
	it('reads CSV with quoted delimiters, doubled quotes, line breaks in fields, CRLF, a BOM and no extra row at the end', () => {
		const table = parseDelimited('\ufeffa,b,c\r\n"x, y","say ""hi""","two\nlines"\r\n1,,3\n', ',', 10);
		assert.deepEqual(table.rows, [
			['a', 'b', 'c'],
			['x, y', 'say "hi"', 'two\nlines'],
			['1', '', '3'],
		]);
		assert.equal(table.total, 3);
		assert.equal(table.unterminated, false);
		assert.deepEqual(parseDelimited('a\tb\n"c\td"\te', '\t', 10).rows, [
			['a', 'b'],
			['c\td', 'e'],
		]);
		assert.deepEqual(parseDelimited('a,"open\nto the end', ',', 10), {
			rows: [['a', 'open\nto the end']],
			total: 1,
			unterminated: true,
		});
		assert.deepEqual(parseDelimited('', ',', 10).rows, []);
		assert.deepEqual(parseDelimited('last,', ',', 10).rows, [['last', '']]);
	});
});
