import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { pieceBytes, readForOpening, readWhole, type ReadPiece } from '../../client/src/attachments/attachmentReader';
import {
	AttachFile,
	DecideRun,
	DeleteAttachment,
	LaunchGo,
	ListAttachments,
	OpenWorkspace,
	ReadAttachment,
	RunDidFinish,
	SetTicket,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { desk } from '../helpers/deskCli';
import { makeRepo } from '../helpers/gitRepo';
import { carrierOf } from '../helpers/runProcesses';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('attachments over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const outboxes = path.join(repo, '.desk', 'attachments', 'outbox');
	/** An outbox of a task the project does not hold, a file and a link in it, as a stopped desk leaves one. */
	const leaveOutbox = (taskId: string) => {
		fs.mkdirSync(path.join(outboxes, taskId, 'deep'), { recursive: true });
		fs.writeFileSync(path.join(outboxes, taskId, 'deep', 'report.txt'), 'left behind\n');
		fs.symlinkSync(root, path.join(outboxes, taskId, 'root'));
	};
	// Older than the project's database, which cannot say its task is gone.
	const olderTask = '0190f0f0-0000-7000-8000-0000000000fe';
	leaveOutbox(olderTask);
	/** The task of the first test's run, which the later tests attach to. */
	let ranTask = '';
	let ranRun = '';
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	it('at start-up, the outbox of a task the project does not hold is removed with what it held', () => {
		assert.deepEqual(
			fs.readdirSync(path.join(outboxes, olderTask)).sort(),
			['deep', 'root'],
			'older than the database: left',
		);
		const goneTask = '0190f0f0-0000-7000-8000-0000000000ff';
		leaveOutbox(goneTask);
		// Another desk starts on the project (the command line, beside the window's).
		const listed = desk('--store', path.join(root, 'library'), '--repo', repo, 'task', 'attachments', 'list');
		assert.equal(listed.code, 0, listed.stderr);
		assert.equal(fs.existsSync(path.join(outboxes, goneTask)), false);
		assert.equal(fs.existsSync(root), true, 'the link was removed, never followed');
		assert.ok(fs.existsSync(path.join(outboxes, olderTask, 'deep', 'report.txt')));
	});

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
		ranTask = record.task;
		ranRun = record.run;
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
		const task = ranTask;
		const file = path.join(root, 'notes.md');
		fs.writeFileSync(file, '# Notes\n');
		// A task id that names no task of the project: refused, nothing stored.
		const noTask = await expectRpcError(server.connection, AttachFile.method, {
			project: 'shop',
			task: '0190f0f0-0000-7000-8000-0000000000aa',
			path: file,
		});
		assert.equal((noTask.data as DeskErrorJson).code, 'ai.notFound');
		assert.deepEqual(
			(await server.call(ListAttachments, { project: 'shop' })).tasks.map((t) => t.task_id),
			[ranTask],
		);
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
		assert.match(
			tooLarge.message,
			/ is 33,554,433 bytes, over the 33,554,432 bytes \(32 MiB\) limit of a file; it is refused, not truncated\.$/,
		);
		const badTask = await expectRpcError(server.connection, AttachFile.method, {
			project: 'shop',
			task: '../../etc',
			path: file,
		});
		assert.equal((badTask.data as DeskErrorJson).code, 'attachment.badName');
	});

	it('opening decides from the recorded type before reading, and from the first piece; what is shown is read in pieces, its digest checked', async () => {
		const calls: Array<[number, number]> = [];
		const pieces =
			(ref: string): ReadPiece =>
			(offset, maxBytes) => {
				calls.push([offset, maxBytes]);
				return server.call(ReadAttachment, { project: 'shop', task: ranTask, ref, offset, max_bytes: maxBytes });
			};
		const attach = async (name: string, bytes: Buffer) => {
			const file = path.join(root, name);
			fs.writeFileSync(file, bytes);
			return server.call(AttachFile, { project: 'shop', task: ranTask, path: file });
		};
		// A type the desk never shows: the Save As… page, not a byte read.
		const zip = await attach('bundle.zip', Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(3 * pieceBytes)]));
		assert.equal(zip.media_type, 'application/zip');
		assert.deepEqual(await readForOpening(zip, pieces(zip.id)), { download: zip });
		assert.equal(calls.length, 0, 'nothing read');
		// Text of three pieces and a bit: read piece by piece, whole, checked.
		const text = Buffer.from('month,total\n'.repeat(Math.ceil((3 * pieceBytes + 10) / 12)));
		const csv = await attach('big.csv', text);
		const opened = await readForOpening(csv, pieces(csv.id));
		assert.ok('content' in opened);
		assert.equal(createHash('sha256').update(Buffer.from(opened.content.base64, 'base64')).digest('hex'), csv.sha256);
		assert.deepEqual([opened.content.inline_type, opened.content.truncated], ['text/csv', false]);
		assert.deepEqual(
			calls.map(([offset]) => offset),
			[0, pieceBytes, 2 * pieceBytes, 3 * pieceBytes],
		);
		// Its stored bytes changed behind the desk's back (same size): the first piece is not text, so
		// the Save As… page, after that piece only; a change past the first piece fails the digest.
		const stored = path.join(repo, '.desk', 'attachments', csv.id);
		const binary = Buffer.from(text);
		binary[0] = 0;
		fs.writeFileSync(stored, binary);
		calls.length = 0;
		assert.deepEqual(await readForOpening(csv, pieces(csv.id)), {
			download: csv,
			shownAs: 'application/octet-stream',
		});
		assert.deepEqual(calls, [[0, pieceBytes]]);
		const late = Buffer.from(text);
		late[2 * pieceBytes + 5] = 0x41;
		fs.writeFileSync(stored, late);
		await assert.rejects(readWhole(pieces(csv.id)), /do not match the digest recorded/);
	});

	it("the task's end (its run abandoned) attaches what its outbox still kept and removes the outbox", async () => {
		const outbox = path.join(outboxes, ranTask);
		fs.mkdirSync(outbox, { recursive: true });
		fs.writeFileSync(path.join(outbox, 'late.log'), 'kept for the next ingest\n');
		await server.call(DecideRun, { project: 'shop', run: ranRun, decision: 'abandon' });
		assert.equal(fs.existsSync(outbox), false);
		const files = (await server.call(ListAttachments, { project: 'shop' })).tasks[0]!.files;
		assert.deepEqual(
			files.filter((f) => f.name === 'late.log').map((f) => [f.run_id, f.size]),
			[[ranRun, 25]],
		);
	});
});

