import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunSummary, RunsOverview, UsageRollup } from '../../../server/src/protocol/protocol';
import {
	followUpOf,
	intentDescription,
	intentTooltip,
	rollupNotes,
	rollupWords,
	runTooltip,
	runUsageWords,
} from '../../../client/src/runs/runTooltips';
import { followUpFacts, formatDuration, intentState, runIcon } from '../../../client/src/runs/runWords';
import { assertInertMarkdown, renderMarkdown } from '../../helpers/markdown';

/** Text a person's ticket or an agent's output could hold: a command link, an image, an autolink, an icon, a table break, a heading. */
const hostile =
	'[Fix](command:agentDesk.approveRun) ![x](https://evil.example/t.png) www.evil.example $(sync~spin) a | b\n# head\u202e';

type Intent = RunsOverview['intents'][number]['intent'];

function run(more: Partial<RunSummary> = {}): RunSummary {
	return {
		id: 'r1',
		status: 'failed',
		at_gate: false,
		started_at: hostile,
		duration_ms: 4200,
		provider: hostile,
		model: hostile,
		total_tokens: 1200,
		cost_usd: 0.01,
		patchsets: 1,
		evidence: 2,
		error: hostile,
		...more,
	} as unknown as RunSummary;
}

describe("the Runs view's tooltips, built without VS Code", () => {
	it('show a ticket of several lines, its content and its commit as text', () => {
		const intent = {
			prompt: `${hostile}\n${hostile}\n\n${hostile}`,
			content: hostile,
			created_at: hostile,
			commit: hostile,
		} as unknown as Intent;
		const text = intentTooltip(intent, hostile);
		assertInertMarkdown(text);
		assert.match(renderMarkdown(text), /^<p><strong>/, 'the first line of the ticket in bold');
	});

	it('mark a follow-up with the first line of the intent it follows up, inert', () => {
		const parent = { object_id: 'i0', prompt: `${hostile}\nmore` } as unknown as Intent;
		const child = { object_id: 'i1', prompt: 'Also cursors', parent: 'i0', created_at: 'now' } as unknown as Intent;
		const followed = followUpOf(child, [{ intent: parent }, { intent: child }]);
		assert.equal(followed, hostile.split('\n')[0]);
		assert.equal(followUpOf(parent, [{ intent: parent }]), undefined);
		assert.equal(followUpOf(child, []), 'i0', 'a parent not listed is named by its id');
		assert.match(intentDescription('active', 'Add pagination'), /^active · follow-up of ‘Add pagination’$/);
		assert.equal([...intentDescription('active', 'x'.repeat(100))].length, 'active · follow-up of ‘’'.length + 40);
		const text = intentTooltip(child, 'active', followed);
		assertInertMarkdown(text);
		assert.match(renderMarkdown(text), /Follow-up of/);
	});

	it("show a run's task, model and error as text, the failure after the desk's own icon", () => {
		const text = runTooltip(run(), hostile);
		assertInertMarkdown(text, ['error']);
		assert.match(text, /\n\$\(error\) \*\*Failed:\*\* /);
		assert.match(text, /\| Status \| failed \|\n/);
		assert.match(text, /\| Agent's work \| 4 s \|\n/);
		assert.doesNotMatch(
			runTooltip(run({ error: undefined, duration_ms: undefined }), 'Add paging'),
			/\$\(error\)|Duration/,
		);
	});
});

describe('usage in words: what is not certain is said', () => {
	it("a run's row and tooltip: tokens and cost, an estimate, a cost unknown, usage incomplete or unknown", () => {
		assert.equal(runUsageWords(run({ total_tokens: 12_345, cost_usd: 0.0123 })), '12,345 tokens · $0.0123');
		assert.equal(
			runUsageWords(run({ total_tokens: 12_345, cost_usd: 0.0123, cost_estimated: true })),
			'12,345 tokens · $0.0123 estimated',
		);
		assert.equal(
			runUsageWords(run({ total_tokens: 30_215, cost_usd: 0.0444, cost_estimated: true, usage_incomplete: true })),
			'at least 30,215 tokens · at least $0.0444 estimated · usage incomplete',
		);
		assert.equal(runUsageWords(run({ total_tokens: 0, cost_usd: undefined, usage_incomplete: true })), 'usage unknown');
		assert.equal(
			runUsageWords(run({ total_tokens: 66_983, cost_usd: undefined, unpriced_models: ['gemini-3.5-flash'] })),
			'66,983 tokens · cost unknown',
		);
		assert.equal(
			runUsageWords(run({ total_tokens: 900, cost_usd: 0.01, unpriced_models: ['house-model'] })),
			'900 tokens · at least $0.0100',
		);
		const text = runTooltip(run({ total_tokens: 0, cost_usd: undefined, usage_incomplete: true }), 'Add paging');
		assertInertMarkdown(text, ['error']);
		assert.match(text, /\| Tokens \| usage unknown \|/);
	});

	it('a sum of runs: how many, tokens and known cost, and the runs that make it uncertain', () => {
		const rollup = (more: Partial<UsageRollup>): UsageRollup => ({
			runs: 3,
			input_tokens: 10_000,
			output_tokens: 2_345,
			total_tokens: 12_345,
			cache_read_tokens: 0,
			cache_creation_tokens: 0,
			cost_usd: 0.5,
			cost_estimated: false,
			incomplete_runs: 0,
			unpriced_runs: 0,
			...more,
		});
		assert.equal(rollupWords(rollup({})), '3 runs · 12,345 tokens · $0.5000');
		assert.equal(
			rollupWords(rollup({ cost_estimated: true, incomplete_runs: 1, unpriced_runs: 2 })),
			'3 runs · 12,345 tokens · $0.5000, estimated, usage incomplete in 1 run, cost unknown for 2 runs',
		);
		assert.equal(rollupWords(rollup({ runs: 0 })), 'no run yet');
		assert.equal(rollupNotes(rollup({})), '');
	});
});

describe('states as the Runs view draws them, true to how each ended', () => {
	const summary = (more: Partial<RunSummary>): RunSummary => ({
		id: 'r',
		task: 't',
		status: 'completed',
		at_gate: false,
		started_at: '2026-01-01T00:00:00.000Z',
		patchsets: 1,
		evidence: 1,
		...more,
	});

	it('only a landing is a green check: abandoned, checkpointed, retried and rolled back runs look otherwise', () => {
		const icons = {
			landed: runIcon(summary({ decision: 'commit' }))[0],
			abandoned: runIcon(summary({ decision: 'abandon' }))[0],
			checkpointed: runIcon(summary({ decision: 'checkpoint' }))[0],
			retried: runIcon(summary({ decision: 'retry' }))[0],
			landedThenRolledBack: runIcon(summary({ decision: 'commit', rolled_back_by: 'r2' }))[0],
			failedThenAbandoned: runIcon(summary({ status: 'failed', decision: 'abandon' }))[0],
			atGate: runIcon(summary({ status: 'validating', at_gate: true }))[0],
			working: runIcon(summary({ status: 'patching' }))[0],
		};
		assert.deepEqual(icons, {
			landed: 'pass-filled',
			abandoned: 'circle-slash',
			checkpointed: 'bookmark',
			retried: 'debug-restart',
			landedThenRolledBack: 'discard',
			failedThenAbandoned: 'error',
			atGate: 'eye',
			working: 'sync~spin',
		});
	});

	it('an active intent spins only while an agent works for it, and says what waits otherwise', () => {
		const intent = (...latest: Array<Partial<RunSummary>>) =>
			intentState({
				status: 'active',
				tasks: latest.map((r) => ({ runs: [summary(r)] }) as RunsOverview['intents'][number]['tasks'][number]),
			});
		assert.deepEqual(intent({ status: 'patching' }).icon[0], 'sync~spin');
		assert.deepEqual(intent({ status: 'validating', at_gate: true }), {
			words: 'active · waiting for review',
			icon: ['eye', 'charts.yellow'],
		});
		assert.equal(intent({ status: 'failed' }).words, 'active · its last run failed');
		assert.equal(intent({ decision: 'checkpoint' }).words, 'active · no agent working');
		assert.notEqual(intent({ decision: 'checkpoint' }).icon[0], 'sync~spin');
		assert.equal(intentState({ status: 'completed', tasks: [] }).icon[0], 'pass-filled');
	});

	it('says long durations in hours and days, and the wait for review apart from the work', () => {
		assert.deepEqual([850, 42_000, 185_000, 7_500_000, 3 * 86_400_000 + 4 * 3_600_000].map(formatDuration), [
			'850 ms',
			'42 s',
			'3 min 5 s',
			'2 h 5 min',
			'3 d 4 h',
		]);
		const text = runTooltip(summary({ decision: 'commit', duration_ms: 42_000, gate_wait_ms: 7_500_000 }), 'Task');
		assert.match(text, /Agent's work \| 42 s/);
		assert.match(text, /Waited for review \| 2 h 5 min/);
	});

	it('name the run a resume or a rollback came from, and the run that followed one up, by their place in the task', () => {
		const task = { runs: ['r1', 'r2', 'r3'] };
		const facts = (tags: Record<string, string>, summary: Partial<RunSummary> = {}) =>
			Object.fromEntries(
				followUpFacts({
					task: task as never,
					run: { object_id: 'r2', tags } as never,
					summary: summary as RunSummary,
				}).filter(([, text]) => text !== undefined),
			);
		assert.deepEqual(facts({ 'desk.resumes': 'r1' }), {
			Resumes: 'the checkpoint of Run 1: its change was in place before the agent started',
		});
		assert.deepEqual(facts({ 'desk.rolls_back': 'r9' }), { 'Rolls back': 'the landing of run r9' });
		assert.deepEqual(facts({}, { resumed_by: 'r3' }), { 'Resumed by': 'Run 3' });
		assert.deepEqual(facts({}, { rolled_back_by: 'r3' }), { 'Rolled back by': 'Run 3' });
		assert.deepEqual(facts({}), {});
	});
});
