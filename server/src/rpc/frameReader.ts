/**
 * The desk server's reader of JSON-RPC frames on stdio, in front of vscode-languageserver's
 * connection. It is strict where vscode-jsonrpc's own reader is lenient:
 *
 * - A broken header (no `Content-Length`, one that is not a plain decimal number, one over the body
 *   limit, two of them, no end of the header within 8 KiB, bytes that are not header text) or a body
 *   cut short by the end of input is a *framing* error. The stream cannot be resynchronised (the
 *   next frame's start is unknown), so the reader stops and reports it once through
 *   {@link StrictFrameReader.onFramingError}; the process then exits with a distinct code and its
 *   client starts a fresh server. vscode-jsonrpc's reader instead waits forever for a body that
 *   never comes, or reads on from a wrong offset.
 * - A body that is not UTF-8 is refused (ParseError, -32700), never decoded with U+FFFD in place of
 *   the bad bytes: a name altered on the way would be stored altered.
 * - A body that is not JSON, or JSON that is not one JSON-RPC message, is answered as the JSON-RPC
 *   spec says (ParseError / InvalidRequest) and the reader goes on with the next frame.
 * - Messages the connection would mishandle are answered or dropped here: a request whose id is not
 *   a string or a whole number, params that are neither an object nor a list, an `initialize` whose
 *   params are not the shape vscode-languageserver reads (it would answer with an internal error), a
 *   second `initialize`, a `$/cancelRequest` without an id (it would throw inside the connection).
 */
import {
	AbstractMessageReader,
	ErrorCodes,
	type DataCallback,
	type Disposable,
	type Message,
	type MessageReader,
} from 'vscode-languageserver/node';
import { deskErrorCode } from '../protocol/protocol';

/** A response the reader sends itself, for a message that never reaches the connection. */
export interface ReaderReply {
	jsonrpc: '2.0';
	id: string | number | null;
	error: { code: number; message: string; data?: unknown };
}

export interface FrameReaderOptions {
	/** Sends a response the reader makes itself (through the connection's writer). */
	reply(message: ReaderReply): void;
	/** A log line about a message that was refused or dropped. */
	log(line: string): void;
	/** Whether `initialize` was accepted already (a second one is refused here, before vscode-languageserver acts on it). */
	initialized(): boolean;
	/** Largest body accepted, in bytes. */
	maxBodyBytes?: number;
}

/** Largest body a client may send (a ticket or a note is at most 256 KiB of text; 10 MB strings are refused by the schema, not by the frame). */
export const maxBodyBytes = 64 * 1024 * 1024;
const maxHeaderBytes = 8 * 1024;
const maxIdLength = 256;
const crlfcrlf = Buffer.from('\r\n\r\n', 'ascii');

export class StrictFrameReader extends AbstractMessageReader {
	private callback: DataCallback | undefined;
	private chunks: Buffer[] = [];
	private buffered = 0;
	/** Body length of the frame being read, once its header is complete. */
	private bodyLength = -1;
	private broken = false;
	private readonly framingListeners: Array<(problem: string) => void> = [];
	private readonly maxBody: number;
	private readonly gate: MessageGate;

	constructor(
		private readonly readable: NodeJS.ReadableStream,
		private readonly options: FrameReaderOptions,
	) {
		super();
		this.maxBody = options.maxBodyBytes ?? maxBodyBytes;
		this.gate = new MessageGate(options);
	}

	/** Called once, with what was wrong, when the input's framing breaks; nothing is read after it. */
	onFramingError(listener: (problem: string) => void): void {
		this.framingListeners.push(listener);
	}

	/** True when the input ended inside a frame (a header or a body cut short). */
	get midFrame(): boolean {
		return this.buffered > 0 || this.bodyLength >= 0;
	}

