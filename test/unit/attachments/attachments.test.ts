import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { it } from 'node:test';
import { AttachmentStore, resolveAttachment } from '../../../server/src/attachments/attachmentStore';
import type { AttachmentRow } from '../../../server/src/attachments/types';
import {
	baseName,
	cleanName,
	detectType,
	humanBytes,
	inlineType,
	maxNameBytes,
	previewable,
	typeByName,
} from '../../../server/src/attachments/names';
import { isDeskError } from '../../../server/src/core/errors';
import { race, swapFolderForLink } from '../../helpers/races';
import { tempDir } from '../../helpers/temp';
import { openAttachments } from './attachmentFixture';

const task = '0190f0f0-0000-7000-8000-000000000001';
const png = Buffer.from(
	'89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0f0b0d40000000049454e44ae426082',
	'hex',
);
const mib = 1024 * 1024;

function outboxFile(store: AttachmentStore, rel: string, bytes: string | Buffer): string {
	const file = path.join(store.prepareOutbox(task), rel);
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, bytes);
	return file;
}

it('ingest attaches every regular file at any depth under its path, empties the outbox and leaves it in place', async () => {
	const { store } = await openAttachments(tempDir());
	const outbox = store.prepareOutbox(task);
	assert.deepEqual(AttachmentStore.env(task, outbox), { DESK_TASK_ATTACHMENTS: outbox, DESK_TASK_ID: task });
	assert.match(AttachmentStore.promptSection(outbox), new RegExp(outbox.replace(/[/.]/g, '\\$&')));
	outboxFile(store, 'chart.png', png);
	outboxFile(store, 'data/rows.csv', 'a,b\n1,2\n');
	outboxFile(store, 'report.html', '<h1>Report</h1>');
	const report = store.ingest(task, { runId: 'run-1' });
	assert.deepEqual(
		report.added.map((r) => [r.name, r.media_type, r.size, r.source, r.run_id]),
		[
			['chart.png', 'image/png', png.length, 'run', 'run-1'],
			['data/rows.csv', 'text/csv', 8, 'run', 'run-1'],
			['report.html', 'text/html', 15, 'run', 'run-1'],
		],
	);
	assert.deepEqual(fs.readdirSync(outbox), [], 'emptied');
	assert.ok(fs.statSync(outbox).isDirectory(), 'left in place');
	for (const row of report.added) {
		assert.match(row.id, /^[0-9a-f]{32}$/);
		assert.ok(fs.existsSync(path.join(store.storeDir, row.id)), 'stored under its id, not its name');
		assert.equal(createHash('sha256').update(store.read(row)).digest('hex'), row.sha256);
	}
	assert.equal(fs.readFileSync(path.join(store.storeDir, '.gitignore'), 'utf8').split('\n').includes('*'), true);
	assert.deepEqual(store.tasks(), [{ task_id: task, count: 3, bytes: png.length + 8 + 15 }]);
	assert.deepEqual(store.journalLines(task), [`task ${task}: attached 3 files (${humanBytes(png.length + 23)})`]);
	// A missing outbox is not an error; CloseOutbox removes an empty one, Outboxes lists the rest.
	assert.deepEqual(store.outboxes(), [task]);
	assert.equal(store.closeOutbox(task), true);
	assert.deepEqual(store.outboxes(), []);
	assert.deepEqual(store.ingest(task), { added: [], refused: [], kept: [], already: [] });
});

it('the same ingest twice, or again after the file came back, attaches each file once for a run', async () => {
	const { store } = await openAttachments(tempDir());
	outboxFile(store, 'a.txt', 'same\n');
	assert.equal(store.ingest(task, { runId: 'run-1' }).added.length, 1);
	outboxFile(store, 'a.txt', 'same\n');
	const again = store.ingest(task, { runId: 'run-1' });
	assert.deepEqual([again.added.length, again.already], [0, ['a.txt']]);
	assert.equal(store.list(task).length, 1);
	// Another run making the same file is another attachment.
	outboxFile(store, 'a.txt', 'same\n');
	assert.equal(store.ingest(task, { runId: 'run-2' }).added.length, 1);
});

