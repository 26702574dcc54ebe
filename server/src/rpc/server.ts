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
import {
	AssetsDidChange,
	AttachmentsDidChange,
	deskErrorCode,
	deskRequests,
	HistoryRewritten,
	initializationOptions,
	ProtocolError,
	protocolErrorExitCode,
	RunDidFinish,
	BoardDidReport,
	RunsDidChange,
	LineageDidChange,
	SnapshotProgress,
	SuggestIndexDidChange,
	MemoryDidChange,
	type NotificationDefinition,
	type ServerStatus,
} from '../protocol/protocol';
import type { Checked } from '../protocol/schema';
import { runFinishedParams } from '../runs/runViews';
import { createHandlers, notifyingEvents, type DeskHandlers } from './handlers';
import { runDeskTools } from '../mcp/runTools';
import { carrierStarter } from '../runs/carrier';
import * as path from 'node:path';
import { personIdentity } from '../operations/identity';
import { resumeOwedMemorizes } from '../operations/memory';

export const serverVersion = '0.1.0';

/** What the process entry needs of a running desk server. */
export interface DeskServer {
	/** True once `initialize` was accepted. */
	readonly initialized: boolean;
	/** True once `shutdown` was received: an end of input after it is a normal exit. */
	readonly shutdownReceived: boolean;
	/**
	 * The input broke its framing: logs the reason, tells the client ({@link ProtocolError}) and
	 * closes the desk (stopping runs). The caller then exits with {@link protocolErrorExitCode}.
	 */
	endOnProtocolError(problem: string): Promise<void>;
}

/**
 * Wires the desk to a JSON-RPC connection: one handler for every declared request takes the raw
 * params, checks them against the protocol's schema (a wrong shape is InvalidParams naming the
 * field), maps DeskErrors to RequestFailed with the error as data, caps whatever it echoes of the
 * input, and keeps serving whatever a request throws.
 */
