import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { parseAll } from '../../../server/src/agents/adapters/index';
import type { AgentOutputFormat } from '../../../server/src/agents/events';
import * as m from '../../../server/src/ai/model';
import type { AiObject, Provenance, TokenUsage, ToolInvocation } from '../../../server/src/ai/types';
import { AgentRecorder, type RecorderSink } from '../../../server/src/runs/agentRecorder';
import { defaultPrices, modelOfArgs, priceOf, type ModelPrice } from '../../../server/src/runs/prices';
import { parseRunSettings } from '../../../server/src/runs/settings';
import { findProjectRoot } from '../../helpers/temp';

/*
 * What a run's Provenance and ToolInvocations record of the tokens an agent spent, from its output
 * as the adapters read it, one test (or more) for each way usage was recorded wrong before. The
 * real transcripts are the fixtures of test/fixtures/transcripts (SOURCES.md says where each is
 * from); the composed ones say beside them where their shape comes from.
 */

const transcripts = path.join(findProjectRoot(), 'test/fixtures/transcripts');
const transcript = (name: string) => fs.readFileSync(path.join(transcripts, name), 'utf8');
/** JSON lines, one object (or one line as printed) each. */
const lines = (...records: unknown[]) => records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');

interface Recorded {
	provenance: Provenance;
	usage: TokenUsage;
	calls: ToolInvocation[];
	answer: string;
}

/** One node's output through its adapter into an AgentRecorder, and what the recorder stored. */
function record(
	format: AgentOutputFormat,
	output: string,
	options: {
		workFolder?: string;
		exit?: { code: number | null; signal: NodeJS.Signals | null };
		before?: TokenUsage;
		prices?: Record<string, ModelPrice>;
		configuredModel?: string;
	} = {},
): Recorded {
	const system = m.actor('system', 'desk');
	const task = m.newTask(m.actor('human', 'tess'), 'Find the parser');
	const run = m.newRun(system, task, 'a'.repeat(40));
	m.addRun(task, run);
	const provenance = m.newProvenance(system, run, 'test', 'unknown');
	const pipeline = m.newContextPipeline(system);
	const stored = new Map<string, AiObject>();
	const sink: RecorderSink = {
		put: (objects) => objects.forEach((o) => stored.set(o.object_id, structuredClone(o))),
		storeArtifact: (bytes, type) => m.artifactFor(bytes, 'test', `artifact-${stored.size}`, type),
		scrub: (text) => text,
	};
	const recorder = new AgentRecorder(
		run,
		provenance,
		pipeline,
		options.workFolder ?? '/work',
		sink,
		'agent',
		options.before,
		{
			prices: { ...defaultPrices, ...options.prices },
			configuredModel: options.configuredModel,
		},
	);
	for (const event of parseAll(format, output)) {
		recorder.record(event);
	}
	const outcome = recorder.finish(options.exit ?? { code: 0, signal: null });
	const kept = stored.get(provenance.object_id) as Provenance;
	return {
		provenance: kept,
		usage: kept.token_usage!,
		calls: [...stored.values()].filter((o): o is ToolInvocation => o.object_type === 'tool_invocation'),
		answer: outcome.answer,
	};
}

