import type { IntentView, RunDetail, RunSummary } from '../../../server/src/protocol/protocol';

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

/** A duration as the views show it: "850 ms", "42 s", "3 min 5 s", "2 h 5 min", "3 d 4 h". */
export function formatDuration(ms: number): string {
	if (ms < 1000) {
		return `${ms} ms`;
	}
	const seconds = Math.round(ms / 1000);
	if (seconds < 3600) {
		return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
	}
	const minutes = Math.floor(seconds / 60);
	return minutes < 24 * 60
		? `${Math.floor(minutes / 60)} h ${minutes % 60} min`
		: `${Math.floor(minutes / 1440)} d ${Math.floor((minutes % 1440) / 60)} h`;
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

/** Another run of the task named as its page is: "Run 3" by its place, or by its id when the task does not list it. */
export function runOfTask(task: Pick<RunDetail['task'], 'runs'>, runId: string): string {
	const at = (task.runs ?? []).indexOf(runId);
	return at >= 0 ? `Run ${at + 1}` : `run ${runId}`;
}

/**
 * How a run and the runs that followed it up are linked (glossary: Checkpoint, Rollback), as run
 * page facts: a resumed or rolled-back run names the run that did it; the run that did names the
 * checkpoint it started from or the landing it undid. Runs are named by their place in the task.
 */
export function followUpFacts(
	d: Pick<RunDetail, 'task' | 'run' | 'summary'>,
): Array<[label: string, text: string | undefined]> {
	const named = (runId: string | undefined): string | undefined =>
		runId === undefined ? undefined : runOfTask(d.task, runId);
	const resumes = named(d.run.tags['desk.resumes']);
	const rollsBack = named(d.run.tags['desk.rolls_back']);
	return [
		['Resumes', resumes && `the checkpoint of ${resumes}: its change was in place before the agent started`],
		['Rolls back', rollsBack && `the landing of ${rollsBack}`],
		['Resumed by', named(d.summary.resumed_by)],
		['Rolled back by', named(d.summary.rolled_back_by)],
	];
}

/** The run as its tab and heading name it: "Run 2", its place among its task's runs (two runs of a task never read alike). */
export function runName(d: Pick<RunDetail, 'task' | 'run' | 'summary'>): string {
	const n = runNumber(d);
	return n !== undefined ? `Run ${n}` : `Run ${d.summary.started_at.slice(0, 16).replace('T', ' ')}`;
}

/** A theme icon and its colour, as the Runs view draws a row's state. */
export type StateIcon = [name: string, color?: string];

/**
 * A run's icon, true to how it ended: only a landing is a green check; an abandoned run is struck
 * out, a checkpointed one kept aside, a retried one handed on, a landing later rolled back undone.
 */
export function runIcon(run: Pick<RunSummary, 'status' | 'decision' | 'at_gate' | 'rolled_back_by'>): StateIcon {
	const state = runState(run);
	if (state === 'running') {
		return ['sync~spin', 'charts.blue'];
	}
	if (state === 'gate') {
		return ['eye', 'charts.yellow'];
	}
	if (run.status === 'failed') {
		return ['error', 'testing.iconFailed'];
	}
	switch (run.decision) {
		case 'commit':
			return run.rolled_back_by ? ['discard', 'disabledForeground'] : ['pass-filled', 'testing.iconPassed'];
		case 'abandon':
			return ['circle-slash', 'disabledForeground'];
		case 'checkpoint':
			return ['bookmark', 'charts.blue'];
		case 'retry':
			return ['debug-restart', 'disabledForeground'];
		case 'rollback':
			return ['discard', 'charts.orange'];
		default:
			return ['circle-large-outline'];
	}
}

/**
 * Where an intent stands as its row says it: its recorded status, and for an active one what its
 * runs are doing now (an agent working, a run waiting for review, the latest run of a task failed,
 * or nothing going on), so that "active" never spins on when no agent works for it.
 */
export function intentState(view: Pick<IntentView, 'status' | 'tasks'>): { words: string; icon: StateIcon } {
	switch (view.status) {
		case 'completed':
			return { words: 'completed', icon: ['pass-filled', 'testing.iconPassed'] };
		case 'cancelled':
			return { words: 'cancelled', icon: ['circle-slash', 'disabledForeground'] };
		case 'draft':
			return { words: 'draft', icon: ['circle-large-outline'] };
	}
	const latest = view.tasks.map((t) => t.runs.at(-1)).filter((r): r is RunSummary => r !== undefined);
	if (latest.some((r) => runState(r) === 'running')) {
		return { words: 'active · an agent is working', icon: ['sync~spin', 'charts.blue'] };
	}
	if (latest.some((r) => runState(r) === 'gate')) {
		return { words: 'active · waiting for review', icon: ['eye', 'charts.yellow'] };
	}
	if (latest.some((r) => r.status === 'failed')) {
		return { words: 'active · its last run failed', icon: ['warning', 'charts.yellow'] };
	}
	return { words: 'active · no agent working', icon: ['circle-large-outline', 'charts.blue'] };
}
