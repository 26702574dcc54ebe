/**
 * The lineage through the real server (glossary: Lineage, Tally): the person's prompt on main makes
 * the tally, the branch and its run, carried out by the scripted agent to the gate; a branch of a run
 * made by Go; an agent's `branch` tool in the shared checkout queues the branch until its own agent
 * exits; worktree branches work side by side; the refusals; and the fork's receipt across a SIGKILL of
 * the server right after the fork's commit.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { BranchResult } from '../../server/src/lineage/types';
import {
	AddLineageRoot,
	BranchFromRun,
	DecideRun,
	LaunchGo,
	LineageDidChange,
	LineageTreeRequest,
	ListLineageRoots,
	OpenWorkspace,
	PromptLineage,
	RunDidFinish,
	SetTicket,
	ShowRun,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import type { RunSettings } from '../../server/src/runs/settings';
import { silentLogger } from '../../server/src/core/logger';
import { DurableDatabase } from '../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../server/src/store/schemas';
import { git, makeRepo } from '../helpers/gitRepo';
import { deskToolAnswers, scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

/** Settings with two scripted agents: `starter` (the runs' agent) and `child` (the branches' agent). */
function twoAgents(starter: Scenario, child: Scenario, overrides: Partial<RunSettings> = {}): RunSettings {
	const settings = scriptedAgentSettings(starter, overrides);
	const childAgent = { ...scriptedAgentSettings(child).agents[0]!, name: 'child' };
	return {
		...settings,
		agents: [...settings.agents, childAgent],
		lineage: { ...settings.lineage, branch: { agent: 'child', ...settings.lineage.branch } },
	};
}

interface McpAnswer {
	result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
}

const refusal = (failure: { data?: unknown }) => failure.data as DeskErrorJson;

