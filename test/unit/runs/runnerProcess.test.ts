/**
 * Which process carries a run (runnerProcess.ts): a runner that died but was never reaped (a zombie,
 * as a carrier killed after its desk is in a container whose first process reaps nothing) carries
 * nothing; a run's agent group is signalled only while its leader's environment names the run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { it } from 'node:test';
import { isRunnerAlive, processStartTime, signalRunAgent } from '../../../server/src/runs/runnerProcess';

it('a zombie runner is gone; a live one with its start time is alive, another start time is another process', async () => {
	// sh starts a short sleep in the background, then becomes `sleep 30`, which never reaps it: a
	// zombie. (A child that ended before the exec could be reaped by sh itself first.)
	const parent = spawn('/bin/sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 30'], {
		stdio: ['ignore', 'pipe', 'ignore'],
	});
	try {
		const zombie = Number(
			await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(String(d)))),
		);
		for (let i = 0; i < 100 && !/\) Z /.test(statOf(zombie)); i++) {
			await new Promise((r) => setTimeout(r, 20));
		}
		assert.match(statOf(zombie), /\) Z /, 'the child is a zombie');
		assert.equal(isRunnerAlive(zombie, `token:${processStartTime(zombie)}`), false);
		const live = parent.pid!;
		assert.equal(isRunnerAlive(live, `token:${processStartTime(live)}`), true);
		assert.equal(isRunnerAlive(live, 'token:1'), false, 'a reused pid');
	} finally {
		parent.kill('SIGKILL');
	}
});

it("a run's agent group is signalled only while its leader names the run", async () => {
	const run = '01900000-0000-7000-8000-000000000001';
	const agent = spawn('/bin/sh', ['-c', 'exec sleep 30'], {
		detached: true,
		stdio: 'ignore',
		env: { PATH: process.env['PATH'], DESK_RUN_ID: run },
	});
	const ended = new Promise<NodeJS.Signals | null>((resolve) => agent.once('exit', (_code, signal) => resolve(signal)));
	try {
		await new Promise((r) => setTimeout(r, 200));
		assert.equal(signalRunAgent(agent.pid!, '01900000-0000-7000-8000-000000000002', 'SIGTERM'), false);
		assert.equal(agent.exitCode, null, 'another run names no group of this one');
		assert.equal(signalRunAgent(agent.pid!, run, 'SIGTERM'), true);
		assert.equal(await ended, 'SIGTERM');
	} finally {
		agent.kill('SIGKILL');
	}
});

function statOf(pid: number): string {
	try {
		return fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
	} catch {
		return '';
	}
}