	listen(callback: DataCallback): Disposable {
		this.callback = callback;
		const onData = (data: Buffer | string) => this.onData(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
		const onEnd = () => {
			if (!this.broken && this.midFrame) {
				this.fail(
					this.bodyLength >= 0
						? `the input ended ${this.buffered} bytes into a body whose Content-Length is ${this.bodyLength}`
						: `the input ended inside a header (${this.buffered} bytes without the blank line that ends it)`,
				);
				return;
			}
			this.fireClose();
		};
		const onError = (error: Error) => this.fireError(error);
		this.readable.on('data', onData);
		this.readable.on('end', onEnd);
		this.readable.on('error', onError);
		return {
			dispose: () => {
				this.readable.off('data', onData);
				this.readable.off('end', onEnd);
				this.readable.off('error', onError);
			},
		};
	}

	private onData(data: Buffer): void {
		if (this.broken) {
			return;
		}
		this.chunks.push(data);
		this.buffered += data.length;
		while (!this.broken) {
			if (this.bodyLength < 0) {
				const buffer = this.take();
				const end = buffer.subarray(0, maxHeaderBytes + crlfcrlf.length).indexOf(crlfcrlf);
				if (end < 0) {
					if (buffer.length >= maxHeaderBytes + crlfcrlf.length) {
						this.fail(`no end of header within ${maxHeaderBytes} bytes`);
					}
					return;
				}
				const length = this.parseHeader(buffer.subarray(0, end));
				if (length === undefined) {
					return;
				}
				this.bodyLength = length;
				this.keep(buffer.subarray(end + crlfcrlf.length));
			}
			if (this.buffered < this.bodyLength) {
				return;
			}
			const buffer = this.take();
			const body = buffer.subarray(0, this.bodyLength);
			this.keep(buffer.subarray(this.bodyLength));
			this.bodyLength = -1;
			this.deliver(body);
		}
	}

	/** The header's Content-Length, or undefined after reporting a framing error. */
	private parseHeader(header: Buffer): number | undefined {
		for (const byte of header) {
			// Header text is printable ASCII; CR and LF only as line ends (checked by the split below).
			if ((byte < 0x20 && byte !== 0x0d && byte !== 0x0a && byte !== 0x09) || byte > 0x7e) {
				this.fail(`the header holds a byte that is not header text (0x${byte.toString(16).padStart(2, '0')})`);
				return undefined;
			}
		}
		let length: number | undefined;
		for (const line of header.toString('ascii').split('\r\n')) {
			const match = /^([A-Za-z0-9-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
			if (!match) {
				this.fail(`a header line is not "Name: value": ${JSON.stringify(line.slice(0, 80))}`);
				return undefined;
			}
			const name = match[1]!.toLowerCase();
			const value = match[2]!;
			if (name === 'content-length') {
				if (length !== undefined) {
					this.fail('the header has two Content-Length lines');
					return undefined;
				}
				if (!/^\d{1,12}$/.test(value)) {
					this.fail(`Content-Length is not a whole number of bytes: ${JSON.stringify(value.slice(0, 40))}`);
					return undefined;
				}
				length = Number(value);
				if (length > this.maxBody) {
					this.fail(`Content-Length ${length} is over the limit of ${this.maxBody} bytes`);
					return undefined;
				}
			} else if (name === 'content-type') {
				if (!/^application\/vscode-jsonrpc\s*(;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i.test(value)) {
					this.fail(`Content-Type is not application/vscode-jsonrpc in UTF-8: ${JSON.stringify(value.slice(0, 80))}`);
					return undefined;
				}
			}
		}
		if (length === undefined) {
			this.fail('the header has no Content-Length');
			return undefined;
		}
		return length;
	}

	private deliver(body: Buffer): void {
		let text: string;
		try {
			text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
		} catch {
			// Find the id (if any) in a lenient reading, so the request is answered rather than left pending.
			this.gate.refuse(
				idIn(body.toString('utf8')),
				ErrorCodes.ParseError,
				'the message body is not valid UTF-8; it was refused, not repaired',
			);
			return;
		}
		let message: unknown;
		try {
			message = JSON.parse(text);
		} catch {
			this.gate.refuse(null, ErrorCodes.ParseError, 'the message body is not JSON');
			return;
		}
		if (this.gate.handled(message)) {
			return;
		}
		try {
			this.callback?.(message as Message);
		} catch (error) {
			this.options.log(`a message could not be handled: ${(error as Error).message?.slice(0, 200)}`);
		}
	}

	private fail(problem: string): void {
		if (this.broken) {
			return;
		}
		this.broken = true;
		this.chunks = [];
		this.buffered = 0;
		if (typeof (this.readable as NodeJS.ReadableStream & { pause?: () => void }).pause === 'function') {
			this.readable.pause();
		}
		for (const listener of this.framingListeners) {
			listener(problem);
		}
	}

	private take(): Buffer {
		if (this.chunks.length !== 1) {
			this.chunks = [Buffer.concat(this.chunks, this.buffered)];
		}
		return this.chunks[0] ?? Buffer.alloc(0);
	}

	private keep(rest: Buffer): void {
		this.chunks = rest.length > 0 ? [rest] : [];
		this.buffered = rest.length;
	}
}

/**
 * The checks on one parsed message that come before the connection sees it (see the file's comment):
 * it answers or drops what the connection would mishandle. Used by the stdio reader and, around
 * Node IPC (the extension's transport, where messages arrive parsed), by {@link GuardedMessageReader}.
 */
export class MessageGate {
	constructor(private readonly options: Pick<FrameReaderOptions, 'reply' | 'log' | 'initialized'>) {}

	/** Answers or drops a message the connection would mishandle; returns true when it was taken care of. */
	handled(message: unknown): boolean {
		if (message === null || typeof message !== 'object' || Array.isArray(message)) {
			this.refuse(
				null,
				ErrorCodes.InvalidRequest,
				Array.isArray(message)
					? 'batches are not supported; send one message per frame'
					: 'a message must be a JSON object',
			);
			return true;
		}
		const m = message as Record<string, unknown>;
		const hasId = Object.prototype.hasOwnProperty.call(m, 'id');
		const idOk =
			typeof m['id'] === 'string' ? (m['id'] as string).length <= maxIdLength : Number.isSafeInteger(m['id']);
		const id = idOk ? (m['id'] as string | number) : null;
		if (m['jsonrpc'] !== '2.0') {
			this.refuse(id, ErrorCodes.InvalidRequest, 'a message must say "jsonrpc": "2.0"');
			return true;
		}
		if (!Object.prototype.hasOwnProperty.call(m, 'method')) {
			// A response: the desk server sends no requests, so there is nothing it could answer.
			this.options.log(`a response to no request of the server was dropped (id ${JSON.stringify(id)})`);
			return true;
		}
		const method = m['method'];
		if (typeof method !== 'string') {
			this.refuse(id, ErrorCodes.InvalidRequest, 'a message\'s "method" must be a string');
			return true;
		}
		if (hasId && !idOk) {
			this.refuse(
				null,
				ErrorCodes.InvalidRequest,
				`a request id must be a string of at most ${maxIdLength} characters or a whole number`,
			);
			return true;
		}
		const params = m['params'];
		if (params !== undefined && (params === null || typeof params !== 'object')) {
			if (hasId) {
				const message = `${method.slice(0, 200)}: params must be an object of named fields`;
				this.refuse(id, ErrorCodes.InvalidParams, message, {
					code: 'desk.badParams',
					message,
					data: { method: method.slice(0, 200), field: 'params' },
				});
			} else {
				this.options.log(`a notification with params that are not an object was dropped (${method.slice(0, 100)})`);
			}
			return true;
		}
		if (hasId && method === 'initialize') {
			if (this.options.initialized()) {
				const message = 'The desk server is already initialized; start a new server for another library.';
				this.refuse(id, deskErrorCode, message, { code: 'desk.alreadyInitialized', message, data: {} });
				return true;
			}
			const p = params as Record<string, unknown> | undefined;
			const problem =
				p === undefined || Array.isArray(p)
					? 'initialize takes an object of params'
					: !isObject(p['capabilities'])
						? 'params.capabilities must be an object'
						: p['processId'] !== undefined && p['processId'] !== null && !Number.isSafeInteger(p['processId'])
							? 'params.processId must be a whole number or null'
							: p['trace'] !== undefined && typeof p['trace'] !== 'string'
								? 'params.trace must be a string'
								: undefined;
			if (problem) {
				this.refuse(id, ErrorCodes.InvalidParams, `initialize: ${problem}`, {
					code: 'desk.badParams',
					message: `initialize: ${problem}`,
					data: {
						method: 'initialize',
						field: problem.split(' ')[0] === 'initialize' ? 'params' : problem.split(' ')[0],
					},
				});
				return true;
			}
		}
		if (!hasId && (method === '$/cancelRequest' || method === '$/setTrace')) {
			const p = params as Record<string, unknown> | undefined;
			const ok =
				method === '$/cancelRequest'
					? isObject(p) && (typeof p['id'] === 'string' || Number.isSafeInteger(p['id']))
					: isObject(p) && typeof p['value'] === 'string';
			if (!ok) {
				this.options.log(`a ${method} notification without the params it needs was dropped`);
				return true;
			}
		}
		return false;
	}

	refuse(id: string | number | null, code: number, message: string, data?: unknown): void {
		this.options.log(`refused a message: ${message}`);
		this.options.reply({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
	}
}

/** A reader of already parsed messages (Node IPC) with the {@link MessageGate} in front of its callback. */
export class GuardedMessageReader implements MessageReader {
	private readonly gate: MessageGate;

	constructor(
		private readonly inner: MessageReader,
		private readonly options: Pick<FrameReaderOptions, 'reply' | 'log' | 'initialized'>,
	) {
		this.gate = new MessageGate(options);
	}

	get onError() {
		return this.inner.onError;
	}

	get onClose() {
		return this.inner.onClose;
	}

	get onPartialMessage() {
		return this.inner.onPartialMessage;
	}

	listen(callback: DataCallback): Disposable {
		return this.inner.listen((message) => {
			if (this.gate.handled(message)) {
				return;
			}
			try {
				callback(message);
			} catch (error) {
				this.options.log(`a message could not be handled: ${(error as Error).message?.slice(0, 200)}`);
			}
		});
	}

	dispose(): void {
		this.inner.dispose();
	}
}

function isObject(value: unknown): value is Record<string, unknown> {
	return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The id of a message read leniently, when it is one a response may carry. */
function idIn(text: string): string | number | null {
	try {
		const id = (JSON.parse(text) as { id?: unknown }).id;
		return (typeof id === 'string' && id.length <= maxIdLength) || Number.isSafeInteger(id)
			? (id as string | number)
			: null;
	} catch {
		return null;
	}
}
