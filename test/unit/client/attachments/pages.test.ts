/** The preview pages (table, Markdown), in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDelimited } from '../../../../client/src/attachments/csv';
import { markdownPage, tablePage } from '../../../../client/src/attachments/pages';
describe('Attachment previews: the page builders', () => {
	it('keeps the cap of rows and counts the rest; the table page says so and escapes every cell', () => {
		const lines = ['name,value', ...Array.from({ length: 5002 }, (_, i) => `row ${i},${i}`)];
		assert.equal(parseDelimited(lines.join('\n'), ',', 100).rows.length, 100);
		assert.equal(parseDelimited(lines.join('\n'), ',', 100).total, 5003);
		const html = tablePage({
			header: { name: '<b>big</b>.csv', facts: [] },
			text: [lines[0], '"<img src=x onerror=alert(1)>",1', ...lines.slice(1)].join('\n'),
			delimiter: ',',
			nonce: 'n0nce',
		});
		assert.match(html, /Showing the first 5,000 of 5,003 rows/);
		// The hostile cell is the first data row: past the cap it would not be shown at all, escaped or not.
		assert.ok(html.includes('<td>&lt;img src=x onerror=alert(1)&gt;</td>'), 'a cell is shown escaped');
		assert.ok(!html.includes('<img src=x'), 'a cell is escaped');
		assert.ok(html.includes('&lt;b&gt;big&lt;/b&gt;.csv'), 'the name is escaped');
		assert.match(
			html,
			/Content-Security-Policy" content="default-src 'none'; style-src 'nonce-n0nce'; img-src data:;"/,
		);
		assert.ok(!/<script/i.test(html));
	});

	it('scopes the page style to its own header and buttons: a fake header and button in the Markdown stay content', () => {
		const page = markdownPage({
			header: {
				name: 'report.md',
				facts: [],
				links: ['<a class="desk-button" href="command:agentDesk.saveAttachmentAs?x">Save As…</a>'],
			},
			html: '<header><h1>report.md</h1><a class="button" href="command:agentDesk.saveAttachmentAs?%5B%5D">Save As…</a></header>',
			nonce: 'n0nce',
		});
		const article = page.slice(page.indexOf('<article'));
		assert.ok(!article.includes('command:'), article);
		assert.ok(!/<(header|a)\s[^>]*class=/.test(article), article);
		const style = /<style[^>]*>([\s\S]*?)<\/style>/.exec(page)![1]!;
		assert.ok(!/(^|[\s,}])header\b/m.test(style.replace(/body > header/g, '')), 'every header rule is body > header');
		assert.ok(!/a\.button\b/.test(style), 'buttons go by a class of the page');
	});
});
