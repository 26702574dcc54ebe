import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { GitObjectStore, parseCommit } from '../../../server/src/git/objectStore';
import { commitFile, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

function catFile(repo: string, oid: string): { type: string; data: Buffer } {
	const type = git(repo, 'cat-file', '-t', oid);
	const data = execFileSync('git', ['cat-file', type, oid], { cwd: repo, env: gitEnv(repo) });
	return { type, data };
}

describe('GitObjectStore', () => {
	it('reads loose and packed objects, deltas included, byte for byte as git does', () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 2 });
		// Similar large files make git store deltas when it packs.
		const big = Array.from({ length: 2000 }, (_, i) => `line ${i} of a file that changes a little each commit\n`).join('');
		for (let i = 0; i < 30; i++) {
			commitFile(repo, 'big.txt', big.replace(`line ${i} `, `LINE ${i} `), `edit ${i}`);
		}
		const oids = git(repo, 'rev-list', '--objects', '--all').split('\n').map((l) => l.split(' ')[0]!);
		const loose = new GitObjectStore(path.join(repo, '.git'));
		for (const oid of oids) {
			const expected = catFile(repo, oid);
			const got = loose.read(oid);
			assert.equal(got?.type, expected.type, oid);
			assert.ok(got?.data.equals(expected.data), `loose ${oid}`);
		}
		git(repo, 'gc', '-q', '--aggressive');
		const packed = new GitObjectStore(path.join(repo, '.git'));
		const idx = execFileSync('sh', ['-c', 'ls .git/objects/pack/*.idx'], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
		const verify = execFileSync('git', ['verify-pack', '-v', ...idx], { cwd: repo, encoding: 'utf8' });
		assert.match(verify, /chain length = [1-9]/, 'the pack holds deltas');
		for (const oid of oids) {
			const expected = catFile(repo, oid);
			const got = packed.read(oid);
			assert.equal(got?.type, expected.type, oid);
			assert.ok(got?.data.equals(expected.data), `packed ${oid}`);
		}
		assert.equal(packed.read('0'.repeat(40)), undefined);
		assert.equal(packed.read('not an oid'), undefined);
	});

	it('parses a commit: tree, parents, committer time and offset, message', () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 2, startTime: 1_700_000_000 });
		const head = git(repo, 'rev-parse', 'HEAD');
		const commit = parseCommit(new GitObjectStore(path.join(repo, '.git')).read(head)!.data)!;
		assert.equal(commit.tree, git(repo, 'rev-parse', 'HEAD^{tree}'));
		assert.deepEqual(commit.parents, [git(repo, 'rev-parse', 'HEAD~1')]);
		assert.equal(commit.committerTime, Number(git(repo, 'log', '-1', '--format=%ct')));
		assert.equal(commit.committerOffsetMinutes, 60);
		assert.equal(commit.message, 'commit 2\n');
	});
});
