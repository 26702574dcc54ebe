import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { SafeGit } from '../../../server/src/runs/safeGit';
import { commitFile, git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

it('runs git with everything the repository configures to execute switched off: hooks, filters, fsmonitor', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'r'), { commits: 1 });
	const witness = path.join(root, 'witness');
	const program = path.join(root, 'program.sh');
	fs.writeFileSync(program, `#!/bin/sh\necho ran "$@" >> ${witness}\ncat\n`, { mode: 0o755 });
	// A filter driver that would run on every file, a hook on every commit, an fsmonitor on every status.
	git(repo, 'config', 'filter.evil.clean', program);
	git(repo, 'config', 'filter.evil.smudge', program);
	git(repo, 'config', 'filter.evil.process', program);
	git(repo, 'config', 'core.fsmonitor', program);
	fs.writeFileSync(path.join(repo, '.gitattributes'), '* filter=evil\n');
	fs.mkdirSync(path.join(repo, '.git', 'hooks'), { recursive: true });
	for (const hook of ['pre-commit', 'post-checkout', 'post-commit', 'reference-transaction']) {
		fs.writeFileSync(path.join(repo, '.git', 'hooks', hook), `#!/bin/sh\necho hook ${hook} >> ${witness}\n`, { mode: 0o755 });
	}
	const safe = await SafeGit.open(repo);
	const base = await safe.resolveCommit('HEAD');
	fs.writeFileSync(path.join(repo, 'new.txt'), 'new\n');
	const tree = await safe.treeOfFolder(repo, base);
	const changes = await safe.changes(base, tree);
	assert.deepEqual(changes.map((c) => c.path).sort(), ['.gitattributes', 'new.txt']);
	const commit = await safe.commitTree(tree, [base], 'subject\n', { author: { name: 'A', email: 'a@x' }, committer: { name: 'C', email: 'c@x' } });
	await safe.updateRef('refs/heads/main', commit, base, 'test');
	await safe.syncIndexPaths(commit, ['.gitattributes', 'new.txt']);
	await safe.addWorktree(path.join(root, 'wt'), 'desk/run-x', commit);
	assert.equal(fs.readFileSync(path.join(root, 'wt', 'new.txt'), 'utf8'), 'new\n');
	await safe.removeWorktree(path.join(root, 'wt'));
	assert.equal(fs.existsSync(witness), false, `nothing the repository configured ran: ${fs.existsSync(witness) ? fs.readFileSync(witness, 'utf8') : ''}`);
	// The same steps in plain git do run them: the test would notice if the switches stopped working.
	fs.writeFileSync(path.join(repo, 'more.txt'), 'more\n');
	git(repo, 'add', 'more.txt');
	assert.ok(fs.existsSync(witness));
});

it('a change lands on a moved head when it still applies, and is refused when it does not', async () => {
	const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
	commitFile(repo, 'a.txt', 'one\ntwo\nthree\n', 'a');
	const safe = await SafeGit.open(repo);
	const base = await safe.resolveCommit('HEAD');
	fs.writeFileSync(path.join(repo, 'a.txt'), 'one\nTWO\nthree\n');
	const tree = await safe.treeOfFolder(repo, base);
	const diff = await safe.diff(base, tree);
	git(repo, 'checkout', '-q', '--', 'a.txt');
	commitFile(repo, 'b.txt', 'b\n', 'b');
	const moved = await safe.resolveCommit('HEAD');
	assert.ok(await safe.applyToTree(moved, diff), 'an unrelated commit in between: it applies');
	commitFile(repo, 'a.txt', 'one\n2\nthree\n', 'conflict');
	assert.equal(await safe.applyToTree(await safe.resolveCommit('HEAD'), diff), undefined);
});
