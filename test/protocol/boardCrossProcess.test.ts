/**
 * Reports another process delivered, and reports a continuation never started: the real server on a
 * real repository beside the real `desk` command line. A report the command line delivers while a
 * window's server is open raises `desk/board/didReport` there once (and the views are told to look
 * again); one delivered while no window was open is told when the project opens, one answered
 * meanwhile is not. A server killed between Continue with Reports' transaction and its run's start
 * (`continue.afterCarry.beforeStart`) gets the reports back after the restart, once: told once,
 * carried by the next continuation, then by none.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { BoardMessage, BranchResult } from '../../server/src/lineage/types';
import {
	BoardDidReport,
	BranchFromRun,
	ContinueWithReports,
	DecideRun,
	LaunchGo,
	LineageDidChange,
	ListBoard,
	OpenWorkspace,
	PromptLineage,
	RunDidFinish,
	RunsDidChange,
	SetTicket,
	ShowRun,
	type DeskErrorJson,
	type NotificationDefinition,
	type NotificationParamsOf,
} from '../../server/src/protocol/protocol';
import type { RunSettings } from '../../server/src/runs/settings';
import { DurableDatabase } from '../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../server/src/store/schemas';
import { silentLogger } from '../../server/src/core/logger';
import { desk } from '../helpers/deskCli';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

async function open(library: string, repo: string, env?: NodeJS.ProcessEnv): Promise<RunningServer> {
	const server = await startServer(library, env ? { env: { ...process.env, ...env } } : {});
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	return server;
}

/** A branch's settings: the scripted agent in a worktree of its own, so branches run side by side. */
function inWorktree(scenario: Scenario): RunSettings {
	const settings = scriptedAgentSettings(scenario);
	return { ...settings, lineage: { ...settings.lineage, branch: { isolation: 'worktree' } } };
}

/** The `desk` command line on the test's library and repository; fails the test when it does. */
function cli(library: string, repo: string, ...args: string[]): string {
	const result = desk('--store', library, ...args, '--repo', repo);
	assert.equal(result.code, 0, `desk ${args.join(' ')}: ${result.stderr}`);
	return result.stdout;
}

/** The notifications of one kind the server sent from `mark` (an index into its notifications) on. */
function sentSince<D extends NotificationDefinition<unknown>>(server: RunningServer, definition: D, mark = 0) {
	return server.notifications
		.slice(mark)
		.filter((n) => n.method === definition.method)
		.map((n) => n.params as NotificationParamsOf<D>);
}

/** Waits for a notification of `definition` sent after `mark` that `matches`. */
function notifiedAfter<D extends NotificationDefinition<unknown>>(
	server: RunningServer,
	definition: D,
	mark: number,
	matches: (params: NotificationParamsOf<D>) => boolean,
	what: string,
) {
	return server.notified(
		definition,
		(params) =>
			server.notifications.slice(mark).some((n) => n.params === params) && matches(params as NotificationParamsOf<D>),
		what,
	);
}

/** The report `branch` delivered to `board` (its copy there). */
async function reportOn(server: RunningServer, board: string, branch: string): Promise<BoardMessage> {
	const { messages } = await server.call(ListBoard, { project: 'shop', node: board });
	const report = messages.find((m) => m.kind === 'report' && m.from_node === branch);
	assert.ok(report, `the report of ${branch} is on ${board}`);
	return report;
}

/** Rows of the project database, read by a second opener (as another process would). */
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

describe('reports delivered by another process', () => {
	it('a report the command line delivers is told once in the open window; one delivered with no window open is told when the project opens, one answered meanwhile is not', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const library = path.join(root, 'library');
		const server = await open(library, repo);
		const branches: BranchResult[] = [];
		try {
			for (const name of ['a', 'b']) {
				branches.push(
					await server.call(PromptLineage, {
						project: 'shop',
						root: 'main',
						prompt: `Write ${name}.txt`,
						settings: inWorktree({ writes: [{ path: `${name}.txt`, content: `${name}\n` }] }),
						requestId: `cross-branch-${name}`,
					}),
				);
			}
			for (const branch of branches) {
				const end = await server.notified(RunDidFinish, (f) => f.run === branch.run, 'a branch run', 30_000);
				assert.equal(end.status, 'gate', end.error);
			}
			const a = branches[0]!;

			// The command line abandons a branch the window's server carried out: its report is delivered there.
			let mark = server.notifications.length;
			cli(library, repo, 'run', 'decide', a.run, '--decision', 'abandon');
			const told = await notifiedAfter(server, BoardDidReport, mark, (r) => r.branch === a.node, "a's report");
			const report = await reportOn(server, a.tally, a.node);
			assert.deepEqual(
				{ ...told },
				{
					project: 'shop',
					starter_node: a.tally,
					branch: a.node,
					report: report.id,
					title: told.title,
					outcome: 'abandoned',
				},
			);
			assert.ok(
				sentSince(server, RunsDidChange, mark).some((c) => c.project === 'shop' && c.run === undefined),
				'the Runs view is told to look again',
			);
			assert.ok(
				sentSince(server, LineageDidChange, mark).some((c) => c.project === 'shop'),
				'and the lineage',
			);

			// Another write of the command line (a note from b) is seen too, and tells a's report no second time.
			mark = server.notifications.length;
			cli(library, repo, 'board', 'post', branches[1]!.run, 'halfway');
			await notifiedAfter(server, LineageDidChange, mark, (c) => c.project === 'shop', 'the note seen');
			assert.deepEqual(
				sentSince(server, BoardDidReport).map((r) => r.report),
				[report.id],
				'one notification of the report',
			);
		} finally {
			await server.stop();
		}

		// No window open: a's report is answered, b's delivered.
		const [a, b] = branches as [BranchResult, BranchResult];
		const [aReport] = await rows<{ message_id: string }>(
			repo,
			'SELECT message_id FROM board_messages WHERE request_id = ?',
			[`dlv:${a.node}:out`],
		);
		cli(library, repo, 'board', 'answer', aReport!.message_id, 'Fine.');
		cli(library, repo, 'run', 'decide', b.run, '--decision', 'abandon');

		const again = await open(library, repo);
		try {
			const told = await reportOn(again, b.tally, b.node);
			assert.deepEqual(
				sentSince(again, BoardDidReport).map((r) => [r.branch, r.report]),
				[[b.node, told.id]],
				'the unanswered report is told when the project opens; the one answered meanwhile is not',
			);
		} finally {
			await again.stop();
		}
	});
});

