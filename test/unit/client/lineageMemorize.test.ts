/**
 * The run page's Lineage section tells what became of a landed branch's memorize and what the
 * summary agent's answers cost (glossary: Project memory), each answer once, escaped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LineageTree, RunDetail } from '../../../server/src/protocol/protocol';
import { renderLineageSection } from '../../../client/src/lineage/lineagePage';
import { branch, root } from './lineageFixtures';

function detail(invocations: Array<Record<string, unknown>>): RunDetail {
	return {
		run: { object_id: 'run-b', tags: {} },
		summary: { status: 'completed', at_gate: false, started_at: '2026-12-02T10:00:00Z', patchsets: 0, evidence: 0 },
		task: { object_id: 'b', title: 'Document the parser' },
		patchsets: [],
		evidence: [],
		tool_invocations: invocations,
	} as unknown as RunDetail;
}

const tree: LineageTree = {
	roots: [{ root: root({ branches: 1, landed: 1 }), tally: 'tally-1', branches: [branch('b', 'landed')] }],
	by_starter_run: {},
};

const answer = (usage: Record<string, number>, model = 'summary-model <b>') => ({
	tool_name: 'summary_agent',
	status: 'ok',
	args: { agent: 'scripted', model, memo: 'sha256:1', usage },
});

describe("the Lineage section's memorize", () => {
	it("shows the outcome and the summary agent's tokens and cost, summed over its answers", () => {
		const html = renderLineageSection({
			project: 'shop',
			tree,
			detail: detail([
				answer({ input_tokens: 1000, output_tokens: 200, total_tokens: 1200, cost_usd: 0.0123 }),
				answer({ input_tokens: 900, output_tokens: 100, total_tokens: 1000, cost_usd: 0.01 }),
				{
					tool_name: 'memorize',
					status: 'ok',
					result_summary: 'memory of main: 1 added, 0 updated, 0 removed',
					args: {},
				},
			]),
		});
		assert.match(html, /<h3 id="memorize">Memory<\/h3>/);
		assert.match(html, /<th>Memorized<\/th><td>memory of main: 1 added, 0 updated, 0 removed<\/td>/);
		assert.match(html, /<th>Summary agent<\/th><td>summary-model &lt;b&gt; · 2 answers · 2\.2k tokens · \$0\.02<\/td>/);
	});

	it('says when the memorize has not finished, and nothing for a run that memorized nothing', () => {
		const pending = renderLineageSection({
			project: 'shop',
			tree,
			detail: detail([answer({ input_tokens: 10, output_tokens: 5, total_tokens: 15 })]),
		});
		assert.match(pending, /<th>Memorized<\/th><td>not finished yet<\/td>/);
		assert.match(pending, /· 1 answer · 15 tokens<\/td>/);
		assert.doesNotMatch(renderLineageSection({ project: 'shop', tree, detail: detail([]) }), /id="memorize"/);
	});
});
