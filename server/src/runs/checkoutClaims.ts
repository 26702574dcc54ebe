import { claimJson, readPlacement, type RunPlacement } from './placement';
import { DeskError } from '../core/errors';
import type { AssetPlug } from '../launch/types';
import type { WriteTransaction } from '../store/durableDatabase';
import type { RunnerPorts } from './ports';
import { isRunnerAlive, runnerToken } from './runnerProcess';
import { isAtGate } from './runViews';
import type { RunSettings } from './settings';

/**
 * Claims on a project's runs across processes, kept in run_control: the shared checkout (one agent
 * works in it at a time) and the making of a run's decision (one at a time). A claim of a process
 * that is gone (its pid and token no longer name a live process) is stale and taken over.
 */

type Plugs = { plugs: ReadonlyArray<Pick<AssetPlug, 'id' | 'role'>> };

/**
 * The run an agent is working on (or is about to) in the shared checkout now, if any: two runs
 * editing one checkout at once would each take the other's edits for its own. (Worktree runs and
 * snapshot targets have folders of their own; runs waiting at the gate have stopped editing.) A
 * run claimed by a process that is gone does not count: that process's claim is stale.
 */
export function checkoutBusy(
	ports: RunnerPorts,
	liveHere: (runId: string) => boolean,
	exceptRun?: string,
	query?: WriteTransaction,
): string | undefined {
	for (const row of ports.control.rows(query)) {
		if (row.run_id === exceptRun) {
			continue;
		}
		const run = ports.control.storedRun(row.run_id, query);
		if (
			!run ||
			run.status === 'completed' ||
			run.status === 'failed' ||
			isAtGate(run) ||
			!mayHoldSharedCheckout(row.json, row.run_id)
		) {
			continue;
		}
		const mine = row.runner_pid === process.pid && row.runner_token === runnerToken;
		// A run of this process that is still Created was claimed by Go and is being started.
		if (
			(mine && (liveHere(row.run_id) || run.status === 'created')) ||
			(!mine && isRunnerAlive(row.runner_pid, row.runner_token))
		) {
			return row.run_id;
		}
	}
	return undefined;
}

/** Refuses a run on the shared checkout while another one is working there. */
export function assertCheckoutFree(
	ports: RunnerPorts,
	liveHere: (runId: string) => boolean,
	settings: RunSettings,
	record: Plugs,
	exceptRun?: string,
	query?: WriteTransaction,
): void {
	if (isolationOf(ports, settings, record) !== 'shared') {
		return;
	}
	const busy = checkoutBusy(ports, liveHere, exceptRun, query);
	if (busy) {
		throw new DeskError(
			'run.checkoutBusy',
			`Run ${busy} is working in this checkout now; wait for it, cancel it, or set agentDesk.runs.isolation to worktree so runs work side by side.`,
			{ run: busy },
		);
	}
}

/**
 * Claims where `runId` will work, inside the caller's transaction (Go's, or the start of a
 * Retry): refused while another live run works in the shared checkout, else the run's control
 * row is written with this process as its runner and the isolation it will have, so from this
 * transaction on every other process sees the checkout taken. The claim of a process that dies
 * is stale (its pid and token no longer name a live process) and the next Go takes over.
 */
export function claimCheckout(
	ports: RunnerPorts,
	liveHere: (runId: string) => boolean,
	tx: WriteTransaction,
	settings: RunSettings,
	record: { launch_id: string } & Plugs,
	runId: string,
): void {
	assertCheckoutFree(ports, liveHere, settings, record, runId, tx);
	ports.control.claim(
		tx,
		runId,
		record.launch_id,
		{ pid: process.pid, token: runnerToken },
		claimJson(isolationOf(ports, settings, record)),
	);
}

/** Where a run of these settings and plugs works: the shared checkout, a worktree, or a snapshot target's folder. */
function isolationOf(ports: RunnerPorts, settings: RunSettings, record: Plugs): RunPlacement['isolation'] {
	const target = record.plugs.find((p) => p.role === 'target');
	if (target && ports.library.getAsset(target.id).engine === 'snapshot') {
		return 'folder';
	}
	return settings.isolation === 'worktree' ? 'worktree' : 'shared';
}

/**
 * Claims the making of a run's decision for this process, across processes: a second claim while
 * the first holder lives is refused. The returned function gives the claim back.
 */
export function claimDecision(ports: RunnerPorts, runId: string): () => void {
	const claim = `${process.pid}:${runnerToken}`;
	ports.control.claimDecision(runId, claim, (holder) => {
		if (holder) {
			const [pid, ...token] = holder.split(':');
			if (isRunnerAlive(Number(pid), token.join(':'))) {
				throw new DeskError(
					'run.notAwaitingDecision',
					`A decision on run ${runId} is being made already (process ${pid}).`,
					{ run: runId },
				);
			}
		}
	});
	return () => ports.control.releaseDecision(runId, claim);
}

/** Whether a run_control row claims the shared checkout; a row this desk cannot read is taken to (its run may hold it). */
function mayHoldSharedCheckout(json: string, runId: string): boolean {
	try {
		return readPlacement(json, runId).isolation === 'shared';
	} catch {
		return true;
	}
}