after(killStartedServers);

it("files an outbox still holds when it is taken later — crash recovery, the task's end, start-up — are scrubbed of the agent's secrets, known again from the run's settings", async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const library = path.join(root, 'library');
	const secret = `sk-desk-${createHash('sha256').update(root).digest('hex').slice(0, 24)}`;
	// The desk's environment holds the secret, as the window's does; its settings name only the variable.
	const env = { ...process.env, DESK_TEST_AGENT_KEY: secret };
	const settings = scriptedAgentSettings(
		{
			writes: [{ path: 'half.txt', content: 'half\n' }],
			outbox: [{ name: 'crash.log', content: `key=${secret}\n` }],
			sleepMs: 60_000,
		},
		{ sandbox: 'off' },
	);
	settings.agents[0]!.secretEnv = ['DESK_TEST_AGENT_KEY'];
	const withSecret = Buffer.from(`key=${secret}\n`).toString('base64');
	const opened = async () => {
		const server = await startServer(library, { env });
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		return server;
	};
	const textOf = async (server: Awaited<ReturnType<typeof opened>>, task: string, name: string) =>
		Buffer.from((await server.call(ReadAttachment, { project: 'shop', task, ref: name })).base64, 'base64').toString();

	// The desk and the run's own process (glossary: Carrier) are killed while the agent sleeps after
	// filling the outbox: the next desk's recovery takes it.
	const first = await opened();
	await first.call(SetTicket, { project: 'shop', ticket: 'Log the keys' });
	const record = await first.call(LaunchGo, { project: 'shop', settings });
	const outbox = path.join(repo, '.desk', 'attachments', 'outbox', record.task);
	for (let i = 0; !fs.existsSync(path.join(outbox, 'crash.log')); i++) {
		assert.ok(i < 400, 'the agent fills its outbox');
		await new Promise((r) => setTimeout(r, 50));
	}
	const carrier = carrierOf(library);
	assert.ok(carrier !== undefined, 'the run has a carrier');
	first.child.kill('SIGKILL');
	process.kill(carrier, 'SIGKILL');
	await first.exited;
	const second = await opened();
	assert.equal(await textOf(second, record.task, 'crash.log'), 'key=[secret removed]\n', 'crash recovery');

	// A file the outbox kept past the ingests, taken when the task ends.
	fs.mkdirSync(outbox, { recursive: true });
	fs.writeFileSync(path.join(outbox, 'late.log'), `key=${secret}\nencoded=${withSecret}\n`);
	await second.call(DecideRun, { project: 'shop', run: record.run, decision: 'abandon' });
	assert.equal(fs.existsSync(outbox), false);
	const late = await textOf(second, record.task, 'late.log');
	assert.ok(!late.includes(secret) && !late.includes(withSecret), late);
	assert.equal(late.split('[secret removed]').length - 1, 2, late);
	await second.stop();

	// An ended task's outbox a desk left (it stopped before the task's end emptied it), taken at start-up.
	fs.mkdirSync(outbox, { recursive: true });
	fs.writeFileSync(path.join(outbox, 'left.log'), `key=${secret}\n`);
	const third = await opened();
	const files = (await third.call(ListAttachments, { project: 'shop' })).tasks.find(
		(t) => t.task_id === record.task,
	)!.files;
	assert.ok(files.some((f) => f.name === 'left.log'));
	assert.equal(await textOf(third, record.task, 'left.log'), 'key=[secret removed]\n', 'start-up');
	assert.equal(fs.existsSync(outbox), false);
	await third.stop();
});
