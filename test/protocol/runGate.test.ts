import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import {
	CancelRun,
	CheckAgents,
	DecideRun,
	GetCard,
	LaunchGo,
	ListRuns,
	OpenWorkspace,
	PatchSetFiles,
	ReadRunText,
	SetTicket,
	RunDidFinish,
	RunsDidChange,
	ShowRun,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { fakeClaudeFolder } from '../helpers/fakeAgentCli';
import { git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { agentProcesses, carrierOf, probeUntil } from '../helpers/runProcesses';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('executed runs over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	it('Go carries the run out, progress and the end arrive as notifications, and DecideRun lands it', async () => {
		await server.call(SetTicket, {
			project: 'shop',
			ticket: 'Add a changelog\n\nStart it at 0.1.0.\n\n## Acceptance criteria\n- CHANGELOG.md names 0.1.0',
		});
		const settings = {
			...scriptedAgentSettings({ writes: [{ path: 'CHANGELOG.md', content: '# 0.1.0\n' }] }),
			maxFrames: 2,
		};
		const record = await server.call(LaunchGo, { project: 'shop', settings });
		const end = await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to finish');
		assert.deepEqual(
			{ ...end, project: end.project },
			{
				project: 'shop',
				run: record.run,
				status: 'gate',
				title: 'Add a changelog',
				agent: 'scripted',
				touched: 1,
				checks: { passed: 0, failed: 0 },
			},
		);
		assert.ok(
			server.notifications.some(
				(n) => n.method === 'desk/runs/didChange' && (n.params as { run?: string }).run === record.run,
			),
			'progress was notified',
		);
		const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
		assert.deepEqual([detail.summary.status, detail.summary.at_gate], ['validating', true]);
		// The Task's fields from the ticket's sections, and the pipeline bounded by the maxFrames setting sent with Go.
		assert.deepEqual(
			[detail.task.description, detail.task.acceptance_criteria],
			['Start it at 0.1.0.', ['CHANGELOG.md names 0.1.0']],
		);
		assert.deepEqual(
			[detail.pipeline?.max_frames, detail.pipeline?.frames.length, detail.pipeline?.frames[0]?.kind],
			[2, 2, 'intent_analysis'],
		);
		const files = await server.call(PatchSetFiles, { project: 'shop', patchset: detail.patchsets[0]!.object_id });
		assert.deepEqual(
			files.files.map((f) => [f.path, f.before, Buffer.from(f.after!, 'base64').toString()]),
			[['CHANGELOG.md', null, '# 0.1.0\n']],
		);
		const result = await server.call(DecideRun, {
			project: 'shop',
			run: record.run,
			decision: 'commit',
			rationale: 'ok',
		});
		assert.equal(
			git(repo, 'log', '-1', '--format=%B'),
			`Add a changelog\n\nI made the change the ticket asks for.\n\nDesk-Run: ${record.run}`,
		);
		assert.equal(git(repo, 'rev-parse', 'HEAD'), result.commit);
		const decided = await server.call(ShowRun, { project: 'shop', id: record.run });
		assert.deepEqual(
			[decided.summary.status, decided.summary.at_gate, decided.summary.decision],
			['completed', false, 'commit'],
		);
		const again = await expectRpcError(server.connection, DecideRun.method, {
			project: 'shop',
			run: record.run,
			decision: 'abandon',
		});
		assert.equal((again.data as DeskErrorJson).code, 'run.notAwaitingDecision');
	});

	it("the run's conversation is in its record, and the texts it stored are read back: a call's output, whole or its beginning, a check's log; no other blob", async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Add a licence' });
		const settings = scriptedAgentSettings(
			{ writes: [{ path: 'LICENCE', content: 'MIT\n' }], answer: 'Added the MIT licence.' },
			{
				checks: [
					{
						id: 'says-hello',
						executable: process.execPath,
						args: ['-e', "console.log('hello from the check')"],
						timeout: 30,
						cwd: '',
					},
				],
			},
		);
		const record = await server.call(LaunchGo, { project: 'shop', settings });
		await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to finish');
		const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
		const said = detail
			.pipeline!.frames.filter((f) => typeof f.kind === 'object' && f.kind.other === 'agent_message')
			.map((f) => f.data as { run: string; node: string; text: string });
		assert.deepEqual(
			said.map((m) => [m.run, m.node, m.text.split('\n')[0]]),
			[
				[record.run, 'plan', '1. Read the code'],
				[record.run, 'work', 'Added the MIT licence.'],
			],
		);
		const write = detail.tool_invocations.find((t) => t.tool_name === 'Write')!;
		const hash = write.artifacts[0]!.hash!;
		const output = await server.call(ReadRunText, { project: 'shop', run: record.run, hash });
		assert.match(output.text, /^File created successfully at: .*LICENCE$/);
		assert.deepEqual([output.bytes, output.partial], [Buffer.byteLength(output.text), false]);
		const head = await server.call(ReadRunText, { project: 'shop', run: record.run, hash, max_bytes: 4 });
		assert.deepEqual([head.text, head.partial, head.bytes], ['File', true, output.bytes]);
		const log = detail.evidence[0]!.report_artifacts[0]!.hash!;
		assert.equal(
			(await server.call(ReadRunText, { project: 'shop', run: record.run, hash: log })).text,
			'hello from the check\n',
		);
		// A blob of the library that no record of the run names is not read through it.
		const other = await expectRpcError(server.connection, ReadRunText.method, {
			project: 'shop',
			run: record.run,
			hash: 'a'.repeat(64),
		});
		assert.equal((other.data as DeskErrorJson).code, 'ai.notFound');
		await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'abandon', rationale: 'a test' });
	});

	it('bad settings are refused by field before Go changes anything', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Something' });
		const refused = await expectRpcError(server.connection, LaunchGo.method, {
			project: 'shop',
			settings: { agents: [{ name: 'x', command: 'x', format: 'yaml' }] },
		});
		assert.equal((refused.data as DeskErrorJson).code, 'run.badSettings');
		assert.deepEqual((refused.data as DeskErrorJson).data, { field: 'agents[0].format' });
		const unknown = await expectRpcError(server.connection, LaunchGo.method, {
			project: 'shop',
			settings: { agent: 'nobody' },
		});
		assert.equal((unknown.data as DeskErrorJson).code, 'run.unknownAgent');
		const bad = await expectRpcError(server.connection, DecideRun.method, {
			project: 'shop',
			run: '0190f0f0-0000-7000-8000-000000000000',
			decision: 'merge',
		});
		assert.equal(bad.code, -32602);
	});

	it('CancelRun stops a working agent and the run ends failed with the reason', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'A long job' });
		const record = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ sleepMs: 60_000 }),
		});
		await server.notified(RunsDidChange, (change) => change.run === record.run, 'the run to start');
		await new Promise((r) => setTimeout(r, 500));
		const { stopped } = await server.call(CancelRun, { project: 'shop', run: record.run, reason: 'wrong ticket' });
		assert.equal(stopped, true);
		const end = await server.notified(
			RunDidFinish,
			(finished) => finished.run === record.run,
			'the run to stop',
			10_000,
		);
		assert.equal(end.status, 'failed');
		assert.equal(end.error, 'cancelled: wrong ticket');
	});

	it('Go with an agent whose program is not installed is refused before anything is made; the card keeps its ticket', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Nobody is there' });
		const before = await server.call(ListRuns, { project: 'shop', all: true });
		const refused = await expectRpcError(server.connection, LaunchGo.method, {
			project: 'shop',
			settings: {
				agents: [{ name: 'ghost', command: 'no-such-agent-program', format: 'claude-stream-json' }],
				sandbox: 'off',
			},
		});
		assert.equal((refused.data as DeskErrorJson).code, 'run.agentMissing');
		assert.deepEqual((refused.data as DeskErrorJson).data, { agent: 'ghost', command: 'no-such-agent-program' });
		assert.match(refused.message, /The agent \(no-such-agent-program, agent ghost\) is not installed/);
		assert.deepEqual(await server.call(ListRuns, { project: 'shop', all: true }), before, 'no intent, task or run');
		assert.equal((await server.call(GetCard, { project: 'shop' })).card.ticket, 'Nobody is there');
		// The check told it before Go.
		const { agents } = await server.call(CheckAgents, {
			settings: { agents: [{ name: 'ghost', command: 'no-such-agent-program' }] },
		});
		assert.deepEqual(
			agents.map((a) => [a.agent, a.program, a.fixes.map((f) => f.title)]),
			[['ghost', undefined, ['Choose Another Agent']]],
		);
	});

	it('a run whose agent stops before doing anything (not signed in) is told as never started and left out of the Runs view unless asked', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Sign in first' });
		const settings = {
			agents: [{ name: 'claude', command: path.join(fakeClaudeFolder(), 'claude'), format: 'claude-stream-json' }],
			sandbox: 'off',
		};
		const [check] = (await server.call(CheckAgents, { settings, fresh: true })).agents;
		assert.equal(check?.version, '2.1.3 (Claude Code)');
		assert.ok(check?.login === 'not-signed-in' || check?.login === 'signed-in', check?.login);
		const record = await server.call(LaunchGo, { project: 'shop', settings });
		const end = await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to fail');
		assert.equal(end.status, 'failed');
		assert.equal(end.never_started, true);
		assert.equal(end.agent, 'claude');
		assert.match(end.error ?? '', /Not logged in · Please run \/login/);
		const listed = await server.call(ListRuns, { project: 'shop' });
		const ids = (overview: typeof listed) =>
			[...overview.intents.flatMap((i) => i.tasks), ...overview.tasks].flatMap((t) => t.runs.map((r) => r.id));
		assert.ok(!ids(listed).includes(record.run), 'not in the default view');
		assert.ok(!listed.intents.some((i) => i.intent.object_id === record.intent), 'nor is its intent');
		assert.ok((listed.hidden_runs ?? 0) >= 1);
		const all = await server.call(ListRuns, { project: 'shop', all: true });
		const shown = all.intents
			.flatMap((i) => i.tasks)
			.flatMap((t) => t.runs)
			.find((r) => r.id === record.run);
		assert.equal(shown?.never_started, true);
		// A Retry of it that does work is listed, with the task and intent it belongs to; the first stays out.
		const retried = await server.call(DecideRun, {
			project: 'shop',
			run: record.run,
			decision: 'retry',
			settings: scriptedAgentSettings({ writes: [{ path: 'SIGNED.md', content: 'in\n' }] }, { sandbox: 'off' }),
		});
		await server.notified(RunDidFinish, (finished) => finished.run === retried.new_run, 'the retry to finish');
		const after = await server.call(ListRuns, { project: 'shop' });
		const task = after.intents.find((i) => i.intent.object_id === record.intent)?.tasks[0];
		assert.deepEqual(
			task?.runs.map((r) => r.id),
			[retried.new_run],
		);
		await server.call(DecideRun, { project: 'shop', run: retried.new_run!, decision: 'abandon' });
	});
});