describe('usage a run records: per model, with cache, reasoning, turns and duration', () => {
	it("claude/ritual-toolrich-2.1.205: cache reads and writes, turns, the agent's duration and its one model are stored", () => {
		const { usage, provenance } = record('claude-stream-json', transcript('claude/ritual-toolrich-2.1.205.jsonl'));
		const counts = {
			input_tokens: 3927 + 4798 + 37535,
			output_tokens: 118,
			total_tokens: 3927 + 4798 + 37535 + 118,
			cost_usd: 0.178665,
			cache_read_tokens: 37535,
			cache_creation_tokens: 4798,
		};
		assert.deepEqual(usage, {
			...counts,
			models: [{ model: 'claude-fable-5', ...counts }],
			turns: 2,
			duration_ms: 12272,
		});
		assert.equal(provenance.model, 'claude-fable-5');
	});

	it("codex/orch-readonly-ls: the turn's cached input, cache writes and reasoning are kept; the cost comes from the price table, marked estimated", () => {
		// Codex names no model in its output: the one its command line asks for (-m) prices it.
		const { usage, provenance } = record('codex-json', transcript('codex/orch-readonly-ls.jsonl'), {
			configuredModel: modelOfArgs(['exec', '--json', '-m', 'gpt-5-codex', '-']),
		});
		assert.equal(provenance.model, 'gpt-5-codex');
		const cost = ((29879 - 25088) * 1.25 + 25088 * 0.125 + 175 * 10) / 1e6;
		assert.deepEqual(usage.models, [
			{
				model: 'gpt-5-codex',
				input_tokens: 29879,
				output_tokens: 175,
				total_tokens: 29879 + 175,
				cost_usd: Math.round(cost * 1e9) / 1e9,
				cache_read_tokens: 25088,
				cache_creation_tokens: 0,
				reasoning_tokens: 43,
				cost_estimated: true,
			},
		]);
		assert.equal(usage.cost_estimated, true);
		assert.equal(usage.turns, 1);
	});

	it('a model the price table lacks has no cost rather than a guessed one; the setting adds it', () => {
		const plain = record('codex-json', transcript('codex/orch-readonly-ls.jsonl'));
		assert.equal(plain.provenance.model, 'unknown');
		assert.equal(plain.usage.cost_usd, undefined);
		const priced = record('codex-json', transcript('codex/orch-readonly-ls.jsonl'), {
			configuredModel: 'house-model',
			prices: parseRunSettings({ prices: { 'house-model': { input: 2, output: 8 } } }).prices!,
		});
		assert.equal(priced.usage.cost_usd, Math.round(((29879 * 2 + 175 * 8) / 1e6) * 1e9) / 1e9);
		assert.equal(priced.usage.cost_estimated, true);
	});

	it('the nodes of a run add up per model: tokens, turns and duration', () => {
		const plan = record('claude-stream-json', transcript('claude/ritual-toolrich-2.1.205.jsonl'));
		const both = record('claude-stream-json', transcript('claude/ritual-toolrich-2.1.205.jsonl'), {
			before: plan.usage,
		});
		assert.equal(both.usage.input_tokens, 2 * plan.usage.input_tokens);
		assert.equal(both.usage.cache_read_tokens, 2 * 37535);
		assert.equal(both.usage.cost_usd, 2 * 0.178665);
		assert.deepEqual([both.usage.turns, both.usage.duration_ms, both.usage.models?.length], [4, 2 * 12272, 1]);
	});
});

describe('prices', () => {
	it('a model is priced by its exact name or its listed one, never by its family', () => {
		assert.equal(priceOf(defaultPrices, 'claude-sonnet-4-5-20250929'), defaultPrices['claude-sonnet-4-5']);
		assert.equal(
			priceOf(defaultPrices, 'us.anthropic.claude-opus-4-1-20250805-v1:0'),
			defaultPrices['claude-opus-4-1'],
		);
		assert.equal(priceOf(defaultPrices, 'claude-opus-4-5[1m]'), defaultPrices['claude-opus-4-5']);
		assert.equal(priceOf(defaultPrices, 'models/gemini-2.5-flash'), defaultPrices['gemini-2.5-flash']);
		assert.equal(priceOf(defaultPrices, 'claude-opus-4-8'), undefined, 'another version of a family is not guessed');
		assert.equal(priceOf(defaultPrices, 'gemini-3.5-flash'), undefined);
	});

	it('the prices setting is checked: numbers of dollars per million tokens, known fields only', () => {
		assert.deepEqual(parseRunSettings({ prices: { x: { input: 1, output: 2, cacheRead: 0.1 } } }).prices, {
			x: { input: 1, output: 2, cacheRead: 0.1 },
		});
		for (const prices of [
			{ x: { input: 1 } },
			{ x: { input: -1, output: 1 } },
			{ x: { input: 1, output: 1, per: 1 } },
			[],
		]) {
			assert.throws(() => parseRunSettings({ prices }), /prices/);
		}
	});

	it('the model a command line asks for', () => {
		assert.equal(modelOfArgs(['exec', '--model', 'gpt-5']), 'gpt-5');
		assert.equal(modelOfArgs(['--model=o3']), 'o3');
		assert.equal(modelOfArgs(['exec', '-c', 'model="gpt-5-mini"']), 'gpt-5-mini');
		assert.equal(modelOfArgs(['-p', '--output-format', 'stream-json']), undefined);
	});
});

