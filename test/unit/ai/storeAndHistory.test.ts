import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as m from '../../../server/src/ai/model';
import type { AiObject } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { GitRepository } from '../../../server/src/git/repository';
import { exportHistory, historyRef } from '../../../server/src/git/historyRef';
import { runDetail, runsOverview } from '../../../server/src/runs/runViews';
import { openDesk } from '../../helpers/deskFixture';
import { git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';
import { completeChain } from './chain';

describe('AI objects in the project database', () => {
	it('stores a chain and answers the relationship queries the views need', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'));
		const desk = await openDesk(path.join(root, 'library'));
		const ai = await desk.projectAi(repo);
		const c = completeChain(git(repo, 'rev-parse', 'HEAD'));
		const v2 = m.newRevision(c.plan, c.agent);
		m.setIntentPlan(c.intent, v2);
		const retry = m.newRun(c.agent, c.task, c.run.commit);
		m.addRun(c.task, retry);
		const followUp = m.newIntent(c.human, 'Also cursor pagination', { parent: c.intent });
		assert.equal(ai.put([...c.all, v2, retry, followUp]), c.all.length + 3);
		assert.equal(ai.put([...c.all, v2, retry, followUp]), 0, 'storing the same objects again changes nothing');

		assert.deepEqual(
			ai.taskRuns(ai.require(c.task.object_id, 'task')).map((r) => r.object_id),
			[c.run.object_id, retry.object_id],
		);
		assert.deepEqual(
			ai.runPatchSets(c.run).map((p) => p.object_id),
			[c.patchset.object_id],
		);
		assert.equal(ai.runEvidence(c.run.object_id)[0]?.exit_code, 0);
		assert.equal(ai.runDecision(c.run.object_id)?.decision_type, 'commit');
		assert.equal(ai.runProvenance(c.run.object_id)?.token_usage?.total_tokens, 1500);
		assert.deepEqual(
			ai.runToolInvocations(c.run.object_id).map((t) => t.tool_name),
			['read_file', 'edit_file'],
		);
		assert.deepEqual(
			ai.intentChain(followUp).map((i) => i.prompt),
			['Also cursor pagination', c.intent.prompt],
		);
		assert.deepEqual(
			ai.planRevisions(v2).map((p) => p.object_id),
			[v2.object_id, c.plan.object_id],
		);

		const overview = runsOverview(ai);
		const first = overview.intents.find((i) => i.intent.object_id === c.intent.object_id)!;
		assert.equal(first.status, 'completed');
		assert.deepEqual(
			first.plans.map((p) => p.object_id),
			[v2.object_id, c.plan.object_id],
		);
		assert.equal(first.tasks[0]?.runs[0]?.model, 'claude-sonnet-4');
		assert.equal(first.tasks[0]?.runs[0]?.cost_usd, 0.0125);
		const detail = runDetail(ai, c.run.object_id);
		assert.deepEqual(
			[detail.task.title, detail.snapshot?.items.length, detail.pipeline?.frames.length, detail.plan?.steps.length],
			[c.task.title, 1, 2, 1],
		);
	});

	it('refuses an update that would rewrite an append-only history, changing nothing', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const ai = await desk.projectAi(makeRepo(path.join(root, 'r')));
		const c = completeChain('a'.repeat(40));
		ai.put(c.all);
		const rewritten = structuredClone(c.task);
		rewritten.runs = [];
		assert.throws(
			() => ai.put([rewritten]),
			(e) => isDeskError(e, 'ai.illegalTransition') && e.data['field'] === 'runs',
		);
		const intent = structuredClone(c.intent);
		intent.statuses = intent.statuses.slice(1);
		assert.throws(
			() => ai.put([intent]),
			(e) => isDeskError(e, 'ai.illegalTransition'),
		);
		assert.equal(ai.require<typeof c.task>(c.task.object_id, 'task').runs.length, 1);
	});
});

