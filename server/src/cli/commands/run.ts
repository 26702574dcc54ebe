/**
 * `desk run …`: runs carried out here, from Go to the gate: go, status, cancel and decide (commit,
 * retry, abandon, checkpoint).
 */
import type { Run } from '../../ai/types';
import { DeskError } from '../../core/errors';
import { maxSettingsBytes } from '../../core/inputLimits';
import type { LaunchRecord } from '../../launch/types';
import { runDetail } from '../../runs/runViews';
import { parseRunSettings, type RunSettings } from '../../runs/settings';
import { answerOnce } from '../../store/clientRequests';
import type { WriteTransaction } from '../../store/durableDatabase';
import { oneId, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { print } from '../output';
import { projectPath, repoTop } from '../projects';
import { terminalSafe as t, writeMessage } from '../terminal';
import { formatRunDetail } from './runs';

/**
 * What every `run` command needs: the project (`run go PROJECT`, else --project NAME, else the
 * repository at --repo PATH or around the current folder), its executor and gate, its AI objects,
 * the run settings of the command line, and the two things every command may end with: carrying a
 * run out here, and reporting it.
 */
async function runsOf({ command, rest, values, out, open }: CommandContext) {
	const opened = await open();
	const projectName = command === 'run go' && rest.length > 0 ? rest[0] : values.project;
	if (command === 'run go' && rest.length > 1) {
		throw new UsageError('run go takes at most the project name');
	}
	const top = projectName ? projectPath(opened, projectName) : await repoTop(values.repo ?? process.cwd());
	const settingsFor = () => {
		const file = values.settings !== undefined ? readSettingsFile(values.settings) : {};
		return parseRunSettings({
			...file,
			...(values.agent ? { agent: values.agent } : {}),
			...(values.isolation ? { isolation: values.isolation } : {}),
		});
	};
	const { executor, gate } = await opened.runs(top);
	const ai = await opened.projectAi(top);
	const carryOut = async (record: LaunchRecord, runId: string, settings: RunSettings) => {
		// Ctrl-C cancels the run (its agent's whole process group) rather than orphaning it.
		const onSignal = () => executor.cancel(runId, 'interrupted from the command line');
		process.once('SIGINT', onSignal);
		process.once('SIGTERM', onSignal);
		let last = '';
		opened.onRunChanged = (_top, changed) => {
			const run = ai.get<Run>(changed);
			if (run && run.status !== last && !out.json) {
				last = run.status;
				writeMessage(process.stderr, `desk: run ${t(runId)} ${t(run.status)}\n`);
			}
		};
		try {
			return await executor.execute(record, runId, settings);
		} finally {
			process.off('SIGINT', onSignal);
			process.off('SIGTERM', onSignal);
		}
	};
	const report = (runId: string) => {
		const detail = runDetail(ai, runId);
		print(out, detail, () => formatRunDetail(detail));
		return detail.summary.status === 'failed' ? 2 : 0;
	};
	return { opened, top, settingsFor, executor, gate, ai, carryOut, report };
}

/** `desk run go [PROJECT] [--settings FILE] [--agent NAME] [--isolation shared|worktree] [--request-id ID]`: Go, then carry the run out here to the gate. */
async function runGo(context: CommandContext): Promise<number> {
	const { madeBy, requestOf } = context;
	const { opened, top, settingsFor, executor, carryOut, report } = await runsOf(context);
	const settings = settingsFor();
	const launches = await opened.launches(top);
	const card = launches.card();
	// The run claims the checkout in Go's own transaction: two `desk run go` at once
	// (or a window's Go) never both start an agent in it.
	const { result: record, replayed } = await launches.goOnce(madeBy, new Date(), {
		...requestOf('desk run go', { top, settings }),
		check: () => executor.assertCheckoutFree(settings, card),
		claim: (tx, launched) => executor.claimIn(tx, settings, launched, launched.run),
	});
	if (!replayed) {
		await carryOut(record, record.run, settings);
	}
	return report(record.run);
}

/** `desk run status ID` */
async function runStatus(context: CommandContext): Promise<number> {
	const { report } = await runsOf(context);
	return report(oneId(context.rest, context.command));
}

/** `desk run cancel ID [--reason TEXT]` */
async function runCancel(context: CommandContext): Promise<number> {
	const { command, rest, values, out } = context;
	const { executor } = await runsOf(context);
	const id = oneId(rest, command);
	const result = executor.cancel(id, values.reason?.trim() || 'cancelled from the command line');
	print(out, result, () =>
		result.stopped
			? `run ${t(id)}: its agent was told to stop`
			: `run ${t(id)}: marked failed (no process was carrying it out)`,
	);
	return 0;
}

/** `desk run decide ID --decision commit|retry|abandon|checkpoint [--patchset ID] [--rationale TEXT] [--settings FILE]`: the gate. */
async function runDecide(context: CommandContext): Promise<number> {
	const { command, rest, values, out, requestOf } = context;
	const { opened, top, settingsFor, executor, gate, ai, carryOut, report } = await runsOf(context);
	const id = oneId(rest, command);
	const decision = values.decision;
	if (decision !== 'commit' && decision !== 'retry' && decision !== 'abandon' && decision !== 'checkpoint') {
		throw new UsageError('run decide needs --decision commit, retry, abandon or checkpoint');
	}
	const settings = decision === 'retry' ? settingsFor() : undefined;
	const { request } = requestOf('desk run decide', {
		top,
		id,
		decision,
		patchset: values.patchset,
		rationale: values.rationale,
		settings,
	});
	// Retry: the new run claims the checkout in the decision's transaction, as Go's run does.
	const previous = ai.get<Run>(id);
	const record = settings && previous?.object_type === 'run' ? gate.launchRecord(previous) : undefined;
	const retry =
		settings && record
			? {
					check: () => executor.assertCheckoutFree(settings, record),
					claim: (tx: WriteTransaction, runId: string) => executor.claimIn(tx, settings, record, runId),
				}
			: {};
	const { result, replayed } = await answerOnce(await opened.projectRequests(top), request, async () => {
		const decided = await gate.decide(id, {
			decision,
			...(values.patchset ? { patchset: values.patchset } : {}),
			...(values.rationale ? { rationale: values.rationale } : {}),
			...retry,
		});
		await opened.answerProjectRequest(top, request, decided);
		return decided;
	});
	if (result.new_run && settings && !replayed) {
		const record = gate.launchRecord(ai.require<Run>(result.new_run, 'run'));
		if (record) {
			await carryOut(record, result.new_run, settings);
			return report(result.new_run);
		}
	}
	print(out, result, () =>
		result.commit
			? `landed as ${t(result.commit)}`
			: result.version !== undefined
				? `landed as v${result.version}`
				: `${decision}${result.restored?.length ? `: ${result.restored.length} file(s) put back` : ''}${result.left?.length ? `; left as you changed them: ${result.left.map(t).join(', ')}` : ''}`,
	);
	return 0;
}

export const runCommands: ReadonlyArray<[string, Command]> = [
	['run go', runGo],
	['run status', runStatus],
	['run cancel', runCancel],
	['run decide', runDecide],
];

/** A settings file (JSON) named by --settings: bounded like the server's `settings` param. */
function readSettingsFile(file: string): Record<string, unknown> {
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
