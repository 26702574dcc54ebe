import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCodes } from 'vscode-languageserver/node';
import { deskErrorCode, GetStatus, ListVersions, type DeskErrorJson } from '../../server/src/protocol/protocol';
import { findProjectRoot, tempDir } from '../helpers/temp';

interface Answer {
	id?: unknown;
	result?: unknown;
	error?: { code: number; message: string; data?: unknown };
}

/** The server as the extension starts it: Node IPC (`--node-ipc`), messages sent as parsed objects. */
function startIpcServer(): {
	child: ChildProcess;
	request(id: string, method: string, params?: unknown): Promise<Answer>;
	notify(message: unknown): void;
} {
	const serverJs = process.env['DESK_SERVER_JS'] || path.join(findProjectRoot(), 'dist', 'server.js');
	const child = fork(serverJs, ['--node-ipc'], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
	const waiters = new Map<unknown, (answer: Answer) => void>();
	child.on('message', (message: Answer) => {
		if ('id' in message && waiters.has(message.id)) {
			waiters.get(message.id)!(message);
			waiters.delete(message.id);
		}
	});
	return {
		child,
		request(id, method, params) {
			return new Promise((resolve) => {
				waiters.set(id, resolve);
				child.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
			});
		},
		notify: (message) => void child.send(message as object),
	};
}

const children: ChildProcess[] = [];
after(() => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

describe("the server over Node IPC (the extension's transport)", () => {
	it(
		'answers bad initializes, a second initialize and odd notifications as it does on stdio, and goes on',
		{ timeout: 30_000 },
		async () => {
			const server = startIpcServer();
			children.push(server.child);
			const before = await server.request('s0', GetStatus.method, {});
			assert.equal((before.error?.data as DeskErrorJson | undefined)?.code, 'desk.notReady', JSON.stringify(before));
			for (const params of [null, 5, { capabilities: 5 }, { capabilities: {}, processId: 'x' }]) {
				const answer = await server.request('bad-init', 'initialize', params);
				assert.equal(
					answer.error?.code,
					ErrorCodes.InvalidParams,
					`${JSON.stringify(params)} → ${JSON.stringify(answer)}`,
				);
			}
			const libraryDir = path.join(tempDir(), 'library');
			const ok = await server.request('init', 'initialize', {
				processId: null,
				capabilities: {},
				initializationOptions: { libraryDir },
			});
			assert.ok(ok.result, JSON.stringify(ok));
			server.notify({ jsonrpc: '2.0', method: 'initialized', params: {} });
			const again = await server.request('init-2', 'initialize', {
				processId: null,
				capabilities: {},
				initializationOptions: { libraryDir: path.join(tempDir(), 'other') },
			});
			assert.equal(again.error?.code, deskErrorCode);
			assert.equal((again.error?.data as DeskErrorJson).code, 'desk.alreadyInitialized');
			server.notify({ jsonrpc: '2.0', method: '$/cancelRequest', params: null });
			server.notify({ jsonrpc: '2.0', method: '$/cancelRequest' });
			const positional = await server.request('p1', ListVersions.method, ['a', 'b']);
			assert.equal(positional.error?.code, ErrorCodes.InvalidParams);
			const status = await server.request('s1', GetStatus.method, {});
			assert.equal((status.result as { state: string; libraryDir: string }).state, 'ready', JSON.stringify(status));
			assert.equal((status.result as { libraryDir: string }).libraryDir, libraryDir);
			server.child.kill();
		},
	);
});
