import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { agentCheckTtlMs, checkAgent, requireAgentProgram } from '../../../server/src/runs/agentCheck';
import { defaultAgents, parseRunSettings, type AgentSettings } from '../../../server/src/runs/settings';
import { fakeClaudeFolder, signInClaude } from '../../helpers/fakeAgentCli';
import { tempDir } from '../../helpers/temp';

const claude = defaultAgents.find((a) => a.name === 'claude')!;
const codex = defaultAgents.find((a) => a.name === 'codex')!;

/** A machine of the test's own: an empty home, a PATH of the folders given and the system's. */
function machine(...folders: string[]) {
	const home = tempDir('desk-home-');
	let clock = 1_000_000;
	return {
		home,
		env: { PATH: [...folders, '/usr/bin', '/bin'].join(path.delimiter) } as NodeJS.ProcessEnv,
		now: () => clock,
		later: (ms: number) => (clock += ms),
		platform: 'linux' as NodeJS.Platform,
	};
}

describe('the agent check', () => {
	it('finds Claude Code on the PATH with its version, and not signed in while it has no sign-in; the fix is a terminal running it', async () => {
		const bin = fakeClaudeFolder();
		const m = machine(bin);
		const check = await checkAgent(claude, { ...m, fresh: true });
		assert.equal(check.program, path.join(bin, 'claude'));
		assert.equal(check.product, 'Claude Code');
		assert.equal(check.version, '2.1.3 (Claude Code)');
		assert.equal(check.label, 'Claude Code 2.1.3');
		assert.equal(check.login, 'not-signed-in');
		assert.match(check.login_detail, /no sign-in in ~\/\.claude\/\.credentials\.json or ~\/\.claude\.json/);
		assert.deepEqual(check.fixes, [
			{
				kind: 'terminal',
				title: 'Sign In to Claude Code',
				command: 'claude',
				hint: 'type /login in it and follow the sign-in',
			},
		]);
	});

	it('says signed in from the sign-in file, or from a key the agent is passed; a key it is not passed does not count', async () => {
		const m = machine(fakeClaudeFolder());
		m.env['ANTHROPIC_AUTH_TOKEN'] = 'sk-test';
		const unpassed = await checkAgent(claude, { ...m, fresh: true });
		assert.equal(unpassed.login, 'not-signed-in', 'ANTHROPIC_AUTH_TOKEN is not in the preset’s env');
		assert.match(unpassed.login_detail, /ANTHROPIC_AUTH_TOKEN is set but not passed to the agent/);
		m.env['ANTHROPIC_API_KEY'] = 'sk-test';
		const byKey = await checkAgent(claude, { ...m, fresh: true });
		assert.equal(byKey.login, 'signed-in');
		assert.equal(byKey.login_detail, 'by ANTHROPIC_API_KEY');
		assert.deepEqual(byKey.fixes, []);
		delete m.env['ANTHROPIC_API_KEY'];
		signInClaude(m.home);
		const byFile = await checkAgent(claude, { ...m, fresh: true });
		assert.equal(byFile.login, 'signed-in');
		assert.equal(byFile.login_detail, 'with a Claude account (~/.claude/.credentials.json)');
	});

	it('in the sandbox, counts a sign-in file only where a run sees it: among the agent’s homeFiles or in its readPaths', async () => {
		const m = machine(fakeClaudeFolder());
		signInClaude(m.home);
		const listed = await checkAgent(claude, { ...m, sandboxed: true, fresh: true });
		assert.equal(listed.login, 'signed-in', 'the preset lists ~/.claude/.credentials.json in its homeFiles');
		// An agent of the person's own whose homeFiles leave the sign-in out: signed in here, not in a run.
		const mine: AgentSettings = { ...claude, name: 'mine', homeFiles: ['~/.claude.json'] };
		const unseen = await checkAgent(mine, { ...m, sandboxed: true, fresh: true });
		assert.equal(unseen.login, 'not-signed-in');
		assert.match(
			unseen.login_detail,
			/^with a Claude account \(~\/\.claude\/\.credentials\.json\), but a run does not see that file/,
		);
		assert.match(
			unseen.login_detail,
			/homeFiles \(~\/\.claude\.json\)\. Add ~\/\.claude\/\.credentials\.json to the homeFiles of agent mine/,
		);
		assert.deepEqual(unseen.fixes, [
			{ kind: 'setting', title: 'Add Its Sign-In File to homeFiles', setting: 'agentDesk.agents' },
		]);
		assert.equal((await checkAgent(mine, { ...m, fresh: true })).login, 'signed-in', 'without the sandbox it is seen');
		const shown = await checkAgent({ ...mine, readPaths: ['~/.claude'] }, { ...m, sandboxed: true, fresh: true });
		assert.equal(shown.login, 'signed-in', 'a readPaths folder is shown in the sandbox where it is');
		const home = await checkAgent({ ...mine, readPaths: ['~'] }, { ...m, sandboxed: true, fresh: true });
		assert.equal(home.login, 'not-signed-in', 'the home folder itself is never bound over the run’s home');
		// A link in the home folder is not copied into the run's home, listed or not.
		const credentials = path.join(m.home, '.claude', '.credentials.json');
		const real = path.join(m.home, 'dotfiles-credentials.json');
		fs.renameSync(credentials, real);
		fs.symlinkSync(real, credentials);
		const linked = await checkAgent(claude, { ...m, sandboxed: true, fresh: true });
		assert.equal(linked.login, 'not-signed-in', 'the run would get no copy of a link');
		assert.match(
			linked.login_detail,
			/~\/\.claude\/\.credentials\.json is a link, which is not copied\. Make it a file/,
		);
		assert.deepEqual(linked.fixes, [], 'listing it again would not help');
		m.env['ANTHROPIC_API_KEY'] = 'sk-test';
		const byKey = await checkAgent(mine, { ...m, sandboxed: true, fresh: true });
		assert.equal(byKey.login_detail, 'by ANTHROPIC_API_KEY', 'a key the agent is passed reaches it in the sandbox');
	});

	it('keeps an answer a few seconds: a sign-in is seen at once when asked afresh, else once the answer is old', async () => {
		const m = machine(fakeClaudeFolder());
		assert.equal((await checkAgent(claude, { ...m, fresh: true })).login, 'not-signed-in');
		signInClaude(m.home);
		assert.equal((await checkAgent(claude, m)).login, 'not-signed-in', 'the kept answer');
		m.later(agentCheckTtlMs);
		assert.equal((await checkAgent(claude, m)).login, 'signed-in', 'an answer too old is not kept');
		fs.rmSync(path.join(m.home, '.claude'), { recursive: true });
		assert.equal((await checkAgent(claude, { ...m, fresh: true })).login, 'not-signed-in', 'asked afresh');
	});

	it('a missing program: not installed, with the install command and the setting that chooses another agent', async () => {
		const m = machine();
		const check = await checkAgent(codex, { ...m, fresh: true });
		assert.equal(check.program, undefined);
		assert.equal(check.product, 'Codex');
		assert.equal(check.version, undefined);
		assert.deepEqual(check.fixes, [
			{ kind: 'terminal', title: 'Install Codex', command: 'npm install -g @openai/codex' },
			{ kind: 'setting', title: 'Choose Another Agent', setting: 'agentDesk.runs.agent' },
		]);
	});

	it('Codex: signed in from auth.json (an API key or a ChatGPT account), in CODEX_HOME when it is set', async () => {
		const bin = tempDir('desk-bin-');
		fs.writeFileSync(path.join(bin, 'codex'), '#!/bin/sh\necho "codex-cli 0.50.0"\n', { mode: 0o755 });
		const m = machine(bin);
		const none = await checkAgent(codex, { ...m, fresh: true });
		assert.equal(none.version, 'codex-cli 0.50.0');
		assert.equal(none.login, 'not-signed-in');
		assert.deepEqual(none.fixes[0], { kind: 'terminal', title: 'Sign In to Codex', command: 'codex login' });
		const codexHome = tempDir('desk-codex-home-');
		fs.writeFileSync(
			path.join(codexHome, 'auth.json'),
			JSON.stringify({ OPENAI_API_KEY: null, tokens: { refresh_token: 'r' } }),
		);
		m.env['CODEX_HOME'] = codexHome;
		const account = await checkAgent(codex, { ...m, fresh: true });
		assert.equal(account.login, 'signed-in');
		assert.equal(account.login_detail, `with a ChatGPT account (${path.join(codexHome, 'auth.json')})`);
		fs.writeFileSync(path.join(codexHome, 'auth.json'), '{"OPENAI_API_KEY": ""}');
		assert.equal((await checkAgent(codex, { ...m, fresh: true })).login, 'not-signed-in', 'an empty key is no sign-in');
	});

	it('says "unknown" where it cannot tell: a program it does not know, Claude Code on macOS (its keychain), Gemini CLI', async () => {
		const m = machine(fakeClaudeFolder());
		const other: AgentSettings = { ...claude, name: 'mine', command: '/bin/true', args: [] };
		const unknown = await checkAgent(other, { ...m, fresh: true });
		assert.equal(unknown.program, '/bin/true');
		assert.equal(unknown.login, 'unknown');
		assert.equal(unknown.version, undefined, 'an unknown program is not started, not even for its version');
		assert.deepEqual(unknown.fixes, []);
		const mac = await checkAgent(claude, { ...m, platform: 'darwin', fresh: true });
		assert.equal(mac.login, 'unknown');
		assert.match(mac.login_detail, /may keep one where the desk cannot read it/);
		const bin = tempDir('desk-bin-');
		fs.writeFileSync(path.join(bin, 'gemini'), '#!/bin/sh\necho 0.9.0\n', { mode: 0o755 });
		const gemini = await checkAgent({ ...claude, name: 'gemini', command: 'gemini' }, { ...machine(bin), fresh: true });
		assert.equal(gemini.product, 'Gemini CLI');
		assert.equal(gemini.login, 'unknown');
	});

	it('Go refuses an agent whose program is missing (run.agentMissing), naming it and how to install it', () => {
		const settings = parseRunSettings({ agent: 'codex' });
		assert.throws(
			() => requireAgentProgram(settings, '/nonexistent-folder'),
			(e) =>
				isDeskError(e, 'run.agentMissing') &&
				/Codex \(codex, agent codex\) is not installed/.test(e.message) &&
				/npm install -g @openai\/codex/.test(e.message),
		);
		requireAgentProgram(parseRunSettings({ agents: [{ name: 'shell', command: '/bin/sh' }] }), '');
	});
});