describe('helper models', () => {
	it("claude/agentbench-windows-2.1.245: the helper model only modelUsage names (claude-haiku) is counted, and the result's own total, the main agent's, is kept beside", () => {
		const { usage, provenance } = record('claude-stream-json', transcript('claude/agentbench-windows-2.1.245.jsonl'));
		assert.deepEqual(
			usage.models?.map((u) => [u.model, u.input_tokens, u.output_tokens, u.cost_usd]),
			[
				['claude-haiku-4-5-20251001', 918, 13, 0.000983],
				['claude-sonnet-5', 6 + 9209 + 84312, 180, 0.0555104],
			],
		);
		assert.deepEqual(
			[usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.cost_usd, usage.reasoning_tokens],
			[918 + 6 + 9209 + 84312, 13 + 180, 918 + 6 + 9209 + 84312 + 13 + 180, 0.0564934, 14],
		);
		assert.deepEqual(
			usage.agent_totals && [
				usage.agent_totals.input_tokens,
				usage.agent_totals.output_tokens,
				usage.agent_totals.cost_usd,
			],
			[6 + 9209 + 84312, 180, 0.0564934],
			'the result line counts the main agent only',
		);
		assert.equal(provenance.model, 'claude-sonnet-5', "the helper does not become the run's model");
	});
});

/**
 * A Claude Code 2.1.x run (`-p --output-format stream-json --verbose`) whose main agent starts a
 * subagent with the Task tool. The shapes are those of the fixtures above (init, assistant and user
 * lines, the result with `usage` and `modelUsage`) with what Claude Code adds for a subagent: its
 * lines carry `parent_tool_use_id` (the Task call's id; null on the main agent's), `system` lines
 * `task_started` / `task_progress` / `task_notification` follow its life, and the Task call's result
 * has `tool_use_result` with the subagent's `totalTokens`. As in the runs the issue reports, the
 * result's `usage` counts the main agent only (75,525 in, 281 out) where `modelUsage` counts both
 * (166,585 in, 998 out), and its cost is the whole run's.
 */
