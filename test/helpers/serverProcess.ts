import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { after, before } from 'node:test';
import {
	createMessageConnection,
	StreamMessageReader,
	StreamMessageWriter,
	type MessageConnection,
} from 'vscode-languageserver/node';
import type {
	NotificationDefinition,
	NotificationParamsOf,
	ParamsOf,
	ResultOf,
} from '../../server/src/protocol/protocol';
import { findProjectRoot } from './temp';

/** A request declared in the protocol module: its method, and its params and result types. */
export interface ProtocolRequest {
	readonly method: string;
	readonly params: unknown;
}

export interface RunningServer {
	connection: MessageConnection;
	child: ChildProcessWithoutNullStreams;
	/** window/logMessage lines, as the client's output channel would show them. */
	logs: string[];
	notifications: Array<{ method: string; params: unknown }>;
	/** Sends a request declared in the protocol module, with params of its declared type, and returns its declared result. */
	call<D extends ProtocolRequest>(definition: D, params: ParamsOf<D>): Promise<ResultOf<D>>;
	/**
	 * The params of the first notification of `definition` (already received or still to come) that
	 * `matches`. Fails, naming `what`, when the server exits first or none arrives within `timeoutMs`:
	 * a wait never ends quietly and lets the test go on as if the notification had come.
	 */
	notified<D extends NotificationDefinition<unknown>>(
		definition: D,
		matches: (params: NotificationParamsOf<D>) => boolean,
		what: string,
		timeoutMs?: number,
	): Promise<NotificationParamsOf<D>>;
	/** Writes raw bytes to the server's stdin, bypassing the JSON-RPC writer. */
	writeRaw(bytes: string | Buffer): void;
	/** Sends a request frame built by hand (for input the JSON-RPC writer cannot serialise) and waits for its answer. */
	sendRawRequest(id: string, json: string): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
	/** Sends `body` (any bytes, e.g. invalid UTF-8) in a well-formed frame and waits for the answer with `id`. */
	sendRawBody(id: string | number | null, body: Buffer | string): Promise<RawAnswer>;
	/** Resolves with the exit code (or the signal) when the process ends. */
	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	/** What the process wrote to stderr so far. */
	stderr(): string;
	stop(): Promise<void>;
}

export interface RawAnswer {
	id?: unknown;
	result?: unknown;
	error?: { code: number; message: string; data?: unknown };
}

const started = new Set<ChildProcessWithoutNullStreams>();

/**
 * Kills every server this test process started that is still running (for an `after` hook: a test
 * that timed out never reached its own cleanup, and a live child would keep the test file running).
 */
export function killStartedServers(): void {
	for (const child of started) {
		if (child.exitCode === null && child.signalCode === null) {
			child.kill('SIGKILL');
		}
	}
	started.clear();
}

/**
 * The server of a describe block: started on `libraryDir` before its tests (then `setUp` runs, such as
 * adopting a repository) and stopped after them. The object it returns forwards to that process, so
 * the tests use it as they would the one startServer returns.
 */
export function serverForSuite(
	libraryDir: string,
	setUp?: (server: RunningServer) => Promise<unknown>,
	options: StartOptions = {},
): RunningServer {
	let current: RunningServer | undefined;
	before(async () => {
		current = await startServer(libraryDir, options);
		await setUp?.(current);
	});
	after(() => current?.stop());
	return new Proxy({} as RunningServer, {
		get(_target, key) {
			if (!current) {
				throw new Error(`the suite's server is used before its before() started it (${String(key)})`);
			}
			const value: unknown = Reflect.get(current, key);
			return typeof value === 'function' ? value.bind(current) : value;
		},
	});
}

export interface StartOptions {
	logLevel?: string;
	initialize?: boolean;
	nodeArgs?: string[];
	/** The server's environment (default: the test's own): a HOME of its own gives it a git identity, say. */
	env?: NodeJS.ProcessEnv;
}

/**
 * Starts the real server bundle (dist/server.js, or the bundle `DESK_SERVER_JS` names: to run a
 * protocol test against another build, such as the one before a fix) over stdio and initializes it (unless `initialize` is false). */
