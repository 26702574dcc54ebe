import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { applyFilePatch, parseUnifiedDiff } from '../../../server/src/runs/unifiedDiff';
import { commitFile, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

it('applies what git diff prints, file by file, to give the new text', () => {
	const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
	const before = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
	commitFile(repo, 'a.txt', before, 'a');
	commitFile(repo, 'gone.txt', 'bye\n', 'gone');
	const base = git(repo, 'rev-parse', 'HEAD');
	const after = before
		.replace('line 3\n', 'line three\n')
		.replace('line 30\n', 'line 30\ninserted\n')
		.replace('line 40\n', 'line forty');
	fs.writeFileSync(path.join(repo, 'a.txt'), after);
	fs.writeFileSync(path.join(repo, 'new.txt'), 'hello\n');
	fs.rmSync(path.join(repo, 'gone.txt'));
	git(repo, 'add', '-A');
	const diff = execFileSync('git', ['diff', '--cached', base], { cwd: repo, env: gitEnv(repo), encoding: 'utf8' });
	const patches = parseUnifiedDiff(diff);
	assert.deepEqual(
		patches.map((p) => [p.from, p.to]),
		[
			['a.txt', 'a.txt'],
			['gone.txt', ''],
			['', 'new.txt'],
		],
	);
	assert.equal(applyFilePatch(before, patches[0]!), after);
	assert.equal(applyFilePatch('bye\n', patches[1]!), '');
	assert.equal(applyFilePatch('', patches[2]!), 'hello\n');
	assert.throws(
		() => applyFilePatch(before.replace('line 3\n', 'LINE 3\n'), patches[0]!),
		(e) => isDeskError(e, 'ai.badObject'),
	);
});

it("reads a hunk by its header's counts and keeps the new text's final newline (found by the property test)", () => {
	const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
	const cases: Array<[string, string]> = [
		['a\n-- x\nb\n', 'a\n++ y\nb\n'], // "--- x" then "+++ y" inside the hunk: not a file header
		['a', 'a\n'], // a final newline added
		['x\na', 'x\nb\n'],
	];
	for (const [before, after] of cases) {
		commitFile(repo, 'f.txt', before, 'before');
		fs.writeFileSync(path.join(repo, 'f.txt'), after);
		const diff = execFileSync('git', ['diff'], { cwd: repo, env: gitEnv(repo), encoding: 'utf8' });
		const patches = parseUnifiedDiff(diff);
		assert.deepEqual(
			patches.map((p) => [p.from, p.to]),
			[['f.txt', 'f.txt']],
			diff,
		);
		assert.equal(applyFilePatch(before, patches[0]!), after, diff);
	}
});
