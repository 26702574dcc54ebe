import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { RunDetail } from '../../server/src/runs/types';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk, deskJs, launchedTask } from '../helpers/deskCli';

function project(): { root: string; store: string; repo: string } {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	commitFile(repo, 'price.txt', '10\n', 'price');
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	return { root, store, repo };
}

it('desk run go carries a run out to the gate; run status shows it; run decide lands it with the trailer', () => {
	const { root, store, repo } = project();
	const settingsFile = path.join(root, 'settings.json');
	fs.writeFileSync(
		settingsFile,
		JSON.stringify(
			scriptedAgentSettings(
				{ writes: [{ path: 'price.txt', content: '12\n' }] },
				{
					checks: [
						{
							id: 'price-is-number',
							executable: 'sh',
							args: ['-c', 'grep -Eq "^[0-9]+$" price.txt'],
							cwd: '.',
							timeout: 10,
						},
					],
				},
			),
		),
	);
	assert.equal(
		desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Raise the price to 12').code,
		0,
	);
	const went = desk('--store', store, 'run', 'go', 'shop', '--settings', settingsFile, '--json');
	assert.equal(went.code, 0, went.stderr);
	const detail = JSON.parse(went.stdout) as RunDetail;
	assert.deepEqual([detail.summary.status, detail.summary.at_gate], ['validating', true]);
	assert.deepEqual(
		detail.evidence.map((e) => [e.tags['desk.check'], e.exit_code]),
		[['price-is-number', 0]],
	);

	const status = desk('--store', store, 'run', 'status', detail.run.object_id, '--repo', repo);
	assert.equal(status.code, 0, status.stderr);
	assert.match(status.stdout, /validating\s+Raise the price to 12/);
	assert.match(status.stdout, /patchset \S+ proposed: price\.txt \+1 -1/);
	assert.match(status.stdout, /check price-is-number: passed/);
	assert.match(status.stdout, /waiting at the gate/);

	const wrong = desk('--store', store, 'run', 'decide', detail.run.object_id, '--repo', repo, '--decision', 'merge');
	assert.equal(wrong.code, 64);
	const landed = desk(
		'--store',
		store,
		'run',
		'decide',
		detail.run.object_id,
		'--repo',
		repo,
		'--decision',
		'commit',
		'--json',
	);
	assert.equal(landed.code, 0, landed.stderr);
	const { commit } = JSON.parse(landed.stdout) as { commit: string };
	assert.equal(git(repo, 'rev-parse', 'HEAD'), commit);
	assert.match(
		git(repo, 'log', '-1', '--format=%B'),
		new RegExp(`^Raise the price to 12\\n[\\s\\S]*Desk-Run: ${detail.run.object_id}$`),
	);
	assert.equal(fs.readFileSync(path.join(repo, 'price.txt'), 'utf8'), '12\n');
	const twice = desk('--store', store, 'run', 'decide', detail.run.object_id, '--repo', repo, '--decision', 'commit');
	assert.equal(twice.code, 2);
	assert.match(twice.stderr, /has its decision already/);
});

it('desk run cancel from another shell stops a run that desk run go is carrying out', async () => {
	const { root, store, repo } = project();
	const settingsFile = path.join(root, 'settings.json');
	fs.writeFileSync(settingsFile, JSON.stringify(scriptedAgentSettings({ sleepMs: 60_000 })));
	assert.equal(desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Wait a long time').code, 0);
	const going = spawn(
		process.execPath,
		[deskJs, '--store', store, 'run', 'go', 'shop', '--settings', settingsFile, '--json'],
		{ stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let stdout = '';
	going.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
	const exited = new Promise<number | null>((resolve) => going.on('exit', resolve));
	// The run id, once the run is patching.
	let runId: string | undefined;
	for (let i = 0; i < 200 && !runId; i++) {
		await new Promise((r) => setTimeout(r, 100));
		const listed = desk('--store', store, 'runs', 'list', '--repo', repo, '--json');
		const overview = JSON.parse(listed.stdout || '{"intents":[]}') as {
			intents: Array<{ tasks: Array<{ runs: Array<{ id: string; status: string }> }> }>;
		};
		runId = overview.intents.flatMap((v) => v.tasks.flatMap((t) => t.runs)).find((r) => r.status === 'patching')?.id;
	}
	assert.ok(runId, 'the run started');
	await new Promise((r) => setTimeout(r, 500));
	const cancelled = desk('--store', store, 'run', 'cancel', runId, '--repo', repo, '--reason', 'not today', '--json');
	assert.equal(cancelled.code, 0, cancelled.stderr);
	assert.deepEqual(JSON.parse(cancelled.stdout), { stopped: true });
	assert.equal(await exited, 2, 'run go exits 2: the run failed');
	const detail = JSON.parse(stdout) as RunDetail;
	assert.equal(detail.summary.status, 'failed');
	assert.equal(detail.run.error, 'cancelled: not today');
});

it('desk task attachments: add, list, show, cat and rm (audited), refusing what the limits or the rules refuse', () => {
	const { root, store, repo } = project();
	const attachments = (...args: string[]) => desk('--store', store, '--repo', repo, 'task', 'attachments', ...args);
	const task = launchedTask(store, 'shop', 'Report');
	const file = path.join(root, 'report.txt');
	fs.writeFileSync(file, 'the report\n');
	const noTask = attachments('add', '0190f0f0-0000-7000-8000-0000000000bb', file);
	assert.equal(noTask.code, 2, noTask.stderr);
	assert.match(noTask.stderr, /No task 0190f0f0-0000-7000-8000-0000000000bb in project shop/);
	const added = attachments('add', task, file, '--note', 'weekly', '--json');
	assert.equal(added.code, 0, added.stderr);
	const row = JSON.parse(added.stdout) as { id: string; name: string; note: string };
	assert.deepEqual([row.name, row.note], ['report.txt', 'weekly']);
	const listed = desk('--store', store, '--repo', repo, 'task', 'attachments', 'list');
	assert.match(listed.stdout, new RegExp(`${task}\\s+1 file\\s+11 B`));
	const files = desk('--store', store, '--repo', repo, 'task', 'attachments', 'list', task);
	assert.match(files.stdout, /text\/plain\s+hand\s+report\.txt/);
	const shown = desk('--store', store, '--repo', repo, 'task', 'attachments', 'show', task, row.id.slice(0, 6));
	assert.match(shown.stdout, /note: weekly/);
	const cat = desk('--store', store, '--repo', repo, 'task', 'attachments', 'cat', task, 'report.txt');
	assert.equal(cat.stdout, 'the report\n');
	fs.symlinkSync(file, path.join(root, 'link.txt'));
	const link = desk('--store', store, '--repo', repo, 'task', 'attachments', 'add', task, path.join(root, 'link.txt'));
	assert.equal(link.code, 2);
	assert.match(link.stderr, /is a link/);
	const short = desk('--store', store, '--repo', repo, 'task', 'attachments', 'show', task, row.id.slice(0, 5));
	assert.equal(short.code, 2, 'five characters of an id are not enough');
	const removed = desk('--store', store, '--repo', repo, 'task', 'attachments', 'rm', task, 'report.txt');
	assert.equal(removed.code, 0, removed.stderr);
	assert.equal(
		desk('--store', store, '--repo', repo, 'task', 'attachments', 'list', task).stdout.trim(),
		'(no attachments)',
	);
	const usage = desk('--store', store, '--repo', repo, 'task', 'attachments', 'frobnicate');
	assert.equal(usage.code, 64);
});
