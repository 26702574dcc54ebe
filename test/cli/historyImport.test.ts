import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { seal } from '../../server/src/ai/model';
import type { HistoryImportResult, Run } from '../../server/src/ai/types';
import { exportHistory, historyRef } from '../../server/src/git/historyRef';
import { GitRepository } from '../../server/src/git/repository';
import type { RunDetail } from '../../server/src/runs/types';
import { openDesk } from '../helpers/deskFixture';
import { desk } from '../helpers/deskCli';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { withChanges } from '../unit/ai/craftedHistory';

/** `desk … --json` that must succeed, parsed. */
function deskJson<T>(...args: string[]): T {
	const out = desk(...args, '--json');
	assert.equal(out.code, 0, out.stderr);
	return JSON.parse(out.stdout) as T;
}

it('a run exported mid-run and again after landing goes through a bare remote into another clone and imports cleanly; a rewound copy pushed on top is refused', async () => {
	const root = tempDir();
	const remote = path.join(root, 'remote.git');
	git(root, 'init', '-q', '--bare', '-b', 'main', remote);
	const a = makeRepo(path.join(root, 'a'), { commits: 2 });
	commitFile(a, 'price.txt', '10\n', 'price');
	git(a, 'remote', 'add', 'origin', remote);
	git(a, 'push', '-q', 'origin', 'main');
	const storeA = path.join(root, 'library-a');
	assert.equal(desk('--store', storeA, 'asset', 'import', '--dir', a, '--project', 'shop', '--main').code, 0);
	const settings = path.join(root, 'settings.json');
	fs.writeFileSync(
		settings,
		JSON.stringify(scriptedAgentSettings({ writes: [{ path: 'price.txt', content: '12\n' }] })),
	);
	assert.equal(desk('--store', storeA, 'card', 'suggest', '--project', 'shop', '--ticket', 'Raise the price').code, 0);
	const went = deskJson<RunDetail>('--store', storeA, 'run', 'go', 'shop', '--settings', settings);
	assert.equal(went.summary.at_gate, true);
	const runId = went.run.object_id;
	const share = () => {
		assert.equal(desk('--store', storeA, 'history', 'export', '--project', 'shop').code, 0);
		git(a, 'push', '-q', 'origin', 'main', historyRef);
	};
	share();
	const atGate = git(a, 'rev-parse', historyRef);

	const b = path.join(root, 'b');
	git(root, 'clone', '-q', remote, b);
	const fetch = () => git(b, 'fetch', '-q', 'origin', `+${historyRef}:${historyRef}`);
	fetch();
	const storeB = path.join(root, 'library-b');
	assert.equal(desk('--store', storeB, 'asset', 'import', '--dir', b, '--project', 'shop', '--main').code, 0);
	const midRun = deskJson<HistoryImportResult>('--store', storeB, 'history', 'import', '--project', 'shop');
	assert.deepEqual(midRun.refused, []);
	assert.ok(midRun.added > 0);
	const ai = await (await openDesk(storeB)).projectAi(b);
	assert.deepEqual([ai.require<Run>(runId, 'run').status, ai.runDecision(runId)], ['validating', undefined]);

	assert.equal(desk('--store', storeA, 'run', 'decide', runId, '--repo', a, '--decision', 'commit').code, 0);
	share();
	fetch();
	const landed = deskJson<HistoryImportResult>('--store', storeB, 'history', 'import', '--project', 'shop');
	assert.deepEqual(landed.refused, [], 'later states of what B stored are taken');
	assert.ok(landed.added > 0);
	assert.deepEqual(
		[ai.require<Run>(runId, 'run').status, ai.runDecision(runId)?.decision_type],
		['completed', 'commit'],
	);

	// The mid-run export again, now older than what B holds: earlier states, left as they are.
	git(b, 'update-ref', 'refs/desk/earlier', atGate);
	const older = deskJson<HistoryImportResult>(
		'--store',
		storeB,
		'history',
		'import',
		'--project',
		'shop',
		'--ref',
		'refs/desk/earlier',
	);
	assert.deepEqual([older.added, older.refused], [0, []]);
	assert.equal(ai.require<Run>(runId, 'run').status, 'completed');

	// Someone with push access moves the landed run back to patching, reseals it, and pushes.
	const stored = ai.all();
	const rewound = structuredClone(ai.require<Run>(runId, 'run'));
	rewound.status = 'patching';
	rewound.updated_at = new Date().toISOString();
	await exportHistory(GitRepository.open(b), withChanges(stored, [seal(rewound)]), historyRef, new Date());
	const refused = desk('--store', storeB, 'history', 'import', '--project', 'shop');
	assert.equal(refused.code, 2, refused.stderr);
	assert.match(refused.stdout, /^0 added, \d+ already here, 1 refused$/m);
	assert.match(
		refused.stderr,
		new RegExp(
			`^desk: refused run/${runId}\\.json \\(status_backwards\\): run ${runId}: status completed cannot become patching`,
			'm',
		),
	);
	assert.deepEqual(
		ai.all().map((o) => o.object_id === runId && (o as Run).status),
		stored.map((o) => o.object_id === runId && (o as Run).status),
	);
	assert.equal(ai.all().length, stored.length);
});
