/** Runs as the protocol and the CLI show them: the Runs view's tree, one run's record, the gate's answer. */

import type {
	ArtifactRef,
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

/**
 * Which process carries a run out, as its `desk.carried_by` tag says (glossary: Carrier): a carrier
 * process of its own, which outlives the window; the window's desk itself, when no carrier could be
 * started (a reload or closing the window stops the run); or the `desk` command line that started it.
 */
export type CarriedBy = 'own process' | 'window' | 'command line';

/** The Run tag naming its {@link CarriedBy}. */
export const carriedByTag = 'desk.carried_by';

/**
 * The data of an agent_message frame of a run's ContextPipeline (`kind: { other: 'agent_message' }`):
 * one message the agent addressed to the person, as it said it (glossary: Conversation).
 */
export interface AgentMessageData {
	/** The run whose agent said it (a retry's run carries on its intent's pipeline). */
	run: string;
	/** The template's node the agent was working on (`plan`, `work`), and which attempt of it. */
	node: string;
	attempt: number;
	/** The message, its secrets scrubbed: whole, or its beginning when `chars` is given. */
	text: string;
	/** The whole message's length in UTF-16 units, when `text` is only its beginning. */
	chars?: number;
	/** The whole message in the blob store (cut with a mark past 1 MiB), when `text` is only its beginning. */
	artifact?: ArtifactRef;
}

/** What the Runs view shows of a run, from the run and what hangs off it. */
export interface RunSummary {
	id: string;
	task: string;
	status: Run['status'];
	started_at: string;
	/** When the agent's work ended: the run reached the gate or failed (a later decision does not move it). */
	finished_at?: string;
	/** The agent's work, from the start to `finished_at`. */
	duration_ms?: number;
	/** How long the run waited for the person's decision, once decided. */
	gate_wait_ms?: number;
	provider?: string;
	model?: string;
	total_tokens?: number;
	/** What the cost is known of: the agent's figures and the estimates (see `cost_estimated`, `unpriced_models`). */
	cost_usd?: number;
	/** Some of the cost was computed from the price table, not given by the agent. */
	cost_estimated?: boolean;
	/** The agent's output ended before its final report of usage: at least these tokens (none counted: unknown). */
	usage_incomplete?: boolean;
	/** Models that spent tokens whose cost is unknown: the agent gave none and the price table has none. */
	unpriced_models?: string[];
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
	/** It failed before its agent did anything (runViews.ts `neverStarted`); the Runs view hides it unless asked. */
	never_started?: true;
}

/**
 * Tokens and cost of several runs added up (a task's, an intent's, a branch's subtree), and how far
 * the sum can be trusted: runs whose usage is incomplete, runs with tokens of unknown cost.
 */
export interface UsageRollup {
	runs: number;
	input_tokens: number;
	output_tokens: number;
	total_tokens: number;
	cache_read_tokens: number;
	cache_creation_tokens: number;
	/** The costs known, added up. */
	cost_usd: number;
	/** Some of it was estimated from the price table. */
	cost_estimated: boolean;
	/** Runs whose usage is at least what is counted (their output ended before the agent's report). */
	incomplete_runs: number;
	/** Runs with tokens whose cost is unknown: the sum of costs is less than what they cost. */
	unpriced_runs: number;
}

export interface TaskView {
	task: Task;
	runs: RunSummary[];
	/** Its runs' usage added up. */
	usage: UsageRollup;
	/**
	 * A branch, or a task whose runs started branches (glossary: Lineage): its runs' usage with every
	 * branch below it (its lineage subtree).
	 */
	subtree_usage?: UsageRollup;
}

export interface IntentView {
	intent: Intent;
	status: Intent['statuses'][number]['status'];
	/** The intent's plan and its earlier revisions, newest first. */
	plans: Plan[];
	tasks: TaskView[];
	/** Its tasks' usage added up. */
	usage: UsageRollup;
}

export interface RunsOverview {
	intents: IntentView[];
	/** Tasks that name no intent. */
	tasks: TaskView[];
	/** Runs left out because they never started (asked without `all`); absent when none were. */
	hidden_runs?: number;
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

/**
 * Whether an agent can start, as far as the desk can tell without starting it (glossary: Agent
 * check): its program, the version it prints, and its sign-in, read from the files and the
 * environment variables the agent would use; `unknown` where the desk cannot tell.
 */
export interface AgentCheck {
	/** The agent's name in the run settings. */
	agent: string;
	command: string;
	/** The program's file: the command's absolute path, or found in the PATH's absolute folders. */
	program?: string;
	/** What a person calls it, for a program the desk knows (Claude Code, Codex, Gemini CLI). */
	product?: string;
	/** The first line of its version, for a program the desk knows and found. */
	version?: string;
	/** What to call it: "Claude Code 2.1.3" (its product and version, the product's name said once), else its command. */
	label: string;
	login: 'signed-in' | 'not-signed-in' | 'unknown';
	/** How it is signed in, why it is not, or why the desk cannot tell, in words. */
	login_detail: string;
	/** What makes it ready, the main one first: a command in a terminal, or a setting to change. */
	fixes: AgentFix[];
	/** When the desk looked: a check is kept a few seconds, never longer (see agentCheck.ts). */
	checked_at: string;
}

export type AgentFix =
	| {
			kind: 'terminal';
			/** The button's words: "Sign In to Claude Code", "Install Codex". */
			title: string;
			/** The shell command the terminal runs. */
			command: string;
			/** What to do in the terminal, when the command alone does not say. */
			hint?: string;
	  }
	| { kind: 'setting'; title: string; setting: string };
