import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
	AttachFile,
	DeleteAttachment,
	LaunchGo,
	ListAttachments,
	OpenWorkspace,
	ReadAttachment,
	RunDidFinish,
	SetTicket,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('attachments over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	it("a run's outbox files are attached to its task when the attempt ends, listed, read back checked, and deleted", async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Chart the sales' });
		const settings = scriptedAgentSettings({
			writes: [{ path: 'sales.ts', content: 'x\n' }],
			outbox: [
				{ name: 'sales.csv', content: 'month,total\njan,10\n' },
				{ name: 'page.html', content: '<h1>Sales</h1><script>alert(1)</script>' },
			],
		});
		const record = await server.call(LaunchGo, { project: 'shop', settings });
		await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to finish');
		assert.ok(
			server.notifications.some(
				(n) => n.method === 'desk/attachments/didChange' && (n.params as { task: string }).task === record.task,
			),
			'the view is told',
		);
		const { tasks } = await server.call(ListAttachments, { project: 'shop' });
		assert.deepEqual(
			tasks.map((t) => [t.task_id, t.title, t.count]),
			[[record.task, 'Chart the sales', 2]],
		);
		assert.deepEqual(
			tasks[0]!.files.map((f) => [f.name, f.media_type, f.source, f.run_id]),
			[
				['page.html', 'text/html', 'run', record.run],
				['sales.csv', 'text/csv', 'run', record.run],
			],
		);
		const csv = await server.call(ReadAttachment, { project: 'shop', task: record.task, ref: 'sales.csv' });
		assert.deepEqual(
			[csv.inline_type, csv.inline, Buffer.from(csv.base64, 'base64').toString(), csv.truncated],
			['text/csv', true, 'month,total\njan,10\n', false],
		);
		const head = await server.call(ReadAttachment, {
			project: 'shop',
			task: record.task,
			ref: csv.row.id.slice(0, 8),
			max_bytes: 5,
		});
		assert.deepEqual([Buffer.from(head.base64, 'base64').toString(), head.truncated], ['month', true]);
		// The stored file is changed behind the desk's back: refused, never served.
		fs.writeFileSync(path.join(repo, '.desk', 'attachments', csv.row.id), 'month,total\njan,99\n');
		const changed = await expectRpcError(server.connection, ReadAttachment.method, {
			project: 'shop',
			task: record.task,
			ref: 'sales.csv',
		});
		assert.equal((changed.data as DeskErrorJson).code, 'attachment.changed');
		const deleted = await server.call(DeleteAttachment, {
			project: 'shop',
			task: record.task,
			ref: 'sales.csv',
			via: 'Attachments view',
		});
		assert.equal(deleted.id, csv.row.id);
		const missing = await expectRpcError(server.connection, ReadAttachment.method, {
			project: 'shop',
			task: record.task,
			ref: 'sales.csv',
		});
		assert.equal((missing.data as DeskErrorJson).code, 'attachment.notFound');
	});

	it('Attach File by hand: a file is attached; a link, a folder and a file over the limit are refused by name', async () => {
		const task = '0190f0f0-0000-7000-8000-0000000000aa';
		const file = path.join(root, 'notes.md');
		fs.writeFileSync(file, '# Notes\n');
		const row = await server.call(AttachFile, { project: 'shop', task, path: file, note: 'by hand' });
		assert.deepEqual(
			[row.name, row.source, row.media_type, row.note],
			['notes.md', 'hand', 'text/markdown', 'by hand'],
		);
		fs.symlinkSync(file, path.join(root, 'link.md'));
		const link = await expectRpcError(server.connection, AttachFile.method, {
			project: 'shop',
			task,
			path: path.join(root, 'link.md'),
		});
		assert.equal((link.data as DeskErrorJson).code, 'attachment.notRegular');
		const folder = await expectRpcError(server.connection, AttachFile.method, { project: 'shop', task, path: root });
		assert.equal((folder.data as DeskErrorJson).code, 'attachment.notRegular');
		const big = path.join(root, 'big.bin');
		fs.writeFileSync(big, Buffer.alloc(32 * 1024 * 1024 + 1));
		const tooLarge = await expectRpcError(server.connection, AttachFile.method, { project: 'shop', task, path: big });
		assert.equal((tooLarge.data as DeskErrorJson).code, 'attachment.tooLarge');
		assert.match(tooLarge.message, /over the 32\.0 MiB limit of a file; it is refused, not truncated/);
		const badTask = await expectRpcError(server.connection, AttachFile.method, {
			project: 'shop',
			task: '../../etc',
			path: file,
		});
		assert.equal((badTask.data as DeskErrorJson).code, 'attachment.badName');
	});
});
