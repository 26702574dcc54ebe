/**
 * The Attachments view and its previews inside the real extension host: the page builders on their
 * own, then files attached by hand (through the `desk` command line, as a second process on the same
 * store) listed by the view and opened by the commands according to their checked type.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { attachmentKind, formatJson, imageSize, neutraliseMarkup, parseDelimited, safeFileName, tablePage } from '../../client/src/attachmentPages';
import type { AgentDeskApi } from '../../client/src/extension';
import type { AttachmentsNode } from '../../client/src/views/attachmentsTree';

const extensionId = 'agent-desk.agent-desk';

describe('Attachment previews: the page builders', () => {
	it('reads CSV with quoted delimiters, doubled quotes, line breaks in fields, CRLF, a BOM and no extra row at the end', () => {
		const table = parseDelimited('\ufeffa,b,c\r\n"x, y","say ""hi""","two\nlines"\r\n1,,3\n', ',', 10);
		assert.deepEqual(table.rows, [
			['a', 'b', 'c'],
			['x, y', 'say "hi"', 'two\nlines'],
			['1', '', '3'],
		]);
		assert.equal(table.total, 3);
		assert.equal(table.unterminated, false);
		assert.deepEqual(parseDelimited('a\tb\n"c\td"\te', '\t', 10).rows, [['a', 'b'], ['c\td', 'e']]);
		assert.deepEqual(parseDelimited('a,"open\nto the end', ',', 10), { rows: [['a', 'open\nto the end']], total: 1, unterminated: true });
		assert.deepEqual(parseDelimited('', ',', 10).rows, []);
		assert.deepEqual(parseDelimited('last,', ',', 10).rows, [['last', '']]);
	});

	it('keeps the cap of rows and counts the rest; the table page says so and escapes every cell', () => {
		const lines = ['name,value', ...Array.from({ length: 5002 }, (_, i) => `row ${i},${i}`)];
		assert.equal(parseDelimited(lines.join('\n'), ',', 100).rows.length, 100);
		assert.equal(parseDelimited(lines.join('\n'), ',', 100).total, 5003);
		const html = tablePage({ header: { name: '<b>big</b>.csv', facts: [] }, text: `${lines.join('\n')}\n"<img src=x onerror=alert(1)>",1`, delimiter: ',', nonce: 'n0nce' });
		assert.match(html, /Showing the first 5,000 of 5,003 rows/);
		assert.ok(!html.includes('<img src=x'), 'a cell is escaped');
		assert.ok(html.includes('&lt;b&gt;big&lt;/b&gt;.csv'), 'the name is escaped');
		assert.match(html, /Content-Security-Policy" content="default-src 'none'; style-src 'nonce-n0nce'; img-src data:;"/);
		assert.ok(!/<script/i.test(html));
	});

	it('formats JSON keeping numbers and strings as written, and reports what does not parse', () => {
		const formatted = formatJson('{"big":12345678901234567890,"s":"a\\"}{,:","list":[1,{"x":[]}],"e":{}}');
		assert.ok('text' in formatted);
		assert.equal(formatted.text, '{\n  "big": 12345678901234567890,\n  "s": "a\\"}{,:",\n  "list": [\n    1,\n    {\n      "x": []\n    }\n  ],\n  "e": {}\n}\n');
		const broken = formatJson('{"a": 1,}');
		assert.ok('error' in broken && broken.error.length > 0);
	});

	it('reads the dimensions of PNG, GIF, BMP and JPEG headers', () => {
		const png = Buffer.alloc(24);
		png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
		png.writeUInt32BE(640, 16);
		png.writeUInt32BE(480, 20);
		assert.deepEqual(imageSize(png), { width: 640, height: 480 });
		const gif = Buffer.from('GIF89a\x20\x00\x10\x00', 'latin1');
		assert.deepEqual(imageSize(gif), { width: 32, height: 16 });
		const bmp = Buffer.alloc(26);
		bmp.write('BM', 0, 'latin1');
		bmp.writeInt32LE(7, 18);
		bmp.writeInt32LE(-9, 22);
		assert.deepEqual(imageSize(bmp), { width: 7, height: 9 });
		const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x78, 0x00, 0xa0, 0x03]);
		assert.deepEqual(imageSize(jpeg), { width: 160, height: 120 });
		assert.equal(imageSize(Buffer.from('not an image')), undefined);
	});

	it('turns tags that could load, navigate or submit into text in rendered Markdown', () => {
		const html = neutraliseMarkup('<p>ok</p><SCRIPT>x()</SCRIPT><meta http-equiv="refresh" content="0;url=http://x"><base href="http://x/"><form action="http://x"></form><img src="data:,">');
		assert.ok(!/<(script|meta|base|form)\b/i.test(html), html);
		assert.ok(html.startsWith('<p>ok</p>&lt;SCRIPT>'));
		assert.ok(html.endsWith('<img src="data:,">'), 'an image stays (the policy allows only data: sources)');
	});

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

describe('Attachments in the extension host', () => {
	let api: AgentDeskApi;
	let project: string;
	let ids: Map<string, string>;
	const task = 'ext-task-1';

	before(async function () {
		this.timeout(120_000);
		const extension = vscode.extensions.getExtension<AgentDeskApi>(extensionId)!;
		api = await extension.activate();
		assert.equal(await api.whenSettled(), 'ready');
		const [outcome] = api.folders();
		assert.ok(outcome?.outcome === 'adopted');
		project = outcome.project.name;
		const files = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-attach-'));
		const write = (name: string, content: string | Buffer) => {
			fs.writeFileSync(path.join(files, name), content);
			return path.join(files, name);
		};
		const { libraryDir } = await api.status();
		const desk = path.join(extension.extensionPath, 'dist', 'desk.js');
		ids = new Map();
		for (const file of [
			write('numbers.json', '{"id":12345678901234567890,"ok":true}'),
			write('broken.json', '{"a": 1,'),
			write('tool.py', 'def main():\n    return 42\n'),
			write('picture.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10" fill="red"/></svg>\n'),
			write('blob.bin', Buffer.from([0, 1, 2, 3, 0xff, 0xfe])),
			write('doc.pdf', '%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n'),
		]) {
			// A second process on the same store: the desk command line, as a person would attach from a shell.
			const out = execFileSync(process.execPath, [desk, '--store', libraryDir, '--repo', outcome.project.path, 'task', 'attachments', 'add', task, file, '--json'], {
				encoding: 'utf8',
				env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
			});
			const row = JSON.parse(out) as { id: string; name: string };
			ids.set(row.name, row.id);
		}
	});

	afterEach(async () => {
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
	});

	async function taskNode(): Promise<Extract<AttachmentsNode, { type: 'task' }>> {
		const nodes = await api.attachments.getChildren();
		const node = nodes.find((n) => n.type === 'task' && n.view.task_id === task);
		assert.ok(node?.type === 'task', JSON.stringify(nodes));
		return node;
	}

	it('lists the task by its id (it has no title) with its count and size, and each file with its type, size and source', async () => {
		const node = await taskNode();
		const item = api.attachments.getTreeItem(node);
		assert.equal(item.label, task);
		assert.match(String(item.description), /^6 files · \d+ B$/);
		const files = await api.attachments.getChildren(node);
		const items = files.map((f) => api.attachments.getTreeItem(f));
		assert.deepEqual(
			items.map((i) => [i.label, i.contextValue, (i.iconPath as vscode.ThemeIcon).id]),
			[
				['numbers.json', 'attachment.json.available', 'json'],
				['broken.json', 'attachment.json.available', 'json'],
				['tool.py', 'attachment.code.available', 'file-code'],
				['picture.svg', 'attachment.image.renderable.available', 'file-media'],
				['blob.bin', 'attachment.other.available', 'file-binary'],
				['doc.pdf', 'attachment.pdf.available', 'file-pdf'],
			],
		);
		assert.match(String(items[0]!.description), /^\d+ B · hand$/);
	});

	/** The active tab once it is `label` (a new webview panel's tab appears a moment after it is made). */
	async function activeTab(label: string): Promise<vscode.Tab> {
		for (let i = 0; i < 50; i += 1) {
			const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
			if (tab?.label === label) {
				return tab;
			}
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		throw new Error(`the active tab is ${vscode.window.tabGroups.activeTabGroup.activeTab?.label}, not ${label}`);
	}

	const open = (name: string) => vscode.commands.executeCommand('agentDesk.openAttachment', project, task, ids.get(name));

	it('opens JSON formatted in a read-only json editor, numbers as written', async () => {
		await open('numbers.json');
		const document = vscode.window.activeTextEditor?.document;
		assert.equal(document?.uri.scheme, 'desk-attachment');
		assert.equal(document?.languageId, 'json');
		assert.equal(document?.getText(), '{\n  "id": 12345678901234567890,\n  "ok": true\n}\n');
	});

	it('opens JSON that does not parse as plain text, as it is', async () => {
		await open('broken.json');
		const document = vscode.window.activeTextEditor?.document;
		assert.equal(document?.languageId, 'plaintext');
		assert.equal(document?.getText(), '{"a": 1,');
	});

	it('opens source code with its language, and SVG as its source (never run)', async () => {
		await open('tool.py');
		assert.equal(vscode.window.activeTextEditor?.document.languageId, 'python');
		assert.ok(vscode.window.activeTextEditor?.document.uri.path.endsWith('/tool.py'));
		await open('picture.svg');
		const svg = vscode.window.activeTextEditor?.document;
		assert.equal(svg?.languageId, 'xml');
		assert.match(svg?.getText() ?? '', /<script>alert\(1\)<\/script>/);
	});

	it('offers a binary file for Save As… in a page of its own', async () => {
		await open('blob.bin');
		assert.ok((await activeTab('blob.bin')).input instanceof vscode.TabInputWebview);
	});

	it('offers a PDF for Save As… when no PDF viewer is installed', async () => {
		await open('doc.pdf');
		assert.ok((await activeTab('doc.pdf')).input instanceof vscode.TabInputWebview);
	});

	it('renders SVG on request in a page of its own', async () => {
		await vscode.commands.executeCommand('agentDesk.showRenderedAttachment', project, task, ids.get('picture.svg'));
		assert.ok((await activeTab('picture.svg (rendered)')).input instanceof vscode.TabInputWebview);
	});

	it('refuses links that name no attachment of this window', async () => {
		const before = vscode.window.tabGroups.all.flatMap((g) => g.tabs).length;
		await vscode.commands.executeCommand('agentDesk.openAttachment', 'no-such-project', task, ids.get('tool.py'));
		await vscode.commands.executeCommand('agentDesk.openAttachment', project, '../x', ids.get('tool.py'));
		assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, before);
	});
});
