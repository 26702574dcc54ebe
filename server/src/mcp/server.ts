/**
 * The desk tools as an MCP server (glossary: Desk tools), over any {@link ToolDispatcher}: `desk mcp`
 * serves the operations table in-process, the sandbox proxy serves its run's socket. Built on the
 * SDK's low-level `Server` so the tools are the dispatcher's as they are (their flat JSON Schemas
 * untouched, no second schema language), served over stdio for both protocol eras by `serveStdio`.
 */
import { Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Readable, Writable } from 'node:stream';
import type { ToolCallMeta, ToolDispatcher, ToolOutcome } from './dispatcher';

declare const DESK_VERSION: string | undefined;

/** The desk's version, as package.json gives it (put in by the build). */
export const deskVersion: string = typeof DESK_VERSION === 'string' ? DESK_VERSION : '0.0.0';

/** Where an agent's harness puts its own id of a tool call in the request's `_meta`, first found wins. */
const harnessCallIdKeys = ['claudecode/toolUseId', 'toolUseId', 'tool_use_id'];

/** One MCP server (name `desk`) whose tools are the dispatcher's. */
export function deskMcpServer(dispatcher: ToolDispatcher): Server {
	const server = new Server({ name: 'desk', version: deskVersion }, { capabilities: { tools: {} } });
	server.setRequestHandler('tools/list', async () => ({
		// The SDK types a schema as JSON values; ours is JSON too, typed by what it holds.
		tools: (await dispatcher.tools()).map((tool): Tool => ({
			...tool,
			inputSchema: tool.inputSchema as unknown as Tool['inputSchema'],
		})),
	}));
	server.setRequestHandler('tools/call', async (request, ctx) => {
		const { name, arguments: args, _meta: meta } = request.params;
		// A call the client cancels ends its wait (`reports` with `wait_s`), and through the proxy the desk's.
		const outcome = await dispatcher.call(name, args ?? {}, { ...callMeta(meta), signal: ctx.mcpReq.signal });
		return server.projectCallToolResult(toolResult(outcome), undefined);
	});
	return server;
}

/** The harness's id of the call, when its `_meta` carries one as a short string. */
function callMeta(meta: Readonly<Record<string, unknown>> | undefined): ToolCallMeta {
	for (const key of harnessCallIdKeys) {
		const value = meta?.[key];
		if (typeof value === 'string' && value.length > 0 && value.length <= 256) {
			return { harnessCallId: value };
		}
	}
	return {};
}

/**
 * The MCP result of an outcome: the result as `structuredContent` (an object: a list is wrapped as
 * `{items}`, any other value as `{value}`) and as JSON text for clients that read only text; a
 * refusal as `isError` with the desk's error code and message in the text and the error itself in
 * `structuredContent.error`, so the agent can correct its call.
 */
export function toolResult(outcome: ToolOutcome): CallToolResult {
	if (!outcome.ok) {
		return {
			isError: true,
			content: [{ type: 'text', text: `${outcome.error.code}: ${outcome.error.message}` }],
			structuredContent: { error: outcome.error },
		};
	}
	const structured = asObject(outcome.result);
	return {
		content: [{ type: 'text', text: JSON.stringify(structured) }],
		structuredContent: structured,
		...(outcome.replayed ? { _meta: { 'desk/replayed': true } } : {}),
	};
}

function asObject(result: unknown): Record<string, unknown> {
	if (Array.isArray(result)) {
		return { items: result };
	}
	if (result !== null && typeof result === 'object') {
		return result as Record<string, unknown>;
	}
	return { value: result ?? null };
}

export interface StdioServing {
	/** Settles when the client closed its end (stdin ended) or {@link StdioServing.close} was called. */
	readonly closed: Promise<void>;
	close(): Promise<void>;
}

/**
 * Serves the dispatcher's tools on a stdio pair (the process's own by default) until the client
 * closes stdin. Nothing but MCP is written to `stdout`; errors of the connection go to `onError`.
 */
export function serveToolsOnStdio(
	dispatcher: ToolDispatcher,
	options: { stdin?: Readable; stdout?: Writable; onError?: (error: Error) => void } = {},
): StdioServing {
	const stdin = options.stdin ?? process.stdin;
	const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
	const handle = serveStdio(() => deskMcpServer(dispatcher), {
		transport,
		...(options.onError ? { onerror: options.onError } : {}),
	});
	const closed = new Promise<void>((resolve) => {
		// The transport closes itself when stdin ends; the end itself is what says the client is gone.
		stdin.once('end', resolve);
		stdin.once('close', resolve);
	});
	return {
		closed,
		close: () => handle.close(),
	};
}
