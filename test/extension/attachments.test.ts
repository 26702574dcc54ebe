/**
 * The Attachments view and its previews inside the real extension host: files attached by hand
 * (through the `desk` command line, as a second process on the same store) listed by the view and
 * opened by the commands according to their checked type. The page builders, which need no VS Code,
 * are tested in plain Node (test/unit/client/attachments/).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentDeskApi } from '../../client/src/extension';
import type { AttachmentsViewNode } from '../../client/src/attachments/attachmentsTree';

const extensionId = 'agent-desk.agent-desk';

describe('Attachments in the extension host', () => {
	let api: AgentDeskApi;
	let project: string;
	let ids: Map<string, string>;
	/** A task the command line launched (Go, the run not carried out): files are attached to a task the project holds. */
	let task: string;
	const title = 'Attachments of the extension test';

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
		const deskCli = (...args: string[]) =>
			execFileSync(process.execPath, [desk, '--store', libraryDir, ...args], {
				encoding: 'utf8',
				env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
			});
		deskCli('card', 'suggest', '--project', project, '--ticket', title);
		task = (JSON.parse(deskCli('card', 'go', '--project', project, '--json')) as { task: string }).task;
		ids = new Map();
		for (const file of [
			write('numbers.json', '{"id":12345678901234567890,"ok":true}'),
			write('broken.json', '{"a": 1,'),
			write('tool.py', 'def main():\n    return 42\n'),
			write(
				'picture.svg',
				'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10" fill="red"/></svg>\n',
			),
			write('blob.bin', Buffer.from([0, 1, 2, 3, 0xff, 0xfe])),
			write('doc.pdf', '%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n'),
			write('schema.json', '{"$schema":"http://127.0.0.1:9/schema.json","id":12345678901234567890}'),
			write(
				'doctype.svg',
				'<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://127.0.0.1:9/svg11.dtd">\n<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>\n',
			),
		]) {
			// A second process on the same store: the desk command line, as a person would attach from a shell.
			const out = deskCli('--repo', outcome.project.path, 'task', 'attachments', 'add', task, file, '--json');
			const row = JSON.parse(out) as { id: string; name: string };
			ids.set(row.name, row.id);
		}
	});

	afterEach(async () => {
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
	});

	async function taskNode(): Promise<Extract<AttachmentsViewNode, { type: 'task' }>> {
		const nodes = await api.attachments.getChildren();
		const node = nodes.find((n) => n.type === 'task' && n.view.task_id === task);
		assert.ok(node?.type === 'task', JSON.stringify(nodes));
		return node;
	}

	it('lists the task by its title with its count and size, and each file with its type, size and source', async () => {
		const node = await taskNode();
		const item = api.attachments.getTreeItem(node);
		assert.equal(item.label, title);
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

	const open = (name: string) =>
		vscode.commands.executeCommand('agentDesk.openAttachment', project, task, ids.get(name));

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
		assert.equal(
			document?.getText(),
			'{\n  "$schema": "http://127.0.0.1:9/schema.json",\n  "id": 12345678901234567890\n}\n',
		);
		assert.ok(
			!vscode.workspace.textDocuments.some(
				(d) => d.uri.scheme === 'desk-attachment' && d.uri.path.endsWith('/schema.json'),
			),
			'never opened under its .json name',
		);
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
			row: {
				task_id: task,
				id: ids.get('tool.py'),
				name: 'forged.py',
				media_type: 'text/plain',
				unavailable: null,
				...row,
			},
		});
		// Another project's name, an id of the wrong shape, an id no attachment has: nothing opens.
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({ project: 'no-such-project' }));
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({}, { id: '../../x' }));
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({}, { id: '0'.repeat(32) }));
		await vscode.commands.executeCommand('agentDesk.openAttachment', forged({ project: { name: project } }));
		assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, before);
		// A node's own name and type are not believed: the stored row is what opens.
		await vscode.commands.executeCommand(
			'agentDesk.openAttachment',
			forged({}, { name: 'forged.json', media_type: 'application/json' }),
		);
		assert.equal(vscode.window.activeTextEditor?.document.languageId, 'python');
		assert.ok(vscode.window.activeTextEditor?.document.uri.path.endsWith('/tool.py'));
	});
});
