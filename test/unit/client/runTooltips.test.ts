import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunSummary, RunsOverview } from '../../../server/src/protocol/protocol';
import { intentTooltip, runTooltip } from '../../../client/src/runs/runTooltips';
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

	it("show a run's task, model and error as text, the failure after the desk's own icon", () => {
		const text = runTooltip(run(), hostile);
		assertInertMarkdown(text, ['error']);
		assert.match(text, /\n\$\(error\) \*\*Failed:\*\* /);
		assert.match(text, /\| Status \| failed \|\n/);
		assert.match(text, /\| Duration \| 4 s \|\n/);
		assert.doesNotMatch(
			runTooltip(run({ error: undefined, duration_ms: undefined }), 'Add paging'),
			/\$\(error\)|Duration/,
		);
	});
});
