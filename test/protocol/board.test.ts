/**
 * Boards over JSON-RPC with the real server and the scripted agent as a real process: a person's
 * branch at the gate is a passive note, its landing one active report (and one notification), an
 * abandoned branch reports so, a run the desk stopped reports once after a restart, a report is
 * answered once; and kill points inside a delivery and a landing leave each phase exactly once.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { BoardMessage, BranchResult } from '../../server/src/lineage/types';
import * as fs from 'node:fs';
import {
	AnswerReport,
	BoardDidReport,
	BranchFromRun,
	LaunchGo,
	SetTicket,
	ContinueWithReports,
	DecideRun,
	ListBoard,
	OpenWorkspace,
	PostToBoard,
	PromptLineage,
	RunDidFinish,
	RunsDidChange,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { DurableDatabase } from '../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../server/src/store/schemas';
import { silentLogger } from '../../server/src/core/logger';
import { git, makeRepo } from '../helpers/gitRepo';
import { deskToolAnswers, scriptedAgentSettings } from '../helpers/scriptedAgent';
import { carrierOf } from '../helpers/runProcesses';
import { expectRpcError, killStartedServers, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

/** A library and a project `shop` with a server on it (its env may name kill points). */
async function project(env?: NodeJS.ProcessEnv): Promise<{ repo: string; library: string; server: RunningServer }> {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const library = path.join(root, 'library');
	const server = await open(library, repo, env);
	return { repo, library, server };
}

async function open(library: string, repo: string, env?: NodeJS.ProcessEnv): Promise<RunningServer> {
	const server = await startServer(library, env ? { env: { ...process.env, ...env } } : {});
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	return server;
}

/** The person's branch of main, carried out by the scripted agent to the gate (or its end). */
async function branchToGate(server: RunningServer, scenario: Parameters<typeof scriptedAgentSettings>[0], id: string) {
	const settings = scriptedAgentSettings(scenario);
	const branch = await server.call(PromptLineage, {
		project: 'shop',
		root: 'main',
		prompt: 'Add a changelog\n\nStart it at 0.1.0.',
		settings,
		requestId: id,
	});
	const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run to finish', 30_000);
	return { branch, end };
}

function board(server: RunningServer, node: string): Promise<BoardMessage[]> {
	return server.call(ListBoard, { project: 'shop', node }).then((r) => r.messages);
}

