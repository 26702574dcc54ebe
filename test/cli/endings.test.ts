import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { EndingResult, RunDetail } from '../../server/src/runs/types';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

it('desk task cancel ends a failed run’s task and intent; desk intent follow-up runs a refinement of it', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	const settingsFile = (name: string, scenario: Parameters<typeof scriptedAgentSettings>[0]) => {
		const file = path.join(root, `${name}.json`);
		fs.writeFileSync(file, JSON.stringify(scriptedAgentSettings(scenario, { sandbox: 'off' })));
		return file;
	};
	assert.equal(desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Add a note').code, 0);
	const went = desk(
		'--store',
		store,
		'run',
		'go',
		'shop',
		'--settings',
		settingsFile('fail', { exitCode: 5 }),
		'--json',
	);
	assert.equal(went.code, 2, 'the run failed');
	const failed = JSON.parse(went.stdout) as RunDetail;

	const cancelled = desk(
		'--store',
		store,
		'--repo',
		repo,
		'task',
		'cancel',
		failed.task.object_id,
		'--reason',
		'wrong',
		'--json',
	);
	assert.equal(cancelled.code, 0, cancelled.stderr);
	assert.deepEqual(JSON.parse(cancelled.stdout) as EndingResult, {
		cancelled_runs: [],
		abandoned_runs: [failed.run.object_id],
		tasks: [failed.task.object_id],
		intent_status: 'cancelled',
	});
	const again = desk('--store', store, '--repo', repo, 'task', 'cancel', failed.task.object_id);
	assert.equal(again.code, 2);
	assert.match(again.stderr, /is cancelled already/);

	const followed = desk(
		'--store',
		store,
		'--repo',
		repo,
		'intent',
		'follow-up',
		failed.run.object_id,
		'--ticket',
		'Add a note, in notes.txt',
		'--settings',
		settingsFile('write', { writes: [{ path: 'notes.txt', content: 'n\n' }] }),
		'--json',
	);
	assert.equal(followed.code, 0, followed.stderr);
	const detail = JSON.parse(followed.stdout) as RunDetail;
	assert.equal(detail.intent?.parent, failed.intent!.object_id);
	assert.deepEqual([detail.summary.at_gate, detail.task.title], [true, 'Add a note, in notes.txt']);
	const list = desk('--store', store, '--repo', repo, 'runs', 'list');
	assert.match(list.stdout, /^cancelled\s+Add a note(?!,)/m, 'the first intent, not its follow-up, is cancelled');
	assert.equal(
		desk('--store', store, '--repo', repo, 'intent', 'follow-up', failed.run.object_id).code,
		64,
		'a ticket is asked for',
	);
});
