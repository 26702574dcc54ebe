/**
 * The lineage's limits and refusals through the real server (glossary: Lineage, Board): a person's
 * fork without a request id is a branch of its own each time, a request id reused with other
 * arguments is refused, depth and live branches are refused naming their limit, a branch's desk
 * tools are its starter's or fewer (none for a starter whose agent had none, as its run shows), the
 * notes a branch posts are capped, and an agent's `reports` with `wait_s` answers as soon as its
 * branch says something. One server; a project per concern, so the live branches of one do not
 * count against another.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { BoardMessage, BranchResult } from '../../server/src/lineage/types';
import type { RunSettings } from '../../server/src/runs/settings';
import type { DeskErrorJson } from '../../server/src/protocol/protocol';
import { expectRpcError, killStartedServers, serverForSuite } from '../helpers/serverProcess';
import { deskToolAnswers, scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { makeRepo } from '../helpers/gitRepo';
import {
	SetTicket,
	LaunchGo,
	RunDidFinish,
	ShowRun,
	DecideRun,
	PromptLineage,
	BranchFromRun,
	PostToBoard,
	LineageTreeRequest,
	OpenWorkspace,
} from '../../server/src/protocol/protocol';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

const refusal = (failure: { data?: unknown }) => failure.data as DeskErrorJson;

/** Settings of the scripted agent playing `scenario`, with `limits` over the default lineage limits. */
function limited(scenario: Scenario, limits: Partial<RunSettings['lineage']['limits']> = {}): RunSettings {
	const settings = scriptedAgentSettings(scenario);
	return { ...settings, lineage: { ...settings.lineage, limits: { ...settings.lineage.limits, ...limits } } };
}

interface McpAnswer {
	result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
}

