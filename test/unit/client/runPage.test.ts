import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunDetail } from '../../../server/src/protocol/protocol';
import {
	argsSummary,
	callTree,
	renderActions,
	renderRunBody,
	runPageCommands,
	runPageHtml,
	splitToolCalls,
	type CallNode,
} from '../../../client/src/runs/runPage';
import { formatDuration, runState, runStatusText, waitingText } from '../../../client/src/runs/runWords';

/** Text an agent or a repository chooses: markup, a control sequence, a bidi override. */
const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>\u001b[2J\u202eexe.txt';

type Summary = RunDetail['summary'];

/** A run with what the page reads; `summary` and the rest as a test needs them. */
function detail(summary: Partial<Summary>, more: Partial<Record<keyof RunDetail, unknown>> = {}): RunDetail {
	return {
		run: {
			object_id: 'run-1',
			error: hostile,
			commit: 'abc123',
			tags: { 'desk.agent': hostile, 'desk.isolation': 'shared', 'desk.sandbox': hostile },
		},
		summary: {
			status: 'validating',
			at_gate: false,
			started_at: '2026-01-01T00:00:00Z',
			duration_ms: 65_000,
			patchsets: 0,
			evidence: 0,
			...summary,
		},
		task: { title: hostile, description: hostile, constraints: [hostile], acceptance_criteria: [hostile] },
		intent: { prompt: hostile, content: hostile },
		patchsets: [],
		evidence: [],
		tool_invocations: [
			{
				object_id: 'call-1',
				created_at: '2026-01-01T00:00:01Z',
				tool_name: hostile,
				args: { command: hostile },
				status: 'ok',
				result_summary: hostile,
				artifacts: [],
				tags: {},
				external_ids: {},
			},
		],
		...more,
	} as unknown as RunDetail;
}

const patchset = {
	object_id: 'ps-1',
	apply_status: 'applied',
	rationale: hostile,
	touched: [{ path: hostile, change_type: 'modified', lines_added: 3, lines_deleted: 1 }],
};
const check = (exit: number) => ({
	patchset_id: 'ps-1',
	exit_code: exit,
	tool: 'sh',
	tags: { 'desk.check': hostile },
	summary: hostile,
	command: hostile,
});

/** The command links of an actions row, with their decoded arguments and class. */
function links(html: string): Array<{ command: string; args: unknown; kind: string; label: string }> {
	return [...html.matchAll(/<a class="button (\w+)" href="command:([\w.]+)\?([^"]*)">([^<]*)<\/a>/g)].map((m) => ({
		kind: m[1]!,
		command: m[2]!,
		args: JSON.parse(
			decodeURIComponent(
				m[3]!
					.replace(/&amp;/g, '&')
					.replace(/&quot;/g, '"')
					.replace(/&#39;/g, "'"),
			),
		),
		label: m[4]!,
	}));
}

