/** Kinds and file names of attachments, in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachmentKind, safeFileName } from '../../../../client/src/attachments/kinds';
describe('Attachment previews: kinds and file names', () => {
	it('names the files it writes for a viewer with safe characters only', () => {
		assert.equal(safeFileName('reports/q3 summary.pdf', 'pdf'), 'q3 summary.pdf');
		assert.equal(safeFileName('../../etc/passwd', 'pdf'), 'passwd.pdf');
		assert.equal(safeFileName('..', 'pdf'), 'attachment.pdf');
		assert.equal(safeFileName('a\u202egpj.pdf', 'pdf'), 'a_gpj.pdf');
	});

	it('groups types into the kinds the view shows by icon', () => {
		const kinds = [
			['image/png', 'a.png'],
			['text/plain', 'a.txt'],
			['text/plain', 'a.py'],
			['text/markdown', 'a.md'],
			['text/csv', 'a.csv'],
			['application/json', 'a.json'],
			['application/pdf', 'a.pdf'],
			['text/html', 'a.html'],
			['application/zip', 'a.zip'],
		].map(([type, name]) => attachmentKind(type!, name!));
		assert.deepEqual(kinds, ['image', 'text', 'code', 'markdown', 'table', 'json', 'pdf', 'html', 'other']);
	});
});
