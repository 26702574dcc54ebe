import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunSummary, RunsOverview } from '../../../server/src/protocol/protocol';
import { followUpOf, intentDescription, intentTooltip, runTooltip } from '../../../client/src/runs/runTooltips';
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
		assert.match(text, /\| Duration \| 4 s \|\n/);
		assert.doesNotMatch(
			runTooltip(run({ error: undefined, duration_ms: undefined }), 'Add paging'),
			/\$\(error\)|Duration/,
		);
	});
});
