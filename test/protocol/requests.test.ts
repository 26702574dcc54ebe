import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CancelRun, LaunchGo, ListRuns, OpenWorkspace, SetTicket, ShowRun, GetCard, type DeskErrorJson, type ResultOf } from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('requests that run twice, over JSON-RPC', () => {
	let server: RunningServer;
	let root: string;
	let libraryDir: string;
	const call = async <R>(definition: { method: string; result?: R }, params: unknown): Promise<R> => (await server.connection.sendRequest(definition.method, params)) as R;
	const runIds = async (): Promise<string[]> => (await call<ResultOf<typeof ListRuns>>(ListRuns, { project: 'shop' })).intents.flatMap((i) => i.tasks.flatMap((t) => t.runs.map((r) => r.id)));
	const waitUntilStopped = async (run: string): Promise<string> => {
		for (let i = 0; i < 400; i++) {
			const { summary } = await call<ResultOf<typeof ShowRun>>(ShowRun, { project: 'shop', id: run });
			if (summary.status === 'failed' || summary.status === 'completed' || summary.at_gate) {
				return summary.status;
			}
			await new Promise((r) => setTimeout(r, 50));
		}
		throw new Error(`run ${run} did not stop`);
	};

	before(async () => {
		root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		libraryDir = path.join(root, 'library');
		server = await startServer(libraryDir);
		await call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	});
	after(() => server.stop());

	it('two Gos of one card sent back to back launch it once, and one agent works in the checkout at a time', async () => {
		const slow = scriptedAgentSettings({ sleepMs: 60_000 });
		await call(SetTicket, { project: 'shop', ticket: 'Take a long time' });
		const answers = await Promise.allSettled([call<ResultOf<typeof LaunchGo>>(LaunchGo, { project: 'shop', settings: slow }), call<ResultOf<typeof LaunchGo>>(LaunchGo, { project: 'shop', settings: slow })]);
		const launched = answers.filter((a): a is PromiseFulfilledResult<ResultOf<typeof LaunchGo>> => a.status === 'fulfilled');
		const refused = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
		assert.equal(launched.length, 1, `one Go launched: ${refused.map((r) => (r.reason as Error).message).join('; ')}`);
		// Refused as launched meanwhile, as an empty card, or because the first's agent has the checkout.
		assert.ok(['launch.cardChanged', 'launch.emptyTicket', 'run.checkoutBusy'].includes((refused[0]?.reason as { data?: DeskErrorJson }).data?.code ?? ''), (refused[0]?.reason as Error).message);
		const first = launched[0]!.value;
		assert.deepEqual(await runIds(), [first.run], 'one run');

		// A second card, Go right after the first answered: its agent would share the checkout.
		await call(SetTicket, { project: 'shop', ticket: 'Meanwhile, something else' });
		const busy = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop', settings: slow });
		assert.equal((busy.data as DeskErrorJson).code, 'run.checkoutBusy', busy.message);
		assert.equal((busy.data as DeskErrorJson).data['run'], first.run, 'the refusal names the run working there');
		assert.deepEqual(await runIds(), [first.run], 'nothing was launched');
		assert.equal((await call<ResultOf<typeof GetCard>>(GetCard, { project: 'shop' })).card.ticket, 'Meanwhile, something else', 'the card keeps its ticket for a later Go');

		await call(CancelRun, { project: 'shop', run: first.run, reason: 'the test is done with it' });
		assert.equal(await waitUntilStopped(first.run), 'failed');
		const second = await call<ResultOf<typeof LaunchGo>>(LaunchGo, { project: 'shop', settings: slow });
		assert.deepEqual((await runIds()).sort(), [first.run, second.run].sort());
		await call(CancelRun, { project: 'shop', run: second.run });
		await waitUntilStopped(second.run);
	});

	it('a Go repeated with its request id returns the first launch and starts nothing, also after a restart; the id with other params is refused', async () => {
		await call(SetTicket, { project: 'shop', ticket: 'Once only' });
		const requestId = 'go-5f0b7a7e-0d6f-4c39-9a55-3c8a1e0e2d11';
		const first = await call<ResultOf<typeof LaunchGo>>(LaunchGo, { project: 'shop', execute: false, requestId });
		const before = await runIds();
		const again = await call<ResultOf<typeof LaunchGo>>(LaunchGo, { project: 'shop', execute: false, requestId });
		assert.deepEqual(again, first, 'the first answer');
		assert.deepEqual(await runIds(), before, 'nothing new');

		await server.stop();
		server = await startServer(libraryDir);
		await call(OpenWorkspace, { folders: [{ name: 'shop', path: path.join(root, 'shop') }] });
		assert.deepEqual(await call<ResultOf<typeof LaunchGo>>(LaunchGo, { project: 'shop', execute: false, requestId }), first, 'the first answer after a restart');
		await call(SetTicket, { project: 'shop', ticket: 'Another card' });
		const reused = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop', requestId });
		assert.equal((reused.data as DeskErrorJson).code, 'request.idReused', reused.message);
		assert.deepEqual(await runIds(), before, 'nothing new');
		assert.equal((await call<ResultOf<typeof GetCard>>(GetCard, { project: 'shop' })).card.ticket, 'Another card');
		const bad = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop', requestId: 'a b' });
		assert.equal(bad.code, -32602, 'a request id that is not one is InvalidParams');
	});
});