describe('run history in git', () => {
	it('exports to refs/desk/history (one commit per change), travels through a remote, and imports idempotently', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'));
		const desk = await openDesk(path.join(root, 'library'));
		const c = completeChain(git(repo, 'rev-parse', 'HEAD'), git(repo, 'rev-parse', 'HEAD:file1.txt'));
		(await desk.projectAi(repo)).put(c.all);
		const first = await desk.exportHistory(repo);
		assert.ok(first.commit);
		assert.equal(first.anchored, 1, 'the snapshot item blob is anchored');
		assert.equal(git(repo, 'rev-parse', `refs/desk/blobs/${c.snapshot.items[0]!.blob}`), c.snapshot.items[0]!.blob);
		assert.equal((await desk.exportHistory(repo)).commit, undefined, 'nothing changed: no new commit');
		const tree = git(repo, 'ls-tree', '-r', '--name-only', historyRef).split('\n');
		assert.ok(tree.includes(`run/${c.run.object_id}.json`));
		assert.equal(tree.length, c.all.length);
		assert.equal(git(repo, 'status', '--porcelain'), '', 'the work tree is untouched');

		// Another clone fetches the ref and imports it.
		const other = path.join(root, 'other');
		git(root, 'clone', '-q', repo, other);
		git(other, 'fetch', '-q', 'origin', `${historyRef}:${historyRef}`);
		const desk2 = await openDesk(path.join(root, 'library2'));
		const imported = await desk2.importHistory(fs.realpathSync(other));
		assert.deepEqual([imported.added, imported.refused], [c.all.length, []]);
		const again = await desk2.importHistory(fs.realpathSync(other));
		assert.deepEqual([again.added, again.unchanged], [0, c.all.length], 'importing twice adds nothing');
		const ai2 = await desk2.projectAi(fs.realpathSync(other));
		assert.equal(runDetail(ai2, c.run.object_id).decision?.decision_type, 'commit');
	});

	it('refuses objects whose checksum does not verify', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'));
		const c = completeChain('a'.repeat(40));
		const tampered: AiObject[] = c.all.map((o) => m.seal(structuredClone(o)));
		const task = tampered.find((o) => o.object_type === 'task')!;
		(task as typeof c.task).title = 'Changed after sealing';
		const unsealed = m.newIntent(c.human, 'never sealed');
		unsealed.checksum = '0'.repeat(64);
		await exportHistory(GitRepository.open(repo), [...tampered, unsealed]);
		const desk = await openDesk(path.join(root, 'library'));
		const result = await desk.importHistory(repo);
		const bySeal = result.refused.filter((r) => r.code === 'bad_checksum');
		assert.deepEqual(
			bySeal.map((r) => r.path).sort(),
			[`intent/${unsealed.object_id}.json`, `task/${task.object_id}.json`].sort(),
		);
		assert.match(bySeal[0]!.reason, /checksum does not verify/);
		// Without its task the run names nothing stored, and what hangs off the run names no run.
		const dependents = [c.run, c.read, c.edit, c.patchset, c.evidence, c.provenance, c.decision];
		assert.deepEqual(
			result.refused
				.filter((r) => r.code === 'unresolved_reference')
				.map((r) => r.object_id)
				.sort(),
			dependents.map((o) => o.object_id).sort(),
		);
		assert.equal(result.added, c.all.length - 1 - dependents.length);
		assert.equal((await desk.projectAi(repo)).get(task.object_id), undefined);
		assert.equal((await desk.projectAi(repo)).get(c.run.object_id), undefined);
	});
});

describe('PatchSet files', () => {
	it('shows a proposed PatchSet as its stored diff applied to the baseline, and refuses a diff that does not match its hash', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 1 });
		const base = git(repo, 'rev-parse', 'HEAD');
		const desk = await openDesk(path.join(root, 'library'));
		const ai = await desk.projectAi(repo);
		const agent = m.actor('agent', 'coder');
		const task = m.newTask(m.actor('human', 'a'), 'Edit file1');
		const run = m.newRun(agent, task, base);
		m.addRun(task, run);
		const diff = Buffer.from('--- a/file1.txt\n+++ b/file1.txt\n@@ -1 +1,2 @@\n-content 1\n+content one\n+and more\n');
		desk.blobs.put(diff);
		const patchset = m.newPatchSet(agent, run, {
			artifact: m.artifactFor(diff, 'desk', 'patchsets/1.diff', 'text/x-diff'),
		});
		m.addPatchSet(run, patchset);
		ai.put([task, run, patchset]);
		const sides = await desk.patchSetFiles(repo, patchset.object_id);
		assert.equal(sides.source, 'artifact');
		assert.deepEqual(
			sides.files.map((f) => [f.path, Buffer.from(f.before!).toString(), Buffer.from(f.after!).toString()]),
			[['file1.txt', 'content 1\n', 'content one\nand more\n']],
		);
		const lying = m.newPatchSet(agent, run, { artifact: { ...m.artifactFor(diff, 'desk', 'x'), size_bytes: 3 } });
		m.addPatchSet(run, lying);
		ai.put([run, lying]);
		await assert.rejects(desk.patchSetFiles(repo, lying.object_id), (e) => isDeskError(e, 'blob.corrupt'));
		const bare = m.newPatchSet(agent, run);
		m.addPatchSet(run, bare);
		ai.put([run, bare]);
		await assert.rejects(desk.patchSetFiles(repo, bare.object_id), (e) => isDeskError(e, 'ai.badObject'));
	});
});
