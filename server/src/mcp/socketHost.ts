/**
 * A run's desk tools socket (glossary: Desk tools), hosted by the desk process that carries the run:
 * a Unix socket in an IPC folder of its own (mode 0700, under a short temporary folder), one JSON
 * line a connection each way. Every request must carry the run's token; the run and the actor are the
 * dispatcher's this socket was made with, never something a request says. The folder is bound
 * read-only into the sandbox at `/run/desk`, where the proxy (`dist/desk-mcp.js`) and `desk-tool`
 * connect to it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DeskError, type DeskErrorJson } from '../core/errors';
import { isAlive } from '../core/processes';
import type { ToolDispatcher } from './dispatcher';
import { maxRequestBytes, maxSocketPathBytes, type SocketReply, type SocketRequest } from './socketWire';

/** The socket's name in its folder (the agent's wiring names it too). */
export const socketName = 'desk.sock';
/** What names the process that made an IPC folder, so a later desk can sweep the folders of one that died. */
const ownerFile = 'owner';
const folderPrefix = 'desk-';

/**
 * For the kill test only: when set to a tool's name, the host exits the process after that tool's
 * call is answered (its effect committed) and before the reply is written, as a desk killed at that
 * moment would. Unset in production, where it changes nothing.
 */
export const exitBeforeReplyHook = 'DESK_TEST_EXIT_BEFORE_TOOL_REPLY';

export interface ToolSocket {
	readonly ipcDir: string;
	readonly socketPath: string;
	readonly token: string;
	/** Stops listening and removes the folder; calls in progress are answered first. */
	close(): Promise<void>;
}

export interface ToolSocketOptions {
	/** Where the IPC folder is made (default the system's temporary folder; `/tmp` when that is too long). */
	readonly parent?: string;
	/** Host again in this folder with this token (a restarted desk in the kill test); else a fresh folder and token. */
	readonly reuse?: { readonly ipcDir: string; readonly token: string };
	readonly onError?: (error: Error) => void;
	/** How long a connection may take to send its request line (default 30 s); a peer that hangs is cut off. */
	readonly requestTimeoutMs?: number;
}

/**
 * The most connections served at once. The agent holds one a call and calls one at a time (a
 * harness may run a few in parallel); more is a peer holding connections open to pin the desk's
 * memory (each may buffer a request of up to maxRequestBytes), and is closed at once.
 */
export const maxToolConnections = 8;

/** Refuses a socket path longer than sun_path holds: Node would bind or connect to a truncated path. */
export function assertSocketPath(socketPath: string): void {
	const bytes = Buffer.byteLength(socketPath, 'utf8');
	if (bytes > maxSocketPathBytes) {
		throw new DeskError(
			'run.spawnFailed',
			`The desk tools socket ${socketPath} is ${bytes} bytes long; a Unix socket's path holds at most ${maxSocketPathBytes}. Set TMPDIR to a shorter folder.`,
			{ path: socketPath, bytes, max: maxSocketPathBytes },
		);
	}
}