export function startDeskServer(connection: Connection): DeskServer {
	let logLevel: LogLevel = 'info';
	// Each level reaches the client as window/logMessage of its type, which the output channel shows as such.
	const sinks: Record<LogLevel, (message: string) => void> = {
		error: (m) => connection.console.error(m),
		warn: (m) => connection.console.warn(m),
		info: (m) => connection.console.info(m),
		debug: (m) => connection.console.log(m),
	};
	const logger = leveledLogger(
		() => logLevel,
		(level, message) => sinks[level](message),
	);
	/** Sends a declared notification: the compiler checks its params against the declaration. */
	const notify = <P>(definition: NotificationDefinition<P>, params: NoInfer<P>): Promise<void> =>
		connection.sendNotification(definition.method, params);

	let deskPromise: Promise<Desk> | undefined;
	let openedDesk: Desk | undefined;
	let libraryDir = '';
	let failure: DeskErrorJson | undefined;
	let shutdownReceived = false;

	// A run changes many times a second while an agent works; the views need at most a few refreshes.
	const runChanges = new RunChangeBatcher(
		(project, run) => void notify(RunsDidChange, { project, ...(run ? { run } : {}) }),
	);
	const context = {
		person: personIdentity,
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
				throw new DeskError(
					'store.notDamaged',
					`${libraryDir}/library.db is open and in use; there is nothing to recover.`,
					{ file: `${libraryDir}/library.db` },
				);
			}
			const result = await Desk.recoverLibrary(libraryDir, choice, logger);
			// The library is usable again: open it as initialize did, so the window can go on.
			openLibrary();
			await deskPromise.catch(() => undefined);
			return result;
		},
		notifyAssetsChanged(reason: string) {
			void notify(AssetsDidChange, { reason });
		},
		notifyAttachmentsChanged(project: string, task: string) {
			void notify(AttachmentsDidChange, { project, task });
		},
		notifyRunsChanged(project: string) {
			void notify(RunsDidChange, { project });
		},
		notifyLineageChanged(project: string, node?: string) {
			void notify(LineageDidChange, { project, ...(node ? { node } : {}) });
		},
		notifySnapshotProgress(id: string, files: number) {
			void notify(SnapshotProgress, { id, files });
		},
	};

	connection.onInitialize((params): InitializeResult => {
		if (deskPromise) {
			// A second initialize would open a second library beside the first, which nobody closes.
			throw refusal(
				new DeskError(
					'desk.alreadyInitialized',
					`The desk server is already initialized with the library ${capEcho(libraryDir)}; start a new server for another.`,
					{ libraryDir: capEcho(libraryDir) },
				),
			);
		}
		const checked = initializationOptions.check(
			(params as { initializationOptions?: unknown } | null | undefined)?.initializationOptions,
			'initializationOptions',
		);
		if (!checked.ok) {
			throw invalidParams('initialize', checked);
		}
		libraryDir = checked.value.libraryDir;
		logLevel = checked.value.logLevel ?? 'info';
		openLibrary();
		return { capabilities: {}, serverInfo: { name: 'agent-desk', version: serverVersion } };
	});

	function openLibrary(): void {
		failure = undefined;
		deskPromise = Desk.open({ libraryDir, logger });
		deskPromise.then(
			(desk) => {
				openedDesk = desk;
				desk.carriesQueuedBranches = true;
				// A window reload ends this process: each run is carried by a process of its own, started from
				// the `desk` bundle beside this one (dist/), and followed here (glossary: Carrier).
				desk.carriedBy = 'window';
				desk.runCarrier = carrierStarter(path.join(__dirname, 'desk.js'), libraryDir);
				desk.onLibraryChanged = (reason) => context.notifyAssetsChanged(reason);
				desk.onRunChanged = (top, runId) => runChanges.push(projectOf(desk, top), runId);
				desk.onAttachmentsChanged = (top, task) => context.notifyAttachmentsChanged(projectOf(desk, top), task);
				desk.onLineageChanged = (top, node) => context.notifyLineageChanged(projectOf(desk, top), node);
				// The desk tools of this server's runs, started from the bundles beside this one (dist/).
				desk.deskTools = runDeskTools({
					desk,
					events: notifyingEvents(context),
					bundleDir: __dirname,
					onError: (error) => logger.warn(`desk tools: ${error.message}`),
				});
				desk.onMemoryChanged = (top, root) => void notify(MemoryDidChange, { project: projectOf(desk, top), root });
				desk.resumeMemorizes = (top) =>
					void resumeOwedMemorizes(desk, top, (message) => logger.warn(`${top}: ${message}`)).catch((error: unknown) =>
						logger.error(`${top}: owed memorizes not resumed: ${describeError(error)}`),
					);
				desk.onSuggestIndexProgress = (top, progress) =>
					void notify(SuggestIndexDidChange, { project: projectOf(desk, top), ...progress });
				desk.onRunFinished = (top, runId, status) => {
					const project = projectOf(desk, top);
					runChanges.flush();
					void desk.projectAi(top).then((ai) => notify(RunDidFinish, runFinishedParams(ai, project, runId, status)));
				};
				desk.onBoardReport = (top, report) => {
					runChanges.flush();
					void notify(BoardDidReport, {
						project: projectOf(desk, top),
						// The board the report is on: the starter's, or for a person's branch the root's tally.
						starter_node: report.starter_node,
						...(report.starter_run !== undefined ? { starter_run: report.starter_run } : {}),
						branch: report.branch,
						report: report.report,
						title: report.title,
						outcome: report.outcome,
					});
				};
				// The command line or another window wrote the project: the views look again.
				desk.onProjectChangedOutside = (top) => {
					const project = projectOf(desk, top);
					context.notifyRunsChanged(project);
					context.notifyLineageChanged(project);
				};
				desk.library.onHistoryRewritten = (rewrite) => void notify(HistoryRewritten, rewrite);
				desk.packLooseBlobsWhenIdle();
				logger.info(`desk ready: library ${libraryDir}`);
			},
			(error: unknown) => {
				failure = toErrorJson(error);
				logger.error(`the desk could not open its library: ${describeError(error)}`);
			},
		);
	}

	const closeDesk = async (reason: string) => {
		// A run in progress is stopped and failed with the reason, never left running unwatched.
		const desk = openedDesk;
		openedDesk = undefined;
		await desk?.stopRuns(reason);
		desk?.close();
	};

	connection.onShutdown(async () => {
		shutdownReceived = true;
		await closeDesk('the desk was shut down (the window closed or reloaded)');
	});

	registerHandlers(connection, createHandlers(context), logger, () => deskPromise !== undefined);
	connection.listen();
	return {
		get initialized() {
			return deskPromise !== undefined;
		},
		get shutdownReceived() {
			return shutdownReceived;
		},
		async endOnProtocolError(problem: string) {
			const message = `protocol error: ${capEcho(problem)}; the server exits (code ${protocolErrorExitCode}) so that its client starts a fresh one`;
			logger.error(message);
			await notify(ProtocolError, { message, exitCode: protocolErrorExitCode }).catch(() => undefined);
			await closeDesk('the desk server met a broken message on its input and stopped').catch((error: unknown) =>
				logger.error(`closing the desk failed: ${describeError(error)}`),
			);
		},
	};
}

