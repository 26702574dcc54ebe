import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { BranchResult, LineageRoot, LineageTree } from '../../server/src/lineage/types';
import { commitFile, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

it('desk lineage roots, add-root, prompt (the branch carried out here to the gate) and tree', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	commitFile(repo, 'price.txt', '10\n', 'price');
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);

	const roots = desk('--store', store, 'lineage', 'roots', '--project', 'shop', '--json');
	assert.equal(roots.code, 0, roots.stderr);
	assert.deepEqual(
		(JSON.parse(roots.stdout) as { roots: LineageRoot[] }).roots.map((r) => r.name),
		['main'],
	);

	const added = desk(
		'--store',
		store,
		'lineage',
		'add-root',
		'experiments',
		'--about',
		'Things to try',
		'--repo',
		repo,
	);
	assert.equal(added.code, 0, added.stderr);
	assert.match(added.stdout, /listed experiments\s+empty\s+0 branches/);
	const again = desk('--store', store, 'lineage', 'add-root', 'experiments', '--repo', repo);
	assert.equal(again.code, 2);
	assert.match(again.stderr, /lineage\.rootExists|listed already/);
	const unknown = desk('--store', store, 'lineage', 'prompt', '--root', 'nope', '--prompt', 'x', '--repo', repo);
	assert.equal(unknown.code, 2);
	assert.match(unknown.stderr, /No root nope is listed/);

	const settingsFile = path.join(root, 'settings.json');
	fs.writeFileSync(
		settingsFile,
		JSON.stringify(scriptedAgentSettings({ writes: [{ path: 'price.txt', content: '12\n' }] })),
	);
	const prompt = () =>
		desk(
			...['--store', store, 'lineage', 'prompt', '--root', 'main', '--prompt', 'Raise the price to 12'],
			...['--settings', settingsFile, '--repo', repo, '--request-id', 'branch-req-0001', '--json'],
		);
	const prompted = prompt();
	assert.equal(prompted.code, 0, prompted.stderr);
	const branch = JSON.parse(prompted.stdout) as BranchResult;
	assert.deepEqual(branch.grant_chain, [`branch:${branch.node}`, 'root:main', 'ultimate:person']);
	assert.equal(
		fs.readFileSync(path.join(repo, 'price.txt'), 'utf8'),
		'12\n',
		"the branch's agent worked in the checkout",
	);

	const replay = prompt();
	assert.equal(replay.code, 0, replay.stderr);
	assert.deepEqual(JSON.parse(replay.stdout), { ...branch, queued: false, replayed: true });

	// Branch from Here, at the command line: a branch of the branch's run, its prompt from a file.
	const promptFile = path.join(root, 'prompt.md');
	fs.writeFileSync(promptFile, 'Write notes.txt\n\nA second line of the prompt.\n');
	const notesSettings = path.join(root, 'notes-settings.json');
	fs.writeFileSync(
		notesSettings,
		JSON.stringify(scriptedAgentSettings({ writes: [{ path: 'notes.txt', content: 'n\n' }] })),
	);
	const child = desk(
		...['--store', store, 'lineage', 'branch', '--from-run', branch.run, '--repo-path', repo],
		...['--prompt-file', promptFile, '--settings', notesSettings, '--repo', repo, '--json'],
	);
	assert.equal(child.code, 0, child.stderr);
	const sub = JSON.parse(child.stdout) as BranchResult;
	assert.deepEqual(sub.grant_chain, [`branch:${sub.node}`, 'root:main', `branch:${branch.node}`, 'ultimate:person']);
	const relative = desk(
		'--store',
		store,
		'lineage',
		'branch',
		'--from-run',
		branch.run,
		'--repo-path',
		'shop',
		'--prompt',
		'x',
		'--repo',
		repo,
	);
	assert.equal(relative.code, 2);
	assert.match(relative.stderr, /absolute/);

	const tree = desk('--store', store, 'lineage', 'tree', '--repo', repo, '--json');
	assert.equal(tree.code, 0, tree.stderr);
	const parsed = JSON.parse(tree.stdout) as LineageTree;
	assert.equal(parsed.roots[0]!.tally, branch.tally);
	assert.deepEqual(
		parsed.roots[0]!.branches.map((b) => [b.node.node, b.state, b.children.map((c) => [c.node.node, c.state])]),
		[[branch.node, 'gate', [[sub.node, 'gate']]]],
	);
	const text = desk('--store', store, 'lineage', 'tree', '--repo', repo);
	assert.match(text.stdout, new RegExp(`main\\s+tally ${branch.tally}\\s+2 branches · 2 live · 0 landed`));
	assert.match(text.stdout, new RegExp(`${branch.node}\\s+gate\\s+"Raise the price to 12"`));
	assert.match(text.stdout, new RegExp(`\\n {4}${sub.node}\\s+gate\\s+"Write notes.txt"`), 'nested under its starter');
});
