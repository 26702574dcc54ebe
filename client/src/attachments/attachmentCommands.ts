import * as path from 'node:path';
import * as vscode from 'vscode';
import { messageText, pickText, visibleText } from '../common/markdownText';
import { showInformationMessage, showWarningMessage, showStatusMessage } from '../common/messages';
import { baseName, humanBytes } from '../../../server/src/attachments/names';
import {
	AttachFile,
	DeleteAttachment,
	ListAttachments,
	ListRuns,
	type AttachmentRow,
} from '../../../server/src/protocol/protocol';
import { renderable } from './kinds';
import { parseAttachmentUri, type AttachmentPreviews, type AttachmentRef } from './attachmentPreviews';
import type { DeskClient } from '../common/deskClient';
import { taskLabel, type AttachmentsViewNode, type AttachmentsTreeProvider } from './attachmentsTree';
import { chooseProject } from '../common/windowProjects';
import { guardedBy } from '../common/guarded';

/** An attachment with what the commands say about it. */
interface Attachment extends AttachmentRef {
	row: AttachmentRow;
	taskTitle: string;
	/** How the command was invoked, in words (the delete's audit record says it). */
	via: Via;
}

type Via = 'Attachments view' | 'command palette' | 'editor title' | 'command arguments';

const idPattern = /^[0-9a-f]{32}$/;
const taskPattern = /^[0-9A-Za-z][0-9A-Za-z._-]{0,127}$/;

/** How the delete dialog names where it was invoked from. */
const viaWords: Record<Via, string> = {
	'Attachments view': 'the Attachments view',
	'command palette': 'the command palette',
	'editor title': "the attachment's editor tab",
	'command arguments': 'a command invoked with arguments (not the Attachments view)',
};

/**
 * Commands on attachments: open (the preview by checked type), open as text, show rendered (HTML and
 * SVG), open a PDF in an installed viewer (from the PDF's page), Save As…, Delete (confirmed, audited
 * by the server), Copy Id, Reveal in Run, and Attach File to Task…. Each takes a node of the
 * Attachments view, `(project, task, id)` from a preview page's link, the URI of an attachment's
 * editor tab (editor title), or nothing (the active attachment tab, else a pick).
 */