const subagentRun = lines(
	{
		type: 'system',
		subtype: 'init',
		cwd: '/work',
		session_id: 's-sub',
		tools: ['Task', 'Read', 'Bash'],
		model: 'claude-sonnet-4-5-20250929',
		claude_code_version: '2.1.250',
	},
	{
		type: 'assistant',
		message: {
			id: 'msg_main1',
			model: 'claude-sonnet-4-5-20250929',
			role: 'assistant',
			content: [
				{
					type: 'tool_use',
					id: 'toolu_task',
					name: 'Task',
					input: { description: 'Find the parser', prompt: 'Find where lines are parsed', subagent_type: 'Explore' },
				},
			],
			usage: { input_tokens: 5, cache_creation_input_tokens: 20000, cache_read_input_tokens: 15000, output_tokens: 1 },
		},
		parent_tool_use_id: null,
		session_id: 's-sub',
	},
	{
		type: 'system',
		subtype: 'task_started',
		task_id: 'a1b2',
		tool_use_id: 'toolu_task',
		description: 'Find the parser',
		subagent_type: 'Explore',
		task_type: 'local_agent',
		session_id: 's-sub',
	},
	{
		type: 'user',
		message: { role: 'user', content: [{ type: 'text', text: 'Find where lines are parsed' }] },
		parent_tool_use_id: 'toolu_task',
		session_id: 's-sub',
	},
	{
		type: 'assistant',
		message: {
			id: 'msg_sub1',
			model: 'claude-haiku-4-5-20251001',
			role: 'assistant',
			content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'src/parse.ts' } }],
			usage: { input_tokens: 3, cache_creation_input_tokens: 12000, cache_read_input_tokens: 0, output_tokens: 2 },
		},
		parent_tool_use_id: 'toolu_task',
		session_id: 's-sub',
	},
	{
		type: 'user',
		message: {
			role: 'user',
			content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'export function parse() {}' }],
		},
		parent_tool_use_id: 'toolu_task',
		session_id: 's-sub',
	},
	{
		type: 'system',
		subtype: 'task_progress',
		task_id: 'a1b2',
		tool_use_id: 'toolu_task',
		usage: { total_tokens: 12005, tool_uses: 1, duration_ms: 900 },
	},
	{
		type: 'assistant',
		message: {
			id: 'msg_sub2',
			model: 'claude-haiku-4-5-20251001',
			role: 'assistant',
			content: [{ type: 'text', text: 'parse() is in src/parse.ts.' }],
			usage: { input_tokens: 40, cache_creation_input_tokens: 300, cache_read_input_tokens: 12000, output_tokens: 1 },
		},
		parent_tool_use_id: 'toolu_task',
		session_id: 's-sub',
	},
	{
		type: 'system',
		subtype: 'task_notification',
		task_id: 'a1b2',
		tool_use_id: 'toolu_task',
		status: 'completed',
		summary: 'parse() is in src/parse.ts.',
		usage: { total_tokens: 12400, tool_uses: 1, duration_ms: 2100 },
	},
	{
		type: 'user',
		message: {
			role: 'user',
			content: [
				{
					type: 'tool_result',
					tool_use_id: 'toolu_task',
					content: [{ type: 'text', text: 'parse() is in src/parse.ts.' }],
				},
			],
		},
		parent_tool_use_id: null,
		session_id: 's-sub',
		tool_use_result: {
			status: 'completed',
			agentId: 'a1b2',
			totalDurationMs: 2100,
			totalTokens: 12400,
			totalToolUseCount: 1,
		},
	},
	{
		type: 'assistant',
		message: {
			id: 'msg_main2',
			model: 'claude-sonnet-4-5-20250929',
			role: 'assistant',
			content: [{ type: 'text', text: 'The parser is in src/parse.ts.' }],
			usage: { input_tokens: 8, cache_creation_input_tokens: 500, cache_read_input_tokens: 40012, output_tokens: 1 },
		},
		parent_tool_use_id: null,
		session_id: 's-sub',
	},
	{
		type: 'result',
		subtype: 'success',
		is_error: false,
		duration_ms: 31000,
		num_turns: 4,
		result: 'The parser is in src/parse.ts.',
		session_id: 's-sub',
		total_cost_usd: 0.1445,
		usage: { input_tokens: 13, cache_creation_input_tokens: 20500, cache_read_input_tokens: 55012, output_tokens: 281 },
		modelUsage: {
			'claude-sonnet-4-5-20250929': {
				inputTokens: 13,
				outputTokens: 281,
				cacheReadInputTokens: 55012,
				cacheCreationInputTokens: 20500,
				costUSD: 0.1234,
			},
			'claude-haiku-4-5-20251001': {
				inputTokens: 60,
				outputTokens: 717,
				cacheReadInputTokens: 78700,
				cacheCreationInputTokens: 12300,
				costUSD: 0.0211,
			},
		},
		subagent_stats: { spawned: 1, completed: 1, failed: 0 },
	},
);

