import { intentStatus, setIntentStatus, setStepStatus, stepStatus } from '../ai/model';
import type { Intent, Plan, Run, Task } from '../ai/types';
import type { AiStore } from '../store/aiStore';

/**
 * Endings (glossary: Ending): when work stops for good, every object it touched is left in a final
 * state, so that the Runs view never shows a step progressing or an intent active that nothing will
 * carry on.
 */

const finalTask: ReadonlySet<Task['status']> = new Set(['done', 'failed', 'cancelled']);

/** Whether the task can have no more runs: done, failed or cancelled. */
export function isTaskEnded(task: Task): boolean {
	return finalTask.has(task.status);
}

/**
 * The run's plan, the revisions its agent made of it and the revisions before it will not be carried on: a step still progressing
 * failed, a pending one skipped. Returns the plans that changed (to be stored by the caller).
 */
export function closeRunPlans(ai: AiStore, run: Run, reason: string, now = new Date()): Plan[] {
	// The run keeps the plan it started on; the revisions its agent made since are the intent's latest.
	const task = ai.get<Task>(run.task);
	const intent = task?.object_type === 'task' && task.intent ? ai.get<Intent>(task.intent) : undefined;
	const latest = intent?.object_type === 'intent' ? intent.plan : undefined;
	const planId = latest ?? run.plan;
	const plan = planId ? ai.get<Plan>(planId) : undefined;
	if (!plan || plan.object_type !== 'plan') {
		return [];
	}
	const changed: Plan[] = [];
	for (const revision of ai.planRevisions(plan)) {
		let touched = false;
		for (const step of revision.steps) {
			const status = stepStatus(step);
			if (status === 'progressing' || status === 'pending') {
				setStepStatus(step, status === 'progressing' ? 'failed' : 'skipped', reason, now);
				touched = true;
			}
		}
		if (touched) {
			revision.updated_at = now.toISOString();
			delete revision.checksum;
			changed.push(revision);
		}
	}
	return changed;
}

/**
 * The intent of a task that ended without landing: once none of its tasks can run again and none
 * is done, it is Cancelled with the reason (the seed's "abandoned before completion"). `ended` is
 * the task as it is now, which the store may not hold yet. Returns the intent when it changed.
 */
export function endIntentOf(ai: AiStore, ended: Task, reason: string, now = new Date()): Intent | undefined {
	const intent = ended.intent ? ai.get<Intent>(ended.intent) : undefined;
	if (!intent || intent.object_type !== 'intent') {
		return undefined;
	}
	const status = intentStatus(intent);
	if (status !== 'draft' && status !== 'active') {
		return undefined;
	}
	const tasks = ai.intentTasks(intent.object_id).map((t) => (t.object_id === ended.object_id ? ended : t));
	if (!tasks.every(isTaskEnded) || tasks.some((t) => t.status === 'done')) {
		return undefined;
	}
	setIntentStatus(intent, 'cancelled', reason, now);
	return intent;
}
