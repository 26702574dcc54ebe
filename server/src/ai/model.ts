import { DeskError } from '../core/errors';
import { canonicalJson, sha256Hex } from './canonical';
import { uuidPattern, uuidv7 } from './ids';
import { tokenCounts } from './tokenUsage';
import {
	aiObjectTypes,
	type ActorKind,
	type ActorRef,
	type AiObject,
	type AiObjectType,
	type ApplyStatus,
	type ArtifactRef,
	type ContextFrame,
	type ContextItem,
	type ContextPipeline,
	type ContextSnapshot,
	type Decision,
	type DecisionType,
	type Evidence,
	type EvidenceKind,
	type FrameKind,
	type GoalType,
	type Header,
	type Intent,
	type IntentStatus,
	type PatchSet,
	type Plan,
	type PlanStep,
	type Provenance,
	type Run,
	type RunStatus,
	type StepStatus,
	type Task,
	type TaskStatus,
	type ToolInvocation,
	type ToolStatus,
	type TokenUsage,
} from './types';

/**
 * Operations of the AI object model (glossary: AI objects), over the plain records of ./types: constructors,
 * status transitions exactly as the seed draws them (an illegal one is a typed error and changes
 * nothing), append-only histories, seal and checksum, and the object-type registry.
 */

export const headerVersion = 1;
/** The schema version every object type is at; objects of another are refused. */
export const schemaVersion = 1;

// ---------------------------------------------------------------------------------------------
// Actors, headers, seal

const actorKinds: readonly ActorKind[] = ['human', 'agent', 'system', 'mcp_client'];

export function actor(kind: ActorKind, id: string): ActorRef {
	if (!actorKinds.includes(kind)) {
		throw new DeskError(
			'ai.badActor',
			`No actor kind ${JSON.stringify(kind)}; it is one of ${actorKinds.join(', ')}.`,
			{ kind },
		);
	}
	if (id.trim() === '' || id.length > 200 || /[\u0000-\u001f\u007f]/.test(id)) {
		throw new DeskError('ai.badActor', 'An actor id is 1 to 200 characters with no control characters.', {
			id: id.slice(0, 200),
		});
	}
	return { kind, id };
}

function newHeader<T extends AiObjectType>(type: T, createdBy: ActorRef, now: Date): Header & { object_type: T } {
	const at = now.toISOString();
	return {
		object_id: uuidv7(now.getTime()),
		object_type: type,
		header_version: headerVersion,
		schema_version: schemaVersion,
		created_at: at,
		updated_at: at,
		created_by: createdBy,
		visibility: 'private',
		tags: {},
		external_ids: {},
	};
}

/** Marks a change: the update time moves and the seal no longer holds until seal() again. */
function touch(object: AiObject, now: Date): void {
	object.updated_at = now.toISOString();
	delete object.checksum;
}

/** Sets the checksum: sha256 of the object's canonical JSON without it. */
export function seal<T extends AiObject>(object: T): T {
	object.checksum = contentChecksum(object);
	return object;
}

export function contentChecksum(object: AiObject): string {
	const { checksum: _omitted, ...rest } = toJson(object) as Record<string, unknown> & { checksum?: string };
	return sha256Hex(canonicalJson(rest));
}

/** True when the object carries a checksum and its content still matches it. */
export function verifyChecksum(object: AiObject): boolean {
	return object.checksum !== undefined && object.checksum === contentChecksum(object);
}

/** The content hash of the object as stored: sha256 of its serialised bytes. */
export function objectHash(object: AiObject): string {
	return sha256Hex(toBytes(object));
}

// ---------------------------------------------------------------------------------------------
// The object-type registry

const gitPackTypes: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4, ofs_delta: 6, ref_delta: 7 };

export function objectTypeId(type: AiObjectType): number {
	return aiObjectTypes[type];
}

export function objectTypeName(id: number): AiObjectType | undefined {
	return (Object.keys(aiObjectTypes) as AiObjectType[]).find((name) => aiObjectTypes[name] === id);
}

