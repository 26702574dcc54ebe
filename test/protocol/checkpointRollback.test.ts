/**
 * Rollback of a landed run and Resume from Checkpoint over JSON-RPC, with the real server process,
 * the scripted agent and a real git repository (glossary: Rollback, Checkpoint).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import {
	DecideRun,
	ImportAsset,
	LaunchGo,
	ListVersions,
	OpenWorkspace,
	PlugAsset,
	ResumeRun,
	RunDidFinish,
	RunsDidChange,
	SetTicket,
	ShowRun,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('rollback and resume over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	let landedRun = '';

	/** Go with `ticket` and an agent playing `scenario`; resolves once the run is at the gate. */
	const runToGate = async (ticket: string, scenario: Scenario): Promise<string> => {
		await server.call(SetTicket, { project: 'shop', ticket });
		const record = await server.call(LaunchGo, { project: 'shop', settings: scriptedAgentSettings(scenario) });
		const end = await server.notified(RunDidFinish, (f) => f.run === record.run, 'the run to reach the gate');
		assert.equal(end.status, 'gate', end.error);
		return record.run;
	};
	const refusal = async (params: Record<string, unknown>, method: string = DecideRun.method): Promise<DeskErrorJson> =>
		(await expectRpcError(server.connection, method, { project: 'shop', ...params })).data as DeskErrorJson;

	it('Rollback reverts the landing commit on its branch in a run of its own, never over a changed file', async () => {
		fs.writeFileSync(path.join(repo, 'notes.txt'), 'my own notes\n');
		const run = await runToGate('Add a changelog', { writes: [{ path: 'CHANGELOG.md', content: '# 0.1.0\n' }] });
		const notLanded = await refusal({ run, decision: 'rollback' });
		assert.equal(notLanded.code, 'run.notLanded', notLanded.message);
		const landed = await server.call(DecideRun, { project: 'shop', run, decision: 'commit' });
		landedRun = run;

		// A change of the person's in the file the revert would write: refused, nothing moves.
		fs.writeFileSync(path.join(repo, 'CHANGELOG.md'), '# 0.1.0\n\nmine\n');
		const dirty = await refusal({ run, decision: 'rollback' });
		assert.equal(dirty.code, 'run.checkoutDirty', dirty.message);
		assert.deepEqual((dirty.data as { paths: string[] }).paths, ['CHANGELOG.md']);
		assert.equal(git(repo, 'rev-parse', 'HEAD'), landed.commit);
		assert.equal(fs.readFileSync(path.join(repo, 'CHANGELOG.md'), 'utf8'), '# 0.1.0\n\nmine\n');

		fs.writeFileSync(path.join(repo, 'CHANGELOG.md'), '# 0.1.0\n');
		// As the editor asks: with a request id. The views are told; a repeat answers the same rollback.
		const asked = {
			project: 'shop',
			run,
			decision: 'rollback' as const,
			rationale: 'too early',
			requestId: 'rollback-0001',
		};
		const before = server.notifications.length;
		const rolled = await server.call(DecideRun, asked);
		const told = () =>
			server.notifications
				.slice(before)
				.some((n) => n.method === RunsDidChange.method && (n.params as { project: string }).project === 'shop');
		for (let i = 0; i < 100 && !told(); i++) {
			await new Promise((r) => setTimeout(r, 50));
		}
		assert.ok(told(), 'the views are told of the rollback');
		assert.deepEqual(await server.call(DecideRun, asked), rolled);
		const rollbackRun = rolled.rollback_run!;
		assert.ok(rollbackRun && rollbackRun !== run);
		assert.equal(git(repo, 'rev-parse', 'HEAD'), rolled.commit);
		assert.equal(git(repo, 'rev-parse', 'HEAD^'), landed.commit);
		assert.equal(
			git(repo, 'log', '-1', '--format=%B'),
			`Revert “Add a changelog”\n\nThis reverts commit ${landed.commit}, which run ${run} landed.\n\nDesk-Run: ${rollbackRun}`,
		);
		assert.equal(fs.existsSync(path.join(repo, 'CHANGELOG.md')), false, 'the checkout follows the revert');
		assert.equal(git(repo, 'status', '--porcelain'), '?? notes.txt', "the person's untracked file is untouched");

		const reverting = await server.call(ShowRun, { project: 'shop', id: rollbackRun });
		assert.deepEqual(
			[reverting.summary.status, reverting.decision?.decision_type, reverting.decision?.result_commit_sha],
			['completed', 'rollback', rolled.commit],
		);
		assert.equal(reverting.decision?.chosen_patchset_id, undefined);
		assert.equal(reverting.decision?.rationale, 'too early');
		assert.equal(reverting.run.task, (await server.call(ShowRun, { project: 'shop', id: run })).run.task);
		const original = await server.call(ShowRun, { project: 'shop', id: run });
		assert.deepEqual(
			[original.decision?.decision_type, original.summary.rolled_back_by, original.task.status],
			['commit', rollbackRun, 'done'],
		);
		const again = await refusal({ run, decision: 'rollback' });
		assert.equal(again.code, 'run.notLanded', again.message);
		fs.rmSync(path.join(repo, 'notes.txt'));
	});

	it('Checkpoint selects no PatchSet and puts the checkout back; Resume starts a new run from its state, once', async () => {
		// A file of the person's in the shared checkout is theirs: neither kept in the checkpoint nor put back.
		fs.writeFileSync(path.join(repo, 'mine.txt'), 'mine\n');
		const run = await runToGate('Write the guide', { writes: [{ path: 'guide.md', content: 'part one\n' }] });
		const kept = await server.call(DecideRun, { project: 'shop', run, decision: 'checkpoint' });
		assert.equal(kept.decision.chosen_patchset_id, undefined, 'Checkpoint selects no PatchSet');
		assert.equal(git(repo, 'rev-parse', `refs/desk/checkpoints/${run}`), kept.decision.checkpoint_id);
		assert.equal(fs.existsSync(path.join(repo, 'guide.md')), false, 'the change is kept aside');
		assert.equal(fs.readFileSync(path.join(repo, 'mine.txt'), 'utf8'), 'mine\n');

		const settings = scriptedAgentSettings({ writes: [{ path: 'more.md', content: 'part two\n' }] });
		const notCheckpointed = await refusal({ run: landedRun, settings }, ResumeRun.method);
		assert.equal(notCheckpointed.code, 'run.notCheckpointed', notCheckpointed.message);

		const resumed = await server.call(ResumeRun, { project: 'shop', run, settings });
		assert.equal(resumed.checkpoint, kept.decision.checkpoint_id);
		const end = await server.notified(RunDidFinish, (f) => f.run === resumed.run, 'the resumed run to finish');
		assert.equal(end.status, 'gate', end.error);
		const detail = await server.call(ShowRun, { project: 'shop', id: resumed.run });
		assert.equal(detail.run.tags['desk.resumes'], run);
		assert.deepEqual(
			detail.patchsets[0]!.touched.map((t) => t.path).sort(),
			['guide.md', 'more.md'],
			"the resumed run's change holds the checkpoint's and its own",
		);
		assert.equal((await server.call(ShowRun, { project: 'shop', id: run })).summary.resumed_by, resumed.run);
		const twice = await refusal({ run, settings }, ResumeRun.method);
		assert.equal(twice.code, 'run.notCheckpointed', twice.message);

		const landed = await server.call(DecideRun, { project: 'shop', run: resumed.run, decision: 'commit' });
		assert.equal(git(repo, 'show', `${landed.commit}:guide.md`), 'part one');
		assert.equal(
			git(repo, 'ls-tree', '--name-only', landed.commit!, '--', 'mine.txt'),
			'',
			"the person's file did not land",
		);
		assert.equal(git(repo, 'status', '--porcelain'), '?? mine.txt');
		assert.equal((await server.call(ShowRun, { project: 'shop', id: resumed.run })).task.status, 'done');
	});
});

