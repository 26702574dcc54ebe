/**
 * The unified diff reader against real git: generated sets of file pairs (added, deleted, changed,
 * with and without a final newline, lines that look like diff syntax) are diffed by `git diff-tree`
 * with the options the runner uses for a PatchSet, and every file the reader finds must apply to its
 * old text and give the new text exactly. fast-check prints the seed and the smallest failing set.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { applyFilePatch, parseUnifiedDiff } from '../../../server/src/runs/unifiedDiff';
import { diffArgs } from '../../../server/src/runs/safeGit';
import { git, gitEnv } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

/** Lines chosen so that git finds common runs, and some that look like diff syntax once prefixed. */
const line = fc.oneof(
	{ weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', '', '  indented', 'x\r') },
	{
		weight: 1,
		arbitrary: fc.constantFrom(
			'-- sql comment',
			'++ i',
			'-',
			'+',
			'--- a/x',
			'+++ b/x',
			'@@ -1 +1 @@',
			'\\ No newline at end of file',
			'diff --git a/x b/x',
			' ',
		),
	},
	{
		weight: 1,
		arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('\n') && !s.includes('\0')),
	},
);

/** A file's text: some lines, ending with a newline or not. */
const fileText = fc
	.tuple(fc.array(line, { maxLength: 30 }), fc.boolean())
	.map(([lines, newline]) => (lines.length === 0 ? '' : lines.join('\n') + (newline ? '\n' : '')));

/** A new version made from the old one by a few edits, so the diff has context and several hunks. */
const edited = (old: string) =>
	fc
		.array(fc.tuple(fc.nat(40), fc.constantFrom('insert', 'delete', 'replace'), line), { maxLength: 6 })
		.chain((edits) =>
			fc.boolean().map((newline) => {
				const lines = old === '' ? [] : old.replace(/\n$/, '').split('\n');
				for (const [at, kind, text] of edits) {
					const index = lines.length === 0 ? 0 : at % (lines.length + (kind === 'insert' ? 1 : 0));
					if (kind === 'insert') {
						lines.splice(index, 0, text);
					} else if (lines.length > 0) {
						lines.splice(index, 1, ...(kind === 'replace' ? [text] : []));
					}
				}
				return lines.length === 0 ? '' : lines.join('\n') + (newline ? '\n' : '');
			}),
		);

/** A file before and after: `undefined` for absent (so added or deleted). */
const filePair = fc.oneof(
	{ weight: 4, arbitrary: fileText.chain((old) => fc.tuple(fc.constant<string | undefined>(old), edited(old))) },
	{ weight: 1, arbitrary: fc.tuple(fc.constant(undefined), fileText) },
	{ weight: 1, arbitrary: fc.tuple(fileText, fc.constant(undefined)) },
	{ weight: 1, arbitrary: fc.tuple(fileText, fileText) },
	// A removed "-- x" next to an added "++ y": "--- x" and "+++ y" in the diff, the shape of a file header.
	{ weight: 1, arbitrary: fileText.map((old) => [old, old.replaceAll('-- sql comment', '++ i')] as [string, string]) },
);

const names = ['a.txt', 'dir/b.md', 'dir/sub/c.sql', 'd-e_f.ts'];
const fileSet = fc.tuple(...names.map(() => fc.option(filePair, { nil: undefined, freq: 3 })));

describe('the unified diff reader against git diff-tree (property)', () => {
	let repo: string;
	before(() => {
		repo = path.join(tempDir(), 'diffs');
		fs.mkdirSync(repo);
		git(repo, 'init', '-q');
	});
	after(() => fs.rmSync(repo, { recursive: true, force: true }));

	/** The tree of these files (absent ones left out), as git stores it. */
	const treeOf = (files: ReadonlyArray<string | undefined>): string => {
		fs.rmSync(path.join(repo, 'dir'), { recursive: true, force: true });
		for (const name of names) {
			fs.rmSync(path.join(repo, name), { force: true });
		}
		files.forEach((text, i) => {
			if (text !== undefined) {
				fs.mkdirSync(path.dirname(path.join(repo, names[i]!)), { recursive: true });
				fs.writeFileSync(path.join(repo, names[i]!), text);
			}
		});
		git(repo, 'add', '-A');
		return git(repo, 'write-tree');
	};

	it('every file of the diff applies to its old text and gives its new text', () => {
		fc.assert(
			fc.property(fileSet, (set) => {
				const pairs = set.map((pair) => pair ?? [undefined, undefined]);
				const from = treeOf(pairs.map(([old]) => old));
				const to = treeOf(pairs.map(([, now]) => now));
				// As the runner makes a PatchSet's diff: SafeGit.diff's own arguments.
				const diff = execFileSync('git', diffArgs(from, to), { cwd: repo, env: gitEnv(repo), encoding: 'utf8' });
				// An empty file added or deleted has no hunk and no ---/+++ lines in git's diff: nothing to read.
				const changed = names
					.filter((_, i) => pairs[i]![0] !== pairs[i]![1] && (pairs[i]![0] ?? '') !== (pairs[i]![1] ?? ''))
					.sort(); // git's order: by bytes
				const patches = parseUnifiedDiff(diff);
				assert.deepEqual(
					patches.map((patch) => patch.to || patch.from),
					changed,
					'one patch per changed file, in order',
				);
				for (const patch of patches) {
					const [old, now] = pairs[names.indexOf(patch.to || patch.from)]!;
					assert.equal(patch.from, old === undefined ? '' : patch.to || patch.from, 'an added file has no old path');
					assert.equal(patch.to, now === undefined ? '' : patch.from || patch.to, 'a deleted file has no new path');
					assert.equal(applyFilePatch(old ?? '', patch), now ?? '', `${patch.to || patch.from} applies back`);
				}
			}),
			{ numRuns: 150, includeErrorInReport: true },
		);
	});
});
