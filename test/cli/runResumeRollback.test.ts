import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { DecideResult, RunDetail } from '../../server/src/runs/types';
import { git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

it('desk run decide --decision checkpoint, desk run resume from it, then rollback of the landed run on its own branch (worktrees)', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	const settingsFile = (name: string, scenario: Scenario) => {
		const file = path.join(root, `${name}.json`);
		fs.writeFileSync(file, JSON.stringify(scriptedAgentSettings(scenario, { isolation: 'worktree' })));
		return file;
	};
	const json = <T>(...args: string[]): T => {
		const result = desk('--store', store, '--repo', repo, ...args, '--json');
		assert.equal(result.code, 0, result.stderr);
		return JSON.parse(result.stdout) as T;
	};
	assert.equal(desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Draft the guide').code, 0);
	const first = json<RunDetail>(
		'run',
		'go',
		'--settings',
		settingsFile('one', { writes: [{ path: 'guide.md', content: 'part one\n' }] }),
	);
	const firstRun = first.run.object_id;
	const kept = json<DecideResult>('run', 'decide', firstRun, '--decision', 'checkpoint');
	assert.equal(kept.decision.chosen_patchset_id, undefined, 'Checkpoint selects no PatchSet');

	const resumed = json<RunDetail>(
		'run',
		'resume',
		firstRun,
		'--settings',
		settingsFile('two', { writes: [{ path: 'more.md', content: 'part two\n' }] }),
	);
	assert.deepEqual([resumed.summary.at_gate, resumed.run.tags['desk.resumes']], [true, firstRun]);
	assert.deepEqual(resumed.patchsets[0]!.touched.map((t) => t.path).sort(), ['guide.md', 'more.md']);
	const again = desk('--store', store, '--repo', repo, 'run', 'resume', firstRun);
	assert.equal(again.code, 2);
	assert.match(again.stderr, /was resumed already/);

	const run = resumed.run.object_id;
	const branch = `desk/run-${run}`;
	const landed = json<DecideResult>('run', 'decide', run, '--decision', 'commit');
	assert.equal(git(repo, 'rev-parse', branch), landed.commit);
	const rolled = desk('--store', store, '--repo', repo, 'run', 'decide', run, '--decision', 'rollback');
	assert.equal(rolled.code, 0, rolled.stderr);
	const [, rollbackRun, revert] = /^rolled back in run (\S+): reverted by (\S+)$/m.exec(rolled.stdout) ?? [];
	assert.ok(rollbackRun && revert, rolled.stdout);
	assert.equal(git(repo, 'rev-parse', branch), revert, 'the revert is on the branch the run landed on');
	assert.equal(git(repo, 'rev-parse', `${branch}^`), landed.commit);
	assert.match(git(repo, 'log', '-1', '--format=%B', branch), new RegExp(`\\n\\nDesk-Run: ${rollbackRun}$`));
	assert.equal(git(repo, 'ls-tree', '--name-only', revert, '--', 'guide.md', 'more.md'), '');
	const shown = json<RunDetail>('run', 'status', rollbackRun);
	assert.deepEqual(
		[shown.summary.status, shown.decision?.decision_type, shown.decision?.result_commit_sha],
		['completed', 'rollback', revert],
	);
	const twice = desk('--store', store, '--repo', repo, 'run', 'decide', run, '--decision', 'rollback');
	assert.equal(twice.code, 2);
	assert.match(twice.stderr, /was rolled back already/);
});
