import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCodes } from 'vscode-languageserver/node';
import {
	deskErrorCode,
	GetStatus,
	ListAssets,
	ProtocolError,
	protocolErrorExitCode,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { killStartedServers, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

// Each case is bounded by the runner's timeout: on a server that wedges instead of exiting, the test
// fails there rather than hanging the suite.
const bounded = { timeout: 15_000 };
after(killStartedServers);

async function stillServing(server: RunningServer): Promise<void> {
	const status = await server.call(GetStatus, {});
	assert.equal(status.state, 'ready');
}

describe("a broken frame on the server's input", () => {
	const framingBreaks: Array<[string, (server: RunningServer) => void, RegExp]> = [
		[
			'no Content-Length',
			(s) =>
				s.writeRaw(
					'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"desk/server/status"}',
				),
			/no Content-Length/,
		],
		[
			'a Content-Length that is not a number',
			(s) => s.writeRaw('Content-Length: twelve\r\n\r\n{"jsonrpc":"2.0"}'),
			/not a whole number/,
		],
		[
			'a negative Content-Length',
			(s) => s.writeRaw('Content-Length: -5\r\n\r\n{"jsonrpc":"2.0"}'),
			/not a whole number/,
		],
		[
			'a huge Content-Length',
			(s) => s.writeRaw('Content-Length: 99999999999\r\n\r\n{"jsonrpc":"2.0"}'),
			/over the limit/,
		],
		[
			'two Content-Length lines',
			(s) => s.writeRaw('Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}'),
			/two Content-Length/,
		],
		[
			'a header line that is not "Name: value"',
			(s) => s.writeRaw('Content-Length 17\r\n\r\n{"jsonrpc":"2.0"}'),
			/not "Name: value"/,
		],
		['a header that never ends', (s) => s.writeRaw(`X-Padding: ${'x'.repeat(10_000)}`), /no end of header/],
		[
			'a Content-Length longer than its body, with more frames after it (the reader loses its place)',
			(s) => {
				s.writeRaw('Content-Length: 60\r\n\r\n{}');
				for (let i = 0; i < 4; i++) {
					const body = JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'desk/server/status', params: {} });
					s.writeRaw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
				}
			},
			/not "Name: value"|no end of header|Content-Length/,
		],
		[
			'a body shorter than declared, then the end of input',
			(s) => {
				s.writeRaw('Content-Length: 100\r\n\r\n{"jsonrpc":"2.0","id":1,');
				s.child.stdin.end();
			},
			/ended 24 bytes into a body whose Content-Length is 100/,
		],
		[
			'a header cut by the end of input',
			(s) => {
				s.writeRaw('Content-Length: 10\r\n');
				s.child.stdin.end();
			},
			/ended inside a header/,
		],
	];
	for (const [label, send, reason] of framingBreaks) {
		it(`${label}: logs why, tells the client and exits with code ${protocolErrorExitCode}`, bounded, async () => {
			const server = await startServer(path.join(tempDir(), 'library'));
			try {
				await stillServing(server);
				send(server);
				const exit = await server.exited;
				assert.deepEqual(exit, { code: protocolErrorExitCode, signal: null });
				assert.match(
					server.stderr(),
					new RegExp(`protocol error: .*${reason.source}.*exiting with code ${protocolErrorExitCode}`),
				);
				const told = server.notifications.find((n) => n.method === ProtocolError.method)?.params as
					{ message: string; exitCode: number } | undefined;
				assert.ok(told, `the client is told (${server.notifications.map((n) => n.method).join(', ')})`);
				assert.match(told.message, reason);
				assert.equal(told.exitCode, protocolErrorExitCode);
				assert.ok(
					server.logs.some((l) => reason.test(l) && l.includes('protocol error')),
					server.logs.join('\n'),
				);
			} finally {
				server.child.kill('SIGKILL');
			}
		});
	}

	it('an end of input between frames is an ordinary exit, not a protocol error', bounded, async () => {
		const server = await startServer(path.join(tempDir(), 'library'));
		await stillServing(server);
		server.child.stdin.end();
		const exit = await server.exited;
		assert.equal(exit.code, 1, 'no shutdown was asked for');
		assert.doesNotMatch(server.stderr(), /protocol error/);
	});
});