it('a desk killed between the revert commit and its Decision: the next rollback records that commit, commits nothing again, and the checkout follows', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const library = path.join(root, 'library');
	const killed = await startServer(library, {
		env: { ...process.env, DESK_TEST_FAULTS: 'rollback.afterCommit.beforeDecision' },
	});
	await killed.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	await killed.call(SetTicket, { project: 'shop', ticket: 'Add a licence' });
	const record = await killed.call(LaunchGo, {
		project: 'shop',
		settings: scriptedAgentSettings({ writes: [{ path: 'LICENCE', content: 'MIT\n' }] }),
	});
	const end = await killed.notified(RunDidFinish, (f) => f.run === record.run, 'the run to reach the gate');
	assert.equal(end.status, 'gate', end.error);
	const landed = await killed.call(DecideRun, { project: 'shop', run: record.run, decision: 'commit' });
	// No answer comes: the server dies once the revert is on the branch.
	void killed.call(DecideRun, { project: 'shop', run: record.run, decision: 'rollback' }).catch(() => undefined);
	assert.equal((await killed.exited).signal, 'SIGKILL');
	const revert = git(repo, 'rev-parse', 'HEAD');
	assert.equal(git(repo, 'rev-parse', 'HEAD^'), landed.commit, 'the revert was committed before the kill');
	const made = /^Desk-Run: (\S+)$/m.exec(git(repo, 'log', '-1', '--format=%B'))![1]!;

	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const rolled = await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'rollback' });
	assert.deepEqual([rolled.commit, rolled.rollback_run], [revert, made]);
	assert.equal(git(repo, 'rev-parse', 'HEAD'), revert, 'nothing was committed again');
	assert.equal(fs.existsSync(path.join(repo, 'LICENCE')), false);
	assert.equal(git(repo, 'status', '--porcelain'), '');
	assert.equal((await server.call(ShowRun, { project: 'shop', id: made })).decision?.result_commit_sha, revert);
	await server.stop();
});