describe('subagents', () => {
	it("the run's usage is the sum of modelUsage, the subagent's model included; the result's own total (the main agent's) is shown beside", () => {
		const { usage, provenance, answer } = record('claude-stream-json', subagentRun);
		assert.deepEqual(
			[usage.input_tokens, usage.output_tokens, usage.cost_usd],
			[166_585, 998, 0.1445],
			'as the per-model totals say',
		);
		assert.deepEqual([usage.cache_read_tokens, usage.cache_creation_tokens], [55012 + 78700, 20500 + 12300]);
		assert.deepEqual(
			usage.models?.map((u) => [u.model, u.input_tokens, u.output_tokens]),
			[
				['claude-sonnet-4-5-20250929', 75_525, 281],
				['claude-haiku-4-5-20251001', 91_060, 717],
			],
		);
		assert.deepEqual(
			usage.agent_totals && [
				usage.agent_totals.input_tokens,
				usage.agent_totals.output_tokens,
				usage.agent_totals.cost_usd,
			],
			[75_525, 281, 0.1445],
		);
		assert.equal(provenance.model, 'claude-sonnet-4-5-20250929');
		assert.equal(answer, 'The parser is in src/parse.ts.', "the subagent's text is not the run's answer");
	});

	it('the calls the subagent made hang under the Task call that started it, which carries what the subagent spent', () => {
		const { calls } = record('claude-stream-json', subagentRun);
		const task = calls.find((c) => c.tool_name === 'Task')!;
		const read = calls.find((c) => c.tool_name === 'Read')!;
		assert.equal(task.parent_invocation, undefined);
		assert.equal(read.parent_invocation, task.object_id);
		assert.deepEqual(read.io_footprint?.paths_read, ['src/parse.ts']);
		assert.equal(read.token_usage, undefined);
		// Its two model calls as printed: the input side exact, the output only what each line knew.
		assert.deepEqual(task.token_usage, {
			input_tokens: 3 + 12000 + 40 + 300 + 12000,
			output_tokens: 3,
			total_tokens: 3 + 12000 + 40 + 300 + 12000 + 3,
			// Priced as claude-haiku-4-5: 43 fresh at $1, 12,000 read at $0.10, 12,300 written at $1.25, 3 out at $5 a million.
			cost_usd: 0.016633,
			cache_read_tokens: 12000,
			cache_creation_tokens: 12300,
			cost_estimated: true,
			models: [task.token_usage!.models![0]!],
			incomplete: true,
		});
		assert.equal(task.token_usage?.models?.[0]?.model, 'claude-haiku-4-5-20251001');
	});

	it("a subagent's subagent counts for both the calls above it", () => {
		const nested = lines(
			{ type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', session_id: 's' },
			{
				type: 'assistant',
				message: {
					id: 'm1',
					model: 'claude-sonnet-4-5',
					content: [{ type: 'tool_use', id: 'outer', name: 'Agent', input: {} }],
				},
				parent_tool_use_id: null,
			},
			{
				type: 'assistant',
				message: {
					id: 'm2',
					model: 'claude-haiku-4-5',
					content: [{ type: 'tool_use', id: 'inner', name: 'Agent', input: {} }],
					usage: { input_tokens: 100, output_tokens: 10 },
				},
				parent_tool_use_id: 'outer',
			},
			{
				type: 'assistant',
				message: {
					id: 'm3',
					model: 'claude-haiku-4-5',
					content: [{ type: 'tool_use', id: 'grep', name: 'Grep', input: { pattern: 'x' } }],
					usage: { input_tokens: 50, output_tokens: 5 },
				},
				parent_tool_use_id: 'inner',
			},
			{
				type: 'user',
				message: { content: [{ type: 'tool_result', tool_use_id: 'grep', content: 'none' }] },
				parent_tool_use_id: 'inner',
			},
			{
				type: 'user',
				message: { content: [{ type: 'tool_result', tool_use_id: 'inner', content: 'done' }] },
				parent_tool_use_id: 'outer',
			},
			{
				type: 'user',
				message: { content: [{ type: 'tool_result', tool_use_id: 'outer', content: 'done' }] },
				parent_tool_use_id: null,
			},
			{
				type: 'result',
				subtype: 'success',
				is_error: false,
				result: 'done',
				usage: { input_tokens: 10, output_tokens: 1 },
			},
		);
		const { calls } = record('claude-stream-json', nested);
		const outer = calls.find((c) => c.tool_name === 'Agent' && c.parent_invocation === undefined)!;
		const inner = calls.find((c) => c.tool_name === 'Agent' && c.parent_invocation !== undefined)!;
		const grep = calls.find((c) => c.tool_name === 'Grep')!;
		assert.deepEqual([inner.parent_invocation, grep.parent_invocation], [outer.object_id, inner.object_id]);
		assert.deepEqual([outer.token_usage?.input_tokens, inner.token_usage?.input_tokens], [150, 50]);
	});
});

describe('interrupted runs', () => {
	/**
	 * A Claude Code run interrupted mid-turn: its messages as stream-json prints them (as in the
	 * fixtures), then the result Claude Code ends an interrupted run with — subtype
	 * `error_during_execution`, `is_error` true, its usage all zero, its modelUsage empty, its cost 0.
	 */
	const interrupted = lines(
		{
			type: 'system',
			subtype: 'init',
			model: 'claude-sonnet-4-5-20250929',
			session_id: 's-int',
			claude_code_version: '2.1.250',
		},
		{
			type: 'assistant',
			message: {
				id: 'msg_1',
				model: 'claude-sonnet-4-5-20250929',
				content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } }],
				usage: { input_tokens: 4, cache_creation_input_tokens: 10000, cache_read_input_tokens: 5000, output_tokens: 2 },
			},
			parent_tool_use_id: null,
		},
		{ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 passing' }] } },
		{
			type: 'assistant',
			message: {
				id: 'msg_2',
				model: 'claude-sonnet-4-5-20250929',
				content: [{ type: 'text', text: 'The tests pass; now the' }],
				usage: { input_tokens: 6, cache_creation_input_tokens: 200, cache_read_input_tokens: 15000, output_tokens: 3 },
			},
			parent_tool_use_id: null,
		},
		{
			type: 'result',
			subtype: 'error_during_execution',
			is_error: true,
			duration_ms: 8000,
			duration_api_ms: 0,
			num_turns: 2,
			session_id: 's-int',
			total_cost_usd: 0,
			usage: {
				input_tokens: 0,
				cache_creation_input_tokens: 0,
				cache_read_input_tokens: 0,
				output_tokens: 0,
				server_tool_use: { web_search_requests: 0 },
			},
			modelUsage: {},
			permission_denials: [],
		},
	);

	it('the zero result does not wipe out the usage its messages reported: at least that much, its cost estimated', () => {
		const { usage } = record('claude-stream-json', interrupted, { exit: { code: 1, signal: null } });
		assert.deepEqual(
			[usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_creation_tokens],
			[4 + 10000 + 5000 + 6 + 200 + 15000, 5, 20000, 10200],
		);
		// claude-sonnet-4-5: 10 fresh at $3, 20,000 read at $0.30, 10,200 written at $3.75, 5 out at $15 a million.
		assert.equal(usage.cost_usd, 0.044355);
		assert.equal(usage.cost_estimated, true);
		assert.equal(usage.incomplete, true, 'the output counts were only what the lines knew');
		assert.deepEqual([usage.turns, usage.duration_ms], [2, 8000]);
	});

	it("a resumed session's empty first result, before the real turn, is no report either", () => {
		const resumed = lines(
			{ type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', session_id: 's' },
			{
				type: 'result',
				subtype: 'success',
				is_error: false,
				num_turns: 0,
				total_cost_usd: 0,
				usage: { input_tokens: 0, output_tokens: 0 },
			},
			{
				type: 'assistant',
				message: {
					id: 'm',
					model: 'claude-sonnet-4-5',
					content: [{ type: 'text', text: 'ok' }],
					usage: { input_tokens: 10, output_tokens: 1 },
				},
			},
			{
				type: 'result',
				subtype: 'success',
				is_error: false,
				num_turns: 1,
				result: 'ok',
				total_cost_usd: 0.0002,
				usage: { input_tokens: 10, output_tokens: 4 },
			},
		);
		const { usage } = record('claude-stream-json', resumed);
		assert.deepEqual(
			[usage.input_tokens, usage.output_tokens, usage.cost_usd, usage.incomplete],
			[10, 4, 0.0002, undefined],
		);
	});
});

