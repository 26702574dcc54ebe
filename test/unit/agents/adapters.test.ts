import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { createOutputParser, parseAll } from '../../../server/src/agents/adapters/index';
import { agentOutputFormats, type AgentEvent, type AgentOutputFormat } from '../../../server/src/agents/events';
import { findProjectRoot } from '../../helpers/temp';

// The fixtures are real CLI output committed by public repositories (see SOURCES.md beside them).
const transcripts = path.join(findProjectRoot(), 'test/fixtures/transcripts');

type EventOf<K extends AgentEvent['kind']> = Extract<AgentEvent, { kind: K }>;

function ofKind<K extends AgentEvent['kind']>(events: AgentEvent[], kind: K): EventOf<K>[] {
	return events.filter((event): event is EventOf<K> => event.kind === kind);
}

function readTranscript(name: string): string {
	return fs.readFileSync(path.join(transcripts, name), 'utf8');
}

/** The events of lines pushed one by one, without end(): what a run shows while it is going. */
function pushAll(format: AgentOutputFormat, lines: string[]): AgentEvent[] {
	const parser = createOutputParser(format);
	return lines.flatMap((line) => parser.push(line));
}

/** Every started call finishes exactly once, after it started, and nothing finishes unstarted. */
function assertCallsPaired(events: AgentEvent[]): void {
	const open = new Set<string>();
	const finished = new Set<string>();
	for (const event of events) {
		if (event.kind === 'tool_started') {
			assert.ok(!open.has(event.call_id) && !finished.has(event.call_id), `call ${event.call_id} started twice`);
			open.add(event.call_id);
		} else if (event.kind === 'tool_finished') {
			assert.ok(open.delete(event.call_id), `call ${event.call_id} finished without being open`);
			finished.add(event.call_id);
		}
	}
	assert.deepEqual([...open], [], 'calls never finished');
}

const fixtureFormats: Array<{ folder: string; format: AgentOutputFormat }> = [
	{ folder: 'claude', format: 'claude-stream-json' },
	{ folder: 'codex', format: 'codex-json' },
	{ folder: 'gemini', format: 'gemini-stream-json' },
];

const fixtures = fixtureFormats.flatMap(({ folder, format }) =>
	fs
		.readdirSync(path.join(transcripts, folder))
		.filter((name) => name.endsWith('.jsonl'))
		.sort()
		.map((name) => ({ name: `${folder}/${name}`, format })),
);

