/**
 * The summary agent (glossary: Project memory): an agent of `agents` asked to turn a landing into
 * memories. It runs as a run's agent does — bubblewrap when it is there, the prompt on stdin, only
 * its own environment names passed — but in an empty folder of its own, with no desk tools, no
 * repository and no outbox: it reads nothing but its prompt. What it answers is its final text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOutputParser } from '../agents/adapters';
import { maxAgentLineBytes } from '../core/inputLimits';
import { scrubText } from '../core/secrets';
import { boundedLines } from './boundedLines';
import { baseChildEnv, safePath } from './programs';
import { killGroup } from './runnerProcess';
import { expandHome, programFolders, resolveCommand, sandboxArgs, sandboxStatus, spawnSandboxed } from './sandbox';
import { defaultPrices } from './prices';
import type { AgentSettings, RunSettings } from './settings';
import { UsageAccount } from './usageAccount';

export interface SummaryAnswer {
	/** Its final text (the result's, else its last message). */
	text: string;
	/** The model it said it is, when it said. */
	model?: string;
	input_tokens: number;
	output_tokens: number;
	cost_usd?: number;
}

/** How long a summary may take before its process group is stopped. */
const summaryTimeoutMs = 5 * 60_000;
/** The answer kept: far more than a batch of ten memories needs. */
const maxAnswerChars = 256 * 1024;

/**
 * Asks `agent` once: resolves with its answer, or rejects with why it gave none (not found, exited
 * with a failure, said nothing, took too long).
 */
export async function askSummaryAgent(
	agent: AgentSettings,
	prompt: string,
	sandbox: RunSettings['sandbox'],
	options: { timeoutMs?: number } = {},
): Promise<SummaryAnswer> {
	const program = resolveCommand(agent.command);
	if (!program) {
		throw new Error(`the summary agent's program ${agent.command} was not found`);
	}
	const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-summary-'));
	const secrets = agent.secretEnv.map((name) => process.env[name]).filter((v): v is string => !!v);
	try {
		const env: Record<string, string> = { ...baseChildEnv(), DESK_NODE: 'memorize' };
		for (const name of agent.env) {
			const value = process.env[name];
			if (value !== undefined) {
				env[name] = value;
			}
		}
		env.PATH = safePath(env.PATH);
		const usesPlaceholder = agent.args.some((a) => a.includes('{prompt}'));
		const args = agent.args.map((a) => a.split('{prompt}').join(prompt));
		const isolated = sandbox === 'auto' && sandboxStatus().available;
		const child: ChildProcess = isolated
			? spawnSandboxed(
					sandboxArgs(
						{
							workFolder: folder,
							readOnlyInside: [],
							hiddenInside: [],
							readOnly: [...programFolders(agent.command), ...expandHome(agent.readPaths)],
							writable: expandHome(agent.writePaths),
							network: agent.network,
						},
						env,
						[fs.realpathSync(program), ...args],
					),
					{ cwd: folder, env: { PATH: env.PATH }, stdin: 'pipe' },
				)
			: spawn(program, args, { cwd: folder, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
		const pgid = child.pid;
		const timer = setTimeout(
			() => pgid !== undefined && killGroup(pgid, 'SIGKILL'),
			options.timeoutMs ?? summaryTimeoutMs,
		);
		timer.unref();
		const spawnError = new Promise<Error>((resolve) => child.on('error', resolve));
		child.stdin!.on('error', () => undefined);
		child.stdin!.end(usesPlaceholder ? '' : prompt);
		let stderrTail = '';
		child.stderr!.on('data', (chunk: Buffer) => (stderrTail = (stderrTail + chunk.toString('utf8')).slice(-1000)));
		const parser = createOutputParser(agent.format);
		const answer: SummaryAnswer = { text: '', input_tokens: 0, output_tokens: 0 };
		const account = new UsageAccount(defaultPrices);
		let last = '';
		let result: string | undefined;
		const reading = (async () => {
			for await (const line of boundedLines(child.stdout!, {
				maxLineBytes: maxAgentLineBytes,
				onDropped: () => undefined,
			})) {
				for (const event of [...parser.push(line)]) {
					account.record(event);
					if (event.kind === 'message') {
						last = event.text;
					} else if (event.kind === 'result') {
						result = event.text ?? result;
						answer.model = event.model ?? answer.model;
					} else if (event.kind === 'session' && event.model) {
						answer.model = event.model;
					}
				}
			}
			for (const event of parser.end()) {
				account.record(event);
				if (event.kind === 'message') {
					last = event.text;
				}
			}
			// What it spent, counted as a run's agent is (usageAccount.ts): its report per model, not a zero result.
			const usage = account.usage(answer.model ?? 'unknown');
			answer.input_tokens = usage.input_tokens;
			answer.output_tokens = usage.output_tokens + (usage.other_tokens ?? 0);
			if (usage.cost_usd !== undefined) {
				answer.cost_usd = usage.cost_usd;
			}
		})();
		const exit = await Promise.race([
			new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
				child.on('close', (code, signal) => resolve({ code, signal })),
			),
			spawnError.then((error) => ({ code: null, signal: null, error })),
		]);
		clearTimeout(timer);
		await reading.catch(() => undefined);
		if ('error' in exit) {
			throw new Error(`the summary agent could not be started: ${exit.error.message}`);
		}
		const said = (result ?? last).trim();
		if (exit.code !== 0 || said === '') {
			const why = exit.signal
				? `was stopped (${exit.signal})`
				: exit.code !== 0
					? `exited ${exit.code}`
					: 'said nothing';
			throw new Error(
				`the summary agent ${why}${stderrTail.trim() ? `: ${scrubText(stderrTail.trim().split('\n').slice(-2).join(' '), secrets).slice(0, 300)}` : ''}`,
			);
		}
		answer.text = scrubText(said, secrets).slice(0, maxAnswerChars);
		return answer;
	} finally {
		fs.rmSync(folder, { recursive: true, force: true });
	}
}
