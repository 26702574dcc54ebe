import { spawn } from 'node:child_process';
import { memoryFolder } from './workFolder';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newToolInvocation } from '../ai/model';
import type { ArtifactRef, Run, Task, TokenUsage } from '../ai/types';
import { createOutputParser } from '../agents/adapters';
import { AttachmentStore } from '../attachments/attachmentStore';
import { DeskError } from '../core/errors';
import { maxAgentLineBytes } from '../core/inputLimits';
import { scrubText } from '../core/secrets';
import type { AgentRecorder, NodeOutcome } from './agentRecorder';
import { objectSink, secretsOf } from './artifacts';
import { boundedLines } from './boundedLines';
import { agentKindOf, deskTokenEnv, mcpWiring, type McpWiring } from './mcpWiring';
import type { RunPlacement } from './placement';
import type { DeskToolCall, DeskToolsHost, RunnerPorts } from './ports';
import { baseChildEnv, safePath } from './programs';
import { killGroup } from './runnerProcess';
import {
	copiedIntoRunHome,
	expandHome,
	programFolders,
	resolveCommand,
	sandboxArgs,
	sandboxIpcFolder,
	spawnSandboxed,
	type SandboxLayout,
} from './sandbox';
import type { AgentSettings } from './settings';

/**
 * The agent at work on one node: started under bubblewrap when the sandbox works here (else in a
 * process group of its own), its output read a bounded line at a time into the recorder, its
 * transcript kept, its outbox ingested when it is done.
 */

/** The most of an agent node's output kept as its transcript. */
const maxTranscriptBytes = 64 * 1024 * 1024;

/** How one agent node ended. */
export type AgentOutcome = NodeOutcome & {
	usage: TokenUsage;
	exitCode: number | null;
	transcript?: ArtifactRef;
};

export async function invokeAgent(
	ports: RunnerPorts,
	run: Run,
	task: Task,
	node: string,
	prompt: string,
	agent: AgentSettings,
	placement: RunPlacement,
	outbox: string,
	recorder: AgentRecorder,
	onStop: (stop: (reason: string) => void) => void,
): Promise<AgentOutcome> {
	// The desk tools live as long as the agent process: hosted before it starts, closed once it is gone.
	// Their token is a secret of the run like the agent's own: scrubbed from the calls it records.
	let token: string | undefined;
	const tools =
		agent.mcp === 'auto'
			? await ports.deskTools?.({
					run: run.object_id,
					task: task.object_id,
					agent: agent.name,
					workFolder: placement.work_folder,
					outbox,
					...insideWorkFolder(placement),
					secrets: secretsOf(agent),
					called: (call) => recordDeskToolCall(ports, run, [...secretsOf(agent), ...(token ? [token] : [])], call),
				})
			: undefined;
	token = tools?.token;
	try {
		return await runAgent(ports, run, task, node, prompt, agent, placement, outbox, recorder, onStop, tools);
	} finally {
		await tools
			?.close()
			.catch((error: unknown) =>
				ports.logger.warn(`run ${run.object_id}: the desk tools socket was not closed: ${(error as Error).message}`),
			);
	}
}

