/**
 * One desk operation, declared once (glossary: Operation): its name, its params' schema (the type is
 * inferred from it), who may call it, whether it changes anything, the surfaces that serve it, and
 * the function that does it on the domain core. The JSON-RPC handlers, the `desk` subcommands and the
 * MCP tools are thin adapters over this table; test/unit/operations/surfaces.test.ts fails when an
 * operation is missing from a surface it declares, or a surface serves one it does not.
 */
import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import { clientRequest, wasReplayed, type ClientRequest } from '../store/clientRequests';
import type { RequestDefinition } from '../protocol/protocol';
import type { Schema } from '../protocol/schema';
import type { Actor, CallerKind } from './actor';

/** What an operation tells the windows when it changed something; each is a notification of the protocol. */
export interface DeskEvents {
	assetsChanged(reason: string): void;
	snapshotProgress(asset: string, files: number): void;
	runsChanged(project: string, run?: string): void;
	attachmentsChanged(project: string, task: string): void;
	/** The project's lineage changed (a branch started, a root was listed): `desk/lineage/didChange`. */
	lineageChanged(project: string, node?: string): void;
}

/** Events nobody listens to: the CLI's (the windows see the store change on their next read). */
export const noEvents: DeskEvents = {
	assetsChanged: () => undefined,
	snapshotProgress: () => undefined,
	runsChanged: () => undefined,
	attachmentsChanged: () => undefined,
	lineageChanged: () => undefined,
};

/** One call of an operation: the desk it acts on, who calls, and where to tell what changed. */
export interface OperationCall {
	readonly desk: Desk;
	readonly actor: Actor;
	readonly events: DeskEvents;
	readonly signal: AbortSignal;
	/**
	 * The caller's id of this action, when it names one: JSON-RPC's `requestId` param, `desk
	 * --request-id`, a desk tool call's receipt key. A mutating operation runs once per id.
	 */
	readonly requestId?: string;
	/**
	 * A desk tool call's `request_id` as the agent gave it (the receipt key above is made of it and the
	 * run): an operation whose receipts belong to the run's Task rather than the run (a branch, which a
	 * Retry of its starter asks for again) keys on it.
	 */
	readonly toolRequestId?: string;
}

/**
 * What `run` gets: the call, and for a mutating operation named by an id, its client request (method
 * the operation's name, hash over its checked params). `run` answers it with `answerOnce` on the
 * ledger its effect is written to (the library's or the project's) and records the answer with
 * `recordAnswer` in the effect's own transaction, so a repeat returns the first answer and changes
 * nothing (glossary: Desk tools).
 */
export interface RunningCall extends OperationCall {
	readonly request?: ClientRequest;
}

/**
 * The MCP face of an operation: the tool's name (`asset_search`), its title and description (what an
 * agent reads to choose it), and the params an agent inside a run does not give because its run fixes
 * them (`project`: the run's project).
 */
export interface McpFace<P> {
	readonly tool: string;
	readonly title: string;
	readonly description: string;
	readonly boundByRun?: ReadonlyArray<keyof P & string>;
}

export interface Operation<P = never, R = unknown> {
	/** `area.verb`: `asset.search`, `run.decide`. */
	readonly name: string;
	/** One line: what it does, for the CLI's usage and the docs. */
	readonly summary: string;
	readonly params: Schema<P>;
	/** Who may call it; any other caller is refused with `operation.notAllowed` before it runs. */
	readonly callers: readonly CallerKind[];
	/** True when it changes something (MCP `readOnlyHint` is its negation). */
	readonly mutates: boolean;
	/** True when calling it again with the same params changes nothing more (MCP `idempotentHint`). */
	readonly idempotent: boolean;
	/**
	 * True when it replaces or overwrites what was there (a folder's files, an asset's tags or about)
	 * rather than only adding (MCP `destructiveHint`, which clients read to ask before a call).
	 */
	readonly destructive?: boolean;
	readonly surfaces: {
		/** The JSON-RPC method; its params schema is this operation's. */
		readonly rpc?: RequestDefinition<P, R>;
		/** The `desk` subcommand (`asset search`). */
		readonly cli?: string;
		readonly mcp?: McpFace<P>;
	};
	run(call: RunningCall, params: P): Promise<R>;
}

/** Declares an operation; the params type comes from its schema, the result from `run`. */
export function operation<P, R>(definition: Operation<P, R>): Operation<P, R> {
	return definition;
}

/**
 * Runs `op` for the call's actor: refuses a caller it is not declared for (`operation.notAllowed`)
 * and params its schema refuses (`desk.badParams`, naming the field) before anything runs.
 * Every face calls operations through here, never `op.run` directly.
 */
export async function invokeOperation<P, R>(op: Operation<P, R>, call: OperationCall, params: unknown): Promise<R> {
	return (await invokeOperationAnswered(op, call, params)).result;
}

/**
 * {@link invokeOperation}, saying too whether the answer is an earlier one (`replayed`: the call's
 * request id was answered before, so nothing was done now), which a desk tool's result reports.
 */
export async function invokeOperationAnswered<P, R>(
	op: Operation<P, R>,
	call: OperationCall,
	params: unknown,
): Promise<{ result: R; replayed: boolean }> {
	if (!op.callers.includes(call.actor.kind)) {
		throw new DeskError(
			'operation.notAllowed',
			`${callerWords[call.actor.kind]} may not ${op.summary.charAt(0).toLowerCase()}${op.summary.slice(1)}`,
			{
				operation: op.name,
				caller: call.actor.kind,
			},
		);
	}
	const checked = op.params.check(params ?? {}, 'params');
	if (!checked.ok) {
		throw new DeskError(
			checked.kind === 'relativePath'
				? 'desk.relativePath'
				: checked.kind === 'badText'
					? 'desk.badText'
					: 'desk.badParams',
			`${checked.field}: ${checked.problem}`,
			{ field: checked.field },
		);
	}
	const requestId =
		call.requestId ??
		(typeof (checked.value as { requestId?: unknown }).requestId === 'string'
			? (checked.value as { requestId: string }).requestId
			: undefined);
	const request = op.mutates ? clientRequest(op.name, requestId, checked.value as object) : undefined;
	const result = await op.run(request ? { ...call, request } : call, checked.value);
	return { result, replayed: wasReplayed(request) };
}

const callerWords: Record<CallerKind, string> = {
	editor: 'The editor',
	cli: 'The command line',
	agent: 'An agent inside a run',
};