describe('Claude Code stream-json fixtures', () => {
	it('claude/ritual-toolrich-2.1.205: one Bash call, hooks and rate limits skipped quietly, the result with cache tokens and cost', () => {
		const events = parseAll('claude-stream-json', readTranscript('claude/ritual-toolrich-2.1.205.jsonl'));
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		const [session, ...otherSessions] = ofKind(events, 'session');
		assert.deepEqual(otherSessions, []);
		assert.equal(session?.provider, 'anthropic');
		assert.equal(session?.model, 'claude-fable-5');
		assert.equal(session?.session_id, '7da1eda9-0990-4744-a762-c6769decfa45');
		assert.equal(session?.version, '2.1.205');
		assert.equal(session?.cwd, '/home/asm_miner/Documents/project/ritual');
		assert.equal(session?.tools?.length, 31);
		assert.ok(session?.tools?.includes('mcp__codex__codex'));
		assert.deepEqual(ofKind(events, 'tool_started'), [
			{
				kind: 'tool_started',
				call_id: 'toolu_01B5zCU4m16rNaXFGrJruCje',
				tool: 'Bash',
				args: { command: 'echo ritual-fixture', description: 'Echo ritual-fixture' },
				paths_read: [],
				paths_written: [],
			},
		]);
		assert.deepEqual(ofKind(events, 'tool_finished'), [
			{
				kind: 'tool_finished',
				call_id: 'toolu_01B5zCU4m16rNaXFGrJruCje',
				status: 'ok',
				summary: 'ritual-fixture',
				output: 'ritual-fixture',
			},
		]);
		assert.deepEqual(
			ofKind(events, 'message').map((message) => message.text),
			['done'],
		);
		// Three assistant lines, two messages: the first message's usage is repeated on its tool_use line.
		assert.deepEqual(
			ofKind(events, 'usage').map((usage) => [usage.input_tokens, usage.output_tokens]),
			[
				[3900 + 773 + 18381, 2],
				[27 + 4025 + 19154, 1],
			],
		);
		const totals = {
			input_tokens: 3927 + 4798 + 37535,
			output_tokens: 118,
			cache_read_tokens: 37535,
			cache_creation_tokens: 4798,
			cost_usd: 0.178665,
		};
		assert.deepEqual(ofKind(events, 'result'), [
			{
				kind: 'result',
				ok: true,
				text: 'done',
				usage: totals,
				models: [{ model: 'claude-fable-5', ...totals }],
				turns: 2,
				duration_ms: 12272,
				model: 'claude-fable-5',
			},
		]);
		assert.deepEqual(ofKind(events, 'usage_incomplete'), [], 'the result reports the usage');
	});

	it('claude/agentbench-windows-2.1.245: Write names the file it wrote, the result line not starting with "type" is read, the main model is not the first key', () => {
		const events = parseAll('claude-stream-json', readTranscript('claude/agentbench-windows-2.1.245.jsonl'));
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assertCallsPaired(events);
		const session = ofKind(events, 'session')[0];
		assert.equal(session?.model, 'claude-sonnet-5');
		assert.equal(session?.cwd, 'C:\\tmp\\cc-stream');
		assert.equal(session?.version, '2.1.245');
		const started = ofKind(events, 'tool_started');
		assert.deepEqual(
			started.map((call) => [call.tool, call.paths_written]),
			[
				['Write', ['C:\\tmp\\cc-stream\\t.txt']],
				['Bash', []],
			],
		);
		assert.deepEqual(started[0]?.args, { file_path: 'C:\\tmp\\cc-stream\\t.txt', content: 'hi' });
		const [write, bash] = ofKind(events, 'tool_finished');
		assert.equal(write?.status, 'ok');
		assert.match(write?.summary ?? '', /^File created successfully at: C:\\tmp\\cc-stream\\t\.txt/);
		assert.deepEqual(bash, {
			kind: 'tool_finished',
			call_id: 'toolu_01HDogverAUrhwAcRSEmRJTa',
			status: 'ok',
			summary: 'cc_err.log',
			output: 'cc_err.log\ncc_stream.jsonl\nt.txt\nws',
		});
		assert.equal(ofKind(events, 'usage').length, 3, 'four assistant lines, three message ids');
		// modelUsage lists claude-haiku-4-5-20251001 first; the run's model is the one that cost the most.
		// The result's usage is the main agent's (with its 14 thinking tokens); the helper model is only per model.
		const main = {
			input_tokens: 6 + 9209 + 84312,
			output_tokens: 180,
			cache_read_tokens: 84312,
			cache_creation_tokens: 9209,
			reasoning_tokens: 14,
		};
		assert.deepEqual(ofKind(events, 'result'), [
			{
				kind: 'result',
				ok: true,
				text: 'DONE',
				usage: { ...main, cost_usd: 0.0564934 },
				models: [
					{
						model: 'claude-haiku-4-5-20251001',
						input_tokens: 918,
						output_tokens: 13,
						cache_read_tokens: 0,
						cache_creation_tokens: 0,
						cost_usd: 0.000983,
					},
					{ model: 'claude-sonnet-5', ...main, cost_usd: 0.0555104 },
				],
				turns: 3,
				duration_ms: 6629,
				model: 'claude-sonnet-5',
			},
		]);
		assert.deepEqual(events.at(-1)?.kind, 'result');
	});

	it('claude/zenvi-partial-messages-mcp-2.1.195: partial stream_events are skipped, ToolSearch references and the MCP reply are read', () => {
		const events = parseAll('claude-stream-json', readTranscript('claude/zenvi-partial-messages-mcp-2.1.195.jsonl'));
		assert.deepEqual(ofKind(events, 'unparsed'), [], '28 stream_event and 3 status lines say nothing new');
		assertCallsPaired(events);
		assert.equal(ofKind(events, 'session')[0]?.model, 'claude-opus-4-8[1m]');
		assert.deepEqual(
			ofKind(events, 'tool_started').map((call) => [call.tool, call.args]),
			[
				['ToolSearch', { query: 'list_files_tool list files editor', max_results: 5 }],
				['mcp__zenvi-editor__list_files_tool', {}],
			],
		);
		const [search, listFiles] = ofKind(events, 'tool_finished');
		assert.equal(
			search?.output,
			'mcp__zenvi-editor__list_files_tool\nCronList\nListMcpResourcesTool\nReadMcpResourceDirTool\nDesignSync',
		);
		assert.equal(search?.summary, 'mcp__zenvi-editor__list_files_tool');
		assert.equal(listFiles?.output, 'FIXTURE_FILES: intro.mp4, music.wav, logo.png');
		const finalText = 'There are **3** files: `intro.mp4`, `music.wav`, and `logo.png`.';
		assert.deepEqual(
			ofKind(events, 'message'),
			[{ kind: 'message', text: finalText }],
			'the text deltas do not repeat the message',
		);
		// Three messages: each counted once from its assistant lines, then again, finally, from its message_delta.
		const usage = ofKind(events, 'usage');
		const final = new Map(usage.map((u) => [u.message_id, u]));
		assert.equal(final.size, 3);
		assert.deepEqual(
			[...final.values()].map((u) => [u.output_tokens, u.reasoning_tokens, u.partial]),
			[
				[143, 60, undefined],
				[58, 16, undefined],
				[33, 0, undefined],
			],
		);
		assert.equal(
			[...final.values()].reduce((n, u) => n + u.output_tokens, 0),
			234,
			"the final counts add up to the result's output",
		);
		const [result] = ofKind(events, 'result');
		assert.equal(result?.text, finalText);
		assert.deepEqual(result?.usage, {
			input_tokens: 3634 + 12021 + 52482,
			output_tokens: 234,
			cache_read_tokens: 52482,
			cache_creation_tokens: 12021,
			cost_usd: 0.12599325,
		});
		assert.deepEqual(
			result?.models?.map((m) => [m.model, m.input_tokens, m.output_tokens, m.cost_usd]),
			[
				['claude-haiku-4-5-20251001', 521, 16, 0.000601],
				['claude-opus-4-8[1m]', 3634 + 12021 + 52482, 234, 0.12539224999999998],
			],
		);
		assert.deepEqual([result?.turns, result?.duration_ms, result?.model], [3, 14947, 'claude-opus-4-8[1m]']);
	});

	it('claude-session/agentcmd-session-2.0.26 (a session file, not stream-json) still gives its tool calls; its snapshot lines are unparsed', () => {
		const events = parseAll('claude-stream-json', readTranscript('claude-session/agentcmd-session-2.0.26.jsonl'));
		assertCallsPaired(events);
		const started = ofKind(events, 'tool_started');
		assert.deepEqual(
			started.map((call) => call.tool),
			[
				'Read',
				'Read',
				'Read',
				'AskUserQuestion',
				'ExitPlanMode',
				'ExitPlanMode',
				'TodoWrite',
				'Edit',
				'TodoWrite',
				'Edit',
			],
		);
		const commandMenu =
			'/Users/jnarowski/Dev/sourceborn/src/agent-workflows-monorepo-v2/apps/web/src/client/components/CommandMenu.tsx';
		assert.deepEqual(started[0]?.paths_read, [commandMenu]);
		assert.deepEqual(
			started.filter((call) => call.tool === 'Edit').map((call) => call.paths_written),
			[[commandMenu], [commandMenu]],
		);
		const finished = ofKind(events, 'tool_finished');
		assert.deepEqual(
			finished.filter((call) => call.status === 'error').map((call) => call.call_id),
			['toolu_012Gdzb9zzjepNQXFUz1kGkz'],
			'the rejected ExitPlanMode',
		);
		assert.equal(
			finished.find((call) => call.call_id === 'toolu_017MkAKfdSpTSButFXSQeHkH')?.output,
			'[image]',
			'a screenshot is named, not copied',
		);
		const unparsed = ofKind(events, 'unparsed');
		assert.equal(unparsed.length, 6);
		assert.ok(
			unparsed.every((line) => line.reason === "unknown type 'file-history-snapshot'" && line.line.length <= 500),
		);
		assert.deepEqual(ofKind(events, 'session'), []);
		assert.deepEqual(ofKind(events, 'result'), []);
		assert.ok(
			!ofKind(events, 'message').some((message) => message.text.includes('[Request interrupted')),
			"the user's own text is not the agent's",
		);
	});
});

