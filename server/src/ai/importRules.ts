/**
 * What a history import may take (glossary: Run history): only what could have happened. Anyone who
 * can push `refs/desk/history` writes what every teammate imports, and the seal is an unkeyed hash,
 * so a resealed object proves nothing about who made it. An object is taken when it is new, or a
 * later state of the stored one: its fixed fields unchanged, its append-only histories extending
 * the stored ones, its statuses reachable along the drawn transitions; what it names must be stored
 * or taken in the same import, and a Run keeps one Decision and one Provenance. Everything else is
 * refused, object by object, with the reason, and nothing of it is applied.
 */
import { canonicalJson } from './canonical';
import { statusMoves, toJson } from './model';
import type {
	AiObject,
	AiObjectType,
	ContextPipeline,
	ContextSnapshot,
	Decision,
	Evidence,
	HistoryRefusal,
	HistoryRefusalCode,
	Intent,
	PatchSet,
	Plan,
	PlanStep,
	Provenance,
	Run,
	StatusEntry,
	Task,
	ToolInvocation,
} from './types';

/** What import reads of the project's stored objects (the caller's transaction). */
export interface StoredAiObjects {
	get(id: string): AiObject | undefined;
	/** The ids of the stored objects of `type` that name `runId` as their run. */
	ofRun(runId: string, type: 'decision' | 'provenance'): string[];
}

export interface ImportJudgement {
	/** New objects and later states of stored ones, in the order they came. */
	accepted: AiObject[];
	/** The same as stored, or an earlier state of the stored object. */
	unchanged: AiObject[];
	refused: HistoryRefusal[];
}

interface Problem {
	code: HistoryRefusalCode;
	message: string;
}

type Resolve = (id: string) => AiObject | undefined;

export function historyPath(object: Pick<AiObject, 'object_type' | 'object_id'>): string {
	return `${object.object_type}/${object.object_id}.json`;
}

/** Judges every incoming object against the stored ones and the rest of the import. */
export function judgeImport(incoming: readonly AiObject[], storedObjects: StoredAiObjects): ImportJudgement {
	const stored = remembered(storedObjects);
	const refused: HistoryRefusal[] = [];
	const refuse = (object: AiObject, problem: Problem): void => {
		refused.push({
			path: historyPath(object),
			object_id: object.object_id,
			object_type: object.object_type,
			code: problem.code,
			reason: problem.message,
		});
	};
	const counts = new Map<string, number>();
	for (const object of incoming) {
		counts.set(object.object_id, (counts.get(object.object_id) ?? 0) + 1);
	}
	const byId = new Map(incoming.map((o) => [o.object_id, o]));
	const batchResolve: Resolve = (id) => byId.get(id) ?? stored.get(id);

	const unchanged: AiObject[] = [];
	let candidates: AiObject[] = [];
	for (const object of incoming) {
		if ((counts.get(object.object_id) ?? 0) > 1) {
			refuse(object, {
				code: 'duplicate_id',
				message: `${object.object_id} is on the ref more than once; which copy is the real one cannot be told.`,
			});
			continue;
		}
		const before = stored.get(object.object_id);
		const problem = before ? againstStored(before, object, batchResolve) : newObjectProblem(object);
		if (problem === 'unchanged') {
			unchanged.push(object);
		} else if (problem) {
			refuse(object, problem);
		} else {
			candidates.push(object);
		}
	}

	candidates = candidates.filter((object) => {
		const problem = oneVerdictPerRun(object, candidates, stored);
		if (problem) {
			refuse(object, problem);
		}
		return !problem;
	});

	// A refused object no longer answers for what names it: repeat until nothing more falls.
	for (let changed = true; changed;) {
		changed = false;
		const taken = new Map(candidates.map((o) => [o.object_id, o]));
		const resolve: Resolve = (id) => taken.get(id) ?? stored.get(id);
		candidates = candidates.filter((object) => {
			const problem = unresolved(object, resolve);
			if (problem) {
				refuse(object, problem);
				changed = true;
			}
			return !problem;
		});
	}
	return { accepted: candidates, unchanged, refused };
}

