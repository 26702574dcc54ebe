import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultLineageSettings, type RunSettings } from '../../server/src/runs/settings';
import { findProjectRoot, tempDir } from './temp';

export interface Scenario {
	format?: 'claude' | 'desk';
	plan?: string[];
	writes?: Array<{ path: string; content: string }>;
	/** Written on the first work attempt instead of `writes` (a change whose check fails). */
	firstAttemptWrites?: Array<{ path: string; content: string }>;
	deletes?: string[];
	/** Paths replaced by links to `target` (a file or folder made a link). */
	links?: Array<{ path: string; target: string }>;
	/** Messages the work node says to the person before its tool calls. */
	say?: string[];
	/** Shell calls the work node reports, each with what it printed. */
	printed?: Array<{ command: string; output: string }>;
	tryRead?: string[];
	/** Environment variables printed (a Bash tool call each, its output the value), as a careless agent would. */
	printEnv?: string[];
	tryWrite?: string[];
	/** Ports on 127.0.0.1 to connect to (a Bash tool call each, an error when refused). */
	tryConnect?: number[];
	outbox?: Array<{ name: string; content: string }>;
	/** Binary files for the outbox (a real PNG), their bytes in base64. */
	outboxBase64?: Array<{ name: string; base64: string }>;
	sleepMs?: number;
	/** The agent stays at work, its change written, until `releaseScriptedAgent` lets it finish. */
	holdUntilReleased?: boolean;
	exitCode?: number;
	answer?: string;
	/** The final answer of each attempt in turn (the last one repeated), over `answer`; the attempts are counted in `<scenario>.attempts`. */
	answers?: string[];
	/** Bytes of one line with no newline printed first, as a runaway agent would. */
	floodLineBytes?: number;
	/** The model name the agent reports (default scripted-model-1). */
	model?: string;
	echoPromptTo?: string;
	/**
	 * Desk tool calls, in order: as an MCP client of the server the wiring names (the desk's proxy,
	 * started as Claude Code starts one), or with `via: 'cli'` through `desk-tool`. What each was
	 * answered is written to `<scenario file>.desk-tools.json` (see {@link deskToolAnswers}).
	 */
	deskTools?: Array<{ tool: string; args: Record<string, unknown>; via?: 'mcp' | 'cli' }>;
	/** The agent's `mcp` setting (default auto: the desk tools are wired in). */
	mcp?: 'auto' | 'off';
}

/**
 * Settings whose one agent is the scripted agent (test/fixtures/agents/scripted-agent.mjs) playing
 * `scenario`. The script is copied into a folder of its own, so a sandbox that shows the agent's
 * program folder shows nothing else of the test's.
 */
export function scriptedAgentSettings(scenario: Scenario, overrides: Partial<RunSettings> = {}): RunSettings {
	const folder = tempDir();
	const script = path.join(folder, 'scripted-agent.mjs');
	fs.copyFileSync(path.join(findProjectRoot(), 'test', 'fixtures', 'agents', 'scripted-agent.mjs'), script);
	const scenarioFile = path.join(folder, 'scenario.json');
	fs.writeFileSync(scenarioFile, JSON.stringify(scenario));
	return {
		agents: [
			{
				name: 'scripted',
				command: process.execPath,
				args: [script, scenarioFile],
				env: [],
				secretEnv: [],
				format: scenario.format === 'desk' ? 'desk-jsonl' : 'claude-stream-json',
				skills: 'claude',
				network: false,
				homeFiles: [],
				readPaths: [],
				// The scenario's attempt counter lives beside it.
				writePaths: [folder],
				mcp: scenario.mcp ?? 'auto',
			},
		],
		isolation: 'shared',
		checks: [],
		maxAttempts: 2,
		sandbox: 'auto',
		...overrides,
		lineage: overrides.lineage ?? defaultLineageSettings,
	};
}

/** What the scripted agent of `settings` was answered by its desk tool calls (its `deskTools` steps), the list of tools first. */
export function deskToolAnswers(settings: RunSettings): unknown[] {
	const scenarioFile = settings.agents[0]!.args[1]!;
	return JSON.parse(fs.readFileSync(`${scenarioFile}.desk-tools.json`, 'utf8')) as unknown[];
}

/**
 * Lets the scripted agents of `run` that wait for it (`holdUntilReleased`) finish: their scenario
 * file, read from their command lines, gets its `.release` file. How many were released.
 */
export function releaseScriptedAgent(agentPids: readonly number[]): number {
	let released = 0;
	for (const pid of agentPids) {
		let argv: string[];
		try {
			argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
		} catch {
			continue;
		}
		const scenarioFile = argv.find((arg) => arg.endsWith(`${path.sep}scenario.json`));
		if (scenarioFile) {
			fs.writeFileSync(`${scenarioFile}.release`, '');
			released += 1;
		}
	}
	return released;
}
