import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentKindOf, mcpWiring, type DeskToolsPlace } from '../../../server/src/runs/mcpWiring';

/** Golden argv: what each kind of agent is given, to the character (a change here changes every run). */
describe('desk tools wiring', () => {
	const place: DeskToolsPlace = {
		dir: '/run/desk',
		node: '/opt/node/bin/node',
		electron: false,
		proxy: '/opt/desk/dist/desk-mcp.js',
		toolCli: '/opt/desk/dist/desk-tool.js',
	};
	const config = {
		mcpServers: {
			desk: {
				type: 'stdio',
				command: '/opt/node/bin/node',
				args: ['/opt/desk/dist/desk-mcp.js'],
				env: { DESK_MCP_SOCKET: '/run/desk/desk.sock', DESK_MCP_TOKEN: '${DESK_MCP_TOKEN}' },
			},
		},
	};
	const toolScript = "#!/bin/sh\nexec '/opt/node/bin/node' '/opt/desk/dist/desk-tool.js' \"$@\"\n";

	it('Claude Code: its config file, strict, the desk allowed; after its own arguments', () => {
		const wiring = mcpWiring('claude', 'auto', place);
		assert.deepEqual(wiring.prepend, []);
		assert.deepEqual(wiring.append, [
			'--mcp-config',
			'/run/desk/mcp.json',
			'--strict-mcp-config',
			'--allowedTools',
			'mcp__desk',
		]);
		assert.deepEqual(wiring.env, { DESK_MCP_SOCKET: '/run/desk/desk.sock' });
		assert.deepEqual(
			wiring.files.map((f) => [f.name, f.mode]),
			[
				['mcp.json', 0o644],
				['desk-tool', 0o755],
			],
		);
		assert.deepEqual(JSON.parse(wiring.files[0]!.content), config);
		assert.equal(wiring.files[1]!.content, toolScript);
		assert.equal(wiring.prompt, undefined);
	});

	it("Codex: the person's servers cleared, the desk's set, its environment passed by name, approved; and the shell fallback in the prompt", () => {
		const wiring = mcpWiring('codex', 'auto', place);
		assert.deepEqual(wiring.prepend, [
			'-c',
			'mcp_servers={}',
			'-c',
			'mcp_servers.desk.command="/opt/node/bin/node"',
			'-c',
			'mcp_servers.desk.args=["/opt/desk/dist/desk-mcp.js"]',
			'-c',
			'mcp_servers.desk.env_vars=["DESK_MCP_SOCKET", "DESK_MCP_TOKEN"]',
			'-c',
			'mcp_servers.desk.default_tools_approval_mode="approve"',
		]);
		assert.deepEqual(wiring.append, []);
		assert.deepEqual(wiring.env, { DESK_MCP_SOCKET: '/run/desk/desk.sock' });
		assert.match(wiring.prompt!, /`\/run\/desk\/desk-tool NAME --json '\{…\}'`/);
		assert.equal(wiring.files.find((f) => f.name === 'desk-tool')?.content, toolScript);
	});

	it('Gemini CLI: a system settings file with the desk trusted, and only the desk allowed', () => {
		const wiring = mcpWiring('gemini', 'auto', place);
		assert.deepEqual(wiring.prepend, []);
		assert.deepEqual(wiring.append, ['--allowed-mcp-server-names', 'desk']);
		assert.deepEqual(wiring.env, {
			DESK_MCP_SOCKET: '/run/desk/desk.sock',
			GEMINI_CLI_SYSTEM_SETTINGS_PATH: '/run/desk/gemini-settings.json',
		});
		const settings = wiring.files.find((f) => f.name === 'gemini-settings.json');
		const { type: _type, ...desk } = config.mcpServers.desk;
		assert.deepEqual(JSON.parse(settings!.content), { mcpServers: { desk: { ...desk, trust: true } } });
	});

	it('our own agents: the config file and the shell fallback named in their environment', () => {
		const wiring = mcpWiring(agentKindOf('desk-jsonl'), 'auto', place);
		assert.deepEqual([wiring.prepend, wiring.append], [[], []]);
		assert.deepEqual(wiring.env, {
			DESK_MCP_SOCKET: '/run/desk/desk.sock',
			DESK_MCP_CONFIG: '/run/desk/mcp.json',
			DESK_TOOL: '/run/desk/desk-tool',
		});
		assert.equal(agentKindOf('text'), 'own');
	});

	it("inside VS Code the desk's Node is Electron's: every way of starting the proxy sets ELECTRON_RUN_AS_NODE", () => {
		const electron = { ...place, node: '/opt/code/code', electron: true };
		const claude = mcpWiring('claude', 'auto', electron);
		assert.equal(JSON.parse(claude.files[0]!.content).mcpServers.desk.env.ELECTRON_RUN_AS_NODE, '1');
		assert.equal(
			claude.files[1]!.content,
			"#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec '/opt/code/code' '/opt/desk/dist/desk-tool.js' \"$@\"\n",
		);
		assert.ok(
			mcpWiring('codex', 'auto', electron).prepend.includes('mcp_servers.desk.env={ ELECTRON_RUN_AS_NODE = "1" }'),
		);
		assert.equal(
			JSON.parse(mcpWiring('gemini', 'auto', electron).files[2]!.content).mcpServers.desk.env.ELECTRON_RUN_AS_NODE,
			'1',
		);
		assert.equal(claude.env.ELECTRON_RUN_AS_NODE, undefined, "the agent's own environment is left as it was");
	});

	it('mcp off: nothing at all, for every kind', () => {
		for (const kind of ['claude', 'codex', 'gemini', 'own'] as const) {
			assert.deepEqual(mcpWiring(kind, 'off', place), { prepend: [], append: [], env: {}, files: [] });
		}
	});

	it('a path with a quote is quoted for the shell, and written as TOML and JSON strings', () => {
		const odd = { ...place, toolCli: "/opt/it's/desk-tool.js", proxy: '/opt/a "b"/desk-mcp.js' };
		assert.equal(
			mcpWiring('own', 'auto', odd).files[1]!.content,
			"#!/bin/sh\nexec '/opt/node/bin/node' '/opt/it'\\''s/desk-tool.js' \"$@\"\n",
		);
		assert.ok(mcpWiring('codex', 'auto', odd).prepend.includes('mcp_servers.desk.args=["/opt/a \\"b\\"/desk-mcp.js"]'));
	});
});
