/**
 * What `desk run status` says of a landed branch's memorize (glossary: Project memory): its last
 * outcome and what the summary agent's answers cost in all, each answer once.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatRunDetail, usageText } from '../../../server/src/cli/commands/runs';
import type { RunDetail } from '../../../server/src/runs/types';

function detail(invocations: Array<Record<string, unknown>>): RunDetail {
	return {
		run: { object_id: 'run-b', tags: {} },
		summary: { id: 'run-b', status: 'completed', at_gate: false, started_at: '', patchsets: 0, evidence: 0 },
		task: { object_id: 'b', title: 'Document the parser' },
		patchsets: [],
		evidence: [],
		tool_invocations: invocations,
	} as unknown as RunDetail;
}

it("desk run status shows the memorize's outcome and the summary agent's tokens and cost", () => {
	const answer = (total_tokens: number, cost_usd: number) => ({
		tool_name: 'summary_agent',
		args: { usage: { input_tokens: 0, output_tokens: 0, total_tokens, cost_usd } },
	});
	const text = formatRunDetail(
		detail([
			answer(1200, 0.0123),
			answer(800, 0.0077),
			{ tool_name: 'memorize', result_summary: 'memory of main: 1 added, 0 updated, 0 removed' },
		]),
	);
	assert.match(
		text,
		/\n {2}memorize: memory of main: 1 added, 0 updated, 0 removed · summary agent: 2000 tokens \$0\.0200$/,
	);
	assert.doesNotMatch(formatRunDetail(detail([])), /memorize/);
	assert.equal(usageText(undefined), '', 'nothing when the agent was not asked');
});