/** Serves `dispatcher` on a new socket (see the file's comment). */
export async function hostToolSocket(dispatcher: ToolDispatcher, options: ToolSocketOptions = {}): Promise<ToolSocket> {
	const ipcDir = options.reuse ? ownFolderAgain(options.reuse.ipcDir) : makeIpcFolder(options.parent);
	const token = options.reuse?.token ?? randomBytes(32).toString('hex');
	const socketPath = path.join(ipcDir, socketName);
	try {
		assertSocketPath(socketPath);
		fs.writeFileSync(path.join(ipcDir, ownerFile), `${process.pid}\n`, { mode: 0o600 });
		// A socket a killed host left behind would make listen fail with EADDRINUSE.
		fs.rmSync(socketPath, { force: true });
	} catch (error) {
		if (!options.reuse) {
			fs.rmSync(ipcDir, { recursive: true, force: true });
		}
		throw error;
	}
	const expected = Buffer.from(token, 'utf8');
	const pending = new Set<Promise<void>>();
	const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
	const server = net.createServer((socket) => {
		const served = serve(socket, dispatcher, expected, requestTimeoutMs, options.onError).catch((error: unknown) =>
			options.onError?.(error as Error),
		);
		pending.add(served);
		void served.finally(() => pending.delete(served));
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(socketPath, () => {
			server.off('error', reject);
			resolve();
		});
	});
	server.on('error', (error) => options.onError?.(error));
	server.maxConnections = maxToolConnections;
	fs.chmodSync(socketPath, 0o600);
	let closing: Promise<void> | undefined;
	return {
		ipcDir,
		socketPath,
		token,
		close: () =>
			(closing ??= (async () => {
				await new Promise<void>((resolve) => server.close(() => resolve()));
				await Promise.allSettled([...pending]);
				fs.rmSync(ipcDir, { recursive: true, force: true });
			})()),
	};
}

/**
 * Removes the IPC folders of desks that are gone (killed with their runs): `desk-*` folders of the
 * temporary folder that are this user's and whose owner process is no longer running. A folder
 * without an owner file is left alone (it is being made, or is not ours).
 */
export function sweepStaleToolSockets(parent: string = socketParent()): number {
	let removed = 0;
	let names: string[];
	try {
		names = fs.readdirSync(parent);
	} catch {
		return 0;
	}
	for (const name of names) {
		if (!name.startsWith(folderPrefix)) {
			continue;
		}
		const folder = path.join(parent, name);
		try {
			const stat = fs.lstatSync(folder);
			if (!stat.isDirectory() || stat.uid !== process.getuid?.()) {
				continue;
			}
			const pid = Number(fs.readFileSync(path.join(folder, ownerFile), 'utf8').trim());
			if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) {
				fs.rmSync(folder, { recursive: true, force: true });
				removed += 1;
			}
		} catch {
			// Not ours, or gone meanwhile.
		}
	}
	return removed;
}

/**
 * The IPC folder of a desk that stopped, listened on again. Its owner was dead until now, so another
 * desk's sweep may have removed it meanwhile: it is made again at the same path (the agent's proxy
 * knows only that one), and taken only while it is a folder of this user's that no one else may enter
 * (the temporary folder is shared, and someone else could have made one of that name).
 */
function ownFolderAgain(ipcDir: string): string {
	try {
		fs.mkdirSync(ipcDir, { mode: 0o700 });
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
			throw error;
		}
	}
	const stat = fs.lstatSync(ipcDir);
	if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0) {
		throw new DeskError('run.spawnFailed', `The desk tools folder ${ipcDir} is not this user's own any more.`, {
			path: ipcDir,
		});
	}
	return ipcDir;
}

/** The temporary folder, unless its path leaves too little of sun_path for the folder and the socket. */
function socketParent(): string {
	const tmp = os.tmpdir();
	const longest = path.join(tmp, `${folderPrefix}XXXXXX`, socketName);
	return Buffer.byteLength(longest, 'utf8') <= maxSocketPathBytes ? tmp : '/tmp';
}

function makeIpcFolder(parent: string | undefined): string {
	// mkdtemp makes the folder 0700: no other user can reach the socket inside.
	return fs.mkdtempSync(path.join(parent ?? socketParent(), folderPrefix));
}

