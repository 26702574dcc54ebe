import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { sandboxStatus } from '../../server/src/runs/sandbox';
import type { AgentCheck } from '../../server/src/runs/types';
import { deskJs } from '../helpers/deskCli';
import { fakeClaudeFolder, signInClaude } from '../helpers/fakeAgentCli';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

/** `desk` with a home of its own and a PATH of `bin` and the system's folders (no Claude Code, no Codex but the fake). */
function deskOn(home: string, bin: string, ...args: string[]) {
	const result = spawnSync(process.execPath, [deskJs, '--store', path.join(home, 'library'), ...args], {
		encoding: 'utf8',
		env: { PATH: [bin, '/usr/bin', '/bin'].join(path.delimiter), HOME: home, LANG: 'C.UTF-8' },
		timeout: 60_000,
	});
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

it('desk agent check tells of each agent of the settings whether it can start, and exits 2 when one cannot', () => {
	const home = tempDir('desk-cli-home-');
	const bin = fakeClaudeFolder();
	// The defaults: Claude Code (here the stand-in, not signed in) and Codex (not installed).
	const both = deskOn(home, bin, 'agent', 'check');
	assert.equal(both.code, 2, both.stderr);
	assert.equal(
		both.stdout,
		[
			`claude: Claude Code 2.1.3 at ${path.join(bin, 'claude')}; NOT signed in: no sign-in in ~/.claude/.credentials.json or ~/.claude.json, and ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX are not set`,
			'  Sign In to Claude Code: claude (then type /login in it and follow the sign-in)',
			"codex: not installed (codex is not in the PATH's absolute folders)",
			'  Install Codex: npm install -g @openai/codex',
			'  Choose Another Agent: the setting agentDesk.runs.agent',
			'',
		].join('\n'),
	);
	signInClaude(home);
	const one = deskOn(home, bin, 'agent', 'check', 'claude', '--json');
	assert.equal(one.code, 0, one.stderr);
	const { agents } = JSON.parse(one.stdout) as { agents: AgentCheck[] };
	assert.deepEqual(
		agents.map((a) => [a.agent, a.login, a.login_detail, a.fixes]),
		[['claude', 'signed-in', 'with a Claude account (~/.claude/.credentials.json)', []]],
	);
	const settings = path.join(home, 'settings.json');
	fs.writeFileSync(settings, JSON.stringify({ agents: [{ name: 'mine', command: '/bin/true' }] }));
	const mine = deskOn(home, bin, 'agent', 'check', '--settings', settings);
	assert.equal(mine.code, 0, mine.stderr);
	assert.equal(
		mine.stdout,
		'mine: /bin/true at /bin/true; sign-in unknown: the desk cannot tell whether this program needs a sign-in\n',
	);
	const unknown = deskOn(home, bin, 'agent', 'check', 'nobody');
	assert.equal(unknown.code, 2);
	assert.match(unknown.stderr, /No agent is named "nobody"; the settings have claude, codex/);
});

it('desk agent check tells when a run would not see the sign-in: the sandbox gives the agent only its homeFiles', () => {
	const home = tempDir('desk-cli-home-');
	const bin = fakeClaudeFolder();
	signInClaude(home);
	const settings = path.join(home, 'settings.json');
	const agent = { name: 'mine', command: 'claude', format: 'claude-stream-json', homeFiles: ['~/.claude.json'] };
	fs.writeFileSync(settings, JSON.stringify({ agents: [agent], sandbox: 'auto' }));
	const sandboxed = deskOn(home, bin, 'agent', 'check', '--settings', settings);
	if (sandboxStatus().available) {
		assert.equal(sandboxed.code, 2, sandboxed.stderr);
		assert.match(
			sandboxed.stdout,
			/^mine: Claude Code 2\.1\.3 at .*; NOT signed in: with a Claude account \(~\/\.claude\/\.credentials\.json\), but a run does not see that file: the sandbox gives the agent a home holding only its homeFiles \(~\/\.claude\.json\)\./,
		);
		assert.match(sandboxed.stdout, /\n {2}Add Its Sign-In File to homeFiles: the setting agentDesk\.agents\n$/);
	} else {
		// Where bubblewrap cannot work, runs start outside it, in the person's own home.
		assert.equal(sandboxed.code, 0, sandboxed.stdout);
	}
	fs.writeFileSync(settings, JSON.stringify({ agents: [agent], sandbox: 'off' }));
	const outside = deskOn(home, bin, 'agent', 'check', '--settings', settings);
	assert.equal(outside.code, 0, outside.stdout);
	assert.match(outside.stdout, /; signed in: with a Claude account \(~\/\.claude\/\.credentials\.json\)\n$/);
});

it('desk runs list leaves out a run whose agent never started, says so, and lists it with --all', () => {
	const home = tempDir('desk-cli-home-');
	const bin = fakeClaudeFolder();
	const repo = makeRepo(path.join(home, 'shop'), { commits: 1 });
	assert.equal(deskOn(home, bin, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	assert.equal(deskOn(home, bin, 'card', 'suggest', '--project', 'shop', '--ticket', 'Sign in first').code, 0);
	const settings = path.join(home, 'settings.json');
	fs.writeFileSync(
		settings,
		JSON.stringify({ agents: [{ name: 'claude', command: 'claude', format: 'claude-stream-json' }], sandbox: 'off' }),
	);
	const go = deskOn(home, bin, 'run', 'go', '--project', 'shop', '--settings', settings);
	assert.equal(go.code, 2, go.stderr);
	assert.match(go.stdout, /Not logged in · Please run \/login/);
	const listed = deskOn(home, bin, 'runs', 'list', '--project', 'shop');
	assert.equal(listed.code, 0, listed.stderr);
	assert.equal(listed.stdout, '(1 run that never started is not listed; --all lists it)\n');
	const all = deskOn(home, bin, 'runs', 'list', '--project', 'shop', '--all');
	assert.match(all.stdout, /failed \(never started\)/);
	assert.match(all.stdout, /Sign in first/);
});
