import type { AiStore } from '../store/aiStore';
import type { ArtifactRef, Evidence, Intent, Plan, Provenance, Run, Task, TokenUsage } from '../ai/types';
import { intentStatus } from '../ai/model';
import { summaryAgentUsages } from '../ai/tokenUsage';
import { lineageKindTag } from '../lineage/types';
import type { RunDetail, RunsOverview, RunSummary, TaskView, UsageRollup } from './types';

export function runSummary(store: AiStore, run: Run): RunSummary {
	const provenance = store.runProvenance(run.object_id);
	const decision = store.runDecision(run.object_id);
	const evidence = store.runEvidence(run.object_id);
	const atGate = isAtGate(run);
	const finished = run.status === 'completed' || run.status === 'failed' || atGate;
	const summary: RunSummary = {
		id: run.object_id,
		task: run.task,
		status: run.status,
		started_at: run.created_at,
		patchsets: run.patchsets.length,
		evidence: evidence.length,
		at_gate: atGate,
	};
	if (finished) {
		// The agent's work ends where the run reached the gate or failed, not at the decision that
		// came later: the wait for the person is said apart (a run does not grow while it waits).
		const decidedAt = decision ? Date.parse(decision.created_at) : undefined;
		const workEnd =
			decidedAt === undefined ? Date.parse(run.updated_at) : lastWorkAt(store, run, evidence, provenance, decidedAt);
		summary.finished_at = new Date(workEnd).toISOString();
		summary.duration_ms = Math.max(0, workEnd - Date.parse(run.created_at));
		if (decidedAt !== undefined) {
			summary.gate_wait_ms = Math.max(0, decidedAt - workEnd);
		}
	}
	if (provenance) {
		summary.provider = provenance.provider;
		summary.model = provenance.model;
		const usage = provenance.token_usage;
		if (usage) {
			summary.total_tokens = usage.total_tokens;
			if (usage.cost_usd !== undefined) {
				summary.cost_usd = usage.cost_usd;
			}
			if (usage.cost_estimated) {
				summary.cost_estimated = true;
			}
			if (usage.incomplete) {
				summary.usage_incomplete = true;
			}
			const unpriced = unpricedModels(usage);
			if (unpriced.length > 0) {
				summary.unpriced_models = unpriced;
			}
		}
	}
	if (decision) {
		summary.decision = decision.decision_type;
		const followUp =
			decision.decision_type === 'commit'
				? followUpRun(store, run, rollsBackTag)
				: decision.decision_type === 'checkpoint'
					? followUpRun(store, run, resumesTag)
					: undefined;
		if (followUp) {
			summary[decision.decision_type === 'commit' ? 'rolled_back_by' : 'resumed_by'] = followUp.object_id;
		}
	}
	if (run.error) {
		summary.error = run.error;
	}
	if (neverStarted(store, run)) {
		summary.never_started = true;
	}
	return summary;
}

/**
 * When the agent's work on a decided run last left a trace (its PatchSets, Evidence, tool calls and
 * usage), no later than the decision; the decision's time when it left none.
 */
function lastWorkAt(
	store: AiStore,
	run: Run,
	evidence: readonly Evidence[],
	provenance: Provenance | undefined,
	decidedAt: number,
): number {
	const times = [
		...store.runPatchSets(run).map((p) => p.created_at),
		...evidence.map((e) => e.created_at),
		...store.runToolInvocations(run.object_id).map((t) => t.updated_at),
		provenance?.updated_at,
	]
		.filter((t): t is string => t !== undefined)
		.map((t) => Date.parse(t))
		.filter((t) => Number.isFinite(t) && t <= decidedAt);
	return times.length > 0 ? Math.max(...times) : decidedAt;
}

/**
 * A run that failed before its agent did anything (glossary: Agent check): the agent could not be
 * started, or it stopped at once (not signed in, a wrong argument) — no PatchSet, no tool call, no
 * check, no token spent — and the person did not cancel it. The Runs view does not list it unless
 * asked: an attempt that never began is no part of the task's history a person looks back on.
 */