/** One connection: read one request line (bounded), answer it, close. */
async function serve(
	socket: net.Socket,
	dispatcher: ToolDispatcher,
	token: Buffer,
	requestTimeoutMs: number,
	onError: ((error: Error) => void) | undefined,
): Promise<void> {
	socket.on('error', (error) => onError?.(error));
	const line = await readLine(socket, requestTimeoutMs);
	if (line === undefined) {
		socket.destroy();
		return;
	}
	let reply: SocketReply;
	let request: SocketRequest | undefined;
	try {
		request = parseRequest(line);
	} catch (error) {
		reply = { ok: false, error: refusal('desk.badParams', (error as Error).message) };
	}
	if (request) {
		const given = Buffer.from(typeof request.token === 'string' ? request.token : '', 'utf8');
		if (given.length !== token.length || !timingSafeEqual(given, token)) {
			reply = {
				ok: false,
				error: refusal('operation.notAllowed', "The request does not carry this run's desk tools token."),
			};
		} else if (request.op === 'list') {
			reply = { ok: true, tools: await dispatcher.tools() };
		} else {
			reply = await dispatcher.call(request.name, request.args, {
				...(request.key === undefined ? {} : { key: request.key }),
				...(request.harnessCallId === undefined ? {} : { harnessCallId: request.harnessCallId }),
				signal: goneSignal(socket),
			});
			if (process.env[exitBeforeReplyHook] === request.name) {
				process.exit(70);
			}
		}
	}
	await new Promise<void>((resolve) => socket.end(`${JSON.stringify(reply!)}\n`, () => resolve()));
}

/**
 * Aborted once the peer hangs up: the agent (or its proxy) that asked is gone, so a call that waits
 * (`reports` with `wait_s`) stops waiting. The peer sends nothing after its request line; whatever
 * it does send is read and dropped, so its end of the connection is seen.
 */
function goneSignal(socket: net.Socket): AbortSignal {
	const gone = new AbortController();
	const abort = () => gone.abort();
	socket.on('data', () => undefined);
	socket.once('end', abort);
	socket.once('close', abort);
	socket.resume();
	return gone.signal;
}

function parseRequest(line: string): SocketRequest {
	const value = JSON.parse(line) as Record<string, unknown>;
	if (value === null || typeof value !== 'object' || Array.isArray(value)) {
		throw new Error('a request is a JSON object');
	}
	if (value.op === 'list') {
		return { token: String(value.token ?? ''), op: 'list' };
	}
	if (value.op !== 'call' || typeof value.name !== 'string') {
		throw new Error('a request is {op: "list"} or {op: "call", name, args}');
	}
	const optional = (field: 'key' | 'harnessCallId') => {
		const v = value[field];
		if (v !== undefined && (typeof v !== 'string' || v.length > 256)) {
			throw new Error(`${field} is a string of at most 256 characters`);
		}
		return v === undefined ? {} : { [field]: v };
	};
	return {
		token: String(value.token ?? ''),
		op: 'call',
		name: value.name,
		args: value.args ?? {},
		...optional('key'),
		...optional('harnessCallId'),
	};
}

function refusal(code: DeskErrorJson['code'], message: string): DeskErrorJson {
	return { code, message, data: {} };
}

/** The first line the peer sends, or undefined when it sends more than a request may be, hangs up first, or takes longer than `timeoutMs`. */
function readLine(socket: net.Socket, timeoutMs: number): Promise<string | undefined> {
	return new Promise((resolve) => {
		const chunks: Buffer[] = [];
		let size = 0;
		// Only the request's reading is timed: the call it asks for (a large snapshot) may take long.
		const timer = setTimeout(() => done(undefined), timeoutMs);
		const done = (line: string | undefined) => {
			clearTimeout(timer);
			socket.off('data', onData);
			socket.off('end', onEnd);
			socket.off('close', onEnd);
			resolve(line);
		};
		const onData = (chunk: Buffer) => {
			const newline = chunk.indexOf(0x0a);
			if (newline >= 0) {
				chunks.push(chunk.subarray(0, newline));
				socket.pause();
				done(Buffer.concat(chunks).toString('utf8'));
				return;
			}
			chunks.push(chunk);
			size += chunk.length;
			if (size > maxRequestBytes) {
				done(undefined);
			}
		};
		const onEnd = () => done(undefined);
		socket.on('data', onData);
		socket.on('end', onEnd);
		socket.on('close', onEnd);
	});
}