it('links (final and in a parent), a hard link to an outside file, a FIFO and a socket are named, never followed or read, and nothing blocks', async () => {
	const root = tempDir();
	const { store } = await openAttachments(path.join(root, 'project'));
	const outside = path.join(root, 'outside');
	fs.mkdirSync(outside);
	fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n');
	const outbox = store.prepareOutbox(task);
	fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(outbox, 'link.txt'));
	fs.symlinkSync(outside, path.join(outbox, 'linked-folder'));
	fs.linkSync(path.join(outside, 'secret.txt'), path.join(outbox, 'hard.txt'));
	assert.equal(spawnSync('mkfifo', [path.join(outbox, 'pipe')]).status, 0);
	const server = net.createServer();
	await new Promise<void>((resolve) => server.listen(path.join(outbox, 'sock'), resolve));
	outboxFile(store, 'ok.txt', 'fine\n');
	const started = Date.now();
	const report = store.ingest(task, { runId: 'run-1' });
	server.close();
	assert.ok(Date.now() - started < 2000, 'a FIFO with no writer did not block the ingest');
	assert.deepEqual(
		report.added.map((r) => r.name),
		['ok.txt'],
	);
	assert.deepEqual(report.refused, [
		{ name: 'hard.txt', reason: 'a hard link to a file elsewhere: not read' },
		{ name: 'link.txt', reason: 'a link: not followed' },
		{ name: 'linked-folder', reason: 'a link: not followed' },
		{ name: 'pipe', reason: 'a FIFO: not read' },
		{ name: 'sock', reason: 'a socket: not read' },
	]);
	assert.equal(
		fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'),
		'outside secret\n',
		'the outside file is untouched',
	);
	assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
	assert.deepEqual(fs.readdirSync(outbox), [], 'the links are removed from the outbox, not what they point to');
	assert.match(store.journalLines(task)[0]!, /refused hard\.txt: a hard link .*; link\.txt: a link: not followed/);
});

it('a folder swapped for a link while ingests run: nothing outside the store is read or written', async () => {
	const root = tempDir();
	const { store } = await openAttachments(path.join(root, 'project'));
	const outside = path.join(root, 'outside');
	fs.mkdirSync(outside);
	fs.writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE\n');
	const outbox = store.prepareOutbox(task);
	const swapper = swapFolderForLink(outbox, outside, { refill: true });
	let ingests = 0;
	const rows: AttachmentRow[] = [];
	let linksSeen = 0;
	try {
		await race(
			() => ingests > 20 && linksSeen > 0 && rows.length > 0,
			() => {
				const report = store.ingest(task, { runId: `run-${ingests}` });
				rows.push(...report.added);
				linksSeen += report.refused.filter((r) => /not followed/.test(r.reason)).length;
				ingests += 1;
			},
		);
	} finally {
		await swapper.stop();
	}
	assert.ok(ingests > 20, `${ingests} ingests ran`);
	assert.ok(
		linksSeen > 0 && rows.length > 0,
		`the race was real: ${linksSeen} links met, ${rows.length} files attached`,
	);
	for (const row of rows) {
		assert.doesNotMatch(store.read(row).toString('utf8'), /OUTSIDE/, 'no attachment holds the outside file');
	}
	assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'OUTSIDE\n');
	assert.deepEqual(fs.readdirSync(outside), ['secret.txt'], 'nothing outside was removed or written');
});

it('limits at their exact boundaries: a file of 32 MiB and one byte more; the 100th and 101st file; 128 MiB a task', async () => {
	const { store } = await openAttachments(tempDir());
	outboxFile(store, 'exact.bin', Buffer.alloc(32 * mib, 1));
	outboxFile(store, 'over.bin', Buffer.alloc(32 * mib + 1, 2));
	const report = store.ingest(task, { runId: 'run-1' });
	assert.deepEqual(
		report.added.map((r) => [r.name, r.size]),
		[['exact.bin', 32 * mib]],
	);
	assert.deepEqual(report.refused, [
		{ name: 'over.bin', reason: '33,554,433 bytes is over the 33,554,432 bytes (32 MiB) limit of a file' },
	]);
	// Three more of 32 MiB make 128 MiB exactly; one more byte is refused, the quota unchanged.
	for (const name of ['b.bin', 'c.bin', 'd.bin']) {
		store.put(task, { name, source: 'hand', addedBy: 'test' }, Buffer.alloc(32 * mib, 3));
	}
	assert.deepEqual(store.tasks(), [{ task_id: task, count: 4, bytes: 128 * mib }]);
	assert.throws(
		() => store.put(task, { name: 'e.bin', source: 'hand', addedBy: 'test' }, Buffer.alloc(1)),
		(e) =>
			isDeskError(e, 'attachment.quota') &&
			/would come to 134,217,729 bytes, over its 134,217,728 bytes \(128 MiB\) limit/.test(e.message),
	);
	assert.throws(
		() => store.put(task, { name: 'big.bin', source: 'hand', addedBy: 'test' }, Buffer.alloc(32 * mib + 1)),
		(e) => isDeskError(e, 'attachment.tooLarge') && /refused, not truncated/.test(e.message),
	);
	assert.deepEqual(store.tasks(), [{ task_id: task, count: 4, bytes: 128 * mib }]);

	const other = '0190f0f0-0000-7000-8000-000000000002';
	for (let i = 1; i <= 100; i++) {
		store.put(other, { name: `f${i}.txt`, source: 'hand', addedBy: 'test' }, Buffer.from(`${i}\n`));
	}
	assert.throws(
		() => store.put(other, { name: 'f101.txt', source: 'hand', addedBy: 'test' }, Buffer.from('101\n')),
		(e) => isDeskError(e, 'attachment.quota') && /has 100 attachments/.test(e.message),
	);
	assert.equal(store.list(other).length, 100);
});

