import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import {
	CloseAction,
	ErrorAction,
	LanguageClient,
	ResponseError,
	RevealOutputChannelOn,
	State,
	TransportKind,
	type LanguageClientOptions,
	type ServerOptions,
} from 'vscode-languageclient/node';
import {
	ProtocolError,
	deskErrorCode,
	deskNotifications,
	type DeskErrorJson,
	type InitializationOptions,
	type NotificationDefinition,
	type NotificationParamsOf,
	type RequestDefinition,
} from '../../../server/src/protocol/protocol';

export type DeskState = 'starting' | 'ready' | 'error' | 'stopped';

type ServerNotifications = Omit<typeof deskNotifications, 'ProtocolError'>;

/**
 * One handler for every notification the protocol declares, but {@link ProtocolError}, which the
 * DeskClient takes itself (the reason a server exited): the compiler refuses a table that lacks one,
 * and a protocol test checks that the client's table names each.
 */
export type DeskNotificationHandlers = {
	[K in keyof ServerNotifications]: (params: NotificationParamsOf<ServerNotifications[K]>) => void;
};

/** Registers a declared notification's handler: the compiler checks the handler's params against the declaration. */
function onDeclared<P>(
	client: LanguageClient,
	definition: NotificationDefinition<P>,
	handler: (params: P) => void,
): vscode.Disposable {
	return client.onNotification(definition.method, handler);
}

/** A failure reported by the desk server, with its stable code when the desk refused. */
export class DeskRequestError extends Error {
	constructor(
		message: string,
		readonly deskError?: DeskErrorJson,
	) {
		super(message);
	}
}

/**
 * The desk server process and the typed requests to it. The server runs in its own Node process
 * (IPC transport), so a slow git read or a database checkpoint never blocks the extension host.
 */
export class DeskClient implements vscode.Disposable {
	private client: LanguageClient | undefined;
	private readonly stateEmitter = new vscode.EventEmitter<DeskState>();
	readonly onDidChangeState = this.stateEmitter.event;
	private readonly exitEmitter = new vscode.EventEmitter<{ reason?: string }>();
	/**
	 * The server process ended without being asked to (it crashed, was killed, or met a broken
	 * message and exited): the extension starts a fresh one and tells the person. The language
	 * client's own restart is off, so views, notifications and the workspace boot are set up again.
	 */
	readonly onDidExitUnexpectedly = this.exitEmitter.event;
	private currentState: DeskState = 'stopped';

	constructor(
		private readonly context: vscode.ExtensionContext,
		readonly output: vscode.LogOutputChannel,
	) {}

	get state(): DeskState {
		return this.currentState;
	}

	async start(options: InitializationOptions): Promise<void> {
		await this.stop();
		this.setState('starting');
		const serverModule = this.context.asAbsolutePath('dist/server.js');
		const serverOptions: ServerOptions = {
			run: { module: serverModule, transport: TransportKind.ipc },
			debug: {
				module: serverModule,
				transport: TransportKind.ipc,
				options: { execArgv: ['--nolazy', '--inspect=6011'] },
			},
		};
		const clientOptions: LanguageClientOptions = {
			documentSelector: [],
			outputChannel: this.output,
			initializationOptions: options,
			// Errors are shown once by our own handlers, with "Open Log"; the client must not pop its own.
			revealOutputChannelOn: RevealOutputChannelOn.Never,
			errorHandler: {
				error: (_error, _message, count) => ({
					action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
					handled: true,
				}),
				closed: () => {
					if (this.client === client && this.currentState !== 'stopped') {
						this.client = undefined;
						this.setState('error');
						this.exitEmitter.fire(protocolError !== undefined ? { reason: protocolError } : {});
					}
					return { action: CloseAction.DoNotRestart, handled: true };
				},
			},
		};
		let protocolError: string | undefined;
		const client = new LanguageClient('agentDesk', 'Agent Desk', serverOptions, clientOptions);
		this.client = client;
		// Sent by a server just before it exits on a broken message: the reason the person is told.
		onDeclared(client, ProtocolError, (params) => void (protocolError = params.message));
		client.onDidChangeState((event) => {
			if (event.newState === State.Stopped && this.client === client && this.currentState !== 'stopped') {
				this.setState('error');
			}
		});
		try {
			await client.start();
			this.setState('ready');
		} catch (error) {
			this.setState('error');
			throw new DeskRequestError(`The desk server did not start: ${(error as Error).message}`);
		}
	}