async function runAgent(
	ports: RunnerPorts,
	run: Run,
	task: Task,
	node: string,
	givenPrompt: string,
	agent: AgentSettings,
	placement: RunPlacement,
	outbox: string,
	recorder: AgentRecorder,
	onStop: (stop: (reason: string) => void) => void,
	tools: DeskToolsHost | undefined,
): Promise<AgentOutcome> {
	const wiring = tools ? wireDeskTools(agent, placement, tools) : undefined;
	const prompt = wiring?.prompt ? `${givenPrompt}\n\n${wiring.prompt}\n` : givenPrompt;
	// The token is a secret of the run's: scrubbed from every line the agent prints before anything keeps it.
	const runSecrets = tools ? [tools.token] : [];
	const env: Record<string, string> = {
		// Its PATH has only absolute folders: a relative one (`.`, empty) would find a program
		// of the repository's in the work folder the agent starts in.
		...baseChildEnv(),
		...AttachmentStore.env(task.object_id, outbox),
		DESK_RUN_ID: run.object_id,
		DESK_NODE: node,
	};
	for (const name of agent.env) {
		const value = process.env[name];
		if (value !== undefined) {
			env[name] = value;
		}
	}
	if (wiring && tools) {
		Object.assign(env, wiring.env, { [deskTokenEnv]: tools.token });
	}
	env.PATH = safePath(env.PATH);
	const program = resolveCommand(agent.command);
	if (!program) {
		const outcome = recorder.finish({ code: null, signal: null });
		return {
			...outcome,
			ok: false,
			error: `the agent's program ${agent.command} was not found (is it installed and on the PATH? Only absolute paths and the PATH's absolute folders are searched)`,
			exitCode: null,
		};
	}
	const usesPlaceholder = agent.args.some((a) => a.includes('{prompt}'));
	const args = [
		...(wiring?.prepend ?? []),
		...agent.args.map((a) => a.split('{prompt}').join(prompt)),
		...(wiring?.append ?? []),
	];
	const started = Date.now();
	const child = placement.isolated
		? // In the sandbox the program is started by its real path: only its own folder is shown.
			spawnSandboxed(
				sandboxArgs(withDeskTools(sandboxLayout(ports, placement, outbox, agent), tools), env, [
					fs.realpathSync(program),
					...args,
				]),
				{
					cwd: placement.work_folder,
					env: { PATH: env.PATH!, DESK_RUN_ID: run.object_id },
					stdin: 'pipe',
				},
			)
		: spawn(program, args, { cwd: placement.work_folder, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
	if (!child.stdin || !child.stdout || !child.stderr) {
		throw new DeskError('run.spawnFailed', 'the agent was started without its pipes', { agent: agent.name });
	}
	const spawnError = new Promise<Error>((resolve) => child.on('error', resolve));
	if (child.pid !== undefined) {
		const pgid = child.pid;
		ports.control.setAgentGroup(run.object_id, pgid);
		onStop(() => {
			killGroup(pgid, 'SIGTERM');
			setTimeout(() => killGroup(pgid, 'SIGKILL'), 3000).unref();
		});
	}
	child.stdin.on('error', () => undefined);
	child.stdin.end(usesPlaceholder ? '' : prompt);
	const parser = createOutputParser(agent.format);
	const transcript: Buffer[] = [];
	let stderrTail = '';
	child.stderr.on('data', (chunk: Buffer) => {
		keep(runSecrets.length > 0 ? Buffer.from(scrubText(chunk.toString('utf8'), runSecrets), 'utf8') : chunk);
		stderrTail = (stderrTail + chunk.toString('utf8')).slice(-2000);
	});
	// Each line the agent prints is capped: one endless line must not exhaust the desk's memory.
	const lines = boundedLines(child.stdout, {
		maxLineBytes: maxAgentLineBytes,
		onDropped: (bytes) => {
			ports.logger.warn(
				`run ${run.object_id}: the agent printed a line of ${bytes} bytes, over the limit of ${maxAgentLineBytes}; it was dropped`,
			);
			keep(
				Buffer.from(`[desk: a line of ${bytes} bytes, over the limit of ${maxAgentLineBytes}, was dropped]\n`, 'utf8'),
			);
		},
	});
	let kept = 0;
	const keep = (chunk: Buffer) => {
		// The stored transcript is capped: a noisy agent must not exhaust the desk's memory.
		if (kept < maxTranscriptBytes) {
			transcript.push(chunk.subarray(0, maxTranscriptBytes - kept));
			kept += chunk.length;
		}
	};
	const reading = (async () => {
		for await (const printed of lines) {
			const line = runSecrets.length > 0 ? scrubText(printed, runSecrets) : printed;
			keep(Buffer.from(`${line}\n`, 'utf8'));
			for (const event of parser.push(line)) {
				recorder.record(event);
			}
		}
		for (const event of parser.end()) {
			recorder.record(event);
		}
	})();
	const exit = await Promise.race([
		new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
			child.on('close', (code, signal) => resolve({ code, signal })),
		),
		spawnError.then((error) => ({ code: null, signal: null, error })),
	]);
	await reading.catch(() => undefined);
	// The agent is gone: its process group must not be signalled again (the number may be reused).
	ports.control.agentGone(run.object_id);
	if (kept > maxTranscriptBytes) {
		transcript.push(Buffer.from(`\n[desk: the transcript was cut at ${maxTranscriptBytes} bytes of ${kept}]\n`));
	}
	ingestOutbox(ports, run, task, agent, runSecrets);
	const sink = objectSink(ports, agent);
	const stored =
		transcript.length > 0
			? sink.storeArtifact(
					Buffer.from(sink.scrub(Buffer.concat(transcript).toString('utf8')), 'utf8'),
					'text/plain; charset=utf-8',
				)
			: undefined;
	if ('error' in exit) {
		const outcome = recorder.finish({ code: null, signal: null });
		const missing = (exit.error as NodeJS.ErrnoException).code === 'ENOENT';
		return {
			...outcome,
			ok: false,
			error: missing
				? `the agent's program ${placement.isolated ? 'bwrap' : agent.command} was not found`
				: `the agent could not be started: ${exit.error.message}`,
			exitCode: null,
		};
	}
	const outcome = recorder.finish(exit);
	ports.logger.info(
		`run ${run.object_id}: ${node} by ${agent.name} exited ${exit.code ?? exit.signal} after ${Date.now() - started} ms, ${outcome.toolCalls} tool call(s)`,
	);
	if (!outcome.ok && stderrTail.trim() !== '' && exit.code !== 0) {
		outcome.error = `${outcome.error}; it said: ${sink.scrub(stderrTail.trim().split('\n').slice(-2).join(' ')).slice(0, 300)}`;
	}
	return { ...outcome, exitCode: exit.code, ...(stored ? { transcript: stored } : {}) };
}

/** The attempt is over: what the agent left in the outbox is attached to the task (glossary: Outbox). */
function ingestOutbox(ports: RunnerPorts, run: Run, task: Task, agent: AgentSettings, runSecrets: string[]): void {
	try {
		const report = ports.attachments.ingest(task.object_id, {
			runId: run.object_id,
			secrets: [...secretsOf(agent), ...runSecrets],
			addedBy: `agent ${agent.name}`,
		});
		if (report.added.length + report.refused.length + report.kept.length > 0) {
			ports.logger.info(`run ${run.object_id}: ${AttachmentStore.summary(task.object_id, report)}`);
			ports.attachmentsChanged?.(task.object_id);
		}
	} catch (error) {
		ports.logger.warn(`run ${run.object_id}: the outbox could not be ingested: ${(error as Error).message}`);
	}
}

/**
 * The agent's wiring of the desk tools (see mcpWiring.ts): paths as the agent sees them (the IPC
 * folder at /run/desk in the sandbox), the desk's own Node to run the proxy (Electron's inside VS
 * Code), and the wiring's files written into the IPC folder, which the sandbox shows read-only.
 */
function wireDeskTools(agent: AgentSettings, placement: RunPlacement, tools: DeskToolsHost): McpWiring {
	const wiring = mcpWiring(agentKindOf(agent.format), agent.mcp, {
		dir: placement.isolated ? sandboxIpcFolder : tools.ipcDir,
		node: fs.realpathSync(process.execPath),
		electron: process.versions.electron !== undefined,
		proxy: fs.realpathSync(tools.proxy),
		toolCli: fs.realpathSync(tools.toolCli),
	});
	for (const file of wiring.files) {
		fs.writeFileSync(path.join(tools.ipcDir, file.name), file.content, { mode: file.mode, flag: 'wx' });
	}
	return wiring;
}

/** The layout with the desk tools: their folder at /run/desk, and the proxy's bundles and Node read-only. */
function withDeskTools(layout: SandboxLayout, tools: DeskToolsHost | undefined): SandboxLayout {
	if (!tools) {
		return layout;
	}
	return {
		...layout,
		ipc: tools.ipcDir,
		readOnly: [
			...layout.readOnly,
			fs.realpathSync(tools.proxy),
			fs.realpathSync(tools.toolCli),
			path.dirname(fs.realpathSync(process.execPath)),
		],
	};
}

/**
 * A desk tool call of the agent's, as the run records it (glossary: Desk tools): a ToolInvocation
 * tagged `desk.tool: desk`, linked to the agent's own id of the call, its args and summary scrubbed
 * of the agent's secrets and the tools' token like everything else the run keeps; the Runs view is told.
 */
function recordDeskToolCall(ports: RunnerPorts, run: Run, secrets: readonly string[], call: DeskToolCall): void {
	// The arguments as the agent sent them, a null too; none at all is {}.
	const args = call.args === undefined ? {} : call.args;
	const argsText = JSON.stringify(args);
	const scrubbedArgs = scrubText(argsText, secrets);
	const invocation = newToolInvocation(
		call.createdBy,
		run,
		call.tool,
		scrubbedArgs === argsText ? args : (JSON.parse(scrubbedArgs) as unknown),
		{ status: call.ok ? 'ok' : 'error', resultSummary: scrubText(call.summary, secrets).slice(0, 500) },
	);
	invocation.tags = { ...invocation.tags, 'desk.tool': 'desk' };
	if (call.harnessCallId !== undefined) {
		invocation.external_ids = { ...invocation.external_ids, tool_use_id: call.harnessCallId };
	}
	try {
		ports.ai.put([invocation]);
		ports.changed(run.object_id);
	} catch (error) {
		ports.logger.warn(`run ${run.object_id}: a desk tool call was not recorded: ${(error as Error).message}`);
	}
}

/** The folders inside the work folder the sandbox shows read-only and hidden; the desk tools keep to them too. */
function insideWorkFolder(placement: RunPlacement): { readOnlyInside: string[]; hiddenInside: string[] } {
	const inside = (rel: string) => path.join(placement.work_folder, rel);
	return {
		// In the person's own checkout, what configures their tools stays read-only: git's
		// config and hooks, the editor's settings (agents and checks are set there), Claude's.
		// Project memory is read-only in every checkout: it changes through remember and landings,
		// reviewed, never by an agent's own writes (glossary: Project memory).
		readOnlyInside: [
			...(placement.isolation === 'shared' ? ['.git', '.vscode', '.claude', '.agents'] : []),
			memoryFolder,
		].map(inside),
		hiddenInside: placement.isolation === 'shared' ? [inside('.desk')] : [],
	};
}

/** What the sandbox shows the agent (with `agent`) or a check (without): the work folder, the references, its home. */
export function sandboxLayout(
	ports: RunnerPorts,
	placement: RunPlacement,
	outbox: string | undefined,
	agent: AgentSettings | undefined,
): SandboxLayout {
	const agentReads = agent ? [...programFolders(agent.command), ...expandHome(agent.readPaths)] : [];
	return {
		workFolder: placement.work_folder,
		...insideWorkFolder(placement),
		...(agent ? { home: agentHome(placement, agent) } : {}),
		writable: agent ? expandHome(agent.writePaths) : [],
		...(outbox ? { outbox } : {}),
		// A worktree's .git file points into the repository's .git: readable, never writable.
		readOnly: [
			...placement.reference_folders,
			...agentReads,
			...(placement.isolation === 'worktree' ? [path.join(ports.project.path, '.git')] : []),
		],
		network: agent?.network ?? false,
	};
}

/**
 * The run's own home folder: the agent's `homeFiles` (its login and settings) copied in, so what
 * the agent changes there — hooks, servers it would have the person run later — is discarded
 * with the run instead of reaching the person's own configuration.
 */
function agentHome(placement: RunPlacement, agent: AgentSettings): string {
	const home = path.join(placement.run_folder, 'home');
	fs.mkdirSync(home, { recursive: true, mode: 0o700 });
	const personHome = os.homedir();
	for (const file of expandHome(agent.homeFiles)) {
		if (!copiedIntoRunHome(file, personHome)) {
			continue;
		}
		try {
			const target = path.join(home, path.relative(personHome, file));
			fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
			fs.copyFileSync(file, target);
			fs.chmodSync(target, 0o600);
		} catch {
			// Not there: the agent starts without it.
		}
	}
	return home;
}