/** A git pack header holds 3-bit types (1–7); AI objects have none and are refused clearly. */
export function toPackType(type: string): number {
	const git = gitPackTypes[type];
	if (git !== undefined) {
		return git;
	}
	if (type in aiObjectTypes) {
		throw new DeskError(
			'ai.packType',
			`${type} is an AI object type (${aiObjectTypes[type as AiObjectType]}); git packs cannot hold it. Use the desk's object store.`,
			{ type },
		);
	}
	throw new DeskError('ai.badObject', `Unknown object type ${JSON.stringify(type)}.`, { type });
}

// ---------------------------------------------------------------------------------------------
// Transitions

const intentMoves: Record<IntentStatus, IntentStatus[]> = {
	draft: ['active', 'cancelled'],
	active: ['completed', 'cancelled'],
	completed: [],
	cancelled: [],
};
const stepMoves: Record<StepStatus, StepStatus[]> = {
	pending: ['progressing', 'failed', 'skipped'],
	progressing: ['completed', 'failed'],
	completed: [],
	failed: [],
	skipped: [],
};
// Running → Cancelled is the person's Cancel Task while a run works (glossary: Ending): the seed draws
// Cancelled from Draft only, and Failed would say the work failed when the person stopped it.
const taskMoves: Record<TaskStatus, TaskStatus[]> = {
	draft: ['running', 'failed', 'cancelled'],
	running: ['done', 'failed', 'cancelled'],
	done: [],
	failed: [],
	cancelled: [],
};
// Validating → Patching is the end-to-end flow's retry within a Run (Evidence fails, a new PatchSet).
const runMoves: Record<RunStatus, RunStatus[]> = {
	created: ['patching'],
	patching: ['validating', 'failed'],
	validating: ['completed', 'failed', 'patching'],
	completed: [],
	failed: [],
};
const applyMoves: Record<ApplyStatus, ApplyStatus[]> = { proposed: ['applied', 'rejected'], applied: [], rejected: [] };

/** The drawn graphs, read by import to judge whether a stored status could have become another. */
export const statusMoves = { intent: intentMoves, step: stepMoves, task: taskMoves, run: runMoves, apply: applyMoves };

function checkMove<S extends string>(what: string, moves: Record<S, S[]>, from: S, to: S): void {
	if (!moves[from]?.includes(to)) {
		const allowed = moves[from]?.length ? moves[from].join(', ') : 'nothing (it is final)';
		throw new DeskError(
			'ai.illegalTransition',
			`${what} cannot go from ${from} to ${to}; from ${from} it may go to ${allowed}.`,
			{ object: what, from, to },
		);
	}
}

// ---------------------------------------------------------------------------------------------
// Intent

export function newIntent(createdBy: ActorRef, prompt: string, options: { parent?: Intent; now?: Date } = {}): Intent {
	if (prompt.trim() === '') {
		throw new DeskError('ai.badObject', 'An intent needs the prompt it records.');
	}
	const now = options.now ?? new Date();
	return {
		...newHeader('intent', createdBy, now),
		prompt,
		...(options.parent ? { parent: options.parent.object_id } : {}),
		statuses: [{ status: 'draft', changed_at: now.toISOString() }],
	};
}

export function intentStatus(intent: Intent): IntentStatus {
	return intent.statuses[intent.statuses.length - 1]?.status ?? 'draft';
}

export function setIntentStatus(intent: Intent, to: IntentStatus, reason?: string, now = new Date()): void {
	checkMove('intent', intentMoves, intentStatus(intent), to);
	if (to === 'active' && intent.content === undefined) {
		throw new DeskError('ai.illegalTransition', 'An intent becomes active once its analysed content is set.', {
			object: 'intent',
			from: intentStatus(intent),
			to,
		});
	}
	intent.statuses.push({ status: to, changed_at: now.toISOString(), ...(reason ? { reason } : {}) });
	touch(intent, now);
}

export function setIntentContent(intent: Intent, content: string | undefined, now = new Date()): void {
	intent.content = content;
	touch(intent, now);
}

export function setIntentPlan(intent: Intent, plan: Plan, now = new Date()): void {
	intent.plan = plan.object_id;
	touch(intent, now);
}

export function setIntentCommit(intent: Intent, commit: string, now = new Date()): void {
	intent.commit = commit;
	touch(intent, now);
}

// ---------------------------------------------------------------------------------------------
// Plan and steps

