import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-languageserver/node';
import { findProjectRoot } from './temp';

export interface RunningServer {
	connection: MessageConnection;
	child: ChildProcessWithoutNullStreams;
	/** window/logMessage lines, as the client's output channel would show them. */
	logs: string[];
	notifications: Array<{ method: string; params: unknown }>;
	/** Writes raw bytes to the server's stdin, bypassing the JSON-RPC writer. */
	writeRaw(bytes: string | Buffer): void;
	/** Sends a request frame built by hand (for input the JSON-RPC writer cannot serialise) and waits for its answer. */
	sendRawRequest(id: string, json: string): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
	stop(): Promise<void>;
}

/** Starts the real server bundle (dist/server.js) over stdio and initializes it. */
export async function startServer(libraryDir: string, options: { logLevel?: string } = {}): Promise<RunningServer> {
	const serverJs = path.join(findProjectRoot(), 'dist', 'server.js');
	const child = spawn(process.execPath, [serverJs, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
	let stderr = '';
	child.stderr.setEncoding('utf8');
	child.stderr.on('data', (chunk: string) => (stderr += chunk));
	const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
	const logs: string[] = [];
	const notifications: Array<{ method: string; params: unknown }> = [];
	connection.onNotification('window/logMessage', (params: { message: string }) => void logs.push(params.message));
	connection.onNotification((method: string, params: unknown) => void notifications.push({ method, params }));
	connection.listen();
	// A second reader of the same stdout: answers to hand-made requests, which the connection ignores.
	const rawWaiters = new Map<string, (message: { result?: unknown; error?: { code: number; message: string } }) => void>();
	let pending = Buffer.alloc(0);
	child.stdout.on('data', (chunk: Buffer) => {
		pending = Buffer.concat([pending, chunk]);
		for (;;) {
			const headerEnd = pending.indexOf('\r\n\r\n');
			if (headerEnd < 0) {
				return;
			}
			const length = Number(/Content-Length: (\d+)/i.exec(pending.subarray(0, headerEnd).toString('ascii'))?.[1]);
			if (pending.length < headerEnd + 4 + length) {
				return;
			}
			const message = JSON.parse(pending.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8')) as { id?: unknown; result?: unknown; error?: { code: number; message: string } };
			pending = pending.subarray(headerEnd + 4 + length);
			if (typeof message.id === 'string') {
				rawWaiters.get(message.id)?.(message);
				rawWaiters.delete(message.id);
			}
		}
	});
	await connection.sendRequest('initialize', {
		processId: process.pid,
		rootUri: null,
		capabilities: {},
		initializationOptions: { libraryDir, logLevel: options.logLevel ?? 'info' },
	});
	await connection.sendNotification('initialized', {});
	return {
		connection,
		child,
		logs,
		notifications,
		writeRaw: (bytes) => child.stdin.write(bytes),
		sendRawRequest(id, json) {
			return new Promise((resolve) => {
				rawWaiters.set(id, resolve);
				child.stdin.write(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
			});
		},
		async stop() {
			if (child.exitCode !== null) {
				return;
			}
			const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
			try {
				await connection.sendRequest('shutdown');
				await connection.sendNotification('exit');
			} catch {
				child.kill('SIGKILL');
			}
			const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
			await exited;
			clearTimeout(timer);
			connection.dispose();
			if (stderr.includes('Error')) {
				process.stderr.write(`server stderr:\n${stderr}\n`);
			}
		},
	};
}

export interface RpcFailure {
	code: number;
	message: string;
	data?: unknown;
}

/** Sends a request and returns its error, failing when it succeeds. */
export async function expectRpcError(connection: MessageConnection, method: string, params: unknown): Promise<RpcFailure> {
	try {
		await connection.sendRequest(method, params);
	} catch (error) {
		const { code, message, data } = error as RpcFailure;
		return { code, message, data };
	}
	throw new Error(`${method} succeeded but an error was expected`);
}