it('the project limit at its boundary (a smaller limit stands in for 1 GiB), and Room names the limit', async () => {
	const { store } = await openAttachments(tempDir(), { projectBytes: 1000 });
	store.put(task, { name: 'a', source: 'hand', addedBy: 't' }, Buffer.alloc(600));
	store.put('0190f0f0-0000-7000-8000-000000000009', { name: 'b', source: 'hand', addedBy: 't' }, Buffer.alloc(400));
	assert.equal(store.room(task, 1), "the project's attachments would come to 1,001 bytes, over its 1,000 bytes limit");
	outboxFile(store, 'c.txt', 'x');
	const report = store.ingest(task, { runId: 'r' });
	assert.deepEqual(report.refused, [
		{ name: 'c.txt', reason: "the project's attachments would come to 1,001 bytes, over its 1,000 bytes limit" },
	]);
	assert.equal(store.room(task, 0), '');
});

it('CleanName: slashes, no empty, . or .. components, no control or format characters, valid UTF-8, the end kept', () => {
	assert.equal(cleanName('/abs/../x/./y.txt'), 'abs/x/y.txt');
	assert.equal(cleanName('a\\b\\c.md'), 'a/b/c.md');
	assert.equal(cleanName('report\u202Etxt.exe'), 'reporttxt.exe', 'a right-to-left override is removed');
	assert.equal(cleanName('na\u0000me\u0007\u200B.txt'), 'name.txt');
	assert.equal(cleanName('bad\uD800surrogate'), 'bad\uFFFDsurrogate');
	assert.equal(cleanName('../..'), 'attachment');
	assert.equal(cleanName(''), 'attachment');
	const long = `${'ä'.repeat(200)}/end-of-name.csv`;
	const cleaned = cleanName(long);
	assert.ok(Buffer.byteLength(cleaned) <= maxNameBytes);
	assert.ok(cleaned.endsWith('/end-of-name.csv'));
	assert.ok(!cleaned.includes('\uFFFD'), 'no character cut in half');
	assert.equal(baseName('a/b/c.png'), 'c.png');
	// Cutting to the end must not leave a `..` component or a leading space behind.
	const cut = cleanName(`AAAA../${'B'.repeat(252)}`);
	assert.ok(!cut.split('/').includes('..') && !cut.startsWith(' '), cut.slice(0, 12));
	assert.equal(cleanName(`x/ ${'C'.repeat(254)}`), 'C'.repeat(254));
});

it('a name with U+202E is attached cleaned', async () => {
	const { store } = await openAttachments(tempDir());
	outboxFile(store, 'invoice\u202Efdp.exe', 'MZ');
	assert.deepEqual(
		store.ingest(task).added.map((r) => r.name),
		['invoicefdp.exe'],
	);
});