describe('Codex exec --json fixtures', () => {
	it('codex/agentcmd-file-change-0.46: a file change seen only completed is an apply_patch call that wrote the file', () => {
		const events = parseAll('codex-json', readTranscript('codex/agentcmd-file-change-0.46.jsonl'));
		const written = ['/private/tmp/codex-research-test/hello.txt'];
		const text = 'Created `hello.txt` containing `Hello from Codex`.';
		assert.deepEqual(events, [
			{ kind: 'session', provider: 'openai', session_id: '019a2d7a-8e1c-7111-b1a6-8cec551a55a0' },
			{
				kind: 'tool_started',
				call_id: 'item_1',
				tool: 'apply_patch',
				args: { changes: [{ path: written[0], kind: 'add' }] },
				paths_read: [],
				paths_written: written,
			},
			// The file it wrote is named at the call's start, not again at its end.
			{ kind: 'tool_finished', call_id: 'item_1', status: 'ok', summary: `add ${written[0]}` },
			{ kind: 'message', text },
			{ kind: 'usage', input_tokens: 6008, output_tokens: 51, cache_read_tokens: 4096, message_id: 'turn-1' },
			{ kind: 'result', ok: true, text, turns: 1 },
		]);
	});

	it('codex/orch-readonly-ls: a commentary message, one shell call with its output, usage with cached tokens counted once', () => {
		const events = parseAll('codex-json', readTranscript('codex/orch-readonly-ls.jsonl'));
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assertCallsPaired(events);
		assert.deepEqual(
			ofKind(events, 'message').map((message) => message.text),
			['I’ll inspect the repository without making changes.', 'README.md, calc.py'],
		);
		const [call] = ofKind(events, 'tool_started');
		assert.deepEqual(call?.args, { command: `/bin/zsh -lc "rg --files -g '"'!*'"' -g '*' | sort"` });
		assert.equal(call?.tool, 'shell');
		const [finished] = ofKind(events, 'tool_finished');
		assert.equal(finished?.status, 'ok');
		assert.equal(finished?.summary, '.git/COMMIT_EDITMSG');
		assert.ok(finished?.output?.endsWith('README.md\ncalc.py\n'));
		assert.deepEqual(ofKind(events, 'usage'), [
			{
				kind: 'usage',
				input_tokens: 29879,
				output_tokens: 175,
				cache_read_tokens: 25088,
				cache_creation_tokens: 0,
				reasoning_tokens: 43,
				message_id: 'turn-1',
			},
		]);
		assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', ok: true, text: 'README.md, calc.py', turns: 1 }]);
	});

	it('codex/takopi-explore-bridge: fifteen shell calls paired by item id, reasoning skipped, the final answer as the result', () => {
		const events = parseAll('codex-json', readTranscript('codex/takopi-explore-bridge.jsonl'));
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assertCallsPaired(events);
		const started = ofKind(events, 'tool_started');
		assert.deepEqual(
			started.map((call) => call.call_id),
			[...Array.from({ length: 14 }, (_, i) => `item_${i}`), 'item_17'],
		);
		assert.ok(
			started.every(
				(call) => call.tool === 'shell' && JSON.stringify(call.args).startsWith('{"command":"/bin/zsh -lc '),
			),
		);
		const finished = ofKind(events, 'tool_finished');
		assert.ok(finished.every((call) => call.status === 'ok'));
		assert.equal(finished[0]?.summary, '__pycache__\t\t\treadme.md', 'the PTY line end \\r is not part of the summary');
		assert.equal(finished[2]?.summary, 'Total output lines: 376', "Codex's own truncation note heads the output");
		const messages = ofKind(events, 'message');
		assert.equal(messages.length, 1);
		assert.match(messages[0]?.text ?? '', /^- This is a small Python CLI \(`exec-bridge`\)/);
		assert.deepEqual(ofKind(events, 'usage'), [
			{ kind: 'usage', input_tokens: 76296, output_tokens: 2682, cache_read_tokens: 57728, message_id: 'turn-1' },
		]);
		assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', ok: true, text: messages[0]?.text, turns: 1 }]);
	});
});

describe('Gemini CLI stream-json fixture', () => {
	it('gemini/simmer-probe: streamed pieces become one message per turn, read_file reads its file, the result names the busiest model', () => {
		const events = parseAll('gemini-stream-json', readTranscript('gemini/simmer-probe.jsonl'));
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assertCallsPaired(events);
		assert.deepEqual(ofKind(events, 'session'), [
			{ kind: 'session', provider: 'google', model: 'auto', session_id: 'probe-session' },
		]);
		assert.deepEqual(
			events.map((event) => event.kind),
			['session', 'message', 'tool_started', 'tool_finished', 'tool_started', 'tool_finished', 'message', 'result'],
		);
		assert.deepEqual(
			ofKind(events, 'message').map((message) => message.text),
			[
				'I will execute a shell command to write "gemini probe ok" into a file named `hello.txt` in the workspace directory. This modifies the filesystem by creating a new file.',
				'Probe complete.',
			],
		);
		assert.deepEqual(
			ofKind(events, 'tool_started').map((call) => [call.tool, call.paths_read, call.paths_written]),
			[
				['run_shell_command', [], []],
				['read_file', ['/workspace/hello.txt'], []],
			],
		);
		assert.ok(
			ofKind(events, 'tool_finished').every(
				(call) => call.status === 'ok' && call.summary === '(no output)' && call.output === undefined,
			),
		);
		assert.deepEqual(ofKind(events, 'result'), [
			{
				kind: 'result',
				ok: true,
				text: 'Probe complete.',
				// The total (66,983) counts 1,342 tokens as neither input nor output: thoughts and tool-use prompts.
				usage: { input_tokens: 65422, output_tokens: 219, cache_read_tokens: 32602, other_tokens: 1342 },
				models: [
					{
						model: 'gemini-3.1-flash-lite',
						input_tokens: 805,
						output_tokens: 52,
						cache_read_tokens: 0,
						other_tokens: 287,
					},
					{
						model: 'gemini-3.5-flash',
						input_tokens: 64617,
						output_tokens: 167,
						cache_read_tokens: 32602,
						other_tokens: 1055,
					},
				],
				duration_ms: 11631,
				model: 'gemini-3.5-flash',
			},
		]);
	});
});

