import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { deflateSync } from 'node:zlib';
import type { Frame, Page } from 'playwright-core';
import { launchScriptedRun, packageExtension, runCommand, screenshot, waitFor, webviewWith } from '../helpers/codeServer';

/** CRC-32 of PNG chunks (ISO 3309). */
function crc32(bytes: Buffer): number {
	let crc = 0xffffffff;
	for (const byte of bytes) {
		crc ^= byte;
		for (let k = 0; k < 8; k += 1) {
			crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
		}
	}
	return (crc ^ 0xffffffff) >>> 0;
}

/** A real 16×16 RGB PNG: four coloured quadrants crossed by a white diagonal. */
function quadrantsPng(): Buffer {
	const size = 16;
	const colours = [
		[0xe5, 0x39, 0x35],
		[0x43, 0xa0, 0x47],
		[0x1e, 0x88, 0xe5],
		[0xfd, 0xd8, 0x35],
	] as const;
	const raw = Buffer.alloc(size * (1 + size * 3));
	for (let y = 0; y < size; y += 1) {
		raw[y * (1 + size * 3)] = 0; // filter: none
		for (let x = 0; x < size; x += 1) {
			const rgb = x === y ? [0xff, 0xff, 0xff] : colours[(y < size / 2 ? 0 : 2) + (x < size / 2 ? 0 : 1)]!;
			raw.set(rgb, y * (1 + size * 3) + 1 + x * 3);
		}
	}
	const chunk = (type: string, data: Buffer) => {
		const length = Buffer.alloc(4);
		length.writeUInt32BE(data.length);
		const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
		const crc = Buffer.alloc(4);
		crc.writeUInt32BE(crc32(body));
		return Buffer.concat([length, body, crc]);
	};
	const header = Buffer.alloc(13);
	header.writeUInt32BE(size, 0);
	header.writeUInt32BE(size, 4);
	header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter method, no interlace
	return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const csv = 'name,qty,note\r\n"Widget, large",3,"fits ""all"" boxes"\r\nGadget,12,"two\nlines"\r\nSprocket,7,\r\n';

/** A page that tries to run a script and to reach the network (a probe server of the test counts every request). */
function reportHtml(probe: string): string {
	return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Weekly report</title>
<meta http-equiv="refresh" content="1;url=${probe}/refresh">
<link rel="stylesheet" href="${probe}/style.css">
<style>body { font-family: sans-serif; } h1 { color: #0a7d32; } .box { background: url(${probe}/bg.png); padding: 8px; border: 2px solid #0a7d32; }</style>
</head><body>
<h1>Weekly report</h1>
<p id="status">Scripts did not run.</p>
<div class="box">All 3 widgets shipped.</div>
<img src="${probe}/pixel.png" alt="remote pixel">
<script>document.title = 'SCRIPT RAN'; document.getElementById('status').textContent = 'SCRIPT RAN'; fetch('${probe}/fetch');</script>
<img src="x" onerror="document.body.insertAdjacentText('beforeend', 'SCRIPT RAN')">
</body></html>
`;
}

/** Notes in Markdown with a table, code, and raw HTML that must neither run nor fetch. */
function notesMarkdown(probe: string): string {
	return `# Release notes

The **orders** table has *three* rows; see \`orders.csv\`.

| item | qty |
|------|----:|
| Widget | 3 |
| Gadget | 12 |

\`\`\`ts
export const total = 3 + 12 + 7;
\`\`\`

> Shipped on time.

<img src="${probe}/md-pixel.png" alt="md remote pixel">
<script>document.body.append('SCRIPT RAN')</script>
<meta http-equiv="refresh" content="0;url=${probe}/md-refresh">

<header class="fake" id="fake-header" style="position:fixed;top:0;left:0;right:0;z-index:9"><h1>notes.md</h1><a class="button primary" href="command:agentDesk.saveAttachmentAs?%5B%22shop%22%2C%22x%22%2C%22y%22%5D" onclick="x()">Save As… (fake)</a></header>

<p><a href="command:agentDesk.openAttachmentAsText">a command link</a> and <a href="https://example.com/notes">a web link</a></p>
`;
}

/** A PDF (the server checks its signature), and a PDF viewer extension of the test's own, built on nothing: it only says what it was given. */
const reportPdf = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n';
function fakePdfViewer(): string {
	return packageExtension({
		'package.json': JSON.stringify({
			name: 'fake-pdf-viewer',
			displayName: 'Fake PDF Viewer',
			publisher: 'desk-test',
			version: '0.0.1',
			engines: { vscode: '^1.60.0' },
			main: './extension.js',
			activationEvents: ['onCustomEditor:fakePdf.preview'],
			contributes: { customEditors: [{ viewType: 'fakePdf.preview', displayName: 'Fake PDF', selector: [{ filenamePattern: '*.pdf' }], priority: 'default' }] },
		}),
		'extension.js': `const vscode = require('vscode');
exports.activate = (context) => {
	context.subscriptions.push(vscode.window.registerCustomEditorProvider('fakePdf.preview', {
		openCustomDocument: (uri) => ({ uri, dispose() {} }),
		async resolveCustomEditor(document, panel) {
			const bytes = await vscode.workspace.fs.readFile(document.uri);
			panel.webview.html = '<!DOCTYPE html><body><h1>Fake PDF Viewer</h1><p>' + bytes.length + ' bytes starting ' + Buffer.from(bytes.slice(0, 8)).toString('latin1') + '</p></body>';
		},
	}));
};
`,
	});
}

/** JSON whose big integer must survive formatting as written. */
const summaryJson = '{"week":47,"orders":{"count":3,"ids":[12345678901234567890,2]},"ok":true,"empty":{},"none":[]}';

/** The text of the editor's visible lines, with the non-breaking spaces Monaco renders made plain. */
async function editorText(page: Page): Promise<string> {
	return (await page.locator('.editor-instance .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
}

/** Runs an entry of a tree item's context menu (Monaco's menus act on the keyboard more reliably than on a synthetic click). */
async function contextMenu(page: Page, item: RegExp, entry: string): Promise<void> {
	// A hover left over another row would take the click.
	await page.mouse.move(1200, 700);
	await page.keyboard.press('Escape');
	await page.waitForTimeout(300);
	await page.getByRole('treeitem', { name: item }).click({ button: 'right' });
	const menuItem = page.getByRole('menuitem', { name: entry });
	await menuItem.hover();
	await menuItem.focus();
	await page.keyboard.press('Enter');
}

/** Clicks an attachment in the Attachments view by its name. */
async function openFromView(page: Page, name: RegExp): Promise<void> {
	await page.getByRole('treeitem', { name }).click();
}

it('a run attaches a PNG, a CSV and an HTML file; each opens from the Attachments view by its checked type, HTML as source and then rendered without scripts or network', async () => {
	const requests: string[] = [];
	const probeServer = http.createServer((request, response) => {
		requests.push(request.url ?? '');
		response.end('');
	});
	await new Promise<void>((resolve) => probeServer.listen(0, '127.0.0.1', resolve));
	const probe = `http://127.0.0.1:${(probeServer.address() as AddressInfo).port}`;
	const png = quadrantsPng();
	const { page, close } = await launchScriptedRun(
		'desk-attachments-e2e-',
		{
			plan: ['Measure the week', 'Write the report'],
			writes: [{ path: 'reports/week.md', content: '# Week\n\nSee the attachments.\n' }],
			outboxBase64: [{ name: 'chart.png', base64: png.toString('base64') }],
			outbox: [
				{ name: 'orders.csv', content: csv },
				{ name: 'report.html', content: reportHtml(probe) },
				{ name: 'notes.md', content: notesMarkdown(probe) },
				{ name: 'summary.json', content: summaryJson },
				{ name: 'report.pdf', content: reportPdf },
			],
			answer: 'Left a chart, the orders and a report in the outbox.',
		},
		'Write the weekly report\nAttach a chart, the orders table and an HTML report.',
		{ 'agentDesk.runs.maxAttempts': 1 },
		{ install: [fakePdfViewer()] },
	);
	try {
		// The Attachments view: the task with its three files, their sizes and where they came from.
		const task = page.getByRole('treeitem', { name: /^Write the weekly report, 6 files · / });
		await task.waitFor({ timeout: 90_000 });
		const ready = page.locator('.notification-toast', { hasText: 'is ready for review' });
		await ready.waitFor({ timeout: 30_000 });
		// The gate's notification opens the review; it does not land.
		await ready.getByRole('button', { name: 'Review', exact: true }).waitFor();
		assert.equal(await ready.getByRole('button', { name: 'Approve and Land' }).count(), 0, 'no Approve and Land in the notification');
		await runCommand(page, 'Notifications: Clear All Notifications');
		const chart = page.getByRole('treeitem', { name: new RegExp(`^chart\\.png, ${png.length} B · run`) });
		await chart.waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^orders\.csv, \d+ B · run/ }).waitFor();
		await page.getByRole('treeitem', { name: /^report\.html, \d+ B · run/ }).waitFor();
		// The icons go by type: an image, a table, HTML.
		assert.equal(await chart.locator('.codicon-file-media').count(), 1, 'the PNG has the image icon');
		assert.equal(await page.getByRole('treeitem', { name: /^orders\.csv/ }).locator('.codicon-table').count(), 1, 'the CSV has the table icon');
		// The tooltip tells the whole record.
		await runCommand(page, 'View: Close All Editors');
		await chart.hover();
		const hover = page.locator('.monaco-hover', { hasText: /SHA.256/ });
		await hover.waitFor({ timeout: 10_000 });
		assert.match(await hover.innerText(), /image\/png \(as recorded\)[\s\S]*a run[\s\S]*Run/);
		await page.waitForTimeout(300);
		await screenshot(page, 'attachments-view');
		await page.mouse.move(1200, 700);

		// The PNG: a webview showing the image from its bytes, with its name, size and dimensions.
		await openFromView(page, /^chart\.png/);
		const image = await webviewWith(page, '16 × 16 px');
		const img = image.locator('img.preview');
		await img.waitFor();
		const src = (await img.getAttribute('src')) ?? '';
		assert.ok(src.startsWith('data:image/png;base64,'), `the image comes from its bytes: ${src.slice(0, 40)}`);
		assert.equal(Buffer.from(src.slice('data:image/png;base64,'.length), 'base64').compare(png), 0, 'the stored bytes are the PNG the run wrote');
		await waitFor(async () => (await img.evaluate((e) => (e as unknown as { complete: boolean; naturalWidth: number }).naturalWidth)) === 16, 10_000, 'the image decoded at 16 px');
		const imageHeader = await image.locator('header').innerText();
		assert.match(imageHeader, /chart\.png/);
		assert.match(imageHeader, new RegExp(`${png.length} B · image/png · 16 × 16 px`));
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		await screenshot(page, 'attachments-png');

		// The CSV: a table with the quoted comma, doubled quotes and the line break in their cells.
		await openFromView(page, /^orders\.csv/);
		const table = await webviewWith(page, 'Widget, large');
		const headers = await table.locator('thead th').allInnerTexts();
		assert.deepEqual(headers, ['#', 'name', 'qty', 'note']);
		const rows: string[][] = [];
		for (const tr of await table.locator('tbody tr').all()) {
			rows.push(await tr.locator('td').evaluateAll((tds) => tds.map((td) => td.textContent ?? '')));
		}
		assert.deepEqual(rows, [
			['1', 'Widget, large', '3', 'fits "all" boxes'],
			['2', 'Gadget', '12', 'two\nlines'],
			['3', 'Sprocket', '7', ''],
		]);
		assert.match(await table.locator('header').innerText(), /3 rows × 3 columns/);
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		await screenshot(page, 'attachments-csv');

		// The HTML: its source first, in a read-only editor with HTML colouring.
		await openFromView(page, /^report\.html/);
		await page.locator('.tab.active', { hasText: 'report.html' }).waitFor({ timeout: 30_000 });
		await waitFor(async () => (await editorText(page)).includes("<script>document.title = 'SCRIPT RAN';"), 20_000, 'the HTML source in the editor');
		await waitFor(async () => (await page.locator('.statusbar-item', { hasText: /^HTML$/ }).count()) > 0, 10_000, 'the HTML language mode');
		const tokenColours = () => page.locator('.editor-instance .view-lines span[class^="mtk"]').evaluateAll((spans) => new Set(spans.map((s) => s.className)).size);
		await waitFor(async () => (await tokenColours()) > 2, 30_000, 'the source coloured as HTML');
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		await screenshot(page, 'attachments-html-source');

		// Rendered on request, from the editor title: scripts do not run and nothing is fetched.
		await page.locator('.editor-actions .action-label[aria-label^="Show Rendered"]').click();
		const rendered = await webviewWith(page, 'Rendered without scripts');
		const frameElement = rendered.locator('iframe');
		await frameElement.waitFor();
		assert.equal(await frameElement.getAttribute('sandbox'), '', 'the document is in a frame with sandbox=""');
		let inner: Frame | undefined;
		await waitFor(
			async () => {
				inner = rendered.childFrames()[0];
				return !!inner && (await inner.locator('body').innerText({ timeout: 1_000 })).includes('Weekly report');
			},
			20_000,
			'the rendered document',
		);
		await page.waitForTimeout(2_500); // longer than the page's meta refresh
		const body = await inner!.locator('body').innerText();
		assert.match(body, /Scripts did not run\./);
		assert.match(body, /All 3 widgets shipped\./);
		assert.doesNotMatch(body, /SCRIPT RAN/);
		assert.equal(await inner!.title(), 'Weekly report', 'the script did not change the title');
		assert.equal(await inner!.locator('h1').evaluate((h) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(h).color), 'rgb(10, 125, 50)', 'the document keeps its own inline style');
		assert.deepEqual(requests, [], 'the rendered page reached no network');
		await page.mouse.move(1200, 700);
		await screenshot(page, 'attachments-html-rendered');

		// Markdown rendered by VS Code's engine: headings, tables and code; raw HTML neither runs nor fetches.
		await openFromView(page, /^notes\.md/);
		const notes = await webviewWith(page, 'Release notes');
		await notes.locator('article h1', { hasText: 'Release notes' }).waitFor();
		assert.deepEqual(await notes.locator('article table td').allInnerTexts(), ['Widget', '3', 'Gadget', '12']);
		assert.match(await notes.locator('article pre').innerText(), /export const total = 3 \+ 12 \+ 7;/);
		await page.waitForTimeout(1_000);
		assert.doesNotMatch(await notes.locator('article').innerText(), /^SCRIPT RAN$/m);
		assert.equal(await notes.locator('article script, article meta').count(), 0, 'no script or meta is an element');
		assert.equal(await notes.locator('article img').count(), 1, 'the image is an element…');
		assert.equal(await notes.locator('article img').getAttribute('src'), null, '…without its remote source');
		// The fake header and button stay content: no class, id, style or handler, no command: link; the page's own header and buttons are the only ones.
		assert.equal(await notes.locator('article header h1', { hasText: 'notes.md' }).count(), 1, 'the fake header is shown as content');
		assert.equal(await notes.locator('article [class]:not(span), article [id], article [style], article [onclick]').count(), 0, 'no class (but the code colours), id, style or handler in the content');
		assert.deepEqual(
			await notes.locator('article span[class]').evaluateAll((spans) => spans.map((e) => e.getAttribute('class')).filter((c) => !(c ?? '').split(' ').every((t: string) => /^hljs-|_$/.test(t)))),
			[],
			'spans keep only highlight.js classes',
		);
		assert.deepEqual(await notes.locator('article a[href]').evaluateAll((links) => links.map((a) => a.getAttribute('href'))), ['https://example.com/notes'], 'only the web link keeps its href');
		assert.equal(await notes.locator('a[href^="command:"]').count(), 2, 'only the page header’s Show Source and Save As… are command links');
		assert.equal(await notes.locator('body > header a[href^="command:"]').count(), 2);
		const fakeButton = notes.locator('article a', { hasText: 'Save As… (fake)' });
		const realButton = notes.locator('body > header a', { hasText: /^Save As…$/ });
		const look = (e: unknown) => {
			const style = (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(e);
			return { position: style['position'], padding: style['paddingTop'], background: style['backgroundColor'] };
		};
		const realLook = await realButton.evaluate(look);
		const fakeLook = await fakeButton.evaluate(look);
		assert.notDeepEqual(fakeLook, realLook, 'the fake button does not look like the page’s');
		assert.equal((await notes.locator('article header').evaluate(look)).position, 'static', 'the fake header is not sticky or fixed');
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		assert.deepEqual(requests, [], 'the Markdown page reached no network');
		await screenshot(page, 'attachments-markdown');

		// A PDF: the download page first, even with a PDF viewer installed; the viewer only on the person's click, named as a third-party extension.
		await openFromView(page, /^report\.pdf/);
		const pdfPage = await webviewWith(page, 'third-party extension');
		const pdfText = await pdfPage.locator('body').innerText();
		assert.match(pdfText, /Fake PDF Viewer \(desk-test\.fake-pdf-viewer\) is a PDF viewer from a third-party extension/);
		assert.match(pdfText, /CVE-2024-4367/);
		assert.equal(await pdfPage.locator('body > header a', { hasText: /^Save As…$/ }).count(), 1);
		const openInViewer = pdfPage.locator('body > header a', { hasText: 'Open in Fake PDF Viewer' });
		assert.equal(await openInViewer.count(), 1);
		await page.waitForTimeout(1_000);
		assert.equal(await Promise.all(page.frames().map((f) => f.locator('body').innerText({ timeout: 500 }).catch(() => ''))).then((texts) => texts.some((t) => t.includes('bytes starting %PDF'))), false, 'the viewer did not open by itself');
		await page.mouse.move(1200, 700);
		await screenshot(page, 'attachments-pdf');
		await openInViewer.click();
		const viewer = await webviewWith(page, `${Buffer.byteLength(reportPdf)} bytes starting %PDF-1.4`);
		assert.match(await viewer.locator('h1').innerText(), /Fake PDF Viewer/);

		// JSON formatted in a read-only editor, the big number as written.
		await openFromView(page, /^summary\.json/);
		await page.locator('.tab.active', { hasText: 'summary.json' }).waitFor({ timeout: 30_000 });
		await waitFor(async () => (await editorText(page)).includes('12345678901234567890,'), 20_000, 'the formatted JSON');
		const json = await editorText(page);
		assert.match(json, /^\{\n  "week": 47,\n  "orders": \{\n    "count": 3,/);
		assert.match(json, /"empty": \{\},\n  "none": \[\]\n\}/);
		await waitFor(async () => (await page.locator('.statusbar-item', { hasText: /^JSON$/ }).count()) > 0, 10_000, 'the JSON language mode');
		await page.mouse.move(1200, 700);
		await screenshot(page, 'attachments-json');
		await page.keyboard.type('edit');
		assert.ok(!(await editorText(page)).includes('edit'), 'the editor is read-only');

		// Reveal in Run: the run's page.
		await contextMenu(page, /^chart\.png/, 'Reveal in Run');
		await webviewWith(page, 'Run of “Write the weekly report”');

		// Delete: a confirmation naming the file and saying it is recorded, then the row is gone.
		await contextMenu(page, /^orders\.csv/, 'Delete');
		const dialog = page.locator('.monaco-dialog-box');
		await dialog.waitFor({ timeout: 30_000 });
		const question = await dialog.innerText();
		assert.match(question, /Delete orders\.csv from task ‘Write the weekly report’\?/);
		assert.match(question, /records who deleted it \(your user name\) and that it was from the Attachments view/);
		await screenshot(page, 'attachments-delete');
		await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
		await page.getByRole('treeitem', { name: /^Write the weekly report, 5 files · / }).waitFor({ timeout: 30_000 });
		assert.equal(await page.getByRole('treeitem', { name: /^orders\.csv/ }).count(), 0);
		assert.deepEqual(requests, [], 'no page reached the network');
	} finally {
		await screenshot(page, 'attachments-final').catch(() => undefined);
		await close();
		probeServer.close();
	}
});