/** The longest piece of input (a method name, a value) that an error or a log line repeats. */
export const maxEcho = 300;

/** `text` cut to {@link maxEcho} characters (never inside a surrogate pair), saying how long it was. */
export function capEcho(text: string, max = maxEcho): string {
	if (text.length <= max) {
		return text;
	}
	const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max;
	return `${text.slice(0, end)}… (${text.length} characters)`;
}

/** A copy of error data with every string capped and nesting cut, so no error carries the input back in full. */
function capData(value: unknown, depth = 0): unknown {
	if (typeof value === 'string') {
		return capEcho(value);
	}
	if (value === null || typeof value !== 'object') {
		return value;
	}
	if (depth >= 4) {
		return '…';
	}
	if (Array.isArray(value)) {
		return [
			...value.slice(0, 50).map((v) => capData(v, depth + 1)),
			...(value.length > 50 ? [`… (${value.length} items)`] : []),
		];
	}
	const out: Record<string, unknown> = {};
	for (const [key, v] of Object.entries(value).slice(0, 50)) {
		out[capEcho(key, 60)] = capData(v, depth + 1);
	}
	return out;
}

/** RequestFailed with the DeskError as data, message and data capped. */
function refusal(error: DeskError): ResponseError<DeskErrorJson> {
	const json = error.toJSON();
	const message = capEcho(json.message, 600);
	return new ResponseError(deskErrorCode, message, {
		code: json.code,
		message,
		data: capData(json.data) as Record<string, unknown>,
	});
}

const paramsCodes = { relativePath: 'desk.relativePath', badText: 'desk.badText' } as const;

/** InvalidParams naming the field, with a DeskErrorJson as data (`desk.badParams`, `desk.relativePath`, `desk.badText`). */
function invalidParams(
	method: string,
	checked: Extract<Checked<unknown>, { ok: false }>,
): ResponseError<DeskErrorJson> {
	const message = capEcho(`${method}: ${checked.problem}`, 600);
	return new ResponseError(ErrorCodes.InvalidParams, message, {
		code: checked.kind ? paramsCodes[checked.kind] : 'desk.badParams',
		message,
		data: { method: capEcho(method), field: capEcho(checked.field) },
	});
}

/**
 * One handler for every request that is not `initialize` or `shutdown`: it takes the raw params (so
 * no param shape reaches vscode-jsonrpc's spreading of positional params or a handler's destructuring),
 * refuses a request before `initialize`, an unknown method, and params that fail the method's schema.
 */
function registerHandlers(
	connection: Connection,
	handlers: DeskHandlers,
	logger: Logger,
	initialized: () => boolean,
): void {
	const methods = new Map<
		string,
		{
			definition: (typeof deskRequests)[keyof DeskHandlers];
			handler: (params: unknown, signal: AbortSignal) => Promise<unknown>;
		}
	>();
	for (const [name, definition] of Object.entries(deskRequests) as Array<
		[keyof DeskHandlers, (typeof deskRequests)[keyof DeskHandlers]]
	>) {
		methods.set(definition.method, {
			definition,
			handler: handlers[name] as (params: unknown, signal: AbortSignal) => Promise<unknown>,
		});
	}
	connection.onRequest(async (method: string, params: unknown, token: CancellationToken) => {
		const entry = typeof method === 'string' ? methods.get(method) : undefined;
		if (!entry) {
			throw new ResponseError(ErrorCodes.MethodNotFound, `Unhandled method ${capEcho(String(method))}`);
		}
		const { definition, handler } = entry;
		if (!initialized()) {
			throw refusal(
				new DeskError(
					'desk.notReady',
					`${definition.method}: the desk server has not been initialized yet; send initialize first.`,
					{ method: definition.method },
				),
			);
		}
		if (Array.isArray(params)) {
			throw invalidParams(definition.method, {
				ok: false,
				field: 'params',
				problem: 'params must be an object of named fields, not a list of positional ones',
			});
		}
		const checked = definition.params.check(params === undefined ? {} : params, 'params');
		if (!checked.ok) {
			throw invalidParams(definition.method, checked);
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
				logger.warn(`${definition.method}: ${capEcho(describeError(error), 1000)}`);
				throw refusal(error);
			}
			logger.error(`${definition.method} failed: ${(error as Error).stack ?? describeError(error)}`);
			throw new ResponseError(
				ErrorCodes.InternalError,
				capEcho(`${definition.method} failed: ${describeError(error)}`, 1000),
			);
		} finally {
			subscription.dispose();
		}
	});
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