describe('Continue with Reports killed before its run started', () => {
	it('continue.afterCarry.beforeStart: after the restart the report is back, told once, carried by the next continuation only', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const library = path.join(root, 'library');
		const server = await open(library, repo, { DESK_TEST_FAULTS: 'continue.afterCarry.beforeStart' });
		await server.call(SetTicket, { project: 'shop', ticket: 'Refactor the parser' });
		const starter = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ writes: [{ path: 'parser.txt', content: 'split\n' }] }),
		});
		assert.equal((await server.notified(RunDidFinish, (f) => f.run === starter.run, 'the starter run')).status, 'gate');
		await server.call(DecideRun, { project: 'shop', run: starter.run, decision: 'commit' });
		const branch = await server.call(BranchFromRun, {
			project: 'shop',
			repo,
			prompt: 'Add tests for the lexer',
			starterRun: starter.run,
			settings: scriptedAgentSettings({ writes: [{ path: 'tests.txt', content: 'tests\n' }], answer: 'Lexer tests.' }),
			requestId: 'continue-kill-branch',
		});
		await server.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch run', 30_000);
		await server.call(DecideRun, { project: 'shop', run: branch.run, decision: 'abandon' });
		const told = await server.notified(BoardDidReport, (r) => r.branch === branch.node, 'the report');
		assert.equal(told.starter_run, starter.run);

		const prompts = tempDir();
		const continuation = scriptedAgentSettings({ echoPromptTo: prompts, writes: [{ path: 'x.txt', content: 'x\n' }] });
		continuation.agents[0]!.writePaths.push(prompts);
		// Its answer never comes: the server dies between the transaction and the run's start.
		server
			.call(ContinueWithReports, {
				project: 'shop',
				run: starter.run,
				settings: continuation,
				requestId: 'continue-kill-1',
			})
			.catch(() => undefined);
		assert.equal((await server.exited).signal, 'SIGKILL', 'the server killed itself at the point');
		const carries = () =>
			rows<{ delivery_id: string }>(repo, 'SELECT delivery_id FROM board_deliveries WHERE delivery_id = ?', [
				`carry:${told.report}`,
			]);
		assert.equal((await carries()).length, 1, 'the transaction carried the report');
		const [lost] = await rows<{ data: string }>(
			repo,
			"SELECT data FROM board_messages WHERE request_id LIKE 'continue:%'",
		);
		const lostRun = (JSON.parse(lost!.data) as { run: string }).run;

		const again = await open(library, repo);
		try {
			const failed = (await again.call(ShowRun, { project: 'shop', id: lostRun })).run;
			assert.equal(failed.status, 'failed');
			assert.match(failed.error ?? '', /^the desk stopped while the run was created/);
			assert.deepEqual((await carries()).length, 0, 'the unstarted continuation released the report');
			assert.deepEqual(
				sentSince(again, BoardDidReport).map((r) => r.report),
				[told.report],
				'the report is told again, once',
			);

			const continued = await again.call(ContinueWithReports, {
				project: 'shop',
				run: starter.run,
				settings: continuation,
				requestId: 'continue-kill-2',
			});
			assert.equal(continued.reports, 1);
			const end = await again.notified(RunDidFinish, (f) => f.run === continued.run, 'the continuation');
			assert.equal(end.status, 'gate', end.error);
			const prompt = fs.readFileSync(path.join(prompts, 'work.prompt.txt'), 'utf8');
			assert.ok(prompt.includes(`(report ${told.report})`), 'the continuation carries the report');
			const nothing = await expectRpcError(again.connection, ContinueWithReports.method, {
				project: 'shop',
				run: starter.run,
				settings: continuation,
			});
			assert.equal((nothing.data as DeskErrorJson).code, 'board.noReports', 'carried once');
		} finally {
			await again.stop();
		}
		const third = await open(library, repo);
		try {
			assert.deepEqual(sentSince(third, BoardDidReport), [], 'a carried report is not told');
			assert.equal((await carries()).length, 1);
		} finally {
			await third.stop();
		}
	});
});
