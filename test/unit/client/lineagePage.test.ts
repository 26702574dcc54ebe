import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LineageTree, RunDetail } from '../../../server/src/protocol/protocol';
import {
	hasLineageSection,
	lineagePageCommands,
	lineageSnapshotItems,
	renderLineageSection,
} from '../../../client/src/lineage/lineagePage';
import { renderRunBody, runPageCommands } from '../../../client/src/runs/runPage';
import { branch, hostile, message, root } from './lineageFixtures';

function detail(
	task: string,
	run: string,
	items: Array<{ kind: string; path: string; preview?: string; blob?: string }> = [],
): RunDetail {
	return {
		run: { object_id: run, tags: {} },
		summary: { status: 'completed', at_gate: false, started_at: '2026-12-02T10:00:00Z', patchsets: 0, evidence: 0 },
		task: { object_id: task, title: 'Refactor the parser' },
		patchsets: [],
		evidence: [],
		tool_invocations: [],
		...(items.length ? { snapshot: { selection_strategy: 'explicit', items } } : {}),
	} as unknown as RunDetail;
}

/** The command links of a section with their decoded arguments. */
function links(html: string): Array<{ command: string; args: unknown; label: string }> {
	return [...html.matchAll(/<a class="button \w+" href="command:([\w.]+)\?([^"]*)">([^<]*)<\/a>/g)].map((m) => ({
		command: m[1]!,
		args: JSON.parse(
			decodeURIComponent(
				m[2]!
					.replace(/&amp;/g, '&')
					.replace(/&quot;/g, '"')
					.replace(/&#39;/g, "'"),
			),
		),
		label: m[3]!,
	}));
}

const tally = `## Other branches of main\n- Split the parser: landed as abc1234\n- ${hostile}`;
const memory = '## Project memory (main)\n- Tests: run npm test';

