import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { makeRepo } from '../helpers/gitRepo';
import { findProjectRoot, tempDir } from '../helpers/temp';

const deskJs = path.join(findProjectRoot(), 'dist', 'desk.js');

function desk(...args: string[]): { code: number | null; stdout: string; stderr: string } {
	const result = spawnSync(process.execPath, [deskJs, ...args], {
		encoding: 'utf8',
		env: { ...process.env, DESK_STORE: '' },
	});
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

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
