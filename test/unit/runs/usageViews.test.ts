import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as m from '../../../server/src/ai/model';
import { summaryAgentTool, usageOfModels } from '../../../server/src/ai/tokenUsage';
import type { AiObject, ModelUsage, Run, Task } from '../../../server/src/ai/types';
import { formatOverview, formatRunDetail } from '../../../server/src/cli/commands/runs';
import { lineageKindTag } from '../../../server/src/lineage/types';
import { runDetail, runsOverview } from '../../../server/src/runs/runViews';
import { openDesk } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

/*
 * Usage rolled up where a person looks for it: per task, per intent and per branch with every
 * branch below it (its lineage subtree), in the Runs view's overview and `desk runs list`, and per
 * model in `desk runs show`; what makes a sum uncertain (an estimate, usage incomplete, a cost
 * unknown) carried up with it. The AI objects are stored in a real project database.
 */

const human = m.actor('human', 'tess');
const system = m.actor('system', 'desk');

const model = (name: string, input: number, output: number, cost?: number, estimated = false): ModelUsage => ({
	model: name,
	input_tokens: input,
	output_tokens: output,
	total_tokens: input + output,
	...(cost !== undefined ? { cost_usd: cost } : {}),
	...(estimated ? { cost_estimated: true as const } : {}),
});

/** A task of `intent` (a branch of `parent` when given) with one run per usage. */
function taskWithRuns(
	title: string,
	usages: Array<Parameters<typeof usageOfModels> | undefined>,
	options: { intent?: ReturnType<typeof m.newIntent>; branchOf?: Task } = {},
): AiObject[] {
	const task = m.newTask(human, title, {
		...(options.intent ? { intent: options.intent } : {}),
		...(options.branchOf ? { parent: options.branchOf } : {}),
	});
	if (options.branchOf) {
		task.tags = { ...task.tags, [lineageKindTag]: 'branch' };
	}
	const objects: AiObject[] = [task];
	for (const usage of usages) {
		const run = m.newRun(system, task, 'a'.repeat(40));
		m.addRun(task, run);
		const provenance = m.newProvenance(system, run, 'anthropic', 'claude-sonnet-4-5');
		if (usage) {
			m.setUsage(provenance, usageOfModels(...usage));
		}
		objects.push(run, provenance);
	}
	return objects;
}

async function projectStore() {
	const root = tempDir();
	const desk = await openDesk(path.join(root, 'library'));
	return desk.projectAi(makeRepo(path.join(root, 'shop')));
}

