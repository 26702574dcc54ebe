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
import { attachmentKind, externalReference, formatJson, imageSize, markdownPage, parseDelimited, safeFileName, sanitiseMarkup, tablePage } from '../../client/src/attachmentPages';
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
		const html = sanitiseMarkup('<p>ok</p><SCRIPT>x()</SCRIPT><meta http-equiv="refresh" content="0;url=http://x"><base href="http://x/"><form action="http://x"></form><style>header{}</style><svg><a href="command:x">s</a></svg><iframe srcdoc="x"></iframe><img src="data:image/png;base64,AAAA">');
		assert.ok(!/<(script|meta|base|form|style|svg|iframe)\b/i.test(html), html);
		assert.ok(html.startsWith('<p>ok</p>&lt;SCRIPT&gt;x()&lt;/SCRIPT&gt;'), html);
		assert.ok(html.endsWith('<img src="data:image/png;base64,AAAA">'), 'an image from its bytes stays');
		assert.ok(!html.includes('href="command:'), html);
	});

	it('sanitises rendered Markdown against an allowlist: no class, id, style or handler, links only http(s), mailto: and #fragments, images only data:image', () => {
		const html = sanitiseMarkup(
			[
				'<header class="x" id="top"><h1 style="color:red" onclick="x()">Fake</h1></header>',
				'<a class="button primary" href="command:agentDesk.saveAttachmentAs?%5B%5D">Save</a>',
				'<a href="&#99;ommand:agentDesk.openAttachmentAsText">entity</a><a href=" java\tscript:alert(1)">js</a><a href="https://example.com/?a=1&amp;b=2">web</a>',
				'<a href="mailto:a@example.com">mail</a><a href="#notes">frag</a><a href="notes.md">relative</a><a href="file:///etc/passwd">file</a>',
				'<img src="http://127.0.0.1:9/x" onerror="x()" alt="probe"><img src="data:image/svg+xml;base64,AA" alt="ok"><img src=\'data:text/html,x\'>',
				'<table><tr><th style="text-align:right">n</th><td style="text-align:center;color:red" data-x="1">1</td></tr></table>',
				'<pre><code class="language-ts"><span class="hljs-keyword">export</span> <span class="hljs-title function_ button">f</span></code></pre>',
				'<p data-line="3" class="code-line" dir="auto">para</p></div><header>after</header></article>',
				'<div><b>open <i>nested',
			].join(''),
		);
		assert.ok(!/\s(id|style|on\w+|data-[\w-]+)=/i.test(html), html);
		const classes = [...html.matchAll(/<(\w+)[^>]*\sclass="([^"]*)"/g)].map((m) => [m[1], m[2]]);
		assert.deepEqual(classes, [
			['span', 'hljs-keyword'],
			['span', 'hljs-title function_'],
		]);
		const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
		assert.deepEqual(hrefs, ['https://example.com/?a=1&amp;b=2', 'mailto:a@example.com', '#notes']);
		const sources = [...html.matchAll(/src="([^"]*)"/g)].map((m) => m[1]);
		assert.deepEqual(sources, ['data:image/svg+xml;base64,AA']);
		assert.ok(html.includes('<header><h1>Fake</h1></header>'), html);
		assert.ok(html.includes('<img alt="probe">'), html);
		assert.ok(html.includes('<th align="right">n</th><td>1</td>'), html);
		assert.ok(html.includes('<p dir="auto">para</p><header>after</header>&lt;/article&gt;'), 'an end tag the content did not open is dropped; one of a tag it may not use is text');
		assert.ok(html.endsWith('<div><b>open <i>nested</i></b></div>'), 'what the content leaves open is closed inside it');
		assert.equal(sanitiseMarkup('a < b <!-- hidden <script> --> c <!DOCTYPE x> <?pi x?> d'), 'a &lt; b  c   d');
		assert.equal(sanitiseMarkup('<a href="https://x" title=\'say "hi"\'>t'), '<a href="https://x" title="say &quot;hi&quot;">t</a>');
		assert.equal(sanitiseMarkup('<img src="x" alt="unterminated'), '&lt;img src=&quot;x&quot; alt=&quot;unterminated');
	});

	it('scopes the page style to its own header and buttons: a fake header and button in the Markdown stay content', () => {
		const page = markdownPage({
			header: { name: 'report.md', facts: [], links: ['<a class="desk-button" href="command:agentDesk.saveAttachmentAs?x">Save As…</a>'] },
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

	it('finds what a language service would fetch: a remote JSON $schema, an external DTD or entity, a remote XML schema', () => {
		assert.equal(externalReference('{"$schema":"https://example.com/s.json","a":1}', 'json', 'a.json'), 'a JSON schema at https://example.com/s.json');
		assert.equal(externalReference('{"a":{"$schema":"https://example.com/nested"},"$schema":"./local.json"}', 'json', 'a.json'), undefined);
		assert.equal(externalReference('{"$schema":"file:///schemas/s.json"}', 'json', 'a.json'), undefined);
		assert.equal(externalReference('{"\\u0024schema":"//example.com/s"}', 'json', 'a.json'), 'a JSON schema at //example.com/s');
		assert.equal(externalReference('{"$schema":"./a.json","$schema":"http://x/y"}', undefined, 'a.txt'), 'a JSON schema at http://x/y', 'a repeated key counts each time');
		assert.match(externalReference('{"$schema":"http://x/y", // comment\n}', 'json', 'a.json') ?? '', /cannot read exactly/);
		assert.equal(externalReference('{"ok":1}\n{"$schema":"https://x/s"}\n', 'jsonl', 'a.jsonl'), 'a JSON schema at https://x/s');
		assert.equal(externalReference('<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg/>', 'xml', 'a.svg'), 'an external DTD (PUBLIC -//W3C//DTD SVG 1.1//EN)');
		assert.equal(externalReference('<!DOCTYPE note SYSTEM "https://example.com/note.dtd"><note/>', 'xml', 'a.xml'), 'an external DTD (SYSTEM https://example.com/note.dtd)');
		assert.equal(externalReference('<!DOCTYPE note SYSTEM "note.dtd"><note/>', 'xml', 'a.xml'), undefined);
		assert.equal(externalReference('<!DOCTYPE r [ <!ENTITY e SYSTEM "http://example.com/e"> ]><r>&e;</r>', 'xml', 'a.xml'), 'an external entity (SYSTEM http://example.com/e)');
		assert.match(externalReference('<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://example.com/r.xsd"/>', 'xml', 'a.xml') ?? '', /XML schema at http:\/\/example\.com\/r\.xsd/);
		assert.equal(externalReference('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>', 'xml', 'a.svg'), undefined);
		assert.equal(externalReference('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://x">', 'html', 'a.html'), undefined, 'HTML has no DTD reader');
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
			write('schema.json', '{"$schema":"http://127.0.0.1:9/schema.json","id":12345678901234567890}'),
			write('doctype.svg', '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://127.0.0.1:9/svg11.dtd">\n<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>\n'),
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
		assert.match(String(item.description), /^8 files · \d+ B$/);
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
				['schema.json', 'attachment.json.available', 'json'],
				['doctype.svg', 'attachment.image.renderable.available', 'file-media'],
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

	it('opens JSON naming a remote $schema as plain text from the start, still formatted', async () => {
		await open('schema.json');
		const document = vscode.window.activeTextEditor?.document;
		assert.equal(document?.uri.scheme, 'desk-attachment');
		assert.ok(document?.uri.path.endsWith('/schema.json.txt'), document?.uri.path);
		assert.equal(document?.languageId, 'plaintext');
		assert.equal(document?.getText(), '{\n  "$schema": "http://127.0.0.1:9/schema.json",\n  "id": 12345678901234567890\n}\n');
		assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.scheme === 'desk-attachment' && d.uri.path.endsWith('/schema.json')), 'never opened under its .json name');
	});

	it('opens SVG with an external DTD as plain text', async () => {
		await open('doctype.svg');
		const document = vscode.window.activeTextEditor?.document;
		assert.equal(document?.languageId, 'plaintext');
		assert.match(document?.getText() ?? '', /<!DOCTYPE svg PUBLIC/);
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

	it('opens a PDF in a page of its own (drawn by the pdf.js the extension ships)', async () => {
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
		await vscode.commands.executeCommand('agentDesk.openAttachment', project, task, 'not-an-id');
		assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, before);
	});

	it('takes only (project, task, id) from a node-shaped argument and reads the row again from the server', async () => {
		const before = vscode.window.tabGroups.all.flatMap((g) => g.tabs).length;
		const forged = (over: Record<string, unknown>, row: Record<string, unknown> = {}) => ({
			type: 'file',
			project,
			taskTitle: 'forged',
			...over,
			row: { task_id: task, id: ids.get('tool.py'), name: 'forged.py', media_type: 'text/plain', unavailable: null, ...row },
		});
		// Another project's name, an id of the wrong shape, an id no attachment has: nothing opens.
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({ project: 'no-such-project' }));
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({}, { id: '../../x' }));
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({}, { id: '0'.repeat(32) }));
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({ project: { name: project } }));
		assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, before);
		// A node's own name and type are not believed: the stored row is what opens.
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({}, { name: 'forged.json', media_type: 'application/json' }));
		assert.equal(vscode.window.activeTextEditor?.document.languageId, 'python');
		assert.ok(vscode.window.activeTextEditor?.document.uri.path.endsWith('/tool.py'));
	});
});
