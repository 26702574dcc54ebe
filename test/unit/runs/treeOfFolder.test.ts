import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { SafeGit } from '../../../server/src/runs/safeGit';
import { isDeskError } from '../../../server/src/core/errors';
import { linkInFolder } from '../../../server/src/store/folderFiles';
import { commitFile, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';
import { race, swapFolderForLink } from '../../helpers/races';

/** `path → [mode, oid]` of every entry of a tree, recursively. */
function listTree(repo: string, tree: string): Map<string, [string, string]> {
	const listed = new Map<string, [string, string]>();
	for (const record of execFileSync('git', ['ls-tree', '-r', '-z', tree], { cwd: repo, env: gitEnv(repo) })
		.toString('utf8')
		.split('\0')) {
		if (record === '') {
			continue;
		}
		const tab = record.indexOf('\t');
		const [mode, , oid] = record.slice(0, tab).split(' ');
		listed.set(record.slice(tab + 1), [mode!, oid!]);
	}
	return listed;
}

function hashObject(repo: string, args: string[], input?: Buffer): string {
	return execFileSync('git', ['hash-object', ...args], { cwd: repo, env: gitEnv(repo), input })
		.toString('utf8')
		.trim();
}

describe('SafeGit.treeOfFolder reads every file itself', () => {
	it('gives the blob ids git hash-object gives (no filters): a file, an executable, a link, a binary file, a name with a newline', async () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
		// A filter git would apply to text if it read the files with filters: the blobs are the raw bytes.
		commitFile(repo, '.gitattributes', '* text eol=crlf\n', 'attributes');
		const safe = await SafeGit.open(repo);
		const base = await safe.resolveCommit('HEAD');
		fs.writeFileSync(path.join(repo, 'plain.txt'), 'one\r\ntwo\nthree\n');
		fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
		fs.symlinkSync('../somewhere/else', path.join(repo, 'link'));
		fs.mkdirSync(path.join(repo, 'sub'));
		fs.writeFileSync(path.join(repo, 'sub', 'bin.dat'), Buffer.from([0, 1, 2, 255, 10, 13, 0]));
		fs.writeFileSync(path.join(repo, 'sub', 'new\nline.txt'), 'newline name\n');
		fs.writeFileSync(path.join(repo, 'file1.txt'), 'changed\n');
		const tree = await safe.treeOfFolder(repo, base);
		const listed = listTree(repo, tree);
		for (const file of ['plain.txt', 'sub/bin.dat', 'sub/new\nline.txt', 'file1.txt', '.gitattributes']) {
			assert.deepEqual(listed.get(file), ['100644', hashObject(repo, ['--no-filters', '--', file])], file);
		}
		assert.deepEqual(listed.get('run.sh'), ['100755', hashObject(repo, ['--no-filters', '--', 'run.sh'])]);
		assert.deepEqual(listed.get('link'), ['120000', hashObject(repo, ['--stdin'], Buffer.from('../somewhere/else'))]);
		// Every blob is in the repository, with the bytes of the file.
		for (const [file, [, oid]] of listed) {
			const stored = execFileSync('git', ['cat-file', 'blob', oid], { cwd: repo, env: gitEnv(repo) });
			const expected = file === 'link' ? Buffer.from('../somewhere/else') : fs.readFileSync(path.join(repo, file));
			assert.deepEqual(stored, expected, file);
		}
		assert.equal(git(repo, 'fsck', '--no-dangling'), '');
	});

	it("writes blobs with the repository's object format (sha256)", async () => {
		const repo = path.join(tempDir(), 'r');
		fs.mkdirSync(repo);
		git(repo, 'init', '-q', '--object-format=sha256', '-b', 'main');
		commitFile(repo, 'a.txt', 'a\n', 'a');
		const safe = await SafeGit.open(fs.realpathSync(repo));
		const base = await safe.resolveCommit('HEAD');
		fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
		fs.writeFileSync(path.join(repo, 'run.sh'), 'exe\n', { mode: 0o755 });
		fs.symlinkSync('a.txt', path.join(repo, 'link'));
		const listed = listTree(repo, await safe.treeOfFolder(fs.realpathSync(repo), base));
		assert.deepEqual(listed.get('b.txt'), ['100644', hashObject(repo, ['--no-filters', '--', 'b.txt'])]);
		assert.deepEqual(listed.get('run.sh'), ['100755', hashObject(repo, ['--no-filters', '--', 'run.sh'])]);
		assert.deepEqual(listed.get('link'), ['120000', hashObject(repo, ['--stdin'], Buffer.from('a.txt'))]);
		assert.equal(listed.get('b.txt')![1].length, 64);
		assert.equal(git(repo, 'fsck', '--no-dangling'), '');
	});

	it('a worktree of more folders than the process may hold open: every file is in the tree (no folder is dropped as deleted)', async () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
		const safe = await SafeGit.open(repo);
		const base = await safe.resolveCommit('HEAD');
		const folders = 600;
		for (let i = 0; i < folders; i++) {
			fs.mkdirSync(path.join(repo, `f${i}`));
			fs.writeFileSync(path.join(repo, `f${i}`, 'x.txt'), `${i}\n`);
		}
		// Lower this process's limit on open files below the number of folders while the tree is made
		// (prlimit on our own pid; the soft limit goes back to what it was).
		const soft = /NOFILE\s+\S.*?\s(\d+)\s+(\d+)\s+files/.exec(
			execFileSync('prlimit', ['--pid', String(process.pid), '--nofile']).toString('utf8'),
		);
		const open = fs.readdirSync('/proc/self/fd').length;
		execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${open + 300}:${soft?.[2] ?? 'unlimited'}`]);
		let tree: string;
		try {
			tree = await safe.treeOfFolder(repo, base);
		} finally {
			execFileSync('prlimit', [
				'--pid',
				String(process.pid),
				`--nofile=${soft?.[1] ?? 1024}:${soft?.[2] ?? 'unlimited'}`,
			]);
		}
		const listed = listTree(repo, tree);
		const missing = Array.from({ length: folders }, (_, i) => `f${i}/x.txt`).filter((file) => !listed.has(file));
		assert.deepEqual(missing, []);
	});

	it("a folder of a run's worktree swapped for a link to a folder outside, again and again: no tree ever holds a byte from outside", async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 1 });
		for (let i = 0; i < 20; i++) {
			fs.mkdirSync(path.join(repo, 'd'), { recursive: true });
			fs.writeFileSync(path.join(repo, 'd', `f${i}.txt`), `INSIDE ${i}\n`);
		}
		git(repo, 'add', 'd');
		git(repo, 'commit', '-q', '-m', 'd');
		// The outside folder: files of the same names, such as another folder of the person's.
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		for (let i = 0; i < 20; i++) {
			fs.writeFileSync(path.join(outside, `f${i}.txt`), `OUTSIDE SECRET ${i}\n`);
		}
		const safe = await SafeGit.open(repo);
		const base = await safe.resolveCommit('HEAD');
		const work = path.join(root, 'work');
		await safe.addWorktree(work, 'desk/run-race', base);
		const swapper = swapFolderForLink(work, outside);
		let trees = 0;
		let swapsSeen = 0;
		const leaks: string[] = [];
		try {
			await race(
				() => leaks.length > 0 || swapsSeen >= 10,
				async () => {
					const tree = await safe.treeOfFolder(work, base);
					trees++;
					const listed = listTree(repo, tree);
					if (listed.get('d/f0.txt')?.[0] !== '100644' || listed.get('d/f19.txt')?.[0] !== '100644') {
						swapsSeen++; // The tree was made while d was a link (or away): the race was met.
					}
					for (const [file, [mode, oid]] of listed) {
						if (
							mode !== '160000' &&
							execFileSync('git', ['cat-file', 'blob', oid], { cwd: repo, env: gitEnv(repo) }).includes(
								'OUTSIDE SECRET',
							)
						) {
							leaks.push(file);
						}
					}
				},
			);
		} finally {
			await swapper.stop();
		}
		assert.deepEqual(leaks, [], `a file outside the worktree was hashed into a tree (${trees} trees made)`);
		assert.ok(swapsSeen >= 1, `the swap was met at least once (${trees} trees made, ${swapsSeen} saw it)`);
	});
});

describe('the same hole elsewhere: the gate putting a link of the repository back', () => {
	it('puts the link in place of a file or a link the agent left, making missing folders, and refuses a folder', () => {
		const work = tempDir();
		fs.mkdirSync(path.join(work, 'a'));
		fs.writeFileSync(path.join(work, 'a', 'file'), 'agent\n');
		fs.symlinkSync('/etc/passwd', path.join(work, 'a', 'link'));
		fs.mkdirSync(path.join(work, 'a', 'folder'));
		linkInFolder(work, 'a/file', Buffer.from('../one'));
		linkInFolder(work, 'a/link', Buffer.from('two'));
		linkInFolder(work, 'new/deep/l', Buffer.from('three'));
		assert.equal(fs.readlinkSync(path.join(work, 'a', 'file')), '../one');
		assert.equal(fs.readlinkSync(path.join(work, 'a', 'link')), 'two');
		assert.equal(fs.readlinkSync(path.join(work, 'new', 'deep', 'l')), 'three');
		assert.throws(
			() => linkInFolder(work, 'a/folder', Buffer.from('x')),
			(error) => isDeskError(error, 'asset.unsafePath'),
		);
		assert.deepEqual(fs.readdirSync(path.join(work, 'a')).sort(), ['file', 'folder', 'link'], 'no temp link is left');
	});

	it('a folder swapped for a link to a folder outside while links are put back in it: no link is ever made outside', async () => {
		const root = tempDir();
		const work = path.join(root, 'work');
		fs.mkdirSync(path.join(work, 'd'), { recursive: true });
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		fs.writeFileSync(path.join(outside, 'keep.txt'), 'OUTSIDE\n');
		const swapper = swapFolderForLink(work, outside);
		let puts = 0;
		let refused = 0;
		try {
			await race(
				() => puts >= 3000 && refused >= 100,
				async () => {
					for (let i = 0; i < 50; i++, puts++) {
						try {
							linkInFolder(work, `d/l${puts % 20}`, Buffer.from('../target'));
						} catch (error) {
							assert.ok(isDeskError(error, 'asset.unsafePath') || isDeskError(error, 'store.io'), String(error));
							refused += 1; // A link (or a folder moved away) on the way: refused by name.
						}
					}
					await new Promise((resolve) => setImmediate(resolve));
				},
			);
		} finally {
			await swapper.stop();
		}
		assert.ok(refused > 0 && refused < puts, `the race was real: ${puts} links put, ${refused} refused`);
		assert.deepEqual(fs.readdirSync(outside), ['keep.txt'], 'no link was made outside the folder');
	});
});