export function newPlan(
	createdBy: ActorRef,
	options: { pipeline?: ContextPipeline; fwindow?: [number, number]; now?: Date } = {},
): Plan {
	const plan: Plan = { ...newHeader('plan', createdBy, options.now ?? new Date()), steps: [] };
	if (options.pipeline) {
		plan.pipeline = options.pipeline.object_id;
	}
	if (options.fwindow) {
		setFwindow(plan, options.fwindow);
	}
	return plan;
}

export function setFwindow(plan: Plan, fwindow: [number, number] | undefined, now = new Date()): void {
	if (
		fwindow &&
		(!Number.isInteger(fwindow[0]) || !Number.isInteger(fwindow[1]) || fwindow[0] < 0 || fwindow[1] < fwindow[0])
	) {
		throw new DeskError(
			'ai.badObject',
			`fwindow is a half-open range [start, end) with 0 ≤ start ≤ end, not [${fwindow.join(', ')}].`,
			{ fwindow },
		);
	}
	plan.fwindow = fwindow;
	touch(plan, now);
}

/** A revision of the plan: a new Plan whose `previous` is this one, on the same pipeline and window. */
export function newRevision(plan: Plan, createdBy: ActorRef, now = new Date()): Plan {
	return {
		...newHeader('plan', createdBy, now),
		previous: plan.object_id,
		...(plan.pipeline ? { pipeline: plan.pipeline } : {}),
		...(plan.fwindow ? { fwindow: [...plan.fwindow] as [number, number] } : {}),
		steps: [],
	};
}

export function newPlanStep(description: string, now = new Date()): PlanStep {
	return { description, iframes: [], oframes: [], statuses: [{ status: 'pending', changed_at: now.toISOString() }] };
}

export function addStep(plan: Plan, step: PlanStep, now = new Date()): void {
	plan.steps.push(step);
	touch(plan, now);
}

export function stepStatus(step: PlanStep): StepStatus {
	return step.statuses[step.statuses.length - 1]?.status ?? 'pending';
}

export function setStepStatus(step: PlanStep, to: StepStatus, reason?: string, now = new Date()): void {
	checkMove('plan step', stepMoves, stepStatus(step), to);
	step.statuses.push({ status: to, changed_at: now.toISOString(), ...(reason ? { reason } : {}) });
}

/** A step of `plan` moves: its history grows and the plan's update time with it (a step has no header of its own). */
export function movePlanStep(plan: Plan, step: PlanStep, to: StepStatus, reason?: string, now = new Date()): void {
	setStepStatus(step, to, reason, now);
	touch(plan, now);
}

/**
 * The frames a step of `plan` read, by stable id, each once. Ids are given in the order the frames
 * were made, so the list only grows at its end (an import takes it as append-only).
 */
export function addFramesRead(plan: Plan, step: PlanStep, ids: readonly number[], now = new Date()): void {
	for (const id of ids) {
		if (!step.iframes.includes(id)) {
			step.iframes.push(id);
		}
	}
	touch(plan, now);
}

/**
 * The frames a step of `plan` made: every frame of `pipeline` numbered from `from` (where the step
 * began) that it does not list yet, evicted or not. Ids only grow, so the list stays in order and
 * only grows at its end.
 */
export function addFramesMade(
	plan: Plan,
	step: PlanStep,
	pipeline: ContextPipeline,
	from: number,
	now = new Date(),
): void {
	for (let id = Math.max(from, (step.oframes.at(-1) ?? -1) + 1); id < pipeline.next_frame_id; id++) {
		step.oframes.push(id);
	}
	touch(plan, now);
}

/** Recursive decomposition: a step hands its work to a new sub-Task. */
export function spawnSubTask(
	step: PlanStep,
	createdBy: ActorRef,
	title: string,
	options: { parent?: Task; now?: Date } = {},
): Task {
	const task = newTask(createdBy, title, { now: options.now, ...(options.parent ? { parent: options.parent } : {}) });
	step.task = task.object_id;
	return task;
}

// ---------------------------------------------------------------------------------------------
// Task

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Characters as a person counts them: an emoji with its modifiers or a letter with its accents is one. */
export function graphemeLength(text: string): number {
	let count = 0;
	for (const _ of graphemes.segment(text)) {
		count++;
	}
	return count;
}

/** How much of a text is segmented at a time (see cutGraphemes). */
const segmentWindow = 4096;