describe('truncated output', () => {
	it('Claude Code killed mid-run: the usage its messages reported, marked incomplete ("at least")', () => {
		const cut = transcript('claude/ritual-toolrich-2.1.205.jsonl').split('\n').slice(0, 6).join('\n');
		const { usage } = record('claude-stream-json', cut, { exit: { code: null, signal: 'SIGTERM' } });
		assert.deepEqual([usage.input_tokens, usage.output_tokens, usage.incomplete], [3900 + 773 + 18381, 2, true]);
	});

	it('Codex killed in its turn: unknown (zero and incomplete), not 0/0', () => {
		const cut = transcript('codex/takopi-explore-bridge.jsonl').split('\n').slice(0, 8).join('\n');
		const { usage } = record('codex-json', cut, { exit: { code: null, signal: 'SIGKILL' } });
		assert.deepEqual(usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0, incomplete: true });
	});

	it('Codex: a completed turn counts, the turn cut after it makes it "at least"', () => {
		const [thread, ...rest] = transcript('codex/orch-readonly-ls.jsonl').trim().split('\n');
		const secondTurn = [
			'{"type":"turn.started"}',
			'{"type":"item.started","item":{"id":"item_9","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
		];
		const { usage } = record('codex-json', [thread, ...rest, ...secondTurn].join('\n'), {
			exit: { code: null, signal: 'SIGTERM' },
		});
		assert.deepEqual([usage.input_tokens, usage.output_tokens, usage.incomplete], [29879, 175, true]);
	});

	it('Gemini CLI killed before its result (it reports usage only there): unknown, and no model answered that it names', () => {
		const cut = transcript('gemini/simmer-probe.jsonl').split('\n').slice(0, 6).join('\n');
		const { usage, provenance } = record('gemini-stream-json', cut, { exit: { code: null, signal: 'SIGTERM' } });
		assert.deepEqual(usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0, incomplete: true });
		assert.equal(provenance.model, 'auto', 'only the model it was asked for is known');
	});

	it('an agent that ends with its result reports complete usage even when the desk stops it afterwards', () => {
		const { usage } = record('gemini-stream-json', transcript('gemini/simmer-probe.jsonl'), {
			exit: { code: null, signal: 'SIGTERM' },
		});
		assert.equal(usage.incomplete, undefined);
	});

	it('plain text reports no usage: unknown', () => {
		const { usage } = record('text', 'did it\n');
		assert.equal(usage.incomplete, true);
	});
});

