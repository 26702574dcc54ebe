/**
 * Memorizing a landing over JSON-RPC (glossary: Project memory), with the real server, a branch
 * carried out and landed by the scripted agent, and the scripted agent again as the summary agent
 * (its starts counted in its `.attempts` file): no summary agent leaves memory byte-identical; an
 * answer is applied with the landing's provenance, once; the model is not asked again (a memo hit
 * after the desk was killed between the answer and the queue); a refused answer is asked again once
 * with the refusal; refused twice, memory is unchanged and the run says why; memorizeOnLanding
 * memorizes as the branch lands; a memorize a SIGKILL interrupted is resumed by the next server.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../server/src/core/logger';
import type { Memory } from '../../server/src/lineage/types';
import {
	DecideRun,
	LaunchGo,
	MemorizeLanding,
	MemoryDidChange,
	OpenWorkspace,
	PromptLineage,
	RememberMemory,
	RunDidFinish,
	RunsDidChange,
	SetTicket,
	ShowRun,
	type DeskErrorJson,
	type RunDetail,
} from '../../server/src/protocol/protocol';
import { defaultLineageSettings, type RunSettings } from '../../server/src/runs/settings';
import { DurableDatabase } from '../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../server/src/store/schemas';
import { makeRepo } from '../helpers/gitRepo';
import { deskToolAnswers, scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

const valid = JSON.stringify({
	ops: [
		{
			op: 'add',
			title: '  Changelog\n',
			text: `The changelog starts at 0.1.0 and lives in CHANGELOG.md. ${'More. '.repeat(120)}`,
			evidence: ['CHANGELOG.md'],
		},
	],
});

async function open(library: string, repo: string, env?: NodeJS.ProcessEnv): Promise<RunningServer> {
	const server = await startServer(library, env ? { env: { ...process.env, ...env } } : {});
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	return server;
}

/** A project whose person's branch of main landed (the scripted agent wrote CHANGELOG.md; committed). */
async function landedBranch(id: string, env?: NodeJS.ProcessEnv) {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const library = path.join(root, 'library');
	const server = await open(library, repo, env);
	const branch = await server.call(PromptLineage, {
		project: 'shop',
		root: 'main',
		prompt: 'Add a changelog\n\nStart it at 0.1.0.',
		settings: scriptedAgentSettings({ writes: [{ path: 'CHANGELOG.md', content: '# 0.1.0\n' }] }),
		requestId: `${id}-branch`,
	});
	const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch at the gate', 30_000);
	assert.equal(end.status, 'gate');
	return { repo, library, server, branch };
}

/** Settings whose summary agent is a scripted agent answering `answers` in turn (`memorizeOnLanding` as given). */
function summarySettings(answers: string[], memorizeOnLanding = false, echoPromptTo?: string): RunSettings {
	const settings = scriptedAgentSettings({ answers, ...(echoPromptTo ? { echoPromptTo } : {}) });
	const agent = settings.agents[0]!;
	// The folder its prompts are written to is writable in its sandbox.
	const agents = echoPromptTo ? [{ ...agent, writePaths: [...agent.writePaths, echoPromptTo] }] : settings.agents;
	return { ...settings, agents, lineage: { ...defaultLineageSettings, summaryAgent: 'scripted', memorizeOnLanding } };
}

/** How many times the summary agent of `settings` was started. */
function starts(settings: RunSettings): number {
	const scenario = settings.agents[0]!.args[1]!;
	return fs.existsSync(`${scenario}.attempts`) ? Number(fs.readFileSync(`${scenario}.attempts`, 'utf8')) : 0;
}

function memoryFile(repo: string): { memories: Record<string, Memory>; requests: Record<string, unknown> } {
	return JSON.parse(fs.readFileSync(path.join(repo, '.desk-memory', 'main.json'), 'utf8')) as never;
}

