import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DecideResult, RunDetail } from '../../../server/src/protocol/protocol';
import { checkpointKept, checkpointQuestion, landedWords, landingQuestion } from '../../../client/src/runs/gateWords';

const runId = '01a23bf7-0000-7000-8000-000000000001';

/** A run at the gate with one PatchSet adding src/greeting.ts, and its checks' Evidence. */
function detail(
	isolation: 'shared' | 'worktree',
	evidence: Array<{ check: string; exit: number; summary?: string; patchset?: string }> = [],
): RunDetail {
	return {
		run: { object_id: runId, tags: { 'desk.isolation': isolation } },
		task: { title: 'Add a greeting helper' },
		patchsets: [
			{ object_id: 'p-1', tags: {}, touched: [{ path: 'src/old.ts', change_type: 'modified' }] },
			{ object_id: 'p-2', tags: {}, touched: [{ path: 'src/greeting.ts', change_type: 'added' }] },
		],
		evidence: evidence.map((e) => ({
			patchset_id: e.patchset ?? 'p-2',
			tool: 'node',
			exit_code: e.exit,
			tags: { 'desk.check': e.check },
			...(e.summary ? { summary: e.summary } : {}),
		})),
	} as unknown as RunDetail;
}

describe("the gate's words, built without VS Code", () => {
	it('Land with every check passing: an information question whose one button lands', () => {
		const question = landingQuestion(detail('shared', [{ check: 'lint', exit: 0 }]), runId, 'main');
		assert.deepEqual(question, {
			warning: false,
			message: 'Land run ‘Add a greeting helper’?',
			detail: `Commit 1 file on main as “Add a greeting helper” with the trailer Desk-Run: ${runId}.\n\n  A src/greeting.ts`,
			actions: ['Land'],
			land: 'Land',
		});
	});

	it('Land with a failing check: a warning naming the failing checks, its default button reviewing them, not landing', () => {
		const question = landingQuestion(
			detail('shared', [
				{ check: 'greeting-exists', exit: 1, summary: 'ENOENT: src/greeting.ts\nat accessSync' },
				{ check: 'lint', exit: 0 },
				{ check: 'old-check', exit: 2, patchset: 'p-1' },
			]),
			runId,
			'main',
		);
		assert.equal(question.warning, true);
		assert.equal(question.message, 'Land run ‘Add a greeting helper’ with 1 failing check?');
		assert.deepEqual(question.actions, ['Review Checks', 'Land Anyway'], 'the first button is the default');
		assert.equal(question.land, 'Land Anyway');
		assert.ok(
			question.detail.startsWith(
				'This check of the change failed:\n  ✕ greeting-exists (exit 1: ENOENT: src/greeting.ts)\n\n',
			),
			question.detail,
		);
		assert.ok(!question.detail.includes('old-check'), "an earlier attempt's check is not this change's");
	});

	it("in worktree mode Land says the commit goes on the run's own branch, to be merged after", () => {
		const question = landingQuestion(detail('worktree'), runId, 'main');
		assert.ok(
			question.detail.startsWith(
				`Commit 1 file on desk/run-${runId}, the run's own branch, as “Add a greeting helper” with the trailer Desk-Run: ${runId}. main does not get it until you merge it (offered next).`,
			),
			question.detail,
		);
		const landed = landedWords(detail('worktree'), 'abcdef0123456789', runId, 'main');
		assert.deepEqual(landed, {
			message: `Agent Desk: landed ‘Add a greeting helper’ as commit abcdef0 on desk/run-${runId}, the run's own branch: main does not have it yet.`,
			merge: { title: 'Merge into main', command: `git merge --no-edit desk/run-${runId}` },
			switchTo: { title: 'Switch to Branch', command: `git switch desk/run-${runId}` },
		});
		assert.deepEqual(landedWords(detail('shared'), 'abcdef0123456789', runId, 'main'), {
			message: 'Agent Desk: landed ‘Add a greeting helper’ as commit abcdef0 on main.',
		});
	});

	it('Checkpoint says first what it keeps, where, and what it puts back, and after what it kept', () => {
		assert.deepEqual(checkpointQuestion(detail('shared'), runId), {
			message: 'Keep run ‘Add a greeting helper’ as a checkpoint?',
			detail: `Its change (1 file: src/greeting.ts) is kept as a commit under refs/desk/checkpoints/${runId}, off every branch; nothing lands. The 1 file the agent changed in the checkout is put back as it was when the run began (a file you edited since is left as it is). Resume from Checkpoint starts a new run from it.`,
		});
		assert.ok(
			!checkpointQuestion(detail('worktree'), runId).detail.includes('put back'),
			'a worktree puts nothing back',
		);
		const result = {
			decision: { checkpoint_id: 'c0ffee0123456789' },
			restored: ['src/greeting.ts'],
			left: [],
		} as unknown as DecideResult;
		assert.equal(
			checkpointKept(detail('shared'), result, runId),
			`Agent Desk: kept ‘Add a greeting helper’ as a checkpoint: 1 file (src/greeting.ts) as commit c0ffee0 under refs/desk/checkpoints/${runId}, off every branch. 1 file put back in the checkout. Nothing landed.`,
		);
	});
});