/** Each stored object read once: the references of every pass of the judgement ask again. */
function remembered(stored: StoredAiObjects): StoredAiObjects {
	const read = new Map<string, AiObject | undefined>();
	return {
		get(id) {
			if (!read.has(id)) {
				read.set(id, stored.get(id));
			}
			return read.get(id);
		},
		ofRun: (runId, type) => stored.ofRun(runId, type),
	};
}

/** Against the stored copy: `unchanged`, a problem, or undefined when it is a later state. */
function againstStored(before: AiObject, after: AiObject, resolve: Resolve): Problem | 'unchanged' | undefined {
	if (before.object_type !== after.object_type) {
		return {
			code: 'type_changed',
			message: `${after.object_id} is stored as a ${before.object_type}; the ref says it is a ${after.object_type}.`,
		};
	}
	if (sameContent(before, after)) {
		return 'unchanged';
	}
	if (after.updated_at > before.updated_at) {
		return laterState(before, after, resolve);
	}
	const forward = after.updated_at === before.updated_at ? laterState(before, after, resolve) : undefined;
	if (after.updated_at === before.updated_at && !forward) {
		return undefined;
	}
	if (!laterState(after, before, resolve)) {
		return 'unchanged'; // An earlier state of what is stored: a teammate's older export.
	}
	return (
		forward ?? {
			code: 'older_copy_differs',
			message: `${describe(after)} is older than the stored copy (${after.updated_at} < ${before.updated_at}) and is not an earlier state of it.`,
		}
	);
}

function sameContent(a: AiObject, b: AiObject): boolean {
	const { checksum: _a, ...left } = toJson(a);
	const { checksum: _b, ...right } = toJson(b);
	return canonicalJson(left) === canonicalJson(right);
}

function describe(object: AiObject): string {
	return `${object.object_type} ${object.object_id}`;
}

// ---------------------------------------------------------------------------------------------
// A later state of one object

/** Undefined when `after` could follow `before`; else the first thing that could not have happened. */
export function laterState(before: AiObject, after: AiObject, resolve: Resolve): Problem | undefined {
	const what = describe(after);
	const header =
		fixed(what, 'created_at', before.created_at, after.created_at) ??
		fixed(what, 'created_by', before.created_by, after.created_by);
	if (header) {
		return header;
	}
	switch (before.object_type) {
		case 'intent':
			return laterIntent(before, after as Intent);
		case 'plan':
			return laterPlan(before, after as Plan);
		case 'task':
			return laterTask(before, after as Task);
		case 'run':
			return laterRun(before, after as Run, resolve);
		case 'patchset':
			return laterPatchSet(before, after as PatchSet);
		case 'evidence':
			return laterEvidence(before, after as Evidence);
		case 'decision':
			return laterDecision(before, after as Decision);
		case 'provenance':
			return fixed(what, 'run_id', before.run_id, (after as Provenance).run_id);
		case 'tool_invocation':
			return laterToolInvocation(before, after as ToolInvocation);
		case 'context_snapshot':
			return laterSnapshot(before, after as ContextSnapshot);
		case 'context_pipeline':
			return laterPipeline(before, after as ContextPipeline);
	}
}

function first(...checks: Array<() => Problem | undefined>): Problem | undefined {
	for (const check of checks) {
		const problem = check();
		if (problem) {
			return problem;
		}
	}
	return undefined;
}

