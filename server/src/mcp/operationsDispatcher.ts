/**
 * The desk tools dispatched to the operations table (glossary: Desk tools), for one desk and one
 * actor: `desk mcp` for the person, the run's socket for its agent. A call becomes the operation's
 * call through `invokeOperation` (so the caller check, the params check and the receipt are the
 * table's), with the params the run fixes filled in from the agent's run and the receipt key chosen
 * here.
 */
import { canonicalJson, sha256Hex } from '../ai/canonical';
import { DeskError } from '../core/errors';
import type { Actor } from '../operations/actor';
import { invokeOperationAnswered, noEvents, type DeskEvents, type OperationCall } from '../operations/operation';
import { catalogueFor, requestIdArg, type CatalogueEntry, type RunBoundParam } from './catalogue';
import type { ToolCallMeta, ToolDispatcher, ToolOutcome } from './dispatcher';

/** One tool call as it happened: what the sandbox side records as the run's ToolInvocation. */
export interface ToolCallRecord {
	readonly tool: string;
	/** The operation it called (`asset.search`); undefined for a tool that does not exist. */
	readonly operation?: string;
	/** The arguments as the caller sent them. */
	readonly args: unknown;
	/** The agent's own id of the call, when its harness sent one. */
	readonly harnessCallId?: string;
	/** The receipt key the call ran under (mutating tools only). */
	readonly key?: string;
	/** What the caller was answered, or the message of an error that was not the desk's (thrown on to the caller). */
	readonly outcome: ToolOutcome | { ok: false; unexpected: string };
}

export interface OperationsDispatcherOptions {
	readonly desk: OperationCall['desk'];
	readonly actor: Actor;
	/** Where the operations tell what changed; none for `desk mcp` (the windows see the store change). */
	readonly events?: DeskEvents;
	readonly signal?: AbortSignal;
	/** Tools this caller is not even shown (a branch's run: `remember`); calling one is `operation.unknownTool`. */
	readonly omitTools?: readonly string[];
	/** Called once a call, after it is answered (or failed unexpectedly), before the answer goes out. */
	readonly onCall?: (record: ToolCallRecord) => void | Promise<void>;
}

/** A {@link ToolDispatcher} over the operations table for `options.actor`. */
export function operationsDispatcher(options: OperationsDispatcherOptions): ToolDispatcher {
	const entries = new Map<string, CatalogueEntry>(
		catalogueFor(options.actor.kind)
			.filter((e) => !(options.omitTools ?? []).includes(e.tool.name))
			.map((e) => [e.tool.name, e]),
	);
	const signal = options.signal ?? new AbortController().signal;
	return {
		tools: () => Promise.resolve([...entries.values()].map((e) => e.tool)),
		async call(name, args, meta) {
			const entry = entries.get(name);
			let key: string | undefined;
			let outcome: ToolCallRecord['outcome'];
			try {
				if (!entry) {
					throw new DeskError(
						'operation.unknownTool',
						`There is no desk tool ${JSON.stringify(name.slice(0, 80))}; tools/list names the tools there are.`,
						{ tool: name.slice(0, 80) },
					);
				}
				const prepared = prepare(entry, options.actor, args, meta);
				key = prepared.key;
				const call: OperationCall = {
					desk: options.desk,
					actor: options.actor,
					events: options.events ?? noEvents,
					signal: meta.signal ? AbortSignal.any([signal, meta.signal]) : signal,
					...(key === undefined ? {} : { requestId: key }),
					...(prepared.toolRequestId === undefined ? {} : { toolRequestId: prepared.toolRequestId }),
				};
				const answered = await invokeOperationAnswered(entry.operation, call, prepared.params);
				outcome = { ok: true, result: answered.result, replayed: answered.replayed };
			} catch (error) {
				if (!(error instanceof DeskError)) {
					await record({ unexpected: error instanceof Error ? error.message : String(error) });
					throw error;
				}
				outcome = { ok: false, error: error.toJSON() };
			}
			await record(outcome);
			return outcome;

			async function record(answer: ToolOutcome | { unexpected: string }): Promise<void> {
				await options.onCall?.({
					tool: name,
					...(entry ? { operation: entry.operation.name } : {}),
					args,
					...(meta.harnessCallId === undefined ? {} : { harnessCallId: meta.harnessCallId }),
					...(key === undefined ? {} : { key }),
					outcome: 'unexpected' in answer ? { ok: false, unexpected: answer.unexpected } : answer,
				});
			}
		},
	};
}