// A kill test that fails before its own server.stop() must not leave a server keeping this file running.
after(killStartedServers);

/**
 * Go on a fresh project with an agent that writes half.txt (in the checkout, or the run's worktree)
 * and sleeps; once it wrote, the server and the run's carrier (glossary: Carrier) are killed, as a
 * crash of the machine's session would. Without the sandbox the agent is not tied to its carrier's
 * life: the restart must stop it.
 */
async function killedMidRun(
	isolation: 'shared' | 'worktree',
): Promise<{ repo: string; library: string; head: string; run: string }> {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const library = path.join(root, 'library');
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	await server.call(SetTicket, { project: 'shop', ticket: 'Half a job' });
	const head = git(repo, 'rev-parse', 'HEAD');
	const record = await server.call(LaunchGo, {
		project: 'shop',
		settings: scriptedAgentSettings(
			{ writes: [{ path: 'half.txt', content: 'half\n' }], sleepMs: 60_000 },
			{ sandbox: 'off', isolation },
		),
	});
	const written = path.join(
		isolation === 'shared' ? repo : path.join(library, 'runs', record.run, 'worktree'),
		'half.txt',
	);
	await probeUntil(() => (fs.existsSync(written) ? true : undefined), 'the agent to write');
	const carrier = carrierOf(library);
	assert.ok(carrier !== undefined, 'the run has a carrier of its own');
	server.child.kill('SIGKILL');
	process.kill(carrier, 'SIGKILL');
	await new Promise((resolve) => server.child.once('exit', resolve));
	return { repo, library, head, run: record.run };
}

