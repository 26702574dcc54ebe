import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import {
	CancelRun,
	DecideRun,
	LaunchGo,
	OpenWorkspace,
	PatchSetFiles,
	ReadRunText,
	SetTicket,
	RunDidFinish,
	RunsDidChange,
	ShowRun,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = probe();
		if (value !== undefined) {
			return value;
		}
		if (Date.now() > deadline) {
			throw new Error(`timed out waiting for ${what}`);
		}
		await new Promise((r) => setTimeout(r, 50));
	}
}

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

	it('an agent that cannot be started fails the run at once, with the reason', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Nobody is there' });
		const record = await server.call(LaunchGo, {
			project: 'shop',
			settings: {
				agents: [{ name: 'ghost', command: 'no-such-agent-program', format: 'claude-stream-json' }],
				sandbox: 'off',
			},
		});
		const end = await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to fail');
		assert.equal(end.status, 'failed');
		assert.match(end.error ?? '', /plan: the agent's program no-such-agent-program was not found/);
		const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
		assert.equal(detail.summary.status, 'failed');
	});
});

// A kill test that fails before its own server.stop() must not leave a server keeping this file running.
after(killStartedServers);

/**
 * Go on a fresh project with an agent that writes half.txt (in the checkout, or the run's worktree)
 * and sleeps; the server is killed once it wrote. Without the sandbox the agent is not tied to the
 * server's life: the restart must stop it.
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
	await waitFor(() => (fs.existsSync(written) ? true : undefined), 'the agent to write');
	server.child.kill('SIGKILL');
	await new Promise((resolve) => server.child.once('exit', resolve));
	return { repo, library, head, run: record.run };
}

it('a server killed in the middle of a run: on restart the run is failed and nothing is half-landed', async () => {
	const { repo, library, head, run } = await killedMidRun('shared');
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const detail = await server.call(ShowRun, { project: 'shop', id: run });
	assert.equal(detail.summary.status, 'failed');
	assert.match(detail.summary.error ?? '', /the desk stopped while the run was patching .*nothing was landed/);
	assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'nothing landed');
	assert.equal(detail.decision, undefined);
	// The work node's agent never reported what it spent: the run's usage is at least the plan node's.
	assert.equal(detail.summary.usage_incomplete, true);
	assert.equal(detail.provenance?.token_usage?.incomplete, true);
	assert.equal(detail.provenance?.token_usage?.total_tokens, 1200);
	// The stray agent was stopped: its process group no longer exists.
	await waitFor(
		() =>
			fs
				.readdirSync('/proc')
				.filter((p) => /^\d+$/.test(p))
				.some((p) => {
					try {
						return fs.readFileSync(`/proc/${p}/environ`).includes(Buffer.from(`DESK_RUN_ID=${run}\0`));
					} catch {
						return false;
					}
				})
				? undefined
				: true,
		'the stray agent to be stopped',
		5000,
	);
	// What the agent left is a PatchSet at the gate; Abandon puts the half-written file away.
	assert.deepEqual(
		detail.patchsets.map((p) => p.touched.map((t) => t.path)),
		[['half.txt']],
	);
	await server.call(DecideRun, { project: 'shop', run: run, decision: 'abandon' });
	assert.equal(fs.existsSync(path.join(repo, 'half.txt')), false);
	await server.stop();
});

it('a server killed in the middle of a run whose leftover change cannot be read: on restart the run fails saying it was not kept, and the log says why', async () => {
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
