import type { AiStore } from '../store/aiStore';
import type { Intent, Plan, Run, Task } from '../ai/types';
import { intentStatus } from '../ai/model';
import type { RunDetail, RunsOverview, RunSummary, TaskView } from './types';

export function runSummary(store: AiStore, run: Run): RunSummary {
	const provenance = store.runProvenance(run.object_id);
	const decision = store.runDecision(run.object_id);
	const atGate = isAtGate(run);
	const finished = run.status === 'completed' || run.status === 'failed' || atGate;
	const summary: RunSummary = {
		id: run.object_id,
		task: run.task,
		status: run.status,
		started_at: run.created_at,
		patchsets: run.patchsets.length,
		evidence: store.runEvidence(run.object_id).length,
		at_gate: atGate,
	};
	if (finished) {
		summary.finished_at = run.updated_at;
		summary.duration_ms = Date.parse(run.updated_at) - Date.parse(run.created_at);
	}
	if (provenance) {
		summary.provider = provenance.provider;
		summary.model = provenance.model;
		if (provenance.token_usage) {
			summary.total_tokens = provenance.token_usage.total_tokens;
			if (provenance.token_usage.cost_usd !== undefined) {
				summary.cost_usd = provenance.token_usage.cost_usd;
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
	return summary;
}

export function runsOverview(store: AiStore): RunsOverview {
	const taskView = (task: Task): TaskView => ({
		task,
		runs: store.taskRuns(task).map((run) => runSummary(store, run)),
	});
	const intents = store.list<Intent>('intent').reverse();
	return {
		intents: intents.map((intent) => {
			const plan = intent.plan ? store.get<Plan>(intent.plan) : undefined;
			return {
				intent,
				status: intentStatus(intent),
				plans: plan ? store.planRevisions(plan) : [],
				tasks: store.intentTasks(intent.object_id).map(taskView),
			};
		}),
		tasks: store
			.list<Task>('task')
			.filter((t) => !t.intent)
			.reverse()
			.map(taskView),
	};
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
		touched: last?.touched.length ?? 0,
		checks: {
			passed: evidence.filter((e) => e.exit_code === 0).length,
			failed: evidence.filter((e) => e.exit_code !== 0).length,
		},
	};
}