function same(a: unknown, b: unknown): boolean {
	return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

function shown(value: unknown): string {
	const text = value === undefined ? '(none)' : JSON.stringify(value);
	return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** A field set when the object was made: it never changes. */
function fixed(what: string, field: string, before: unknown, after: unknown): Problem | undefined {
	return same(before, after)
		? undefined
		: {
				code: 'immutable_changed',
				message: `${what}: ${field} is fixed once made; the ref changes it from ${shown(before)} to ${shown(after)}.`,
			};
}

/** A field set once, later than its object: unset may become set, never another value. */
function setOnce(what: string, field: string, before: unknown, after: unknown): Problem | undefined {
	return before === undefined ? undefined : fixed(what, field, before, after);
}

/** An append-only list: every stored entry is still there, in its place. */
function extending(
	what: string,
	field: string,
	before: readonly unknown[],
	after: readonly unknown[],
): Problem | undefined {
	const kept = before.every((entry, i) => i < after.length && same(entry, after[i]));
	return kept
		? undefined
		: {
				code: 'history_rewritten',
				message: `${what}: ${field} is append-only; the ref drops or changes its stored entries (${before.length} stored, ${after.length} on the ref).`,
			};
}

function reachable<S extends string>(moves: Record<S, S[]>, from: S, to: S): boolean {
	const seen = new Set<S>([from]);
	const queue: S[] = [from];
	while (queue.length > 0) {
		const at = queue.shift()!;
		if (at === to) {
			return true;
		}
		for (const next of moves[at] ?? []) {
			if (!seen.has(next)) {
				seen.add(next);
				queue.push(next);
			}
		}
	}
	return false;
}

function forwardStatus<S extends string>(
	what: string,
	field: string,
	moves: Record<S, S[]>,
	before: S,
	after: S,
): Problem | undefined {
	return reachable(moves, before, after)
		? undefined
		: {
				code: 'status_backwards',
				message: `${what}: ${field} ${before} cannot become ${after}; the drawn transitions lead from ${before} only to ${reachableFrom(moves, before)}.`,
			};
}

function reachableFrom<S extends string>(moves: Record<S, S[]>, from: S): string {
	const later = (Object.keys(moves) as S[]).filter((s) => s !== from && reachable(moves, from, s));
	return later.length > 0 ? later.join(', ') : 'nothing (it is final)';
}

/** A status history: it extends the stored one, and each entry it adds is a drawn move. */
function statusHistory<S extends string>(
	what: string,
	field: string,
	moves: Record<S, S[]>,
	before: ReadonlyArray<StatusEntry<S>>,
	after: ReadonlyArray<StatusEntry<S>>,
): Problem | undefined {
	return extending(what, field, before, after) ?? legalMoves(what, field, moves, after, before.length);
}

function legalMoves<S extends string>(
	what: string,
	field: string,
	moves: Record<S, S[]>,
	entries: ReadonlyArray<StatusEntry<S>>,
	from: number,
): Problem | undefined {
	for (let i = Math.max(1, from); i < entries.length; i++) {
		const [a, b] = [entries[i - 1]!.status, entries[i]!.status];
		if (!moves[a]?.includes(b)) {
			return {
				code: 'status_backwards',
				message: `${what}: ${field}[${i}] moves from ${a} to ${b}, which the drawn transitions do not allow.`,
			};
		}
	}
	return undefined;
}

function laterIntent(before: Intent, after: Intent): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'prompt', before.prompt, after.prompt),
		() => fixed(what, 'parent', before.parent, after.parent),
		() => setOnce(what, 'content', before.content, after.content),
		() => setOnce(what, 'commit', before.commit, after.commit),
		() => statusHistory(what, 'statuses', statusMoves.intent, before.statuses, after.statuses),
	);
}

function laterStep(what: string, before: PlanStep, after: PlanStep): Problem | undefined {
	return first(
		() => fixed(what, 'description', before.description, after.description),
		() => setOnce(what, 'task', before.task, after.task),
		() => extending(what, 'iframes', before.iframes, after.iframes),
		() => extending(what, 'oframes', before.oframes, after.oframes),
		() => statusHistory(what, 'statuses', statusMoves.step, before.statuses, after.statuses),
	);
}

function laterPlan(before: Plan, after: Plan): Problem | undefined {
	const what = describe(after);
	const plan = first(
		() => fixed(what, 'previous', before.previous, after.previous),
		() => setOnce(what, 'pipeline', before.pipeline, after.pipeline),
		() => setOnce(what, 'fwindow', before.fwindow, after.fwindow),
		() =>
			after.steps.length < before.steps.length
				? {
						code: 'history_rewritten',
						message: `${what}: steps are only added; the ref has ${after.steps.length} of the ${before.steps.length} stored.`,
					}
				: undefined,
	);
	if (plan) {
		return plan;
	}
	for (const [i, step] of before.steps.entries()) {
		const problem = laterStep(`${what} step ${i}`, step, after.steps[i]!);
		if (problem) {
			return problem;
		}
	}
	return undefined;
}

function laterTask(before: Task, after: Task): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'title', before.title, after.title),
		() => fixed(what, 'parent', before.parent, after.parent),
		() => setOnce(what, 'intent', before.intent, after.intent),
		() => setOnce(what, 'requester', before.requester, after.requester),
		() => extending(what, 'runs', before.runs, after.runs),
		() => extending(what, 'dependencies', before.dependencies, after.dependencies),
		() => extending(what, 'constraints', before.constraints, after.constraints),
		() => extending(what, 'acceptance_criteria', before.acceptance_criteria, after.acceptance_criteria),
		() => forwardStatus(what, 'status', statusMoves.task, before.status, after.status),
	);
}

