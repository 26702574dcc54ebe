/**
 * What an MCP face serves (glossary: Desk tools): a catalogue of tools and a way to call one. `desk
 * mcp` dispatches in-process to the operations table for the person; the sandbox proxy
 * (`dist/desk-mcp.js`) dispatches over its run's socket to the desk that carries the run, which
 * dispatches to the same table for the agent. Neither face knows which it is.
 */
import type { DeskErrorJson } from '../core/errors';

/** A JSON Schema object as `tools/list` gives it: flat (no `$defs`, `$ref` or unions), which every agent reads. */
export interface ToolInputSchema {
	type: 'object';
	properties: Record<string, Record<string, unknown>>;
	required?: string[];
	additionalProperties: false;
}

/** One tool as `tools/list` describes it. */
export interface DeskTool {
	name: string;
	title: string;
	description: string;
	inputSchema: ToolInputSchema;
	annotations: { readOnlyHint: boolean; idempotentHint: boolean; destructiveHint: boolean; openWorldHint: false };
}

export interface ToolCallMeta {
	/** The agent's own id of the call (Claude Code's `_meta["claudecode/toolUseId"]`), to link the desk's record to its transcript. */
	readonly harnessCallId?: string;
	/** The receipt key a caller fixed (the proxy, retrying a lost connection with the same key); else the dispatcher derives one. */
	readonly key?: string;
	/** Aborted when the caller goes away (its connection closed, the call cancelled): a waiting call (`reports` with `wait_s`) ends. */
	readonly signal?: AbortSignal;
}

export type ToolOutcome = { ok: true; result: unknown; replayed: boolean } | { ok: false; error: DeskErrorJson };

export interface ToolDispatcher {
	tools(): Promise<readonly DeskTool[]>;
	call(name: string, args: unknown, meta: ToolCallMeta): Promise<ToolOutcome>;
}