describe('the lineage limits over JSON-RPC', () => {
	const root = tempDir();
	const projects = ['forks', 'deep', 'gotools', 'notes', 'waits'] as const;
	const repos = Object.fromEntries(
		projects.map((name) => [name, makeRepo(path.join(root, name), { commits: 1 })]),
	) as Record<(typeof projects)[number], string>;
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: projects.map((name) => ({ name, path: repos[name] })) }),
	);
	const tree = async (project: string) => (await server.call(LineageTreeRequest, { project })).roots[0]!.branches;
	const nodeOf = async (project: string, node: string) => {
		const find = (nodes: Awaited<ReturnType<typeof tree>>): (typeof nodes)[number] | undefined =>
			nodes.map((n) => (n.node.node === node ? n : find(n.children))).find((n) => n !== undefined);
		return find(await tree(project))!.node;
	};

	it("a person's fork without a request id is a branch of its own each time; a reused request id with other arguments is refused; the live limit names itself", async () => {
		const settings = limited({ writes: [{ path: 'f.txt', content: 'f\n' }], sleepMs: 2000 });
		const first = await server.call(PromptLineage, {
			project: 'forks',
			root: 'main',
			prompt: 'One',
			settings,
			requestId: 'conflict-000001',
		});
		const conflict = await expectRpcError(server.connection, PromptLineage.method, {
			project: 'forks',
			root: 'main',
			prompt: 'Another prompt under the same id',
			settings,
			requestId: 'conflict-000001',
		});
		assert.equal(refusal(conflict).code, 'lineage.receiptConflict', JSON.stringify(refusal(conflict)));
		const params = { project: 'forks', root: 'main', prompt: 'The same words twice', settings };
		const a = await server.call(PromptLineage, params);
		const b = await server.call(PromptLineage, params);
		assert.notEqual(a.node, b.node, 'two forks, two branches');
		assert.deepEqual([a.replayed, b.replayed], [false, false]);
		assert.deepEqual((await tree('forks')).map((n) => n.node.node).sort(), [first.node, a.node, b.node].sort());
		// Three branches live (running or waiting for the checkout): three is the limit now.
		const live = await expectRpcError(server.connection, PromptLineage.method, {
			...params,
			settings: limited({ writes: [] }, { maxLiveBranches: 3 }),
		});
		assert.equal(refusal(live).code, 'lineage.limit');
		assert.deepEqual(refusal(live).data, { limit: 'maxLiveBranches', value: 3 });
		assert.match(refusal(live).message, /maxLiveBranches 3/);
		assert.equal((await tree('forks')).length, 3, 'the refused fork made nothing');
	});

	it("a branch deeper than maxDepth is refused naming it; a branch's tools are at most its starter's", async () => {
		const repo = repos.deep;
		const settings = limited({ writes: [{ path: 'd.txt', content: 'd\n' }] });
		const top = await server.call(PromptLineage, {
			project: 'deep',
			root: 'main',
			prompt: 'Only reports and notes',
			tools: ['reports', 'board_post', 'reports'],
			settings,
		});
		assert.deepEqual((await nodeOf('deep', top.node)).config.tools, ['reports', 'board_post']);
		const deep = await expectRpcError(server.connection, BranchFromRun.method, {
			project: 'deep',
			repo,
			prompt: 'One level deeper',
			starterRun: top.run,
			settings: limited({ writes: [] }, { maxDepth: 1 }),
		});
		assert.equal(refusal(deep).code, 'lineage.limit');
		assert.deepEqual(refusal(deep).data, { limit: 'maxDepth', value: 1 });
		assert.match(refusal(deep).message, /maxDepth 1/);
		const more = await expectRpcError(server.connection, BranchFromRun.method, {
			project: 'deep',
			repo,
			prompt: 'Asks for more than its starter has',
			starterRun: top.run,
			tools: ['reports', 'attach'],
			settings,
		});
		assert.equal(refusal(more).code, 'lineage.toolsNotGranted');
		assert.deepEqual(refusal(more).data, { tools: ['attach'], granted: ['reports', 'board_post'] });
		assert.equal((await tree('deep'))[0]!.children.length, 0, 'neither refusal forked anything');
		const sub = await server.call(BranchFromRun, {
			project: 'deep',
			repo,
			prompt: 'As its starter',
			starterRun: top.run,
			settings,
		});
		assert.deepEqual((await nodeOf('deep', sub.node)).config.tools, ['reports', 'board_post'], "its starter's tools");
	});

	it('a run whose agent had no desk tools starts branches with none: refused when asked for one, shown none when it runs', async () => {
		const repo = repos.gotools;
		await server.call(SetTicket, { project: 'gotools', ticket: 'Write g.txt' });
		const go = await server.call(LaunchGo, {
			project: 'gotools',
			settings: scriptedAgentSettings({ writes: [{ path: 'g.txt', content: 'g\n' }], mcp: 'off' }),
		});
		const goEnd = await server.notified(RunDidFinish, (f) => f.run === go.run, 'the Go run');
		assert.equal(goEnd.status, 'gate', goEnd.error);
		assert.equal((await server.call(ShowRun, { project: 'gotools', id: go.run })).run.tags['desk.mcp'], 'off');
		await server.call(DecideRun, { project: 'gotools', run: go.run, decision: 'abandon' });
		// The branch's own agent would be given the tools: its starter's none are what it gets.
		const settings = scriptedAgentSettings({
			writes: [{ path: 'h.txt', content: 'h\n' }],
			deskTools: [{ tool: 'reports', args: {} }],
		});
		const asked = await expectRpcError(server.connection, BranchFromRun.method, {
			project: 'gotools',
			repo,
			prompt: 'Search the library',
			starterRun: go.run,
			tools: ['asset_search'],
			settings,
		});
		assert.equal(refusal(asked).code, 'lineage.toolsNotGranted');
		assert.deepEqual(refusal(asked).data, { tools: ['asset_search'], granted: [] });
		assert.match(refusal(asked).message, /asset_search/);
		const branch = await server.call(BranchFromRun, {
			project: 'gotools',
			repo,
			prompt: 'Write h.txt',
			starterRun: go.run,
			settings,
		});
		assert.deepEqual((await nodeOf('gotools', branch.node)).config.tools, []);
		const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run');
		assert.equal(end.status, 'gate', end.error);
		const [list, call] = deskToolAnswers(settings) as [{ list: string[] }, { answer: McpAnswer }];
		assert.deepEqual(list.list, [], 'no desk tool shown');
		assert.equal((call.answer.result?.structuredContent?.error as { code: string }).code, 'operation.unknownTool');
	});

	it('the notes a branch posts are capped (maxNotesPerBranch, frozen at its fork); a repeated post is no new note', async () => {
		const branch = await server.call(PromptLineage, {
			project: 'notes',
			root: 'main',
			prompt: 'Say a little',
			settings: limited({ writes: [{ path: 'n.txt', content: 'n\n' }] }, { maxNotesPerBranch: 2 }),
		});
		assert.equal((await nodeOf('notes', branch.node)).config.maxNotes, 2);
		const post = (requestId: string) =>
			({ project: 'notes', run: branch.run, text: `note ${requestId}`, requestId }) as const;
		const one = await server.call(PostToBoard, post('note-0000001'));
		const two = await server.call(PostToBoard, post('note-0000002'));
		const capped = await expectRpcError(server.connection, PostToBoard.method, post('note-0000003'));
		assert.equal(refusal(capped).code, 'lineage.limit');
		assert.deepEqual(refusal(capped).data, { limit: 'maxNotesPerBranch', value: 2 });
		assert.match(refusal(capped).message, /maxNotesPerBranch 2/);
		const again = await server.call(PostToBoard, post('note-0000002'));
		assert.equal(again.id, two.id, 'the same request: the same note');
		assert.notEqual(one.id, two.id);
	});

	it("an agent's reports with wait_s answers as soon as its worktree branch says something, and with nothing when the time is up", async () => {
		const repo = repos.waits;
		await server.call(SetTicket, { project: 'waits', ticket: 'Start a branch and wait for it' });
		const starter = scriptedAgentSettings({
			writes: [{ path: 's.txt', content: 's\n' }],
			deskTools: [
				{ tool: 'branch', args: { repo, prompt: 'Write w.txt' } },
				{ tool: 'reports', args: { since: 1_000_000, wait_s: 1 } },
				{ tool: 'reports', args: { wait_s: 120 } },
			],
		});
		const child = {
			...scriptedAgentSettings({ writes: [{ path: 'w.txt', content: 'w\n' }] }).agents[0]!,
			name: 'child',
		};
		const settings: RunSettings = {
			...starter,
			agents: [...starter.agents, child],
			lineage: { ...starter.lineage, branch: { agent: 'child', isolation: 'worktree' } },
		};
		const go = await server.call(LaunchGo, { project: 'waits', settings });
		const end = await server.notified(RunDidFinish, (f) => f.run === go.run, 'the starter run', 60_000);
		assert.equal(end.status, 'gate', end.error);
		const [, forked, timedOut, woken] = deskToolAnswers(settings) as [unknown, ...Array<{ answer: McpAnswer }>];
		const branch = forked!.answer.result?.structuredContent as unknown as BranchResult;
		assert.equal(branch.queued, false, 'a worktree branch starts at once');
		assert.deepEqual(timedOut!.answer.result?.structuredContent, { messages: [] }, 'nothing newer came in a second');
		const messages = (woken!.answer.result?.structuredContent as { messages: BoardMessage[] }).messages;
		assert.ok(
			messages.some((m) => m.kind === 'note' && m.from_node === branch.node),
			`the branch's note at its gate: ${JSON.stringify(woken!.answer)}`,
		);
	});
});
