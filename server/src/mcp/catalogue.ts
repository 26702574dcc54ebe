/**
 * The desk tools a caller sees (glossary: Desk tools): every operation of the table with an MCP face
 * whose callers include that caller's kind, described from the operation itself. An agent inside a
 * run does not see the params its run fixes (its project); a mutating tool takes an optional
 * `request_id`, the call's receipt key.
 */
import type { AnyOperation } from '../operations';
import { operations } from '../operations';
import type { CallerKind } from '../operations/actor';
import type { JsonSchema } from '../protocol/schema';
import { requestIdPattern } from '../store/clientRequests';
import type { DeskTool, ToolInputSchema } from './dispatcher';

/** The tool argument that names a call's receipt key (the operation's own `requestId`, when it has one, is this). */
export const requestIdArg = 'request_id';

/** The params a run may fix for its agent (an operation's `boundByRun`): the agent's own project, task and run. */
export const runBoundParams = ['project', 'task', 'run'] as const;
export type RunBoundParam = (typeof runBoundParams)[number];

/** An operation served as a tool, with the tool it is served as. */
export interface CatalogueEntry {
	readonly operation: AnyOperation;
	readonly tool: DeskTool;
}

/** The tools `caller` may call, in the table's order. */
export function catalogueFor(caller: CallerKind): CatalogueEntry[] {
	const entries: CatalogueEntry[] = [];
	for (const op of operations) {
		const face = op.surfaces.mcp;
		if (!face || !op.callers.includes(caller)) {
			continue;
		}
		const unbindable = (face.boundByRun ?? []).filter((p) => !(runBoundParams as readonly string[]).includes(p));
		if (unbindable.length > 0) {
			throw new Error(`operation ${op.name}: a run fixes no param named ${unbindable.join(', ')}`);
		}
		entries.push({
			operation: op,
			tool: {
				name: face.tool,
				title: face.title,
				description: face.description,
				inputSchema: inputSchemaOf(op, caller === 'agent' ? (face.boundByRun ?? []) : []),
				annotations: {
					readOnlyHint: !op.mutates,
					idempotentHint: op.idempotent,
					destructiveHint: op.destructive ?? false,
					openWorldHint: false,
				},
			},
		});
	}
	return entries;
}

/** The tools `caller` may call. */
export function toolsFor(caller: CallerKind): DeskTool[] {
	return catalogueFor(caller).map((entry) => entry.tool);
}

const receiptKey: JsonSchema = {
	type: 'string',
	minLength: 8,
	maxLength: 128,
	pattern: requestIdPattern.source,
	description:
		'Optional receipt key of this action (a UUID, say). Sending the same key again returns the first result and changes nothing more; the same key with other arguments is refused (request.idReused). Without it, a call your harness sent twice (the same tool-use id; else the same arguments in the same run) is made once.',
};

/** The tool's input schema: the operation's params less those `bound` by the run, with `request_id` for a mutating one. */
function inputSchemaOf(op: AnyOperation, bound: readonly string[]): ToolInputSchema {
	const params = op.params.json;
	if (params.type !== 'object' || !params.properties) {
		throw new Error(`operation ${op.name}: an MCP tool's params must be an object schema`);
	}
	const left = new Set([...bound, 'requestId']);
	const properties: Record<string, JsonSchema> = {};
	for (const [key, schema] of Object.entries(params.properties)) {
		if (!left.has(key)) {
			properties[key] = schema;
		}
	}
	if (op.mutates) {
		properties[requestIdArg] = receiptKey;
	}
	const required = (params.required ?? []).filter((key) => !left.has(key));
	return {
		type: 'object',
		properties,
		...(required.length > 0 ? { required } : {}),
		additionalProperties: false,
	};
}