/**
 * The first `max` characters of `text` as a person counts them, never half an emoji or a letter
 * without its accent. The text is segmented a window at a time: each step of V8's segmenter costs
 * time in proportion to the whole text it was given, so the first 4,000 characters of a 2 MB message
 * took minutes. A window's last character may be cut by the window: it is read again from its start
 * in the next one (only one longer than a whole window, a pile of combining marks, is cut).
 */
export function cutGraphemes(text: string, max: number): string {
	let out = '';
	let count = 0;
	let at = 0;
	while (at < text.length && count < max) {
		const window = text.slice(at, at + segmentWindow);
		const isLast = at + window.length >= text.length;
		let taken = 0;
		for (const { segment, index } of graphemes.segment(window)) {
			if (count >= max || (!isLast && index > 0 && index + segment.length >= window.length)) {
				break;
			}
			out += segment;
			count++;
			taken = index + segment.length;
		}
		at += taken;
	}
	return out;
}

/** The longest task title: the seed's "< 100 chars", counted in graphemes. */
export const taskTitleMax = 99;

/** A task title from a longer text (a ticket's first line): cut on a grapheme boundary. */
export function titleFrom(text: string, fallback: string): string {
	return cutGraphemes(text.trim().split('\n', 1)[0]!.trim(), taskTitleMax).trim() || fallback;
}

export function newTask(
	createdBy: ActorRef,
	title: string,
	options: {
		goal?: GoalType;
		parent?: Task;
		intent?: Intent;
		description?: string;
		constraints?: string[];
		acceptanceCriteria?: string[];
		now?: Date;
	} = {},
): Task {
	const length = graphemeLength(title);
	if (title.trim() === '' || length > taskTitleMax) {
		throw new DeskError(
			'ai.badObject',
			`A task title is a short summary of 1 to ${taskTitleMax} characters (this one has ${length}).`,
			{ length },
		);
	}
	return {
		...newHeader('task', createdBy, options.now ?? new Date()),
		title,
		...(options.description ? { description: options.description } : {}),
		...(options.goal ? { goal: options.goal } : {}),
		constraints: [...(options.constraints ?? [])],
		acceptance_criteria: [...(options.acceptanceCriteria ?? [])],
		...(options.parent ? { parent: options.parent.object_id } : {}),
		...(options.intent
			? { intent: options.intent.object_id }
			: options.parent?.intent
				? { intent: options.parent.intent }
				: {}),
		runs: [],
		dependencies: [],
		status: 'draft',
	};
}

export function setTaskStatus(task: Task, to: TaskStatus, now = new Date()): void {
	checkMove('task', taskMoves, task.status, to);
	task.status = to;
	touch(task, now);
}

/** Task ↔ Run: the run must be this task's; runs are appended, never removed or reordered. */
export function addRun(task: Task, run: Run, now = new Date()): void {
	if (run.task !== task.object_id) {
		throw new DeskError('ai.badObject', `Run ${run.object_id} belongs to task ${run.task}, not ${task.object_id}.`, {
			run: run.object_id,
			task: task.object_id,
		});
	}
	if (!task.runs.includes(run.object_id)) {
		task.runs.push(run.object_id);
		touch(task, now);
	}
}

export function addConstraint(task: Task, constraint: string, now = new Date()): void {
	task.constraints.push(constraint);
	touch(task, now);
}

export function addAcceptanceCriterion(task: Task, criterion: string, now = new Date()): void {
	task.acceptance_criteria.push(criterion);
	touch(task, now);
}

export function addDependency(task: Task, dependency: Task, now = new Date()): void {
	if (dependency.object_id === task.object_id) {
		throw new DeskError('ai.badObject', 'A task cannot depend on itself.', { task: task.object_id });
	}
	if (!task.dependencies.includes(dependency.object_id)) {
		task.dependencies.push(dependency.object_id);
		touch(task, now);
	}
}

// ---------------------------------------------------------------------------------------------
// Run and what hangs off it

export function newRun(
	createdBy: ActorRef,
	task: Task,
	commit: string,
	options: { plan?: Plan; now?: Date } = {},
): Run {
	return {
		...newHeader('run', createdBy, options.now ?? new Date()),
		task: task.object_id,
		...(options.plan ? { plan: options.plan.object_id } : {}),
		commit,
		status: 'created',
		patchsets: [],
	};
}