describe('the run page, built without VS Code', () => {
	it('shows every value an agent or a repository chose as text: no markup, controls or bidi characters', () => {
		const d = detail(
			{ at_gate: true, patchsets: 1 },
			{ patchsets: [patchset], evidence: [check(0), check(1)], decision: undefined },
		);
		const page = renderRunBody(d, renderActions(hostile, d));
		assert.doesNotMatch(page, /<(script|img)\b/i);
		assert.doesNotMatch(page, /[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
		assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
		assert.match(page, /\\x1b\[2J\\u202eexe\.txt/);
		assert.match(page, /Evidence \(1 passed, 1 failed\)/);
	});

	it("says nothing in the desk's internal words: no frames, pipeline or intent_analysis", () => {
		const d = detail(
			{},
			{
				plan: { steps: [{ description: 'work', iframes: [0], oframes: [1, 2], statuses: [] }] },
				pipeline: {
					max_frames: 0,
					next_frame_id: 2,
					frames: [
						{ frame_id: 0, kind: 'intent_analysis', summary: 'Goal: x', created_at: '2026-01-01T00:00:00Z' },
						{ frame_id: 1, kind: 'step_summary', summary: 'work: done', created_at: '2026-01-01T00:00:02Z' },
					],
				},
				intent: { prompt: 'Do x', content: 'Goal: x\nTarget: shop v3' },
			},
		);
		const page = renderRunBody(d);
		assert.doesNotMatch(page, /frame|pipeline|intent_analysis|step_summary/i);
		assert.match(page, /<h2>What the agent was given<\/h2><p class="text">Goal: x\nTarget: shop v3<\/p>/);
	});

	it("shows the Task's description, acceptance criteria and constraints, and the plan the run started on with its revisions", () => {
		const step = (description: string, iframes: number[], oframes: number[]) => ({
			description,
			iframes,
			oframes,
			statuses: [{ status: 'completed', changed_at: '2026-01-01T00:00:00Z' }],
		});
		const d = detail(
			{},
			{
				task: {
					title: 'Tidy the README',
					description: 'Keep it short.',
					acceptance_criteria: ['README has a title', 'no typos'],
					constraints: ['Touch only README.md'],
				},
				plan: { steps: [step('plan', [0], [1]), step('work', [0, 1], [2, 3])] },
				revisions: [{ created_by: { kind: 'agent', id: 'scripted' }, steps: [step('Write it', [0, 1], [2, 3])] }],
			},
		);
		const page = renderRunBody(d);
		const task = page.slice(page.indexOf('<h2>Task</h2>'), page.indexOf('<h2>Plan</h2>'));
		assert.match(task, /<p class="text">Keep it short\.<\/p>/);
		assert.match(task, /<h3>Acceptance criteria<\/h3><ul><li>README has a title<\/li><li>no typos<\/li><\/ul>/);
		assert.match(task, /<h3>Constraints<\/h3><ul><li>Touch only README\.md<\/li><\/ul>/);
		assert.match(page, /<h3>Plan revision 1 by scripted<\/h3>.*<td>1<\/td><td>Write it<\/td><td>completed<\/td>/s);
		const bare = renderRunBody(detail({}, { task: { title: 't', constraints: [], acceptance_criteria: [] } }));
		assert.doesNotMatch(bare, /<h2>Task<\/h2>/, 'no empty Task section');
	});

	it('offers the decisions of where the run stands, each a link to one of the gate commands with the project and run', () => {
		const project = 'shop "x" <y> / é';
		const offered = (d: RunDetail) =>
			links(renderActions(project, d)).map(
				(l) => `${l.kind === 'primary' ? '*' : ''}${l.command.replace('agentDesk.', '')}`,
			);
		assert.deepEqual(offered(detail({ status: 'patching' })), ['cancelRun']);
		assert.deepEqual(offered(detail({ at_gate: true }, { patchsets: [patchset] })), [
			'reviewRun',
			'*approveRun',
			'retryRun',
			'abandonRun',
			'checkpointRun',
		]);
		assert.deepEqual(offered(detail({ at_gate: true })), ['retryRun', 'abandonRun']);
		assert.deepEqual(offered(detail({ status: 'failed' }, { patchsets: [patchset] })), [
			'reviewRun',
			'*retryRun',
			'abandonRun',
		]);
		assert.deepEqual(offered(detail({ status: 'failed' })), ['*retryRun', 'abandonRun']);
		assert.deepEqual(offered(detail({ status: 'completed', decision: 'commit' }, { patchsets: [patchset] })), [
			'reviewRun',
			'rollbackRun',
		]);
		assert.match(
			renderRunBody(detail({ status: 'completed', decision: 'commit', rolled_back_by: 'run-2' }), ''),
			/completed · landed, then rolled back/,
		);
		assert.deepEqual(offered(detail({ status: 'completed', decision: 'commit', rolled_back_by: 'run-2' })), [
			'openRun',
		]);
		assert.deepEqual(offered(detail({ status: 'completed', decision: 'checkpoint' })), ['*resumeRun']);
		assert.match(
			renderActions(project, detail({ status: 'completed', decision: 'checkpoint' })),
			/kept as a checkpoint/,
		);
		assert.deepEqual(offered(detail({ status: 'completed', decision: 'checkpoint', resumed_by: 'run-2' })), [
			'openRun',
		]);
		assert.match(
			renderActions(project, detail({ status: 'completed', decision: 'checkpoint', resumed_by: 'run-2' })),
			/Resumed by run run-2\./,
		);
		assert.equal(renderActions(project, detail({ status: 'completed', decision: 'abandon' })), '');
		for (const link of [
			...links(renderActions(project, detail({ at_gate: true }, { patchsets: [patchset] }))),
			...links(renderActions(project, detail({ status: 'completed', decision: 'commit' }))),
			...links(renderActions(project, detail({ status: 'completed', decision: 'checkpoint' }))),
		]) {
			assert.ok((runPageCommands as readonly string[]).includes(link.command), link.command);
			assert.deepEqual(link.args, [project, 'run-1']);
		}
	});

	it('says how the agent received its instructions, and nothing for a run from before that was recorded', () => {
		const withSkills = (skills: string | undefined) =>
			renderRunBody(
				detail(
					{},
					{
						run: {
							object_id: 'run-1',
							commit: 'abc123',
							tags: { 'desk.agent': 'claude', ...(skills === undefined ? {} : { 'desk.skills': skills }) },
						},
					},
				),
				'',
			);
		for (const [skills, words] of [
			['claude', 'installed as Claude Code skills'],
			['inline', 'inlined in the prompt'],
			['none', 'not given'],
		]) {
			assert.match(withSkills(skills), new RegExp(`Instructions</th><td>${words}</td>`), skills);
		}
		assert.doesNotMatch(withSkills(undefined), /Instructions/);
	});

	it('says at the gate how many files changed and how many checks passed', () => {
		const d = detail({ at_gate: true }, { patchsets: [patchset], evidence: [check(0), check(2), check(0)] });
		assert.match(renderActions('shop', d), /Waiting for your review: 1 file changed, checks: 2 passed, 1 failed\./);
	});

	it('runs its own script only, by nonce, and none without it; loads only from the webview', () => {
		const bare = runPageHtml('https://webview.example', '<p>body</p>');
		const cspOf = (page: string) => /Content-Security-Policy" content="([^"]*)"/.exec(page)?.[1] ?? '';
		assert.match(cspOf(bare), /default-src 'none'/);
		assert.doesNotMatch(cspOf(bare), /script-src/);
		assert.ok(bare.includes('<body><p>body</p></body>'));
		const live = runPageHtml('https://webview.example', '<p>body</p>', {
			nonce: 'n0nce',
			src: 'https://webview.example/runPage.js',
		});
		assert.match(cspOf(live), /default-src 'none'; .* script-src 'nonce-n0nce';$/);
		assert.match(live, /<script defer nonce="n0nce" src="https:\/\/webview\.example\/runPage\.js"><\/script>/);
	});
});

describe("the run page's desk tool calls", () => {
	const deskCall = (tool: string, args: unknown, more: object = {}) => ({
		object_id: `desk-${tool}`,
		created_at: '2026-01-01T00:00:02Z',
		artifacts: [],
		tool_name: tool,
		args,
		status: 'ok',
		result_summary: `${tool} answered`,
		tags: { 'desk.tool': 'desk' },
		external_ids: { tool_use_id: `toolu_${tool}` },
		...more,
	});
	const own = {
		object_id: 'own-1',
		created_at: '2026-01-01T00:00:01Z',
		tool_name: 'Bash',
		args: { command: 'ls' },
		status: 'ok',
		result_summary: 'listed',
		artifacts: [],
		tags: {},
		external_ids: {},
	};

	/** The rows of the table under the heading that starts with `heading`, as cell texts. */
	function rowsUnder(page: string, heading: string): string[][] {
		const at = page.indexOf(`<h2>${heading}`);
		assert.ok(at >= 0, `a section ${heading}`);
		const body = page.slice(at).split('<h2>')[1]!;
		return [...body.matchAll(/<tr>((?:<td>.*?<\/td>)+)<\/tr>/g)].map((m) =>
			[...m[1]!.matchAll(/<td>(.*?)<\/td>/g)].map((c) => c[1]!),
		);
	}

	it('lists the calls tagged desk.tool apart from the agent’s own, with their arguments, result and the agent’s call id', () => {
		const d = detail(
			{},
			{
				tool_invocations: [
					own,
					deskCall('asset_search', { query: 'retry policy', limit: 5 }),
					deskCall('attach', { path: 'out/report.md' }, { status: 'error', result_summary: 'operation.outsideRun' }),
				],
			},
		);
		const page = renderRunBody(d);
		assert.deepEqual(rowsUnder(page, 'Desk tool calls (2)'), [
			[
				'asset_search',
				'query: &quot;retry policy&quot;, limit: 5',
				'ok',
				'asset_search answered',
				'toolu_asset_search',
			],
			['attach', 'path: &quot;out/report.md&quot;', 'error', 'operation.outsideRun', 'toolu_attach'],
		]);
		// The conversation has every call, the desk's marked as such.
		const conversation = page.slice(page.indexOf('<h2 id="conversation">'), page.indexOf('<h2>Desk tool calls'));
		assert.deepEqual(
			[...conversation.matchAll(/<span class="tool">([^<]*)<\/span>(<span class="badge">desk tool<\/span>)?/g)].map(
				(m) => `${m[1]}${m[2] ? ' (desk)' : ''}`,
			),
			['Bash', 'asset_search (desk)', 'attach (desk)'],
		);
	});

	it('says when the agent called no desk tool, and shows an agent’s arguments as text', () => {
		assert.match(
			renderRunBody(detail({}, { tool_invocations: [own] })),
			/Desk tool calls \(0\)<\/h2>\s*<p class="muted">/,
		);
		const page = renderRunBody(detail({}, { tool_invocations: [deskCall(hostile, { [hostile]: hostile })] }));
		assert.doesNotMatch(page, /<(script|img)\b/i);
		assert.doesNotMatch(page, /[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
	});

	it('keeps a long argument list to one line of at most the length asked', () => {
		const summary = argsSummary({ text: 'x'.repeat(500), tags: ['a', 'b'] }, 60);
		assert.equal(summary.length, 60);
		assert.ok(summary.endsWith('…'));
		assert.equal(argsSummary({ id: 'a-1', tags: ['a', 'b'] }), 'id: "a-1", tags: ["a","b"]');
		assert.equal(argsSummary(undefined), '');
		assert.deepEqual(
			splitToolCalls([own, deskCall('asset_tags', {})] as unknown as RunDetail['tool_invocations']).desk.map(
				(t) => t.tool_name,
			),
			['asset_tags'],
		);
	});
});

describe('how the views say where a run stands', () => {
	it("names the state and the decision in the views' words", () => {
		assert.equal(runState({ status: 'patching', at_gate: false }), 'running');
		assert.equal(runState({ status: 'validating', at_gate: true }), 'gate');
		assert.equal(runState({ status: 'failed', at_gate: false }), 'failed');
		assert.equal(runState({ status: 'failed', at_gate: false, decision: 'abandon' }), 'decided');
		assert.equal(runStatusText({ status: 'validating', at_gate: true }), 'waiting for review');
		assert.equal(runStatusText({ status: 'completed', at_gate: false, decision: 'commit' }), 'completed · landed');
		assert.equal(runStatusText({ status: 'patching', at_gate: false }), 'patching');
	});

	it('counts the runs waiting for review for the badge and the status bar, and says nothing of none', () => {
		assert.equal(waitingText(0), undefined);
		assert.deepEqual(waitingText(1), {
			status: '$(git-pull-request) 1 to review',
			tooltip: 'Agent Desk: 1 run waits for your review',
		});
		assert.equal(waitingText(3)?.tooltip, 'Agent Desk: 3 runs wait for your review');
	});

	it('formats durations in ms, s, then min and s', () => {
		assert.equal(formatDuration(850), '850 ms');
		assert.equal(formatDuration(42_400), '42 s');
		assert.equal(formatDuration(185_000), '3 min 5 s');
	});
});

describe("the run page's usage: per model, both totals, what is not certain, a subagent's calls", () => {
	const counts = (input: number, output: number, cost?: number, more: object = {}) => ({
		input_tokens: input,
		output_tokens: output,
		total_tokens: input + output,
		...(cost !== undefined ? { cost_usd: cost } : {}),
		...more,
	});
	const provenance = (usage: object, parameters: object = {}) => ({
		provider: 'anthropic',
		model: 'claude-sonnet-4-5',
		parameters,
		token_usage: usage,
	});

	/** The cells of the usage table, by row. */
	function usageRows(page: string): string[][] {
		const table = /<table class="usage">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
		return [...table.matchAll(/<tr>((?:<td>.*?<\/td>)+)<\/tr>/g)].map((m) =>
			[...m[1]!.matchAll(/<td>(.*?)<\/td>/g)].map((c) => c[1]!),
		);
	}

	it("has a row per model, the total, and the agent's own total where it disagrees, with turns and the agent's duration", () => {
		const usage = {
			...counts(166_585, 998, 0.1445, { cache_read_tokens: 133_712, cache_creation_tokens: 32_800 }),
			models: [
				{
					model: 'claude-sonnet-4-5',
					...counts(75_525, 281, 0.1234, {
						cache_read_tokens: 55_012,
						cache_creation_tokens: 20_500,
						reasoning_tokens: 30,
					}),
				},
				{
					model: 'claude-haiku-4-5',
					...counts(91_060, 717, 0.0211, { cache_read_tokens: 78_700, cache_creation_tokens: 12_300 }),
				},
			],
			turns: 4,
			duration_ms: 31_000,
			agent_totals: counts(75_525, 281, 0.1445),
		};
		const page = renderRunBody(detail({ total_tokens: 167_583, cost_usd: 0.1445 }, { provenance: provenance(usage) }));
		assert.deepEqual(usageRows(page), [
			['claude-sonnet-4-5', '75,525', '55,012', '20,500', '281', '30', '—', '75,806', '$0.1234'],
			['claude-haiku-4-5', '91,060', '78,700', '12,300', '717', '—', '—', '91,777', '$0.0211'],
			['Total', '166,585', '133,712', '32,800', '998', '—', '—', '167,583', '$0.1445'],
			['The agent&#39;s own total', '75,525', '—', '—', '281', '—', '—', '75,806', '$0.1445'],
		]);
		assert.match(page, /<th>Turns<\/th><td>4<\/td>/);
		assert.match(page, /<th>Agent&#39;s duration<\/th><td>31 s<\/td>/);
		assert.match(page, /own total disagrees/);
	});

	it('says "usage incomplete" (at least) or "usage unknown" when the output ended early, and marks an estimated cost', () => {
		const atLeast = renderRunBody(
			detail(
				{ total_tokens: 30_215, cost_usd: 0.044355, cost_estimated: true, usage_incomplete: true },
				{ provenance: provenance({ ...counts(30_210, 5, 0.044355, { cost_estimated: true }), incomplete: true }) },
			),
		);
		assert.match(atLeast, /Usage incomplete:/);
		assert.match(atLeast, /<th>Tokens<\/th><td>at least 30,215 tokens<\/td>/);
		assert.match(atLeast, /<th>Cost<\/th><td>at least \$0\.0444 estimated<\/td>/);
		assert.match(atLeast, /price table/);
		const unknown = renderRunBody(
			detail(
				{ total_tokens: 0, usage_incomplete: true },
				{ provenance: provenance({ ...counts(0, 0), incomplete: true }) },
			),
		);
		assert.match(unknown, /Usage unknown:/);
		assert.match(unknown, /<th>Tokens<\/th><td>usage unknown<\/td>/);
		const complete = renderRunBody(detail({ total_tokens: 15 }, { provenance: provenance(counts(10, 5, 0.01)) }));
		assert.doesNotMatch(complete, /Usage (incomplete|unknown)/);
	});

	it('names the model asked for beside the one that answered, and a model no price is known for', () => {
		const page = renderRunBody(
			detail(
				{ total_tokens: 66_983, unpriced_models: ['gemini-3.5-flash'] },
				{
					provenance: {
						...provenance(
							{ ...counts(65_422, 219, undefined, { other_tokens: 1342 }), total_tokens: 66_983 },
							{ requested_model: 'auto' },
						),
						provider: 'google',
						model: 'gemini-3.5-flash',
					},
				},
			),
		);
		assert.match(page, /google gemini-3\.5-flash \(asked for auto\)/);
		assert.match(page, /<th>Cost<\/th><td>cost unknown<\/td>/);
		assert.match(page, /No cost is known for gemini-3\.5-flash/);
	});

	const call = (id: string, tool: string, parent?: string, usage?: object) => ({
		object_id: id,
		created_at: '2026-01-01T00:00:01Z',
		args: {},
		artifacts: [],
		tool_name: tool,
		status: 'ok',
		result_summary: `${tool} done`,
		tags: {},
		external_ids: {},
		...(parent ? { parent_invocation: parent } : {}),
		...(usage ? { token_usage: usage } : {}),
	});

	it("nests a subagent's calls under the Task call that started it, which shows what the subagent spent", () => {
		const calls = [
			call('a', 'Bash'),
			call('t', 'Task', undefined, { ...counts(24_343, 3, 0.016633, { cost_estimated: true }), incomplete: true }),
			call('r', 'Read', 't'),
			call('n', 'Agent', 't'),
			call('g', 'Grep', 'n'),
			call('e', 'Edit'),
		] as unknown as RunDetail['tool_invocations'];
		const tree = callTree(calls);
		const shape = (nodes: CallNode[]): unknown[] => nodes.map((n) => [n.call.tool_name, shape(n.children)]);
		assert.deepEqual(shape(tree), [
			['Bash', []],
			[
				'Task',
				[
					['Read', []],
					['Agent', [['Grep', []]]],
				],
			],
			['Edit', []],
		]);
		const page = renderRunBody(detail({}, { tool_invocations: calls }));
		const section = page.slice(page.indexOf('<h2 id="conversation">'));
		// Each call's name, with the depth of the subagent that made it (the <details> it is inside).
		const names: string[] = [];
		let depth = 0;
		for (const m of section.matchAll(/<details|<\/details>|<span class="tool">([^<]*)<\/span>/g)) {
			if (m[0] === '<details') {
				depth += 1;
			} else if (m[0] === '</details>') {
				depth -= 1;
			} else {
				names.push(`${'  '.repeat(depth - 1)}${m[1]}`);
			}
		}
		assert.deepEqual(names, ['Bash', 'Task', '  Read', '  Agent', '    Grep', 'Edit']);
		assert.match(section, /Its subagent&#39;s 2 calls/);
		assert.match(section, /Its subagent spent at least 24,346 tokens · at least \$0\.0166 estimated\./);
	});

	it('keeps a call whose starter is missing, or that would be its own ancestor, at the top', () => {
		const calls = [
			call('x', 'Read', 'gone'),
			call('p', 'Agent', 'q'),
			call('q', 'Agent', 'p'),
		] as unknown as RunDetail['tool_invocations'];
		const tree = callTree(calls);
		assert.equal(tree[0]?.call.object_id, 'x');
		const all = (nodes: CallNode[]): string[] => nodes.flatMap((n) => [n.call.object_id, ...all(n.children)]);
		assert.deepEqual(all(tree).sort(), ['p', 'q', 'x'], 'every call once, the loop broken');
	});
});
