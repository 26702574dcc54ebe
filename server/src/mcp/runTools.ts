/**
 * The desk tools of the runs this process carries (glossary: Desk tools): the implementation of the
 * runs' `deskTools` port. For each agent process it makes the dispatcher over the operations table
 * with the agent as actor (its run's project, task, run and folders), hosts it on a socket of its
 * own, and tells the run each call, which records it as a ToolInvocation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { actorRefOf, type Actor } from '../operations/actor';
import type { DeskEvents, OperationCall } from '../operations/operation';
import type { DeskToolCall, DeskToolsHost, DeskToolsRequest } from '../runs/ports';
import { catalogueFor } from './catalogue';
import { operationsDispatcher, type ToolCallRecord } from './operationsDispatcher';
import { hostToolSocket, sweepStaleToolSockets } from './socketHost';

export interface RunToolsOptions {
	readonly desk: OperationCall['desk'];
	readonly events: DeskEvents;
	/** The folder of the bundles `desk-mcp.js` and `desk-tool.js` (the running desk's own `dist/`). */
	readonly bundleDir: string;
	readonly onError?: (error: Error) => void;
}

/** The port's implementation; one that hosts nothing when the bundles are not there (a desk run from its sources). */
export function runDeskTools(
	options: RunToolsOptions,
): (project: string, request: DeskToolsRequest) => Promise<DeskToolsHost> | undefined {
	const proxy = path.join(options.bundleDir, 'desk-mcp.js');
	const toolCli = path.join(options.bundleDir, 'desk-tool.js');
	if (!fs.existsSync(proxy) || !fs.existsSync(toolCli)) {
		return () => undefined;
	}
	let swept = false;
	return async (project, request) => {
		if (!swept) {
			// The sockets of a desk that was killed with its runs are of no use to anyone.
			swept = true;
			sweepStaleToolSockets();
		}
		// The token is known once the socket is hosted, after the actor is made; the actor reads this array.
		const secrets = [...request.secrets];
		const actor: Actor = {
			kind: 'agent',
			agent: request.agent,
			project,
			task: request.task,
			run: request.run,
			workFolder: request.workFolder,
			outbox: request.outbox,
			readOnlyInside: request.readOnlyInside,
			hiddenInside: request.hiddenInside,
			secrets,
		};
		const stop = new AbortController();
		// Only @ultimate remembers: a branch's run is not shown the tool (glossary: Project memory).
		const top = options.desk.library.listProjects().find((p) => p.name === project)?.path;
		const branch = top !== undefined && top !== '' && (await options.desk.isBranchTask(top, request.task));
		// A branch as deep as the lineage allows starts none: it is not shown `branch` either (glossary: Lineage).
		const deepest =
			top !== undefined && top !== '' && (await options.desk.branchToolWithheld(top, request.task, request.run));
		// A branch is shown only the tools its fork granted: its starter's or fewer (glossary: Lineage).
		const granted =
			top !== undefined && top !== '' ? (await options.desk.lineageNodeOf(top, request.task))?.config.tools : undefined;
		const withheld = [
			...(branch ? ['remember'] : []),
			...(deepest ? ['branch'] : []),
			...(granted
				? catalogueFor('agent')
						.map((e) => e.tool.name)
						.filter((tool) => !granted.includes(tool))
				: []),
		];
		const dispatcher = operationsDispatcher({
			desk: options.desk,
			actor,
			...(withheld.length > 0 ? { omitTools: withheld } : {}),
			events: options.events,
			signal: stop.signal,
			onCall: (record) => request.called(toolCall(record, actor)),
		});
		const socket = await hostToolSocket(dispatcher, options.onError ? { onError: options.onError } : {});
		// A file the agent attaches that holds the token has it scrubbed, as its transcript does.
		secrets.push(socket.token);
		return {
			ipcDir: socket.ipcDir,
			token: socket.token,
			proxy,
			toolCli,
			// Calls in progress are answered before the socket closes; only then is their signal aborted.
			close: () => socket.close().finally(() => stop.abort()),
		};
	};
}

function toolCall(record: ToolCallRecord, actor: Actor): DeskToolCall {
	return {
		tool: record.tool,
		args: record.args,
		...(record.harnessCallId === undefined ? {} : { harnessCallId: record.harnessCallId }),
		ok: record.outcome.ok,
		summary: summaryOf(record.outcome),
		createdBy: actorRefOf(actor),
	};
}

/** One line: a list's length, else the result's JSON cut short; a refusal's code and message. */
/**
 * One line a person reads on the run page: what the call did, in words where its result has a shape
 * the desk knows (hits, an asset, a version, an attachment), else its JSON, cut to 300 characters.
 */
export function summaryOf(outcome: ToolCallRecord['outcome']): string {
	if ('unexpected' in outcome) {
		return `internal error: ${outcome.unexpected}`;
	}
	if (!outcome.ok) {
		return `${outcome.error.code}: ${outcome.error.message}`;
	}
	const line = `${outcome.replayed ? 'answered before: ' : ''}${resultWords(outcome.result)}`.replace(/\s+/g, ' ');
	return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

function resultWords(result: unknown): string {
	if (Array.isArray(result)) {
		return `${result.length} result${result.length === 1 ? '' : 's'}`;
	}
	const record = (result ?? {}) as Record<string, unknown>;
	const named = (value: unknown): string | undefined => {
		const v = value as { name?: unknown; id?: unknown } | undefined;
		return typeof v?.name === 'string' && typeof v.id === 'string' ? `${v.name} (${v.id})` : undefined;
	};
	if (Array.isArray(record['hits'])) {
		const hits = record['hits'] as Array<{ name?: unknown; score?: unknown }>;
		const some = hits.slice(0, 5).map((h) => `${String(h.name)} ${String(h.score)}`);
		return `${hits.length} hit${hits.length === 1 ? '' : 's'}${some.length ? `: ${some.join(', ')}` : ''}${hits.length > 5 ? ', …' : ''}`;
	}
	const version = record['version'] as { version?: unknown } | undefined;
	if (typeof version?.version === 'number') {
		const of = named(record['asset']);
		return `${record['created'] === false ? 'no change: still' : 'made'} v${version.version}${of ? ` of ${of}` : ''}`;
	}
	const asset = named(record['asset']);
	if (asset) {
		return `${record['created'] === false ? 'already there:' : 'made'} ${asset}`;
	}
	if (
		typeof record['task_id'] === 'string' &&
		typeof record['name'] === 'string' &&
		typeof record['size'] === 'number'
	) {
		return `attached ${record['name']} (${record['size']} B)`;
	}
	return named(result) ?? JSON.stringify(result ?? null) ?? 'null';
}
