/**
 * A run's desk tools socket (glossary: Desk tools): its path checked against sun_path, every request
 * refused without the run's token, the client's side over it, and the folders of dead desks swept.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import type { ToolCallMeta, ToolDispatcher } from '../../../server/src/mcp/dispatcher';
import { socketDispatcher } from '../../../server/src/mcp/socketClient';
import {
	assertSocketPath,
	hostToolSocket,
	maxToolConnections,
	sweepStaleToolSockets,
} from '../../../server/src/mcp/socketHost';
import { tempDir } from '../../helpers/temp';

/** A dispatcher that answers every call with its name and counts the calls that reached it. */
function countingDispatcher(): ToolDispatcher & { calls: Array<{ name: string; args: unknown; meta: ToolCallMeta }> } {
	const calls: Array<{ name: string; args: unknown; meta: ToolCallMeta }> = [];
	return {
		calls,
		tools: () => Promise.resolve([]),
		call: (name, args, meta) => {
			calls.push({ name, args, meta });
			return Promise.resolve({ ok: true, result: { called: name }, replayed: false });
		},
	};
}

/** Sends one raw line and reads the one line answered. */
function rawRequest(socketPath: string, line: string): Promise<Record<string, unknown>> {
	return new Promise((resolve, reject) => {
		const socket = net.createConnection(socketPath, () => socket.write(`${line}\n`));
		let text = '';
		socket.setEncoding('utf8');
		socket.on('data', (chunk: string) => (text += chunk));
		socket.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>));
		socket.on('error', reject);
	});
}

