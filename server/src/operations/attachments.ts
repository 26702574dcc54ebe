/** A task's attachments' operations (glossary: Attachment). */
import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import { attachParams, AttachFile } from '../protocol/protocol';
import { answerOnce } from '../store/clientRequests';
import { actorLabel } from './actor';
import { pathOfCall, projectOfCall } from './assets';
import type { OperationCall } from './operation';
import { operation } from './operation';

/** The repository top of a project of the library: `project.notFound` when it has none. */
export function projectTop(desk: Desk, project: string): string {
	const record = desk.library.listProjects().find((p) => p.name === project);
	if (!record || record.path === '') {
		throw new DeskError('project.notFound', `No project named ${JSON.stringify(project)} with a repository.`, {
			project,
		});
	}
	return record.path;
}

/** The project a call names, which a person must name; an agent's is its run's. */
function requiredProjectOfCall(call: OperationCall, named: string | undefined): string {
	const project = projectOfCall(call, named);
	if (project === undefined) {
		throw new DeskError('desk.badParams', 'params.project: the project is required', { field: 'params.project' });
	}
	return project;
}

/** The task a call names: an agent's is its run's (another is refused), a person must name one. */
export function taskOfCall(call: OperationCall, named: string | undefined): string {
	if (call.actor.kind === 'agent') {
		if (named !== undefined && named !== call.actor.task) {
			throw new DeskError('operation.outsideRun', `A run may touch only its own task (${call.actor.task}).`, {
				task: named,
			});
		}
		return call.actor.task;
	}
	if (named === undefined) {
		throw new DeskError('desk.badParams', 'params.task: the task is required', { field: 'params.task' });
	}
	return named;
}

export const attachFile = operation({
	name: 'attachment.attach',
	summary: "Attach a file to a task (glossary: Attachment), checked as a run's outbox is.",
	params: attachParams,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: false,
	surfaces: {
		rpc: AttachFile,
		cli: 'task attachments add',
		mcp: {
			tool: 'attach',
			title: 'Attach a file to the task',
			description:
				"Attach a file of your work folder or outbox to this run's task, for the person to open from the task (a report, a chart, a table, a log). The file is copied now; `name` is the name it is shown under (default: its own), `note` a line about it. Refused: links, folders, hard links, a file over 32 MiB, and a task over 100 files or 128 MiB. Returns the attachment.",
			boundByRun: ['project', 'task'],
		},
	},
	async run(call, params) {
		const project = requiredProjectOfCall(call, params.project);
		const task = taskOfCall(call, params.task);
		const file = await pathOfCall(call, params.path, 'path');
		const { desk, request, actor } = call;
		const top = projectTop(desk, project);
		const store = await desk.attachments(top);
		const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, async () =>
			store.add(task, file, {
				addedBy: actorLabel(actor),
				...(actor.kind === 'agent' ? { runId: actor.run } : {}),
				...(params.name ? { name: params.name } : {}),
				...(params.note ? { note: params.note } : {}),
				...(request ? { request } : {}),
			}),
		);
		if (!replayed) {
			call.events.attachmentsChanged(project, task);
		}
		return result;
	},
});

/** The attachments' operations, in the table's order. */
export const attachmentOperations = [attachFile];
