import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
	AddLink,
	AddNote,
	AttachFile,
	CancelRun,
	DecideRun,
	GetCard,
	ImportAsset,
	LaunchGo,
	ListAssets,
	ListAttachments,
	ListRuns,
	ListVersions,
	OpenWorkspace,
	SetTicket,
	ShowRun,
	SnapshotAsset,
	type DeskErrorJson,
	type ParamsOf,
	type ResultOf,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, startServer, type ProtocolRequest, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('requests that run twice, over JSON-RPC', () => {
	let server: RunningServer;
	let root: string;
	let libraryDir: string;
	const runIds = async (): Promise<string[]> =>
		(await server.call(ListRuns, { project: 'shop' })).intents.flatMap((i) =>
			i.tasks.flatMap((t) => t.runs.map((r) => r.id)),
		);
	const waitUntilStopped = async (run: string): Promise<string> => {
		for (let i = 0; i < 400; i++) {
			const { summary } = await server.call(ShowRun, { project: 'shop', id: run });
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
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	});
	after(() => server.stop());

	it('two Gos of one card sent back to back launch it once, and one agent works in the checkout at a time', async () => {
		const slow = scriptedAgentSettings({ sleepMs: 60_000 });
		await server.call(SetTicket, { project: 'shop', ticket: 'Take a long time' });
		const answers = await Promise.allSettled([
			server.call(LaunchGo, { project: 'shop', settings: slow }),
			server.call(LaunchGo, { project: 'shop', settings: slow }),
		]);
		const launched = answers.filter(
			(a): a is PromiseFulfilledResult<ResultOf<typeof LaunchGo>> => a.status === 'fulfilled',
		);
		const refused = answers.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
		assert.equal(launched.length, 1, `one Go launched: ${refused.map((r) => (r.reason as Error).message).join('; ')}`);
		// Refused as launched meanwhile, as an empty card, or because the first's agent has the checkout.
		assert.ok(
			['launch.cardChanged', 'launch.emptyTicket', 'run.checkoutBusy'].includes(
				(refused[0]?.reason as { data?: DeskErrorJson }).data?.code ?? '',
			),
			(refused[0]?.reason as Error).message,
		);
		const first = launched[0]!.value;
		assert.deepEqual(await runIds(), [first.run], 'one run');

		// A second card, Go right after the first answered: its agent would share the checkout.
		await server.call(SetTicket, { project: 'shop', ticket: 'Meanwhile, something else' });
		const busy = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop', settings: slow });
		assert.equal((busy.data as DeskErrorJson).code, 'run.checkoutBusy', busy.message);
		assert.equal((busy.data as DeskErrorJson).data['run'], first.run, 'the refusal names the run working there');
		assert.deepEqual(await runIds(), [first.run], 'nothing was launched');
		assert.equal(
			(await server.call(GetCard, { project: 'shop' })).card.ticket,
			'Meanwhile, something else',
			'the card keeps its ticket for a later Go',
		);

		await server.call(CancelRun, { project: 'shop', run: first.run, reason: 'the test is done with it' });
		assert.equal(await waitUntilStopped(first.run), 'failed');
		const second = await server.call(LaunchGo, { project: 'shop', settings: slow });
		assert.deepEqual((await runIds()).sort(), [first.run, second.run].sort());
		await server.call(CancelRun, { project: 'shop', run: second.run });
		await waitUntilStopped(second.run);
	});

	it('a Go repeated with its request id returns the first launch and starts nothing, also after a restart; the id with other params is refused', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Once only' });
		const requestId = 'go-5f0b7a7e-0d6f-4c39-9a55-3c8a1e0e2d11';
		const first = await server.call(LaunchGo, { project: 'shop', execute: false, requestId });
		const before = await runIds();
		const again = await server.call(LaunchGo, { project: 'shop', execute: false, requestId });
		assert.deepEqual(again, first, 'the first answer');
		assert.deepEqual(await runIds(), before, 'nothing new');

		await server.stop();
		server = await startServer(libraryDir);
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: path.join(root, 'shop') }] });
		assert.deepEqual(
			await server.call(LaunchGo, { project: 'shop', execute: false, requestId }),
			first,
			'the first answer after a restart',
		);
		await server.call(SetTicket, { project: 'shop', ticket: 'Another card' });
		const reused = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop', requestId });
		assert.equal((reused.data as DeskErrorJson).code, 'request.idReused', reused.message);
		assert.deepEqual(await runIds(), before, 'nothing new');
		assert.equal((await server.call(GetCard, { project: 'shop' })).card.ticket, 'Another card');
		const bad = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop', requestId: 'a b' });
		assert.equal(bad.code, -32602, 'a request id that is not one is InvalidParams');
	});

	it('every request that creates something, repeated with its request id, answers the first result and creates nothing more; other params under the id are refused', async () => {
		const assetCount = async () => (await server.call(ListAssets, {})).assets.length;
		const twice = async <D extends ProtocolRequest>(definition: D, params: ParamsOf<D>): Promise<ResultOf<D>> => {
			const first = await server.call(definition, params);
			const count = await assetCount();
			assert.deepEqual(await server.call(definition, params), first, `${definition.method}: the first answer`);
			assert.equal(await assetCount(), count, `${definition.method}: nothing new`);
			return first;
		};
		const before = await assetCount();
		const link = await twice(AddLink, {
			name: 'Docs',
			url: 'https://example.com/docs',
			project: 'shop',
			requestId: 'link-00000001',
		});
		await twice(AddNote, { name: 'Conventions', text: 'Tabs.', project: 'shop', requestId: 'note-00000001' });
		const made = await twice(ImportAsset, { newName: 'scratch', project: 'shop', requestId: 'new-00000001' });
		assert.equal(await assetCount(), before + 3);
		const reused = await expectRpcError(server.connection, AddLink.method, {
			name: 'Docs',
			url: 'https://example.com/other',
			project: 'shop',
			requestId: 'link-00000001',
		});
		assert.equal((reused.data as DeskErrorJson).code, 'request.idReused', reused.message);
		assert.equal(await assetCount(), before + 3);
		assert.ok(link.id);

		// A snapshot repeated after the folder changed again answers the version the first cut, and cuts none.
		fs.writeFileSync(path.join(made.asset.working_dir, 'a.md'), 'a\n');
		const snapshot = { id: made.asset.id, note: 'first draft', requestId: 'snap-00000001' };
		const cut = await server.call(SnapshotAsset, snapshot);
		assert.deepEqual([cut.created, cut.version.version], [true, 2]);
		fs.writeFileSync(path.join(made.asset.working_dir, 'b.md'), 'b\n');
		assert.deepEqual(await server.call(SnapshotAsset, snapshot), cut);
		assert.equal((await server.call(ListVersions, { id: made.asset.id })).total, 2, 'no third version');

		// An attachment repeated is attached once.
		await server.call(SetTicket, { project: 'shop', ticket: 'Something to attach to' });
		const launch = await server.call(LaunchGo, { project: 'shop', execute: false });
		const file = path.join(root, 'report.txt');
		fs.writeFileSync(file, 'the report\n');
		const attach = { project: 'shop', task: launch.task, path: file, requestId: 'attach-00000001' };
		const row = await server.call(AttachFile, attach);
		assert.deepEqual(await server.call(AttachFile, attach), row);
		const listed = await server.call(ListAttachments, { project: 'shop' });
		assert.deepEqual(
			listed.tasks.find((t) => t.task_id === launch.task)?.files.map((f) => f.id),
			[row.id],
		);
	});

	it('a request and its repeat sent at once under one id (a retry while the first still works): one effect, the same answer to both', async () => {
		const assetCount = async () => (await server.call(ListAssets, {})).assets.length;
		const before = await assetCount();
		const note = { name: 'Twice at once', text: 'Once.', requestId: 'note-at-once-01' };
		const [a, b] = await Promise.all([server.call(AddNote, note), server.call(AddNote, note)]);
		assert.deepEqual(a, b);
		assert.equal(await assetCount(), before + 1);
		await server.call(SetTicket, { project: 'shop', ticket: 'Launched at once' });
		const runs = (await runIds()).length;
		const go = { project: 'shop', execute: false, requestId: 'go-at-once-0001' };
		const [x, y] = await Promise.all([server.call(LaunchGo, go), server.call(LaunchGo, go)]);
		assert.deepEqual(x, y);
		assert.equal((await runIds()).length, runs + 1);
	});

	it('a decision repeated with its request id answers the first decision; without one a second is refused', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Write a note' });
		const launch = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ writes: [{ path: 'note.md', content: 'n\n' }] }),
		});
		assert.equal(await waitUntilStopped(launch.run), 'validating', 'at the gate');
		const abandon: ParamsOf<typeof DecideRun> = {
			project: 'shop',
			run: launch.run,
			decision: 'abandon',
			requestId: 'decide-00000001',
		};
		const first = await server.call(DecideRun, abandon);
		assert.deepEqual(await server.call(DecideRun, abandon), first, 'the first answer, not a refusal');
		const second = await expectRpcError(server.connection, DecideRun.method, {
			...abandon,
			requestId: 'decide-00000002',
		});
		assert.equal((second.data as DeskErrorJson).code, 'run.notAwaitingDecision');
	});

	it("Retry while another run's agent works in the shared checkout is refused before anything is put back or decided", async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Write another note' });
		const waiting = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ writes: [{ path: 'other.md', content: 'o\n' }] }),
		});
		assert.equal(await waitUntilStopped(waiting.run), 'validating', 'at the gate');
		await server.call(SetTicket, { project: 'shop', ticket: 'Meanwhile, take long' });
		const working = await server.call(LaunchGo, {
			project: 'shop',
			settings: scriptedAgentSettings({ sleepMs: 60_000 }),
		});
		const busy = await expectRpcError(server.connection, DecideRun.method, {
			project: 'shop',
			run: waiting.run,
			decision: 'retry',
			settings: scriptedAgentSettings({}),
		});
		assert.equal((busy.data as DeskErrorJson).code, 'run.checkoutBusy', busy.message);
		assert.equal((busy.data as DeskErrorJson).data['run'], working.run);
		const still = await server.call(ShowRun, { project: 'shop', id: waiting.run });
		assert.deepEqual(
			[still.summary.at_gate, still.decision],
			[true, undefined],
			'nothing decided: the run still waits at the gate',
		);
		assert.equal(
			fs.readFileSync(path.join(root, 'shop', 'other.md'), 'utf8'),
			'o\n',
			'its change is still in the checkout',
		);
		await server.call(CancelRun, { project: 'shop', run: working.run });
		await waitUntilStopped(working.run);
		await server.call(DecideRun, { project: 'shop', run: waiting.run, decision: 'abandon' });
	});

	it('two pending requests with one JSON-RPC id: both are answered, the second with InvalidRequest naming the id; an id is free again once answered', async () => {
		// Every answer the server writes with the ids of the hand-made requests, read beside the connection.
		const answers: Array<{ id: unknown; result?: unknown; error?: { code: number; message: string } }> = [];
		let buffered = Buffer.alloc(0);
		const onData = (chunk: Buffer) => {
			buffered = Buffer.concat([buffered, chunk]);
			for (;;) {
				const headerEnd = buffered.indexOf('\r\n\r\n');
				const length = Number(
					/Content-Length: (\d+)/i.exec(buffered.subarray(0, Math.max(headerEnd, 0)).toString('ascii'))?.[1],
				);
				if (headerEnd < 0 || buffered.length < headerEnd + 4 + length) {
					return;
				}
				const message = JSON.parse(
					buffered.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8'),
				) as (typeof answers)[number];
				buffered = buffered.subarray(headerEnd + 4 + length);
				if (typeof message.id === 'string' && message.id.startsWith('dup-')) {
					answers.push(message);
				}
			}
		};
		server.child.stdout.on('data', onData);
		const frame = (id: string, method: string, params: unknown) => {
			const json = JSON.stringify({ jsonrpc: '2.0', id, method, params });
			return `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
		};
		// Both frames in one write: the first is still queued when the second arrives.
		server.writeRaw(
			frame('dup-1', ListRuns.method, { project: 'shop' }) + frame('dup-1', GetCard.method, { project: 'shop' }),
		);
		for (let i = 0; i < 200 && answers.length < 2; i++) {
			await server.call(GetCard, { project: 'shop' });
			await new Promise((r) => setTimeout(r, 10));
		}
		assert.equal(answers.length, 2, `both requests answered: ${JSON.stringify(answers).slice(0, 300)}`);
		const refused = answers.find((a) => a.error);
		const served = answers.find((a) => a.result);
		assert.equal(refused?.error?.code, -32600);
		assert.match(refused?.error?.message ?? '', /"dup-1" is already in use/);
		assert.ok(
			served && Array.isArray((served.result as { intents: unknown[] }).intents),
			'the first (ListRuns) was answered',
		);
		// Answered, the id may be used again.
		const again = await server.sendRawRequest(
			'dup-1',
			JSON.stringify({ jsonrpc: '2.0', id: 'dup-1', method: GetCard.method, params: { project: 'shop' } }),
		);
		assert.ok(again.result, JSON.stringify(again));
		server.child.stdout.off('data', onData);
	});
});
