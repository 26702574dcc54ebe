/**
 * `desk mcp`: the desk tools (glossary: Desk tools) served over MCP on stdio, for the person's own
 * agent outside a run: the same catalogue an agent inside a run gets, on the person's whole library,
 * with the person as the actor (`desk mcp`, their git identity). Nothing but MCP is written to
 * stdout (logs go to stderr); the command ends when the client closes stdin, once the calls it
 * started are answered, so the desk is never closed under a write.
 */
import { describeError } from '../../core/errors';
import type { ToolDispatcher } from '../../mcp/dispatcher';
import { operationsDispatcher } from '../../mcp/operationsDispatcher';
import { personIdentity } from '../../operations/identity';
import { expectArgs } from '../args';
import type { Command, CommandContext } from '../context';

/** `desk mcp` */
async function serveMcp({ command, rest, open, logger }: CommandContext): Promise<number> {
	expectArgs(rest, 0, command);
	const desk = await open();
	const pending = new Set<Promise<unknown>>();
	const tools = operationsDispatcher({
		desk,
		actor: { kind: 'cli', person: await personIdentity(), via: 'mcp', cwd: process.cwd() },
	});
	const counted: ToolDispatcher = {
		tools: () => tools.tools(),
		call(name, args, meta) {
			const call = tools.call(name, args, meta);
			pending.add(call);
			void call.finally(() => pending.delete(call)).catch(() => undefined);
			return call;
		},
	};
	// The MCP SDK builds its schemas as it loads: only `desk mcp` pays for that, not every command.
	const { serveToolsOnStdio } = await import('../../mcp/server.js');
	const serving = serveToolsOnStdio(counted, { onError: (error) => logger.warn(`mcp: ${describeError(error)}`) });
	await serving.closed;
	await serving.close();
	await Promise.allSettled([...pending]);
	return 0;
}

export const mcpCommands: ReadonlyArray<[string, Command]> = [['mcp', serveMcp]];