describe('damaged output', () => {
	// Bytes that are not UTF-8, decoded as a pipe would decode them.
	const garbled = Buffer.from([0x7b, 0x22, 0x74, 0xff, 0xfe, 0x22, 0x3a, 0xc3, 0x28, 0x0b]).toString('utf8');

	for (const fixture of fixtures) {
		it(`${fixture.name}: cut in the middle of any line, with a garbled line inserted, keeps the calls before the cut and reports both bad lines`, () => {
			const lines = readTranscript(fixture.name).split('\n').slice(0, -1);
			for (let cut = 0; cut < lines.length; cut++) {
				const before = lines.slice(0, cut);
				const half = lines[cut]!.slice(0, Math.floor(lines[cut]!.length / 2));
				const damaged = [...before.slice(0, Math.floor(cut / 2)), garbled, ...before.slice(Math.floor(cut / 2)), half];
				const expected = pushAll(fixture.format, before);
				const events = parseAll(fixture.format, damaged.join('\n'));
				const where = `cut at line ${cut + 1}`;
				assert.deepEqual(ofKind(events, 'tool_started'), ofKind(expected, 'tool_started'), where);
				assert.deepEqual(
					ofKind(events, 'tool_finished').filter((call) => call.summary !== 'did not finish'),
					ofKind(expected, 'tool_finished'),
					where,
				);
				assertCallsPaired(events);
				const unparsed = ofKind(events, 'unparsed');
				assert.deepEqual(
					unparsed.map((line) => line.line),
					[garbled, half.slice(0, 500)],
					where,
				);
				assert.ok(
					unparsed.every((line) => line.reason.startsWith('not JSON')),
					where,
				);
			}
		});
	}

	const malformed: Array<{ format: AgentOutputFormat; line: string; reason: RegExp }> = [
		{ format: 'claude-stream-json', line: '[1,2]', reason: /not a JSON object but an array/ },
		{ format: 'claude-stream-json', line: '{"subtype":"init"}', reason: /no 'type'/ },
		{ format: 'claude-stream-json', line: '{"type":"assistant"}', reason: /'message' is missing/ },
		{
			format: 'claude-stream-json',
			line: '{"type":"assistant","message":{"content":"hi"}}',
			reason: /'content' is not an array/,
		},
		{
			format: 'claude-stream-json',
			line: '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}',
			reason: /'id' is missing/,
		},
		{
			format: 'claude-stream-json',
			line: '{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}',
			reason: /'tool_use_id' is missing/,
		},
		{
			format: 'claude-stream-json',
			line: '{"type":"system","subtype":"init","tools":"Bash"}',
			reason: /'tools' is not an array/,
		},
		{
			format: 'claude-stream-json',
			line: '{"type":"result","subtype":"success","total_cost_usd":"0.1"}',
			reason: /'total_cost_usd' is not a number/,
		},
		{ format: 'claude-stream-json', line: '{"type":"result"}', reason: /'subtype' is missing/ },
		{ format: 'codex-json', line: '42', reason: /not a JSON object but a number/ },
		{ format: 'codex-json', line: '{"type":"thread.started","thread_id":7}', reason: /'thread_id' is not a string/ },
		{ format: 'codex-json', line: '{"type":"turn.completed"}', reason: /'usage' is missing/ },
		{
			format: 'codex-json',
			line: '{"type":"turn.completed","usage":{"input_tokens":"1","output_tokens":2}}',
			reason: /'input_tokens' is not a number/,
		},
		{
			format: 'codex-json',
			line: '{"type":"item.completed","item":{"id":"i","type":"command_execution"}}',
			reason: /'command' is missing/,
		},
		{
			format: 'codex-json',
			line: '{"type":"item.completed","item":{"id":"i","type":"collab_call"}}',
			reason: /unknown item type 'collab_call'/,
		},
		{ format: 'codex-json', line: '{"type":"session.configured"}', reason: /unknown type 'session.configured'/ },
		{ format: 'gemini-stream-json', line: 'null', reason: /not a JSON object but null/ },
		{ format: 'gemini-stream-json', line: '{"type":"message","role":"assistant"}', reason: /'content' is missing/ },
		{
			format: 'gemini-stream-json',
			line: '{"type":"tool_use","tool_name":"read_file"}',
			reason: /'tool_id' is missing/,
		},
		{
			format: 'gemini-stream-json',
			line: '{"type":"result","status":"success","stats":[]}',
			reason: /'stats' is not an object/,
		},
		{ format: 'desk-jsonl', line: '"text"', reason: /not a JSON object but a string/ },
	];

	for (const { format, line, reason } of malformed) {
		it(`${format}: ${line} is unparsed (${reason.source}) and the lines after it still count`, () => {
			const events = parseAll(format, `${line}\n\n${validLine[format]}\n`);
			assert.equal(events[0]?.kind, 'unparsed');
			assert.match(events[0]?.kind === 'unparsed' ? events[0].reason : '', reason);
			assert.equal(events[0]?.kind === 'unparsed' ? events[0].line : '', line);
			assert.ok(events.length > 1 && events.slice(1).every((event) => event.kind !== 'unparsed'));
		});
	}

	it('a line that is malformed after a valid block leaves no half-read call behind', () => {
		const line =
			'{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"a","name":"Read","input":{}},{"type":"tool_use","name":"Bash"}]}}';
		const events = parseAll('claude-stream-json', line);
		assert.deepEqual(
			events.map((event) => event.kind),
			['unparsed'],
		);
	});

	it('an unparsed line keeps at most 500 characters and no carriage return', () => {
		const long = `{"type":"assistant","message":{"content":"${'x'.repeat(2000)}"}}`;
		const [event] = parseAll('claude-stream-json', long);
		assert.equal(event?.kind === 'unparsed' ? event.line : '', long.slice(0, 500));
		const [crLine] = createOutputParser('codex-json').push('oops\r');
		assert.equal(crLine?.kind === 'unparsed' ? crLine.line : '', 'oops');
	});

	it('no format throws on random lines cut from the fixtures (property test against the rule "never throw")', () => {
		const pieces = fixtures.map((fixture) => readTranscript(fixture.name)).join('\n');
		let seed = 20240611;
		const random = () => {
			// A fixed linear congruential generator: the same lines on every run.
			seed = (seed * 1103515245 + 12345) % 2147483648;
			return seed / 2147483648;
		};
		for (const format of agentOutputFormats) {
			const parser = createOutputParser(format);
			const events: AgentEvent[] = [];
			for (let i = 0; i < 500; i++) {
				const start = Math.floor(random() * pieces.length);
				events.push(...parser.push(pieces.slice(start, start + Math.floor(random() * 1000)).replace(/\n/g, ' ')));
			}
			events.push(...parser.end());
			assert.ok(
				events.every((event) => event.kind !== 'unparsed' || (event.line.length <= 500 && event.reason !== '')),
				format,
			);
		}
	});
});

