import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentCheck, CardView, SuggestResult } from '../../../server/src/protocol/protocol';
import { agentStatus, cardState, runWith } from '../../../client/src/card/cardState';

/** A name an asset's folder or repository could carry: a control sequence and a bidi override. */
const hostile = 'notes\u001b]0;pwned\u0007\u202egpj.exe';

function view(plugs: unknown[]): CardView {
	return { card: { ticket: 'Add paging' }, plugs } as unknown as CardView;
}

function suggested(suggestions: unknown[], index = { indexed: 3, total: 3 }): SuggestResult {
	return { suggestions, index } as unknown as SuggestResult;
}

describe('what the launch card is sent, built without VS Code', () => {
	it('shows project, plug and suggestion names, reasons and AtGo errors as text: controls and overrides as escapes', () => {
		const state = cardState(
			hostile,
			view([{ id: 'a1', role: 'reference', name: hostile, at_go: { error: hostile } }]),
			suggested([{ asset_id: 'a2', name: hostile, role: 'reference', reason: hostile, named: false, score: 1.5 }]),
		);
		const shown = [
			state.project,
			...state.plugs.flatMap((p) => [p.name, p.atGo]),
			...state.suggestions.flatMap((x) => [x.name, x.reason]),
		];
		for (const text of shown) {
			assert.equal(text, 'notes\\x1b]0;pwned\\x07\\u202egpj.exe');
		}
		assert.equal(state.ticket, 'Add paging', "the ticket is the person's own text, edited in the card");
	});

	it('says which version Go would freeze, and when it would read working changes', () => {
		const state = cardState(
			'shop',
			view([
				{ id: 'g', role: 'target', name: 'shop', at_go: { engine: 'git', version: 7 } },
				{ id: 's', role: 'reference', name: 'notes', at_go: { engine: 'snapshot', version: 4, working_changes: true } },
				{ id: 't', role: 'reference', name: 'spec', at_go: { engine: 'snapshot', version: 2, working_changes: false } },
			]),
			suggested([]),
		);
		assert.deepEqual(
			state.plugs.map((p) => [p.atGo, p.workingChanges]),
			[
				['go would freeze v7', false],
				['working changes: go would read them as v4', true],
				['go would freeze v2', false],
			],
		);
	});

	it('says the suggestions come from a partial index only while it is one, and keeps a score only when there is one', () => {
		const partial = cardState(
			'shop',
			view([]),
			suggested([{ asset_id: 'a', name: 'a', role: 'reference', reason: 'r', named: true }], { indexed: 2, total: 5 }),
		);
		assert.deepEqual(partial.indexing, { indexed: 2, total: 5 });
		assert.equal('score' in partial.suggestions[0]!, false);
		assert.equal('indexing' in cardState('shop', view([]), suggested([], { indexed: 5, total: 5 })), false);
	});

	it('says which agent Go starts and where', () => {
		assert.equal(
			runWith({ agents: [{ name: 'claude', format: 'claude-stream-json' }, { name: 'codex' }] }),
			'Go runs agent claude in the shared checkout, instructions installed as Claude Code skills',
		);
		assert.equal(
			runWith({ agent: 'codex', agents: [{ name: 'claude' }], isolation: 'worktree' }),
			'Go runs agent codex in a worktree of its own',
			'an agent not configured: the server refuses it at Go',
		);
		assert.equal(
			runWith({ agent: 'aider', agents: [{ name: 'claude' }, { name: 'aider', format: 'text' }] }),
			'Go runs agent aider in the shared checkout, instructions inlined in the prompt',
		);
		assert.equal(
			runWith({ agents: [{ name: 'quiet', format: 'claude-stream-json', skills: 'none' }] }),
			'Go runs agent quiet in the shared checkout, instructions not given',
		);
		assert.equal(
			runWith({ agents: [{ name: 'odd', skills: 'prompt' }] }),
			'Go runs agent odd in the shared checkout',
			'a skills setting the server refuses at Go',
		);
		assert.equal(runWith({ agents: [] }), 'No agent is configured (setting agentDesk.agents).');
		assert.equal(runWith({ agents: 'claude' }), 'No agent is configured (setting agentDesk.agents).');
	});

	it('says whether the agent can start: installed and signed in, not signed in with its sign-in, not installed with its install, unknown', () => {
		const base: AgentCheck = {
			agent: 'claude',
			command: 'claude',
			program: '/usr/local/bin/claude',
			product: 'Claude Code',
			version: '2.1.3 (Claude Code)',
			label: 'Claude Code 2.1.3',
			login: 'signed-in',
			login_detail: 'with a Claude account (~/.claude/.credentials.json)',
			fixes: [],
			checked_at: '2026-12-03T12:00:00.000Z',
		};
		assert.deepEqual(agentStatus(base), {
			state: 'ready',
			text: 'claude: Claude Code 2.1.3, signed in',
			detail: 'with a Claude account (~/.claude/.credentials.json)',
			fixes: [],
		});
		const signIn = agentStatus({
			...base,
			login: 'not-signed-in',
			login_detail: 'no sign-in in ~/.claude/.credentials.json',
			fixes: [{ kind: 'terminal', title: 'Sign In to Claude Code', command: 'claude', hint: 'type /login in it' }],
		});
		assert.equal(signIn.state, 'signIn');
		assert.equal(signIn.text, 'claude: Claude Code 2.1.3 is not signed in');
		assert.equal(signIn.detail, 'no sign-in in ~/.claude/.credentials.json. A run would stop at once.');
		assert.deepEqual(signIn.fixes, [
			{ title: 'Sign In to Claude Code', hint: 'Opens a terminal running claude: type /login in it.' },
		]);
		const { program: _program, version: _version, ...missingCheck } = base;
		const missing = agentStatus({
			...missingCheck,
			agent: 'codex',
			command: 'codex',
			product: 'Codex',
			label: 'Codex',
			login: 'unknown',
			fixes: [
				{ kind: 'terminal', title: 'Install Codex', command: 'npm install -g @openai/codex' },
				{ kind: 'setting', title: 'Choose Another Agent', setting: 'agentDesk.runs.agent' },
			],
		});
		assert.deepEqual(
			[missing.state, missing.text, missing.detail, missing.fixes.map((f) => f.hint)],
			[
				'missing',
				'codex: Codex is not installed',
				"codex is not in the PATH's absolute folders: Go would be refused.",
				['Opens a terminal running npm install -g @openai/codex.', 'Opens the setting agentDesk.runs.agent.'],
			],
		);
		const unknown = agentStatus({
			agent: 'mine',
			command: '/opt/bin/agent\u202e',
			program: '/opt/bin/agent\u202e',
			label: '/opt/bin/agent\u202e',
			login: 'unknown',
			login_detail: 'the desk cannot tell whether this program needs a sign-in',
			fixes: [],
			checked_at: base.checked_at,
		});
		assert.deepEqual(
			[unknown.state, unknown.text, unknown.detail],
			[
				'unknown',
				'mine: /opt/bin/agent\\u202e, installed',
				'Sign-in: the desk cannot tell whether this program needs a sign-in.',
			],
			'a command is shown inert',
		);
	});
});
