/** Entry of the desk server process, started by the extension (IPC) or by tests (--stdio). */
import {
	createConnection,
	IPCMessageReader,
	IPCMessageWriter,
	ProposedFeatures,
	StreamMessageWriter,
} from 'vscode-languageserver/node';
import { protocolErrorExitCode } from './protocol/protocol';
import { GuardedMessageReader, StrictFrameReader } from './rpc/frameReader';
import { guardPendingIds } from './rpc/pendingIds';
import { startDeskServer, type DeskServer } from './rpc/server';

if (process.argv.includes('--stdio')) {
	startOnStdio();
} else {
	startOnIpc();
}

/**
 * Over Node IPC (the extension's transport) messages arrive parsed; the same checks as on stdio
 * (rpc/frameReader.ts, MessageGate) answer or drop what the connection would mishandle.
 */
function startOnIpc(): void {
	const writer = new IPCMessageWriter(process);
	let server: DeskServer | undefined;
	const reader = new GuardedMessageReader(new IPCMessageReader(process), {
		reply: (message) => void writer.write(message).catch(() => undefined),
		log: (line) => process.stderr.write(`desk server: ${line}\n`),
		initialized: () => server?.initialized ?? false,
	});
	// Over both transports, a request with the id of one still pending is refused (rpc/pendingIds.ts).
	const guarded = guardPendingIds(reader, writer);
	server = startDeskServer(createConnection(ProposedFeatures.all, guarded.reader, guarded.writer));
}

/**
 * Over stdio the desk reads frames with its own strict reader: a broken frame ends the process with
 * {@link protocolErrorExitCode} after a log line, so the client starts a fresh server at once rather
 * than wait on a wedged stream.
 */
function startOnStdio(): void {
	// stdout carries the frames: anything printed with console goes to stderr instead.
	for (const name of ['log', 'info', 'debug', 'warn'] as const) {
		console[name] = (...args: unknown[]) => void process.stderr.write(`${args.map(String).join(' ')}\n`);
	}
	const writer = new StreamMessageWriter(process.stdout);
	let server: DeskServer | undefined;
	const reader = new StrictFrameReader(process.stdin, {
		reply: (message) => void writer.write(message).catch(() => undefined),
		log: (line) => process.stderr.write(`desk server: ${line}\n`),
		initialized: () => server?.initialized ?? false,
	});
	reader.onFramingError((problem) => {
		process.stderr.write(`desk server: protocol error: ${problem}; exiting with code ${protocolErrorExitCode}\n`);
		void (server?.endOnProtocolError(problem) ?? Promise.resolve()).finally(() => process.exit(protocolErrorExitCode));
	});
	reader.onClose(() => process.exit(server?.shutdownReceived ? 0 : 1));
	const guarded = guardPendingIds(reader, writer);
	server = startDeskServer(createConnection(ProposedFeatures.all, guarded.reader, guarded.writer));
}
