import {
	CancellationToken,
	ErrorCodes,
	LSPErrorCodes,
	ResponseError,
	type Connection,
	type InitializeResult,
} from 'vscode-languageserver/node';
import { Desk, type StoreRecovery } from '../desk';
import type { RecoverChoice } from '../store/damage';
import { DeskError, describeError, type DeskErrorJson } from '../core/errors';
import { leveledLogger, type Logger, type LogLevel } from '../core/logger';
import { AssetsDidChange, AttachmentsDidChange, deskErrorCode, deskRequests, HistoryRewritten, initializationOptions, RunDidFinish, RunsDidChange, SnapshotProgress, SuggestIndexDidChange, type ServerStatus } from '../protocol/protocol';
import { runFinishedParams } from '../runs/runViews';
import { createHandlers, type DeskHandlers } from './handlers';

export const serverVersion = '0.1.0';

/**
 * Wires the desk to a JSON-RPC connection: checks params against the protocol's schemas, maps
 * DeskErrors to RequestFailed with the error as data, and keeps serving whatever a request throws.
 */
export function startDeskServer(connection: Connection): void {
	let logLevel: LogLevel = 'info';
	// Each level reaches the client as window/logMessage of its type, which the output channel shows as such.
	const sinks: Record<LogLevel, (message: string) => void> = {
		error: (m) => connection.console.error(m),
		warn: (m) => connection.console.warn(m),
		info: (m) => connection.console.info(m),
		debug: (m) => connection.console.log(m),
	};
	const logger = leveledLogger(() => logLevel, (level, message) => sinks[level](message));

	let deskPromise: Promise<Desk> | undefined;
	let openedDesk: Desk | undefined;
	let libraryDir = '';
	let failure: DeskErrorJson | undefined;

	// A run changes many times a second while an agent works; the views need at most a few refreshes.
	const runChanges = new RunChangeBatcher((project, run) => void connection.sendNotification(RunsDidChange.method, { project, ...(run ? { run } : {}) }));
	const context = {
		desk(): Promise<Desk> {
			if (!deskPromise) {
				return Promise.reject(new DeskError('desk.notReady', 'The desk server has not been initialized yet.'));
			}
			return deskPromise;
		},
		async status(): Promise<ServerStatus> {
			// Answer once the library has opened or failed to, so "ready" is never premature.
			await deskPromise?.catch(() => undefined);
			return {
				state: failure ? 'error' : 'ready',
				libraryDir,
				...(failure ? { error: failure } : {}),
				serverVersion,
				pid: process.pid,
			};
		},
		async recoverLibrary(choice: RecoverChoice): Promise<StoreRecovery> {
			await deskPromise?.catch(() => undefined);
			if (!deskPromise) {
				throw new DeskError('desk.notReady', 'The desk server has not been initialized yet.');
			}
			if (openedDesk) {
				throw new DeskError('store.notDamaged', `${libraryDir}/library.db is open and in use; there is nothing to recover.`, { file: `${libraryDir}/library.db` });
			}
			const result = await Desk.recoverLibrary(libraryDir, choice, logger);
			// The library is usable again: open it as initialize did, so the window can go on.
			openLibrary();
			await deskPromise.catch(() => undefined);
			return result;
		},
		notifyAssetsChanged(reason: string) {
			void connection.sendNotification(AssetsDidChange.method, { reason });
		},
		notifyAttachmentsChanged(project: string, task: string) {
			void connection.sendNotification(AttachmentsDidChange.method, { project, task });
		},
		notifyRunsChanged(project: string) {
			void connection.sendNotification(RunsDidChange.method, { project });
		},
		notifySnapshotProgress(id: string, files: number) {
			void connection.sendNotification(SnapshotProgress.method, { id, files });
		},
	};

	connection.onInitialize((params): InitializeResult => {
		const checked = initializationOptions.check(params.initializationOptions, 'initializationOptions');
		if (!checked.ok) {
			throw new ResponseError(ErrorCodes.InvalidParams, checked.problem);
		}
		libraryDir = checked.value.libraryDir;
		logLevel = (checked.value.logLevel as LogLevel | undefined) ?? 'info';
		openLibrary();
		return { capabilities: {}, serverInfo: { name: 'agent-desk', version: serverVersion } };
	});

	function openLibrary(): void {
		failure = undefined;
		deskPromise = Desk.open({ libraryDir, logger });
		deskPromise.then(
			(desk) => {
				openedDesk = desk;
				desk.onLibraryChanged = (reason) => context.notifyAssetsChanged(reason);
				desk.onRunChanged = (top, runId) => runChanges.push(projectOf(desk, top), runId);
				desk.onAttachmentsChanged = (top, task) => context.notifyAttachmentsChanged(projectOf(desk, top), task);
				desk.onSuggestIndexProgress = (top, progress) => void connection.sendNotification(SuggestIndexDidChange.method, { project: projectOf(desk, top), ...progress });
				desk.onRunFinished = (top, runId, status) => {
					const project = projectOf(desk, top);
					runChanges.flush();
					void desk.projectAi(top).then((ai) => connection.sendNotification(RunDidFinish.method, runFinishedParams(ai, project, runId, status)));
				};
				desk.library.onHistoryRewritten = (rewrite) => void connection.sendNotification(HistoryRewritten.method, rewrite);
				desk.packLooseBlobsWhenIdle();
				logger.info(`desk ready: library ${libraryDir}`);
			},
			(error: unknown) => {
				failure = toErrorJson(error);
				logger.error(`the desk could not open its library: ${describeError(error)}`);
			},
		);
	}

	connection.onShutdown(async () => {
		// A run in progress is stopped and failed with the reason, never left running unwatched.
		await openedDesk?.stopRuns('the desk was shut down (the window closed or reloaded)');
		openedDesk?.close();
		openedDesk = undefined;
	});

	registerHandlers(connection, createHandlers(context), logger);
	connection.listen();
}

