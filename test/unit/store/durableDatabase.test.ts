import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { silentLogger } from '../../../server/src/core/logger';
import type { Migration } from '../../../server/src/store/durableDatabase';
import { encodeRecord, journalMagic } from '../../../server/src/store/journal';
import { tempDir } from '../../helpers/temp';
import { noteTexts, openTestDatabase } from '../../helpers/testDatabase';

const migrations: Migration[] = [
	{ version: 1, statements: ['CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE, data BLOB)'] },
];

function open(file: string, extra: Parameters<typeof openTestDatabase>[2] = {}) {
	return openTestDatabase(file, migrations, extra);
}

/**
 * The tests below simulate a crash by never closing a database object (a killed process closes
 * nothing, so never checkpoints) and opening the file again beside it.
 */

describe('DurableDatabase', () => {
	it('keeps acknowledged writes across a reopen without a checkpoint (journal replay)', async () => {
		const file = path.join(tempDir(), 'a.db');
		const db = await open(file);
		db.write((tx) => tx.run('INSERT INTO notes (text, data) VALUES (?, ?)', ['first', new Uint8Array([0, 1, 255])]));
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['second']));
		const journalBefore = fs.statSync(`${file}.journal`).size;
		assert.ok(journalBefore > journalMagic.length, 'the writes are in the journal');
		// Simulate a crash: the first object is never closed (so never checkpointed).
		const again = await open(file);
		assert.deepEqual(noteTexts(again), ['first', 'second']);
		assert.deepEqual(
			[...again.get<{ data: Uint8Array }>('SELECT data FROM notes WHERE text = ?', ['first'])!.data],
			[0, 1, 255],
		);
		again.close();
	});

	it('journals nothing for a transaction that changed no row, so no other process sees a change', async () => {
		const file = path.join(tempDir(), 'noop.db');
		const db = await open(file);
		const other = await open(file);
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['one']));
		const [journal, version, outside] = [db.journalBytes, db.dataVersion(), other.outsideVersion()];
		db.write((tx) => {
			tx.run(
				'INSERT INTO notes (text) VALUES (?) ON CONFLICT (text) DO UPDATE SET data = NULL WHERE data IS NOT NULL',
				['one'],
			);
			tx.run('UPDATE notes SET text = ? WHERE text = ?', ['two', 'none such']);
			tx.run('DELETE FROM notes WHERE id < 0');
		});
		assert.deepEqual([db.journalBytes, db.dataVersion(), other.outsideVersion()], [journal, version, outside]);
		db.write((tx) => tx.run('UPDATE notes SET text = ? WHERE text = ?', ['two', 'one']));
		assert.ok(other.outsideVersion() > outside, 'a write that changed a row is seen');
		assert.deepEqual(noteTexts(other), ['two']);
		other.close();
		db.close();
	});

	it('checkpoints into the base file and empties the journal', async () => {
		const file = path.join(tempDir(), 'b.db');
		const db = await open(file);
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['kept']));
		db.checkpoint();
		assert.equal(fs.statSync(`${file}.journal`).size, journalMagic.length);
		db.close();
		const again = await open(file);
		assert.deepEqual(noteTexts(again), ['kept']);
		assert.equal(again.schemaVersion, 1);
		again.close();
	});

	it('changes nothing when the transaction body throws', async () => {
		const file = path.join(tempDir(), 'c.db');
		const db = await open(file);
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['one']));
		assert.throws(() =>
			db.write((tx) => {
				tx.run('INSERT INTO notes (text) VALUES (?)', ['two']);
				tx.run('INSERT INTO notes (text) VALUES (?)', ['one']); // UNIQUE violation
			}),
		);
		assert.deepEqual(noteTexts(db), ['one']);
		db.close();
		const again = await open(file);
		assert.deepEqual(noteTexts(again), ['one'], 'the failed transaction left nothing in the journal either');
		again.close();
	});

	it('drops a torn record at the end of the journal (it was never acknowledged)', async () => {
		const file = path.join(tempDir(), 'd.db');
		const db = await open(file);
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['whole']));
		const torn = encodeRecord({ seq: 99, statements: [["INSERT INTO notes (text) VALUES ('torn')", []]] });
		fs.appendFileSync(`${file}.journal`, torn.subarray(0, torn.length - 3));
		const again = await open(file);
		assert.deepEqual(noteTexts(again), ['whole']);
		again.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['after']));
		again.close();
		const third = await open(file);
		assert.deepEqual(noteTexts(third), ['whole', 'after']);
		third.close();
	});

	it('keeps a copy of a journal with a damaged record and applies the valid prefix', async () => {
		const dir = tempDir();
		const file = path.join(dir, 'e.db');
		const db = await open(file);
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['good']));
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['flipped']));
		const bytes = fs.readFileSync(`${file}.journal`);
		bytes.writeUInt8(bytes.readUInt8(bytes.length - 5) ^ 0xff, bytes.length - 5);
		fs.writeFileSync(`${file}.journal`, bytes);
		const errors: string[] = [];
		const again = await open(file, { logger: { ...silentLogger, error: (m) => errors.push(m) } });
		assert.deepEqual(noteTexts(again), ['good']);
		assert.equal(errors.length, 1);
		assert.ok(
			fs.readdirSync(dir).some((n) => n.startsWith('e.db.journal.corrupt-')),
			'the damaged journal was kept',
		);
		again.close();
	});

	for (const [label, damage] of [
		['an empty file', () => Buffer.alloc(0)],
		['garbage', () => Buffer.from('this is not a database at all, just some text '.repeat(100))],
		['a truncated file', (good: Buffer) => good.subarray(0, Math.floor(good.length / 2))],
		// Same size, the last page's type byte changed (a page opening does not read): the remembered
		// checksum of the good file no longer matches, so the full check runs and finds it.
		[
			'a page damaged in place',
			(good: Buffer) => Buffer.from(good.map((byte, at) => (at === good.length - 4096 ? byte ^ 0xff : byte))),
		],
	] as const) {
		it(`refuses ${label}: keeps it aside as *.corrupt-<time>, never replaces it with an empty database`, async () => {
			const dir = tempDir();
			const file = path.join(dir, 'f.db');
			const db = await open(file);
			db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['precious']));
			db.close();
			const good = fs.readFileSync(file);
			const bad = damage(good);
			fs.writeFileSync(file, bad);
			await assert.rejects(open(file), (error) => {
				assert.ok(isDeskError(error, 'store.corrupt'), String(error));
				const kept = String(error.data['keptAs']);
				assert.deepEqual(fs.readFileSync(kept), bad, 'the damaged bytes are kept as they were');
				return true;
			});
			assert.equal(fs.existsSync(file), false, 'no empty database was put in its place');
		});
	}

	it('refuses a database of another schema name and one with a newer schema version', async () => {
		const dir = tempDir();
		const file = path.join(dir, 'g.db');
		(await open(file)).close();
		await assert.rejects(open(file, { schema: 'other' }), (e) => isDeskError(e, 'store.corrupt'));
		const file2 = path.join(dir, 'h.db');
		(
			await open(file2, { migrations: [...migrations, { version: 2, statements: ['CREATE TABLE later (x)'] }] })
		).close();
		await assert.rejects(open(file2), (e) => isDeskError(e, 'store.unknownSchema') && e.data['version'] === 2);
	});

	it("shares one file between two openers: each sees the other's writes and no update is lost", async () => {
		const file = path.join(tempDir(), 'i.db');
		const a = await open(file);
		const b = await open(file);
		for (let i = 0; i < 20; i++) {
			const writer = i % 2 === 0 ? a : b;
			writer.write((tx) => {
				const count = tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM notes')!.n;
				tx.run('INSERT INTO notes (text) VALUES (?)', [`note ${count}`]);
			});
			if (i === 9) {
				a.checkpoint(); // b must notice the new base and reload.
			}
		}
		const expected = Array.from({ length: 20 }, (_, i) => `note ${i}`);
		assert.deepEqual(noteTexts(a), expected);
		assert.deepEqual(noteTexts(b), expected);
		a.close();
		b.close();
		const c = await open(file);
		assert.deepEqual(noteTexts(c), expected);
		c.close();
	});

	it('waits for a write lock held by a live process, then fails with store.locked naming it', async () => {
		const file = path.join(tempDir(), 'l.db');
		const db = await open(file, { lockTimeoutMs: 150 });
		const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
		try {
			fs.writeFileSync(`${file}.lock`, `${holder.pid}\n`);
			const started = Date.now();
			assert.throws(
				() => db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['blocked'])),
				(e) => isDeskError(e, 'store.locked') && e.data['pid'] === holder.pid,
			);
			assert.ok(Date.now() - started >= 140, 'it waited for the holder first');
			assert.deepEqual(noteTexts(db), []);
		} finally {
			holder.kill('SIGKILL');
			await new Promise((resolve) => holder.once('exit', resolve));
		}
		// The holder died without releasing the lock: the next write takes it over.
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['after the holder died']));
		assert.deepEqual(noteTexts(db), ['after the holder died']);
		assert.equal(fs.existsSync(`${file}.lock`), false);
		db.close();
	});

	it('migrates an older database forward and journals the migration', async () => {
		const file = path.join(tempDir(), 'j.db');
		(await open(file)).close();
		const v2: Migration[] = [
			...migrations,
			{ version: 2, statements: ["ALTER TABLE notes ADD COLUMN tag TEXT NOT NULL DEFAULT ''"] },
		];
		const db = await open(file, { migrations: v2 });
		assert.equal(db.schemaVersion, 2);
		db.write((tx) => tx.run('INSERT INTO notes (text, tag) VALUES (?, ?)', ['x', 'y']));
		const again = await open(file, { migrations: v2 });
		assert.equal(again.schemaVersion, 2);
		assert.equal(again.get<{ tag: string }>('SELECT tag FROM notes')!.tag, 'y');
		again.close();
	});

	it('checkpoints by itself once the journal passes its limit', async () => {
		const file = path.join(tempDir(), 'k.db');
		const db = await open(file, { journalLimitBytes: 2048 });
		for (let i = 0; i < 40; i++) {
			db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', [`note ${i} ${'x'.repeat(100)}`]));
		}
		await new Promise((resolve) => setTimeout(resolve, 20));
		assert.ok(db.journalBytes < 2048 + 400, `journal is ${db.journalBytes} bytes`);
		db.close();
		const again = await open(file);
		assert.equal(noteTexts(again).length, 40);
		again.close();
	});
});
