import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { Plan } from '../../server/src/ai/types';
import {
	CancelIntent,
	CancelTask,
	DecideRun,
	FollowUp,
	ImportAsset,
	LaunchGo,
	ListRuns,
	OpenWorkspace,
	PlugAsset,
	RunDidFinish,
	RunsDidChange,
	SetTicket,
	ShowRun,
	type DeskErrorJson,
	type RunDetail,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

/** Steps still open (pending or progressing) in a plan and the revisions before it. */
function openSteps(plans: Plan[]): string[] {
	return plans.flatMap((plan) =>
		plan.steps
			.filter((s) => ['pending', 'progressing'].includes(s.statuses[s.statuses.length - 1]!.status))
			.map((s) => `${plan.object_id}: ${s.description}`),
	);
}

function intentStatusOf(detail: RunDetail): string | undefined {
	return detail.intent?.statuses.at(-1)?.status;
}

describe('endings, retries and follow-ups over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);
	const settings = (scenario: Scenario) => scriptedAgentSettings(scenario, { sandbox: 'off' });

	/** Go with `ticket`; resolves with the run's id once it has finished (at the gate or failed). */
	async function goToEnd(ticket: string, scenario: Scenario): Promise<string> {
		await server.call(SetTicket, { project: 'shop', ticket });
		const record = await server.call(LaunchGo, { project: 'shop', settings: settings(scenario) });
		await server.notified(RunDidFinish, (f) => f.run === record.run, 'the run to finish');
		return record.run;
	}

	/** The run's detail with its plan's whole revision chain (ShowRun gives the run's own plan). */
	async function plansOf(runId: string): Promise<{ detail: RunDetail; plans: Plan[] }> {
		const detail = await server.call(ShowRun, { project: 'shop', id: runId });
		const overview = await server.call(ListRuns, { project: 'shop' });
		const view = overview.intents.find((i) => i.intent.object_id === detail.intent?.object_id);
		return { detail, plans: view?.plans ?? [] };
	}

	it('a failed run leaves no plan step open; Abandon then cancels the intent', async () => {
		const run = await goToEnd('Break something', { exitCode: 3 });
		const failed = await plansOf(run);
		assert.equal(failed.detail.summary.status, 'failed');
		assert.deepEqual(openSteps(failed.plans), [], 'a failed run closes its steps');
		assert.equal(intentStatusOf(failed.detail), 'active', 'a failed run may still be retried');
		await server.call(DecideRun, { project: 'shop', run, decision: 'abandon' });
		const abandoned = await plansOf(run);
		assert.equal(abandoned.detail.task.status, 'failed');
		assert.equal(intentStatusOf(abandoned.detail), 'cancelled');
		assert.match(abandoned.detail.intent!.statuses.at(-1)!.reason ?? '', /abandoned/);
	});

	it('a retry keeps the intent’s pipeline and plan revision chain; every plan stays reachable from the intent', async () => {
		const first = await goToEnd('Write a note', { plan: ['write it'], writes: [{ path: 'note.txt', content: 'a\n' }] });
		const before = await server.call(ShowRun, { project: 'shop', id: first });
		const retried = await server.call(DecideRun, {
			project: 'shop',
			run: first,
			decision: 'retry',
			settings: settings({ plan: ['write it again'], writes: [{ path: 'note.txt', content: 'b\n' }] }),
		});
		await server.notified(RunDidFinish, (f) => f.run === retried.new_run, 'the retry to finish');
		const { detail, plans } = await plansOf(retried.new_run!);
		assert.equal(detail.pipeline?.object_id, before.pipeline?.object_id, 'the same pipeline');
		const chain = plans.map((p) => p.object_id);
		// The intent's plan is the latest revision (the retry's agent's); the retry keeps the plan it started on.
		assert.equal(chain[0], detail.intent?.plan, "the chain runs back from the intent's plan");
		assert.ok(chain.includes(detail.run.plan!), "the retry's plan is on the intent's chain");
		assert.ok(chain.includes(before.run.plan!), "the first run's plan is an earlier revision of the retry's");
		assert.equal(plans.at(-1)?.previous, undefined, 'the chain ends at the first plan');
		assert.equal(new Set(plans.map((p) => p.pipeline)).size, 1, 'every revision on the one pipeline');
		assert.ok(
			detail.pipeline!.frames.some((f) => f.data && (f.data as { node?: string }).node !== undefined) &&
				detail.pipeline!.frames.filter((f) => f.kind === 'intent_analysis').length === 1,
			'the first run’s frames are kept and the intent analysed once',
		);
		await server.call(DecideRun, { project: 'shop', run: retried.new_run!, decision: 'abandon' });
	});

	it('Cancel Task cancels the working run first, abandons it, and leaves task, intent and plan final', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'A long job' });
		const record = await server.call(LaunchGo, {
			project: 'shop',
			settings: settings({ writes: [{ path: 'long.txt', content: 'x\n' }], sleepMs: 60_000 }),
		});
		await server.notified(RunsDidChange, (c) => c.run === record.run, 'the run to start');
		// The agent writes, then sleeps: once the file is there it is at work.
		for (let i = 0; i < 400 && !fs.existsSync(path.join(repo, 'long.txt')); i++) {
			await new Promise((r) => setTimeout(r, 50));
		}
		const ended = await server.call(CancelTask, { project: 'shop', task: record.task, reason: 'not now' });
		assert.deepEqual(ended, {
			cancelled_runs: [record.run],
			abandoned_runs: [record.run],
			tasks: [record.task],
			intent_status: 'cancelled',
		});
		const { detail, plans } = await plansOf(record.run);
		assert.equal(detail.summary.status, 'failed');
		assert.equal(detail.summary.error, 'cancelled: not now');
		assert.equal(detail.decision?.decision_type, 'abandon');
		assert.equal(detail.task.status, 'cancelled');
		assert.equal(intentStatusOf(detail), 'cancelled');
		assert.deepEqual(openSteps(plans), []);
		assert.equal(fs.existsSync(path.join(repo, 'long.txt')), false, "Abandon put the agent's file away");
		const again = await expectRpcError(server.connection, CancelTask.method, { project: 'shop', task: record.task });
		assert.equal((again.data as DeskErrorJson).code, 'ai.illegalTransition');
	});

	it('Cancel Intent abandons a run waiting at the gate and cancels the intent; a finished one is refused', async () => {
		const run = await goToEnd('Add a file', { writes: [{ path: 'gate.txt', content: 'g\n' }] });
		const detail = await server.call(ShowRun, { project: 'shop', id: run });
		const ended = await server.call(CancelIntent, { project: 'shop', intent: detail.intent!.object_id });
		assert.deepEqual(ended, {
			cancelled_runs: [],
			abandoned_runs: [run],
			tasks: [detail.task.object_id],
			intent_status: 'cancelled',
		});
		const after = await server.call(ShowRun, { project: 'shop', id: run });
		assert.deepEqual(
			[after.summary.status, after.decision?.decision_type, after.task.status, intentStatusOf(after)],
			['completed', 'abandon', 'cancelled', 'cancelled'],
		);
		const again = await expectRpcError(server.connection, CancelIntent.method, {
			project: 'shop',
			intent: detail.intent!.object_id,
		});
		assert.equal((again.data as DeskErrorJson).code, 'ai.illegalTransition');
	});

	it('Follow Up on a finished intent makes an intent with it as parent and runs it; an active one is refused', async () => {
		const run = await goToEnd('Start a changelog', { writes: [{ path: 'CHANGELOG.md', content: '# 0.1\n' }] });
		const original = await server.call(ShowRun, { project: 'shop', id: run });
		const refused = await expectRpcError(server.connection, FollowUp.method, {
			project: 'shop',
			from: run,
			ticket: 'Also 0.2',
		});
		assert.equal((refused.data as DeskErrorJson).code, 'ai.illegalTransition');
		await server.call(DecideRun, { project: 'shop', run, decision: 'commit' });
		const record = await server.call(FollowUp, {
			project: 'shop',
			from: original.intent!.object_id,
			ticket: 'Also add 0.2',
			settings: settings({ writes: [{ path: 'CHANGELOG.md', content: '# 0.2\n# 0.1\n' }] }),
		});
		await server.notified(RunDidFinish, (f) => f.run === record.run, 'the follow-up to finish');
		const followed = await server.call(ShowRun, { project: 'shop', id: record.run });
		assert.equal(followed.intent?.parent, original.intent!.object_id);
		assert.equal(followed.intent?.prompt, 'Also add 0.2');
		assert.equal(followed.summary.at_gate, true);
		assert.notEqual(followed.task.object_id, original.task.object_id);
		const overview = await server.call(ListRuns, { project: 'shop' });
		assert.equal(
			overview.intents.find((i) => i.intent.object_id === record.intent)?.intent.parent,
			original.intent!.object_id,
		);
		await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'abandon' });
	});

	it('landing on a snapshot target completes the intent and names the version cut on the Decision', async () => {
		const docs = path.join(root, 'docs');
		fs.mkdirSync(docs);
		fs.writeFileSync(path.join(docs, 'guide.md'), 'old\n');
		const imported = await server.call(ImportAsset, { dir: docs, project: 'shop', main: false });
		await server.call(SetTicket, { project: 'shop', ticket: 'Rewrite the guide' });
		await server.call(PlugAsset, { project: 'shop', id: imported.asset.id, role: 'target' });
		const record = await server.call(LaunchGo, {
			project: 'shop',
			settings: settings({ writes: [{ path: 'guide.md', content: 'new\n' }] }),
		});
		await server.notified(RunDidFinish, (f) => f.run === record.run, 'the run to finish');
		const landed = await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'commit' });
		assert.equal(landed.version, 2);
		const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
		assert.equal(intentStatusOf(detail), 'completed');
		assert.equal(detail.decision?.tags['desk.version'], '2');
		assert.match(detail.decision?.tags['desk.manifest'] ?? '', /^[0-9a-f]{64}$/);
	});
});
