import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { CommitHistory } from '../../../server/src/assets/ports';
import { isDeskError } from '../../../server/src/core/errors';
import { RepositoryReader } from '../../../server/src/git/repositoryReader';
import { commitAll, commitFile, commitSubmodule, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

/** `git log --first-parent --reverse` as `oid date subject` lines, what the desk numbers as versions. */
function gitLog(repo: string, rev = 'HEAD'): string[] {
	const out = git(repo, 'log', '--first-parent', '--reverse', '--format=%H %cI %s', rev);
	return out === '' ? [] : out.split('\n');
}

function lines(history: CommitHistory): string[] {
	return Array.from({ length: history.count }, (_, i) => {
		const entry = history.entry(i);
		return `${entry.oid} ${entry.committedAt} ${entry.subject}`;
	});
}

/** A history with merges every few commits, committer offsets east and west of UTC, and a subject in UTF-8. */
function historyRepo(dir: string, commits: number): string {
	const repo = makeRepo(dir, { commits: 1 });
	for (let i = 2; i <= commits; i++) {
		const zone = ['+0100', '-0730', '+0545', '+0000'][i % 4]!;
		const env = {
			...gitEnv(repo),
			GIT_COMMITTER_DATE: `@${1_700_000_000 + i * 3600} ${zone}`,
			GIT_AUTHOR_DATE: `@${1_700_000_000 + i * 3600} ${zone}`,
		};
		if (i % 7 === 0) {
			git(repo, 'checkout', '-q', '-b', `side${i}`);
			commitFile(repo, `side/${i}.txt`, `${i}\n`, `side ${i}`);
			git(repo, 'checkout', '-q', 'main');
			execFileSync('git', ['merge', '-q', '--no-ff', '-m', `merge ${i} — über`, `side${i}`], { cwd: repo, env });
		} else {
			fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
			fs.writeFileSync(path.join(repo, 'src', `f${i % 5}.txt`), `${i}\n`);
			git(repo, 'add', '-A');
			// Every fifth message has a first paragraph of two lines and a body: %s joins the paragraph.
			// Every eleventh is kept verbatim: blank lines before the subject, indented lines, a line of
			// spaces ending it, \v and \f (not whitespace to git), CRLF, no final line feed, nothing but blanks.
			const verbatim = [
				'\n\n  indented subject\t\n  second  \n \nA body.\n',
				'vertical\v tab\f kept\r\n\r\nbody',
				'no line feed at the end   ',
				'\n \n\t\n',
			];
			const message =
				i % 11 === 0
					? verbatim[(i / 11 - 1) % verbatim.length]!
					: i % 5 === 0
						? `commit ${i}\ncontinued on a second line  \n\nA body that is not the subject.\n`
						: `commit ${i}`;
			const cleanup = i % 11 === 0 ? ['--cleanup=verbatim', '--allow-empty-message'] : [];
			execFileSync('git', ['commit', '-q', ...cleanup, '-m', message], { cwd: repo, env });
		}
	}
	return repo;
}

describe('RepositoryReader: refs', () => {
	it('resolves loose, packed and symbolic refs, a detached HEAD, and a worktree through its .git file', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 3 });
		git(repo, 'branch', 'other', 'HEAD~1');
		git(repo, 'tag', '-a', '-m', 'tagged', 't1', 'HEAD~2');
		const reader = new RepositoryReader();
		assert.equal(await reader.branchTip(repo, 'main'), git(repo, 'rev-parse', 'main'));
		assert.equal(await reader.branchTip(repo, 'other'), git(repo, 'rev-parse', 'other'));
		assert.equal(await reader.headCommit(repo), git(repo, 'rev-parse', 'HEAD'));
		assert.equal(await reader.defaultBranch(repo), 'main');
		reader.close();

		git(repo, 'pack-refs', '--all');
		assert.equal(fs.existsSync(path.join(repo, '.git', 'refs', 'heads', 'other')), false, 'the refs are packed now');
		// The worktree below is adopted because its repository is in a trusted folder (see gitDir.ts).
		const packed = new RepositoryReader({ gitDirPolicy: () => ({ trusted: [root] }) });
		assert.equal(await packed.branchTip(repo, 'other'), git(repo, 'rev-parse', 'other'));
		assert.equal(
			packed.repository(repo).peelToCommit(packed.repository(repo).resolveRef('refs/tags/t1')!),
			git(repo, 'rev-parse', 't1^{commit}'),
		);
		git(repo, 'checkout', '-q', '--detach', 'HEAD~2');
		assert.equal(await packed.headCommit(repo), git(repo, 'rev-parse', 'HEAD'));
		assert.equal(await packed.branchTip(repo, ''), git(repo, 'rev-parse', 'HEAD'));
		git(repo, 'checkout', '-q', 'main');

		git(repo, 'worktree', 'add', '-q', '-b', 'wt', path.join(root, 'wt'), 'HEAD~1');
		const wt = path.join(root, 'wt');
		commitFile(wt, 'wt.txt', 'wt\n', 'in the worktree');
		assert.equal(await packed.findTop(path.join(wt)), fs.realpathSync(wt));
		assert.equal(await packed.headCommit(wt), git(wt, 'rev-parse', 'HEAD'));
		assert.notEqual(await packed.headCommit(wt), await packed.headCommit(repo));
		assert.deepEqual(lines(await packed.firstParentHistory(wt, '')), gitLog(wt));
		packed.close();
	});

	it('takes origin/HEAD as the default branch and reads remote-tracking branches', async () => {
		const root = tempDir();
		const origin = makeRepo(path.join(root, 'origin'), { commits: 2, branch: 'trunk' });
		execFileSync('git', ['clone', '-q', origin, path.join(root, 'clone')], { env: gitEnv(root) });
		const clone = path.join(root, 'clone');
		const reader = new RepositoryReader();
		assert.equal(await reader.defaultBranch(clone), 'trunk');
		assert.equal(await reader.originUrl(clone), origin);
		git(clone, 'checkout', '-q', '--detach');
		git(clone, 'branch', '-q', '-D', 'trunk');
		assert.equal(
			await reader.branchTip(clone, 'trunk'),
			git(clone, 'rev-parse', 'origin/trunk'),
			'falls back to origin/<branch>',
		);
		reader.close();
	});

	it('does not hang on a FIFO, follow a planted link, or leave the repository for a symbolic ref', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 2 });
		const outside = path.join(root, 'outside');
		fs.writeFileSync(outside, `${git(repo, 'rev-parse', 'HEAD~1')}\n`);
		fs.symlinkSync(outside, path.join(repo, '.git', 'refs', 'heads', 'linked'));
		const reader = new RepositoryReader();
		assert.equal(await reader.branchTip(repo, 'linked'), undefined, 'a ref that is a link is not followed');

		fs.writeFileSync(path.join(repo, '.git', 'refs', 'heads', 'escape'), 'ref: refs/../../../outside\n');
		await assert.rejects(reader.branchTip(repo, 'escape'), (e) => isDeskError(e, 'git.badRef'));

		fs.rmSync(path.join(repo, '.git', 'refs', 'heads', 'main'));
		execFileSync('mkfifo', [path.join(repo, '.git', 'refs', 'heads', 'main')]);
		const started = Date.now();
		assert.equal(await reader.branchTip(repo, 'main'), undefined, 'a FIFO is no ref');
		assert.ok(Date.now() - started < 5_000);
		reader.close();
	});

	it('refuses the reftable ref format and an unknown object format with git.unsupported', () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
		// Written by hand: this machine's git is older than the reftable format and refuses to touch it.
		const config = path.join(repo, '.git', 'config');
		const plain = fs.readFileSync(config, 'utf8');
		fs.writeFileSync(config, `${plain}[extensions]\n\trefStorage = reftable\n`);
		assert.throws(
			() => new RepositoryReader().repository(repo),
			(e) => isDeskError(e, 'git.unsupported'),
		);
		fs.writeFileSync(config, `${plain}[Extensions]\n\tobjectformat = "sha3" ; a comment\n`);
		assert.throws(
			() => new RepositoryReader().repository(repo),
			(e: unknown) => isDeskError(e, 'git.unsupported') && /sha3/.test(e.message),
		);
	});
});