it('a desk killed between the restored version of a snapshot target and its Decision: the next rollback records that version under the run its note names, cuts nothing again, and is refused after', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const docs = path.join(root, 'docs');
	fs.mkdirSync(docs);
	fs.writeFileSync(path.join(docs, 'guide.md'), 'Old text.\n');
	const library = path.join(root, 'library');
	const killed = await startServer(library, {
		env: { ...process.env, DESK_TEST_FAULTS: 'rollback.afterVersion.beforeDecision' },
	});
	await killed.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const asset = (await killed.call(ImportAsset, { dir: docs, project: 'shop', main: false })).asset.id;
	await killed.call(SetTicket, { project: 'shop', ticket: 'Rewrite the guide' });
	await killed.call(PlugAsset, { project: 'shop', id: asset, role: 'target' });
	const record = await killed.call(LaunchGo, {
		project: 'shop',
		settings: scriptedAgentSettings({ writes: [{ path: 'guide.md', content: 'New text.\n' }] }),
	});
	const end = await killed.notified(RunDidFinish, (f) => f.run === record.run, 'the run to reach the gate');
	assert.equal(end.status, 'gate', end.error);
	const landed = await killed.call(DecideRun, { project: 'shop', run: record.run, decision: 'commit' });
	assert.equal(landed.version, 2);
	// No answer comes: the server dies once the restored version is cut.
	void killed.call(DecideRun, { project: 'shop', run: record.run, decision: 'rollback' }).catch(() => undefined);
	assert.equal((await killed.exited).signal, 'SIGKILL');
	assert.equal(fs.readFileSync(path.join(docs, 'guide.md'), 'utf8'), 'Old text.\n', 'restored before the kill');

	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const cut = (await server.call(ListVersions, { id: asset })).versions;
	assert.equal(cut.length, 3, 'the restore was cut before the kill');
	const made = /^run (\S+): rollback of run /.exec(cut[2]!.engine === 'snapshot' ? cut[2]!.note : '')?.[1];
	assert.ok(made, 'the restored version names its rollback run');
	assert.equal((await server.call(ShowRun, { project: 'shop', id: record.run })).summary.rolled_back_by, undefined);

	const rolled = await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'rollback' });
	assert.deepEqual([rolled.version, rolled.rollback_run], [3, made]);
	assert.equal((await server.call(ListVersions, { id: asset })).total, 3, 'nothing was cut again');
	const reverting = await server.call(ShowRun, { project: 'shop', id: made });
	assert.deepEqual(
		[reverting.summary.status, reverting.decision?.decision_type, reverting.decision?.tags['desk.version']],
		['completed', 'rollback', '3'],
	);
	assert.equal(reverting.run.task, (await server.call(ShowRun, { project: 'shop', id: record.run })).run.task);
	assert.equal((await server.call(ShowRun, { project: 'shop', id: record.run })).summary.rolled_back_by, made);
	const again = (
		await expectRpcError(server.connection, DecideRun.method, {
			project: 'shop',
			run: record.run,
			decision: 'rollback',
		})
	).data as DeskErrorJson;
	assert.equal(again.code, 'run.notLanded', again.message);
	assert.equal((await server.call(ListVersions, { id: asset })).total, 3);
	await server.stop();
});

after(killStartedServers);
