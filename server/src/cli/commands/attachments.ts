/** `desk task attachments …`: the files attached to a task, listed, added, shown, read and deleted. */
import * as path from 'node:path';
import { resolveAttachment } from '../../attachments/attachmentStore';
import type { AttachmentRow } from '../../attachments/types';
import { humanBytes } from '../../attachments/names';
import { DeskError } from '../../core/errors';
import type { Desk } from '../../desk';
import { personLabel } from '../../operations/actor';
import { attachFile } from '../../operations/attachments';
import { personIdentity } from '../../operations/identity';
import { operationCommand, type OperationCommand } from '../operationCommand';
import { UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { print, writeBytes } from '../output';
import { projectPath, recordedTop, repoTop } from '../projects';
import { terminalSafe as t } from '../terminal';

/** `desk task attachments add TASK FILE [--name NAME] [--note TEXT]` */
const attachmentAdd = operationCommand(attachFile, {
	params: async ({ rest, values, open }) => {
		const [task, file] = rest;
		if (task === undefined || file === undefined || rest.length > 2) {
			throw new UsageError('task attachments add TASK FILE');
		}
		return {
			project: values.project ?? (await projectOfRepo(await open(), values.repo)),
			task,
			path: path.resolve(file),
			...(values.name ? { name: values.name } : {}),
			...(values.note ? { note: values.note } : {}),
		};
	},
	text: (row) => `attached ${formatAttachment(row)}`,
});

/** The project of the repository at --repo, or around the current folder. */
async function projectOfRepo(desk: Desk, repo: string | undefined): Promise<string> {
	const top = await repoTop(repo ?? process.cwd());
	const project = desk.library.listProjects().find((p) => p.path === top);
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

/** The subcommands of `desk task attachments` that are faces of operations, by their word. */
const operationSubcommands: ReadonlyMap<string, OperationCommand> = new Map([['add', attachmentAdd]]);

/** `desk task attachments list|add|show|cat|rm …` */
const taskAttachments = Object.assign(
	async (context: CommandContext): Promise<number> => {
		const [sub, ...rest] = context.rest;
		const face = sub === undefined ? undefined : operationSubcommands.get(sub);
		return face ? face({ ...context, command: `task attachments ${sub}`, rest }) : otherAttachments(context);
	},
	{ subcommands: operationSubcommands },
);

async function otherAttachments({ rest, values, out, open }: CommandContext): Promise<number> {
	const opened = await open();
	const top = values.project
		? projectPath(opened, values.project)
		: recordedTop(opened, await repoTop(values.repo ?? process.cwd()));
	const store = await opened.attachments(top);
	const [sub, taskArg, third] = rest;
	const needTask = () => {
		if (!taskArg) {
			throw new UsageError(`task attachments ${sub} needs the task id`);
		}
		return taskArg;
	};
	switch (sub) {
		case 'list': {
			if (taskArg === undefined) {
				const tasks = store.tasks();
				print(
					out,
					tasks,
					() =>
						tasks
							.map(
								(task) =>
									`${t(task.task_id)}  ${String(task.count).padStart(3)} file${task.count === 1 ? ' ' : 's'}  ${humanBytes(task.bytes)}`,
							)
							.join('\n') || '(no attachments)',
				);
			} else {
				const rows = store.list(taskArg);
				print(out, rows, () => rows.map(formatAttachment).join('\n') || '(no attachments)');
			}
			return 0;
		}
		case 'show':
		case 'cat':
		case 'rm': {
			if (!third) {
				throw new UsageError(`task attachments ${sub} TASK REF`);
			}
			if (sub === 'rm') {
				const row = store.delete(needTask(), third, personLabel(await personIdentity()), 'desk task attachments rm');
				print(out, row, () => `deleted ${formatAttachment(row)}`);
				return 0;
			}
			const row = resolveAttachment(store.list(needTask()), third);
			if (sub === 'show') {
				print(
					out,
					row,
					() =>
						`${formatAttachment(row)}\n  sha256 ${t(row.sha256)}${row.run_id ? `\n  run ${t(row.run_id)}` : ''}${row.note ? `\n  note: ${t(row.note)}` : ''}`,
				);
				return 0;
			}
			const bytes = store.read(row);
			if (out.json) {
				print(out, { ...row, base64: bytes.toString('base64') }, () => '');
			} else {
				writeBytes(out, bytes);
			}
			return 0;
		}
		default:
			throw new UsageError('task attachments takes list, add, show, cat or rm');
	}
}

export const attachmentCommands: ReadonlyArray<[string, Command]> = [['task attachments', taskAttachments]];

function formatAttachment(row: AttachmentRow): string {
	return `${t(row.id.slice(0, 8))}  ${humanBytes(row.size).padStart(9)}  ${t(row.media_type).padEnd(24)} ${t(row.source).padEnd(6)} ${t(row.name)}${row.unavailable ? `  (unavailable: ${t(row.unavailable)})` : ''}`;
}
