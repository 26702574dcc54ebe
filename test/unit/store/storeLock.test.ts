import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { StoreLock } from '../../../server/src/store/storeLock';
import { tempDir } from '../../helpers/temp';

it("releases only the lock it made, and never takes a live process's lock however old", () => {
	const file = path.join(tempDir(), 'x.lock');
	const lock = new StoreLock(file, 100, 1);
	lock.withLock(() => {
		// Another process replaced the lock file meanwhile (a new inode with its pid).
		fs.rmSync(file);
		fs.writeFileSync(file, `${process.ppid}\n`);
	});
	assert.equal(fs.readFileSync(file, 'utf8'), `${process.ppid}\n`, "the other process's lock is still there");
	const old = new Date(Date.now() - 3_600_000);
	fs.utimesSync(file, old, old);
	assert.throws(
		() => new StoreLock(file, 100, 1).withLock(() => undefined),
		/busy/,
		'an old lock of a live process is waited on, not taken',
	);
	fs.writeFileSync(file, '999999999\n');
	assert.equal(
		new StoreLock(file, 100, 1).withLock(() => 'taken over'),
		'taken over',
		"a dead process's lock is taken over",
	);
	assert.equal(fs.existsSync(file), false);
});