it('a server and carrier killed in the middle of a run: on restart the run is failed, nothing is half-landed and the checkout is put back', async () => {
	const { repo, library, head, run } = await killedMidRun('shared');
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const detail = await server.call(ShowRun, { project: 'shop', id: run });
	assert.equal(detail.summary.status, 'failed');
	assert.match(
		detail.summary.error ?? '',
		/the desk stopped while the run was patching .*nothing was landed; the checkout was put back as at Go \(1 file: half\.txt;/,
	);
	assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'nothing landed');
	assert.equal(fs.existsSync(path.join(repo, 'half.txt')), false, 'the half-written file is gone from the checkout');
	assert.equal(detail.decision, undefined);
	// The work node's agent never reported what it spent: the run's usage is at least the plan node's.
	assert.equal(detail.summary.usage_incomplete, true);
	assert.equal(detail.provenance?.token_usage?.incomplete, true);
	assert.equal(detail.provenance?.token_usage?.total_tokens, 1200);
	// The stray agent was stopped: its process group no longer exists.
	await probeUntil(() => (agentProcesses(run).length > 0 ? undefined : true), 'the stray agent to be stopped', 5000);
	// What the agent left is a PatchSet; Abandon finds nothing left to put back.
	assert.deepEqual(
		detail.patchsets.map((p) => p.touched.map((t) => t.path)),
		[['half.txt']],
	);
	const abandoned = await server.call(DecideRun, { project: 'shop', run: run, decision: 'abandon' });
	assert.deepEqual([abandoned.restored, abandoned.left], [[], []]);
	assert.equal(fs.existsSync(path.join(repo, 'half.txt')), false);
	await server.stop();
});

