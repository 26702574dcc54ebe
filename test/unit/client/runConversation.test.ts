import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunDetail } from '../../../server/src/protocol/protocol';
import {
	conversationOf,
	domId,
	inputDocument,
	previewOf,
	renderConversation,
	type ConversationEntry,
	type TextPreview,
} from '../../../client/src/runs/runConversation';
import { renderRunBody, runPageCommands } from '../../../client/src/runs/runPage';
import { runName } from '../../../client/src/runs/runWords';

/** Text an agent chooses: markup, a control sequence, a bidi override. */
const hostile = '<script>alert(1)</script>\u001b[2J\u202eexe.txt';
const hash = (c: string) => c.repeat(64);
const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

const call = (id: string, second: number, tool: string, args: unknown, more: object = {}) => ({
	object_id: id,
	created_at: at(second),
	tool_name: tool,
	args,
	status: 'ok',
	result_summary: `${tool} done`,
	artifacts: [],
	tags: {},
	external_ids: { tool_use_id: `toolu_${id}` },
	...more,
});
const frame = (id: number, second: number, kind: unknown, data: object) => ({
	frame_id: id,
	kind,
	summary: 's',
	data,
	created_at: at(second),
});
const said = (id: number, second: number, text: string, more: object = {}) =>
	frame(id, second, { other: 'agent_message' }, { run: 'run-2', node: 'work', attempt: 1, text, ...more });
const called = (id: number, second: number, invocation: string, node = 'work', attempt = 1) =>
	frame(id, second, 'tool_call', { tool_invocation: invocation, run: 'run-2', node, attempt });

/** The second run of a task: a plan node, a work node whose check failed, and its second attempt. */
function detail(more: Partial<Record<keyof RunDetail, unknown>> = {}, summary: object = {}): RunDetail {
	const output = { store: 'desk-blobs', key: hash('b'), hash: hash('b'), size_bytes: 4200 };
	return {
		run: { object_id: 'run-2', created_at: at(0), commit: 'abc', tags: {} },
		summary: { status: 'validating', at_gate: true, started_at: at(0), patchsets: 2, evidence: 2, ...summary },
		task: {
			object_id: 'task-1',
			title: 'Add a greeting',
			runs: ['run-1', 'run-2'],
			constraints: [],
			acceptance_criteria: [],
		},
		intent: { prompt: 'Add a greeting\nWrite src/greeting.ts.' },
		patchsets: [],
		evidence: [
			{
				object_id: 'ev-1',
				patchset_id: 'ps-1',
				exit_code: 1,
				tool: 'node',
				summary: 'failed (exit 1) in 0.2 s',
				tags: { 'desk.check': 'greeting-exists' },
				report_artifacts: [{ store: 'desk-blobs', key: hash('c'), hash: hash('c') }],
			},
			{
				object_id: 'ev-2',
				patchset_id: 'ps-2',
				exit_code: 0,
				tool: 'node',
				summary: 'passed in 0.1 s',
				tags: { 'desk.check': 'greeting-exists' },
				report_artifacts: [{ store: 'desk-blobs', key: hash('d'), hash: hash('d') }],
			},
		],
		tool_invocations: [
			call(
				'read',
				3,
				'Read',
				{ file_path: 'src/index.ts' },
				{ io_footprint: { paths_read: ['src/index.ts'], paths_written: [] } },
			),
			call(
				'bash',
				4,
				'Bash',
				{ command: 'npm test\nnpm run lint', description: 'Run the tests' },
				{ artifacts: [output] },
			),
			call('task', 5, 'Task', { prompt: 'Look for callers' }),
			call('grep', 6, 'Grep', { pattern: 'greet' }, { parent_invocation: 'task' }),
			call('search', 7, 'mcp__desk__asset_search', { query: 'style guide' }),
			// What the desk recorded of that same call, and a desk call the agent's output does not show.
			call(
				'desk-search',
				7,
				'asset_search',
				{ query: 'style guide' },
				{ tags: { 'desk.tool': 'desk' }, external_ids: { tool_use_id: 'toolu_search' }, result_summary: '2 assets' },
			),
			call(
				'desk-attach',
				12,
				'attach',
				{ path: 'out/report.md' },
				{ tags: { 'desk.tool': 'desk' }, external_ids: {}, result_summary: 'attached' },
			),
			// A call whose frame went (maxFrames), placed by its time.
			call('write', 9, 'Write', { file_path: 'src/greeting.ts', content: 'export const greet = 1;\n' }),
		],
		pipeline: {
			max_frames: 0,
			next_frame_id: 20,
			frames: [
				frame(0, 0, 'intent_analysis', { ticket: 'Add a greeting' }),
				// The run before this one, on the same pipeline: none of it is this run's.
				frame(
					1,
					0,
					{ other: 'agent_message' },
					{ run: 'run-1', node: 'work', attempt: 1, text: 'The first run said this.' },
				),
				said(2, 1, 'I will read the code first.', { node: 'plan' }),
				frame(3, 2, 'step_summary', { node: 'plan', run: 'run-2', steps: ['Write it'] }),
				called(4, 3, 'read'),
				said(5, 3, 'Now the tests.'),
				called(6, 4, 'bash'),
				called(7, 5, 'task'),
				called(8, 6, 'grep'),
				called(9, 7, 'search'),
				frame(10, 10, 'code_change', {
					patchset: 'ps-1',
					touched: ['src/greeting.ts'],
					run: 'run-2',
					node: 'work',
					attempt: 1,
				}),
				frame(11, 11, 'error_recovery', { evidence: ['ev-1'], run: 'run-2', node: 'work', attempt: 1 }),
				said(12, 13, `${'Fixed. '.repeat(10)}`, {
					attempt: 2,
					chars: 9000,
					artifact: { store: 'desk-blobs', key: hash('e'), hash: hash('e') },
				}),
				frame(13, 14, 'code_change', {
					patchset: 'ps-2',
					touched: ['src/greeting.ts'],
					run: 'run-2',
					node: 'work',
					attempt: 2,
				}),
			],
		},
		...more,
	} as unknown as RunDetail;
}