describe('memorize over JSON-RPC', () => {
	it('without a summary agent leaves memory byte-identical and says why; refuses a run that did not land', async () => {
		const { repo, server, branch } = await landedBranch('memo-none');
		try {
			const notLanded = await expectRpcError(server.connection, MemorizeLanding.method, {
				project: 'shop',
				run: branch.run,
			});
			assert.equal((notLanded.data as DeskErrorJson).code, 'run.notLanded');
			await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
			await server.call(RememberMemory, {
				project: 'shop',
				text: 'Prices are in cents.',
				requestId: 'memo-none-remember',
			});
			const before = fs.readFileSync(path.join(repo, '.desk-memory', 'main.json'));
			const result = await server.call(MemorizeLanding, {
				project: 'shop',
				run: branch.run,
				settings: scriptedAgentSettings({}),
			});
			assert.match(result.skipped ?? '', /^no summary model is configured/);
			assert.equal(result.applied, undefined);
			assert.deepEqual(fs.readFileSync(path.join(repo, '.desk-memory', 'main.json')), before);
			const detail = await server.call(ShowRun, { project: 'shop', id: branch.run });
			assert.ok(
				JSON.stringify(detail).includes('no summary model is configured'),
				'the run records why memory was left unchanged',
			);
		} finally {
			await server.stop();
		}
	});

	it("applies the agent's batch with the landing's provenance and normalised text, once; a repeat asks nothing", async () => {
		const { repo, server, branch } = await landedBranch('memo-apply');
		try {
			const decided = await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
			const settings = summarySettings([valid]);
			const result = await server.call(MemorizeLanding, { project: 'shop', run: branch.run, settings });
			assert.deepEqual([result.memo_hit, result.retried, result.replayed], [false, false, false]);
			// What the scripted summary agent printed it cost.
			assert.deepEqual(result.usage, { input_tokens: 1000, output_tokens: 200, total_tokens: 1200, cost_usd: 0.0123 });
			assert.equal(result.applied?.added.length, 1);
			assert.equal(starts(settings), 1);
			const stored = memoryFile(repo);
			const memory = stored.memories[result.applied!.added[0]!]!;
			assert.equal(memory.title, 'Changelog');
			assert.equal([...memory.text].length, 500, 'cut to 500 characters');
			assert.ok(memory.text.endsWith('…'));
			assert.deepEqual(memory.evidence, [{ path: 'CHANGELOG.md' }]);
			assert.equal(memory.source.kind, 'landing');
			assert.deepEqual(
				{ ...memory.source, memo: undefined },
				{
					kind: 'landing',
					run: branch.run,
					commit: decided.commit,
					decision: (memory.source as { decision: string }).decision,
					model: 'scripted-model-1',
					memo: undefined,
				},
			);
			assert.match((memory.source as { memo: string }).memo, /^sha256:[0-9a-f]{64}$/);
			assert.ok(stored.requests[`land:${branch.run}`]);
			const again = await server.call(MemorizeLanding, { project: 'shop', run: branch.run, settings });
			assert.equal(again.replayed, true);
			assert.deepEqual(again.applied, result.applied);
			assert.equal(again.usage, undefined, 'a repeat costs nothing');
			assert.equal(starts(settings), 1, 'the summary agent is not started again');
			assert.equal(Object.keys(memoryFile(repo).memories).length, 1);
		} finally {
			await server.stop();
		}
	});

	it('killed after the model answered and before the queue: after a restart the memo answers, the agent is not asked again', async () => {
		const { repo, library, server, branch } = await landedBranch('memo-kill', {
			DESK_TEST_FAULTS: 'memorize.afterModel.beforeEnqueue',
		});
		const settings = summarySettings([valid]);
		await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
		// Its answer never comes: the server dies at the kill point.
		void server.connection
			.sendRequest(MemorizeLanding.method, { project: 'shop', run: branch.run, settings })
			.catch(() => undefined);
		const exited = await server.exited;
		assert.equal(exited.signal, 'SIGKILL', 'the server died at the kill point');
		assert.equal(starts(settings), 1);
		assert.ok(!fs.existsSync(path.join(repo, '.desk-memory', 'main.json')), 'nothing applied before the kill');
		const restarted = await open(library, repo);
		try {
			const result = await restarted.call(MemorizeLanding, { project: 'shop', run: branch.run, settings });
			assert.equal(result.memo_hit, true);
			assert.equal(result.applied?.added.length, 1);
			assert.equal(starts(settings), 1, 'the summary agent was asked once in all');
			assert.equal(Object.keys(memoryFile(repo).memories).length, 1);
		} finally {
			await restarted.stop();
		}
	});

	it('a refused answer is asked again once with the refusal; refused twice, memory is unchanged and the run says why', async () => {
		const { repo, server, branch } = await landedBranch('memo-retry');
		try {
			await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
			const prompts = tempDir();
			const twice = summarySettings(['Sure! Here are some memories.']);
			const refused = await server.call(MemorizeLanding, { project: 'shop', run: branch.run, settings: twice });
			assert.match(refused.skipped ?? '', /refused twice/);
			assert.equal(refused.retried, true);
			assert.equal(starts(twice), 2);
			assert.ok(!fs.existsSync(path.join(repo, '.desk-memory', 'main.json')), 'memory unchanged');
			const detail = await server.call(ShowRun, { project: 'shop', id: branch.run });
			assert.ok(JSON.stringify(detail).includes('refused twice'), 'the refusal is recorded on the run');

			const settings = summarySettings(['{"ops": [{"op": "remove", "id": "nope"}]}', valid], false, prompts);
			const result = await server.call(MemorizeLanding, { project: 'shop', run: branch.run, settings });
			assert.equal(result.retried, true);
			assert.equal(result.applied?.added.length, 1);
			assert.equal(starts(settings), 2);
			assert.match(
				fs.readFileSync(path.join(prompts, 'memorize.prompt.txt'), 'utf8'),
				/Your previous answer was refused: .*names memory "nope", which is not there/,
			);
		} finally {
			await server.stop();
		}
	});

	it("a branch's run is not shown the remember tool (nor served it); the person's own run remembers through it", async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const server = await open(path.join(root, 'library'), repo);
		try {
			const remember = { tool: 'remember', args: { text: 'Tests need code-server.', request_id: 'mcp-remember-1' } };
			const branchSettings = scriptedAgentSettings({ deskTools: [remember] });
			const branch = await server.call(PromptLineage, {
				project: 'shop',
				root: 'main',
				prompt: 'Look around',
				settings: branchSettings,
				requestId: 'memo-mcp-branch',
			});
			await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run', 30_000);
			const [listed, called] = deskToolAnswers(branchSettings) as [
				{ list: string[] },
				{ answer: { result?: { isError?: boolean; content: Array<{ text?: string }> } } },
			];
			assert.ok(listed.list.includes('asset_search'), JSON.stringify(listed));
			assert.ok(!listed.list.includes('remember'), 'a branch is not shown remember');
			assert.equal(called.answer.result?.isError, true);
			assert.match(called.answer.result?.content[0]?.text ?? '', /operation\.unknownTool|no desk tool/);
			assert.ok(!fs.existsSync(path.join(repo, '.desk-memory', 'main.json')));
			await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'abandon' });

			const ownSettings = scriptedAgentSettings({ deskTools: [remember] });
			await server.call(SetTicket, { project: 'shop', ticket: 'Note how the tests run' });
			const own = await server.call(LaunchGo, { project: 'shop', settings: ownSettings });
			await server.notified(RunDidFinish, (f) => f.run === own.run, "the person's run", 30_000);
			const [ownList, ownCall] = deskToolAnswers(ownSettings) as [
				{ list: string[] },
				{ answer: { result?: { isError?: boolean } } },
			];
			assert.ok(ownList.list.includes('remember'));
			assert.ok(!ownCall.answer.result?.isError, JSON.stringify(ownCall));
			const stored = memoryFile(repo);
			const [memory] = Object.values(stored.memories);
			assert.deepEqual(memory?.source, { kind: 'remember', run: own.run });
			assert.deepEqual(memory?.created_by, { kind: 'mcp_client', id: `run:${own.run}` });
		} finally {
			await server.stop();
		}
	});

	it('memorizeOnLanding memorizes a branch as it lands', async () => {
		const { repo, server, branch } = await landedBranch('memo-hook');
		try {
			const settings = summarySettings([valid], true);
			await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit', settings });
			await server.notified(MemoryDidChange, (n) => n.root === 'main', 'memory changed by the landing', 30_000);
			const stored = memoryFile(repo);
			assert.equal(Object.keys(stored.memories).length, 1);
			assert.ok(stored.requests[`land:${branch.run}`]);
			assert.equal(starts(settings), 1);
		} finally {
			await server.stop();
		}
	});
});