describe('the lineage over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const other = makeRepo(path.join(root, 'elsewhere'), { commits: 1 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	it("the person's prompt on main makes the tally, the branch and its run, carried out to the gate", async () => {
		const roots = await server.call(ListLineageRoots, { project: 'shop' });
		assert.deepEqual(
			roots.roots.map((r) => [r.name, r.tally, r.branches]),
			[['main', undefined, 0]],
		);
		const settings = scriptedAgentSettings({ writes: [{ path: 'a.txt', content: 'a\n' }] });
		const branch = await server.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'Write a.txt',
			settings,
			requestId: 'prompt-a-000001',
		});
		assert.equal(branch.replayed, false);
		assert.equal(branch.queued, false, 'the checkout was free: it started at once');
		assert.deepEqual(branch.grant_chain, [`branch:${branch.node}`, 'root:main', 'ultimate:person']);
		await server.notified(LineageDidChange, (p) => p.node === branch.node, 'the lineage to change');
		const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run to finish');
		assert.equal(end.status, 'gate', end.error);
		const detail = await server.call(ShowRun, { project: 'shop', id: branch.run });
		assert.equal(detail.task.parent, branch.tally);
		assert.equal(detail.task.tags['desk.lineage.kind'], 'branch');
		const tree = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.equal(tree.roots[0]!.tally, branch.tally);
		assert.deepEqual(
			tree.roots[0]!.branches.map((b) => [b.node.node, b.state, b.runs.map((r) => r.id)]),
			[[branch.node, 'gate', [branch.run]]],
		);
		assert.deepEqual(tree.roots[0]!.branches[0]!.board, { messages: 2, reports: 0, unanswered: 0, notes: 0 });
		await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
		const landed = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.equal(landed.roots[0]!.branches[0]!.state, 'landed');
		assert.equal(landed.roots[0]!.root.landed, 1);
		assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Desk-Run: ${branch.run}`));
	});

	it('Branch from Here: a branch of a run made by Go, configured from its launch', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Write b.txt' });
		const settings = scriptedAgentSettings({ writes: [{ path: 'b.txt', content: 'b\n' }] });
		const go = await server.call(LaunchGo, { project: 'shop', settings });
		assert.equal((await server.notified(RunDidFinish, (f) => f.run === go.run, 'the Go run')).status, 'gate');
		await server.call(DecideRun, { project: 'shop', run: go.run, decision: 'commit' });
		const branch = await server.call(BranchFromRun, {
			project: 'shop',
			repo,
			prompt: 'Also write c.txt',
			starterRun: go.run,
			settings: scriptedAgentSettings({ writes: [{ path: 'c.txt', content: 'c\n' }] }),
			requestId: 'branch-c-000001',
		});
		assert.deepEqual(branch.grant_chain, [`branch:${branch.node}`, 'root:main', `ultimate:${go.run}`]);
		const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run to finish');
		assert.equal(end.status, 'gate', end.error);
		const detail = await server.call(ShowRun, { project: 'shop', id: branch.run });
		assert.equal(detail.task.parent, go.task);
		assert.deepEqual(detail.task.requester, { kind: 'agent', id: go.run });
		assert.equal(detail.intent?.parent, go.intent);
		const tree = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.deepEqual(tree.by_starter_run[go.run], [branch.node]);
		const node = tree.roots[0]!.branches.find((b) => b.node.node === branch.node)!;
		assert.deepEqual(node.node.config.template, ['plan', 'work'], "the Go's template");
		assert.equal(node.node.config.fromLaunch, go.launch_id);
		await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'abandon' });
	});

	it('refuses a foreign repository, an unknown root, a limit (naming it) and a tally as a starter', async () => {
		const settings = scriptedAgentSettings({ writes: [] });
		const foreign = await expectRpcError(server.connection, BranchFromRun.method, {
			project: 'shop',
			repo: other,
			prompt: 'x',
			settings,
		});
		assert.equal(refusal(foreign).code, 'lineage.badRepo');
		const unknown = await expectRpcError(server.connection, PromptLineage.method, {
			project: 'shop',
			root: 'nope',
			prompt: 'x',
			settings,
		});
		assert.equal(refusal(unknown).code, 'lineage.unknownRoot');
		await server.call(AddLineageRoot, { project: 'shop', name: 'experiments', requestId: 'root-exp-000001' });
		const exists = await expectRpcError(server.connection, AddLineageRoot.method, {
			project: 'shop',
			name: 'experiments',
		});
		assert.equal(refusal(exists).code, 'lineage.rootExists');
		// The person started one branch of main already: one is the limit here.
		const limited = await expectRpcError(server.connection, PromptLineage.method, {
			project: 'shop',
			root: 'main',
			prompt: 'x',
			settings: {
				...settings,
				lineage: { ...settings.lineage, limits: { ...settings.lineage.limits, maxBranchesPerNode: 1 } },
			},
		});
		assert.equal(refusal(limited).code, 'lineage.limit');
		assert.equal((refusal(limited).data as { limit: string }).limit, 'maxBranchesPerNode');
		const tree = await server.call(LineageTreeRequest, { project: 'shop' });
		const tally = tree.roots[0]!.tally!;
		const byTally = await expectRpcError(server.connection, BranchFromRun.method, {
			project: 'shop',
			repo,
			prompt: 'x',
			starterRun: tally,
			settings,
		});
		assert.equal(refusal(byTally).code, 'lineage.tallyNoRuns');
	});

	it("an agent's branch tool in the shared checkout: the branch waits for the starter's agent to exit, then runs", async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Write d.txt and start a branch' });
		const branchArgs = { repo, prompt: 'Write e.txt', request_id: 'agent-branch-0001' };
		const settings = twoAgents(
			{
				writes: [{ path: 'd.txt', content: 'd\n' }],
				deskTools: [
					{ tool: 'branch', args: branchArgs },
					{ tool: 'branch', args: branchArgs },
				],
			},
			{ writes: [{ path: 'e.txt', content: 'e\n' }] },
		);
		const go = await server.call(LaunchGo, { project: 'shop', settings });
		const starterEnd = await server.notified(RunDidFinish, (f) => f.run === go.run, 'the starter run');
		assert.equal(starterEnd.status, 'gate', starterEnd.error);
		const [list, first, second] = deskToolAnswers(settings) as [
			{ list: string[] },
			{ answer: McpAnswer },
			{ answer: McpAnswer },
		];
		assert.ok(list.list.includes('branch'), JSON.stringify(list));
		const forked = first.answer.result?.structuredContent as unknown as BranchResult;
		assert.equal(forked.queued, true, `waiting for the checkout: ${JSON.stringify(first.answer)}`);
		assert.deepEqual(forked.grant_chain, [`branch:${forked.node}`, 'root:main', `ultimate:${go.run}`]);
		const repeated = second.answer.result?.structuredContent as unknown as BranchResult;
		assert.deepEqual({ ...repeated, queued: true }, { ...forked, replayed: true }, 'the same request: the same branch');
		const end = await server.notified(RunDidFinish, (f) => f.run === forked.run, 'the queued branch to run');
		assert.equal(end.status, 'gate', end.error);
		const starter = await server.call(ShowRun, { project: 'shop', id: go.run });
		const branch = await server.call(ShowRun, { project: 'shop', id: forked.run });
		assert.equal(branch.run.tags['desk.agent'], 'child', 'the branch settings named its agent');
		assert.ok(
			branch.provenance!.created_at >= starter.summary.finished_at!,
			"the branch's agent started once the starter's was at the gate",
		);
		const tree = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.deepEqual(tree.by_starter_run[go.run], [forked.node]);
		await server.call(DecideRun, { project: 'shop', run: forked.run, decision: 'abandon' });
		// A Retry of the starter asks for the same branch (its request_id): the first one answers, none is added.
		const retried = await server.call(DecideRun, { project: 'shop', run: go.run, decision: 'retry', settings });
		const retryEnd = await server.notified(RunDidFinish, (f) => f.run === retried.new_run, 'the retried starter');
		assert.equal(retryEnd.status, 'gate', retryEnd.error);
		const [, again] = deskToolAnswers(settings) as [unknown, { answer: McpAnswer }];
		const answeredAgain = again.answer.result?.structuredContent as unknown as BranchResult;
		assert.equal(answeredAgain.node, forked.node, JSON.stringify(again.answer));
		assert.equal(answeredAgain.replayed, true);
		const after = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.deepEqual(after.by_starter_run[retried.new_run!], undefined, 'the retry started no branch of its own');
		await server.call(DecideRun, { project: 'shop', run: retried.new_run!, decision: 'abandon' });
	});

	it('a branch as deep as the limit is shown no branch tool, and its call is refused', async () => {
		const settings = scriptedAgentSettings({
			writes: [{ path: 'deep.txt', content: 'deep\n' }],
			deskTools: [{ tool: 'branch', args: { repo, prompt: 'One level deeper' } }],
		});
		const limited = {
			...settings,
			lineage: { ...settings.lineage, limits: { ...settings.lineage.limits, maxDepth: 1 } },
		};
		const branch = await server.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'Go deep',
			settings: limited,
		});
		const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the deep branch');
		assert.equal(end.status, 'gate', end.error);
		const [list, call] = deskToolAnswers(limited) as [{ list: string[] }, { answer: McpAnswer }];
		assert.ok(!list.list.includes('branch'), JSON.stringify(list));
		assert.ok(!list.list.includes('remember'), 'a branch does not remember either');
		assert.ok(list.list.includes('asset_search'));
		assert.equal(call.answer.result?.isError, true);
		assert.equal((call.answer.result?.structuredContent?.error as { code: string }).code, 'operation.unknownTool');
		const tree = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.deepEqual(tree.roots[0]!.branches.find((b) => b.node.node === branch.node)!.children, [], 'nothing deeper');
		await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'abandon' });
	});

	it('worktree branches work side by side', async () => {
		const worktree = (scenario: Scenario) => {
			const settings = scriptedAgentSettings(scenario);
			return { ...settings, lineage: { ...settings.lineage, branch: { isolation: 'worktree' as const } } };
		};
		const slow = await server.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'Write w1.txt slowly',
			settings: worktree({ writes: [{ path: 'w1.txt', content: '1\n' }], sleepMs: 4000 }),
		});
		const quick = await server.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'Write w2.txt',
			settings: worktree({ writes: [{ path: 'w2.txt', content: '2\n' }] }),
		});
		assert.equal(slow.queued, false);
		assert.equal(quick.queued, false, 'started while the first works');
		const states = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.equal(states.roots[0]!.branches.find((b) => b.node.node === slow.node)!.state, 'running');
		for (const branch of [quick, slow]) {
			const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'a worktree branch');
			assert.equal(end.status, 'gate', end.error);
			const detail = await server.call(ShowRun, { project: 'shop', id: branch.run });
			assert.equal(detail.run.tags['desk.isolation'], 'worktree');
		}
	});
});

it("a fork's receipt across SIGKILLs of the server before and after its commit: one branch, answered again, and it runs", async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const library = path.join(root, 'library');
	const params = {
		project: 'shop',
		root: 'main',
		prompt: 'Write k.txt',
		settings: scriptedAgentSettings({ writes: [{ path: 'k.txt', content: 'k\n' }] }),
		requestId: 'prompt-kill-00001',
	};
	const branchCount = async () => {
		const db = await DurableDatabase.open({
			file: path.join(repo, '.desk', 'project.db'),
			schema: projectSchema,
			migrations: projectMigrations,
			logger: silentLogger,
		});
		try {
			return db.get<{ n: number }>("SELECT COUNT(*) AS n FROM lineage_nodes WHERE kind = 'branch'")!.n;
		} finally {
			db.close();
		}
	};
	for (const point of ['branch.beforeCommit', 'branch.afterCommit']) {
		const killed = await startServer(library, { env: { ...process.env, DESK_TEST_FAULTS: point } });
		await killed.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		// No answer comes: the server dies first.
		void killed.call(PromptLineage, params).catch(() => undefined);
		assert.equal((await killed.exited).signal, 'SIGKILL', `the server died at ${point}`);
		assert.equal(await branchCount(), point === 'branch.beforeCommit' ? 0 : 1, `branches after a kill at ${point}`);
	}
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	// The branch the killed desk left waiting is started when the project opens again, before anyone asks.
	const left = (await server.call(LineageTreeRequest, { project: 'shop' })).roots[0]!.branches;
	assert.equal(left.length, 1);
	const end = await server.notified(
		RunDidFinish,
		(f) => f.run === left[0]!.runs[0]!.id,
		'the branch left queued to run',
	);
	assert.equal(end.status, 'gate', end.error);
	const again = await server.call(PromptLineage, params);
	assert.equal(again.replayed, true);
	assert.equal(again.node, left[0]!.node.node);
	assert.equal(again.queued, false);
	const tree = await server.call(LineageTreeRequest, { project: 'shop' });
	assert.deepEqual(
		tree.roots[0]!.branches.map((b) => [b.node.node, b.state]),
		[[again.node, 'gate']],
	);
	await server.stop();
	assert.equal(await branchCount(), 1, 'exactly one child');
});

it('a server killed at random moments while the person forks: every request id forks exactly one branch', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const library = path.join(root, 'library');
	const base = scriptedAgentSettings({ writes: [{ path: 'loop.txt', content: 'loop\n' }] }, { sandbox: 'off' });
	const settings = {
		...base,
		lineage: { ...base.lineage, limits: { ...base.lineage.limits, maxLiveBranches: 50, maxBranchesPerNode: 50 } },
	};
	const ids = Array.from({ length: 10 }, (_, i) => `kill-loop-${String(i).padStart(4, '0')}`);
	const params = (id: string) => ({ project: 'shop', root: 'main', prompt: `Branch ${id}`, settings, requestId: id });
	// Bounded: eight servers, each killed at a random moment while it forks the requests in turn.
	for (let round = 0; round < 8; round++) {
		const server = await startServer(library);
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		const timer = setTimeout(() => server.child.kill('SIGKILL'), Math.floor(Math.random() * 300));
		for (const id of ids) {
			// A request the server dies in the middle of is never answered: the death ends the round.
			const outcome = await Promise.race([
				server.call(PromptLineage, params(id)).then(
					() => 'answered',
					() => 'refused',
				),
				server.exited.then(() => 'died'),
			]);
			if (outcome !== 'answered') {
				break;
			}
		}
		clearTimeout(timer);
		server.child.kill('SIGKILL');
		await server.exited;
	}
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const answers = [];
	for (const id of ids) {
		answers.push(await server.call(PromptLineage, params(id)));
	}
	assert.equal(new Set(answers.map((a) => a.node)).size, ids.length, 'one branch a request id');
	await server.stop();
	const db = await DurableDatabase.open({
		file: path.join(repo, '.desk', 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
	});
	try {
		const count = (sql: string) => db.get<{ n: number }>(sql)!.n;
		assert.equal(count("SELECT COUNT(*) AS n FROM lineage_nodes WHERE kind = 'branch'"), ids.length);
		assert.equal(count("SELECT COUNT(*) AS n FROM lineage_nodes WHERE kind = 'tally'"), 1);
		assert.equal(count("SELECT COUNT(*) AS n FROM call_receipts WHERE scope = 'person'"), ids.length);
		assert.equal(count("SELECT COUNT(*) AS n FROM board_messages WHERE kind = 'input'"), ids.length);
		assert.equal(count("SELECT COUNT(*) AS n FROM board_messages WHERE kind = 'board.started.by'"), ids.length);
		assert.equal(count("SELECT COUNT(*) AS n FROM board_messages WHERE kind = 'intent'"), ids.length);
		assert.equal(count("SELECT COUNT(*) AS n FROM board_deliveries WHERE phase = 'input'"), ids.length);
		assert.equal(
			count("SELECT COUNT(*) AS n FROM ai_objects WHERE object_type = 'task' AND json LIKE '%desk.lineage.kind%'"),
			ids.length + 1,
			'a Task for each branch and the tally, no more',
		);
		for (const answer of answers) {
			const task = db.get<{ json: string }>('SELECT json FROM ai_objects WHERE object_id = ?', [answer.node])!;
			assert.deepEqual((JSON.parse(task.json) as { runs: string[] }).runs.slice(0, 1), [answer.run]);
		}
	} finally {
		db.close();
	}
});