export function neverStarted(store: AiStore, run: Run): boolean {
	if (run.status !== 'failed' || run.patchsets.length > 0 || run.error?.startsWith('cancelled:')) {
		return false;
	}
	if ((store.runProvenance(run.object_id)?.token_usage?.total_tokens ?? 0) > 0) {
		return false;
	}
	return store.runEvidence(run.object_id).length === 0 && store.runToolInvocations(run.object_id).length === 0;
}

/** Models of a usage that spent tokens at a cost unknown (the agent gave none, the price table has none). */
function unpricedModels(usage: TokenUsage): string[] {
	const models = usage.models ?? [{ model: 'unknown', ...usage }];
	return models.filter((m) => m.total_tokens > 0 && m.cost_usd === undefined).map((m) => m.model);
}

const noUsage: UsageRollup = {
	runs: 0,
	input_tokens: 0,
	output_tokens: 0,
	total_tokens: 0,
	cache_read_tokens: 0,
	cache_creation_tokens: 0,
	cost_usd: 0,
	cost_estimated: false,
	incomplete_runs: 0,
	unpriced_runs: 0,
};

/** One run's usage as a rollup of one (a run that recorded none yet counts with none). */
function runRollup(usage: TokenUsage | undefined): UsageRollup {
	return {
		runs: 1,
		input_tokens: usage?.input_tokens ?? 0,
		output_tokens: usage?.output_tokens ?? 0,
		total_tokens: usage?.total_tokens ?? 0,
		cache_read_tokens: usage?.cache_read_tokens ?? 0,
		cache_creation_tokens: usage?.cache_creation_tokens ?? 0,
		cost_usd: usage?.cost_usd ?? 0,
		cost_estimated: usage?.cost_estimated === true,
		incomplete_runs: usage?.incomplete ? 1 : 0,
		unpriced_runs: usage && unpricedModels(usage).length > 0 ? 1 : 0,
	};
}

/** Rollups added up (glossary: Provenance): tokens and known costs summed, the runs that make the sum uncertain counted. */
export function addRollups(parts: readonly UsageRollup[]): UsageRollup {
	return parts.reduce(
		(sum, part) => ({
			runs: sum.runs + part.runs,
			input_tokens: sum.input_tokens + part.input_tokens,
			output_tokens: sum.output_tokens + part.output_tokens,
			total_tokens: sum.total_tokens + part.total_tokens,
			cache_read_tokens: sum.cache_read_tokens + part.cache_read_tokens,
			cache_creation_tokens: sum.cache_creation_tokens + part.cache_creation_tokens,
			cost_usd: Math.round((sum.cost_usd + part.cost_usd) * 1e9) / 1e9,
			cost_estimated: sum.cost_estimated || part.cost_estimated,
			incomplete_runs: sum.incomplete_runs + part.incomplete_runs,
			unpriced_runs: sum.unpriced_runs + part.unpriced_runs,
		}),
		noUsage,
	);
}

/**
 * The Runs view's tree: intents (newest first) with their plans and tasks, and tasks of no intent,
 * each task with its runs and their usage added up; a branch's task (and a task whose runs started
 * branches) also with its lineage subtree's (glossary: Lineage), the branches below it by their
 * tasks' `parent`. Runs that never started are left out unless `all` (a task or intent left with
 * none goes too), and counted in `hidden_runs`.
 */
