import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Intent } from '../../server/src/ai/types';
import {
	DecideRun,
	LaunchGo,
	OpenWorkspace,
	SetTicket,
	ShowRun,
	type ResultOf,
} from '../../server/src/protocol/protocol';
import { deskJs } from '../helpers/deskCli';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

/** An environment whose home holds a git identity of its own: what personIdentity reads. */
function homeOf(root: string, name: string, email: string): NodeJS.ProcessEnv {
	const home = path.join(root, `home-${name.split(' ')[0]!.toLowerCase()}`);
	fs.mkdirSync(home, { recursive: true });
	fs.writeFileSync(path.join(home, '.gitconfig'), `[user]\n\tname = ${name}\n\temail = ${email}\n`);
	const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, DESK_STORE: '' };
	// The global configuration is the home's, whatever the test's own environment names.
	delete env['GIT_CONFIG_GLOBAL'];
	return env;
}

describe('who a decision is recorded as', () => {
	let server: RunningServer;
	let root: string;
	let libraryDir: string;
	let cliEnv: NodeJS.ProcessEnv;

	const cli = (...args: string[]) => {
		const result = spawnSync(process.execPath, [deskJs, '--store', libraryDir, ...args], {
			encoding: 'utf8',
			env: cliEnv,
			timeout: 120_000,
		});
		return { code: result.status, stdout: result.stdout, stderr: result.stderr };
	};

	/** Launches a run from the editor and waits until it is at the gate. */
	const runAtGate = async (ticket: string, file: string): Promise<ResultOf<typeof LaunchGo>> => {
		await server.call(SetTicket, { project: 'shop', ticket });
		const launch = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ writes: [{ path: file, content: 'x\n' }] }),
		});
		for (let i = 0; i < 400; i++) {
			const { summary } = await server.call(ShowRun, { project: 'shop', id: launch.run });
			if (summary.at_gate || summary.status === 'failed') {
				assert.equal(summary.at_gate, true, `run ${launch.run} is ${summary.status}`);
				return launch;
			}
			await new Promise((r) => setTimeout(r, 50));
		}
		throw new Error(`run ${launch.run} did not reach the gate`);
	};

	before(async () => {
		root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		libraryDir = path.join(root, 'library');
		server = await startServer(libraryDir, { env: homeOf(root, 'Jane Editor', 'jane@example.com') });
		cliEnv = homeOf(root, 'Sam Shell', 'sam@example.com');
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	});
	after(() => server.stop());

	it("a decision in the editor records the person's git identity, and so does their Go", async () => {
		const launch = await runAtGate('Write a note', 'note.md');
		const decided = await server.call(DecideRun, { project: 'shop', run: launch.run, decision: 'abandon' });
		assert.deepEqual(decided.decision.created_by, { kind: 'human', id: 'Jane Editor <jane@example.com>' });
		const shown = await server.call(ShowRun, { project: 'shop', id: launch.run });
		assert.deepEqual(shown.decision?.created_by, decided.decision.created_by, 'as stored');
		const intent = JSON.parse(cli('runs', 'list', '--project', 'shop', '--json').stdout) as {
			intents: Array<{ intent: Intent }>;
		};
		assert.deepEqual(
			intent.intents.find((i) => i.intent.object_id === launch.intent)?.intent.created_by,
			{ kind: 'human', id: 'Jane Editor <jane@example.com>' },
			'Go records who pressed it',
		);
	});

	it("a decision at the command line records the person's git identity there", async () => {
		const launch = await runAtGate('Write another note', 'other.md');
		const decided = cli('run', 'decide', launch.run, '--project', 'shop', '--decision', 'abandon', '--json');
		assert.equal(decided.code, 0, decided.stderr);
		const result = JSON.parse(decided.stdout) as ResultOf<typeof DecideRun>;
		assert.deepEqual(result.decision.created_by, { kind: 'human', id: 'Sam Shell <sam@example.com>' });
		const shown = await server.call(ShowRun, { project: 'shop', id: launch.run });
		assert.deepEqual(shown.decision?.created_by, { kind: 'human', id: 'Sam Shell <sam@example.com>' });
	});

	it('one request id given to JSON-RPC and to desk --request-id for the same decision decides once', async () => {
		const launch = await runAtGate('Write a third note', 'third.md');
		const requestId = 'decide-both-faces-1';
		const first = await server.call(DecideRun, { project: 'shop', run: launch.run, decision: 'abandon', requestId });
		const decide = (decision: string, ...more: string[]) =>
			cli('run', 'decide', launch.run, '--project', 'shop', '--decision', decision, '--request-id', requestId, ...more);
		const again = decide('abandon', '--json');
		assert.equal(again.code, 0, again.stderr);
		assert.deepEqual(JSON.parse(again.stdout), first, "the editor's answer, not a second decision");
		const other = decide('commit');
		assert.equal(other.code, 2);
		assert.match(other.stderr, /request\.idReused/);
	});
});