/** Each entry in a word or two: what a person reads, in order. */
function shape(entries: ConversationEntry[]): string[] {
	return entries.map((e) => {
		switch (e.kind) {
			case 'ticket':
				return `ticket ${e.text.split('\n')[0]}`;
			case 'node':
				return `— ${e.node} ${e.attempt}`;
			case 'message':
				return `said ${e.message.text.slice(0, 20).trim()}`;
			case 'call':
				return `call ${e.node.call.tool_name}${e.node.children.map((c) => ` > ${c.call.tool_name}`).join('')}${e.desk ? ` (desk: ${e.desk.tool_name})` : ''}`;
			case 'deskCall':
				return `desk call ${e.call.tool_name}`;
			case 'change':
				return `changed ${e.files.join(', ')}`;
			case 'checks':
				return `checks ${e.evidence.map((v) => `${v.tags['desk.check']} ${v.exit_code}`).join(', ')}`;
			case 'retry':
				return `retry ${e.attempt} after ${e.checks.join(', ')}`;
			case 'note':
				return `note ${e.text}`;
		}
	});
}

const links = { project: 'shop', runId: 'run-2' };

/** The command links of a page: their command and decoded arguments. */
function commandLinks(html: string): Array<{ label: string; command: string; args: unknown[] }> {
	return [...html.matchAll(/<a class="open" href="command:([\w.]+)\?([^"]*)">([^<]*)<\/a>/g)].map((m) => ({
		command: m[1]!,
		args: JSON.parse(decodeURIComponent(m[2]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&'))) as unknown[],
		label: m[3]!,
	}));
}

