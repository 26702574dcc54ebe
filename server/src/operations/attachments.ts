/** A task's attachments' operations (glossary: Attachment). */
import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import type { Task } from '../ai/types';
import { checkTaskId, resolveAttachment } from '../attachments/attachmentStore';
import { inlineType } from '../attachments/names';
import {
	attachmentRefSchema,
	attachParams,
	AttachFile,
	DeleteAttachment,
	ListAttachments,
	projectNameSchema,
	ReadAttachment,
	taskIdSchema,
} from '../protocol/protocol';
import { object } from '../protocol/schema';
import { answerOnce } from '../store/clientRequests';
import { actorLabel } from './actor';
import { fileOfCall, projectOfCall } from './assets';
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
				"Attach a file of your work folder or outbox to this run's task, for the person to open from the task (a report, a chart, a table, a log). The file is copied now; `name` is the name it is shown under (default: its own), `note` a line about it. Refused: a link anywhere on its path, a hard link, a folder, a file in the hidden `.desk` (your outbox excepted), a file over 32 MiB, and a task over 100 files or 128 MiB. Returns the attachment.",
			boundByRun: ['project', 'task'],
		},
	},
	async run(call, params) {
		const project = requiredProjectOfCall(call, params.project);
		const task = taskOfCall(call, params.task);
		const file = await fileOfCall(call, params.path, 'path');
		const { desk, request, actor } = call;
		const top = projectTop(desk, project);
		// A file kept for a task id that names no task would belong to nothing the views show.
		if ((await desk.projectAi(top)).get<Task>(checkTaskId(task))?.object_type !== 'task') {
			throw new DeskError('ai.notFound', `No task ${task} in project ${project}; a file is attached to a task.`, {
				task,
			});
		}
		const store = await desk.attachments(top);
		const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, async () =>
			store.add(task, file.path, {
				...(file.open ? { open: file.open } : {}),
				addedBy: actorLabel(actor),
				...(actor.kind === 'agent' ? { runId: actor.run, secrets: actor.secrets ?? [] } : {}),
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

export const listAttachments = operation({
	name: 'attachment.list',
	summary: "List a project's tasks with attachments, newest first, each with its title and files.",
	params: ListAttachments.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListAttachments, cli: 'task attachments list' },
	async run(call, { project }) {
		const { desk } = call;
		const top = projectTop(desk, project);
		const store = await desk.attachments(top);
		const ai = await desk.projectAi(top);
		const files = store.list();
		return {
			tasks: store.tasks().map((t) => ({
				...t,
				title: ai.get<Task>(t.task_id)?.title ?? '',
				files: files.filter((f) => f.task_id === t.task_id),
			})),
		};
	},
});

/** The first bytes an attachment's type is checked against. */
const headBytes = 4096;

const attachmentRefParams = object({ project: projectNameSchema, task: taskIdSchema, ref: attachmentRefSchema });

export const showAttachment = operation({
	name: 'attachment.show',
	summary: "Show an attachment's record (by id, id prefix or name) without reading its bytes.",
	params: attachmentRefParams,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { cli: 'task attachments show' },
	async run(call, { project, task, ref }) {
		const store = await call.desk.attachments(projectTop(call.desk, project));
		return resolveAttachment(store.list(task), ref);
	},
});

export const readAttachment = operation({
	name: 'attachment.read',
	summary: "Read an attachment's stored bytes (all, or max_bytes from offset), checked against its record.",
	params: ReadAttachment.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ReadAttachment, cli: 'task attachments cat' },
	async run(call, { project, task, ref, offset = 0, max_bytes }) {
		const store = await call.desk.attachments(projectTop(call.desk, project));
		const row = resolveAttachment(store.list(task), ref);
		const bytes = store.read(row, { offset, ...(max_bytes !== undefined ? { maxBytes: max_bytes } : {}) });
		// Whether it may be shown is decided by its first bytes, whichever part is read.
		const head = offset === 0 ? bytes.subarray(0, headBytes) : store.read(row, { maxBytes: headBytes });
		const shown = inlineType(row.media_type, head);
		return {
			row,
			inline_type: shown.type,
			inline: shown.inline,
			base64: bytes.toString('base64'),
			truncated: Math.min(offset, row.size) + bytes.length < row.size,
		};
	},
});

export const deleteAttachment = operation({
	name: 'attachment.delete',
	summary: 'Delete an attachment, audited with who and through what (`via`).',
	params: DeleteAttachment.params,
	// The person's files: an agent attaches, it never deletes.
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: DeleteAttachment, cli: 'task attachments rm' },
	async run(call, { project, task, ref, via }) {
		const store = await call.desk.attachments(projectTop(call.desk, project));
		const row = store.delete(task, ref, actorLabel(call.actor), via);
		call.events.attachmentsChanged(project, task);
		return row;
	},
});

/** The attachments' operations, in the table's order. */
export const attachmentOperations = [listAttachments, showAttachment, readAttachment, attachFile, deleteAttachment];
