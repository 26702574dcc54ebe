/**
 * A task's outbox at the task's end (glossary: Outbox): the runner ingests it when each attempt ends
 * and removes it when empty; once the task has ended no attempt comes to take a file an ingest kept,
 * so its end empties the outbox one last time and removes it.
 */
import type { OutboxTask } from '../attachments/types';
import type { Task, TaskStatus } from '../ai/types';
import type { Logger } from '../core/logger';
import type { AiStore } from '../store/aiStore';
import { secretsOf } from './artifacts';
import { readPlacement, type RunPlacement } from './placement';
import type { RunControlStore, RunnerPorts } from './ports';
import { parseRunSettings } from './settings';

const endedStatuses: ReadonlySet<TaskStatus> = new Set(['done', 'failed', 'cancelled']);

/** Where a task's runs are read from: its objects and their run_control rows. */
export interface TaskRunsSource {
	ai: AiStore;
	control: RunControlStore;
	logger: Logger;
}

/**
 * What the attachment store needs to know of a task for its outbox; undefined when the project holds
 * no such task. An ended task's outbox is taken now, so it comes with its runs' secrets.
 */
export function outboxTask(source: TaskRunsSource, taskId: string): OutboxTask | undefined {
	const task = source.ai.get<Task>(taskId);
	if (task?.object_type !== 'task') {
		return undefined;
	}
	const ended = endedStatuses.has(task.status);
	const lastRun = task.runs[task.runs.length - 1];
	return {
		ended,
		...(lastRun !== undefined ? { lastRun } : {}),
		...(ended ? { secrets: taskSecrets(source, task.runs) } : {}),
	};
}

/** When the task has ended, what its outbox still holds is attached and the outbox removed. */
export function endTaskOutbox(ports: RunnerPorts, taskId: string): void {
	const task = outboxTask(ports, taskId);
	if (!task?.ended) {
		return;
	}
	try {
		const report = ports.attachments.endOutbox(taskId, {
			...(task.lastRun !== undefined ? { runId: task.lastRun } : {}),
			addedBy: 'run',
			secrets: task.secrets ?? [],
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

/**
 * The values of the secrets a run passed to its agent, read again from this process's environment by
 * the names its placement's settings give: a file taken from its outbox after the run (at the task's
 * end, at start-up, in crash recovery) is scrubbed of them as the run's own ingest would have. The
 * values are held for the ingest only; what is stored names the variables, never their values.
 */
function placementSecrets(placement: RunPlacement): string[] {
	const agent = parseRunSettings(placement.settings).agents.find((a) => a.name === placement.agent);
	return agent ? secretsOf(agent) : [];
}

/**
 * The secrets of every run of `runIds` that was placed (a run claimed and never placed started no
 * agent). A row this desk cannot read is named in the log: the secrets of that run are not known.
 */
export function taskSecrets(source: TaskRunsSource, runIds: readonly string[]): string[] {
	const secrets = new Set<string>();
	for (const runId of runIds) {
		const row = source.control.row(runId);
		if (!row) {
			continue;
		}
		try {
			const { placement } = readPlacement(row.json, runId);
			for (const secret of placement ? placementSecrets(placement) : []) {
				secrets.add(secret);
			}
		} catch (error) {
			source.logger.warn(
				`run ${runId}: the secrets its agent was given are not known (${(error as Error).message}); its outbox is taken without them`,
			);
		}
	}
	return [...secrets];
}
