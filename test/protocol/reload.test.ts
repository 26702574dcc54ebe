/**
 * A run outlives the desk server of the window that started it (glossary: Carrier). A window reload
 * ends the extension host and its server; here the server is killed with SIGKILL mid-run, as hard as
 * that gets. The run's own process carries it on, and a new server on the same store follows it to
 * the gate, lands it, or cancels it; a run whose carrier dies too is failed and its files in the
 * checkout are put back.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, it } from 'node:test';
import {
	CancelRun,
	DecideRun,
	LaunchGo,
	OpenWorkspace,
	RunDidFinish,
	SetTicket,
	ShowRun,
} from '../../server/src/protocol/protocol';
import { git, makeRepo } from '../helpers/gitRepo';
import { releaseScriptedAgent, scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { agentProcesses, carrierOf, probeUntil } from '../helpers/runProcesses';
import { killStartedServers, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

/**
 * Go on a fresh project whose agent writes `half.txt` and then works on for `sleepMs`; once it wrote,
 * the window's server is killed (SIGKILL) and a new one is started on the same store and opens the
 * repository, as a reloaded window does.
 */
async function reloadedMidRun(
	scenario: Scenario,
	isolation: 'shared' | 'worktree' = 'shared',
): Promise<{ repo: string; library: string; head: string; run: string; server: RunningServer }> {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const library = path.join(root, 'library');
	const before = await startServer(library);
	await before.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	await before.call(SetTicket, { project: 'shop', ticket: 'Half a job' });
	const head = git(repo, 'rev-parse', 'HEAD');
	const record = await before.call(LaunchGo, {
		project: 'shop',
		settings: scriptedAgentSettings({ writes: [{ path: 'half.txt', content: 'half\n' }], ...scenario }, { isolation }),
	});
	const written = path.join(
		isolation === 'shared' ? repo : path.join(library, 'runs', record.run, 'worktree'),
		'half.txt',
	);
	await probeUntil(() => (fs.existsSync(written) ? true : undefined), 'the agent to write');
	before.child.kill('SIGKILL');
	await before.exited;
	const server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	return { repo, library, head, run: record.run, server };
}

it('a run goes on when the server of its window is killed: a new server follows it to the gate and lands it', async () => {
	// The agent stays at work until the test lets it finish: a slow restart under load cannot let the
	// run move on before the new server is asked about it.
	const { repo, library, head, run, server } = await reloadedMidRun({ holdUntilReleased: true });
	try {
		// The new server did not take the run for one a dead desk left: it is still working.
		const working = await server.call(ShowRun, { project: 'shop', id: run });
		assert.equal(working.summary.status, 'patching', working.summary.error);
		assert.equal(working.run.tags['desk.carried_by'], 'own process');
		const agents = agentProcesses(run);
		assert.ok(agents.length > 0, 'the agent is still at work');
		const carrier = carrierOf(library);
		assert.ok(carrier !== undefined, 'the run has a carrier of its own');
		assert.ok(releaseScriptedAgent(agents) > 0, 'the agent was told it may finish');
		// It follows the run: the end arrives as a notification of this server.
		const end = await server.notified(RunDidFinish, (finished) => finished.run === run, 'the run to reach the gate');
		assert.equal(end.status, 'gate', end.error);
		const detail = await server.call(ShowRun, { project: 'shop', id: run });
		assert.deepEqual(
			[detail.summary.at_gate, detail.patchsets.at(-1)?.touched.map((t) => t.path)],
			[true, ['half.txt']],
		);
		await probeUntil(
			() => (carrierOf(library) === undefined ? true : undefined),
			'the carrier to end at the gate',
			10_000,
		);
		assert.match(fs.readFileSync(path.join(library, 'runs', run, 'carrier.log'), 'utf8'), /carrying run/);
		const landed = await server.call(DecideRun, { project: 'shop', run, decision: 'commit' });
		assert.equal(git(repo, 'rev-parse', 'HEAD'), landed.commit);
		assert.equal(git(repo, 'rev-parse', 'HEAD~1'), head);
		assert.equal(git(repo, 'show', 'HEAD:half.txt'), 'half');
	} finally {
		await server.stop();
	}
});

it("Cancel from the new server stops the agent of the run's carrier; the run fails with the reason", async () => {
	const { library, run, server } = await reloadedMidRun({ sleepMs: 60_000 });
	try {
		assert.ok(agentProcesses(run).length > 0, 'the agent is still at work');
		const { stopped } = await server.call(CancelRun, { project: 'shop', run, reason: 'wrong ticket' });
		assert.equal(stopped, true, 'a live process carries it');
		const end = await server.notified(RunDidFinish, (finished) => finished.run === run, 'the run to stop', 15_000);
		assert.deepEqual([end.status, end.error], ['failed', 'cancelled: wrong ticket']);
		await probeUntil(() => (agentProcesses(run).length === 0 ? true : undefined), 'the agent to be gone', 10_000);
		await probeUntil(() => (carrierOf(library) === undefined ? true : undefined), 'the carrier to end', 10_000);
	} finally {
		await server.stop();
	}
});

it('a run whose carrier is killed too: the server following it fails it at once and puts its files in the checkout back', async () => {
	const { repo, library, head, run, server } = await reloadedMidRun({ sleepMs: 60_000 });
	try {
		const carrier = carrierOf(library);
		assert.ok(carrier !== undefined);
		process.kill(carrier, 'SIGKILL');
		const end = await server.notified(RunDidFinish, (finished) => finished.run === run, 'the run to fail', 15_000);
		assert.equal(end.status, 'failed');
		assert.match(
			end.error ?? '',
			/the desk stopped while the run was patching .*nothing was landed; the checkout was put back as at Go \(1 file: half\.txt; its PatchSet keeps what the agent left\)/,
		);
		assert.equal(fs.existsSync(path.join(repo, 'half.txt')), false, 'the half-made file is gone from the checkout');
		assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '');
		assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'nothing landed');
		const detail = await server.call(ShowRun, { project: 'shop', id: run });
		assert.deepEqual(
			detail.patchsets.map((p) => p.touched.map((t) => t.path)),
			[['half.txt']],
			'what the agent left is kept as a PatchSet',
		);
		await probeUntil(
			() => (agentProcesses(run).length === 0 ? true : undefined),
			'the stray agent to be stopped',
			5_000,
		);
		// Abandon has nothing left to put back, and says nothing was left as changed.
		const abandoned = await server.call(DecideRun, { project: 'shop', run, decision: 'abandon' });
		assert.deepEqual([abandoned.restored, abandoned.left], [[], []]);
	} finally {
		await server.stop();
	}
});
