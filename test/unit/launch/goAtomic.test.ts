import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Intent, Run, Task } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { Desk } from '../../../server/src/desk';
import { clientRequest } from '../../../server/src/store/clientRequests';
import type { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { recordingLogger } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

const ticket = 'Add cursor pagination to the listing endpoints';

/** A project whose card has a ticket and two plugs, one a folder with working changes (Go snapshots it first). */
async function preparedCard(): Promise<{ libraryDir: string; repo: string; specs: string; specsId: string }> {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const libraryDir = path.join(root, 'library');
	const desk = await Desk.open({ libraryDir, logger: recordingLogger() });
	try {
		const [boot] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(boot?.outcome === 'adopted');
		const specs = path.join(root, 'specs');
		fs.mkdirSync(specs);
		fs.writeFileSync(path.join(specs, 'cursors.md'), 'Opaque cursors.\n');
		const specsId = (await desk.library.importDir({ dir: specs, project: 'shop', main: false })).asset.id;
		fs.writeFileSync(path.join(specs, 'limits.md'), 'At most 100 a page.\n');
		const launches = await desk.launches(repo);
		launches.setTicket(ticket);
		await launches.plug(specsId, 'reference');
		await launches.plug(boot.asset.id, 'target');
		return { libraryDir, repo, specs, specsId };
	} finally {
		desk.close();
	}
}

/**
 * Makes the desk's writes fail from the `failAt`-th on (library and project databases alike), as if
 * the process had been killed just before that write: nothing after it happens.
 */
function stopAtWrite(desk: Desk, repo: string, failAt: number): { writes: () => number } {
	const internals = desk as unknown as { libraryDb: DurableDatabase; projectDatabases: Map<string, DurableDatabase> };
	let count = 0;
	for (const db of [internals.libraryDb, internals.projectDatabases.get(repo)!]) {
		const write = db.write.bind(db);
		db.write = ((body: Parameters<DurableDatabase['write']>[0]) => {
			count++;
			if (count >= failAt) {
				throw new Error(`injected: the desk stopped before write ${count}`);
			}
			return write(body);
		}) as DurableDatabase['write'];
	}
	return { writes: () => count };
}

/** What a person would see after the desk comes back: launches, runs, the card and "used in". */
async function stateAfterRestart(libraryDir: string, repo: string, specsId: string) {
	const desk = await Desk.open({ libraryDir, logger: recordingLogger() });
	try {
		await desk.openWorkspace([{ name: 'shop', path: repo }]);
		const launches = await desk.launches(repo);
		const ai = await desk.projectAi(repo);
		return {
			records: launches.records(),
			runs: ai.list<Run>('run'),
			tasks: ai.list<Task>('task'),
			intents: ai.list<Intent>('intent'),
			card: launches.card(),
			usedIn: desk.library.usedIn(specsId).map((u) => u.launch_id),
		};
	} finally {
		desk.close();
	}
}

function assertConsistent(state: Awaited<ReturnType<typeof stateAfterRestart>>, where: string): 'none' | 'launched' {
	if (state.records.length === 0) {
		assert.deepEqual(
			[state.runs.length, state.tasks.length, state.intents.length],
			[0, 0, 0],
			`${where}: no launch, so no run, task or intent`,
		);
		assert.equal(state.card.ticket, ticket, `${where}: no launch, so the ticket is still on the card`);
		assert.equal(state.card.plugs.length, 2, `${where}: and its plugs`);
		assert.deepEqual(state.usedIn, [], `${where}: and nothing is "used in" a launch`);
		return 'none';
	}
	assert.equal(state.records.length, 1, `${where}: one launch`);
	const record = state.records[0]!;
	assert.deepEqual(
		state.runs.map((r) => r.object_id),
		[record.run],
		`${where}: the launch's run and no other`,
	);
	assert.deepEqual(
		state.tasks.map((t) => t.object_id),
		[record.task],
		`${where}: the launch's task`,
	);
	assert.deepEqual(
		state.intents.map((i) => i.object_id),
		[record.intent],
		`${where}: the launch's intent`,
	);
	assert.equal(state.card.ticket, '', `${where}: the launched card starts afresh`);
	assert.deepEqual(state.usedIn, [record.launch_id], `${where}: "used in" names the launch`);
	return 'launched';
}

it('Go stopped before any of its writes leaves nothing or everything, and Go again launches exactly once', async () => {
	const outcomes: string[] = [];
	for (let failAt = 1; failAt <= 8; failAt++) {
		const { libraryDir, repo, specsId } = await preparedCard();
		const desk = await Desk.open({ libraryDir, logger: recordingLogger() });
		await desk.openWorkspace([{ name: 'shop', path: repo }]);
		const launches = await desk.launches(repo);
		const stop = stopAtWrite(desk, repo, failAt);
		const went = await launches.go().then(
			() => 'returned',
			(error: unknown) => (error as Error).message,
		);
		const reached = stop.writes();
		desk.close();
		const where = `stopped before write ${failAt} (${went})`;
		const first = assertConsistent(await stateAfterRestart(libraryDir, repo, specsId), where);
		outcomes.push(`${failAt}:${first}`);

		// Go again: launches the card when the first did not, and is refused when it did.
		const again = await Desk.open({ libraryDir, logger: recordingLogger() });
		await again.openWorkspace([{ name: 'shop', path: repo }]);
		if (first === 'launched') {
			await assert.rejects((await again.launches(repo)).go(), (e) => isDeskError(e, 'launch.emptyTicket'), where);
		} else {
			await (await again.launches(repo)).go();
		}
		again.close();
		assert.equal(
			assertConsistent(await stateAfterRestart(libraryDir, repo, specsId), `${where}, then Go again`),
			'launched',
		);
		if (reached < failAt) {
			break; // Go made fewer writes than this: every point has been tried.
		}
	}
	assert.ok(
		outcomes.some((o) => o.endsWith('none')) && outcomes.some((o) => o.endsWith('launched')),
		`both outcomes were tried: ${outcomes.join(' ')}`,
	);
});

it('two Gos of one card at once launch it once; the other is refused as launched meanwhile', async () => {
	const { libraryDir, repo, specsId } = await preparedCard();
	const desk = await Desk.open({ libraryDir, logger: recordingLogger() });
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	const [a, b] = await Promise.allSettled([(await desk.launches(repo)).go(), (await desk.launches(repo)).go()]);
	desk.close();
	const refused = [a, b].filter((r) => r.status === 'rejected');
	assert.equal(refused.length, 1, 'one Go launched, one was refused');
	assert.ok(
		isDeskError((refused[0] as PromiseRejectedResult).reason, 'launch.cardChanged'),
		String((refused[0] as PromiseRejectedResult).reason),
	);
	assert.equal(assertConsistent(await stateAfterRestart(libraryDir, repo, specsId), 'two Gos at once'), 'launched');
});

it('a Go and its repeat under one request id from two processes at once: one launch, both answered with it', async () => {
	const { libraryDir, repo, specsId } = await preparedCard();
	// Two desks over the same stores stand for two processes: nothing in memory is shared between them.
	const [a, b] = [
		await Desk.open({ libraryDir, logger: recordingLogger() }),
		await Desk.open({ libraryDir, logger: recordingLogger() }),
	];
	await a.openWorkspace([{ name: 'shop', path: repo }]);
	await b.openWorkspace([{ name: 'shop', path: repo }]);
	const request = clientRequest('desk/card/go', 'go-from-two-processes', { project: 'shop' })!;
	const [x, y] = await Promise.all([
		(await a.launches(repo)).goOnce('user', new Date(), { request }),
		(await b.launches(repo)).goOnce('user', new Date(), { request }),
	]);
	a.close();
	b.close();
	assert.deepEqual(x.result, y.result, 'the same launch');
	assert.deepEqual([x.replayed, y.replayed].sort(), [false, true]);
	assert.equal(
		assertConsistent(await stateAfterRestart(libraryDir, repo, specsId), 'one request from two processes'),
		'launched',
	);
});