export function setRunStatus(run: Run, to: RunStatus, now = new Date()): void {
	checkMove('run', runMoves, run.status, to);
	run.status = to;
	touch(run, now);
}

export function failRun(run: Run, error: string, now = new Date()): void {
	checkMove('run', runMoves, run.status, 'failed');
	run.error = error;
	run.status = 'failed';
	touch(run, now);
}

/** Run ↔ PatchSet: appended in the order the agent made them. */
export function addPatchSet(run: Run, patchset: PatchSet, now = new Date()): void {
	if (patchset.run !== run.object_id) {
		throw new DeskError(
			'ai.badObject',
			`PatchSet ${patchset.object_id} belongs to run ${patchset.run}, not ${run.object_id}.`,
			{ patchset: patchset.object_id, run: run.object_id },
		);
	}
	if (!run.patchsets.includes(patchset.object_id)) {
		run.patchsets.push(patchset.object_id);
		touch(run, now);
	}
}

export function newPatchSet(
	createdBy: ActorRef,
	run: Run,
	options: {
		commit?: string;
		format?: PatchSet['format'];
		artifact?: ArtifactRef;
		rationale?: string;
		now?: Date;
	} = {},
): PatchSet {
	return {
		...newHeader('patchset', createdBy, options.now ?? new Date()),
		run: run.object_id,
		commit: options.commit ?? run.commit,
		format: options.format ?? 'git_diff',
		...(options.artifact ? { artifact: options.artifact } : {}),
		touched: [],
		...(options.rationale ? { rationale: options.rationale } : {}),
		apply_status: 'proposed',
	};
}

export function setApplyStatus(patchset: PatchSet, to: ApplyStatus, now = new Date()): void {
	checkMove('patchset', applyMoves, patchset.apply_status, to);
	patchset.apply_status = to;
	touch(patchset, now);
}

export function setRationale(patchset: PatchSet, rationale: string, now = new Date()): void {
	patchset.rationale = rationale;
	touch(patchset, now);
}

export function newEvidence(
	createdBy: ActorRef,
	run: Run,
	kind: EvidenceKind,
	tool: string,
	options: { patchset?: PatchSet; command?: string; exitCode?: number; summary?: string; now?: Date } = {},
): Evidence {
	return {
		...newHeader('evidence', createdBy, options.now ?? new Date()),
		run_id: run.object_id,
		...(options.patchset ? { patchset_id: options.patchset.object_id } : {}),
		kind,
		tool,
		...(options.command !== undefined ? { command: options.command } : {}),
		...(options.exitCode !== undefined ? { exit_code: options.exitCode } : {}),
		...(options.summary !== undefined ? { summary: options.summary } : {}),
		report_artifacts: [],
	};
}

export function newDecision(
	createdBy: ActorRef,
	run: Run,
	type: DecisionType,
	options: { chosen?: PatchSet; resultCommit?: string; checkpointId?: string; rationale?: string; now?: Date } = {},
): Decision {
	if (type === 'commit' && !options.chosen) {
		throw new DeskError('ai.badObject', 'A Commit decision names the PatchSet it applies.', { run: run.object_id });
	}
	if (options.chosen && options.chosen.run !== run.object_id) {
		throw new DeskError('ai.badObject', `PatchSet ${options.chosen.object_id} is not of run ${run.object_id}.`, {
			run: run.object_id,
		});
	}
	return {
		...newHeader('decision', createdBy, options.now ?? new Date()),
		run_id: run.object_id,
		decision_type: type,
		...(options.chosen ? { chosen_patchset_id: options.chosen.object_id } : {}),
		...(options.resultCommit ? { result_commit_sha: options.resultCommit } : {}),
		...(options.checkpointId ? { checkpoint_id: options.checkpointId } : {}),
		...(options.rationale ? { rationale: options.rationale } : {}),
	};
}

export function newProvenance(
	createdBy: ActorRef,
	run: Run,
	provider: string,
	model: string,
	now = new Date(),
): Provenance {
	return { ...newHeader('provenance', createdBy, now), run_id: run.object_id, provider, model };
}

