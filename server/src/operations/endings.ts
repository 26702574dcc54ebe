/**
 * Endings and follow-ups (glossary: Ending, Follow-up): Cancel Task and Cancel Intent leave every
 * object they reach in a final state; Follow Up refines a finished intent with a new one whose
 * `parent` it is. A person does these, in the editor or at the command line; an agent never does.
 */
import { intentStatus, setIntentStatus, setTaskStatus } from '../ai/model';
import type { ActorRef, AiObject, Intent, Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import { CancelIntent, CancelTask, FollowUp } from '../protocol/protocol';
import { closeRunPlans, endIntentOf, isTaskEnded } from '../runs/endings';
import { isAtGate } from '../runs/runViews';
import { requireAgentProgram } from '../runs/agentCheck';
import { parseRunSettings } from '../runs/settings';
import type { EndingResult } from '../runs/types';
import type { AiStore } from '../store/aiStore';
import { actorRefOf } from './actor';
import { projectTop } from './attachments';
import { operation } from './operation';

/** How long Cancel Task waits for a cancelled run that another process carries out to stop. */
const stopWaitMs = 15_000;

function found<T extends AiObject>(ai: AiStore, id: string, type: T['object_type']): T {
	const object = ai.get<T>(id);
	if (!object || object.object_type !== type) {
		throw new DeskError('ai.notFound', `No ${type} ${id} in this project.`, { id });
	}
	return object;
}

function stopped(run: Run): boolean {
	return run.status === 'failed' || run.status === 'completed' || isAtGate(run);
}

/** The run once its cancel took effect: this process's execution awaited, another's watched in the store. */
async function whenStopped(desk: Desk, ai: AiStore, runId: string): Promise<Run> {
	await desk.runEnded(runId);
	const deadline = Date.now() + stopWaitMs;
	for (;;) {
		const run = ai.require<Run>(runId, 'run');
		if (stopped(run)) {
			return run;
		}
		if (Date.now() > deadline) {
			throw new DeskError(
				'run.notAwaitingDecision',
				`Run ${runId} was told to stop but is still ${run.status}; cancel again once it has stopped.`,
				{ run: runId, status: run.status },
			);
		}
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/**
 * Cancel Task: a working run cancelled first, every undecided run abandoned (Abandon puts the shared
 * checkout's files back), the task Cancelled, its plan's open steps closed, its intent Cancelled once
 * none of the intent's tasks can run again.
 */
async function cancelTaskIn(desk: Desk, top: string, taskId: string, reason: string, by: ActorRef) {
	const ai = await desk.projectAi(top);
	const { executor, gate } = await desk.runs(top);
	const task = found<Task>(ai, taskId, 'task');
	if (isTaskEnded(task)) {
		throw new DeskError(
			'ai.illegalTransition',
			`Task ${taskId} is ${task.status} already; there is nothing to cancel.`,
			{
				object: 'task',
				from: task.status,
				to: 'cancelled',
			},
		);
	}
	const result: EndingResult = { cancelled_runs: [], abandoned_runs: [], tasks: [] };
	for (const listed of ai.taskRuns(task)) {
		if (ai.runDecision(listed.object_id)) {
			continue;
		}
		let run = listed;
		if (!stopped(run)) {
			executor.cancel(run.object_id, reason);
			result.cancelled_runs.push(run.object_id);
			run = await whenStopped(desk, ai, run.object_id);
		}
		if (!ai.runDecision(run.object_id)) {
			await gate.decide(run.object_id, { decision: 'abandon', by, rationale: reason, cancelTask: true });
			result.abandoned_runs.push(run.object_id);
		}
	}
	// No run was left to abandon (the last was checkpointed, say): the task ends here.
	const after = ai.require<Task>(taskId, 'task');
	if (!isTaskEnded(after)) {
		setTaskStatus(after, 'cancelled');
		const last = ai.taskRuns(after).at(-1);
		const intent = endIntentOf(ai, after, `cancelled: ${reason}`);
		ai.put([after, ...(last ? closeRunPlans(ai, last, `cancelled: ${reason}`) : []), ...(intent ? [intent] : [])]);
	}
	if (ai.require<Task>(taskId, 'task').status === 'cancelled') {
		result.tasks.push(taskId);
	}
	const intent = task.intent ? ai.get<Intent>(task.intent) : undefined;
	return { ...result, ...(intent ? { intent_status: intentStatus(intent) } : {}) };
}

function reasonOf(reason: string | undefined, by: ActorRef): string {
	return reason?.trim() || `cancelled by ${by.id}`;
}

export const cancelTask = operation({
	name: 'task.cancel',
	summary: 'Cancel a task: its working run cancelled, its undecided runs abandoned, the task Cancelled.',
	params: CancelTask.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: CancelTask, cli: 'task cancel' },
	async run(call, { project, task, reason }) {
		const by = actorRefOf(call.actor);
		const result = await cancelTaskIn(call.desk, projectTop(call.desk, project), task, reasonOf(reason, by), by);
		call.events.runsChanged(project);
		return result;
	},
});

export const cancelIntent = operation({
	name: 'intent.cancel',
	summary: 'Cancel an intent: Cancel Task for each of its tasks that can still run, then the intent Cancelled.',
	params: CancelIntent.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: CancelIntent, cli: 'intent cancel' },
	async run(call, { project, intent: intentId, reason }) {
		const { desk } = call;
		const top = projectTop(desk, project);
		const ai = await desk.projectAi(top);
		const by = actorRefOf(call.actor);
		const why = reasonOf(reason, by);
		const intent = found<Intent>(ai, intentId, 'intent');
		const status = intentStatus(intent);
		if (status !== 'draft' && status !== 'active') {
			throw new DeskError(
				'ai.illegalTransition',
				`Intent ${intentId} is ${status} already; there is nothing to cancel.`,
				{
					object: 'intent',
					from: status,
					to: 'cancelled',
				},
			);
		}
		const result: EndingResult = { cancelled_runs: [], abandoned_runs: [], tasks: [] };
		for (const task of ai.intentTasks(intentId).filter((t) => !isTaskEnded(t))) {
			const ended = await cancelTaskIn(desk, top, task.object_id, why, by);
			result.cancelled_runs.push(...ended.cancelled_runs);
			result.abandoned_runs.push(...ended.abandoned_runs);
			result.tasks.push(...ended.tasks);
		}
		// A task of it that was done keeps the intent from being cancelled by its tasks' ends: the person says so here.
		const after = ai.require<Intent>(intentId, 'intent');
		if (intentStatus(after) === 'draft' || intentStatus(after) === 'active') {
			setIntentStatus(after, 'cancelled', `cancelled: ${why}`);
			ai.put([after]);
		}
		call.events.runsChanged(project);
		return { ...result, intent_status: intentStatus(after) };
	},
});

/** The intent `from` names (itself, or a run of one of its tasks) and the run its follow-up is launched from. */
function followedUp(ai: AiStore, from: string): { intent: Intent; run: Run } {
	const object = ai.get<Intent | Run>(from);
	let intent: Intent | undefined;
	let run: Run | undefined;
	if (object?.object_type === 'intent') {
		intent = object;
		run = ai
			.intentTasks(intent.object_id)
			.flatMap((t) => ai.taskRuns(t))
			.sort((a, b) => a.object_id.localeCompare(b.object_id))
			.at(-1);
	} else if (object?.object_type === 'run') {
		run = object;
		const task = ai.require<Task>(run.task, 'task');
		intent = task.intent ? ai.get<Intent>(task.intent) : undefined;
	}
	if (!intent || !run) {
		throw new DeskError(
			'ai.notFound',
			object ? `${from} belongs to no intent with a run to follow up.` : `No intent or run ${from} in this project.`,
			{ id: from },
		);
	}
	return { intent, run };
}

/**
 * Follow Up (glossary: Follow-up). The new run claims the checkout in the launch's own transaction, as
 * Go's does, and starts in this process in the background; the command line waits for it with
 * `desk.runEnded`. A repeat of an answered request id returns the first launch and starts nothing.
 */
export const followUp = operation({
	name: 'intent.followUp',
	summary: 'Follow up a finished intent: a refinement Intent with it as parent, launched from its launch record.',
	params: FollowUp.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: FollowUp, cli: 'intent follow-up' },
	async run(call, { project, from, ticket, settings }) {
		const { desk, request } = call;
		const top = projectTop(desk, project);
		// Settings are checked before anything is made.
		const runSettings = parseRunSettings(settings);
		const ai = await desk.projectAi(top);
		const { gate, executor } = await desk.runs(top);
		const { intent, run } = followedUp(ai, from);
		const record = gate.launchRecord(run);
		if (!record) {
			throw new DeskError('ai.notFound', `Run ${run.object_id} has no launch record to follow up from.`, {
				id: run.object_id,
			});
		}
		const launches = await desk.launches(top);
		const { result, replayed } = await launches.followUp(record, intent, ticket, {
			by: actorRefOf(call.actor),
			...(request ? { request } : {}),
			check: () => {
				const status = intentStatus(intent);
				if (status !== 'completed' && status !== 'cancelled') {
					throw new DeskError(
						'ai.illegalTransition',
						`Intent ${intent.object_id} is ${status}: a follow-up refines a finished intent; decide or cancel its runs first.`,
						{ object: 'intent', from: status, to: 'follow-up' },
					);
				}
				requireAgentProgram(runSettings);
				executor.assertCheckoutFree(runSettings, record);
			},
			claim: (tx, launched) => executor.claimIn(tx, runSettings, launched, launched.run),
		});
		if (replayed) {
			return result;
		}
		await desk.startRun(top, result, result.run, runSettings);
		call.events.runsChanged(project);
		return result;
	},
});

/** The endings' operations, in the table's order. */
export const endingOperations = [cancelTask, cancelIntent, followUp];
