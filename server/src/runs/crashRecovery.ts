import { addPatchSet, failRun, setRunStatus, setUsage } from '../ai/model';
import { tokenCounts } from '../ai/tokenUsage';
import { closeRunPlans } from './endings';
import type { PatchSet, Run } from '../ai/types';
import { isAtGate } from './runViews';
import { keepWhatWasLeft } from './patchSets';
import { readPlacement, type RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { isRunnerAlive, runnerToken, stopStrayAgent } from './runnerProcess';
import { taskSecrets } from './taskOutbox';
import { removeInstalled } from './workFolder';
import { putBackSharedCheckout } from './checkoutFiles';

/** What recovery did: the runs it failed, and those whose leftover change it could not keep (with why). */
export interface RecoveryResult {
	failed: string[];
	notKept: Array<{ run: string; error: string }>;
}

/**
 * Fails every run left in progress by a process that is gone (its carrier or the desk carrying it
 * crashed or was killed): nothing of it is landed, a stray agent it started is stopped, what the agent
 * left is kept as a PatchSet, and on the shared checkout its files are put back as they were at Go
 * (each only while still as the agent left it), which the run's failure says. `liveHere` names the
 * runs this process is carrying out (or handing to their carrier) now.
 */
export async function recoverInterrupted(
	ports: RunnerPorts,
	liveHere: (runId: string) => boolean,
): Promise<RecoveryResult> {
	const failed: string[] = [];
	const notKept: RecoveryResult['notKept'] = [];
	for (const row of ports.control.rows()) {
		const run = ports.ai.get<Run>(row.run_id);
		if (!run || run.status === 'completed' || run.status === 'failed' || isAtGate(run)) {
			continue;
		}
		const mine = row.runner_pid === process.pid && row.runner_token === runnerToken;
		if ((mine && liveHere(row.run_id)) || (!mine && isRunnerAlive(row.runner_pid, row.runner_token))) {
			continue;
		}
		if (row.agent_pgid !== null) {
			stopStrayAgent(row.agent_pgid, row.run_id);
			markUsageIncomplete(ports, run);
		}
		// What the agent left is kept as a PatchSet, so Abandon can put the files back. A row this desk
		// cannot read still fails its run (and the others are recovered): what it left is then not kept.
		let placement: RunPlacement | undefined;
		let unreadable: string | undefined;
		try {
			placement = readPlacement(row.json, row.run_id).placement;
		} catch (error) {
			unreadable = `its run control could not be read: ${(error as Error).message}`;
			ports.logger.error(`run ${run.object_id}: ${unreadable}`);
		}
		const left: { patch?: PatchSet; notKept?: string } =
			unreadable !== undefined
				? { notKept: unreadable }
				: placement && run.status !== 'created'
					? await keepWhatWasLeft(ports, run, placement)
					: {};
		const partial = left.patch;
		if (left.notKept !== undefined) {
			notKept.push({ run: run.object_id, error: left.notKept });
		}
		if (partial) {
			partial.rationale = 'what the agent left when the desk stopped';
			addPatchSet(run, partial);
			ports.ai.put([partial]);
		}
		if (placement) {
			removeInstalled(ports, placement);
		}
		// Nobody carries the run on: the person finds the checkout as before Go, not half edited.
		const putBack = placement ? await putBackLeftover(ports, run, placement) : '';
		// What the agent put in the outbox before the crash is attached, once (keyed by this run), scrubbed
		// of the secrets its agent was given, known again from its settings.
		try {
			ports.attachments.ingest(run.task, {
				runId: run.object_id,
				addedBy: 'run',
				secrets: placement ? taskSecrets(ports, [run.object_id]) : [],
			});
		} catch (error) {
			ports.logger.warn(`run ${run.object_id}: the outbox could not be ingested: ${(error as Error).message}`);
		}
		const was = run.status;
		if (run.status === 'created') {
			setRunStatus(run, 'patching');
		}
		failRun(
			run,
			`the desk stopped while the run was ${was} (process ${row.runner_pid}); nothing was landed${putBack}${left.notKept !== undefined ? `; what the agent left could not be kept (${left.notKept})` : ''}`,
		);
		ports.ai.put([run, ...closeRunPlans(ports.ai, run, 'the desk stopped')]);
		failed.push(run.object_id);
		ports.logger.warn(`run ${run.object_id}: marked failed, its process ${row.runner_pid} is gone`);
	}
	return { failed, notKept };
}

/**
 * Puts the run's files in the shared checkout back as at Go, and says what it did as the end of the
 * run's failure (empty when nothing was to put back). A failure to put back is said, never thrown:
 * the run still fails, its PatchSet holds what the agent left.
 */
export async function putBackLeftover(ports: RunnerPorts, run: Run, placement: RunPlacement): Promise<string> {
	try {
		const { restored, left } = await putBackSharedCheckout(ports, placement, ports.ai.runPatchSets(run).at(-1));
		const files = (paths: string[]) => `${paths.length} file${paths.length === 1 ? '' : 's'}`;
		return (
			(restored.length > 0
				? `; the checkout was put back as at Go (${files(restored)}: ${restored.slice(0, 5).join(', ')}${restored.length > 5 ? ', …' : ''}; its PatchSet keeps what the agent left)`
				: '') + (left.length > 0 ? `; left as changed since: ${left.join(', ')}` : '')
		);
	} catch (error) {
		ports.logger.warn(`run ${run.object_id}: the checkout could not be put back: ${(error as Error).message}`);
		return `; the checkout could not be put back (${(error as Error).message})`;
	}
}

/**
 * An agent was at work when the desk stopped: what its node spent was never reported, so the run's
 * usage is at least what the nodes before it reported (glossary: Provenance).
 */
function markUsageIncomplete(ports: RunnerPorts, run: Run): void {
	const provenance = ports.ai.runProvenance(run.object_id);
	if (!provenance || provenance.token_usage?.incomplete) {
		return;
	}
	setUsage(provenance, {
		...(provenance.token_usage ?? tokenCounts({ input_tokens: 0, output_tokens: 0 })),
		incomplete: true,
	});
	ports.ai.put([provenance]);
}
