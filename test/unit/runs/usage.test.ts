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
