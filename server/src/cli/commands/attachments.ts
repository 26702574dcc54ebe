/** `desk task attachments …`: the files attached to a task, listed, added, shown, read and deleted. */
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveAttachment } from '../../attachments/attachmentStore';
import type { AttachmentRow } from '../../attachments/types';
import { humanBytes } from '../../attachments/names';
import { answerOnce } from '../../store/clientRequests';
import { UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { print, writeBytes } from '../output';
import { projectPath, recordedTop, repoTop } from '../projects';
import { terminalSafe as t } from '../terminal';

/** `desk task attachments list|add|show|cat|rm …` */
async function taskAttachments({ rest, values, out, open, requestOf }: CommandContext): Promise<number> {
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
	const who = (() => {
		try {
			return os.userInfo().username || 'desk-user';
		} catch {
			return 'desk-user';
		}
	})();
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
		case 'add': {
			if (!third) {
				throw new UsageError('task attachments add TASK FILE');
			}
			const { request } = requestOf('desk task attachments add', {
				task: needTask(),
				file: path.resolve(third),
				name: values.name,
				note: values.note,
			});
			const { result: row } = await answerOnce(await opened.projectRequests(top), request, async () =>
				store.add(needTask(), path.resolve(third), {
					addedBy: who,
					...(values.name ? { name: values.name } : {}),
					...(values.note ? { note: values.note } : {}),
					...(request ? { request } : {}),
				}),
			);
			print(out, row, () => `attached ${formatAttachment(row)}`);
			return 0;
		}
		case 'show':
		case 'cat':
		case 'rm': {
			if (!third) {
				throw new UsageError(`task attachments ${sub} TASK REF`);
			}
			if (sub === 'rm') {
				const row = store.delete(needTask(), third, who, 'desk task attachments rm');
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
