/**
 * The agent's side of its run's desk tools socket (glossary: Desk tools): a {@link ToolDispatcher}
 * whose tools and calls are the desk's, one connection a request. A connection lost before the reply
 * (the desk restarting, say) is tried again with the very same request: a mutating call's receipt key
 * is the same (the agent's `request_id`, else the hash the desk derives from the run, the tool and
 * the agent's tool-use id or the args), so a desk that made the effect and lost the connection before
 * its reply answers the retry with its first result and makes no second effect.
 */
import * as net from 'node:net';
import type { DeskErrorJson } from '../core/errors';
import type { ToolDispatcher, ToolOutcome } from './dispatcher';
import { maxSocketPathBytes, type SocketReply, type SocketRequest } from './socketWire';

/** The waits before each new try of a lost connection: about eight seconds in all. */
const retryDelaysMs = [100, 250, 500, 1000, 2000, 4000];
/** The most of a reply read: a list of results, a version's manifest. */
const maxReplyBytes = 64 * 1024 * 1024;

/** The connection was lost before a whole reply came: worth another try. */
class LostConnection extends Error {}

/** Where the socket is and the token its requests carry, from the environment the wiring set. */
export function socketFromEnv(env: NodeJS.ProcessEnv = process.env): { socketPath: string; token: string } {
	const socketPath = env['DESK_MCP_SOCKET'];
	const token = env['DESK_MCP_TOKEN'];
	if (!socketPath || !token) {
		throw new Error(
			'DESK_MCP_SOCKET and DESK_MCP_TOKEN are not set: the desk tools are reached only from inside a run',
		);
	}
	if (Buffer.byteLength(socketPath, 'utf8') > maxSocketPathBytes) {
		throw new Error(`DESK_MCP_SOCKET is longer than a Unix socket's path may be (${maxSocketPathBytes} bytes)`);
	}
	return { socketPath, token };
}

export function socketDispatcher(socketPath: string, token: string): ToolDispatcher {
	return {
		async tools() {
			const reply = await exchange(socketPath, { token, op: 'list' });
			if (reply.ok && 'tools' in reply) {
				return reply.tools;
			}
			throw new Error(`the desk refused to list its tools: ${describe(reply)}`);
		},
		async call(name, args, meta) {
			const reply = await exchange(
				socketPath,
				{
					token,
					op: 'call',
					name,
					args,
					...(meta.key === undefined ? {} : { key: meta.key }),
					...(meta.harnessCallId === undefined ? {} : { harnessCallId: meta.harnessCallId }),
				},
				meta.signal,
			);
			if ('tools' in reply) {
				throw new Error('the desk answered a call with a list of tools');
			}
			return reply as ToolOutcome;
		},
	};
}

/** One request, tried again on a lost connection; a refusal of the desk's is a reply, not a loss. */
async function exchange(socketPath: string, request: SocketRequest, signal?: AbortSignal): Promise<SocketReply> {
	const line = `${JSON.stringify(request)}\n`;
	for (let attempt = 0; ; attempt += 1) {
		try {
			return await once(socketPath, line, signal);
		} catch (error) {
			if (!(error instanceof LostConnection) || attempt >= retryDelaysMs.length) {
				throw error instanceof LostConnection
					? new Error(`the desk did not answer on ${socketPath} (${error.message}); is its run still going?`)
					: error;
			}
			await new Promise((resolve) => setTimeout(resolve, retryDelaysMs[attempt]));
		}
	}
}

/** One connection; cancelling `signal` closes it, which ends the desk's side of the call too (no new try). */
function once(socketPath: string, line: string, signal?: AbortSignal): Promise<SocketReply> {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) {
			reject(new Error('the call was cancelled'));
			return;
		}
		const socket = net.createConnection(socketPath);
		const chunks: Buffer[] = [];
		let size = 0;
		let settled = false;
		const settle = (action: () => void) => {
			if (!settled) {
				settled = true;
				socket.destroy();
				action();
			}
		};
		socket.on('connect', () => socket.write(line));
		socket.on('data', (chunk: Buffer) => {
			const newline = chunk.indexOf(0x0a);
			if (newline < 0) {
				chunks.push(chunk);
				size += chunk.length;
				if (size > maxReplyBytes) {
					settle(() => reject(new Error(`the desk's reply is over ${maxReplyBytes} bytes`)));
				}
				return;
			}
			chunks.push(chunk.subarray(0, newline));
			const text = Buffer.concat(chunks).toString('utf8');
			settle(() => {
				try {
					resolve(JSON.parse(text) as SocketReply);
				} catch {
					reject(new Error('the desk answered with something that is not JSON'));
				}
			});
		});
		socket.on('error', (error: NodeJS.ErrnoException) =>
			settle(() => reject(new LostConnection(error.code ?? error.message))),
		);
		socket.on('close', () => settle(() => reject(new LostConnection('closed before the reply'))));
		signal?.addEventListener('abort', () => settle(() => reject(new Error('the call was cancelled'))), { once: true });
	});
}

function describe(reply: SocketReply): string {
	const error = (reply as { error?: DeskErrorJson }).error;
	return error ? `${error.code}: ${error.message}` : 'no tools';
}
