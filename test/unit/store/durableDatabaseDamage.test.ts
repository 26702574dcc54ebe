import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase, type Migration } from '../../../server/src/store/durableDatabase';
import { tempDir } from '../../helpers/temp';
import { noteTexts, openTestDatabase } from '../../helpers/testDatabase';

const migrations: Migration[] = [
	{
		version: 1,
		statements: [
			'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)',
			'CREATE TABLE memos (id INTEGER PRIMARY KEY, body TEXT NOT NULL)',
		],
	},
];

function open(file: string) {
	return openTestDatabase(file, migrations);
}

function recover(file: string, choice: 'restore' | 'empty') {
	return DurableDatabase.recover(
		{ file, schema: 'test-schema', migrations, logger: silentLogger, lockTimeoutMs: 200 },
		choice,
	);
}

async function withNotes(file: string, ...notes: string[]): Promise<void> {
	const db = await open(file);
	for (const text of notes) {
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', [text]));
	}
	db.close();
}

/** Flips one bit of the first occurrence of `text` in the file: same size, a valid page, a changed record. */
function flipInRecord(file: string, text: string): void {
	const bytes = fs.readFileSync(file);
	const at = bytes.indexOf(text);
	assert.ok(at >= 0, `${text} is in ${file}`);
	bytes.writeUInt8(bytes[at]! ^ 0x01, at);
	fs.writeFileSync(file, bytes);
}

async function assertDamaged(file: string): Promise<Record<string, unknown>> {
	let data: Record<string, unknown> = {};
	await assert.rejects(open(file), (error) => {
		assert.ok(isDeskError(error, 'store.corrupt'), String(error));
		assert.equal(error.data['file'], file);
		assert.equal(error.data['damaged'], true);
		assert.ok(error.message.includes(file), error.message);
		data = { ...error.data };
		return true;
	});
	return data;
}

