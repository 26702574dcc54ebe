import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { parseCommit, parseTree, walkFields } from '../../../server/src/git/objects';

const tree = 'a'.repeat(40);
const parent = 'b'.repeat(40);

describe('git object parsers', () => {
	it('reads the walk fields of commits as git log does, signatures and odd names included', () => {
		const signed = Buffer.from(
			`tree ${tree}\nparent ${parent}\nparent ${'c'.repeat(40)}\nauthor A 1 <a@x> 1 +0000\ncommitter Bob 2024 <b@x> 1700000000 -0730\n` +
				`gpgsig -----BEGIN PGP SIGNATURE-----\n \n committer Mallory <m@x> 1 +1400\n -----END PGP SIGNATURE-----\n\n` +
				`Subject line\n  continued  \n\nbody\n`,
		);
		assert.deepEqual(walkFields(signed, 20), {
			firstParent: parent,
			time: 1_700_000_000,
			offsetMinutes: -450,
			// As git: each line keeps its indentation (`git log --format=%s` prints three spaces here).
			subject: 'Subject line   continued',
		});
		const root = Buffer.from(`tree ${tree}\nauthor A <a@x> 5 +0000\ncommitter C <c@x> 5 +0545\n\nfirst\n`);
		assert.deepEqual(walkFields(root, 20), { firstParent: undefined, time: 5, offsetMinutes: 345, subject: 'first' });
		const noMessage = Buffer.from(`tree ${tree}\ncommitter C <c@x> 9 +0100\n`);
		assert.deepEqual(walkFields(noMessage, 20), { firstParent: undefined, time: 9, offsetMinutes: 60, subject: '' });
		const noCommitter = Buffer.from(`tree ${tree}\nparent ${parent}\n\nx`);
		assert.deepEqual(walkFields(noCommitter, 20), { firstParent: parent, time: 0, offsetMinutes: 0, subject: 'x' });
		assert.equal(walkFields(Buffer.from(`tree ${tree.slice(1)}\n\nx`), 20), undefined, 'a short tree id');
		assert.equal(
			walkFields(Buffer.from(`tree ${tree}\nparent ${parent.slice(2)}\n\nx`), 20),
			undefined,
			'a short parent id',
		);
		const sha256 = Buffer.from(
			`tree ${'d'.repeat(64)}\nparent ${'e'.repeat(64)}\ncommitter C <c@x> 7 +0000\n\nlong ids\n`,
		);
		assert.deepEqual(walkFields(sha256, 32), {
			firstParent: 'e'.repeat(64),
			time: 7,
			offsetMinutes: 0,
			subject: 'long ids',
		});
		// The general parser agrees on the fields both read.
		const full = parseCommit(signed)!;
		assert.deepEqual([full.parents[0], full.committerTime, full.committerOffsetMinutes], [parent, 1_700_000_000, -450]);
	});

	it('parses trees and refuses entries git never writes', () => {
		const entry = (mode: string, name: string, fill: number) =>
			Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.alloc(20, fill)]);
		const entries = parseTree(
			Buffer.concat([
				entry('100644', 'a.txt', 1),
				entry('40000', 'dir', 2),
				entry('120000', 'link', 3),
				entry('160000', 'sub', 4),
				entry('100755', 'run', 5),
			]),
			20,
		);
		assert.deepEqual(
			entries.map((e) => `${e.kind} ${e.name} ${e.oid.slice(0, 2)}`),
			['blob a.txt 01', 'tree dir 02', 'link link 03', 'submodule sub 04', 'blob run 05'],
		);
		for (const bad of [
			entry('100644', '..', 1),
			entry('100644', 'a/b', 1),
			entry('100644', '', 1),
			entry('100644', 'x', 1).subarray(0, 15),
		]) {
			assert.throws(
				() => parseTree(bad, 20, 't'),
				(e) => isDeskError(e, 'git.corrupt'),
			);
		}
	});
});