export async function startServer(libraryDir: string, options: StartOptions = {}): Promise<RunningServer> {
	const serverJs = process.env['DESK_SERVER_JS'] || path.join(findProjectRoot(), 'dist', 'server.js');
	const child = spawn(process.execPath, [...(options.nodeArgs ?? []), serverJs, '--stdio'], {
		stdio: ['pipe', 'pipe', 'pipe'],
		...(options.env ? { env: options.env } : {}),
	});
	started.add(child);
	child.once('exit', () => started.delete(child));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.once('exit', (code, signal) => resolve({ code, signal })),
	);
	// A test that ends the process on purpose may leave writes behind; they must not fail the test.
	child.stdin.on('error', () => undefined);
	let stderr = '';
	child.stderr.setEncoding('utf8');
	child.stderr.on('data', (chunk: string) => (stderr += chunk));
	const connection = createMessageConnection(
		new StreamMessageReader(child.stdout),
		new StreamMessageWriter(child.stdin),
	);
	const logs: string[] = [];
	const notifications: Array<{ method: string; params: unknown }> = [];
	const notificationWaiters = new Set<(method: string, params: unknown) => void>();
	connection.onNotification('window/logMessage', (params: { message: string }) => void logs.push(params.message));
	connection.onNotification((method: string, params: unknown) => {
		notifications.push({ method, params });
		for (const waiter of notificationWaiters) {
			waiter(method, params);
		}
	});
	connection.listen();
	// A second reader of the same stdout: answers to hand-made requests, which the connection ignores.
	// Chunks are kept apart until a message is whole, and a message is parsed only while an answer is
	// awaited: joining each chunk onto what came before, and parsing every message, made a 5 MB answer
	// (24,000 versions) cost this reader hundreds of milliseconds that a benchmark counted as the server's.
	const rawWaiters = new Map<string | number | null, (message: RawAnswer) => void>();
	let chunks: Buffer[] = [];
	let buffered = 0;
	let bodyLength = -1;
	child.stdout.on('data', (chunk: Buffer) => {
		chunks.push(chunk);
		buffered += chunk.length;
		for (;;) {
			if (bodyLength < 0) {
				const head = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
				const headerEnd = head.indexOf('\r\n\r\n');
				if (headerEnd < 0) {
					chunks = [head];
					return;
				}
				bodyLength = Number(/Content-Length: (\d+)/i.exec(head.subarray(0, headerEnd).toString('ascii'))?.[1] ?? NaN);
				if (!Number.isSafeInteger(bodyLength)) {
					throw new Error(
						`the server sent a header without a Content-Length: ${head.subarray(0, headerEnd).toString()}`,
					);
				}
				chunks = [head.subarray(headerEnd + 4)];
				buffered = head.length - headerEnd - 4;
			}
			if (buffered < bodyLength) {
				return;
			}
			const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
			const body = all.subarray(0, bodyLength);
			chunks = [all.subarray(bodyLength)];
			buffered = all.length - bodyLength;
			bodyLength = -1;
			if (rawWaiters.size === 0) {
				continue;
			}
			const message = JSON.parse(body.toString('utf8')) as RawAnswer;
			if (
				(typeof message.id === 'string' || message.id === null || typeof message.id === 'number') &&
				rawWaiters.has(message.id)
			) {
				rawWaiters.get(message.id)?.(message);
				rawWaiters.delete(message.id);
			}
		}
	});
	if (options.initialize !== false) {
		await connection.sendRequest('initialize', {
			processId: process.pid,
			rootUri: null,
			capabilities: {},
			initializationOptions: { libraryDir, logLevel: options.logLevel ?? 'info' },
		});
		await connection.sendNotification('initialized', {});
	}
	const sendRawBody = (id: string | number | null, body: Buffer | string) =>
		new Promise<RawAnswer>((resolve) => {
			rawWaiters.set(id, resolve);
			const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
			child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, 'ascii'), bytes]));
		});
	return {
		connection,
		child,
		logs,
		notifications,
		call: async <D extends ProtocolRequest>(definition: D, params: ParamsOf<D>) =>
			(await connection.sendRequest(definition.method, params)) as ResultOf<D>,
		notified: <D extends NotificationDefinition<unknown>>(
			definition: D,
			matches: (params: NotificationParamsOf<D>) => boolean,
			what: string,
			timeoutMs = 20_000,
		) =>
			new Promise<NotificationParamsOf<D>>((resolve, reject) => {
				const found = notifications.find(
					(n) => n.method === definition.method && matches(n.params as NotificationParamsOf<D>),
				);
				if (found) {
					resolve(found.params as NotificationParamsOf<D>);
					return;
				}
				const done = () => {
					clearTimeout(timer);
					notificationWaiters.delete(waiter);
				};
				const waiter = (method: string, params: unknown) => {
					if (method === definition.method && matches(params as NotificationParamsOf<D>)) {
						done();
						resolve(params as NotificationParamsOf<D>);
					}
				};
				const seen = () => [...new Set(notifications.map((n) => n.method))].join(', ') || 'none';
				const timer = setTimeout(() => {
					done();
					reject(
						new Error(
							`no ${definition.method} for ${what} within ${timeoutMs / 1000} s (notifications seen: ${seen()})`,
						),
					);
				}, timeoutMs);
				notificationWaiters.add(waiter);
				void exited.then(({ code, signal }) => {
					if (notificationWaiters.has(waiter)) {
						done();
						reject(new Error(`the server exited (${signal ?? code}) before ${definition.method} for ${what}`));
					}
				});
			}),
		exited,
		stderr: () => stderr,
		writeRaw: (bytes) => child.stdin.write(bytes),
		sendRawRequest: (id, json) =>
			sendRawBody(id, json) as Promise<{ result?: unknown; error?: { code: number; message: string } }>,
		sendRawBody,
		async stop() {
			if (child.exitCode !== null) {
				return;
			}
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
export async function expectRpcError(
	connection: MessageConnection,
	method: string,
	params: unknown,
): Promise<RpcFailure> {
	try {
		await connection.sendRequest(method, params);
	} catch (error) {
		const { code, message, data } = error as RpcFailure;
		return { code, message, data };
	}
	throw new Error(`${method} succeeded but an error was expected`);
}