describe('Codex file changes', () => {
	it('codex/agentcmd-file-change-0.46: the file a change wrote is stored once', () => {
		const { calls } = record('codex-json', transcript('codex/agentcmd-file-change-0.46.jsonl'), {
			workFolder: '/private/tmp/codex-research-test',
		});
		assert.deepEqual(
			calls.map((c) => [c.tool_name, c.io_footprint?.paths_written]),
			[['apply_patch', ['hello.txt']]],
		);
	});

	it('a change Codex reports started and then completed (newer versions) names each file once, and a file only its end names is added', () => {
		// `exec --json` items as Codex's exec_events.rs defines them: a FileChange with its changes and status.
		const change = (phase: string, status: string, paths: string[]) =>
			JSON.stringify({
				type: `item.${phase}`,
				item: { id: 'item_3', type: 'file_change', changes: paths.map((p) => ({ path: p, kind: 'update' })), status },
			});
		const output = lines(
			'{"type":"thread.started","thread_id":"t"}',
			'{"type":"turn.started"}',
			change('started', 'in_progress', ['/w/a.ts', '/w/b.ts']),
			change('completed', 'completed', ['/w/a.ts', '/w/b.ts', '/w/b.ts', '/w/c.ts']),
			'{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}',
		);
		const { calls } = record('codex-json', output, { workFolder: '/w' });
		assert.deepEqual(calls[0]?.io_footprint?.paths_written, ['a.ts', 'b.ts', 'c.ts']);
	});
});

describe('Gemini CLI', () => {
	it('gemini/simmer-probe: the model is the one that answered, not "auto"; what is neither input nor output counts in the total', () => {
		const { usage, provenance } = record('gemini-stream-json', transcript('gemini/simmer-probe.jsonl'));
		assert.equal(provenance.model, 'gemini-3.5-flash');
		assert.equal((provenance.parameters as { requested_model?: string }).requested_model, 'auto');
		assert.deepEqual(
			[usage.input_tokens, usage.output_tokens, usage.other_tokens, usage.total_tokens, usage.cache_read_tokens],
			[65422, 219, 1342, 66983, 32602],
			"the stats' own total, 66,983",
		);
		assert.deepEqual(
			usage.models?.map((u) => [u.model, u.total_tokens]),
			[
				['gemini-3.1-flash-lite', 1144],
				['gemini-3.5-flash', 65839],
			],
		);
		assert.equal(usage.agent_totals, undefined, 'the per-model reports add up to the stats');
		assert.equal(usage.cost_usd, undefined, 'no price for these models: no cost rather than a guess');
	});

	it('a warning printed before the first JSON line, on its own line or run into it, does not lose the session', () => {
		const [init, ...rest] = transcript('gemini/simmer-probe.jsonl').trim().split('\n');
		const warning = 'MCP issues detected. Run /mcp list for status.';
		for (const output of [
			[`${warning}${init}`, ...rest],
			[warning, init!, ...rest],
		]) {
			const { provenance, usage } = record('gemini-stream-json', output.join('\n'));
			assert.equal(provenance.provider, 'google');
			assert.equal((provenance.parameters as { session_id?: string }).session_id, 'probe-session');
			assert.equal(provenance.model, 'gemini-3.5-flash');
			assert.equal(usage.total_tokens, 66983);
		}
		const events = parseAll('gemini-stream-json', `${warning}${init}`);
		assert.deepEqual(
			events.map((e) => e.kind),
			['unparsed', 'session'],
		);
	});
});