/** The rows of a project database, read by a second opener (as another process would). */
async function rows<T extends object>(repo: string, sql: string, params: string[] = []): Promise<T[]> {
	const db = await DurableDatabase.open({
		file: path.join(repo, '.desk', 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
		lockTimeoutMs: 5_000,
	});
	try {
		return db.all<T>(sql, params);
	} finally {
		db.close();
	}
}

/** Each phase of a branch's delivery, its landing note and its reports, counted in the database. */
async function counts(repo: string, branch: BranchResult) {
	const phases = await rows<{ phase: string }>(repo, 'SELECT phase FROM board_deliveries WHERE delivery_id = ?', [
		`dlv:${branch.node}`,
	]);
	const reports = await rows<{ node: string }>(
		repo,
		"SELECT node FROM board_messages WHERE kind = 'report' AND from_node = ?",
		[branch.node],
	);
	const landed = await rows<{ request_id: string }>(
		repo,
		"SELECT request_id FROM board_messages WHERE kind = 'landed'",
	);
	return {
		phases: phases.map((p) => p.phase).sort(),
		reports: reports.length,
		landed: landed.filter((l) => l.request_id === `land:${branch.run}`).length,
	};
}

describe('boards over JSON-RPC', () => {
	it('a branch at the gate is a passive note; its landing is one landed entry, one active report, one notification; answered once', async () => {
		const { repo, server } = await project();
		try {
			const { branch, end } = await branchToGate(
				server,
				{ writes: [{ path: 'CHANGELOG.md', content: '# 0.1.0\n' }], answer: 'Started the changelog at 0.1.0.' },
				'board-branch-0001',
			);
			assert.equal(end.status, 'gate');
			const atGate = await board(server, branch.tally);
			const note = atGate.find((m) => m.kind === 'note');
			assert.ok(note, 'the final answer at the gate is on the starter board (the tally, for the person)');
			assert.equal(note.passive, true);
			assert.match(note.text, /^at the gate: Started the changelog at 0\.1\.0\./);
			assert.ok(
				atGate.some((m) => m.kind === 'abstract' && !m.frozen),
				'a liquid abstract after the node',
			);
			assert.equal(atGate.filter((m) => m.kind === 'report').length, 0);
			assert.equal(server.notifications.filter((n) => n.method === BoardDidReport.method).length, 0, 'no notification');

			const posted = await server.call(PostToBoard, {
				project: 'shop',
				run: branch.run,
				text: 'one more thing',
				requestId: 'board-post-0001',
			});
			assert.deepEqual([posted.kind, posted.passive, posted.node], ['note', true, branch.tally]);

			const decided = await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
			const told = await server.notified(BoardDidReport, (r) => r.branch === branch.node, 'the report');
			const tally = await board(server, branch.tally);
			const landed = tally.filter((m) => m.kind === 'landed');
			assert.equal(landed.length, 1);
			assert.equal(landed[0]!.data?.commit, decided.commit);
			assert.deepEqual(landed[0]!.data?.touched, ['CHANGELOG.md']);
			assert.equal(tally.find((m) => m.kind === 'abstract')?.frozen, true, 'the landing froze the abstract');
			const reports = tally.filter((m) => m.kind === 'report');
			assert.equal(reports.length, 1);
			assert.equal(reports[0]!.passive, false);
			assert.equal(reports[0]!.data?.outcome, 'landed');
			assert.match(
				reports[0]!.text,
				new RegExp(`^landed as ${decided.commit!.slice(0, 12)} \\(Desk-Run: ${branch.run}\\)`),
			);
			assert.deepEqual(
				{ ...told },
				{
					project: 'shop',
					starter_node: branch.tally,
					branch: branch.node,
					report: reports[0]!.id,
					title: told.title,
					outcome: 'landed',
				},
			);
			assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Desk-Run: ${branch.run}`));

			const answer = await server.call(AnswerReport, {
				project: 'shop',
				report: reports[0]!.id,
				text: 'Thanks.',
				requestId: 'board-answer-0001',
			});
			assert.deepEqual([answer.kind, answer.node, answer.reply_enabled], ['answer', branch.node, false]);
			const repeat = await server.call(AnswerReport, {
				project: 'shop',
				report: reports[0]!.id,
				text: 'Thanks.',
				requestId: 'board-answer-0001',
			});
			assert.equal(repeat.id, answer.id, 'the same request answers with the same answer');
			const second = await expectRpcError(server.connection, AnswerReport.method, {
				project: 'shop',
				report: reports[0]!.id,
				text: 'And another thing',
				requestId: 'board-answer-0002',
			});
			assert.equal((second.data as DeskErrorJson).code, 'board.alreadyAnswered');
			const onNote = await expectRpcError(server.connection, AnswerReport.method, {
				project: 'shop',
				report: note.id,
				text: 'x',
			});
			assert.equal((onNote.data as DeskErrorJson).code, 'board.notReplyEnabled');
			assert.equal(
				server.notifications.filter((n) => n.method === BoardDidReport.method).length,
				1,
				'one notification',
			);
			assert.deepEqual(await counts(repo, branch), { phases: ['delivered', 'input', 'reply'], reports: 2, landed: 1 });
		} finally {
			await server.stop();
		}
	});

	it('an abandoned branch reports so; a run of no branch posts nothing', async () => {
		const { repo, server } = await project();
		try {
			const { branch } = await branchToGate(
				server,
				{ writes: [{ path: 'a.txt', content: 'a\n' }] },
				'board-branch-0002',
			);
			await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'abandon', rationale: 'not now' });
			await server.notified(BoardDidReport, (r) => r.branch === branch.node && r.outcome === 'abandoned', 'the report');
			const reports = (await board(server, branch.tally)).filter((m) => m.kind === 'report');
			assert.equal(reports.length, 1);
			assert.match(reports[0]!.text, /^abandoned: not now; nothing was landed/);
			assert.deepEqual(await counts(repo, branch), { phases: ['delivered', 'input', 'reply'], reports: 2, landed: 0 });
			const noStarter = await expectRpcError(server.connection, PostToBoard.method, {
				project: 'shop',
				run: '0190f0f0-0000-7000-8000-000000000000',
				text: 'x',
			});
			assert.equal((noStarter.data as DeskErrorJson).code, 'board.noStarter');
			const nothing = await expectRpcError(server.connection, ContinueWithReports.method, {
				project: 'shop',
				run: branch.run,
			});
			assert.equal((nothing.data as DeskErrorJson).code, 'board.noReports');
		} finally {
			await server.stop();
		}
	});

	it('a branch whose run and desk were stopped (SIGKILL) reports once after the restart', async () => {
		const { repo, library, server } = await project();
		const branch = await server.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'A long job',
			settings: scriptedAgentSettings({ sleepMs: 60_000 }),
			requestId: 'board-branch-0003',
		});
		await server.notified(RunsDidChange, (c) => c.run === branch.run, 'the branch run to start');
		await new Promise((r) => setTimeout(r, 500));
		// The desk and the run's own process (glossary: Carrier) both killed: nothing carries it on.
		const carrier = carrierOf(library);
		assert.ok(carrier !== undefined, 'the branch run has a carrier');
		server.child.kill('SIGKILL');
		process.kill(carrier, 'SIGKILL');
		await server.exited;
		const again = await open(library, repo);
		try {
			const reports = (await board(again, branch.tally)).filter((m) => m.kind === 'report');
			assert.equal(reports.length, 1);
			assert.equal(reports[0]!.data?.outcome, 'stopped');
			assert.match(reports[0]!.text, /^the desk stopped while the run was \w+ \(process \d+\); nothing was landed/);
			await again.stop();
			const third = await open(library, repo);
			await third.stop();
			assert.deepEqual(await counts(repo, branch), { phases: ['delivered', 'input', 'reply'], reports: 2, landed: 0 });
		} finally {
			await again.stop();
		}
	});
});

interface McpAnswer {
	result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
}

describe('a run and its branch talking through the board tools', () => {
	it("a branch posts with board_post; its report reaches the starter run's task; Continue with Reports carries it once, and the continuation answers it once with board_answer", async () => {
		const { repo, server } = await project();
		try {
			await server.call(SetTicket, { project: 'shop', ticket: 'Refactor the parser' });
			const starter = await server.call(LaunchGo, {
				project: 'shop',
				settings: scriptedAgentSettings({ writes: [{ path: 'parser.txt', content: 'split\n' }] }),
			});
			const starterEnd = await server.notified(RunDidFinish, (f) => f.run === starter.run, 'the starter run');
			assert.equal(starterEnd.status, 'gate');
			const branchSettings = scriptedAgentSettings({
				writes: [{ path: 'tests.txt', content: 'tests\n' }],
				deskTools: [{ tool: 'board_post', args: { text: 'halfway: lexer tests written' } }],
				answer: 'Tests for the lexer.',
			});
			const branch = await server.call(BranchFromRun, {
				project: 'shop',
				repo,
				prompt: 'Add tests for the lexer',
				starterRun: starter.run,
				settings: branchSettings,
				requestId: 'board-branch-0010',
			});
			// The starter's change is at the gate in the shared checkout: landing it frees the checkout for the branch.
			await server.call(DecideRun, { project: 'shop', run: starter.run, decision: 'commit' });
			const branchEnd = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run', 30_000);
			assert.equal(branchEnd.status, 'gate', branchEnd.error);
			const [list, post] = deskToolAnswers(branchSettings) as [{ list: string[] }, { answer: McpAnswer }];
			assert.ok(
				['board_post', 'reports', 'board_answer'].every((t) => list.list.includes(t)),
				JSON.stringify(list),
			);
			assert.equal(post.answer.result?.isError, undefined, JSON.stringify(post.answer));
			const starterTask = (await board(server, branch.node)).find((m) => m.kind === 'board.started.by')?.from_node;
			assert.ok(starterTask, 'the branch board names its starter');
			const beforeLanding = await board(server, starterTask);
			assert.deepEqual(
				beforeLanding.map((m) => [m.kind, m.passive]),
				[
					['note', true],
					['note', true],
				],
			);
			assert.equal(beforeLanding[0]!.text, 'halfway: lexer tests written');

			await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' });
			const told = await server.notified(BoardDidReport, (r) => r.branch === branch.node, 'the report');
			assert.deepEqual([told.starter_node, told.starter_run], [starterTask, starter.run]);

			const prompts = tempDir();
			const continuation = scriptedAgentSettings({
				echoPromptTo: prompts,
				writes: [{ path: 'parser.txt', content: 'split and tested\n' }],
				deskTools: [
					{ tool: 'reports', args: {} },
					{ tool: 'board_answer', args: { report: told.report, text: 'Good; keep them fast.' } },
					{ tool: 'board_answer', args: { report: told.report, text: 'And another thing.' } },
				],
			});
			// The agent writes its prompts where the test reads them.
			continuation.agents[0]!.writePaths.push(prompts);
			const continued = await server.call(ContinueWithReports, {
				project: 'shop',
				run: starter.run,
				settings: continuation,
				requestId: 'board-continue-0001',
			});
			assert.equal(continued.reports, 1);
			assert.equal(continued.task, starterTask);
			const continuedEnd = await server.notified(RunDidFinish, (f) => f.run === continued.run, 'the continuation');
			assert.equal(continuedEnd.status, 'gate', continuedEnd.error);
			const prompt = fs.readFileSync(path.join(prompts, 'work.prompt.txt'), 'utf8');
			assert.match(prompt, /## Reports from branches/);
			assert.ok(prompt.includes(`(report ${told.report})`), 'the report is carried');
			assert.ok(prompt.includes('Tests for the lexer.'), "with the branch's final answer");
			const [, reports, answer, again] = deskToolAnswers(continuation) as [
				unknown,
				{ answer: McpAnswer },
				{ answer: McpAnswer },
				{ answer: McpAnswer },
			];
			const seen = reports.answer.result?.structuredContent?.messages as BoardMessage[];
			assert.ok(
				seen.some((m) => m.id === told.report && m.kind === 'report'),
				JSON.stringify(reports.answer),
			);
			assert.equal(answer.answer.result?.isError, undefined, JSON.stringify(answer.answer));
			assert.equal(again.answer.result?.isError, true);
			assert.equal((again.answer.result?.structuredContent?.error as { code: string }).code, 'board.alreadyAnswered');
			const answers = (await board(server, branch.node)).filter((m) => m.kind === 'answer');
			assert.deepEqual(
				answers.map((m) => [m.from_node, m.from_run, m.text]),
				[[starterTask, continued.run, 'Good; keep them fast.']],
			);
			const repeat = await server.call(ContinueWithReports, {
				project: 'shop',
				run: starter.run,
				settings: continuation,
				requestId: 'board-continue-0001',
			});
			assert.deepEqual(repeat, continued, 'the same request continues once');
			const nothing = await expectRpcError(server.connection, ContinueWithReports.method, {
				project: 'shop',
				run: continued.run,
				settings: continuation,
			});
			assert.equal((nothing.data as DeskErrorJson).code, 'board.noReports', 'the report was carried once');
		} finally {
			await server.stop();
		}
	});
});

describe('kill points of a delivery and a landing', () => {
	for (const point of ['delivery.afterReply', 'delivery.afterDeliver', 'land.afterDecision.beforeNote']) {
		it(`${point}: the desk killed there and restarted has each phase, the landing note and each report once`, async () => {
			const { repo, library, server } = await project({ DESK_TEST_FAULTS: point });
			const { branch } = await branchToGate(
				server,
				{ writes: [{ path: 'CHANGELOG.md', content: '# 0.1.0\n' }] },
				'board-branch-kill',
			);
			// Its answer never comes: the process dies while deciding.
			server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'commit' }).catch(() => undefined);
			assert.equal((await server.exited).signal, 'SIGKILL', `the server killed itself at ${point}`);
			const before = await counts(repo, branch);
			if (point === 'delivery.afterReply') {
				assert.deepEqual(before, { phases: ['input'], reports: 0, landed: 1 }, 'the delivery transaction left nothing');
			} else if (point === 'land.afterDecision.beforeNote') {
				assert.deepEqual(before, { phases: ['input'], reports: 0, landed: 0 });
			}
			assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Desk-Run: ${branch.run}`), 'landed in git');
			const again = await open(library, repo);
			try {
				assert.deepEqual(await counts(repo, branch), {
					phases: ['delivered', 'input', 'reply'],
					reports: 2,
					landed: 1,
				});
				const commits = git(repo, 'log', '--format=%B').split(`Desk-Run: ${branch.run}`).length - 1;
				assert.equal(commits, 1, 'one commit of the run');
			} finally {
				await again.stop();
			}
		});
	}
});