/** Token usage with its total computed, so it can never disagree with its parts. */
export function setTokenUsage(
	provenance: Provenance,
	input: number,
	output: number,
	costUsd?: number,
	now = new Date(),
): void {
	setUsage(
		provenance,
		tokenCounts({
			input_tokens: input,
			output_tokens: output,
			...(costUsd !== undefined ? { cost_usd: costUsd } : {}),
		}),
		now,
	);
}

/**
 * The run's whole usage (glossary: Provenance), per model with its totals, as `usageOfModels` and
 * `addUsage` (tokenUsage.ts) make it: its counts checked again, its totals computed again from its parts.
 */
export function setUsage(provenance: Provenance, usage: TokenUsage, now = new Date()): void {
	provenance.token_usage = checkedUsage(usage);
	touch(provenance, now);
}

/** The usage with every count checked and every total computed from its parts. */
export function checkedUsage(usage: TokenUsage): TokenUsage {
	const checked: TokenUsage = { ...usage, ...tokenCounts(usage) };
	if (usage.models) {
		checked.models = usage.models.map((m) => ({ model: m.model, ...tokenCounts(m) }));
	}
	if (usage.agent_totals) {
		checked.agent_totals = tokenCounts(usage.agent_totals);
	}
	return checked;
}

export function newToolInvocation(
	createdBy: ActorRef,
	run: Run,
	toolName: string,
	args: unknown,
	options: {
		status?: ToolStatus;
		read?: string[];
		written?: string[];
		resultSummary?: string;
		/** The call that started the subagent making this one (a ToolInvocation of the same run). */
		parent?: ToolInvocation;
		now?: Date;
	} = {},
): ToolInvocation {
	if (options.parent && options.parent.run_id !== run.object_id) {
		throw new DeskError('ai.badObject', `ToolInvocation ${options.parent.object_id} is not of run ${run.object_id}.`, {
			run: run.object_id,
		});
	}
	const footprint =
		options.read?.length || options.written?.length
			? { io_footprint: { paths_read: options.read ?? [], paths_written: options.written ?? [] } }
			: {};
	return {
		...newHeader('tool_invocation', createdBy, options.now ?? new Date()),
		run_id: run.object_id,
		tool_name: toolName,
		...footprint,
		// What the tool was called with, as sent (null and empty values too); only none at all is {}.
		args: args === undefined ? {} : args,
		status: options.status ?? 'ok',
		...(options.resultSummary !== undefined ? { result_summary: options.resultSummary } : {}),
		artifacts: [],
		...(options.parent ? { parent_invocation: options.parent.object_id } : {}),
	};
}

export function newContextSnapshot(
	createdBy: ActorRef,
	strategy: ContextSnapshot['selection_strategy'],
	items: ContextItem[],
	options: { summary?: string; now?: Date } = {},
): ContextSnapshot {
	return {
		...newHeader('context_snapshot', createdBy, options.now ?? new Date()),
		selection_strategy: strategy,
		items: items.map((i) => ({ ...i })),
		...(options.summary ? { summary: options.summary } : {}),
	};
}

// ---------------------------------------------------------------------------------------------
// ContextPipeline

const protectedKinds: ReadonlySet<string> = new Set(['intent_analysis', 'checkpoint']);

export function isProtectedFrame(kind: FrameKind): boolean {
	return typeof kind === 'string' && protectedKinds.has(kind);
}

export function newContextPipeline(
	createdBy: ActorRef,
	options: { maxFrames?: number; now?: Date } = {},
): ContextPipeline {
	const maxFrames = options.maxFrames ?? 0;
	if (!Number.isInteger(maxFrames) || maxFrames < 0) {
		throw new DeskError('ai.badObject', `max_frames is 0 (unlimited) or a positive count, not ${maxFrames}.`, {
			max_frames: maxFrames,
		});
	}
	return {
		...newHeader('context_pipeline', createdBy, options.now ?? new Date()),
		frames: [],
		next_frame_id: 0,
		max_frames: maxFrames,
	};
}

/**
 * Appends a frame and returns its stable id. Past max_frames the oldest frame that is not
 * protected (IntentAnalysis, Checkpoint) is evicted; ids of the others never change.
 */