describe('usage rolled up per task, per intent and per branch', () => {
	it("counts what the summary agent spent memorizing a branch's landing in the subtree, not in the task's own usage", async () => {
		const ai = await projectStore();
		const intent = m.newIntent(human, 'Add pagination');
		const starter = taskWithRuns('Paginate', [[[model('claude-sonnet-4-5', 1000, 100, 0.01)]]], { intent });
		const branchIntent = m.newIntent(human, 'Try cursors', { parent: intent });
		const branch = taskWithRuns('Try cursors', [[[model('claude-haiku-4-5', 300, 30, 0.001)]]], {
			intent: branchIntent,
			branchOf: starter[0] as Task,
		});
		const landed = branch.find((o): o is Run => o.object_type === 'run')!;
		const summary = m.newToolInvocation(m.actor('agent', 'summary:haiku'), landed, summaryAgentTool, {
			agent: 'haiku',
			usage: { input_tokens: 1000, output_tokens: 200, total_tokens: 1200, cost_usd: 0.02 },
		});
		ai.put([intent, branchIntent, ...starter, ...branch, summary]);

		const tasks = runsOverview(ai).intents.flatMap((i) => i.tasks);
		const branchView = tasks.find((t) => t.task.title === 'Try cursors')!;
		assert.deepEqual(
			[branchView.usage.total_tokens, branchView.usage.runs],
			[330, 1],
			"the task's own usage is its agent's",
		);
		assert.deepEqual(
			[branchView.subtree_usage?.total_tokens, branchView.subtree_usage?.cost_usd, branchView.subtree_usage?.runs],
			[330 + 1200, 0.021, 1],
		);
		const starterView = tasks.find((t) => t.task.title === 'Paginate')!;
		assert.deepEqual(
			[starterView.subtree_usage?.total_tokens, starterView.subtree_usage?.cost_usd],
			[1100 + 330 + 1200, 0.031],
		);
	});

	it('adds up tokens and known costs, and counts the runs that make a sum uncertain', async () => {
		const ai = await projectStore();
		const intent = m.newIntent(human, 'Add pagination');
		const paging = taskWithRuns(
			'Paginate',
			[
				[[model('claude-sonnet-4-5', 1000, 100, 0.01)], { turns: 2 }],
				[[model('claude-sonnet-4-5', 2000, 200, 0.03, true)], { incomplete: true }],
			],
			{ intent },
		);
		const docs = taskWithRuns('Document it', [[[model('gpt-5.5', 500, 50)]], undefined], { intent });
		// Branches as the lineage makes them: each with an intent of its own (following up its starter's).
		const starter = paging[0] as Task;
		const branchIntent = m.newIntent(human, 'Try cursors', { parent: intent });
		const branch = taskWithRuns('Try cursors', [[[model('claude-haiku-4-5', 300, 30, 0.001)]]], {
			intent: branchIntent,
			branchOf: starter,
		});
		const subIntent = m.newIntent(human, 'Try opaque cursors', { parent: branchIntent });
		const subBranch = taskWithRuns('Try opaque cursors', [[[model('claude-haiku-4-5', 100, 10, 0.0005)]]], {
			intent: subIntent,
			branchOf: branch[0] as Task,
		});
		ai.put([intent, branchIntent, subIntent, ...paging, ...docs, ...branch, ...subBranch]);

		const overview = runsOverview(ai);
		const view = overview.intents.find((i) => i.intent.object_id === intent.object_id)!;
		const [pagingView, docsView] = view.tasks;
		assert.deepEqual(
			[pagingView?.usage.runs, pagingView?.usage.total_tokens, pagingView?.usage.cost_usd],
			[2, 3300, 0.04],
		);
		assert.deepEqual(
			[pagingView?.usage.cost_estimated, pagingView?.usage.incomplete_runs, pagingView?.usage.unpriced_runs],
			[true, 1, 0],
		);
		assert.deepEqual(
			[docsView?.usage.runs, docsView?.usage.total_tokens, docsView?.usage.unpriced_runs, docsView?.usage.cost_usd],
			[2, 550, 1, 0],
			'a model priced nowhere is counted as unknown, not as free',
		);
		assert.deepEqual(
			[
				view.usage.runs,
				view.usage.total_tokens,
				view.usage.cost_usd,
				view.usage.incomplete_runs,
				view.usage.unpriced_runs,
			],
			[4, 3850, 0.04, 1, 1],
		);
		// The starter's subtree holds both branches; a branch's, the one below it.
		assert.deepEqual(
			[pagingView?.subtree_usage?.runs, pagingView?.subtree_usage?.total_tokens, pagingView?.subtree_usage?.cost_usd],
			[4, 3300 + 330 + 110, 0.0415],
		);
		assert.equal(docsView?.subtree_usage, undefined, 'no branch below it: no subtree');
		const branchView = overview.intents.flatMap((i) => i.tasks).find((t) => t.task.title === 'Try cursors')!;
		assert.deepEqual(
			[branchView.usage.total_tokens, branchView.subtree_usage?.total_tokens, branchView.subtree_usage?.runs],
			[330, 440, 2],
		);

		const listed = formatOverview(overview);
		assert.match(
			listed,
			/Add pagination {2}· 3850 tokens · \$0\.0400 \(cost estimated; usage incomplete in 1 run; cost unknown for 1 run\)/,
		);
		assert.match(
			listed,
			/Paginate {2}· 3300 tokens · \$0\.0400 \(cost estimated; usage incomplete in 1 run\) {2}· with its branches: 3740 tokens · \$0\.0415/,
		);
		assert.match(listed, /Try cursors {2}· 330 tokens · \$0\.0010 {2}· with its branches: 440 tokens · \$0\.0015/);
		assert.match(listed, / at least 2200 tokens at least \$0\.0300 \(estimated\) \(usage incomplete\)/);
		assert.match(listed, / 550 tokens cost unknown/);
	});

	it("`desk runs show` gives the usage per model, the agent's own total where it disagrees, and says when usage is unknown", async () => {
		const ai = await projectStore();
		const objects = taskWithRuns('Find the parser', [
			[
				[model('claude-sonnet-4-5', 75_525, 281, 0.1234), model('claude-haiku-4-5', 91_060, 717, 0.0211)],
				{ turns: 4, duration_ms: 31_000, agentTotals: model('', 75_525, 281, 0.1445) },
			],
			[[], { incomplete: true }],
		]);
		ai.put(objects);
		const [first, second] = (objects[0] as Task).runs;
		const text = formatRunDetail(runDetail(ai, first!));
		assert.match(text, /\n {2}model claude-sonnet-4-5: 75525 in, 281 out, 75806 total, \$0\.1234\n/);
		assert.match(text, /\n {2}model claude-haiku-4-5: 91060 in, 717 out, 91777 total, \$0\.0211\n/);
		assert.match(text, /\n {2}usage: 166585 in, 998 out, 167583 total, \$0\.1445; 4 turns, 31\.0 s by the agent/);
		assert.match(text, /\n {2}the agent's own total: 75525 in, 281 out, 75806 total, \$0\.1445/);
		const unknown = formatRunDetail(runDetail(ai, second!));
		assert.match(unknown.split('\n')[0]!, /usage unknown \(output ended early\)/);
		assert.match(unknown, /usage unknown: the output ended before the agent reported it/);
	});
});

describe("a run's duration", () => {
	it('is the agent work up to the gate; the wait for the decision is said apart and does not grow it', async () => {
		const ai = await projectStore();
		const task = m.newTask(human, 'Paginate');
		const start = new Date('2026-01-01T10:00:00.000Z');
		const at = (seconds: number) => new Date(start.getTime() + seconds * 1000);
		const run = m.newRun(system, task, 'a'.repeat(40), { now: at(0) });
		m.addRun(task, run);
		m.setRunStatus(run, 'patching', at(1));
		const patchset = m.newPatchSet(system, run, { now: at(30) });
		m.addPatchSet(run, patchset, at(30));
		m.setRunStatus(run, 'validating', at(31));
		const evidence = m.newEvidence(system, run, 'test', 'npm test', { patchset, exitCode: 0, now: at(42) });
		// The person decides two hours later.
		const decision = m.newDecision(human, run, 'commit', { chosen: patchset, now: at(7242) });
		m.setRunStatus(run, 'completed', at(7242));
		ai.put([task, run, patchset, evidence, decision]);
		const summary = runDetail(ai, run.object_id)!.summary;
		assert.deepEqual(
			[summary.duration_ms, summary.gate_wait_ms, summary.finished_at],
			[42_000, 7_200_000, at(42).toISOString()],
		);
	});
});