describe('RepositoryReader: first-parent histories', () => {
	it('lists the first-parent history as git log does, merges, offsets and UTF-8 subjects included', async () => {
		const repo = historyRepo(path.join(tempDir(), 'r'), 40);
		const reader = new RepositoryReader();
		const history = await reader.firstParentHistory(repo, 'main');
		assert.deepEqual(lines(history), gitLog(repo));
		assert.equal(history.indexOf(git(repo, 'rev-parse', 'HEAD~5')), history.count - 6);
		assert.equal(
			history.indexOf(git(repo, 'rev-parse', 'side7')),
			-1,
			'a merged side commit is not on the first-parent chain',
		);
		git(repo, 'repack', '-a', '-d', '-f', '-q');
		const packed = new RepositoryReader();
		assert.deepEqual(lines(await packed.firstParentHistory(repo, 'main')), gitLog(repo));
		reader.close();
		packed.close();
	});

	it('a new process extends the cached history from the commits it knows instead of walking them again', async () => {
		const root = tempDir();
		const repo = historyRepo(path.join(root, 'r'), 60);
		const cacheDir = path.join(root, 'cache');
		const first = new RepositoryReader({ historyCacheDir: cacheDir });
		assert.equal((await first.firstParentHistory(repo, 'main')).count, gitLog(repo).length);
		first.close();

		// All objects so far go into a pack that is then taken away: only the new commit can be read.
		git(repo, 'repack', '-a', '-d', '-q');
		commitFile(repo, 'new.txt', 'new\n', 'the newest commit');
		const expected = gitLog(repo);
		const packDir = path.join(repo, '.git', 'objects', 'pack');
		const aside = path.join(root, 'aside');
		fs.renameSync(packDir, aside);
		fs.mkdirSync(packDir);
		const second = new RepositoryReader({ historyCacheDir: cacheDir });
		assert.deepEqual(lines(await second.firstParentHistory(repo, 'main')), expected, 'only the new commit was read');
		second.close();

		// A damaged cache file is not trusted: it is walked again (the objects are back for that).
		fs.rmSync(packDir, { recursive: true });
		fs.renameSync(aside, packDir);
		for (const name of fs.readdirSync(cacheDir)) {
			const file = path.join(cacheDir, name);
			const bytes = fs.readFileSync(file);
			bytes[bytes.length >> 1]! ^= 0x55;
			fs.writeFileSync(file, bytes);
		}
		const third = new RepositoryReader({ historyCacheDir: cacheDir });
		assert.deepEqual(lines(await third.firstParentHistory(repo, 'main')), expected);
		third.close();
	});

	it('shares one walk between requests that ask at once, and a cancelled one does not stop it for the other', async () => {
		const repo = historyRepo(path.join(tempDir(), 'r'), 30);
		const reader = new RepositoryReader();
		// Count the commits read: one walk reads each once.
		const objects = reader.repository(repo).objects;
		const tryRead = objects.tryRead.bind(objects);
		let reads = 0;
		objects.tryRead = (oid, options) => {
			reads++;
			return tryRead(oid, options);
		};
		const cancelled = new AbortController();
		cancelled.abort();
		const [first, second, third] = await Promise.allSettled([
			reader.firstParentHistory(repo, 'main', cancelled.signal),
			reader.firstParentHistory(repo, 'main'),
			reader.firstParentHistory(repo, 'main'),
		]);
		assert.equal(first.status, 'rejected', 'the cancelled request stops waiting');
		assert.ok(second.status === 'fulfilled' && third.status === 'fulfilled');
		assert.equal(second.value, third.value, 'one history');
		assert.deepEqual(lines(second.value), gitLog(repo));
		assert.ok(reads <= gitLog(repo).length + 8, `one walk: ${reads} objects read for ${gitLog(repo).length} commits`);
		reader.close();
	});

	it('follows a rewritten branch: the shared part is kept, the rest is the new chain', async () => {
		const root = tempDir();
		const repo = historyRepo(path.join(root, 'r'), 30);
		const reader = new RepositoryReader({ historyCacheDir: path.join(root, 'cache') });
		await reader.firstParentHistory(repo, 'main');
		git(repo, 'reset', '-q', '--hard', 'HEAD~4');
		commitFile(repo, 'x.txt', 'x\n', 'rewritten one');
		commitFile(repo, 'y.txt', 'y\n', 'rewritten two');
		assert.deepEqual(lines(await reader.firstParentHistory(repo, 'main')), gitLog(repo));
		const fresh = new RepositoryReader({ historyCacheDir: path.join(root, 'cache') });
		assert.deepEqual(lines(await fresh.firstParentHistory(repo, 'main')), gitLog(repo));
		reader.close();
		fresh.close();
	});

	it('ends at a shallow clone boundary, and grows back once the clone is deepened', async () => {
		const root = tempDir();
		const origin = historyRepo(path.join(root, 'origin'), 25);
		execFileSync('git', ['clone', '-q', '--depth', '5', `file://${origin}`, path.join(root, 'shallow')], {
			env: gitEnv(root),
		});
		const shallow = path.join(root, 'shallow');
		const cacheDir = path.join(root, 'cache');
		const reader = new RepositoryReader({ historyCacheDir: cacheDir });
		assert.deepEqual(lines(await reader.firstParentHistory(shallow, 'main')), gitLog(shallow));
		assert.equal((await reader.firstParentHistory(shallow, 'main')).count, 5);
		reader.close();
		execFileSync('git', ['fetch', '-q', '--unshallow'], { cwd: shallow, env: gitEnv(root) });
		const deepened = new RepositoryReader({ historyCacheDir: cacheDir });
		assert.deepEqual(lines(await deepened.firstParentHistory(shallow, 'main')), gitLog(shallow));
		assert.equal((await deepened.firstParentHistory(shallow, 'main')).count, gitLog(origin).length);
		deepened.close();
	});
});