it('DetectType, InlineType, Previewable and TypeByName: the bytes decide; a recorded type is only a claim', () => {
	assert.equal(detectType('x.png', png), 'image/png');
	assert.equal(detectType('x.txt', png), 'image/png', 'the bytes win over the name');
	assert.equal(detectType('x.png', Buffer.from('<html>')), 'text/plain', 'text named .png is text');
	assert.equal(detectType('a.csv', Buffer.from('a,b')), 'text/csv');
	assert.equal(detectType('a.json', Buffer.from('{}')), 'application/json');
	assert.equal(detectType('a.svg', Buffer.from('<svg/>')), 'image/svg+xml');
	assert.equal(detectType('a.md', Buffer.from('# x')), 'text/markdown');
	assert.equal(detectType('a.pdf', Buffer.from('%PDF-1.7')), 'application/pdf');
	assert.equal(detectType('a.bin', Buffer.from([0, 1, 2])), 'application/octet-stream');
	assert.deepEqual(inlineType('image/png', png), { type: 'image/png', inline: true });
	assert.deepEqual(
		inlineType('image/png', Buffer.from('<script>')),
		{ type: 'application/octet-stream', inline: false },
		'a PNG that is not one is not shown',
	);
	assert.deepEqual(inlineType('text/html', Buffer.from('<h1>')), { type: 'text/html', inline: true });
	assert.deepEqual(inlineType('text/plain', png), { type: 'application/octet-stream', inline: false });
	assert.deepEqual(inlineType('application/pdf', Buffer.from('%PDF-1.4')), { type: 'application/pdf', inline: true });
	assert.equal(previewable('image/png'), true);
	assert.equal(previewable('application/zip'), false);
	assert.equal(typeByName('chart.PNG'), 'image/png');
	assert.equal(typeByName('main.rs'), 'text/plain');
	assert.equal(typeByName('blob'), 'application/octet-stream');
	assert.deepEqual(
		[humanBytes(0), humanBytes(1023), humanBytes(1024), humanBytes(32 * mib), humanBytes(1024 * mib)],
		['0 B', '1023 B', '1.0 KiB', '32.0 MiB', '1.0 GiB'],
	);
});

it('a file changed after ingest: reading shows the stored bytes, and a store file changed behind the desk is refused', async () => {
	const { store } = await openAttachments(tempDir());
	const file = outboxFile(store, 'notes.txt', 'first\n');
	const [row] = store.ingest(task).added;
	fs.writeFileSync(file, 'changed in the outbox\n');
	assert.equal(store.read(row!).toString(), 'first\n');
	fs.writeFileSync(path.join(store.storeDir, row!.id), 'tampered\n');
	assert.throws(
		() => store.read(row!),
		(e) => isDeskError(e, 'attachment.changed'),
	);
	fs.writeFileSync(path.join(store.storeDir, row!.id), 'FIRST\n');
	assert.throws(
		() => store.read(row!),
		(e) => isDeskError(e, 'attachment.changed') && /digest/.test(e.message),
	);
	fs.rmSync(path.join(store.storeDir, row!.id));
	fs.symlinkSync('/etc/hostname', path.join(store.storeDir, row!.id));
	assert.throws(
		() => store.read(row!),
		(e) => isDeskError(e, 'attachment.notRegular'),
	);
});

it('Add by hand, Record for bytes elsewhere, Resolve by id, prefix or name, Delete with audit and journal', async () => {
	const root = tempDir();
	const { store } = await openAttachments(path.join(root, 'project'));
	const file = path.join(root, 'summary.md');
	fs.writeFileSync(file, '# Summary\n');
	const added = store.add(task, file, { addedBy: 'desk-user', note: 'for the review' });
	assert.deepEqual(
		[added.name, added.source, added.media_type, added.note],
		['summary.md', 'hand', 'text/markdown', 'for the review'],
	);
	fs.symlinkSync(file, path.join(root, 'link.md'));
	assert.throws(
		() => store.add(task, path.join(root, 'link.md'), { addedBy: 'x' }),
		(e) => isDeskError(e, 'attachment.notRegular'),
	);
	assert.throws(
		() => store.add(task, root, { addedBy: 'x' }),
		(e) => isDeskError(e, 'attachment.notRegular'),
	);
	const recorded = store.record(
		task,
		{ name: 'remote/plot.png', source: 'remote', addedBy: 'hub' },
		1234,
		'a'.repeat(64),
		'the result had no room for it',
	);
	assert.deepEqual([recorded.unavailable, recorded.media_type], ['the result had no room for it', 'image/png']);
	assert.throws(
		() => store.read(recorded),
		(e) => isDeskError(e, 'attachment.unavailable'),
	);
	const rows = store.list(task);
	assert.equal(resolveAttachment(rows, added.id).id, added.id);
	assert.equal(resolveAttachment(rows, added.id.slice(0, 6)).id, added.id);
	assert.equal(resolveAttachment(rows, 'summary.md').id, added.id);
	assert.throws(
		() => resolveAttachment(rows, added.id.slice(0, 5)),
		(e) => isDeskError(e, 'attachment.notFound'),
		'five characters are not enough',
	);
	const twin = store.put(task, { name: 'summary.md', source: 'hand', addedBy: 'x' }, Buffer.from('other\n'));
	assert.throws(
		() => resolveAttachment(store.list(task), 'summary.md'),
		(e) => isDeskError(e, 'attachment.ambiguous'),
	);
	const deleted = store.delete(task, twin.id, 'desk-user', 'desk task attachments rm');
	assert.equal(deleted.id, twin.id);
	assert.equal(fs.existsSync(path.join(store.storeDir, twin.id)), false);
	assert.deepEqual(
		store.audit(task).map((a) => [a.attachment_id, a.actor, a.via, a.action]),
		[[twin.id, 'desk-user', 'desk task attachments rm', 'delete']],
	);
	assert.ok(
		store
			.journalLines(task)
			.some((l) => l.includes(`desk-user deleted attachment summary.md (${twin.id}) via desk task attachments rm`)),
	);
});

