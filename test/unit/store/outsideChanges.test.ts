/**
 * Another process's writes, told apart from this one's own: a database's outside version moves only
 * when another opener wrote (a journal record, or a checkpoint holding records this one had not
 * applied), and the watcher of its folder calls back for those only.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { Migration } from '../../../server/src/store/durableDatabase';
import { OutsideChangeWatcher } from '../../../server/src/store/outsideChanges';
import { tempDir } from '../../helpers/temp';
import { openTestDatabase } from '../../helpers/testDatabase';

const migrations: Migration[] = [{ version: 1, statements: ['CREATE TABLE notes (text TEXT NOT NULL)'] }];

const note = (text: string) => (tx: { run(sql: string, params: string[]): void }) =>
	tx.run('INSERT INTO notes (text) VALUES (?)', [text]);

describe('outside changes', () => {
	it("the outside version moves on another opener's write and checkpoint, never on its own", async () => {
		const file = path.join(tempDir(), 'p.db');
		const mine = await openTestDatabase(file, migrations);
		const other = await openTestDatabase(file, migrations);
		try {
			const start = mine.outsideVersion();
			mine.write(note('mine'));
			assert.equal(mine.outsideVersion(), start, 'its own write');
			other.write(note('other'));
			const afterOther = mine.outsideVersion();
			assert.ok(afterOther > start, "another's write");
			mine.write(note('mine again'));
			assert.equal(mine.outsideVersion(), afterOther);
			other.write(note('other again'));
			other.checkpoint();
			assert.ok(mine.outsideVersion() > afterOther, "another's checkpoint of a write not applied here");
		} finally {
			other.close();
			mine.close();
		}
	});

	it('the watcher calls back after a write of another opener, not after its own', async () => {
		const file = path.join(tempDir(), 'p.db');
		const mine = await openTestDatabase(file, migrations);
		const other = await openTestDatabase(file, migrations);
		let changes = 0;
		let told: () => void = () => undefined;
		const watcher = new OutsideChangeWatcher(
			file,
			() => mine.outsideVersion(),
			() => {
				changes += 1;
				told();
			},
			(error) => assert.fail(String(error)),
			20,
		);
		try {
			// The watcher sees the journal change in the same turn as this watch does; its debounce
			// timer, set then, runs before a later and longer one.
			const journalChanged = new Promise<void>((resolve) => {
				const watch = fs.watch(path.dirname(file), (_event, name) => {
					if (String(name) === 'p.db.journal') {
						watch.close();
						resolve();
					}
				});
			});
			mine.write(note('mine'));
			await journalChanged;
			await new Promise((resolve) => setTimeout(resolve, 100));
			assert.equal(changes, 0, 'its own write tells nobody');
			// The watch keeps no process alive: the bound on the wait does, here.
			let bound: NodeJS.Timeout | undefined;
			const seen = new Promise<void>((resolve, reject) => {
				told = resolve;
				bound = setTimeout(() => reject(new Error("no callback for another opener's write within 10 s")), 10_000);
			});
			other.write(note('other'));
			await seen.finally(() => clearTimeout(bound));
			assert.equal(changes, 1);
		} finally {
			watcher.close();
			other.close();
			mine.close();
		}
	});
});