/**
 * The operation's params from the tool's args (the run's own params filled in for an agent,
 * `request_id` taken out) and the call's receipt key: the caller's fixed key (a proxy's retry), else
 * the `request_id` arg, else for an agent a hash of its task, the tool and the canonical args, so a
 * call its harness dispatched twice runs once.
 */
function prepare(
	entry: CatalogueEntry,
	actor: Actor,
	args: unknown,
	meta: ToolCallMeta,
): { params: Record<string, unknown>; key?: string; toolRequestId?: string } {
	if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
		throw badArgs('params', 'params must be an object');
	}
	const given = (args ?? {}) as Record<string, unknown>;
	const bound = actor.kind === 'agent' ? (entry.operation.surfaces.mcp?.boundByRun ?? []) : [];
	// Only the tool's own arguments: what its schema leaves out (the run's params, the operation's own requestId) is refused as unknown.
	const params = Object.create(null) as Record<string, unknown>;
	for (const [field, value] of Object.entries(given)) {
		if (field === requestIdArg && entry.operation.mutates) {
			continue;
		}
		if (bound.includes(field) || field === 'requestId' || !Object.hasOwn(entry.tool.inputSchema.properties, field)) {
			throw badArgs(`params.${field}`, `params has an unknown field ${JSON.stringify(field.slice(0, 60))}`);
		}
		params[field] = value;
	}
	for (const field of bound) {
		params[field] = boundValue(actor, field);
	}
	if (!entry.operation.mutates) {
		return { params: { ...params } };
	}
	const requestId = given[requestIdArg];
	if (requestId !== undefined && typeof requestId !== 'string') {
		throw badArgs(`params.${requestIdArg}`, `params.${requestIdArg} must be a string`);
	}
	const chosen = meta.key ?? requestId;
	let key: string | undefined;
	if (actor.kind !== 'agent') {
		key = chosen;
	} else if (chosen !== undefined) {
		// An agent's own id names an action of its run only: two runs (a Retry of the same task, another
		// task) that choose the same id do not replay each other's answers.
		key = sha256Hex(`${actor.run}\n${chosen}`);
	} else if (meta.harnessCallId !== undefined) {
		// A call its harness dispatched twice carries the same tool-use id; a deliberate repeat (a
		// snapshot after more changes) is a new tool use and runs again.
		key = sha256Hex(`${actor.task}\n${actor.run}\n${entry.tool.name}\ncall ${meta.harnessCallId}`);
	} else {
		key = sha256Hex(`${actor.task}\n${actor.run}\n${entry.tool.name}\n${canonicalJson(withoutRequestId(given))}`);
	}
	return {
		params: { ...params },
		...(key === undefined ? {} : { key }),
		...(actor.kind === 'agent' && requestId !== undefined ? { toolRequestId: requestId } : {}),
	};
}

/** What a run fixes for its agent's calls (the catalogue allows only these names in `boundByRun`). */
function boundValue(actor: Actor, field: string): string {
	if (actor.kind !== 'agent') {
		throw new Error('only an agent has params bound by its run');
	}
	return actor[field as RunBoundParam];
}

function withoutRequestId(args: Record<string, unknown>): Record<string, unknown> {
	const rest: Record<string, unknown> = {};
	for (const [field, value] of Object.entries(args)) {
		if (field !== requestIdArg) {
			rest[field] = value;
		}
	}
	return rest;
}

function badArgs(field: string, problem: string): DeskError {
	return new DeskError('desk.badParams', `${field}: ${problem}`, { field });
}