const validLine: Record<AgentOutputFormat, string> = {
	'claude-stream-json': '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"still here"}]}}',
	'codex-json': '{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"still here"}}',
	'gemini-stream-json': '{"type":"message","role":"assistant","content":"still here"}',
	'desk-jsonl': '{"type":"message","text":"still here"}',
	text: 'still here',
};

describe('claude-stream-json beyond the fixtures', () => {
	it('a failed call, content blocks with an image, and an error result', () => {
		const events = parseAll(
			'claude-stream-json',
			[
				'{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Grep","input":{"pattern":"x","path":"src"}},{"type":"tool_use","id":"t2","name":"NotebookEdit","input":{"notebook_path":"a.ipynb"}}],"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}}',
				'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"\\nno such dir\\nsecond"},{"type":"image","source":{}}]}]}}',
				'{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":9,"errors":["max turns reached"]}',
			].join('\n'),
		);
		assert.deepEqual(events, [
			{
				kind: 'tool_started',
				call_id: 't1',
				tool: 'Grep',
				args: { pattern: 'x', path: 'src' },
				paths_read: ['src'],
				paths_written: [],
			},
			{
				kind: 'tool_started',
				call_id: 't2',
				tool: 'NotebookEdit',
				args: { notebook_path: 'a.ipynb' },
				paths_read: [],
				paths_written: ['a.ipynb'],
			},
			{
				kind: 'usage',
				input_tokens: 15,
				output_tokens: 3,
				cache_read_tokens: 5,
				model: 'claude-x',
				message_id: 'm1',
				partial: true,
			},
			{
				kind: 'tool_finished',
				call_id: 't1',
				status: 'error',
				summary: 'no such dir',
				output: '\nno such dir\nsecond\n[image]',
			},
			{ kind: 'result', ok: false, text: 'max turns reached', turns: 9 },
			{ kind: 'tool_finished', call_id: 't2', status: 'error', summary: 'did not finish' },
			{
				kind: 'usage_incomplete',
				reason: 'Claude Code printed no result reporting its usage after its last message (cut, killed or interrupted)',
			},
		]);
	});

	it('a summary is cut to 200 characters', () => {
		const events = parseAll(
			'claude-stream-json',
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"${'y'.repeat(300)}"}]}}`,
		);
		const [finished] = ofKind(events, 'tool_finished');
		assert.equal(finished?.summary.length, 200);
		assert.equal(finished?.output?.length, 300);
	});
});

describe('codex-json beyond the fixtures', () => {
	const start = ['{"type":"thread.started","thread_id":"th"}', '{"type":"turn.started"}'];

	it('"Reconnecting..." errors followed by a completed turn do not fail the run', () => {
		const events = parseAll(
			'codex-json',
			[
				...start,
				'{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}',
				'{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"OK"}}',
				'{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}',
			].join('\n'),
		);
		assert.deepEqual(events.at(-1), { kind: 'result', ok: true, text: 'OK', turns: 1 });
		assert.equal(ofKind(events, 'result').length, 1);
	});

	it('an error that no completed turn follows fails the run; a call left running did not finish', () => {
		const events = parseAll(
			'codex-json',
			[
				...start,
				'{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"make","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
				'{"type":"error","message":"stream disconnected"}',
			].join('\n'),
		);
		assert.deepEqual(events.slice(-3), [
			{ kind: 'tool_finished', call_id: 'item_0', status: 'error', summary: 'did not finish' },
			{ kind: 'usage_incomplete', reason: "Codex's turn 1 never reported its usage (turn.completed or turn.failed)" },
			{ kind: 'result', ok: false, text: 'stream disconnected' },
		]);
	});

	it('turn.failed is the result, once', () => {
		const events = parseAll(
			'codex-json',
			[...start, '{"type":"turn.failed","error":{"message":"quota exceeded"}}', '{"type":"turn.failed"}'].join('\n'),
		);
		assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', ok: false, text: 'quota exceeded' }]);
	});

	it('a failing command, an MCP call, a web search, a failed patch and a todo list', () => {
		const events = parseAll(
			'codex-json',
			[
				...start,
				'{"type":"item.started","item":{"id":"c","type":"command_execution","command":"npm test","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
				'{"type":"item.updated","item":{"id":"c","type":"command_execution","command":"npm test","aggregated_output":"run","exit_code":null,"status":"in_progress"}}',
				'{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"npm test","aggregated_output":"\\n1 failing\\n","exit_code":1,"status":"failed"}}',
				'{"type":"item.completed","item":{"id":"d","type":"command_execution","command":"rm -rf /","aggregated_output":"","status":"declined"}}',
				'{"type":"item.started","item":{"id":"m","type":"mcp_tool_call","server":"fs","tool":"read","arguments":{"path":"a"},"result":null,"error":null,"status":"in_progress"}}',
				'{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"fs","tool":"read","arguments":{"path":"a"},"result":{"content":[{"type":"text","text":"A"}],"structured_content":null},"error":null,"status":"completed"}}',
				'{"type":"item.completed","item":{"id":"w","type":"web_search","query":"node test runner"}}',
				'{"type":"item.completed","item":{"id":"p","type":"file_change","changes":[{"path":"a.ts","kind":"update"},{"path":"b.ts","kind":"delete"}],"status":"failed"}}',
				'{"type":"item.started","item":{"id":"t","type":"todo_list","items":[{"text":"read","completed":false},{"text":"fix","completed":false}]}}',
				'{"type":"item.updated","item":{"id":"t","type":"todo_list","items":[{"text":"read","completed":true},{"text":"fix","completed":false}]}}',
				'{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"thinking"}}',
				'{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":90,"output_tokens":20}}',
			].join('\n'),
		);
		assertCallsPaired(events);
		assert.deepEqual(
			ofKind(events, 'tool_started').map((call) => [call.call_id, call.tool, call.args, call.paths_written]),
			[
				['c', 'shell', { command: 'npm test' }, []],
				['d', 'shell', { command: 'rm -rf /' }, []],
				['m', 'mcp__fs__read', { path: 'a' }, []],
				['w', 'web_search', { query: 'node test runner' }, []],
				[
					'p',
					'apply_patch',
					{
						changes: [
							{ path: 'a.ts', kind: 'update' },
							{ path: 'b.ts', kind: 'delete' },
						],
					},
					['a.ts', 'b.ts'],
				],
			],
		);
		assert.deepEqual(
			ofKind(events, 'tool_finished').map((call) => [call.call_id, call.status, call.summary, call.output]),
			[
				['c', 'error', 'exit code 1: 1 failing', '\n1 failing\n'],
				['d', 'error', 'declined', undefined],
				['m', 'ok', 'A', 'A'],
				['w', 'ok', 'node test runner', undefined],
				['p', 'error', 'update a.ts, delete b.ts', undefined],
			],
		);
		assert.deepEqual(ofKind(events, 'plan'), [{ kind: 'plan', steps: ['read', 'fix'] }], 'the same steps are one plan');
		assert.deepEqual(ofKind(events, 'usage'), [
			{ kind: 'usage', input_tokens: 100, output_tokens: 20, cache_read_tokens: 90, message_id: 'turn-1' },
		]);
		assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', ok: true, turns: 1 }]);
	});

	it('no completed turn and no error: no result, the runner decides from the exit', () => {
		assert.deepEqual(ofKind(parseAll('codex-json', start.join('\n')), 'result'), []);
	});
});

describe('gemini-stream-json beyond the fixture', () => {
	it('a failed tool and a failed result say why', () => {
		const events = parseAll(
			'gemini-stream-json',
			[
				'{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"out.txt","content":"x"}}',
				'{"type":"tool_result","tool_id":"w1","status":"error","error":{"type":"permission","message":"denied by policy"}}',
				'{"type":"message","role":"assistant","content":"I could not","delta":true}',
				'{"type":"message","role":"assistant","content":" write it.","delta":true}',
				'{"type":"error","severity":"error","message":"API quota"}',
				'{"type":"result","status":"error","error":{"type":"FatalError","message":"quota exhausted"},"stats":{"input_tokens":5,"output_tokens":1,"duration_ms":9}}',
			].join('\n'),
		);
		assert.deepEqual(events, [
			{
				kind: 'tool_started',
				call_id: 'w1',
				tool: 'write_file',
				args: { file_path: 'out.txt', content: 'x' },
				paths_read: [],
				paths_written: ['out.txt'],
			},
			{
				kind: 'tool_finished',
				call_id: 'w1',
				status: 'error',
				summary: 'denied by policy',
				output: 'denied by policy',
			},
			{ kind: 'message', text: 'I could not write it.' },
			{
				kind: 'result',
				ok: false,
				text: 'quota exhausted',
				usage: { input_tokens: 5, output_tokens: 1 },
				duration_ms: 9,
			},
		]);
	});

	it('a run cut before its result still gives its streamed message and closes its calls', () => {
		const events = parseAll(
			'gemini-stream-json',
			[
				'{"type":"message","role":"assistant","content":"Looking","delta":true}',
				'{"type":"tool_use","tool_name":"glob","tool_id":"g","parameters":{"pattern":"*.ts","dir_path":"src"}}',
				'{"type":"message","role":"assistant","content":"Half","delta":true}',
			].join('\n'),
		);
		assert.deepEqual(events, [
			{ kind: 'message', text: 'Looking' },
			{
				kind: 'tool_started',
				call_id: 'g',
				tool: 'glob',
				args: { pattern: '*.ts', dir_path: 'src' },
				paths_read: ['src'],
				paths_written: [],
			},
			{ kind: 'message', text: 'Half' },
			{ kind: 'tool_finished', call_id: 'g', status: 'error', summary: 'did not finish' },
		]);
	});
});

describe('desk-jsonl', () => {
	/** Our format written from the events, as docs/agent-jsonl.md describes it. */
	function toDeskLine(event: AgentEvent): string {
		switch (event.kind) {
			case 'session':
				return JSON.stringify({ type: 'session', provider: event.provider, model: event.model });
			case 'message':
				return JSON.stringify({ type: 'message', text: event.text });
			case 'tool_started':
				return JSON.stringify({
					type: 'tool',
					id: event.call_id,
					name: event.tool,
					args: event.args,
					read: event.paths_read,
					written: event.paths_written,
				});
			case 'tool_finished':
				return JSON.stringify({
					type: 'tool_result',
					id: event.call_id,
					status: event.status,
					summary: event.summary,
					output: event.output,
					read: event.paths_read,
					written: event.paths_written,
				});
			case 'usage':
				return JSON.stringify({
					type: 'usage',
					input_tokens: event.input_tokens,
					output_tokens: event.output_tokens,
					cache_read_tokens: event.cache_read_tokens,
					cache_creation_tokens: event.cache_creation_tokens,
					reasoning_tokens: event.reasoning_tokens,
					cost_usd: event.cost_usd,
					model: event.model,
				});
			case 'usage_incomplete':
				// Not a line of the format: its output ending without a result says it.
				return '';
			case 'plan':
				return JSON.stringify({ type: 'plan', steps: event.steps });
			case 'result':
				return JSON.stringify({ type: 'result', status: event.ok ? 'ok' : 'error', text: event.text });
			case 'unparsed':
				return event.line;
		}
	}

	it('every event type goes through the format and back unchanged', () => {
		const events: AgentEvent[] = [
			{ kind: 'session', provider: 'acme', model: 'acme-1' },
			{ kind: 'session', provider: 'script' },
			{ kind: 'plan', steps: ['Read the failing test', 'Fix the parser', 'Run the tests'] },
			{ kind: 'message', text: 'Looking at the parser.\nIt drops the last line.' },
			{
				kind: 'tool_started',
				call_id: '1',
				tool: 'read',
				args: { path: 'src/parse.ts' },
				paths_read: ['src/parse.ts'],
				paths_written: [],
			},
			{ kind: 'tool_finished', call_id: '1', status: 'ok', summary: '120 lines', output: 'export function parse() {}' },
			{
				kind: 'tool_started',
				call_id: '2',
				tool: 'shell',
				args: { command: 'npm test' },
				paths_read: [],
				paths_written: [],
			},
			{
				kind: 'tool_finished',
				call_id: '2',
				status: 'error',
				summary: '1 failing',
				paths_written: ['test-output/log.txt'],
			},
			// What the agent sent is kept as sent: empty lists, nulls, and null arguments.
			{
				kind: 'tool_started',
				call_id: '3',
				tool: 'grep',
				args: { paths: [], limit: null },
				paths_read: [],
				paths_written: [],
			},
			{ kind: 'tool_finished', call_id: '3', status: 'ok', summary: 'no match' },
			{ kind: 'tool_started', call_id: '4', tool: 'ping', args: null, paths_read: [], paths_written: [] },
			{ kind: 'tool_finished', call_id: '4', status: 'ok', summary: 'pong' },
			{ kind: 'usage', input_tokens: 1200, output_tokens: 300, cost_usd: 0.012 },
			{ kind: 'usage', input_tokens: 0, output_tokens: 0 },
			{
				kind: 'usage',
				input_tokens: 900,
				output_tokens: 100,
				cache_read_tokens: 800,
				cache_creation_tokens: 50,
				reasoning_tokens: 40,
				model: 'acme-1',
			},
			{ kind: 'result', ok: true, text: 'Fixed.' },
			{ kind: 'result', ok: false },
		];
		assert.deepEqual(parseAll('desk-jsonl', events.map(toDeskLine).join('\n')), events);
	});

	it('the example run of docs/agent-jsonl.md reads as documented', () => {
		const doc = fs.readFileSync(path.join(findProjectRoot(), 'docs/agent-jsonl.md'), 'utf8');
		const example = /```jsonl\n([\s\S]*?)```/.exec(doc)?.[1];
		assert.ok(example !== undefined, 'the doc has a ```jsonl example');
		const events = parseAll('desk-jsonl', example);
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assertCallsPaired(events);
		assert.deepEqual([...new Set(events.map((event) => event.kind))].sort(), [
			'message',
			'plan',
			'result',
			'session',
			'tool_finished',
			'tool_started',
			'usage',
		]);
	});

	it('a tool_result without a summary is summarised from its output; omitted lists are empty', () => {
		const events = parseAll(
			'desk-jsonl',
			[
				'{"type":"tool","id":"a","name":"build"}',
				'{"type":"tool_result","id":"a","status":"ok","output":"\\nbuilt 3 files\\ndone"}',
			].join('\n'),
		);
		assert.deepEqual(events, [
			{ kind: 'tool_started', call_id: 'a', tool: 'build', args: {}, paths_read: [], paths_written: [] },
			{ kind: 'tool_finished', call_id: 'a', status: 'ok', summary: 'built 3 files', output: '\nbuilt 3 files\ndone' },
		]);
	});

	const broken: Array<{ line: string; reason: RegExp }> = [
		{ line: 'Compiling…', reason: /^not JSON/ },
		{ line: '{"text":"no type"}', reason: /no 'type'/ },
		{ line: '{"type":"thought","text":"hm"}', reason: /unknown type 'thought'/ },
		{ line: '{"type":"session"}', reason: /'provider' is missing/ },
		{ line: '{"type":"message","text":5}', reason: /'text' is not a string/ },
		{ line: '{"type":"tool","id":"x"}', reason: /'name' is missing/ },
		{ line: '{"type":"tool","id":"x","name":"n","read":"a.ts"}', reason: /'read' is not an array/ },
		{ line: '{"type":"tool","id":"x","name":"n","written":[1]}', reason: /'written' is not an array of strings/ },
		{ line: '{"type":"tool_result","id":"nope","status":"ok"}', reason: /no running tool has id 'nope'/ },
		{ line: '{"type":"usage","input_tokens":-1,"output_tokens":0}', reason: /'input_tokens' is not a whole number/ },
		{ line: '{"type":"usage","input_tokens":1.5,"output_tokens":0}', reason: /'input_tokens' is not a whole number/ },
		{ line: '{"type":"usage","input_tokens":1}', reason: /'output_tokens' is missing/ },
		{ line: '{"type":"usage","input_tokens":1,"output_tokens":1,"cost_usd":-2}', reason: /'cost_usd' is negative/ },
		{ line: '{"type":"plan"}', reason: /'steps' is missing/ },
		{ line: '{"type":"plan","steps":[{"text":"a"}]}', reason: /'steps' is not an array of strings/ },
		{ line: '{"type":"result","status":"done"}', reason: /'status' is 'done', not 'ok' or 'error'/ },
	];

	for (const { line, reason } of broken) {
		it(`${line} is unparsed: ${reason.source}`, () => {
			const events = parseAll('desk-jsonl', `${line}\n${validLine['desk-jsonl']}`);
			assert.equal(events.length, 2);
			const [first] = events;
			assert.ok(first?.kind === 'unparsed');
			assert.equal(first.line, line);
			assert.match(first.reason, reason);
		});
	}

	it('a tool id in use cannot start again, a finished id can be reused, a tool left running did not finish', () => {
		const events = parseAll(
			'desk-jsonl',
			[
				'{"type":"tool","id":"a","name":"x"}',
				'{"type":"tool","id":"a","name":"y"}',
				'{"type":"tool_result","id":"a","status":"ok","summary":"fine"}',
				'{"type":"tool","id":"a","name":"z"}',
			].join('\n'),
		);
		assert.deepEqual(
			events.map((event) => (event.kind === 'unparsed' ? event.reason : `${event.kind}`)),
			['tool_started', "tool 'a' is already running", 'tool_finished', 'tool_started', 'tool_finished'],
		);
		assert.deepEqual(events.at(-1), {
			kind: 'tool_finished',
			call_id: 'a',
			status: 'error',
			summary: 'did not finish',
		});
	});
});

