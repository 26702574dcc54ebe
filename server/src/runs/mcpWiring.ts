import * as path from 'node:path';
import type { AgentOutputFormat } from '../agents/events';

/**
 * How an agent inside a run is given the desk tools (glossary: Desk tools): the arguments, the
 * environment and the files its kind of program reads them from. Every kind starts the same proxy
 * (`dist/desk-mcp.js`, a stdio MCP server that forwards each call over the run's socket); what
 * differs is how each program is told so. Pure: the caller writes the files and starts the agent.
 */

/** The environment variable that names the run's socket (the proxy and `desk-tool` read it). */
export const deskSocketEnv = 'DESK_MCP_SOCKET';
/** The environment variable that holds the run's token: in the environment only, never in argv or a file. */
export const deskTokenEnv = 'DESK_MCP_TOKEN';
/** The socket's name in the run's IPC folder. */
export const deskSocketName = 'desk.sock';

/** Which program reads the wiring: decided by the output format the agent is configured with. */
export type AgentKind = 'claude' | 'codex' | 'gemini' | 'own';

export function agentKindOf(format: AgentOutputFormat): AgentKind {
	switch (format) {
		case 'claude-stream-json':
			return 'claude';
		case 'codex-json':
			return 'codex';
		case 'gemini-stream-json':
			return 'gemini';
		case 'desk-jsonl':
		case 'text':
			return 'own';
	}
}

/** Where things are, as the agent sees them (inside the sandbox: the IPC folder is `/run/desk`). */
export interface DeskToolsPlace {
	/** The run's IPC folder: the socket, and the files the wiring writes. */
	dir: string;
	/** The Node that runs the proxy and `desk-tool` (the desk's own). */
	node: string;
	/** True when that is Electron's binary (the desk inside VS Code): it runs as Node only with ELECTRON_RUN_AS_NODE=1. */
	electron: boolean;
	/** The proxy's bundle (`dist/desk-mcp.js`) and the shell fallback's (`dist/desk-tool.js`). */
	proxy: string;
	toolCli: string;
}

export interface McpWiring {
	/** Arguments put before the agent's own, and after them. */
	prepend: string[];
	append: string[];
	/** Added to the agent's environment; the token's value is the caller's to add, under `deskTokenEnv`. */
	env: Record<string, string>;
	/** Files to write into the IPC folder (names relative to it). */
	files: Array<{ name: string; content: string; mode: number }>;
	/** A line for the prompt, when the agent needs telling how to reach the tools. */
	prompt?: string;
}

const none: McpWiring = { prepend: [], append: [], env: {}, files: [] };

/**
 * The wiring of `kind` with the desk tools at `place`; nothing at all with `mcp: 'off'`.
 *
 * - Claude Code: `--mcp-config FILE --strict-mcp-config --allowedTools mcp__desk` after its own
 *   arguments (both options take several values, so nothing of the agent's may follow them); the
 *   config's `${DESK_MCP_TOKEN}` is expanded by Claude Code from its environment, so the token is in
 *   no file.
 * - Codex: `-c` overrides before its own arguments (`codex -c … exec …`): first `mcp_servers={}`
 *   (no server of the person's config.toml runs inside the run), then the desk's server, its
 *   environment passed through by name, its tools approved. Some Codex versions cancel MCP calls in
 *   `exec`: the prompt names the shell fallback `desk-tool`.
 * - Gemini CLI: a system settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH) with the desk's server,
 *   trusted (no confirmation), and `--allowed-mcp-server-names desk` after its own arguments.
 * - Our own agents (desk JSON lines, plain text): `DESK_MCP_CONFIG` (the same config file as Claude
 *   Code's) and `DESK_TOOL` (the shell fallback) in the environment.
 */
export function mcpWiring(kind: AgentKind, mcp: 'auto' | 'off', place: DeskToolsPlace): McpWiring {
	if (mcp === 'off') {
		return none;
	}
	const socket = path.posix.join(place.dir, deskSocketName);
	const configFile = path.posix.join(place.dir, 'mcp.json');
	const toolScript = path.posix.join(place.dir, 'desk-tool');
	const nodeEnv: Record<string, string> = place.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
	const server = (tokenReference: string) => ({
		command: place.node,
		args: [place.proxy],
		env: { [deskSocketEnv]: socket, [deskTokenEnv]: tokenReference, ...nodeEnv },
	});
	const files: McpWiring['files'] = [
		{
			name: 'mcp.json',
			content: json({ mcpServers: { desk: { type: 'stdio', ...server(`\${${deskTokenEnv}}`) } } }),
			mode: 0o644,
		},
		{
			name: 'desk-tool',
			content: `#!/bin/sh\n${place.electron ? 'ELECTRON_RUN_AS_NODE=1 ' : ''}exec ${shellQuote(place.node)} ${shellQuote(place.toolCli)} "$@"\n`,
			mode: 0o755,
		},
	];
	const env = { [deskSocketEnv]: socket };
	switch (kind) {
		case 'claude':
			return {
				prepend: [],
				append: ['--mcp-config', configFile, '--strict-mcp-config', '--allowedTools', 'mcp__desk'],
				env,
				files,
			};
		case 'codex':
			return {
				prepend: [
					'-c',
					'mcp_servers={}',
					'-c',
					`mcp_servers.desk.command=${tomlString(place.node)}`,
					'-c',
					`mcp_servers.desk.args=[${tomlString(place.proxy)}]`,
					'-c',
					`mcp_servers.desk.env_vars=[${[deskSocketEnv, deskTokenEnv].map(tomlString).join(', ')}]`,
					...(place.electron ? ['-c', 'mcp_servers.desk.env={ ELECTRON_RUN_AS_NODE = "1" }'] : []),
					'-c',
					'mcp_servers.desk.default_tools_approval_mode="approve"',
				],
				append: [],
				env,
				files,
				prompt:
					`The desk's tools (asset_search, asset_snapshot, attach, …) are the MCP server "desk". If its tools are ` +
					`not available to you, run them from the shell: \`${toolScript} NAME --json '{…}'\` prints the result ` +
					`as JSON (\`${toolScript} --list\` lists the tools and their arguments).`,
			};
		case 'gemini':
			return {
				prepend: [],
				append: ['--allowed-mcp-server-names', 'desk'],
				env: { ...env, GEMINI_CLI_SYSTEM_SETTINGS_PATH: path.posix.join(place.dir, 'gemini-settings.json') },
				files: [
					...files,
					{
						name: 'gemini-settings.json',
						content: json({ mcpServers: { desk: { ...server(`\${${deskTokenEnv}}`), trust: true } } }),
						mode: 0o644,
					},
				],
			};
		case 'own':
			return {
				prepend: [],
				append: [],
				env: { ...env, DESK_MCP_CONFIG: configFile, DESK_TOOL: toolScript },
				files,
			};
	}
}

function json(value: unknown): string {
	return `${JSON.stringify(value, null, 2)}\n`;
}

/** A TOML basic string: JSON's escapes are TOML's for every character a path holds. */
function tomlString(value: string): string {
	return JSON.stringify(value);
}

function shellQuote(value: string): string {
	return `'${value.split("'").join(`'\\''`)}'`;
}
