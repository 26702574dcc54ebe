import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { type AttachmentStore } from '../../../server/src/attachments/attachmentStore';
import { exactBytes } from '../../../server/src/attachments/names';
import type { OutboxTask } from '../../../server/src/attachments/types';
import { tempDir } from '../../helpers/temp';
import { openAttachments } from './attachmentFixture';

const task = '0190f0f0-0000-7000-8000-000000000001';

/** A path inside `folder` whose last component is the bytes `name` (a name that is not UTF-8 is only a Buffer). */
function rawPath(folder: string, ...names: Buffer[]): Buffer {
	return Buffer.concat([Buffer.from(folder), ...names.flatMap((n) => [Buffer.from('/'), n])]);
}

function writeOutboxFile(store: AttachmentStore, taskId: string, rel: string, content: string): void {
	const file = path.join(store.prepareOutbox(taskId), rel);
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, content);
}

it('outbox names that are not UTF-8 are attached under their bytes escaped, removed, and the outbox closes', async () => {
	const { store } = await openAttachments(tempDir());
	const outbox = store.prepareOutbox(task);
	const latin1 = Buffer.from('caf\xe9.txt', 'latin1');
	const otherByte = Buffer.from('caf\xe8.txt', 'latin1');
	const folder = Buffer.from([0x64, 0xff, 0x5c, 0x78]); // d, 0xff, a backslash, x
	fs.writeFileSync(rawPath(outbox, latin1), 'one\n');
	fs.writeFileSync(rawPath(outbox, otherByte), 'two\n');
	fs.mkdirSync(rawPath(outbox, folder));
	fs.writeFileSync(rawPath(outbox, folder, Buffer.from('plain.txt')), 'three\n');
	fs.symlinkSync('/', rawPath(outbox, Buffer.from([0x6c, 0x80])));
	const report = store.ingest(task, { runId: 'run-1' });
	assert.deepEqual(
		report.added.map((r) => [r.name, r.size]),
		[
			['caf\\xe8.txt', 4],
			['caf\\xe9.txt', 4],
			['d\\xff\\\\x/plain.txt', 6],
		],
	);
	assert.deepEqual(report.refused, [{ name: 'l\\x80', reason: 'a link: not followed' }]);
	assert.deepEqual(report.kept, []);
	assert.deepEqual(fs.readdirSync(outbox), [], 'every entry handled is gone from the outbox');
	assert.equal(store.closeOutbox(task), true);
	assert.deepEqual(store.outboxes(), []);
	assert.deepEqual(
		store.list(task).map((r) => store.read(r).toString()),
		['two\n', 'one\n', 'three\n'],
	);
});

it('a file one byte over a limit is refused with both sizes exact (a rounded 32.0 MiB read the same either side)', async () => {
	const { store } = await openAttachments(tempDir(), { fileBytes: 2048, taskBytes: 3 * 1024 });
	assert.equal(exactBytes(32 * 1024 * 1024), '33,554,432 bytes (32 MiB)');
	assert.equal(exactBytes(32 * 1024 * 1024 + 1), '33,554,433 bytes');
	assert.equal(exactBytes(1), '1 byte');
	const outbox = store.prepareOutbox(task);
	fs.writeFileSync(path.join(outbox, 'big.bin'), Buffer.alloc(2049));
	fs.writeFileSync(path.join(outbox, 'two.bin'), Buffer.alloc(2048));
	fs.writeFileSync(path.join(outbox, 'zthird.bin'), Buffer.alloc(1025));
	const report = store.ingest(task);
	assert.deepEqual(report.refused, [
		{ name: 'big.bin', reason: '2,049 bytes is over the 2,048 bytes (2 KiB) limit of a file' },
		{
			name: 'zthird.bin',
			reason: "the task's attachments would come to 3,073 bytes, over its 3,072 bytes (3 KiB) limit",
		},
	]);
	const file = path.join(tempDir(), 'hand.bin');
	fs.writeFileSync(file, Buffer.alloc(2049));
	assert.throws(
		() => store.add(task, file, { addedBy: 'me' }),
		(error: Error) =>
			error.message ===
			`${file} is 2,049 bytes, over the 2,048 bytes (2 KiB) limit of a file; it is refused, not truncated.`,
	);
});

it('start-up tidies the outboxes: a gone task loses its outbox, an ended task has it emptied into the store and removed', async () => {
	const { store } = await openAttachments(tempDir());
	const gone = '0190f0f0-0000-7000-8000-00000000000a';
	const ended = '0190f0f0-0000-7000-8000-00000000000b';
	const open = '0190f0f0-0000-7000-8000-00000000000c';
	writeOutboxFile(store, gone, 'deep/left.txt', 'left\n');
	fs.symlinkSync('/', path.join(store.outboxDir(gone), 'root'));
	fs.writeFileSync(rawPath(store.outboxDir(gone), Buffer.from([0xff])), 'x');
	writeOutboxFile(store, ended, 'kept.txt', 'kept by the last ingest\n');
	writeOutboxFile(store, open, 'wip.txt', 'the next attempt takes it\n');
	fs.mkdirSync(path.join(store.storeDir, 'outbox', 'not a task id'));
	// An unknown task's outbox written before the database began recording: it cannot say the task is gone.
	const older = '0190f0f0-0000-7000-8000-00000000000d';
	writeOutboxFile(store, older, 'before.txt', 'from before the database\n');
	const hourAgo = new Date(Date.now() - 3_600_000);
	fs.utimesSync(store.outboxDir(older), hourAgo, hourAgo);
	const tasks: Record<string, OutboxTask> = { [ended]: { ended: true, lastRun: 'run-9' }, [open]: { ended: false } };
	const tidy = store.tidyOutboxes((id) => tasks[id]);
	assert.deepEqual(tidy, { removed: [gone], ended: [ended], kept: [], notVouched: [older] });
	assert.deepEqual(store.outboxes(), [open, older, 'not a task id']);
	assert.deepEqual(fs.readdirSync(store.outboxDir(older)), ['before.txt']);
	assert.deepEqual(
		store.list(ended).map((r) => [r.name, r.run_id, store.read(r).toString()]),
		[['kept.txt', 'run-9', 'kept by the last ingest\n']],
	);
	assert.deepEqual(store.list(gone), []);
	assert.deepEqual(fs.readdirSync(store.outboxDir(open)), ['wip.txt']);
	// Again: nothing left to do.
	assert.deepEqual(
		store.tidyOutboxes((id) => tasks[id]),
		{ removed: [], ended: [], kept: [], notVouched: [older] },
	);
});