describe('text', () => {
	it('all output is one call of "agent output" summarised by its last non-blank line, and one message', () => {
		const events = parseAll('text', 'Working on it\r\n\r\n  All 12 tests pass.  \r\n\r\n');
		assert.deepEqual(events, [
			{
				kind: 'tool_started',
				call_id: 'agent-output',
				tool: 'agent output',
				args: {},
				paths_read: [],
				paths_written: [],
			},
			{
				kind: 'tool_finished',
				call_id: 'agent-output',
				status: 'ok',
				summary: 'All 12 tests pass.',
				output: 'Working on it\n\n  All 12 tests pass.  \n',
			},
			{ kind: 'message', text: 'Working on it\n\n  All 12 tests pass.  \n' },
		]);
	});

	it('a long last line is cut to 200 characters; no output still records the call but no message', () => {
		const [, finished] = parseAll('text', `start\n${'z'.repeat(250)}`);
		assert.ok(finished?.kind === 'tool_finished');
		assert.equal(finished.summary.length, 200);
		assert.deepEqual(parseAll('text', ''), [
			{
				kind: 'tool_started',
				call_id: 'agent-output',
				tool: 'agent output',
				args: {},
				paths_read: [],
				paths_written: [],
			},
			{ kind: 'tool_finished', call_id: 'agent-output', status: 'ok', summary: '(no output)', output: '' },
		]);
	});

	it('JSON lines are text too in this format', () => {
		const text = readTranscript('codex/agentcmd-file-change-0.46.jsonl');
		const events = parseAll('text', text);
		assert.deepEqual(
			events.map((event) => event.kind),
			['tool_started', 'tool_finished', 'message'],
		);
		assert.equal(ofKind(events, 'message')[0]?.text, text.replace(/\n$/, ''));
	});
});

