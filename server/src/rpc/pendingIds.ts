import {
	ErrorCodes,
	type Message,
	type MessageReader,
	type MessageWriter,
	type RequestMessage,
	type ResponseMessage,
} from 'vscode-languageserver/node';

/**
 * Two pending requests with one id. vscode-jsonrpc queues incoming requests by id before it
 * dispatches them, so a second request with the id of one still queued replaced it: the first was
 * dropped and never answered. The JSON-RPC spec lets a server refuse such a request; this guard sits
 * between the transport and the connection, remembers the ids of requests read and not yet
 * answered, and answers a request whose id is one of them with InvalidRequest (-32600) naming the id,
 * at once and without passing it on; the first is answered as usual. (The client cannot tell the two
 * answers apart by id: a client that reuses an id while its request is pending gets an error for one
 * of them, never silence.)
 */
export function guardPendingIds(
	reader: MessageReader,
	writer: MessageWriter,
): { reader: MessageReader; writer: MessageWriter } {
	const pending = new Set<string>();
	const key = (id: number | string): string => `${typeof id}:${id}`;
	const guardedWriter: MessageWriter = {
		onError: writer.onError,
		onClose: writer.onClose,
		write(message: Message): Promise<void> {
			const response = message as ResponseMessage;
			if (!('method' in message) && response.id !== undefined && response.id !== null) {
				pending.delete(key(response.id));
			}
			return writer.write(message);
		},
		end: () => writer.end(),
		dispose: () => writer.dispose(),
	};
	const guardedReader: MessageReader = {
		onError: reader.onError,
		onClose: reader.onClose,
		onPartialMessage: reader.onPartialMessage,
		listen(callback) {
			return reader.listen((message) => {
				const request = message as RequestMessage;
				if (typeof request.method === 'string' && (typeof request.id === 'string' || typeof request.id === 'number')) {
					const id = key(request.id);
					if (pending.has(id)) {
						// Written past the guarded writer: this answer must not end the first request's pending state.
						void writer
							.write({
								jsonrpc: '2.0',
								id: request.id,
								error: {
									code: ErrorCodes.InvalidRequest,
									message: `Request id ${shortId(request.id)} is already in use by a request still pending; this ${shortMethod(request.method)} was not run. Use a new id for each request.`,
								},
							} as ResponseMessage)
							.catch(() => undefined);
						return;
					}
					pending.add(id);
				}
				callback(message);
			});
		},
		dispose: () => reader.dispose(),
	};
	return { reader: guardedReader, writer: guardedWriter };
}

/** An id as the error names it, bounded (an id may be a 10 MB string). */
function shortId(id: number | string): string {
	const text = JSON.stringify(id);
	return text.length > 80 ? `${text.slice(0, 77)}…"` : text;
}

function shortMethod(method: string): string {
	return method.length > 80 ? `${JSON.stringify(method.slice(0, 77))}…` : JSON.stringify(method);
}