/**
 * A landing whose memorize a SIGKILL interrupted (before the summary agent was asked, while it
 * answered, after its answer was memoised, after the batch was renamed into the file, after the
 * batch was applied and before the run recorded it) is resumed by the next server when it opens the
 * project's runs: memory then holds the landing's memory once, the agent was asked once for each
 * input it did not answer before the kill, and each answer it gave is recorded on the run once with
 * its tokens and cost. The branches are made once, side by side in worktrees, and landed one a kill.
 */
describe('a memorize a kill interrupted', () => {
	const points = [
		'land.afterDecision.beforeNote',
		'memorize.beforeAsk',
		'while the summary agent answers',
		'memorize.afterAnswer',
		'memory.afterRename.beforeQueueDelete',
		'memorize.afterApply',
	];
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const library = path.join(root, 'library');
	const runs = new Map<string, string>();

	it('makes a branch at the gate for each kill point', { timeout: 120_000 }, async () => {
		const server = await open(library, repo);
		try {
			const prompted = await Promise.all(
				points.map(async (point, i) => {
					const settings = scriptedAgentSettings({ writes: [{ path: `kills/${i}.txt`, content: `${point}\n` }] });
					const branch = await server.call(PromptLineage, {
						project: 'shop',
						root: 'main',
						prompt: `Write kills/${i}.txt`,
						settings: {
							...settings,
							lineage: {
								...settings.lineage,
								branch: { isolation: 'worktree' },
								limits: { ...settings.lineage.limits, maxBranchesPerNode: 50, maxLiveBranches: 12 },
							},
						},
						requestId: `memo-kills-branch-${i}`,
					});
					return [point, branch.run] as const;
				}),
			);
			for (const [point, run] of prompted) {
				const end = await server.notified(RunDidFinish, (f) => f.run === run, `the branch of ${point}`, 60_000);
				assert.equal(end.status, 'gate');
				runs.set(point, run);
			}
		} finally {
			await server.stop();
		}
	});

	for (const [i, point] of points.entries()) {
		it(`resumes it after a kill at ${point}: memory holds it once, each answer paid and recorded once`, async () => {
			const run = runs.get(point)!;
			const answering = point === 'while the summary agent answers';
			const answer = JSON.stringify({ ops: [{ op: 'add', title: `Kill ${i}`, text: `Landed past ${point}.` }] });
			const settings = summarySettings([answer], true);
			if (answering) {
				// The agent takes its time, and is seen started before it answers.
				const scenario = settings.agents[0]!.args[1]!;
				fs.writeFileSync(scenario, JSON.stringify({ answers: [answer], sleepMs: 4000 }));
			}
			const armed = await open(library, repo, answering ? undefined : { DESK_TEST_FAULTS: point });
			void armed.connection
				.sendRequest(DecideRun.method, {
					project: 'shop',
					run,
					decision: 'commit',
					settings,
					requestId: `memo-kills-decide-${i}`,
				})
				.catch(() => undefined);
			if (answering) {
				await until(() => starts(settings) === 1, 'the summary agent started');
				armed.child.kill('SIGKILL');
			}
			assert.equal((await armed.exited).signal, 'SIGKILL', `the server died at ${point}`);
			const restarted = await open(library, repo);
			try {
				const detail = await memorized(restarted, run);
				const outcomes = detail.tool_invocations.filter((t) => t.tool_name === 'memorize');
				assert.deepEqual(
					outcomes.map((o) => [o.status, o.result_summary]),
					[['ok', 'memory of main: 1 added, 0 updated, 0 removed']],
					'the outcome is recorded once',
				);
				const paid = detail.tool_invocations.filter((t) => t.tool_name === 'summary_agent');
				assert.deepEqual(
					paid.map((p) => (p.args as { usage: unknown }).usage),
					[{ input_tokens: 1000, output_tokens: 200, total_tokens: 1200, cost_usd: 0.0123 }],
					'each answer is recorded once, with its tokens and cost',
				);
				const landed = Object.values(memoryFile(repo).memories).filter(
					(m) => m.source.kind === 'landing' && m.source.run === run,
				);
				assert.equal(landed.length, 1, 'the landing is in memory once');
				assert.ok(memoryFile(repo).requests[`land:${run}`], 'with its receipt');
				// Killed while it answered, its answer was lost with the desk: asked again, once.
				assert.equal(starts(settings), answering ? 2 : 1, 'the summary agent was asked once per answer it gave');
			} finally {
				await restarted.stop();
			}
		});
	}

	it('leaves no memorize owed', async () => {
		const db = await DurableDatabase.open({
			file: path.join(repo, '.desk', 'project.db'),
			schema: projectSchema,
			migrations: projectMigrations,
			logger: silentLogger,
		});
		try {
			assert.deepEqual(db.all("SELECT memo_key FROM lineage_memos WHERE memo_key LIKE 'owed:%'"), []);
		} finally {
			db.close();
		}
		const landings = Object.values(memoryFile(repo).memories).filter((m) => m.source.kind === 'landing');
		assert.equal(landings.length, points.length);
	});
});

/** Waits for `done` to hold, looking every 50 ms for at most 20 s (what it waits for tells no one). */
async function until(done: () => boolean, what: string): Promise<void> {
	const deadline = Date.now() + 20_000;
	while (!done()) {
		if (Date.now() > deadline) {
			throw new Error(`${what}: not within 20 s`);
		}
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

/** The run's detail once the run recorded its memorize's outcome (told by a runs didChange of the run). */
async function memorized(server: RunningServer, run: string): Promise<RunDetail> {
	for (let seen = 0; ;) {
		const detail = await server.call(ShowRun, { project: 'shop', id: run });
		if (detail.tool_invocations.some((t) => t.tool_name === 'memorize')) {
			return detail;
		}
		const count = seen;
		let n = 0;
		await server.notified(
			RunsDidChange,
			(c) => (c.run === run || c.run === undefined) && n++ >= count,
			`the memorize of ${run}`,
			30_000,
		);
		seen = n;
	}
}