describe("a run's conversation, as its page shows it", () => {
	it('tells what happened in order: the ticket, each node, what the agent said, its calls with a subagent’s inside, the changes, the checks and the retry; nothing of another run', () => {
		assert.deepEqual(shape(conversationOf(detail())), [
			'ticket Add a greeting',
			'— plan 1',
			'said I will read the code',
			'— work 1',
			'call Read',
			'said Now the tests.',
			'call Bash',
			'call Task > Grep',
			'call mcp__desk__asset_search (desk: asset_search)',
			'call Write',
			'changed src/greeting.ts',
			'checks greeting-exists 1',
			'retry 2 after greeting-exists',
			'desk call attach',
			'— work 2',
			'said Fixed. Fixed. Fixed.',
			'changed src/greeting.ts',
			'checks greeting-exists 0',
		]);
	});

	it('links each call’s input and output, each check’s log and a long message’s whole text to the command that opens it in a tab', () => {
		const page = renderConversation(detail(), links);
		const opened = commandLinks(page);
		for (const link of opened) {
			assert.ok((runPageCommands as readonly string[]).includes(link.command), link.command);
			assert.deepEqual(link.args.slice(0, 2), ['shop', 'run-2']);
		}
		const targets = opened.map((l) => `${l.label}: ${JSON.stringify(l.args[2])}`);
		for (const expected of [
			'Open in a tab: {"call":"bash","part":"input"}',
			'Open in a tab: {"call":"bash","part":"output"}',
			'Open log: {"evidence":"ev-1"}',
			'Open log: {"evidence":"ev-2"}',
			'Open the whole message: {"message":12}',
		]) {
			assert.ok(targets.includes(expected), `${expected} in ${targets.join('; ')}`);
		}
		assert.match(page, /The message goes on \(9,000 characters in all\)\./);
		assert.match(page, /Output · 4\.2 KB/);
		// A command as a command, its other arguments below it.
		assert.match(page, /<pre class="io">\$ npm test\nnpm run lint\n\ndescription: Run the tests<\/pre>/);
		assert.match(page, /Through the desk: asset_search answered — 2 assets/);
		// An MCP tool by its own name, the server it comes from beside it.
		assert.match(page, /<span class="tool">asset_search<\/span><span class="badge">desk tool<\/span>/);
		assert.doesNotMatch(page, /<span class="tool">mcp__/);
		assert.match(page, /Read src\/index\.ts/);
		assert.match(page, /<h2 id="conversation">Conversation <span class="count">3 messages, 7 tool calls<\/span><\/h2>/);
	});

	it("asks for a call's output when it is opened, then shows its beginning; a failure to read it is said", () => {
		const asking = renderConversation(detail(), links);
		assert.match(asking, new RegExp(`<details class="call ok" id="call-bash" data-preview="${hash('b')}">`));
		const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1} ${hostile}`).join('\n');
		const shown = renderConversation(
			detail(),
			links,
			new Map<string, TextPreview>([[hash('b'), { text: lines, partial: true, bytes: 4200 }]]),
		);
		assert.match(shown, /<details class="call ok" id="call-bash">/, 'not asked again');
		assert.match(shown, /line 20 &lt;script&gt;alert\(1\)&lt;\/script&gt;\\x1b\[2J\\u202eexe\.txt\n…<\/pre>/);
		assert.doesNotMatch(shown, /line 21 /);
		const failed = renderConversation(
			detail(),
			links,
			new Map([[hash('b'), { error: 'Blob bbbb is not in the store.' }]]),
		);
		assert.match(failed, /The output cannot be shown: Blob bbbb is not in the store\./);
	});

	it('shows a run at work live: the call under way, and that the agent is working', () => {
		const d = detail(
			{
				tool_invocations: [call('bash', 4, 'Bash', { command: 'sleep 5' }, { result_summary: 'running' })],
				pipeline: { max_frames: 0, next_frame_id: 2, frames: [said(0, 1, 'Waiting a bit.'), called(1, 4, 'bash')] },
			},
			{ status: 'patching', at_gate: false },
		);
		const page = renderConversation(d, links);
		assert.match(
			page,
			/<details class="call running" id="call-bash"><summary><span class="mark running"><\/span><span class="tool">Bash<\/span><span class="brief">sleep 5<\/span><span class="result">running…<\/span>/,
		);
		assert.match(page, /<div class="working"><span class="pulse"><\/span>The agent is working…<\/div><\/div>$/);
	});

	it('shows what the agent said and printed as text, never as markup or controls', () => {
		const d = detail({
			tool_invocations: [
				call(
					hostile,
					4,
					hostile,
					{ command: hostile },
					{ result_summary: hostile, artifacts: [{ store: 'desk-blobs', key: hash('b'), hash: hash('b') }] },
				),
			],
			pipeline: { max_frames: 0, next_frame_id: 2, frames: [said(0, 1, hostile), called(1, 4, hostile)] },
		});
		const page = renderConversation(d, links, new Map([[hash('b'), { text: hostile, partial: false, bytes: 40 }]]));
		assert.doesNotMatch(page, /<script|[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
		assert.match(page, /id="call-_3c_script_3e_alert_28_1_29__3c__2f_script_3e__1b__5b_2J_202e_exe_2e_txt"/);
		assert.equal(domId('call', '0190f3a2-7c1e'), 'call-0190f3a2-7c1e');
	});

	it('says when the setting that bounds the steps kept let earlier messages go', () => {
		const d = detail({ pipeline: { max_frames: 3, next_frame_id: 9, frames: [said(8, 1, 'Last words.')] } });
		assert.match(shape(conversationOf(d))[1]!, /^note Only the last 3 steps of the intent are kept/);
	});
});

describe('a call’s input and output as a person reads them', () => {
	it('gives a tab a command as a command and a file’s content as it is', () => {
		assert.equal(
			inputDocument(call('w', 1, 'Write', { file_path: 'src/a.ts', content: 'line 1\nline 2\n' }) as never),
			'file_path: src/a.ts\ncontent:\nline 1\nline 2\n',
		);
		assert.equal(
			inputDocument(call('b', 1, 'Bash', { command: 'ls -la', timeout: 5 }) as never),
			'$ ls -la\n\ntimeout: 5\n',
		);
	});

	it('previews the first lines of a long text and says it goes on', () => {
		assert.deepEqual(previewOf('a\nb\nc\n', 2), { text: 'a\nb', cut: true });
		assert.deepEqual(previewOf('a\nb\n', 2), { text: 'a\nb', cut: false });
		assert.deepEqual(previewOf('x'.repeat(50), 20, 10), { text: 'x'.repeat(10), cut: true });
	});
});

describe('the tabs of two runs of a task', () => {
	it('are named apart by the run’s place among its task’s runs, on the tab and the page', () => {
		const second = detail();
		const first = detail({ run: { object_id: 'run-1', created_at: at(0), commit: 'abc', tags: {} } });
		assert.equal(runName(first), 'Run 1');
		assert.equal(runName(second), 'Run 2');
		assert.match(renderRunBody(second), /^<h1>Run 2 of “Add a greeting”/);
		const unlisted = detail({ run: { object_id: 'run-9', created_at: at(0), commit: 'abc', tags: {} } });
		assert.equal(runName(unlisted), 'Run 2026-01-01 00:00');
	});
});