export function pushFrame(
	pipeline: ContextPipeline,
	kind: FrameKind,
	summary: string,
	options: { data?: unknown; tokenEstimate?: number; now?: Date } = {},
): number {
	const now = options.now ?? new Date();
	const frame: ContextFrame = {
		frame_id: pipeline.next_frame_id,
		kind,
		summary,
		...(options.data !== undefined ? { data: options.data } : {}),
		created_at: now.toISOString(),
		...(options.tokenEstimate !== undefined ? { token_estimate: options.tokenEstimate } : {}),
	};
	pipeline.next_frame_id++;
	pipeline.frames.push(frame);
	if (pipeline.max_frames > 0 && pipeline.frames.length > pipeline.max_frames) {
		const oldest = pipeline.frames.findIndex((f) => !isProtectedFrame(f.kind));
		if (oldest >= 0) {
			pipeline.frames.splice(oldest, 1);
		}
	}
	touch(pipeline, now);
	return frame.frame_id;
}

export function frameById(pipeline: ContextPipeline, id: number): ContextFrame | undefined {
	return pipeline.frames.find((f) => f.frame_id === id);
}

// ---------------------------------------------------------------------------------------------
// ArtifactRef

/** The content is the one the reference names: its SHA-256 (and size, when recorded) match. */
export function verifyIntegrity(ref: ArtifactRef, content: Uint8Array): boolean {
	if (ref.hash === undefined) {
		return false;
	}
	if (ref.size_bytes !== undefined && ref.size_bytes !== content.length) {
		return false;
	}
	return sha256Hex(content) === ref.hash.toLowerCase();
}

/** Two references to the same content (by hash), wherever it is stored. */
export function contentEq(a: ArtifactRef, b: ArtifactRef): boolean {
	return a.hash !== undefined && b.hash !== undefined && a.hash.toLowerCase() === b.hash.toLowerCase();
}

export function artifactFor(content: Uint8Array, store: string, key: string, contentType?: string): ArtifactRef {
	return {
		store,
		key,
		...(contentType ? { content_type: contentType } : {}),
		size_bytes: content.length,
		hash: sha256Hex(content),
	};
}

// ---------------------------------------------------------------------------------------------
// Serialisation

/**
 * Field names that objects were once written under; they are still read (serde `alias`). The new
 * name always wins when both are present.
 */
export const fieldAliases: Partial<Record<AiObjectType, Record<string, string>>> = {
	evidence: { run: 'run_id', patchset: 'patchset_id', reports: 'report_artifacts' },
	decision: { run: 'run_id', chosen_patchset: 'chosen_patchset_id', result_commit: 'result_commit_sha' },
	provenance: { run: 'run_id', usage: 'token_usage' },
	tool_invocation: { run: 'run_id', tool: 'tool_name' },
	patchset: { status: 'apply_status' },
};

const listFields: Record<AiObjectType, string[]> = {
	intent: ['statuses'],
	plan: ['steps'],
	task: ['constraints', 'acceptance_criteria', 'runs', 'dependencies'],
	run: ['patchsets'],
	patchset: ['touched'],
	evidence: ['report_artifacts'],
	decision: [],
	provenance: [],
	tool_invocation: ['artifacts'],
	context_snapshot: ['items'],
	context_pipeline: ['frames'],
};

const requiredFields: Record<AiObjectType, string[]> = {
	intent: ['prompt'],
	plan: [],
	task: ['title', 'status'],
	run: ['task', 'commit', 'status'],
	patchset: ['run', 'commit', 'format', 'apply_status'],
	evidence: ['run_id', 'kind', 'tool'],
	decision: ['run_id', 'decision_type'],
	provenance: ['run_id', 'provider', 'model'],
	tool_invocation: ['run_id', 'tool_name', 'status'],
	context_snapshot: ['selection_strategy'],
	context_pipeline: ['next_frame_id', 'max_frames'],
};

/**
 * Fields whose value is what an agent, a tool or a run sent (JSON of their own schema): written as
 * sent, empty lists and nulls inside them kept. The seed's "omit empty" convention is for the
 * model's own optional fields, not for data carried in them.
 */
const carriedDataFields: ReadonlySet<string> = new Set([
	'args',
	'data',
	'parameters',
	'metrics',
	'inputs',
	'outputs',
	'checks',
]);

/** JSON as the seed writes it: the model's optional fields and empty lists and maps are left out; carried data is kept whole. */
export function toJson(object: AiObject): Record<string, unknown> {
	return prune(object) as Record<string, unknown>;
}