describe('the desk tools socket', () => {
	it(
		"a call's signal aborts when its caller hangs up, and when the client cancels it",
		{ timeout: 10_000 },
		async () => {
			const started: AbortSignal[] = [];
			const waiting: ToolDispatcher = {
				tools: () => Promise.resolve([]),
				call: (_name, _args, meta) =>
					new Promise((resolve) => {
						started.push(meta.signal!);
						meta.signal!.addEventListener('abort', () =>
							resolve({ ok: true, result: { aborted: true }, replayed: false }),
						);
					}),
			};
			const socket = await hostToolSocket(waiting, { parent: tempDir() });
			try {
				const token = JSON.stringify(socket.token);
				const peer = net.createConnection(socket.socketPath, () =>
					peer.write(`{"token":${token},"op":"call","name":"reports","args":{}}\n`),
				);
				while (started.length < 1) {
					await new Promise((resolve) => setTimeout(resolve, 10));
				}
				assert.equal(started[0]!.aborted, false, 'waiting while the caller is there');
				peer.destroy();
				await new Promise<void>((resolve) => started[0]!.addEventListener('abort', () => resolve()));
				const cancel = new AbortController();
				const call = socketDispatcher(socket.socketPath, socket.token).call('reports', {}, { signal: cancel.signal });
				while (started.length < 2) {
					await new Promise((resolve) => setTimeout(resolve, 10));
				}
				cancel.abort();
				await assert.rejects(call, /cancelled/);
				await new Promise<void>((resolve) =>
					started[1]!.aborted ? resolve() : started[1]!.addEventListener('abort', () => resolve()),
				);
			} finally {
				await socket.close();
			}
		},
	);

	it('refuses a socket path longer than sun_path holds, naming it, and leaves no folder behind', async () => {
		assert.doesNotThrow(() => assertSocketPath(`/${'a'.repeat(106)}`));
		assert.throws(
			() => assertSocketPath(`/${'a'.repeat(107)}`),
			(error: unknown) =>
				isDeskError(error, 'run.spawnFailed') &&
				/108 bytes long; a Unix socket's path holds at most 107/.test(error.message),
		);
		// Bytes, not characters: 55 characters, 109 bytes.
		assert.throws(() => assertSocketPath(`/${'é'.repeat(54)}`), /is 109 bytes long/);
		const deep = path.join(tempDir(), 'x'.repeat(100));
		fs.mkdirSync(deep);
		await assert.rejects(hostToolSocket(countingDispatcher(), { parent: deep }), (error: unknown) =>
			isDeskError(error, 'run.spawnFailed'),
		);
		assert.deepEqual(fs.readdirSync(deep), [], 'the IPC folder it made is removed');
	});

	it("refuses every request without the run's token, before the dispatcher sees it", async () => {
		const dispatcher = countingDispatcher();
		const socket = await hostToolSocket(dispatcher, { parent: tempDir() });
		try {
			assert.equal(fs.statSync(socket.ipcDir).mode & 0o777, 0o700);
			assert.match(socket.token, /^[0-9a-f]{64}$/);
			for (const request of [
				{ op: 'call', name: 'asset_search', args: {} },
				{ op: 'call', name: 'asset_search', args: {}, token: 'f'.repeat(64) },
				{ op: 'call', name: 'asset_search', args: {}, token: socket.token.slice(0, 63) },
				{ op: 'list', token: '' },
			]) {
				const reply = await rawRequest(socket.socketPath, JSON.stringify(request));
				assert.equal(reply['ok'], false);
				assert.equal((reply['error'] as { code: string }).code, 'operation.notAllowed');
			}
			assert.equal(dispatcher.calls.length, 0);
			const garbage = await rawRequest(socket.socketPath, 'not json');
			assert.equal((garbage['error'] as { code: string }).code, 'desk.badParams');
			const answered = await rawRequest(
				socket.socketPath,
				JSON.stringify({ op: 'call', name: 'asset_search', args: { query: 'x' }, token: socket.token }),
			);
			assert.deepEqual(answered, { ok: true, result: { called: 'asset_search' }, replayed: false });
			assert.equal(dispatcher.calls.length, 1);
		} finally {
			await socket.close();
		}
		assert.equal(fs.existsSync(socket.ipcDir), false, 'closed: the folder and the socket are gone');
	});

	it(
		'cuts off a peer that sends no request, and serves at most maxToolConnections at once',
		{ timeout: 10_000 },
		async () => {
			const dispatcher = countingDispatcher();
			const socket = await hostToolSocket(dispatcher, { parent: tempDir(), requestTimeoutMs: 300 });
			const idle: net.Socket[] = [];
			try {
				const closed = (peer: net.Socket) => new Promise<void>((resolve) => peer.once('close', () => resolve()));
				for (let i = 0; i < maxToolConnections + 2; i += 1) {
					const peer = net.createConnection(socket.socketPath);
					peer.on('error', () => undefined);
					idle.push(peer);
				}
				// Each hangs without a request line: every one is closed (the ones over the limit at once, the
				// others when their request is overdue), and the host serves the next peer.
				let overdue: NodeJS.Timeout | undefined;
				await Promise.race([
					Promise.all(idle.map(closed)),
					new Promise((_, reject) => {
						overdue = setTimeout(() => reject(new Error('a peer that sent nothing is still connected')), 5_000);
					}),
				]).finally(() => clearTimeout(overdue));
				const answered = await rawRequest(
					socket.socketPath,
					JSON.stringify({ op: 'call', name: 'asset_search', args: {}, token: socket.token }),
				);
				assert.equal(answered['ok'], true);
				assert.equal(dispatcher.calls.length, 1);
			} finally {
				idle.forEach((peer) => peer.destroy());
				await socket.close();
			}
		},
	);

	it("the client's side: calls with the token, passes the harness's id and a fixed key on", async () => {
		const dispatcher = countingDispatcher();
		const socket = await hostToolSocket(dispatcher, { parent: tempDir() });
		try {
			const client = socketDispatcher(socket.socketPath, socket.token);
			assert.deepEqual(await client.tools(), []);
			const outcome = await client.call('attach', { path: 'a.md' }, { harnessCallId: 'toolu_1', key: 'k-12345678' });
			assert.deepEqual(outcome, { ok: true, result: { called: 'attach' }, replayed: false });
			assert.deepEqual(
				dispatcher.calls.map(({ meta: { signal: _signal, ...meta }, ...call }) => ({ ...call, meta })),
				[{ name: 'attach', args: { path: 'a.md' }, meta: { key: 'k-12345678', harnessCallId: 'toolu_1' } }],
			);
			await assert.rejects(socketDispatcher(socket.socketPath, 'wrong').tools(), /operation\.notAllowed/);
		} finally {
			await socket.close();
		}
	});

	it('sweeps the IPC folders of desks that are gone, and only those', () => {
		const parent = tempDir();
		const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
			encoding: 'utf8',
		});
		const gone = path.join(parent, 'desk-gone');
		const alive = path.join(parent, 'desk-alive');
		const unowned = path.join(parent, 'desk-making');
		for (const folder of [gone, alive, unowned]) {
			fs.mkdirSync(folder, { mode: 0o700 });
		}
		fs.writeFileSync(path.join(gone, 'owner'), `${dead.stdout}\n`);
		fs.writeFileSync(path.join(alive, 'owner'), `${process.pid}\n`);
		assert.equal(sweepStaleToolSockets(parent), 1);
		assert.deepEqual(fs.readdirSync(parent).sort(), ['desk-alive', 'desk-making']);
	});

	it("a restarted desk listens again in its folder even when another desk's sweep removed it, but never in one another user could enter", async () => {
		const parent = tempDir();
		const first = await hostToolSocket(countingDispatcher(), { parent });
		const { ipcDir, token } = first;
		// The desk stopped, and its folder is gone (as another desk's sweep removes a dead desk's folder).
		await first.close();
		assert.equal(fs.existsSync(ipcDir), false);
		const again = await hostToolSocket(countingDispatcher(), { reuse: { ipcDir, token } });
		try {
			assert.equal(again.socketPath, path.join(ipcDir, path.basename(again.socketPath)));
			assert.deepEqual(await socketDispatcher(again.socketPath, token).tools(), []);
		} finally {
			await again.close();
		}
		fs.mkdirSync(ipcDir, { mode: 0o755 });
		fs.chmodSync(ipcDir, 0o755);
		await assert.rejects(hostToolSocket(countingDispatcher(), { reuse: { ipcDir, token } }), (e) =>
			isDeskError(e, 'run.spawnFailed'),
		);
	});
});
