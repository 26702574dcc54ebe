/** `desk task attachments …`: the files attached to a task, listed, added, shown, read and deleted. */
import * as path from 'node:path';
import type { AttachmentRow } from '../../attachments/types';
import { humanBytes } from '../../attachments/names';
import { DeskError } from '../../core/errors';
import {
	attachFile,
	deleteAttachment,
	listAttachments,
	readAttachment,
	showAttachment,
} from '../../operations/attachments';
import { operationCommand, type OperationCommand } from '../operationCommand';
import { UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { writeBytes } from '../output';
import { repoTop } from '../projects';
import { terminalSafe as t } from '../terminal';

/** The project a command names: --project, else the library's project of the repository at --repo or around the current folder. */
async function projectOf({ values, open }: CommandContext): Promise<string> {
	if (values.project !== undefined) {
		return values.project;
	}
	const top = await repoTop(values.repo ?? process.cwd());
	const project = (await open()).library.listProjects().find((p) => p.path === top);
	if (!project) {
		throw new DeskError(
			'project.notFound',
			`No project of the library has the repository ${top}; pass --project NAME.`,
			{
				dir: top,
			},
		);
	}
	return project.name;
}

/** The task and the attachment a subcommand names (`TASK REF`), and its project. */
async function attachmentOf(context: CommandContext): Promise<{ project: string; task: string; ref: string }> {
	const [task, ref] = context.rest;
	if (task === undefined || ref === undefined || context.rest.length > 2) {
		throw new UsageError(`${context.command} TASK REF`);
	}
	return { project: await projectOf(context), task, ref };
}

/** `desk task attachments list [TASK]`: the tasks with attachments, or one task's files. */
const attachmentList = operationCommand(listAttachments, {
	params: async (context) => {
		if (context.rest.length > 1) {
			throw new UsageError('task attachments list [TASK]');
		}
		return { project: await projectOf(context) };
	},
	json: ({ tasks }, { rest: [task] }) =>
		task === undefined
			? tasks.map(({ task_id, count, bytes }) => ({ task_id, count, bytes }))
			: (tasks.find((t) => t.task_id === task)?.files ?? []),
	text: ({ tasks }, { rest: [task] }) =>
		task === undefined
			? tasks
					.map(
						(each) =>
							`${t(each.task_id)}  ${String(each.count).padStart(3)} file${each.count === 1 ? ' ' : 's'}  ${humanBytes(each.bytes)}`,
					)
					.join('\n') || '(no attachments)'
			: (tasks.find((each) => each.task_id === task)?.files ?? []).map(formatAttachment).join('\n') ||
				'(no attachments)',
});

/** `desk task attachments add TASK FILE [--name NAME] [--note TEXT]` */
const attachmentAdd = operationCommand(attachFile, {
	params: async (context) => {
		const [task, file] = context.rest;
		if (task === undefined || file === undefined || context.rest.length > 2) {
			throw new UsageError('task attachments add TASK FILE');
		}
		const { values } = context;
		return {
			project: await projectOf(context),
			task,
			path: path.resolve(file),
			...(values.name ? { name: values.name } : {}),
			...(values.note ? { note: values.note } : {}),
		};
	},
	text: (row) => `attached ${formatAttachment(row)}`,
});

/** `desk task attachments show TASK REF` */
const attachmentShow = operationCommand(showAttachment, {
	params: attachmentOf,
	text: (row) =>
		`${formatAttachment(row)}\n  sha256 ${t(row.sha256)}${row.run_id ? `\n  run ${t(row.run_id)}` : ''}${row.note ? `\n  note: ${t(row.note)}` : ''}`,
});

/** `desk task attachments cat TASK REF` */
const attachmentCat = operationCommand(readAttachment, {
	params: attachmentOf,
	json: ({ row, base64 }) => ({ ...row, base64 }),
	text: () => '',
	write: ({ base64 }, { out }) => writeBytes(out, Buffer.from(base64, 'base64')),
});

/** `desk task attachments rm TASK REF` */
const attachmentRm = operationCommand(deleteAttachment, {
	params: async (context) => ({ ...(await attachmentOf(context)), via: 'desk task attachments rm' }),
	text: (row) => `deleted ${formatAttachment(row)}`,
});

/** The subcommands of `desk task attachments`, each the face of an operation, by their word. */
const subcommands: ReadonlyMap<string, OperationCommand> = new Map([
	['list', attachmentList],
	['add', attachmentAdd],
	['show', attachmentShow],
	['cat', attachmentCat],
	['rm', attachmentRm],
]);

/** `desk task attachments list|add|show|cat|rm …` */
const taskAttachments = Object.assign(
	async (context: CommandContext): Promise<number> => {
		const [sub, ...rest] = context.rest;
		const face = sub === undefined ? undefined : subcommands.get(sub);
		if (!face) {
			throw new UsageError('task attachments takes list, add, show, cat or rm');
		}
		return face({ ...context, command: `task attachments ${sub}`, rest });
	},
	{ subcommands },
);

export const attachmentCommands: ReadonlyArray<[string, Command]> = [['task attachments', taskAttachments]];

function formatAttachment(row: AttachmentRow): string {
	return `${t(row.id.slice(0, 8))}  ${humanBytes(row.size).padStart(9)}  ${t(row.media_type).padEnd(24)} ${t(row.source).padEnd(6)} ${t(row.name)}${row.unavailable ? `  (unavailable: ${t(row.unavailable)})` : ''}`;
}
