/**
 * The AI object model (glossary: AI objects): the records of an AI-assisted change from the user's request to
 * the committed patch. Field names are the seed's (snake_case), as they are serialised.
 */

/** Numeric ids 8–18 continue git's object types (commit 1, tree 2, blob 3, tag 4, deltas 6 and 7). */
export const aiObjectTypes = {
	intent: 8,
	plan: 9,
	task: 10,
	run: 11,
	patchset: 12,
	evidence: 13,
	decision: 14,
	provenance: 15,
	tool_invocation: 16,
	context_snapshot: 17,
	context_pipeline: 18,
} as const;
export type AiObjectType = keyof typeof aiObjectTypes;

export type ActorKind = 'human' | 'agent' | 'system' | 'mcp_client';
export interface ActorRef {
	kind: ActorKind;
	id: string;
}

export type Visibility = 'private' | 'public';

/** Flattened into every object's JSON. */
export interface Header {
	object_id: string;
	object_type: AiObjectType;
	header_version: number;
	schema_version: number;
	created_at: string;
	updated_at: string;
	created_by: ActorRef;
	visibility: Visibility;
	tags: Record<string, string>;
	external_ids: Record<string, string>;
	/** sha256 of the object's canonical JSON without this field, set by seal(). */
	checksum?: string;
}

export interface ArtifactRef {
	store: string;
	key: string;
	content_type?: string;
	size_bytes?: number;
	/** SHA-256 of the content, hex. */
	hash?: string;
	expires_at?: string;
}

export type IntentStatus = 'draft' | 'active' | 'completed' | 'cancelled';
export type StepStatus = 'pending' | 'progressing' | 'completed' | 'failed' | 'skipped';
export type TaskStatus = 'draft' | 'running' | 'done' | 'failed' | 'cancelled';
export type RunStatus = 'created' | 'patching' | 'validating' | 'completed' | 'failed';
export type ApplyStatus = 'proposed' | 'applied' | 'rejected';

export interface StatusEntry<S extends string> {
	status: S;
	changed_at: string;
	reason?: string;
}

export interface Intent extends Header {
	object_type: 'intent';
	prompt: string;
	content?: string;
	parent?: string;
	commit?: string;
	plan?: string;
	statuses: Array<StatusEntry<IntentStatus>>;
}

export interface PlanStep {
	description: string;
	inputs?: unknown;
	outputs?: unknown;
	checks?: unknown;
	iframes: number[];
	oframes: number[];
	task?: string;
	statuses: Array<StatusEntry<StepStatus>>;
}

export interface Plan extends Header {
	object_type: 'plan';
	previous?: string;
	pipeline?: string;
	/** Half-open range [start, end) of the pipeline's frames visible when the plan was made. */
	fwindow?: [number, number];
	steps: PlanStep[];
}

export type GoalType =
	'feature' | 'bugfix' | 'refactor' | 'docs' | 'perf' | 'test' | 'chore' | 'build' | 'ci' | 'style' | { other: string };

export interface Task extends Header {
	object_type: 'task';
	title: string;
	description?: string;
	goal?: GoalType;
	constraints: string[];
	acceptance_criteria: string[];
	requester?: ActorRef;
	parent?: string;
	intent?: string;
	runs: string[];
	dependencies: string[];
	status: TaskStatus;
}

export interface RunEnvironment {
	os: string;
	arch: string;
	cwd: string;
}

export interface Run extends Header {
	object_type: 'run';
	task: string;
	plan?: string;
	commit: string;
	status: RunStatus;
	snapshot?: string;
	patchsets: string[];
	metrics?: unknown;
	error?: string;
	environment?: RunEnvironment;
}

export type DiffFormat = 'unified' | 'git_diff';
export type ChangeType = 'added' | 'modified' | 'deleted' | 'renamed';

export interface TouchedFile {
	path: string;
	change_type: ChangeType;
	lines_added: number;
	lines_deleted: number;
}

export interface PatchSet extends Header {
	object_type: 'patchset';
	run: string;
	commit: string;
	format: DiffFormat;
	artifact?: ArtifactRef;
	touched: TouchedFile[];
	rationale?: string;
	apply_status: ApplyStatus;
}

export type EvidenceKind = 'test' | 'lint' | 'build' | { other: string };

export interface Evidence extends Header {
	object_type: 'evidence';
	run_id: string;
	patchset_id?: string;
	kind: EvidenceKind;
	tool: string;
	command?: string;
	exit_code?: number;
	summary?: string;
	report_artifacts: ArtifactRef[];
}

export type DecisionType = 'commit' | 'checkpoint' | 'abandon' | 'retry' | 'rollback';

export interface Decision extends Header {
	object_type: 'decision';
	run_id: string;
	decision_type: DecisionType;
	chosen_patchset_id?: string;
	result_commit_sha?: string;
	checkpoint_id?: string;
	rationale?: string;
}

/**
 * Tokens as an agent reports them (glossary: Provenance). The seed's three counts and cost come first;
 * the desk's parts after them are left out when the agent did not report them.
 */
export interface TokenCounts {
	/** Every token the model read, those read from or written to the prompt cache included. */
	input_tokens: number;
	/** Every token the model wrote, its reasoning included. */
	output_tokens: number;
	/** input_tokens + output_tokens (+ other_tokens, when the agent counts tokens that are neither). */
	total_tokens: number;
	cost_usd?: number;
	/** Of input_tokens, those read from the prompt cache. */
	cache_read_tokens?: number;
	/** Of input_tokens, those written to the prompt cache. */
	cache_creation_tokens?: number;
	/** Of output_tokens, those spent reasoning (thinking), where the agent says. */
	reasoning_tokens?: number;
	/** Counted in the agent's total as neither input nor output (Gemini CLI's thoughts and tool-use prompts). */
	other_tokens?: number;
	/** cost_usd was computed from the desk's price table, not given by the agent. */
	cost_estimated?: true;
}

