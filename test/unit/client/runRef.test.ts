import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rowRef, runRef, runTextTarget } from '../../../client/src/runs/runRef';

const projects = [
	{ name: 'shop', path: '/projects/shop' },
	{ name: 'docs', path: '/projects/docs' },
];
const refused = /names no run of this window/;

describe('the run a gate command acts on (arguments from a menu, a run page link or any caller)', () => {
	it('takes (project, run id) of a project of this window', () => {
		assert.deepEqual(runRef('shop', '0190f3a2-7c1e-7000-8000-000000000001', projects), {
			project: 'shop',
			runId: '0190f3a2-7c1e-7000-8000-000000000001',
		});
	});

	it('takes only the project and the run id of a node of the Runs view', () => {
		const node = {
			type: 'run',
			project: 'docs',
			run: { id: 'r1', status: 'failed', extra: { nested: true } },
			title: 'x',
			contextValue: 'anything',
		};
		assert.deepEqual(runRef(node, undefined, projects), { project: 'docs', runId: 'r1' });
	});

	it('refuses a project of another window and a run id that is no object id', () => {
		assert.throws(() => runRef('elsewhere', 'r1', projects), refused);
		assert.throws(() => runRef('shop', '../../etc/passwd', projects), refused);
		assert.throws(() => runRef('shop', '', projects), refused);
		assert.throws(() => runRef('shop', 'r'.repeat(65), projects), refused);
		assert.throws(() => runRef({ type: 'run', project: 'shop', run: { id: 42 } }, undefined, projects), refused);
		assert.throws(
			() => runRef({ type: 'run', project: { name: 'shop' }, run: { id: 'r1' } }, undefined, projects),
			refused,
		);
	});

	it('names no run when the arguments are not a run (the command then asks which)', () => {
		for (const args of [
			[undefined, undefined],
			[{ type: 'task', project: 'shop' }, undefined],
			['shop', 7],
			[null, null],
		] as const) {
			assert.equal(runRef(args[0], args[1], projects), undefined);
		}
	});
});

describe('the row Cancel Intent, Cancel Task and Follow Up… act on', () => {
	const intentRow = {
		type: 'intent',
		project: 'shop',
		view: { intent: { object_id: 'i1', prompt: 'Add pagination\nto users' }, status: 'completed', tasks: [] },
	};
	const taskRow = {
		type: 'task',
		project: 'docs',
		view: { task: { object_id: 't1', title: 'Fix', status: 'running' } },
	};

	it('takes the kind, id, words and status of an intent, task or run row of this window', () => {
		assert.deepEqual(rowRef(intentRow, ['intent', 'run'], projects), {
			project: 'shop',
			kind: 'intent',
			id: 'i1',
			label: 'Add pagination',
			status: 'completed',
		});
		assert.deepEqual(rowRef(taskRow, ['task'], projects), {
			project: 'docs',
			kind: 'task',
			id: 't1',
			label: 'Fix',
			status: 'running',
		});
	});

	it('names nothing for a row of another kind, and refuses another window or a bad id', () => {
		assert.equal(rowRef(taskRow, ['intent'], projects), undefined);
		assert.equal(rowRef(undefined, ['intent'], projects), undefined);
		assert.throws(() => rowRef({ ...intentRow, project: 'elsewhere' }, ['intent'], projects), /names nothing/);
		assert.throws(
			() =>
				rowRef({ ...taskRow, view: { task: { object_id: '../x', title: 't', status: 'draft' } } }, ['task'], projects),
			/names nothing/,
		);
	});
});

describe('the text of a run a link opens in a tab (arguments from a run page link or any caller)', () => {
	it("takes a call's input or output, a check's log or a message, and only their fields", () => {
		assert.deepEqual(runTextTarget({ call: 'c-1', part: 'output', extra: 'x' }), { call: 'c-1', part: 'output' });
		assert.deepEqual(runTextTarget({ call: 'c-1', part: 'input' }), { call: 'c-1', part: 'input' });
		assert.deepEqual(runTextTarget({ evidence: 'e-1' }), { evidence: 'e-1' });
		assert.deepEqual(runTextTarget({ message: 7 }), { message: 7 });
	});

	it('refuses anything else', () => {
		for (const bad of [
			undefined,
			'c-1',
			{ call: 'c-1' },
			{ call: 'c-1', part: 'both' },
			{ call: '../x', part: 'input' },
			{ evidence: 42 },
			{ message: -1 },
			{ message: 1.5 },
			{ message: '7' },
		]) {
			assert.equal(runTextTarget(bad), undefined, JSON.stringify(bad));
		}
	});
});
