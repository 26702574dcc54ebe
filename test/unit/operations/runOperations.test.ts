import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeskError } from '../../../server/src/core/errors';
import type { Desk } from '../../../server/src/desk';
import type { Actor } from '../../../server/src/operations/actor';
import { cardOperations, launchGo, plugAsset, unplugAsset } from '../../../server/src/operations/card';
import { historyOperations } from '../../../server/src/operations/history';
import type { AnyOperation } from '../../../server/src/operations';
import { invokeOperation, noEvents } from '../../../server/src/operations/operation';
import { cancelRun, decideRun, runOperations } from '../../../server/src/operations/runs';

const agent: Actor = {
	kind: 'agent',
	agent: 'claude',
	project: 'shop',
	task: 't-1',
	run: 'r-1',
	workFolder: '/runs/r-1/work',
	outbox: '/runs/r-1/outbox',
};

/** A desk the refusal must never reach: any use of it throws. */
const untouchable = new Proxy({} as Desk, {
	get(_target, key) {
		throw new Error(`the desk was used (${String(key)}) before the caller was refused`);
	},
});

describe('the run, card and history operations', () => {
	it('refuse an agent inside a run before anything runs: it never decides, goes, plugs, unplugs or cancels', async () => {
		const calls: Array<[AnyOperation, object]> = [
			[decideRun, { project: 'shop', run: 'r-1', decision: 'commit' }],
			[decideRun, { project: 'shop', run: 'r-1', decision: 'retry', settings: {} }],
			[launchGo, { project: 'shop' }],
			[plugAsset, { project: 'shop', id: 'a-1', role: 'reference' }],
			[unplugAsset, { project: 'shop', id: 'a-1' }],
			[cancelRun, { project: 'shop', run: 'r-1' }],
		];
		for (const [op, params] of calls) {
			await assert.rejects(
				invokeOperation(
					op,
					{ desk: untouchable, actor: agent, events: noEvents, signal: new AbortController().signal },
					params,
				),
				(error: unknown) =>
					error instanceof DeskError &&
					error.code === 'operation.notAllowed' &&
					error.data['operation'] === op.name &&
					error.data['caller'] === 'agent',
				op.name,
			);
		}
	});

	it('are declared for the person only, in the editor and at the command line', () => {
		for (const op of [...runOperations, ...cardOperations, ...historyOperations]) {
			assert.deepEqual([...op.callers].sort(), ['cli', 'editor'], op.name);
		}
	});
});
