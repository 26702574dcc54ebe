import type { RunDetail, RunSummary } from '../../../server/src/protocol/protocol';

/* How the views and the run page say where a run stands and how long it took (no VS Code import). */

/**
 * Where a run stands for the person: an agent is carrying it out (created, patching, validating), it
 * waits at the gate (validated, no decision yet; it completes with the decision), it failed with no
 * decision yet, or it is decided.
 */
export type RunState = 'running' | 'gate' | 'failed' | 'decided';

export function runState(run: Pick<RunSummary, 'status' | 'decision' | 'at_gate'>): RunState {
	if (run.decision) {
		return 'decided';
	}
	return run.at_gate ? 'gate' : run.status === 'failed' ? 'failed' : 'running';
}

/** What a decision did, in the words the views use. */
export const decisionWords: Record<NonNullable<RunSummary['decision']>, string> = {
	commit: 'landed',
	retry: 'retried',
	abandon: 'abandoned',
	checkpoint: 'checkpointed',
	rollback: 'rolled back a landing',
};

/** The run's status as the views say it: "patching", "waiting for review", "completed · landed". */
export function runStatusText(
	run: Pick<RunSummary, 'status' | 'decision' | 'at_gate' | 'rolled_back_by' | 'resumed_by'>,
): string {
	const state = runState(run);
	// What a later run of the task did with this one's verdict (glossary: Rollback, Checkpoint).
	const later = run.rolled_back_by ? ', then rolled back' : run.resumed_by ? ', then resumed' : '';
	return state === 'gate'
		? 'waiting for review'
		: run.decision
			? `${run.status} · ${decisionWords[run.decision]}${later}`
			: run.status;
}

/** A duration as the views show it: "850 ms", "42 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
	if (ms < 1000) {
		return `${ms} ms`;
	}
	const seconds = Math.round(ms / 1000);
	return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** What the badge and the status bar say of `count` runs waiting at the gate; undefined for none. */
export function waitingText(count: number): { status: string; tooltip: string } | undefined {
	if (count <= 0) {
		return undefined;
	}
	const runs = count === 1 ? '1 run waits' : `${count} runs wait`;
	return { status: `$(git-pull-request) ${count} to review`, tooltip: `Agent Desk: ${runs} for your review` };
}

/** A run's place among its task's runs, from 1 (a retry is the next); undefined when the task does not list it. */
export function runNumber(d: Pick<RunDetail, 'task' | 'run'>): number | undefined {
	const at = (d.task.runs ?? []).indexOf(d.run.object_id);
	return at >= 0 ? at + 1 : undefined;
}

/** The run as its tab and heading name it: "Run 2", its place among its task's runs (two runs of a task never read alike). */
export function runName(d: Pick<RunDetail, 'task' | 'run' | 'summary'>): string {
	const n = runNumber(d);
	return n !== undefined ? `Run ${n}` : `Run ${d.summary.started_at.slice(0, 16).replace('T', ' ')}`;
}