function laterRun(before: Run, after: Run, resolve: Resolve): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'task', before.task, after.task),
		() => fixed(what, 'commit', before.commit, after.commit),
		() => setOnce(what, 'snapshot', before.snapshot, after.snapshot),
		() => setOnce(what, 'environment', before.environment, after.environment),
		() => setOnce(what, 'error', before.error, after.error),
		() => laterRunPlan(what, before.plan, after.plan, resolve),
		() => extending(what, 'patchsets', before.patchsets, after.patchsets),
		() => forwardStatus(what, 'status', statusMoves.run, before.status, after.status),
	);
}

/** A run's plan is set once, or moves to a later revision of it (the plan node revises it). */
function laterRunPlan(
	what: string,
	before: string | undefined,
	after: string | undefined,
	resolve: Resolve,
): Problem | undefined {
	if (before === undefined || before === after) {
		return undefined;
	}
	const seen = new Set<string>();
	for (let id = after; id !== undefined && !seen.has(id);) {
		seen.add(id);
		const plan = resolve(id);
		id = plan?.object_type === 'plan' ? plan.previous : undefined;
		if (id === before) {
			return undefined;
		}
	}
	return {
		code: 'immutable_changed',
		message: `${what}: plan ${shown(before)} may only give way to a later revision of it; ${shown(after)} is none.`,
	};
}

function laterPatchSet(before: PatchSet, after: PatchSet): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'run', before.run, after.run),
		() => fixed(what, 'commit', before.commit, after.commit),
		() => fixed(what, 'format', before.format, after.format),
		() => setOnce(what, 'artifact', before.artifact, after.artifact),
		() => forwardStatus(what, 'apply_status', statusMoves.apply, before.apply_status, after.apply_status),
	);
}

function laterEvidence(before: Evidence, after: Evidence): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'run_id', before.run_id, after.run_id),
		() => fixed(what, 'patchset_id', before.patchset_id, after.patchset_id),
		() => fixed(what, 'kind', before.kind, after.kind),
		() => fixed(what, 'tool', before.tool, after.tool),
		() => setOnce(what, 'command', before.command, after.command),
		() => setOnce(what, 'exit_code', before.exit_code, after.exit_code),
		() => extending(what, 'report_artifacts', before.report_artifacts, after.report_artifacts),
	);
}

function laterDecision(before: Decision, after: Decision): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'run_id', before.run_id, after.run_id),
		() => fixed(what, 'decision_type', before.decision_type, after.decision_type),
		() => fixed(what, 'chosen_patchset_id', before.chosen_patchset_id, after.chosen_patchset_id),
		() => setOnce(what, 'result_commit_sha', before.result_commit_sha, after.result_commit_sha),
		() => setOnce(what, 'checkpoint_id', before.checkpoint_id, after.checkpoint_id),
	);
}

function laterToolInvocation(before: ToolInvocation, after: ToolInvocation): Problem | undefined {
	const what = describe(after);
	return first(
		() => fixed(what, 'run_id', before.run_id, after.run_id),
		() => fixed(what, 'tool_name', before.tool_name, after.tool_name),
		() => fixed(what, 'args', before.args, after.args),
		() => fixed(what, 'parent_invocation', before.parent_invocation, after.parent_invocation),
		() =>
			extending(
				what,
				'io_footprint.paths_read',
				before.io_footprint?.paths_read ?? [],
				after.io_footprint?.paths_read ?? [],
			),
		() =>
			extending(
				what,
				'io_footprint.paths_written',
				before.io_footprint?.paths_written ?? [],
				after.io_footprint?.paths_written ?? [],
			),
		() => extending(what, 'artifacts', before.artifacts, after.artifacts),
	);
}

