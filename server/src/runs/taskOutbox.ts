/**
 * A task's outbox at the task's end (glossary: Outbox): the runner ingests it when each attempt ends
 * and removes it when empty; once the task has ended no attempt comes to take a file an ingest kept,
 * so its end empties the outbox one last time and removes it.
 */
import type { OutboxTask } from '../attachments/types';
import type { Task, TaskStatus } from '../ai/types';
import type { AiStore } from '../store/aiStore';
import type { RunnerPorts } from './ports';

const endedStatuses: ReadonlySet<TaskStatus> = new Set(['done', 'failed', 'cancelled']);

/** What the attachment store needs to know of a task for its outbox; undefined when the project holds no such task. */
export function outboxTask(ai: AiStore, taskId: string): OutboxTask | undefined {
	const task = ai.get<Task>(taskId);
	if (task?.object_type !== 'task') {
		return undefined;
	}
	const lastRun = task.runs[task.runs.length - 1];
	return { ended: endedStatuses.has(task.status), ...(lastRun !== undefined ? { lastRun } : {}) };
}

/** When the task has ended, what its outbox still holds is attached and the outbox removed. */
export function endTaskOutbox(ports: RunnerPorts, taskId: string): void {
	const task = outboxTask(ports.ai, taskId);
	if (!task?.ended) {
		return;
	}
	try {
		const report = ports.attachments.endOutbox(taskId, {
			...(task.lastRun !== undefined ? { runId: task.lastRun } : {}),
			addedBy: 'run',
		});
		if (report.added.length + report.refused.length + report.kept.length > 0) {
			ports.logger.info(
				`task ${taskId} ended; its outbox: ${report.added.length} attached, ${report.refused.length} refused, ${report.kept.length} kept`,
			);
			ports.attachmentsChanged?.(taskId);
		}
	} catch (error) {
		ports.logger.warn(`task ${taskId}: its outbox could not be emptied at its end: ${(error as Error).message}`);
	}
}