export function runsOverview(store: AiStore, options: { all?: boolean } = {}): RunsOverview {
	let hidden = 0;
	const shown = (runs: RunSummary[]): RunSummary[] => {
		if (options.all) {
			return runs;
		}
		const kept = runs.filter((r) => !r.never_started);
		hidden += runs.length - kept.length;
		return kept;
	};
	/** A task whose every run never started (and that has some) is not listed. */
	const listed = (view: TaskView, all: number): boolean => view.runs.length > 0 || all === 0;
	const tasks = store.list<Task>('task');
	const own = new Map<string, UsageRollup>();
	const ownUsage = (task: Task): UsageRollup => {
		let usage = own.get(task.object_id);
		if (!usage) {
			usage = addRollups(store.taskRuns(task).map((run) => runRollup(store.runProvenance(run.object_id)?.token_usage)));
			own.set(task.object_id, usage);
		}
		return usage;
	};
	const branchesBelow = new Map<string, Task[]>();
	for (const task of tasks) {
		if (task.tags[lineageKindTag] === 'branch' && task.parent) {
			branchesBelow.set(task.parent, [...(branchesBelow.get(task.parent) ?? []), task]);
		}
	}
	/**
	 * What summary agents spent memorizing the task's landings: in its subtree's total, never a run of
	 * its own. Read once per task, as its own usage is (each ancestor's subtree adds it again).
	 */
	const summaries = new Map<string, UsageRollup[]>();
	const summariesOf = (task: Task): UsageRollup[] => {
		let spent = summaries.get(task.object_id);
		if (!spent) {
			spent = store
				.taskRuns(task)
				.flatMap((run) => summaryAgentUsages(store.runToolInvocations(run.object_id)))
				.map((usage) => ({ ...runRollup(usage), runs: 0 }));
			summaries.set(task.object_id, spent);
		}
		return spent;
	};
	const subtree = (task: Task, seen: Set<string>): UsageRollup => {
		seen.add(task.object_id);
		const below = (branchesBelow.get(task.object_id) ?? []).filter((b) => !seen.has(b.object_id));
		return addRollups([ownUsage(task), ...summariesOf(task), ...below.map((b) => subtree(b, seen))]);
	};
	const taskView = (task: Task): TaskView => {
		const runs = shown(store.taskRuns(task).map((run) => runSummary(store, run)));
		const view: TaskView = { task, runs, usage: ownUsage(task) };
		if (task.tags[lineageKindTag] === 'branch' || branchesBelow.has(task.object_id)) {
			view.subtree_usage = subtree(task, new Set());
		}
		return view;
	};
	const listedViews = (of: Task[]): TaskView[] =>
		of.map((task) => [taskView(task), task.runs.length] as const).flatMap(([v, all]) => (listed(v, all) ? [v] : []));
	const intents = store.list<Intent>('intent').reverse();
	const overview: RunsOverview = {
		intents: intents.flatMap((intent) => {
			const plan = intent.plan ? store.get<Plan>(intent.plan) : undefined;
			const all = store.intentTasks(intent.object_id);
			const views = listedViews(all);
			if (views.length === 0 && all.length > 0) {
				return [];
			}
			return [
				{
					intent,
					status: intentStatus(intent),
					plans: plan ? store.planRevisions(plan) : [],
					tasks: views,
					usage: addRollups(views.map((v) => v.usage)),
				},
			];
		}),
		tasks: listedViews(tasks.filter((t) => !t.intent).reverse()),
	};
	if (hidden > 0) {
		overview.hidden_runs = hidden;
	}
	return overview;
}

export function runDetail(store: AiStore, runId: string): RunDetail {
	const run = store.require<Run>(runId, 'run');
	const task = store.require<Task>(run.task, 'task');
	const plan = run.plan ? store.get<Plan>(run.plan) : undefined;
	const detail: RunDetail = {
		run,
		summary: runSummary(store, run),
		task,
		patchsets: store.runPatchSets(run),
		evidence: store.runEvidence(run.object_id),
		tool_invocations: store.runToolInvocations(run.object_id),
	};
	const intent = task.intent ? store.get<Intent>(task.intent) : undefined;
	const provenance = store.runProvenance(run.object_id);
	const snapshot = store.runSnapshot(run);
	const pipeline = store.pipeline(plan?.pipeline);
	const decision = store.runDecision(run.object_id);
	const revisions = plan ? revisionsOf(store, plan) : [];
	Object.assign(
		detail,
		intent && { intent },
		plan && { plan },
		revisions.length > 0 && { revisions },
		provenance && { provenance },
		snapshot && { snapshot },
		pipeline && { pipeline },
		decision && { decision },
	);
	return detail;
}

/**
 * The texts a run stored in the blob store, as its own records name them (glossary: Conversation):
 * its tool calls' outputs, its checks' logs, its PatchSets' diffs, its long messages and its nodes'
 * transcripts. A reader of a run's texts reads these and no other blob.
 */