describe('DurableDatabase and damage', () => {
	it('a 0-byte base stays refused on every open until the person chooses; no empty database takes its place', async () => {
		const file = path.join(tempDir(), 'a.db');
		await withNotes(file, 'precious');
		fs.truncateSync(file, 0);
		const first = await assertDamaged(file);
		for (let i = 0; i < 3; i++) {
			const again = await assertDamaged(file);
			assert.equal(again['keptAs'], first['keptAs'], 'the same kept copy is named every time');
		}
		assert.equal(fs.existsSync(file), false);
		assert.equal(fs.statSync(String(first['keptAs'])).size, 0);
		assert.ok(fs.existsSync(`${file}.damaged`));
	});

	it('a byte changed inside a record (the page stays valid) is damage naming the file, not data', async () => {
		const file = path.join(tempDir(), 'b.db');
		await withNotes(file, 'the invoice total is 1200', 'another row');
		flipInRecord(file, 'invoice total');
		const data = await assertDamaged(file);
		assert.match(String(data['problem']), /not those the desk last wrote/);
		assert.ok(
			fs.readFileSync(String(data['keptAs'])).includes('the hnvoice total is 1200'),
			'the kept copy holds the changed bytes as found',
		);
	});

	it('restore takes the kept copy back as it is (the person chose it); empty starts a new database that tracks from now', async () => {
		const dir = tempDir();
		const file = path.join(dir, 'c.db');
		await withNotes(file, 'alpha', 'beta');
		// A changed key that an index also holds: SQLite's check sees it, so it cannot be restored as it is.
		flipInRecord(file, 'alpha');
		const indexed = await assertDamaged(file);
		await assert.rejects(
			recover(file, 'restore'),
			(e) => isDeskError(e, 'store.cannotRecover') && /integrity check/.test(e.message),
		);
		await assert.rejects(open(file), (e) => isDeskError(e, 'store.corrupt'));
		// The person puts a good copy where the kept one is (a backup, here the file before the change), and restores.
		const good = fs.readFileSync(String(indexed['keptAs']));
		good.writeUInt8(good[good.indexOf('`lpha')]! ^ 0x01, good.indexOf('`lpha'));
		fs.writeFileSync(String(indexed['keptAs']), good);
		assert.equal((await recover(file, 'restore')).choice, 'restore');
		const db = await open(file);
		assert.deepEqual(noteTexts(db), ['alpha', 'beta']);
		db.write((tx) => tx.run('INSERT INTO memos (body) VALUES (?)', ['pay the rent on the first']));
		db.close();
		// A changed byte no index holds: only the checksum sees it; restore takes it back as it is.
		flipInRecord(file, 'rent');
		await assertDamaged(file);
		assert.equal((await recover(file, 'restore')).choice, 'restore');
		const taken = await open(file);
		assert.deepEqual(
			taken.all<{ body: string }>('SELECT body FROM memos').map((r) => r.body),
			['pay the sent on the first'],
		);
		taken.close();
		await assert.rejects(recover(file, 'restore'), (e) => isDeskError(e, 'store.notDamaged'));

		fs.writeFileSync(file, 'garbage that is no database');
		const found = await assertDamaged(file);
		await assert.rejects(
			recover(file, 'restore'),
			(e) => isDeskError(e, 'store.cannotRecover') && String(e.message).includes(String(found['keptAs'])),
		);
		await assertDamaged(file);
		const before = Date.now();
		await recover(file, 'empty');
		const fresh = await open(file);
		assert.deepEqual(noteTexts(fresh), []);
		assert.ok(fresh.trackingSince >= before, 'the new database vouches only for files written from now on');
		fresh.close();
	});

	it('a base the desk wrote opens after a crash at any point of a checkpoint (the sidecar names the old and the new base)', async () => {
		const file = path.join(tempDir(), 'd.db');
		await withNotes(file, 'one');
		const old = fs.readFileSync(file);
		// A checkpoint that died after recording the sums but before its rename: the old base is still accepted.
		const oldSum = { size: old.length, crc32: crc32(old) };
		fs.writeFileSync(`${file}.checked`, JSON.stringify({ format: 2, accepted: [oldSum, { size: 4096, crc32: 1 }] }));
		const db = await open(file);
		assert.deepEqual(noteTexts(db), ['one']);
		db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['two']));
		db.close();
		const reopened = await open(file);
		assert.deepEqual(noteTexts(reopened), ['one', 'two']);
		reopened.close();
	});

	for (const [label, damage] of [
		['a byte of a record', (bytes: Buffer, at: number) => bytes.writeUInt8(bytes[at]! ^ 0x01, at)],
		// A length that runs past the end looks like a torn append; the records after it say otherwise.
		[
			'the length of a record',
			(bytes: Buffer, at: number) =>
				bytes.writeUInt32LE(
					0x7fff_0000,
					at - 8 - '{"seq":2,"statements":[["INSERT INTO notes (text) VALUES (?)",["'.length,
				),
		],
	] as const) {
		it(`${label} damaged in the middle of the journal, acknowledged records after it: set aside, not cut off; restore takes back what precedes the damage`, async () => {
			const file = path.join(tempDir(), 'j.db');
			const db = await open(file); // never closed: a crash, the records only in the journal
			for (const text of ['first-note', 'second-note', 'third-note']) {
				db.write((tx) => tx.run('INSERT INTO notes (text) VALUES (?)', [text]));
			}
			const journal = fs.readFileSync(`${file}.journal`);
			const at = journal.indexOf('first-note');
			assert.ok(at > 0);
			damage(journal, at);
			fs.writeFileSync(`${file}.journal`, journal);
			const data = await assertDamaged(file);
			assert.match(String(data['problem']), /journal is damaged at byte \d+ .* 2 acknowledged records follow/);
			assert.deepEqual(
				fs.readFileSync(String(data['journalKeptAs'])),
				journal,
				'the journal is kept whole, nothing cut off',
			);
			await assertDamaged(file);
			await recover(file, 'restore');
			const restored = await open(file);
			assert.deepEqual(
				noteTexts(restored),
				[],
				'what preceded the damage (the schema); the rest stays in the kept copy',
			);
			restored.close();
		});
	}

	it('without a sidecar (a store from before it) the full check runs and records one; a later change is then damage', async () => {
		const file = path.join(tempDir(), 'e.db');
		await withNotes(file, 'gamma');
		fs.rmSync(`${file}.checked`);
		const db = await open(file);
		assert.deepEqual(noteTexts(db), ['gamma']);
		db.close();
		assert.ok(fs.existsSync(`${file}.checked`));
		flipInRecord(file, 'gamma');
		await assertDamaged(file);
	});
});
