import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
	boardCounts,
	boardDescription,
	boardDocument,
	boardLabel,
	boardTooltip,
	branchDescription,
	branchTooltip,
	costText,
	findBranch,
	hasLineage,
	isDeliveredReport,
	newestFirst,
	reportMessage,
	rootDescription,
	rootTooltip,
	tokensText,
	withAnswers,
	type LineageTreeRoot,
} from '../../../client/src/lineage/lineageText';
import { messageText } from '../../../client/src/common/markdownText';
import { assertInertMarkdown } from '../../helpers/markdown';
import { branch, hostile, message, root } from './lineageFixtures';

describe("the Runs view's lineage rows", () => {
	it('counts tokens and dollars the way a person reads them', () => {
		assert.equal(tokensText(1), '1 token');
		assert.equal(tokensText(812), '812 tokens');
		assert.equal(tokensText(1200), '1.2k tokens');
		assert.equal(tokensText(41_230), '41k tokens');
		assert.equal(tokensText(2_000_000), '2M tokens');
		assert.equal(costText(0), '$0');
		assert.equal(costText(0.0042), '$0.0042');
		assert.equal(costText(0.634), '$0.63');
	});

	it('says of a root its tally, its branches by state and the tokens and cost of all of them; an empty root says so', () => {
		const tree: LineageTreeRoot = {
			root: root({ branches: 3, live: 1, landed: 1 }),
			tally: 'tally-1',
			branches: [
				branch('a', 'landed', { subtree: { tokens: 20_000, cost_usd: 0.3, branches: 1 } }),
				branch('b', 'gate', {
					subtree: { tokens: 21_200, cost_usd: 0.33, branches: 2 },
					children: [branch('c', 'queued')],
				}),
			],
		};
		assert.equal(
			rootDescription(tree),
			'tally · 3 branches (1 waiting for the checkout · 1 at the gate · 1 landed) · 41k tokens · $0.63',
		);
		assert.equal(rootDescription({ root: root(), branches: [] }), 'no branch yet');
		assert.equal(rootDescription({ root: root({ about: 'the\nrewrite' }), branches: [] }), 'no branch yet · the');
	});

	it('shows Roots only once there is a branch or a root besides main', () => {
		assert.equal(hasLineage({ roots: [{ root: root(), branches: [] }], by_starter_run: {} }), false);
		assert.equal(
			hasLineage({
				roots: [
					{ root: root(), branches: [] },
					{ root: root({ name: 'x' }), branches: [] },
				],
				by_starter_run: {},
			}),
			true,
		);
		assert.equal(
			hasLineage({ roots: [{ root: root(), branches: [branch('a', 'running')] }], by_starter_run: {} }),
			true,
		);
	});

	it('says a queued branch waits for the checkout, with its runs, its subtree and the reports still to answer', () => {
		assert.equal(branchDescription(branch('q', 'queued')), 'waiting for the checkout · 1 run · 1.2k tokens · $0.01');
		assert.equal(
			branchDescription(
				branch('g', 'gate', {
					board: { messages: 4, reports: 2, unanswered: 2, notes: 0 },
					subtree: { tokens: 5000, cost_usd: 1.5, branches: 3 },
				}),
			),
			'at the gate · 1 run · 5k tokens (3 branches) · $1.50 · 2 reports to answer',
		);
	});

	it('finds a branch at any depth', () => {
		const deep = branch('deep', 'running');
		const tree = {
			roots: [{ root: root(), branches: [branch('a', 'running', { children: [deep] })] }],
			by_starter_run: {},
		};
		assert.equal(findBranch(tree, 'deep'), deep);
		assert.equal(findBranch(tree, 'nope'), undefined);
	});

	it('lists a board newest first, with its mark, kind, outcome and whether a report was answered', () => {
		const board = [
			message(1, 'note'),
			message(3, 'answer', { passive: true }),
			message(2, 'report', { from_node: 'task-b', data: { outcome: 'landed', commit: 'abc1234def' } }),
		];
		assert.deepEqual(
			newestFirst(board).map((m) => m.seq),
			[3, 2, 1],
		);
		assert.equal(boardCounts(board), '1 report · 1 note · 1 answer');
		assert.equal(boardCounts([board[0]!]), '1 note');
		assert.equal(boardCounts([]), 'no message');
		assert.equal(
			boardLabel(
				message(5, 'report', {
					text: 'landed as abc1234ff (Desk-Run: r)',
					data: { outcome: 'landed', commit: 'abc1234ff' },
				}),
			),
			'Report (landed as abc1234)',
		);
		assert.equal(
			boardLabel(
				message(6, 'report', {
					text: 'landed as abc1234ff (Desk-Run: r)\n\nDocumented the parser.',
					data: { outcome: 'landed', commit: 'abc1234ff' },
				}),
			),
			'Report (landed as abc1234): Documented the parser.',
		);
		assert.equal(
			boardLabel(message(7, 'input', { text: '## Reports from branches\n\nWhat came back…' })),
			'Prompt: Reports from branches',
		);
		assert.equal(boardLabel(board[2]!), 'Report (landed as abc1234): text 2');
		assert.equal(boardLabel(board[0]!), 'Note: text 1');
		assert.equal(boardLabel(board[1]!), 'Answer: text 3');
		assert.equal(boardDescription(board[2]!), '2026-12-02 10:02 · not answered yet');
		assert.equal(boardDescription({ ...board[2]!, answered_by: 'm-3' }), '2026-12-02 10:02 · answered');
		assert.equal(
			boardLabel(message(4, 'report', { data: { outcome: 'stopped' } })),
			'Report (stopped with the desk; nothing was landed): text 4',
		);
	});

	it("marks a report delivered to the starter's board answered once its branch's own report was", () => {
		const delivered = message(2, 'report', { node: 'task-starter', from_node: 'b' });
		const tree = (unanswered: number) => ({
			roots: [
				{
					root: root(),
					branches: [branch('b', 'landed', { board: { messages: 3, reports: 1, unanswered, notes: 0 } })],
				},
			],
			by_starter_run: {},
		});
		assert.equal(withAnswers([delivered], tree(1))[0]!.answered_by, undefined);
		assert.ok(withAnswers([delivered], tree(0))[0]!.answered_by);
		assert.equal(withAnswers([delivered], undefined)[0]!.answered_by, undefined);
		assert.equal(withAnswers([message(1, 'note', { from_node: 'b' })], tree(0))[0]!.answered_by, undefined);
	});

	it("tells a report delivered to the starter's board from the branch's own record of it", () => {
		assert.equal(isDeliveredReport(message(1, 'report', { node: 'task-starter', from_node: 'task-b' })), true);
		assert.equal(isDeliveredReport(message(1, 'report', { node: 'task-b', from_node: 'task-b' })), false);
		assert.equal(isDeliveredReport(message(1, 'report', { node: 'task-b' })), false);
		assert.equal(isDeliveredReport(message(1, 'note', { from_node: 'task-b' })), false);
	});

	it('renders no link, image, icon or bidi override from a hostile title, abstract, root or board text', () => {
		const evil = branch('e', 'running', { title: hostile, abstract: `${hostile}\n${hostile}` });
		evil.node.grant_chain = [hostile];
		evil.node.config.agent = hostile;
		assertInertMarkdown(branchTooltip(evil));
		assertInertMarkdown(
			rootTooltip(
				root({
					name: 'main',
					about: hostile,
					listed_by: hostile,
					memory: { exists: true, memories: 1, uncommitted: true, corrupt: hostile },
				}),
			),
		);
		assertInertMarkdown(boardTooltip(message(1, 'report', { text: hostile, from_run: hostile })));
		assert.doesNotMatch(boardTooltip(message(1, 'note', { text: hostile })), /\]\(command:/);
	});

	it('makes one notification of a report, whose text can make no link', () => {
		const text = messageText(reportMessage({ title: hostile, outcome: 'landed' }));
		assert.doesNotMatch(text, /\[[^\]]+\]\((?:https?:\/\/|command:|file:)/);
		assert.match(
			reportMessage({ title: 'Document the parser', outcome: 'landed' }),
			/^Agent Desk: branch ‘Document the parser’ landed\.$/,
		);
		assert.match(
			reportMessage({ title: 'Try it\nsecond line', outcome: 'abandoned' }),
			/branch ‘Try it’ was abandoned\./,
		);
	});

	it('writes a board as plain text, oldest first, each text indented whole under its heading', () => {
		const doc = boardDocument('Refactor', [
			message(2, 'report', {
				text: 'done\n[x](command:rm)',
				from_run: 'run-b',
				from_node: 'task-b',
				data: { outcome: 'failed' },
			}),
			message(1, 'input', { text: 'do it', from_node: 'task-starter' }),
		]);
		const lines = doc.split('\n');
		assert.equal(lines[0], 'Board of Refactor');
		assert.ok(lines.indexOf('    do it') < lines.indexOf('    done'));
		assert.ok(lines.includes('    [x](command:rm)'), doc);
		assert.ok(
			lines.some((l) =>
				l.startsWith('Report (failed) · 2026-12-02 10:02:00 · from run run-b (active, not answered yet)'),
			),
			doc,
		);
	});
});