describe('parseAll', () => {
	it('reads \\r\\n line ends and a last line without a newline as it reads \\n', () => {
		for (const fixture of fixtures) {
			const text = readTranscript(fixture.name);
			const crlf = text.replace(/\n/g, '\r\n').replace(/\r\n$/, '');
			assert.deepEqual(parseAll(fixture.format, crlf), parseAll(fixture.format, text), fixture.name);
		}
	});

	it('pushing line by line gives the same events as parsing the whole output', () => {
		for (const fixture of fixtures) {
			const text = readTranscript(fixture.name);
			const parser = createOutputParser(fixture.format);
			const events = [...text.split('\n').flatMap((line) => parser.push(line)), ...parser.end()];
			assert.deepEqual(events, parseAll(fixture.format, text), fixture.name);
		}
	});
});

describe('usage and subagents as the adapters read them', () => {
	it("Claude Code: a subagent's lines name the Task call that started them; its text is not the agent's message; its task_* system lines say nothing new", () => {
		// Claude Code 2.1.x stream-json: parent_tool_use_id on a subagent's lines, system/task_* around it.
		const events = parseAll(
			'claude-stream-json',
			[
				'{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"task1","name":"Task","input":{"prompt":"look"}}],"usage":{"input_tokens":10,"output_tokens":1}},"parent_tool_use_id":null}',
				'{"type":"system","subtype":"task_started","task_id":"a1","tool_use_id":"task1","task_type":"local_agent"}',
				'{"type":"assistant","message":{"id":"s1","model":"claude-haiku-4-5","content":[{"type":"text","text":"found it"},{"type":"tool_use","id":"r1","name":"Read","input":{"file_path":"a.ts"}}],"usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":2}},"parent_tool_use_id":"task1"}',
				'{"type":"system","subtype":"task_progress","task_id":"a1","usage":{"total_tokens":27,"tool_uses":1,"duration_ms":5}}',
				'{"type":"system","subtype":"task_notification","task_id":"a1","status":"completed","usage":{"total_tokens":27}}',
			].join('\n'),
		);
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assert.deepEqual(ofKind(events, 'message'), []);
		assert.deepEqual(
			ofKind(events, 'tool_started').map((c) => [c.call_id, c.parent_call_id]),
			[
				['task1', undefined],
				['r1', 'task1'],
			],
		);
		assert.deepEqual(ofKind(events, 'usage')[1], {
			kind: 'usage',
			input_tokens: 25,
			output_tokens: 2,
			cache_read_tokens: 5,
			model: 'claude-haiku-4-5',
			message_id: 's1',
			parent_call_id: 'task1',
			partial: true,
		});
	});

	it('Claude Code: an all-zero result reports nothing and leaves the usage incomplete; a later real one completes it', () => {
		const zero =
			'{"type":"result","subtype":"error_during_execution","is_error":true,"total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"modelUsage":{}}';
		const message =
			'{"type":"assistant","message":{"id":"m","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hm"}],"usage":{"input_tokens":3,"output_tokens":1}}}';
		const interrupted = parseAll('claude-stream-json', [message, zero].join('\n'));
		const [result] = ofKind(interrupted, 'result');
		assert.deepEqual([result?.usage, result?.models, result?.ok], [undefined, undefined, false]);
		assert.equal(ofKind(interrupted, 'usage_incomplete').length, 1);
		const real =
			'{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.001,"usage":{"input_tokens":3,"output_tokens":4}}';
		assert.deepEqual(ofKind(parseAll('claude-stream-json', [zero, message, real].join('\n')), 'usage_incomplete'), []);
	});

	it("Codex: turn.progress is the running turn's usage, replaced by turn.completed; turn.failed carries its usage; newer event and item types are read or skipped", () => {
		// codex exec --json as exec_events.rs defines it, with what newer versions add.
		const events = parseAll(
			'codex-json',
			[
				'{"type":"thread.started","thread_id":"t"}',
				'{"type":"turn.started"}',
				'{"type":"turn.progress","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":1}}',
				'{"type":"item.plan.delta","item_id":"p","delta":"1. read"}',
				'{"type":"item.completed","item":{"id":"p","type":"plan","text":"1. read"}}',
				'{"type":"item.started","item":{"id":"c","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t","receiver_thread_ids":["u"],"prompt":"check the tests","agents_states":{},"status":"in_progress"}}',
				'{"type":"item.completed","item":{"id":"c","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t","receiver_thread_ids":["u"],"prompt":"check the tests","agents_states":{},"status":"completed"}}',
				'{"type":"turn.failed","error":{"message":"context window exceeded"},"usage":{"input_tokens":90,"cached_input_tokens":10,"cache_write_input_tokens":0,"output_tokens":3,"reasoning_output_tokens":1}}',
			].join('\n'),
		);
		assert.deepEqual(ofKind(events, 'unparsed'), []);
		assert.deepEqual(
			ofKind(events, 'usage').map((u) => [u.message_id, u.input_tokens, u.output_tokens]),
			[
				['turn-1', 50, 1],
				['turn-1', 90, 3],
			],
		);
		assert.deepEqual(
			ofKind(events, 'tool_started').map((c) => [c.tool, c.args]),
			[['spawn_agent', { prompt: 'check the tests', receiver_thread_ids: ['u'] }]],
		);
		assert.deepEqual(ofKind(events, 'usage_incomplete'), [], 'the failed turn reported its usage');
		assert.deepEqual(ofKind(events, 'result'), [{ kind: 'result', ok: false, text: 'context window exceeded' }]);
	});

	it('a warning run into the first JSON line is unparsed apart, the JSON read; a broken JSON line is not split', () => {
		const init = '{"type":"init","session_id":"s","model":"auto"}';
		assert.deepEqual(parseAll('gemini-stream-json', `Loaded cached credentials.${init}`), [
			{ kind: 'unparsed', line: 'Loaded cached credentials.', reason: 'text printed before a JSON line' },
			{ kind: 'session', provider: 'google', model: 'auto', session_id: 's' },
		]);
		const broken = `{"type":"tool_result","oops${init}`;
		assert.deepEqual(
			parseAll('gemini-stream-json', broken).map((e) => e.kind),
			['unparsed'],
		);
	});
});