export function registerAttachmentCommands(
	desk: DeskClient,
	tree: AttachmentsTreeProvider,
	previews: AttachmentPreviews,
	reportError: (error: unknown) => void,
): vscode.Disposable[] {
	const guarded = guardedBy(reportError);

	/**
	 * The attachment (project, task, id) names, looked up afresh from the server: only a project of
	 * this window and ids of the right shape; nothing else an invocation carries is used.
	 */
	const find = async (project: unknown, task: unknown, id: unknown, via: Via): Promise<Attachment> => {
		if (
			typeof project !== 'string' ||
			typeof task !== 'string' ||
			typeof id !== 'string' ||
			!tree.windowProjects.some((p) => p.name === project) ||
			!taskPattern.test(task) ||
			!idPattern.test(id)
		) {
			throw new Error('That names no attachment of this window.');
		}
		const { tasks } = await desk.request(ListAttachments, { project });
		for (const view of tasks) {
			const row = view.task_id === task ? view.files.find((f) => f.id === id) : undefined;
			if (row) {
				return { project, task, id, row, taskTitle: taskLabel(view), via };
			}
		}
		throw new Error('That attachment is no longer on its task (it was deleted).');
	};

	const pick = async (
		title: string,
		accepts: (row: AttachmentRow) => boolean = () => true,
	): Promise<Attachment | undefined> => {
		const several = tree.windowProjects.length > 1;
		const items: Array<vscode.QuickPickItem & { attachment: Attachment }> = [];
		for (const { project, view } of await tree.tasks()) {
			for (const row of view.files.filter(accepts)) {
				items.push({
					label: pickText(row.name),
					description: `${humanBytes(row.size)} · ${pickText(taskLabel(view))}`,
					...(several ? { detail: pickText(project) } : {}),
					attachment: {
						project,
						task: view.task_id,
						id: row.id,
						row,
						taskTitle: taskLabel(view),
						via: 'command palette',
					},
				});
			}
		}
		if (items.length === 0) {
			void showInformationMessage('Agent Desk: no attachment fits.');
			return undefined;
		}
		return (await vscode.window.showQuickPick(items, { title, matchOnDescription: true }))?.attachment;
	};

	/**
	 * The attachment a command is about, from whatever invoked it: a node of the Attachments view,
	 * `(project, task, id)` (a preview page's link), an attachment tab's URI (the editor title), or
	 * nothing (the active attachment tab, else a pick). Whatever the shape, only (project, task, id)
	 * is taken from the arguments, checked, and the row read again from the server.
	 */
	const target = async (
		args: unknown[],
		title: string,
		accepts?: (row: AttachmentRow) => boolean,
	): Promise<Attachment | undefined> => {
		const [first, second, third] = args;
		if (first instanceof vscode.Uri) {
			const fromUri = parseAttachmentUri(first);
			if (!fromUri) {
				throw new Error('That names no attachment of this window.');
			}
			return find(fromUri.project, fromUri.task, fromUri.id, 'editor title');
		}
		if (first !== undefined && first !== null && typeof first === 'object') {
			const node = first as { type?: unknown; project?: unknown; row?: unknown };
			const row =
				node.row !== null && typeof node.row === 'object'
					? (node.row as { task_id?: unknown; id?: unknown })
					: undefined;
			if (node.type !== 'file' || !row) {
				throw new Error('That names no attachment of this window.');
			}
			return find(node.project, row.task_id, row.id, 'Attachments view');
		}
		if (first !== undefined) {
			return find(first, second, third, 'command arguments');
		}
		const active = vscode.window.activeTextEditor?.document.uri;
		const fromTab = active ? parseAttachmentUri(active) : undefined;
		if (fromTab && tree.windowProjects.some((p) => p.name === fromTab.project)) {
			return find(fromTab.project, fromTab.task, fromTab.id, 'command palette');
		}
		return pick(title, accepts);
	};

	const available = (row: AttachmentRow) => row.unavailable === null;

	/** Picks the task to attach to: the project's tasks from its runs, and those that already have attachments. */
	const pickTask = async (project: string): Promise<{ id: string; title: string } | undefined> => {
		const [runs, { tasks: withFiles }] = await Promise.all([
			desk.request(ListRuns, { project }),
			desk.request(ListAttachments, { project }),
		]);
		const items: Array<vscode.QuickPickItem & { task: { id: string; title: string } }> = [];
		const seen = new Set<string>();
		for (const intent of runs.intents) {
			for (const view of intent.tasks) {
				seen.add(view.task.object_id);
				const files = withFiles.find((t) => t.task_id === view.task.object_id);
				items.push({
					label: pickText(view.task.title || view.task.object_id),
					description: `${view.task.status} · ${view.runs.length} run${view.runs.length === 1 ? '' : 's'}${files ? ` · ${files.count} attached` : ''}`,
					detail: pickText(intent.intent.prompt.trim().split('\n', 1)[0] ?? ''),
					task: { id: view.task.object_id, title: view.task.title || view.task.object_id },
				});
			}
		}
		for (const view of runs.tasks) {
			if (!seen.has(view.task.object_id)) {
				seen.add(view.task.object_id);
				items.push({
					label: pickText(view.task.title || view.task.object_id),
					description: view.task.status,
					task: { id: view.task.object_id, title: view.task.title || view.task.object_id },
				});
			}
		}
		for (const view of withFiles.filter((t) => !seen.has(t.task_id))) {
			items.push({
				label: pickText(taskLabel(view)),
				description: `${view.count} attached`,
				task: { id: view.task_id, title: taskLabel(view) },
			});
		}
		if (items.length === 0) {
			void showInformationMessage(
				'Agent Desk: this project has no task yet. Launch a ticket from the launch card first; its task can then take attachments.',
			);
			return undefined;
		}
		return (
			await vscode.window.showQuickPick(items, {
				title: 'Attach a file to which task?',
				matchOnDescription: true,
				matchOnDetail: true,
			})
		)?.task;
	};

	/**
	 * A command on one attachment: `pickTitle` asks for it when nothing names it; one whose bytes are
	 * needed is refused, with the reason, when they are not in the store.
	 */
	const onAttachment = (
		id: string,
		pickTitle: string,
		body: (a: Attachment) => Promise<void>,
		options: { needsBytes?: boolean; accepts?: (row: AttachmentRow) => boolean } = {},
	) =>
		vscode.commands.registerCommand(
			id,
			guarded(async (...args: unknown[]) => {
				const a = await target(args, pickTitle, options.accepts ?? (options.needsBytes ? available : undefined));
				if (!a) {
					return;
				}
				if (options.needsBytes && a.row.unavailable !== null) {
					void showWarningMessage(
						`Agent Desk: the bytes of ${a.row.name} are not in this store: ${a.row.unavailable}.`,
					);
					return;
				}
				await body(a);
			}),
		);

	return [
		vscode.commands.registerCommand('agentDesk.refreshAttachments', () => tree.refresh()),
		onAttachment('agentDesk.openAttachment', 'Open which attachment?', (a) => previews.open(a, a.row), {
			needsBytes: true,
			accepts: () => true,
		}),
		onAttachment('agentDesk.openAttachmentAsText', 'Open which attachment as text?', (a) => previews.openAsText(a), {
			needsBytes: true,
		}),
		onAttachment(
			'agentDesk.showRenderedAttachment',
			'Show which HTML or SVG attachment rendered?',
			(a) => previews.showRendered(a),
			{
				needsBytes: true,
				accepts: (row) => available(row) && renderable(row.media_type),
			},
		),
		// Only from a PDF's page, where the person is told the viewer is a third-party extension.
		onAttachment(
			'agentDesk.openAttachmentInPdfViewer',
			'Open which PDF in the installed viewer?',
			(a) => previews.openInPdfViewer(a),
			{
				needsBytes: true,
				accepts: (row) => available(row) && row.media_type === 'application/pdf',
			},
		),
		onAttachment(
			'agentDesk.saveAttachmentAs',
			'Save which attachment?',
			async (a) => {
				const folder =
					tree.windowProjects.find((p) => p.name === a.project)?.path ??
					vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
				const where = await vscode.window.showSaveDialog({
					title: `Save ${visibleText(a.row.name)} (${humanBytes(a.row.size)})`,
					saveLabel: 'Save',
					// The base name is only the suggestion the dialog starts from; the person chooses the path.
					...(folder ? { defaultUri: vscode.Uri.file(path.join(folder, baseName(a.row.name))) } : {}),
				});
				if (!where) {
					return;
				}
				const content = await previews.read(a);
				if (content.truncated) {
					throw new Error(`${a.row.name}: the desk returned only part of it; nothing was saved.`);
				}
				await vscode.workspace.fs.writeFile(where, Buffer.from(content.base64, 'base64'));
				vscode.window.setStatusBarMessage(
					`Agent Desk: saved ${a.row.name} to ${where.scheme === 'file' ? where.fsPath : where.toString()}`,
					5000,
				);
			},
			{ needsBytes: true },
		),
		onAttachment('agentDesk.deleteAttachment', 'Delete which attachment?', async (a) => {
			const choice = await showWarningMessage(
				`Delete ${a.row.name} from task ‘${a.taskTitle}’?`,
				{
					modal: true,
					detail: `${humanBytes(a.row.size)}, ${a.row.source === 'run' ? 'attached by a run' : a.row.source === 'hand' ? 'attached by hand' : 'from a remote run'}. Its bytes are removed from the desk's store and cannot be brought back. The desk records who deleted it (your user name) and that it was from ${viaWords[a.via]}, in the project's audit log.`,
				},
				'Delete',
			);
			if (choice !== 'Delete') {
				return;
			}
			await desk.request(DeleteAttachment, { project: a.project, task: a.task, ref: a.id, via: a.via });
			previews.close(a.id);
			vscode.window.setStatusBarMessage(`Agent Desk: deleted ${a.row.name}`, 5000);
		}),
		onAttachment('agentDesk.copyAttachmentId', 'Copy the id of which attachment?', async (a) => {
			await vscode.env.clipboard.writeText(a.id);
			vscode.window.setStatusBarMessage(`Copied ${a.id}`, 3000);
		}),
		onAttachment(
			'agentDesk.revealAttachmentRun',
			'Reveal the run of which attachment?',
			async (a) => {
				if (!a.row.run_id) {
					void showInformationMessage(`Agent Desk: ${a.row.name} was attached by hand, not by a run.`);
					return;
				}
				await vscode.commands.executeCommand('agentDesk.openRun', a.project, a.row.run_id);
			},
			{ accepts: (row) => row.run_id !== null },
		),
		vscode.commands.registerCommand(
			'agentDesk.attachFile',
			guarded(async (node?: AttachmentsViewNode) => {
				const project = await chooseProject(
					tree.windowProjects,
					node?.type === 'task' ? { project: node.project } : node?.type === 'project' ? node : undefined,
					'Attach a file to a task of which project?',
				);
				if (!project) {
					return;
				}
				let task: { id: string; title: string } | undefined;
				if (node?.type === 'task') {
					// A task node: only its id and title are taken, the id checked.
					const { task_id: id, title } = (node.view ?? {}) as { task_id?: unknown; title?: unknown };
					if (typeof id !== 'string' || !taskPattern.test(id)) {
						throw new Error('That names no task of this window.');
					}
					task = { id, title: taskLabel({ task_id: id, title: typeof title === 'string' ? title : '' }) };
				} else {
					task = await pickTask(project.name);
				}
				if (!task) {
					return;
				}
				const files = await vscode.window.showOpenDialog({
					title: `Attach to ‘${visibleText(task.title)}’`,
					openLabel: 'Attach',
					canSelectFiles: true,
					canSelectFolders: false,
					canSelectMany: true,
					defaultUri: vscode.Uri.file(project.path),
				});
				if (!files?.length) {
					return;
				}
				const attached: AttachmentRow[] = [];
				await vscode.window.withProgress(
					{
						location: vscode.ProgressLocation.Notification,
						title: messageText(`Agent Desk: attaching to ‘${task.title}’…`),
					},
					async () => {
						for (const file of files) {
							if (file.scheme !== 'file') {
								reportError(
									new Error(`${file.toString()} is not a local file; only files on this machine can be attached.`),
								);
								continue;
							}
							try {
								attached.push(
									await desk.requestOnce(AttachFile, { project: project.name, task: task.id, path: file.fsPath }),
								);
							} catch (error) {
								// One message per refused file: it names the limit or the reason.
								reportError(error);
							}
						}
					},
				);
				if (attached.length === 1) {
					showStatusMessage(
						`Agent Desk: attached ${attached[0]!.name} (${humanBytes(attached[0]!.size)}) to ‘${task.title}’.`,
					);
				} else if (attached.length > 1) {
					showStatusMessage(
						`Agent Desk: attached ${attached.length} files (${humanBytes(attached.reduce((n, r) => n + r.size, 0))}) to ‘${task.title}’.`,
					);
				}
			}),
		),
	];
}
