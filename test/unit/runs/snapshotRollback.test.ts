/**
 * Checkpoint, Resume from Checkpoint and Rollback on a snapshot target (glossary: Checkpoint,
 * Rollback): the kept files come back in the resumed run's folder, and a rollback restores the
 * version the run began from as the asset's next version.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { PatchSet, Run } from '../../../server/src/ai/types';
import { isAtGate } from '../../../server/src/runs/runViews';
import { openDesk, recordingLogger } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { tempDir } from '../../helpers/temp';

const decider = { kind: 'human' as const, id: 'Tess Tester <tess@example.com>' };

it('a snapshot target: checkpoint, resume with the kept files (a retry of the resumed run too), land, then roll back to the version the run began from', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const desk = await openDesk(path.join(root, 'library'), recordingLogger());
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	const docs = path.join(root, 'docs');
	fs.mkdirSync(docs);
	fs.writeFileSync(path.join(docs, 'guide.md'), 'Old text.\n');
	const asset = (await desk.library.importDir({ dir: docs, project: 'shop', main: false })).asset;
	const launches = await desk.launches(repo);
	launches.setTicket('Rewrite the guide');
	await launches.plug(asset.id, 'target', {});
	const record = await launches.go();
	const { executor, gate } = await desk.runs(repo);
	const ai = await desk.projectAi(repo);
	const first = await executor.execute(
		record,
		record.run,
		scriptedAgentSettings({ writes: [{ path: 'guide.md', content: 'New text.\n' }] }),
	);
	assert.ok(isAtGate(first), first.error);
	const kept = await gate.decide(first.object_id, { by: decider, decision: 'checkpoint' });
	assert.equal(kept.decision.chosen_patchset_id, undefined);

	const settings = scriptedAgentSettings({ writes: [{ path: 'notes.md', content: 'notes\n' }] });
	const resumed = await gate.resume(first.object_id, {
		isolation: 'shared',
		check: () => undefined,
		claim: (tx, id, launched) => executor.claimIn(tx, settings, launched, id),
		answer: () => undefined,
	});
	assert.equal(resumed.checkpoint, kept.decision.checkpoint_id);
	const launched = gate.launchRecord(first)!;
	const resumedRun = await executor.execute(launched, resumed.run, settings);
	assert.ok(isAtGate(resumedRun), resumedRun.error);
	// A retry of the resumed run begins from the same checkpoint.
	const retried = await gate.decide(resumedRun.object_id, {
		by: decider,
		decision: 'retry',
		claim: (tx, id) => executor.claimIn(tx, settings, launched, id),
	});
	const second = await executor.execute(launched, retried.new_run!, settings);
	assert.ok(isAtGate(second), second.error);
	const patch = ai.require<PatchSet>(second.patchsets[0]!, 'patchset');
	assert.deepEqual(
		patch.touched.map((t) => [t.path, t.change_type]),
		[
			['guide.md', 'modified'],
			['notes.md', 'added'],
		],
	);
	const landed = await gate.decide(second.object_id, { by: decider, decision: 'commit' });
	assert.equal(landed.version, 2);
	assert.equal(fs.readFileSync(path.join(docs, 'guide.md'), 'utf8'), 'New text.\n');

	const rolled = await gate.decide(second.object_id, { by: decider, decision: 'rollback', rationale: 'not yet' });
	assert.equal(rolled.version, 3);
	assert.equal(fs.readFileSync(path.join(docs, 'guide.md'), 'utf8'), 'Old text.\n');
	assert.equal(fs.existsSync(path.join(docs, 'notes.md')), false);
	const rollbackRun = ai.require<Run>(rolled.rollback_run!, 'run');
	assert.deepEqual(
		[rollbackRun.status, rollbackRun.task, rollbackRun.patchsets, rolled.decision.tags['desk.version']],
		['completed', second.task, [], '3'],
	);
	assert.equal((await desk.library.assetVersions(asset.id)).at(-1)?.made_by, 'run');
});