export function runArtifacts(store: AiStore, runId: string): ArtifactRef[] {
	const run = store.require<Run>(runId, 'run');
	const refs: ArtifactRef[] = [
		...store.runToolInvocations(runId).flatMap((t) => t.artifacts),
		...store.runEvidence(runId).flatMap((e) => e.report_artifacts),
		...store.runPatchSets(run).flatMap((p) => (p.artifact ? [p.artifact] : [])),
	];
	const nodes = (run.metrics as { nodes?: unknown } | undefined)?.nodes;
	for (const node of Array.isArray(nodes) ? nodes : []) {
		const transcript = (node as { transcript?: unknown } | null)?.transcript;
		if (isArtifactRef(transcript)) {
			refs.push(transcript);
		}
	}
	const plan = run.plan ? store.get<Plan>(run.plan) : undefined;
	for (const frame of store.pipeline(plan?.pipeline)?.frames ?? []) {
		const data = frame.data as { run?: unknown; artifact?: unknown } | undefined;
		if (data?.run === runId && isArtifactRef(data.artifact)) {
			refs.push(data.artifact);
		}
	}
	return refs;
}

function isArtifactRef(value: unknown): value is ArtifactRef {
	const ref = value as Partial<ArtifactRef> | null | undefined;
	return typeof ref === 'object' && ref !== null && typeof ref.key === 'string' && typeof ref.store === 'string';
}

/**
 * The plans revised from `plan` during its run, each from the one before, oldest first (a plan's
 * `previous` points back); the chain stops at a plan another run started on.
 */
function revisionsOf(store: AiStore, plan: Plan): Plan[] {
	const plans = store.list<Plan>('plan');
	const startedOn = new Set(store.list<Run>('run').map((r) => r.plan));
	const chain: Plan[] = [];
	for (let last = plan; ;) {
		const next = plans.find((p) => p.previous === last.object_id);
		if (!next || startedOn.has(next.object_id) || chain.includes(next)) {
			return chain;
		}
		chain.push(next);
		last = next;
	}
}

/** What the client is told when a run reaches the gate or fails: enough for a one-line notification. */
/**
 * At the gate: the run went through its checks and waits for a Decision. It stays Validating until
 * then, since the seed has a run Completed once its Decision is made.
 */
export function isAtGate(run: Run): boolean {
	return run.status === 'validating' && run.tags[gateTag] === 'waiting';
}

/** The run's tag that says it reached the gate. */
export const gateTag = 'desk.gate';

/** A rollback run's tag: the landed run it reverted (glossary: Rollback). */
export const rollsBackTag = 'desk.rolls_back';
/** A resumed run's tag: the checkpointed run whose state it began from (glossary: Checkpoint). */
export const resumesTag = 'desk.resumes';

/** The run of the same task whose `tag` names `run`: the one that rolled it back or resumed it. */
export function followUpRun(store: AiStore, run: Run, tag: typeof rollsBackTag | typeof resumesTag): Run | undefined {
	const task = store.get<Task>(run.task);
	return task?.object_type === 'task'
		? store.taskRuns(task).find((later) => later.tags[tag] === run.object_id)
		: undefined;
}

export function runFinishedParams(ai: AiStore, project: string, runId: string, status: 'gate' | 'failed') {
	const run = ai.require<Run>(runId, 'run');
	const task = ai.get<Task>(run.task);
	const last = ai.runPatchSets(run).at(-1);
	const evidence = last ? ai.runEvidence(runId).filter((e) => e.patchset_id === last.object_id) : [];
	return {
		project,
		run: runId,
		status,
		title: task?.title ?? 'Run',
		...(run.error ? { error: run.error } : {}),
		...(status === 'failed' && neverStarted(ai, run) ? { never_started: true } : {}),
		...(run.tags['desk.agent'] ? { agent: run.tags['desk.agent'] } : {}),
		touched: last?.touched.length ?? 0,
		checks: {
			passed: evidence.filter((e) => e.exit_code === 0).length,
			failed: evidence.filter((e) => e.exit_code !== 0).length,
		},
	};
}