it('a server and carrier killed in the middle of a run whose leftover change cannot be read: on restart the run fails saying it was not kept, and the log says why', async () => {
	const { repo, library, run } = await killedMidRun('worktree');
	// The run's worktree is gone before the desk comes back: what the agent left cannot be read.
	fs.rmSync(path.join(library, 'runs', run, 'worktree'), { recursive: true, force: true });
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const detail = await server.call(ShowRun, { project: 'shop', id: run });
	assert.equal(detail.summary.status, 'failed');
	assert.match(
		detail.summary.error ?? '',
		/the desk stopped while the run was patching .*nothing was landed; what the agent left could not be kept \(.+\)/,
	);
	assert.deepEqual(detail.patchsets, []);
	assert.ok(
		server.logs.some((line) => line.includes(`run ${run}: what the agent left could not be kept as a PatchSet`)),
		server.logs.join('\n'),
	);
	await server.stop();
});

it('a landing with no git identity is refused (run.noIdentity) with nothing committed; with the identity the person gave it commits as them, and so does its rollback', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	// A home without git configuration, and no identity in the environment: git has none to give.
	const home = path.join(root, 'home');
	fs.mkdirSync(home);
	const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')));
	const server = await startServer(path.join(root, 'library'), {
		env: { ...env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' },
	});
	try {
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		await server.call(SetTicket, { project: 'shop', ticket: 'Add a changelog' });
		const record = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ writes: [{ path: 'CHANGELOG.md', content: '# 0.1.0\n' }] }, { sandbox: 'off' }),
		});
		await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to reach the gate');
		const head = git(repo, 'rev-parse', 'HEAD');
		const refused = await expectRpcError(server.connection, DecideRun.method, {
			project: 'shop',
			run: record.run,
			decision: 'commit',
		});
		assert.equal((refused.data as DeskErrorJson).code, 'run.noIdentity');
		assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'nothing committed');
		assert.equal((await server.call(ShowRun, { project: 'shop', id: record.run })).summary.at_gate, true);
		const identity = { name: 'Ada Lovelace', email: 'ada@example.com' };
		const landed = await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'commit', identity });
		assert.equal(
			git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', landed.commit!),
			'scripted via Agent Desk <ada@example.com>|Ada Lovelace <ada@example.com>',
		);
		const rolledBack = await server.call(DecideRun, {
			project: 'shop',
			run: record.run,
			decision: 'rollback',
			identity,
		});
		assert.equal(
			git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', rolledBack.commit!),
			'Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>',
		);
	} finally {
		await server.stop();
	}
});
