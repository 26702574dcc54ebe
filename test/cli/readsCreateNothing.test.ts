import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

describe('a read of a repository the desk does not know', () => {
	it('answers project.notFound and creates no project database in it', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'stranger'), { commits: 1 });
		const reads = [
			['runs', 'list'],
			['runs', 'show', 'r-0000'],
			['task', 'attachments', 'list', 't-1'],
			['card', 'show'],
			['run', 'status', 'r-0000'],
		];
		for (const read of reads) {
			const result = desk('--store', store, ...read, '--repo', repo, '--json');
			assert.equal(result.code, 2, `${read.join(' ')}: ${result.stderr}`);
			assert.match(result.stdout, /"project\.notFound"/, read.join(' '));
			assert.equal(
				fs.existsSync(path.join(repo, '.desk')),
				false,
				`${read.join(' ')} created ${path.join(repo, '.desk')}`,
			);
		}
		// Bringing a clone's history in is a write and makes the project database; reads then work.
		const imported = desk('--store', store, 'history', 'import', '--repo', repo);
		assert.equal(imported.code, 0, imported.stderr);
		const listed = desk('--store', store, 'runs', 'list', '--repo', repo, '--json');
		assert.equal(listed.code, 0, listed.stderr);
	});
});
