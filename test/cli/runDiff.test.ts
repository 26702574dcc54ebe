/**
 * `desk run diff RUN`: a run's PatchSet as a unified diff on stdout, as stored: a snapshot target's
 * target_diff, a git target's diff (which `git apply` takes); an unknown run is a typed refusal.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { AssetRecord } from '../../server/src/assets/types';
import type { RunDetail } from '../../server/src/runs/types';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

/** A library with project shop (its repository the main asset), and `run go` with the scripted agent's settings. */
function shop() {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	commitFile(repo, 'price.txt', '10\n', 'price');
	const json = <T>(...args: string[]): T => {
		const result = desk('--store', store, ...args, '--json');
		assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
		return JSON.parse(result.stdout) as T;
	};
	json('asset', 'import', '--dir', repo, '--project', 'shop', '--main');
	const go = (ticket: string, script: Parameters<typeof scriptedAgentSettings>[0]): RunDetail => {
		const settings = path.join(root, 'settings.json');
		fs.writeFileSync(settings, JSON.stringify(scriptedAgentSettings(script)));
		json('card', 'suggest', '--project', 'shop', '--ticket', ticket);
		return json<RunDetail>('run', 'go', 'shop', '--settings', settings);
	};
	return { root, store, repo, json, go };
}

it("prints a snapshot target's target_diff as stored; an unknown run is refused with ai.notFound", () => {
	const { root, store, json, go } = shop();
	const docs = path.join(root, 'docs');
	fs.mkdirSync(docs);
	fs.writeFileSync(path.join(docs, 'guide.md'), '# Guide\n\nOld text.\n');
	const asset = json<{ asset: AssetRecord }>('asset', 'import', '--dir', docs, '--project', 'shop').asset;
	json('card', 'plug', '--project', 'shop', '--asset', asset.id, '--role', 'target');
	const detail = go('Rewrite the guide', { writes: [{ path: 'guide.md', content: '# Guide\n\nNew text.\n' }] });

	const diff = desk('--store', store, 'run', 'diff', detail.run.object_id, '--project', 'shop');
	assert.equal(diff.code, 0, diff.stderr);
	assert.equal(
		diff.stdout,
		'diff --git a/guide.md b/guide.md\n--- a/guide.md\n+++ b/guide.md\n@@ -1,3 +1,3 @@\n # Guide\n \n-Old text.\n+New text.\n',
	);
	const shown = json<{ patchset: string; format: string }>('run', 'diff', detail.run.object_id, '--project', 'shop');
	assert.deepEqual([shown.patchset, shown.format], [detail.patchsets.at(-1)!.object_id, 'unified']);

	const unknown = desk('--store', store, 'run', 'diff', 'no-such-run', '--project', 'shop', '--json');
	assert.equal(unknown.code, 2);
	assert.equal((JSON.parse(unknown.stdout) as { error: { code: string } }).error.code, 'ai.notFound');
});

it("prints a git target's PatchSet as a diff git apply takes", () => {
	const { store, repo, go } = shop();
	const detail = go('Raise the price to 12', { writes: [{ path: 'price.txt', content: '12\n' }] });
	const diff = desk('--store', store, 'run', 'diff', detail.run.object_id, '--repo', repo);
	assert.equal(diff.code, 0, diff.stderr);
	assert.match(diff.stdout, /^diff --git a\/price\.txt b\/price\.txt\n/);
	assert.match(diff.stdout, /\n-10\n\+12\n$/);
	// The run worked in the checkout: its change is there, and the diff taken back out applies.
	const patch = path.join(repo, '..', 'run.diff');
	fs.writeFileSync(patch, diff.stdout);
	git(repo, 'apply', '--check', '--reverse', patch);
});