function laterSnapshot(before: ContextSnapshot, after: ContextSnapshot): Problem | undefined {
	const what = describe(after);
	const snapshot = first(
		() => fixed(what, 'selection_strategy', before.selection_strategy, after.selection_strategy),
		() => setOnce(what, 'summary', before.summary, after.summary),
		// Catch-up adds what a branch is told before each input to the run's snapshot: items only grow.
		() =>
			after.items.length >= before.items.length
				? undefined
				: {
						code: 'history_rewritten',
						message: `${what}: items are append-only; the ref has ${after.items.length} of the ${before.items.length} stored.`,
					},
	);
	if (snapshot) {
		return snapshot;
	}
	for (const [i, item] of before.items.entries()) {
		const other = after.items[i]!;
		const problem = first(
			() => fixed(what, `items[${i}].kind`, item.kind, other.kind),
			() => fixed(what, `items[${i}].path`, item.path, other.path),
			() => setOnce(what, `items[${i}].blob`, item.blob, other.blob),
			() => setOnce(what, `items[${i}].preview`, item.preview, other.preview),
		);
		if (problem) {
			return problem;
		}
	}
	return undefined;
}

/**
 * Frames are appended with ids that only grow; a stored frame stays as it was or is evicted, and a
 * protected frame (IntentAnalysis, Checkpoint) is never evicted.
 */
function laterPipeline(before: ContextPipeline, after: ContextPipeline): Problem | undefined {
	const what = describe(after);
	const rewritten = (message: string): Problem => ({ code: 'history_rewritten', message: `${what}: ${message}` });
	const fields = first(
		() => fixed(what, 'max_frames', before.max_frames, after.max_frames),
		() =>
			after.next_frame_id < before.next_frame_id
				? rewritten(
						`next_frame_id only grows; the ref moves it back from ${before.next_frame_id} to ${after.next_frame_id}.`,
					)
				: undefined,
	);
	if (fields) {
		return fields;
	}
	const kept = new Map(after.frames.map((f) => [f.frame_id, f]));
	for (const frame of before.frames) {
		const now = kept.get(frame.frame_id);
		if (now ? !same(frame, now) : isProtectedKind(frame.kind)) {
			return rewritten(`frame ${frame.frame_id} is ${now ? 'changed' : 'gone, and it is protected from eviction'}.`);
		}
	}
	const stored = new Set(before.frames.map((f) => f.frame_id));
	for (const frame of after.frames) {
		if (frame.frame_id < before.next_frame_id && !stored.has(frame.frame_id)) {
			return rewritten(
				`frame ${frame.frame_id} appears in the past: it was not there when ${before.next_frame_id} frames had been numbered.`,
			);
		}
	}
	return undefined;
}

function isProtectedKind(kind: unknown): boolean {
	return kind === 'intent_analysis' || kind === 'checkpoint';
}

// ---------------------------------------------------------------------------------------------
// A new object by itself

function newObjectProblem(object: AiObject): Problem | undefined {
	const what = describe(object);
	switch (object.object_type) {
		case 'intent':
			return (
				startsAt(what, 'statuses', 'draft', object.statuses) ??
				legalMoves(what, 'statuses', statusMoves.intent, object.statuses, 1)
			);
		case 'plan':
			for (const [i, step] of object.steps.entries()) {
				const problem =
					startsAt(`${what} step ${i}`, 'statuses', 'pending', step.statuses) ??
					legalMoves(`${what} step ${i}`, 'statuses', statusMoves.step, step.statuses, 1);
				if (problem) {
					return problem;
				}
			}
			return undefined;
		case 'decision':
			return object.decision_type === 'commit' && object.chosen_patchset_id === undefined
				? {
						code: 'commit_without_patchset',
						message: `${what}: a commit Decision names the PatchSet it applies; this one names none.`,
					}
				: undefined;
		default:
			return undefined;
	}
}

function startsAt<S extends string>(
	what: string,
	field: string,
	initial: S,
	entries: ReadonlyArray<StatusEntry<S>>,
): Problem | undefined {
	const start = entries[0]?.status;
	return start === undefined || start === initial
		? undefined
		: { code: 'status_backwards', message: `${what}: ${field} begins at ${start}; every one begins at ${initial}.` };
}

// ---------------------------------------------------------------------------------------------
// Between objects

