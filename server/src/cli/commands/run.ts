/**
 * `desk run …`: runs carried out here, from Go to the gate: go, status, cancel, decide (commit,
 * retry, abandon, checkpoint, rollback of a landed run) and resume (from a checkpoint). Go, Retry and
 * Resume start the run in this process; the command waits for it (a Ctrl-C cancels it) and shows what
 * it recorded.
 */
import * as path from 'node:path';
import type { Run } from '../../ai/types';
import { DeskError, describeError } from '../../core/errors';
import { maxSettingsBytes } from '../../core/inputLimits';
import { launchGo } from '../../operations/card';
import { resumeRun } from '../../operations/checkpoints';
import { cancelRun, decideRun, projectTop, runDiff, runStatus } from '../../operations/runs';
import {
	answerDesk,
	carrierStarter,
	maxCarrierRequestBytes,
	readCarrierRequest,
	type CarrierRequest,
} from '../../runs/carrier';
import type { RunDetail } from '../../runs/types';
import { oneId, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { invokeFromCommandLine, operationCommand } from '../operationCommand';
import { writeBytes } from '../output';
import { projectOfCommand } from '../projects';
import { terminalSafe as t, writeMessage } from '../terminal';
import { formatRunDetail } from './runs';

/** The run settings of the command line: --settings FILE, with --agent and --isolation over it (checked by the operation). */
export function settingsOf({ values }: CommandContext): Record<string, unknown> {
	return {
		...(values.settings !== undefined ? readSettingsFile(values.settings) : {}),
		...(values.agent ? { agent: values.agent } : {}),
		...(values.isolation ? { isolation: values.isolation } : {}),
	};
}

/** `run go [PROJECT]`: the project named, else --project, else the repository's. */
function goProject(context: CommandContext): Promise<string> {
	if (context.rest.length > 1) {
		throw new UsageError('run go takes at most the project name');
	}
	return projectOfCommand(context, context.rest[0]);
}

/** Tells stderr each state a run reaches while this command carries it out. */
export async function reportStates(context: CommandContext, project: string): Promise<void> {
	if (context.out.json) {
		return;
	}
	const desk = await context.open();
	const ai = await desk.projectAi(projectTop(desk, project));
	const last = new Map<string, string>();
	desk.onRunChanged = (_top, changed) => {
		const run = ai.get<Run>(changed);
		if (run && run.status !== last.get(changed)) {
			last.set(changed, run.status);
			writeMessage(process.stderr, `desk: run ${t(changed)} ${t(run.status)}\n`);
		}
	};
}

/**
 * Waits for the run the call started in this process (a Ctrl-C cancels it, its agent's whole
 * process group, rather than orphaning it), then shows what it recorded: exit 2 when it failed.
 */
export async function carriedOut(context: CommandContext, project: string, runId: string) {
	const desk = await context.open();
	const { executor } = await desk.runs(projectTop(desk, project));
	const onSignal = () => {
		try {
			executor.cancel(runId, 'interrupted from the command line');
		} catch {
			// It ended meanwhile.
		}
	};
	process.once('SIGINT', onSignal);
	process.once('SIGTERM', onSignal);
	try {
		await desk.runEnded(runId);
	} finally {
		process.off('SIGINT', onSignal);
		process.off('SIGTERM', onSignal);
	}
	const detail = await invokeFromCommandLine(runStatus, context, { project, id: runId });
	return shownDetail(detail);
}

function shownDetail(detail: RunDetail) {
	return { value: detail, text: () => formatRunDetail(detail), exitCode: detail.summary.status === 'failed' ? 2 : 0 };
}

/** `desk run go [PROJECT] [--settings FILE] [--agent NAME] [--isolation shared|worktree] [--request-id ID]`: Go, then carry the run out here to the gate. */
const runGo = operationCommand(launchGo, {
	async params(context) {
		const project = await goProject(context);
		const settings = settingsOf(context);
		await reportStates(context, project);
		return { project, settings };
	},
	text: (record) => `launched ${t(record.launch_id)}: run ${t(record.run)}`,
	follow: async (record, context) => carriedOut(context, await goProject(context), record.run),
});

/** `desk run status ID` */
const runStatusCommand = operationCommand(runStatus, {
	params: async (context) => ({ project: await projectOfCommand(context), id: oneId(context.rest, context.command) }),
	text: (detail) => formatRunDetail(detail),
	exitCode: (detail) => shownDetail(detail).exitCode,
});

/**
 * `desk run diff ID [--patchset ID]`: the run's PatchSet as a unified diff on stdout (into a pipe as
 * stored, for `git apply` or `patch`; to a terminal with its controls escaped).
 */
const runDiffCommand = operationCommand(runDiff, {
	params: async (context) => ({
		project: await projectOfCommand(context),
		id: oneId(context.rest, context.command),
		...(context.values.patchset !== undefined ? { patchset: context.values.patchset } : {}),
	}),
	text: () => '',
	write: ({ base64 }, { out }) => writeBytes(out, Buffer.from(base64, 'base64')),
});

/** `desk run cancel ID [--reason TEXT]` */
const runCancel = operationCommand(cancelRun, {
	params: async (context) => ({
		project: await projectOfCommand(context),
		run: oneId(context.rest, context.command),
		...(context.values.reason !== undefined ? { reason: context.values.reason } : {}),
	}),
	text: (result, { rest }) =>
		result.stopped
			? `run ${t(rest[0]!)}: its agent was told to stop`
			: `run ${t(rest[0]!)}: marked failed (no process was carrying it out)`,
});

const decisions = ['commit', 'retry', 'abandon', 'checkpoint', 'rollback'] as const;

/** `desk run decide ID --decision commit|retry|abandon|checkpoint|rollback [--patchset ID] [--rationale TEXT] [--settings FILE]`: the gate, and Rollback of a landed run. */
const runDecide = operationCommand(decideRun, {
	async params(context) {
		const { command, rest, values } = context;
		const run = oneId(rest, command);
		const decision = decisions.find((d) => d === values.decision);
		if (decision === undefined) {
			throw new UsageError('run decide needs --decision commit, retry, abandon, checkpoint or rollback');
		}
		const project = await projectOfCommand(context);
		if (decision === 'retry') {
			await reportStates(context, project);
		}
		return {
			project,
			run,
			decision,
			...(values.patchset !== undefined ? { patchset: values.patchset } : {}),
			...(values.rationale !== undefined ? { rationale: values.rationale } : {}),
			...(decision === 'retry' ? { settings: settingsOf(context) } : {}),
		};
	},
	text: (result) =>
		result.rollback_run
			? `rolled back in run ${t(result.rollback_run)}: ${result.commit ? `reverted by ${t(result.commit)}` : `restored as v${result.version}`}`
			: result.commit
				? `landed as ${t(result.commit)}`
				: result.version !== undefined
					? `landed as v${result.version}`
					: `${result.decision.decision_type}${result.restored?.length ? `: ${result.restored.length} file(s) put back` : ''}${result.left?.length ? `; left as you changed them: ${result.left.map(t).join(', ')}` : ''}`,
	// Retry's new run was started here: the command carries it out and shows it.
	follow: async (result, context) =>
		result.new_run ? carriedOut(context, await projectOfCommand(context), result.new_run) : undefined,
});

/** `desk run resume ID [--settings FILE] [--agent NAME] [--isolation shared|worktree]`: Resume from Checkpoint, the new run carried out here. */
const runResume = operationCommand(resumeRun, {
	async params(context) {
		const project = await projectOfCommand(context);
		await reportStates(context, project);
		return { project, run: oneId(context.rest, context.command), settings: settingsOf(context) };
	},
	text: (result) => `resumed from ${t(result.checkpoint)} as run ${t(result.run)}`,
	follow: async (result, context) => carriedOut(context, await projectOfCommand(context), result.run),
});

/**
 * `desk run carry`: a run's carrier (glossary: Carrier), started by the desk that started the run,
 * never by people. It reads the run its desk hands over on stdin, takes the run's claim, answers on
 * descriptor 3, and carries the run to the gate or its failure (and any branch its agent starts to
 * its own carrier), its output in the log file it was given. Its own session: a window reload does
 * not reach it. A TERM or INT stops the run (failed, its files in the shared checkout put back).
 */
const runCarry: Command = async (context) => {
	let request: CarrierRequest;
	try {
		request = readCarrierRequest(await readStdin(maxCarrierRequestBytes));
	} catch (error) {
		answerDesk({ refused: describeError(error) });
		throw error;
	}
	const { top, run: runId } = request;
	const desk = await context.open();
	desk.carriedBy = 'own process';
	// A branch its agent starts gets a carrier of its own too (this one ends with its run).
	desk.runCarrier = carrierStarter(path.join(__dirname, 'desk.js'), context.store);
	let done: Promise<unknown>;
	let executor: Awaited<ReturnType<typeof desk.runs>>['executor'];
	try {
		({ executor } = await desk.runs(top));
		// The claim is taken as the execution starts: once this returns, it is this process's or the run is over.
		({ done } = await desk.carryRun(top, request.record, runId, request.settings));
	} catch (error) {
		answerDesk({ refused: describeError(error) });
		throw error;
	}
	if (!executor.claimedHere(runId)) {
		await done;
		const status = (await desk.projectAi(top)).get<Run>(runId)?.status ?? 'unknown';
		answerDesk({ refused: `run ${runId} is ${status}; only a run not yet started is carried` });
		return 2;
	}
	answerDesk({ carrying: true });
	context.logger.info(`carrying run ${runId} of ${top} (process ${process.pid})`);
	const stop = (signal: NodeJS.Signals) =>
		void desk
			.stopRuns(`its carrier was stopped (${signal})`)
			.catch((error: unknown) => context.logger.error(describeError(error)));
	process.once('SIGTERM', stop);
	process.once('SIGINT', stop);
	// No terminal to hang up: a HUP from the session it left is no reason to stop an agent.
	process.on('SIGHUP', () => undefined);
	await done;
	await desk.runsEnded();
	const run = (await desk.projectAi(top)).get<Run>(runId);
	context.logger.info(`run ${runId} is ${run?.status ?? 'gone'}; its carrier ends`);
	return run?.status === 'failed' ? 2 : 0;
};

/** stdin's bytes as UTF-8 text, refused past `maxBytes`. */
async function readStdin(maxBytes: number): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
		size += chunk.length;
		if (size > maxBytes) {
			throw new DeskError('input.tooLarge', `The run handed over on stdin is over ${maxBytes} bytes.`, {
				size,
				limit: maxBytes,
			});
		}
		chunks.push(chunk);
	}
	try {
		return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
	} catch {
		throw new DeskError('input.notUtf8', 'The run handed over on stdin is not UTF-8 text.', {});
	}
}

export const runCommands: ReadonlyArray<[string, Command]> = [
	['run go', runGo],
	['run status', runStatusCommand],
	['run diff', runDiffCommand],
	['run cancel', runCancel],
	['run decide', runDecide],
	['run resume', runResume],
	['run carry', runCarry],
];

/** A settings file (JSON) named by --settings: bounded like the server's `settings` param. */
export function readSettingsFile(file: string): Record<string, unknown> {
	const text = readInputText(file, 'the settings file', maxSettingsBytes);
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		throw new DeskError('run.badSettings', `The settings file ${file} is not JSON: ${(error as Error).message}`, {
			file,
		});
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		throw new DeskError('run.badSettings', `The settings file ${file} must hold a JSON object.`, { file });
	}
	return value as Record<string, unknown>;
}
