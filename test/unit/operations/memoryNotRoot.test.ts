/**
 * Only @ultimate remembers (glossary: Project memory): an agent whose run's task is a branch is
 * refused `memory.notRoot` by the operation itself. A branch's run is not even shown the `remember`
 * tool (mcp/runTools.ts), so no call of the real server's agents reaches this refusal; it is the
 * operation's own guard, tested here with the desk reduced to what the operation reads.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DeskError } from '../../../server/src/core/errors';
import type { Desk } from '../../../server/src/desk';
import type { Actor } from '../../../server/src/operations/actor';
import { rememberMemory } from '../../../server/src/operations/memory';
import { invokeOperation, noEvents } from '../../../server/src/operations/operation';
import { tempDir } from '../../helpers/temp';

const agent = {
	kind: 'agent' as const,
	agent: 'scripted',
	project: 'shop',
	task: 't-branch',
	run: 'r-branch',
	workFolder: tempDir(),
	outbox: tempDir(),
} satisfies Actor;

/** A desk whose project `shop` has `main` listed; `branch` says whether the agent's task is a branch. */
function desk(branch: boolean, submitted: unknown[]): Desk {
	const top = tempDir();
	return {
		library: { listProjects: () => [{ name: 'shop', path: top }] },
		isBranchTask: (at: string, task: string) => Promise.resolve(branch && at === top && task === agent.task),
		memory: () =>
			Promise.resolve({
				sql: { isListedRoot: (root: string) => root === 'main', listedRoots: () => ['main'] },
				submit: (batch: unknown) => {
					submitted.push(batch);
					return { result: { added: ['m-1'] }, replayed: false };
				},
			}),
	} as unknown as Desk;
}

it("an agent of a branch is refused memory.notRoot and nothing is submitted; the ultimate conversation's agent remembers", async () => {
	const submitted: unknown[] = [];
	const call = (branch: boolean) =>
		invokeOperation(
			rememberMemory,
			{ desk: desk(branch, submitted), actor: agent, events: noEvents, signal: new AbortController().signal },
			{ project: 'shop', text: 'Build with npm run build.' },
		);
	await assert.rejects(
		call(true),
		(error: unknown) =>
			error instanceof DeskError &&
			error.code === 'memory.notRoot' &&
			error.data['task'] === agent.task &&
			error.data['run'] === agent.run,
	);
	assert.deepEqual(submitted, [], 'nothing reached the memory file');
	assert.deepEqual(await call(false), { added: 'm-1', replayed: false });
	assert.equal(submitted.length, 1);
});
