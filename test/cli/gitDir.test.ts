import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo } from '../helpers/gitRepo';
import { findProjectRoot, tempDir } from '../helpers/temp';

const deskJs = path.join(findProjectRoot(), 'dist', 'desk.js');

function desk(...args: string[]): { code: number | null; stdout: string; stderr: string } {
	const result = spawnSync(process.execPath, [deskJs, ...args], { encoding: 'utf8', env: { ...process.env, DESK_STORE: '' } });
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function errorOf(result: { stdout: string }): { code: string; message: string; data: Record<string, unknown> } {
	return (JSON.parse(result.stdout) as { error: { code: string; message: string; data: Record<string, unknown> } }).error;
}

describe('history refs as git names them', () => {
	it('refuses to export to or import from a ref git would refuse, naming it, and writes nothing', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const before = fs.readdirSync(path.join(repo, '.git')).sort();
		const objectsBefore = git(repo, 'count-objects', '-v');
		for (const ref of ['refs/../x', 'refs/desk/a..b', 'refs/desk/x.lock', 'refs/desk/a b', 'refs//desk']) {
			for (const verb of ['export', 'import']) {
				const result = desk('--store', store, '--repo', repo, 'history', verb, '--ref', ref, '--json');
				assert.equal(result.code, 2, `${verb} ${ref}: ${result.stdout}${result.stderr}`);
				const error = errorOf(result);
				assert.equal(error.code, 'git.badRef', `${verb} ${ref}`);
				assert.equal(error.data.ref, ref);
			}
		}
		assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).sort(), before, 'nothing written beside refs/');
		assert.equal(git(repo, 'count-objects', '-v'), objectsBefore, 'no object written before the refusal');
		assert.equal(git(repo, 'for-each-ref', '--format=%(refname)'), 'refs/heads/main');
		const good = desk('--store', store, '--repo', repo, 'history', 'export', '--ref', 'refs/desk/other', '--json');
		assert.equal(good.code, 0, good.stderr);
	});
});