/** A Run has one Decision and one Provenance: a new one beside another (stored or imported) is refused. */
function oneVerdictPerRun(
	object: AiObject,
	candidates: readonly AiObject[],
	stored: StoredAiObjects,
): Problem | undefined {
	if (object.object_type !== 'decision' && object.object_type !== 'provenance') {
		return undefined;
	}
	const type = object.object_type;
	if (stored.get(object.object_id)) {
		return undefined; // A later state of the stored one; its run_id is fixed.
	}
	const others = new Set(stored.ofRun(object.run_id, type));
	for (const other of candidates) {
		if (other.object_type === type && other.run_id === object.run_id && other.object_id !== object.object_id) {
			others.add(other.object_id);
		}
	}
	others.delete(object.object_id);
	if (others.size === 0) {
		return undefined;
	}
	return {
		code: type === 'decision' ? 'second_decision' : 'second_provenance',
		message: `${describe(object)}: run ${shown(object.run_id)} has its ${type} already (${[...others].join(', ')}); a Run has one.`,
	};
}

interface Reference {
	field: string;
	id: string;
	type: AiObjectType;
	/** What the named object must say back (a PatchSet chosen for run R is a PatchSet of run R). */
	check?: (target: AiObject) => string | undefined;
}

function referencesOf(object: AiObject): Reference[] {
	const refs: Reference[] = [];
	const add = (field: string, id: string | undefined, type: AiObjectType, check?: Reference['check']): void => {
		if (id !== undefined) {
			refs.push({ field, id, type, ...(check ? { check } : {}) });
		}
	};
	const ofRun = (runId: string) => (target: AiObject) =>
		target.object_type === 'patchset' && target.run !== runId
			? `it is a PatchSet of run ${shown(target.run)}`
			: undefined;
	switch (object.object_type) {
		case 'intent':
			add('parent', object.parent, 'intent');
			add('plan', object.plan, 'plan');
			break;
		case 'plan':
			add('previous', object.previous, 'plan');
			add('pipeline', object.pipeline, 'context_pipeline');
			object.steps.forEach((step, i) => add(`steps[${i}].task`, step.task, 'task'));
			break;
		case 'task':
			add('parent', object.parent, 'task');
			add('intent', object.intent, 'intent');
			object.runs.forEach((id, i) =>
				add(`runs[${i}]`, id, 'run', (t) =>
					t.object_type === 'run' && t.task !== object.object_id ? `it is a run of task ${shown(t.task)}` : undefined,
				),
			);
			object.dependencies.forEach((id, i) => add(`dependencies[${i}]`, id, 'task'));
			break;
		case 'run':
			add('task', object.task, 'task');
			add('plan', object.plan, 'plan');
			add('snapshot', object.snapshot, 'context_snapshot');
			object.patchsets.forEach((id, i) => add(`patchsets[${i}]`, id, 'patchset', ofRun(object.object_id)));
			break;
		case 'patchset':
			add('run', object.run, 'run');
			break;
		case 'evidence':
			add('run_id', object.run_id, 'run');
			add('patchset_id', object.patchset_id, 'patchset', ofRun(object.run_id));
			break;
		case 'decision':
			add('run_id', object.run_id, 'run');
			add('chosen_patchset_id', object.chosen_patchset_id, 'patchset', ofRun(object.run_id));
			break;
		case 'provenance':
			add('run_id', object.run_id, 'run');
			break;
		case 'tool_invocation':
			add('run_id', object.run_id, 'run');
			// A subagent's call hangs under a call of the same run: the one that started the subagent.
			add('parent_invocation', object.parent_invocation, 'tool_invocation', (target) =>
				target.object_id === object.object_id
					? 'it is the call itself'
					: target.object_type === 'tool_invocation' && target.run_id !== object.run_id
						? `it is a call of run ${shown(target.run_id)}`
						: undefined,
			);
			break;
		default:
			break;
	}
	return refs;
}

function unresolved(object: AiObject, resolve: Resolve): Problem | undefined {
	for (const ref of referencesOf(object)) {
		const target = resolve(ref.id);
		const wrong =
			target === undefined
				? 'it is neither stored nor taken in this import'
				: target.object_type !== ref.type
					? `it is a ${target.object_type}, not a ${ref.type}`
					: ref.check?.(target);
		if (wrong) {
			return {
				code: 'unresolved_reference',
				message: `${describe(object)}: ${ref.field} names ${shown(ref.id)}, but ${wrong}.`,
			};
		}
	}
	return undefined;
}
