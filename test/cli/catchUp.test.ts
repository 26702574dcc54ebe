import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { BranchResult, CatchUpSection } from '../../server/src/lineage/types';
import { defaultLineageSettings } from '../../server/src/runs/settings';
import { desk } from '../helpers/deskCli';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';

it('desk lineage catch-up RUN: what the next input is told, no walk while the tip stays, refusals as exit 2', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	const settingsFile = path.join(root, 'settings.json');
	fs.writeFileSync(
		settingsFile,
		JSON.stringify(
			scriptedAgentSettings(
				{ writes: [{ path: 'parser.ts', content: 'export {};\n' }] },
				{ sandbox: 'off', lineage: { ...defaultLineageSettings, branch: { template: ['plan', 'work'] } } },
			),
		),
	);
	const fork = (prompt: string) => {
		const result = desk(
			...['--store', store, 'lineage', 'prompt', '--root', 'main', '--prompt', prompt],
			...['--settings', settingsFile, '--repo', repo, '--json'],
		);
		assert.equal(result.code, 0, result.stderr);
		return JSON.parse(result.stdout) as BranchResult;
	};
	const split = fork('Split the parser');
	const catchUp = (...extra: string[]) =>
		desk('--store', store, 'lineage', 'catch-up', split.run, '--repo', repo, ...extra);

	const unchanged = catchUp('--json');
	assert.equal(unchanged.code, 0, unchanged.stderr);
	const section = JSON.parse(unchanged.stdout) as CatchUpSection;
	assert.deepEqual(
		[section.node, section.root, section.ref, section.tip, section.walked],
		[split.node, 'main', 'refs/heads/main', git(repo, 'rev-parse', 'HEAD'), false],
	);
	assert.equal(section.tally, '', 'alone on its root, nothing happened since it started');
	assert.match(
		catchUp().stdout,
		/^branch \S+ of main: refs\/heads\/main at [0-9a-f]{12}, as at its last input \(no walk\)\n\nnothing to tell/,
	);

	const outside = commitFile(
		repo,
		'NOTES.md',
		'notes\n',
		'Notes by hand\n\nDesk-Run: 0194ffff-dead-7000-8000-000000000000',
	);
	git(repo, 'pack-refs', '--all');
	const moved = catchUp();
	assert.equal(moved.code, 0, moved.stderr);
	assert.match(moved.stdout, /moved since its last input \(walked\)/);
	assert.ok(
		moved.stdout.includes(
			`### Commits on \`refs/heads/main\` since you started, newest first\n- ${outside.slice(0, 10)} Notes by hand (outside the lineage)`,
		),
		moved.stdout,
	);
	// A look saves nothing: the next look walks again.
	assert.match(catchUp().stdout, /\(walked\)/);

	const missing = desk('--store', store, 'lineage', 'catch-up', '0194ffff-dead-7000-8000-000000000000', '--repo', repo);
	assert.equal(missing.code, 2);
	assert.match(missing.stderr, /ai\.notFound|No run/);
	const tree = JSON.parse(desk('--store', store, 'lineage', 'tree', '--repo', repo, '--json').stdout) as {
		roots: Array<{ tally?: string }>;
	};
	const tallyRun = desk('--store', store, 'lineage', 'catch-up', tree.roots[0]!.tally!, '--repo', repo);
	assert.equal(tallyRun.code, 2, 'a tally is a Task, not a run');
	const usage = desk('--store', store, 'lineage', 'catch-up', '--repo', repo);
	assert.equal(usage.code, 64);
});