function registerHandlers(connection: Connection, handlers: DeskHandlers, logger: Logger): void {
	for (const [name, definition] of Object.entries(deskRequests) as Array<[keyof DeskHandlers, (typeof deskRequests)[keyof DeskHandlers]]>) {
		const handler = handlers[name] as (params: unknown, signal: AbortSignal) => Promise<unknown>;
		connection.onRequest(definition.method, async (params: unknown, token: CancellationToken) => {
			const checked = definition.params.check(params ?? {}, 'params');
			if (!checked.ok) {
				throw new ResponseError(ErrorCodes.InvalidParams, `${definition.method}: ${checked.problem}`);
			}
			const abort = new AbortController();
			const subscription = token.onCancellationRequested(() => abort.abort());
			try {
				return await handler(checked.value, abort.signal);
			} catch (error) {
				if (abort.signal.aborted) {
					throw new ResponseError(LSPErrorCodes.RequestCancelled, `${definition.method} was cancelled`);
				}
				if (error instanceof DeskError) {
					logger.warn(`${definition.method}: ${describeError(error)}`);
					throw new ResponseError(deskErrorCode, error.message, error.toJSON());
				}
				logger.error(`${definition.method} failed: ${(error as Error).stack ?? describeError(error)}`);
				throw new ResponseError(ErrorCodes.InternalError, `${definition.method} failed: ${describeError(error)}`);
			} finally {
				subscription.dispose();
			}
		});
	}
}

function toErrorJson(error: unknown): DeskErrorJson {
	if (error instanceof DeskError) {
		return error.toJSON();
	}
	return { code: 'store.io', message: describeError(error), data: {} };
}

function projectOf(desk: Desk, top: string): string {
	return desk.library.listProjects().find((p) => p.path === top)?.name ?? top;
}

/** Coalesces run changes per project: the first is sent at once, the rest at most every 250 ms. */
class RunChangeBatcher {
	private readonly pending = new Map<string, Set<string>>();
	private timer: NodeJS.Timeout | undefined;

	constructor(private readonly send: (project: string, run: string | undefined) => void) {}

	push(project: string, run: string): void {
		if (!this.timer) {
			this.send(project, run);
			this.timer = setTimeout(() => this.flush(), 250);
			return;
		}
		let runs = this.pending.get(project);
		if (!runs) {
			runs = new Set();
			this.pending.set(project, runs);
		}
		runs.add(run);
	}

	flush(): void {
		if (this.timer) {
			clearTimeout(this.timer);
			this.timer = undefined;
		}
		for (const [project, runs] of this.pending) {
			this.send(project, runs.size === 1 ? [...runs][0] : undefined);
		}
		this.pending.clear();
	}
}