describe('a well-framed but bad message', () => {
	it('is answered as JSON-RPC says and the server goes on', bounded, async () => {
		const server = await startServer(path.join(tempDir(), 'library'));
		try {
			// Invalid UTF-8 in a string: refused with the request's id, never decoded to U+FFFD and stored.
			const badUtf8 = Buffer.concat([
				Buffer.from('{"jsonrpc":"2.0","id":"u1","method":"desk/assets/addNote","params":{"name":"n\\u0041', 'utf8'),
				Buffer.from([0xff, 0xfe]),
				Buffer.from('","text":"t"}}', 'utf8'),
			]);
			const utf8 = await server.sendRawBody('u1', badUtf8);
			assert.equal(utf8.error?.code, ErrorCodes.ParseError, JSON.stringify(utf8));
			assert.match(utf8.error.message, /not valid UTF-8/);
			const { assets } = await server.call(ListAssets, {});
			assert.deepEqual(assets, [], 'nothing was stored');

			const notJson = await server.sendRawBody(null, '{"jsonrpc":"2.0","id":"j1","method":');
			assert.equal(notJson.error?.code, ErrorCodes.ParseError);
			const batch = await server.sendRawBody(null, '[{"jsonrpc":"2.0","id":"b1","method":"desk/server/status"}]');
			assert.equal(batch.error?.code, ErrorCodes.InvalidRequest);
			const objectId = await server.sendRawBody(null, '{"jsonrpc":"2.0","id":{"a":1},"method":"desk/server/status"}');
			assert.equal(objectId.error?.code, ErrorCodes.InvalidRequest);
			const longId = await server.sendRawBody(
				null,
				`{"jsonrpc":"2.0","id":"${'i'.repeat(100_000)}","method":"desk/server/status"}`,
			);
			assert.equal(longId.error?.code, ErrorCodes.InvalidRequest, 'a 100 000-character id is not echoed back');
			const noVersion = await server.sendRawBody('v1', '{"id":"v1","method":"desk/server/status"}');
			assert.equal(noVersion.error?.code, ErrorCodes.InvalidRequest);
			const nullParams = await server.sendRawBody(
				'p1',
				'{"jsonrpc":"2.0","id":"p1","method":"desk/server/status","params":null}',
			);
			assert.equal(nullParams.error?.code, ErrorCodes.InvalidParams);
			const numberMethod = await server.sendRawBody('m1', '{"jsonrpc":"2.0","id":"m1","method":5}');
			assert.equal(numberMethod.error?.code, ErrorCodes.InvalidRequest);
			// Notifications the connection would choke on are dropped.
			server.writeRaw(frame('{"jsonrpc":"2.0","method":"$/cancelRequest","params":null}'));
			server.writeRaw(frame('{"jsonrpc":"2.0","method":"$/cancelRequest"}'));
			server.writeRaw(frame('{"jsonrpc":"2.0","method":"$/setTrace","params":{}}'));
			server.writeRaw(frame('{"jsonrpc":"2.0","id":77,"result":{"x":1}}'));
			// A second initialize, and initializes of shapes vscode-languageserver cannot read.
			const again = await server.sendRawBody(
				'i1',
				JSON.stringify({
					jsonrpc: '2.0',
					id: 'i1',
					method: 'initialize',
					params: { processId: null, capabilities: {}, initializationOptions: { libraryDir: tempDir() } },
				}),
			);
			assert.equal(again.error?.code, deskErrorCode);
			assert.equal((again.error?.data as DeskErrorJson).code, 'desk.alreadyInitialized');
			await stillServing(server);
			assert.equal(server.child.exitCode, null);
		} finally {
			await server.stop();
		}
	});

	it(
		'an initialize whose params have the wrong shape is InvalidParams, and a good one after it works',
		bounded,
		async () => {
			const server = await startServer(path.join(tempDir(), 'library'), { initialize: false });
			try {
				for (const params of [
					null,
					[],
					5,
					{},
					{ capabilities: 5 },
					{ capabilities: {}, processId: 'x' },
					{ capabilities: {}, trace: 3 },
					{ capabilities: {}, initializationOptions: { libraryDir: 5 } },
				]) {
					const answer = await server.sendRawBody(
						'bad-init',
						JSON.stringify({ jsonrpc: '2.0', id: 'bad-init', method: 'initialize', params }),
					);
					assert.equal(
						answer.error?.code,
						ErrorCodes.InvalidParams,
						`${JSON.stringify(params)} → ${JSON.stringify(answer)}`,
					);
				}
				await server.connection.sendRequest('initialize', {
					processId: null,
					capabilities: {},
					initializationOptions: { libraryDir: path.join(tempDir(), 'library') },
				});
				await stillServing(server);
			} finally {
				await server.stop();
			}
		},
	);
});

function frame(json: string): Buffer {
	const body = Buffer.from(json, 'utf8');
	return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
}