it('Put scrubs credentials, also base64-, URL- and JSON-escaped, and records the size and digest of what was stored', async () => {
	const { store } = await openAttachments(tempDir());
	const secret = 'sk-live-0123456789abcdef';
	const text = `key=${secret}\nb64=${Buffer.from(secret).toString('base64')}\nurl=${encodeURIComponent(secret)}\njson=${JSON.stringify(secret)}\n`;
	const row = store.put(task, { name: 'env.txt', source: 'run', addedBy: 'run' }, Buffer.from(text), undefined, [
		secret,
	]);
	const stored = store.read(row).toString();
	assert.ok(!stored.includes(secret) && !stored.includes(Buffer.from(secret).toString('base64')));
	assert.equal(row.size, Buffer.byteLength(stored));
	assert.equal(row.sha256, createHash('sha256').update(stored).digest('hex'));
	outboxFile(store, 'log.txt', `token ${secret}`);
	const [ingested] = store.ingest(task, { runId: 'r', secrets: [secret] }).added;
	assert.equal(store.read(ingested!).toString(), 'token [secret removed]');
});

it('Sweep removes only old files no row names, written since the database began; RemoveOutbox removes an outbox with what is in it', async () => {
	const { store, db } = await openAttachments(tempDir());
	const row = store.put(task, { name: 'kept.txt', source: 'hand', addedBy: 't' }, Buffer.from('k'));
	const orphan = path.join(store.storeDir, 'f'.repeat(32));
	const young = path.join(store.storeDir, 'e'.repeat(32));
	const older = path.join(store.storeDir, 'd'.repeat(32));
	fs.writeFileSync(orphan, 'orphan');
	fs.writeFileSync(young, 'young');
	fs.writeFileSync(older, 'older than the database');
	// The sweep runs an hour after the database began tracking.
	const since = db.trackingSince;
	const sweepAt = since + 3_600_000;
	const at = (file: string, ms: number) => fs.utimesSync(file, new Date(ms), new Date(ms));
	at(orphan, since + 1000);
	at(young, sweepAt - 1000);
	at(older, since - 3_600_000);
	assert.equal(store.sweep(600_000, sweepAt), 1);
	assert.equal(fs.existsSync(orphan), false);
	assert.equal(fs.existsSync(young), true, 'a file another process may be about to record is left');
	assert.equal(fs.existsSync(older), true, 'a file older than the database: its absence from it proves nothing');
	assert.equal(fs.existsSync(path.join(store.storeDir, row.id)), true);
	outboxFile(store, 'deep/er/file.txt', 'x');
	store.removeOutbox(task);
	assert.deepEqual(store.outboxes(), []);
});

it('a crash in the middle of an ingest: on restart nothing is lost and nothing is attached twice', async () => {
	const writer = path.join(__dirname, 'ingestWriter.js');
	for (let round = 0; round < 6; round++) {
		const folder = tempDir();
		const { store, db } = await openAttachments(folder);
		const names = Array.from({ length: 40 }, (_, i) => `file-${String(i).padStart(2, '0')}.txt`);
		for (const name of names) {
			outboxFile(store, name, `content of ${name}\n`.repeat(200));
		}
		db.close();
		const child = spawn(process.execPath, [writer, folder, task], { stdio: ['ignore', 'pipe', 'inherit'] });
		await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
		await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 40)));
		child.kill('SIGKILL');
		await new Promise((resolve) => child.on('exit', resolve));
		const reopened = await openAttachments(folder);
		const report = reopened.store.ingest(task, { runId: 'run-1' });
		const attached = reopened.store
			.list(task)
			.map((r) => r.name)
			.sort();
		assert.deepEqual(
			attached,
			names,
			`round ${round}: every file attached exactly once (${report.added.length} after the restart, ${report.already.length} already)`,
		);
		for (const row of reopened.store.list(task)) {
			assert.equal(reopened.store.read(row).toString(), `content of ${row.name}\n`.repeat(200));
		}
		assert.deepEqual(fs.readdirSync(reopened.store.outboxDir(task)), []);
		reopened.db.close();
	}
});