describe('RepositoryReader: trees, files and diffs', () => {
	it('lists files, reads one by path, and diffs two commits as git does', async () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 2 });
		commitFile(repo, 'a/b/c.txt', 'c\n', 'deep file');
		commitFile(repo, 'a/run.sh', '#!/bin/sh\n', 'script');
		fs.chmodSync(path.join(repo, 'a', 'run.sh'), 0o755);
		fs.symlinkSync('file1.txt', path.join(repo, 'link'));
		git(repo, 'add', '-A');
		git(repo, 'commit', '-q', '-m', 'exec bit and a link');
		const from = git(repo, 'rev-parse', 'HEAD');
		// A file becomes a folder, a folder is renamed, a file changes, another goes.
		fs.rmSync(path.join(repo, 'file1.txt'));
		fs.mkdirSync(path.join(repo, 'file1.txt'));
		fs.writeFileSync(path.join(repo, 'file1.txt', 'inside.txt'), 'inside\n');
		fs.renameSync(path.join(repo, 'a', 'b'), path.join(repo, 'a', 'moved'));
		fs.writeFileSync(path.join(repo, 'file2.txt'), 'changed\n');
		fs.chmodSync(path.join(repo, 'a', 'run.sh'), 0o644);
		git(repo, 'add', '-A');
		git(repo, 'commit', '-q', '-m', 'reshape');
		const to = git(repo, 'rev-parse', 'HEAD');
		git(repo, 'repack', '-a', '-d', '-q');

		const reader = new RepositoryReader();
		const files = await reader.treeFiles(repo, to);
		assert.deepEqual(files, lsTreeFiles(repo, to));
		assert.equal(await reader.fileCount(repo, to), files.length);
		assert.equal(Buffer.from((await reader.readFile(repo, from, 'a/b/c.txt'))!).toString(), 'c\n');
		assert.equal(await reader.readFile(repo, to, 'a/b/c.txt'), undefined);
		assert.equal(
			Buffer.from((await reader.readFile(repo, from, 'link'))!).toString(),
			'file1.txt',
			'a link reads as its target, as git stores it; file1.txt is not read through it',
		);
		assert.equal(await reader.readFile(repo, from, 'file1.txt/x'), undefined);
		assert.equal(await reader.readFile(repo, from, 'a'), undefined, 'a folder is not read');

		const diff = await reader.diffCommits(repo, from, to);
		const byGit = git(repo, 'diff', '--no-renames', '--name-status', from, to)
			.split('\n')
			.map((l) => l.split('\t'))
			.map(([status, name]) => `${status![0]} ${name}`)
			.sort();
		const ours = diff.map((c) => `${c.before && c.after ? 'M' : c.after ? 'A' : 'D'} ${c.path}`).sort();
		assert.deepEqual(ours, byGit);
		assert.deepEqual(await reader.diffCommits(repo, to, to), []);
		reader.close();
	});

	it('lists links and submodules with their kinds, as git ls-tree -r does, and reads a link as its target and a submodule as its commit', async () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
		fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
		fs.mkdirSync(path.join(repo, 'docs'));
		fs.writeFileSync(path.join(repo, 'docs', 'guide.md'), '# Guide\n');
		fs.symlinkSync('../file1.txt', path.join(repo, 'docs', 'first'));
		fs.symlinkSync('/etc/passwd', path.join(repo, 'outside'));
		const before = commitAll(repo, 'a script, a folder and two links');
		// The submodule is at one of this repository's own commits: any commit id will do.
		const commit = commitSubmodule(repo, 'vendor/lib', before, 'a submodule');

		const reader = new RepositoryReader();
		const files = await reader.treeFiles(repo, commit);
		assert.deepEqual(files, lsTreeFiles(repo, commit));
		assert.deepEqual(
			files.map((f) => `${f.kind} ${f.path}${f.target === undefined ? '' : ` -> ${f.target}`}`),
			[
				'symlink docs/first -> ../file1.txt',
				'file docs/guide.md',
				'file file1.txt',
				'symlink outside -> /etc/passwd',
				'executable run.sh',
				'submodule vendor/lib',
			],
		);
		assert.equal(await reader.fileCount(repo, commit), 6, 'as many as the listing: git ls-tree -r lists 6');
		assert.equal(Buffer.from((await reader.readFile(repo, commit, 'outside'))!).toString(), '/etc/passwd');
		assert.equal(Buffer.from((await reader.readFile(repo, commit, 'vendor/lib'))!).toString(), `${before}\n`);

		const top = await reader.listFolder(repo, commit, '');
		assert.deepEqual(top?.folders.sort(), ['docs', 'vendor']);
		assert.deepEqual(
			top?.files.map((f) => [f.path, f.kind, f.target]),
			[
				['file1.txt', 'file', undefined],
				['outside', 'symlink', '/etc/passwd'],
				['run.sh', 'executable', undefined],
			],
		);
		assert.deepEqual(
			(await reader.listFolder(repo, commit, 'vendor'))?.files.map((f) => [f.path, f.kind, f.oid]),
			[['vendor/lib', 'submodule', before]],
		);

		const diff = await reader.diffCommits(repo, before, commit);
		assert.deepEqual(
			diff.map((c) => [c.path, c.before?.kind, c.after?.kind]),
			[['vendor/lib', undefined, 'submodule']],
			'a submodule added is a change, as git diff says',
		);
		reader.close();
	});
});

/** What `git ls-tree -r` lists of a commit, as the reader lists it: every entry, its kind, a link's target. */
function lsTreeFiles(repo: string, commit: string) {
	const kinds: Record<string, string> = {
		'100644': 'file',
		'100755': 'executable',
		'120000': 'symlink',
		'160000': 'submodule',
	};
	return git(repo, 'ls-tree', '-r', commit)
		.split('\n')
		.map((l) => /^(\d+) \w+ ([0-9a-f]+)\t(.*)$/.exec(l)!)
		.map(([, mode, oid, name]) => ({
			path: name!,
			oid: oid!,
			executable: mode === '100755',
			kind: kinds[mode!],
			...(mode === '120000' ? { target: git(repo, 'cat-file', 'blob', oid!) } : {}),
		}))
		.sort((a, b) => (a.path < b.path ? -1 : 1));
}