/** One model's share of a run, as the agent reported it. */
export interface ModelUsage extends TokenCounts {
	model: string;
}

/**
 * The seed's TokenUsage, with what an agent reports besides: its counts are the sum of `models`
 * when the agent reported per model.
 */
export interface TokenUsage extends TokenCounts {
	/** Per model, in the order first reported: the main model, a helper model, a subagent's. */
	models?: ModelUsage[];
	/** Model turns (request and response rounds) the agent reported. */
	turns?: number;
	/** How long the agent says it worked, in milliseconds. */
	duration_ms?: number;
	/**
	 * The agent's output ended before its final report (cut, killed, interrupted), or it reports none:
	 * the counts are at least these, and all zero means unknown.
	 */
	incomplete?: true;
	/** The agent's own totals, kept only where they disagree with the sum of its reports per model. */
	agent_totals?: TokenCounts;
}

export interface Provenance extends Header {
	object_type: 'provenance';
	run_id: string;
	provider: string;
	model: string;
	parameters?: unknown;
	temperature?: number;
	max_tokens?: number;
	token_usage?: TokenUsage;
}

export interface IoFootprint {
	paths_read: string[];
	paths_written: string[];
}

export type ToolStatus = 'ok' | 'error';

export interface ToolInvocation extends Header {
	object_type: 'tool_invocation';
	run_id: string;
	tool_name: string;
	io_footprint?: IoFootprint;
	args: unknown;
	status: ToolStatus;
	result_summary?: string;
	artifacts: ArtifactRef[];
	/** The call (a ToolInvocation of the same run) that started the subagent which made this one: the Task or Agent tool's. */
	parent_invocation?: string;
	/** What the subagent this call started spent, its own subagents' included. */
	token_usage?: TokenUsage;
}

export type ContextItemKind = 'file' | 'url' | 'snippet' | 'command' | 'image';

export interface ContextItem {
	kind: ContextItemKind;
	/** Human-readable locator: repo path, URL, command, label. */
	path: string;
	/** Git blob id of the full content at capture time. */
	blob?: string;
	preview?: string;
}

export interface ContextSnapshot extends Header {
	object_type: 'context_snapshot';
	selection_strategy: 'explicit' | 'heuristic';
	items: ContextItem[];
	summary?: string;
}

export type FrameKind =
	| 'intent_analysis'
	| 'step_summary'
	| 'code_change'
	| 'system_state'
	| 'error_recovery'
	| 'checkpoint'
	| 'tool_call'
	| { other: string };

export interface ContextFrame {
	frame_id: number;
	kind: FrameKind;
	summary: string;
	data?: unknown;
	created_at: string;
	token_estimate?: number;
}

export interface ContextPipeline extends Header {
	object_type: 'context_pipeline';
	frames: ContextFrame[];
	next_frame_id: number;
	/** 0 = unlimited. */
	max_frames: number;
	global_summary?: string;
}

export type AiObject =
	| Intent
	| Plan
	| Task
	| Run
	| PatchSet
	| Evidence
	| Decision
	| Provenance
	| ToolInvocation
	| ContextSnapshot
	| ContextPipeline;

/**
 * Why an object of a history ref was not imported (glossary: Run history). Import takes only what
 * could have happened; every other object is refused, by itself, with one of these.
 */
export type HistoryRefusalCode =
	/** Not an AI object this desk reads, or not JSON. */
	| 'unreadable'
	/** Its path names another type or id than it holds, or a folder that is no object type. */
	| 'misplaced'
	/** It carries no checksum, or one its content does not match. */
	| 'bad_checksum'
	/** The same id twice on the ref. */
	| 'duplicate_id'
	/** The stored object with this id is of another type. */
	| 'type_changed'
	/** A field fixed once set (a prompt, a run's task, a decision's type…) differs from the stored one. */
	| 'immutable_changed'
	/** An append-only history (statuses, runs, patchsets, frames…) does not extend the stored one. */
	| 'history_rewritten'
	/** A status the stored one cannot reach along the drawn transitions (completed back to patching). */
	| 'status_backwards'
	/** Older than the stored copy and not an earlier state of it. */
	| 'older_copy_differs'
	/** Names an object neither stored nor taken in the same import, or one of another type or run. */
	| 'unresolved_reference'
	/** A second Decision for a Run (a Run has one). */
	| 'second_decision'
	/** A second Provenance for a Run (a Run has one). */
	| 'second_provenance'
	/** A commit Decision that names no PatchSet. */
	| 'commit_without_patchset';

/** One object of a history ref that import refused, and why, for the person to read. */
export interface HistoryRefusal {
	/** Where on the ref: `<type>/<id>.json`, or a folder's name. */
	path: string;
	object_id?: string;
	object_type?: string;
	code: HistoryRefusalCode;
	/** What is wrong, naming the field and the values. */
	reason: string;
}

/** What a history import did: objects stored (new or later states), already here, refused. */
export interface HistoryImportResult {
	added: number;
	/** The same as stored, or an earlier state of a stored object. */
	unchanged: number;
	refused: HistoryRefusal[];
}
