/** Runs as the protocol and the CLI show them: the Runs view's tree, one run's record, the gate's answer. */

import type {
	ContextPipeline,
	ContextSnapshot,
	Decision,
	Evidence,
	Intent,
	IntentStatus,
	PatchSet,
	Plan,
	Provenance,
	Run,
	Task,
	ToolInvocation,
} from '../ai/types';

/** What the Runs view shows of a run, from the run and what hangs off it. */
export interface RunSummary {
	id: string;
	task: string;
	status: Run['status'];
	started_at: string;
	/** When the run last changed, once it is completed or failed. */
	finished_at?: string;
	duration_ms?: number;
	provider?: string;
	model?: string;
	total_tokens?: number;
	cost_usd?: number;
	patchsets: number;
	evidence: number;
	decision?: Decision['decision_type'];
	/** Validating with its checks done, waiting for the person's decision (the run completes with it). */
	at_gate: boolean;
	/** A landed run: the run of its task that rolled it back. */
	rolled_back_by?: string;
	/** A checkpointed run: the run of its task that resumed from its checkpoint. */
	resumed_by?: string;
	error?: string;
}

export interface TaskView {
	task: Task;
	runs: RunSummary[];
}

export interface IntentView {
	intent: Intent;
	status: Intent['statuses'][number]['status'];
	/** The intent's plan and its earlier revisions, newest first. */
	plans: Plan[];
	tasks: TaskView[];
}

export interface RunsOverview {
	intents: IntentView[];
	/** Tasks that name no intent. */
	tasks: TaskView[];
}

export interface RunDetail {
	run: Run;
	summary: RunSummary;
	task: Task;
	intent?: Intent;
	/** The plan the run started on (`Run.plan`, never rewritten while it runs). */
	plan?: Plan;
	/** Revisions of that plan made during the run (the agent's plan node), oldest first. */
	revisions?: Plan[];
	provenance?: Provenance;
	snapshot?: ContextSnapshot;
	pipeline?: ContextPipeline;
	patchsets: PatchSet[];
	evidence: Evidence[];
	decision?: Decision;
	tool_invocations: ToolInvocation[];
}

/** Resume from Checkpoint: the new run (started by the caller), its task, and the checkpoint it begins from. */
export interface ResumeResult {
	run: string;
	task: string;
	/** The checkpoint commit (git) or the `desk.target_changes` blob (a snapshot target). */
	checkpoint: string;
}

/** What Cancel Task or Cancel Intent ended (glossary: Ending). */
export interface EndingResult {
	/** Runs that were working and were cancelled first. */
	cancelled_runs: string[];
	/** Runs at the gate or failed, undecided, that were abandoned. */
	abandoned_runs: string[];
	/** Tasks that ended Cancelled. */
	tasks: string[];
	/** The intent's status after it (when the task has one). */
	intent_status?: IntentStatus;
}

export interface DecideResult {
	decision: Decision;
	/** Commit on a git target: the commit made; on a snapshot target: the version cut. */
	commit?: string;
	version?: number;
	/** Retry: the new Run of the same Task (started by the caller). */
	new_run?: string;
	/** Rollback: the Run of the same Task that reverted the landed one (its Decision is the rollback). */
	rollback_run?: string;
	/** Abandon on the shared checkout: files put back, and files left because they changed since. */
	restored?: string[];
	left?: string[];
}