describe("the run page's Lineage section", () => {
	const child = branch('b', 'landed', { title: 'Document the parser' });
	const tree: LineageTree = {
		roots: [{ root: root({ branches: 1, landed: 1 }), tally: 'tally-1', branches: [child] }],
		by_starter_run: { 'run-starter': ['b'] },
	};

	it("on the starter's run: the branches it started with their state, its board as a timeline with Answer… on a report not answered", () => {
		const board = [
			message(1, 'report', {
				from_node: 'b',
				from_run: 'run-b',
				text: 'Landed the docs.',
				data: { outcome: 'landed', commit: 'abc1234ff' },
			}),
			message(2, 'note', { from_node: 'b', from_run: 'run-b', text: 'halfway' }),
		];
		const facts = { project: 'shop', detail: detail('task-starter', 'run-starter'), tree, board };
		assert.equal(hasLineageSection(facts), true);
		const html = renderLineageSection(facts);
		assert.match(html, /<h2 id="lineage">Lineage<\/h2>/);
		assert.match(html, /This run’s task is no branch/);
		assert.match(html, /Branches it started \(1\)/);
		assert.match(html, /<td>Document the parser<\/td><td><span class="state landed">landed<\/span>/);
		assert.match(html, /Board \(2\)/);
		assert.ok(html.indexOf('Landed the docs.') < html.indexOf('halfway'), 'oldest first');
		assert.match(html, /Report \(landed as abc1234\)/);
		assert.match(html, /<td class="from">branch “Document the parser”<\/td>/, 'the sender by the branch’s title');
		const offered = links(html);
		assert.deepEqual(
			offered.map((l) => l.label),
			['Branch from Here…', 'Open Board', 'Continue with Reports', 'Answer…'],
		);
		assert.deepEqual(offered.find((l) => l.label === 'Answer…')?.args, ['shop', 'm-1']);
		for (const link of offered) {
			assert.ok((lineagePageCommands as readonly string[]).includes(link.command), link.command);
			assert.ok((runPageCommands as readonly string[]).includes(link.command), 'the run page allows it');
		}
		const answered = renderLineageSection({ ...facts, board: [{ ...board[0]!, answered_by: 'm-9' }] });
		assert.equal(links(answered).filter((l) => l.label === 'Answer…').length, 0);
	});

	it("on a branch's run: its root, starter, grant chain, how it runs, and exactly the tally and memory sections its prompts were told", () => {
		const items = [
			{ kind: 'file', path: 'src/parser.ts', preview: 'not lineage' },
			{ kind: 'snippet', path: 'lineage: tally of main', preview: tally, blob: 'f'.repeat(40) },
			{ kind: 'snippet', path: 'lineage: memory of main', preview: memory },
		];
		const html = renderLineageSection({ project: 'shop', detail: detail('b', 'run-b', items), tree, board: [] });
		assert.match(html, /root main, depth 1/);
		assert.match(html, /run run-starter/);
		assert.match(html, /branch:b → root:main → ultimate:run-starter/);
		assert.match(html, /scripted in the shared checkout, nodes work/);
		assert.match(html, /What its prompts were told/);
		assert.ok(
			html.includes('## Other branches of main\n- Split the parser: landed as abc1234'),
			'the section as pinned, its lines kept',
		);
		assert.ok(html.includes(memory));
		assert.doesNotMatch(html, /not lineage/);
		assert.match(html, /blob ffffffffffff/);
	});

	it('recognises the pinned sections by their locator', () => {
		const items = [
			{ kind: 'snippet' as const, path: 'catch-up before work: Other branches of main' },
			{ kind: 'snippet' as const, path: 'catch-up before plan (attempt 2): Project memory (main)' },
			{ kind: 'snippet' as const, path: 'lineage:tally:main' },
			{ kind: 'snippet' as const, path: 'Other branches of main' },
			{ kind: 'snippet' as const, path: 'Project memory (main)' },
			{ kind: 'snippet' as const, path: 'memory/main' },
			{ kind: 'snippet' as const, path: 'notes.md' },
			{ kind: 'file' as const, path: 'lineage.ts' },
		];
		assert.deepEqual(
			lineageSnapshotItems(items).map((i) => i.path),
			[
				'catch-up before work: Other branches of main',
				'catch-up before plan (attempt 2): Project memory (main)',
				'lineage:tally:main',
				'Other branches of main',
				'Project memory (main)',
				'memory/main',
			],
		);
	});

	it('has nothing to show for a run outside any lineage', () => {
		const outside: LineageTree = { roots: [{ root: root(), branches: [] }], by_starter_run: {} };
		assert.equal(hasLineageSection({ project: 'shop', detail: detail('t', 'r'), tree: outside, board: [] }), false);
	});

	it('escapes every title, text and section an agent or a repository chose; the run page carries the section', () => {
		const evil = branch('b', 'running', { title: hostile, abstract: hostile });
		evil.node.grant_chain = [hostile];
		const evilTree: LineageTree = {
			roots: [{ root: root(), tally: 't', branches: [evil] }],
			by_starter_run: { r: ['b'] },
		};
		const html = renderLineageSection({
			project: hostile,
			detail: detail('b', 'r', [{ kind: 'snippet', path: `lineage: ${hostile}`, preview: hostile }]),
			tree: evilTree,
			board: [message(1, 'report', { from_node: 'x', text: hostile, from_run: hostile })],
		});
		assert.doesNotMatch(html, /<(b|img|script)\b/i);
		assert.doesNotMatch(html, /href="(?!command:agentDesk\.)/);
		assert.doesNotMatch(html, /[\u202a-\u202e]/);
		assert.match(html, /\\u202eexe\.txt/);
		const page = renderRunBody(detail('b', 'r'), '', html);
		assert.ok(page.includes('<h2 id="lineage">Lineage</h2>'));
		assert.ok(page.indexOf('Lineage</h2>') < page.indexOf('Provenance</h2>'));
	});
});