	async stop(): Promise<void> {
		const client = this.client;
		this.client = undefined;
		if (client) {
			this.setState('stopped');
			await client.stop().catch(() => undefined);
		}
	}

	markFailed(): void {
		this.setState('error');
	}

	/** Sends a declared request; a refusal of the desk arrives as DeskRequestError with its code. */
	async request<P, R>(definition: RequestDefinition<P, R>, params: P, token?: vscode.CancellationToken): Promise<R> {
		const client = this.client;
		if (!client) {
			throw new DeskRequestError('The desk server is not running.');
		}
		try {
			// Passing an undefined token would make it a second positional parameter.
			return (await (token
				? client.sendRequest(definition.method, params, token)
				: client.sendRequest(definition.method, params))) as R;
		} catch (error) {
			if (error instanceof ResponseError) {
				const data = error.code === deskErrorCode ? (error.data as DeskErrorJson | undefined) : undefined;
				throw new DeskRequestError(error.message, data);
			}
			throw error;
		}
	}

	/**
	 * Sends a request that creates something (Go, a new asset, a link, a note, an attachment, a
	 * snapshot) under a fresh request id, one per action of the person. When the answer is lost with
	 * the server (it crashed and the language client started it again), the request is sent once more
	 * under the same id once the server runs again: an action that took effect is answered with its
	 * first result, never done twice.
	 */
	async requestOnce<P extends { requestId?: string }, R>(
		definition: RequestDefinition<P, R>,
		params: P,
		token?: vscode.CancellationToken,
	): Promise<R> {
		const sent = { ...params, requestId: params.requestId ?? randomUUID() };
		try {
			return await this.request(definition, sent, token);
		} catch (error) {
			if (error instanceof DeskRequestError || token?.isCancellationRequested || !(await this.runningAgain())) {
				throw error;
			}
			this.output.info(
				`${definition.method}: the answer was lost with the server; asking again under request id ${sent.requestId}`,
			);
			return this.request(definition, sent, token);
		}
	}

	/** Waits (at most 20 s) for the language client to run its server again after losing it. */
	private async runningAgain(timeoutMs = 20_000): Promise<boolean> {
		const client = this.client;
		if (!client || client.state === State.Running) {
			return client !== undefined;
		}
		return new Promise((resolve) => {
			const done = (running: boolean) => {
				clearTimeout(timer);
				subscription.dispose();
				resolve(running);
			};
			const timer = setTimeout(() => done(false), timeoutMs);
			const subscription = client.onDidChangeState((event) => {
				if (event.newState === State.Running) {
					done(true);
				}
			});
		});
	}

	/** Registers the handler of every notification the server sends (see {@link DeskNotificationHandlers}). */
	onNotifications(handlers: DeskNotificationHandlers): vscode.Disposable[] {
		const client = this.client;
		if (!client) {
			throw new DeskRequestError('The desk server is not running.');
		}
		return Object.entries(deskNotifications)
			.filter(([name]) => name !== 'ProtocolError')
			.map(([name, definition]) =>
				onDeclared(client, definition, handlers[name as keyof DeskNotificationHandlers] as (params: unknown) => void),
			);
	}

	dispose(): void {
		void this.stop();
		this.stateEmitter.dispose();
		this.exitEmitter.dispose();
	}

	private setState(state: DeskState): void {
		if (this.currentState !== state) {
			this.currentState = state;
			this.stateEmitter.fire(state);
		}
	}
}