export function toBytes(object: AiObject): Buffer {
	return Buffer.from(canonicalJson(toJson(object)), 'utf8');
}

function prune(value: unknown): unknown {
	if (Array.isArray(value)) {
		return value.map(prune);
	}
	if (value !== null && typeof value === 'object') {
		const out: Record<string, unknown> = {};
		for (const [key, v] of Object.entries(value)) {
			if (v === undefined) {
				continue;
			}
			if (carriedDataFields.has(key)) {
				out[key] = v;
				continue;
			}
			if (v === null || (Array.isArray(v) && v.length === 0)) {
				continue;
			}
			if (
				typeof v === 'object' &&
				!Array.isArray(v) &&
				Object.keys(v).length === 0 &&
				(key === 'tags' || key === 'external_ids')
			) {
				continue;
			}
			out[key] = prune(v);
		}
		return out;
	}
	return value;
}

/** Reads an object back: old field names accepted, defaults filled, unknown versions refused. */
export function fromJson(value: unknown): AiObject {
	if (value === null || typeof value !== 'object' || Array.isArray(value)) {
		throw new DeskError('ai.badObject', 'An AI object is a JSON object.');
	}
	const input = value as Record<string, unknown>;
	const type = input['object_type'];
	if (typeof type !== 'string' || !(type in aiObjectTypes)) {
		throw new DeskError('ai.badObject', `Unknown object_type ${JSON.stringify(type)}.`, { object_type: type });
	}
	const objectType = type as AiObjectType;
	if (input['header_version'] !== headerVersion) {
		throw new DeskError(
			'ai.unknownSchema',
			`${objectType} has header_version ${JSON.stringify(input['header_version'])}; this desk reads ${headerVersion}.`,
			{ object_type: objectType, header_version: input['header_version'] },
		);
	}
	if (input['schema_version'] !== schemaVersion) {
		throw new DeskError(
			'ai.unknownSchema',
			`${objectType} has schema_version ${JSON.stringify(input['schema_version'])}; this desk reads ${schemaVersion}.`,
			{ object_type: objectType, schema_version: input['schema_version'] },
		);
	}
	const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
	for (const [key, v] of Object.entries(input)) {
		if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
			continue;
		}
		out[key] = v;
	}
	for (const [old, current] of Object.entries(fieldAliases[objectType] ?? {})) {
		if (out[old] !== undefined && out[current] === undefined) {
			out[current] = out[old];
		}
		delete out[old];
	}
	for (const field of ['object_id', 'created_at', 'updated_at', 'created_by', ...requiredFields[objectType]]) {
		if (out[field] === undefined) {
			throw new DeskError('ai.badObject', `${objectType} has no ${field}.`, { object_type: objectType, field });
		}
	}
	if (typeof out['object_id'] !== 'string' || !uuidPattern.test(out['object_id'])) {
		throw new DeskError('ai.badObject', `${objectType} has no valid object_id.`, { object_type: objectType });
	}
	for (const field of listFields[objectType]) {
		out[field] ??= [];
		if (!Array.isArray(out[field])) {
			throw new DeskError('ai.badObject', `${objectType}.${field} must be a list.`, { object_type: objectType, field });
		}
	}
	out['tags'] ??= {};
	out['external_ids'] ??= {};
	out['visibility'] ??= 'private';
	// Empty lists inside nested records were left out too: put them back.
	if (objectType === 'plan') {
		for (const step of out['steps'] as Array<Record<string, unknown>>) {
			step['iframes'] ??= [];
			step['oframes'] ??= [];
			step['statuses'] ??= [];
		}
	}
	if (objectType === 'tool_invocation' && out['io_footprint'] && typeof out['io_footprint'] === 'object') {
		const footprint = out['io_footprint'] as Record<string, unknown>;
		footprint['paths_read'] ??= [];
		footprint['paths_written'] ??= [];
	}
	return { ...out } as unknown as AiObject;
}

export function fromBytes(bytes: Uint8Array): AiObject {
	let value: unknown;
	try {
		value = JSON.parse(Buffer.from(bytes).toString('utf8'));
	} catch {
		throw new DeskError('ai.badObject', 'An AI object is JSON; these bytes are not.');
	}
	return fromJson(value);
}
