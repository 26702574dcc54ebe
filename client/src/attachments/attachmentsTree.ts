import * as vscode from 'vscode';
import { humanBytes } from '../../../server/src/attachments/names';
import { ListAttachments, type AttachmentRow, type TaskAttachmentsView } from '../../../server/src/protocol/protocol';
import { attachmentKind, renderable, type AttachmentKind } from './kinds';
import { markdownLines, markdownText as escapeMarkdown } from '../common/markdownText';
import type { WindowProject } from '../common/windowProjects';
import { ProjectTreeProvider, type ProjectNode } from '../common/projectTree';

/** Any row of the Attachments view: a project, a task with attachments, one attached file. */
export type AttachmentsViewNode =
	| ProjectNode
	| { type: 'task'; project: string; view: TaskAttachmentsView }
	| { type: 'file'; project: string; taskTitle: string; row: AttachmentRow };

const kindIcons: Record<AttachmentKind, string> = {
	image: 'file-media',
	text: 'file-text',
	code: 'file-code',
	markdown: 'markdown',
	table: 'table',
	json: 'json',
	pdf: 'file-pdf',
	html: 'code',
	other: 'file-binary',
};

const sourceWords: Record<AttachmentRow['source'], string> = { run: 'run', hand: 'hand', remote: 'remote' };

/** A task as the view names it: its title, or its id when the desk has no title for it. */
export function taskLabel(view: Pick<TaskAttachmentsView, 'title' | 'task_id'>): string {
	return view.title.trim() || view.task_id;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The Attachments view: per project, the tasks with attachments (newest first: title, count, total
 * size) and under each its files (cleaned name, an icon by type, size, source; "unavailable" with the
 * reason when the bytes are not in the store). Selecting a file opens its preview.
 */
export class AttachmentsTreeProvider extends ProjectTreeProvider<AttachmentsViewNode> {
	/** Every project's tasks with attachments, for the commands' pickers. */
	async tasks(): Promise<Array<{ project: string; view: TaskAttachmentsView }>> {
		const all: Array<{ project: string; view: TaskAttachmentsView }> = [];
		for (const project of this.projects) {
			const { tasks } = await this.desk.request(ListAttachments, { project: project.name });
			all.push(...tasks.map((view) => ({ project: project.name, view })));
		}
		return all;
	}

	protected makeTreeItem(node: AttachmentsViewNode): vscode.TreeItem {
		switch (node.type) {
			case 'project': {
				const item = new vscode.TreeItem(node.project.name, vscode.TreeItemCollapsibleState.Expanded);
				item.iconPath = new vscode.ThemeIcon('project');
				item.contextValue = 'attachmentProject';
				return item;
			}
			case 'task': {
				const { view } = node;
				const item = new vscode.TreeItem(taskLabel(view), vscode.TreeItemCollapsibleState.Expanded);
				item.id = `${node.project}/attachments/${view.task_id}`;
				item.iconPath = new vscode.ThemeIcon('inbox');
				item.description = `${plural(view.count, 'file')} · ${humanBytes(view.bytes)}`;
				item.tooltip = new vscode.MarkdownString(
					`**${escapeMarkdown(taskLabel(view))}**\n\n${plural(view.count, 'attachment')}, ${humanBytes(view.bytes)}\n\nTask \`${view.task_id}\``,
				);
				item.contextValue = 'attachmentTask';
				item.accessibilityInformation = { label: `${taskLabel(view)}, ${item.description}` };
				return item;
			}
			case 'file':
				return fileItem(node);
		}
	}

	protected projectNode(project: WindowProject): AttachmentsViewNode {
		return { type: 'project', project };
	}

	protected async projectChildren(project: WindowProject): Promise<AttachmentsViewNode[]> {
		const { tasks } = await this.desk.request(ListAttachments, { project: project.name });
		return tasks.map((view): AttachmentsViewNode => ({ type: 'task', project: project.name, view }));
	}

	protected childrenOf(node: AttachmentsViewNode): AttachmentsViewNode[] {
		return node.type === 'task'
			? node.view.files.map((row): AttachmentsViewNode => ({
					type: 'file',
					project: node.project,
					taskTitle: taskLabel(node.view),
					row,
				}))
			: [];
	}
}

function fileItem(node: Extract<AttachmentsViewNode, { type: 'file' }>): vscode.TreeItem {
	const { row } = node;
	// The recorded type only chooses the icon; the preview goes by the stored bytes.
	const kind = attachmentKind(row.media_type, row.name);
	const item = new vscode.TreeItem(row.name, vscode.TreeItemCollapsibleState.None);
	item.id = `${node.project}/attachment/${row.id}`;
	const parts = [humanBytes(row.size), sourceWords[row.source]];
	if (row.unavailable !== null) {
		parts.push(`unavailable: ${row.unavailable}`);
		item.iconPath = new vscode.ThemeIcon(kindIcons[kind], new vscode.ThemeColor('disabledForeground'));
	} else {
		item.iconPath = new vscode.ThemeIcon(kindIcons[kind]);
	}
	item.description = parts.join(' · ');
	const facts: Array<[string, string]> = [
		['Size', `${humanBytes(row.size)} (${row.size.toLocaleString('en-US')} bytes)`],
		['Type', `${row.media_type} (as recorded)`],
		['Source', row.source === 'run' ? 'a run' : row.source === 'hand' ? 'attached by hand' : 'a remote run'],
		['Added', `${row.created_at.slice(0, 16).replace('T', ' ')}${row.added_by ? ` by ${row.added_by}` : ''}`],
		...(row.run_id ? ([['Run', `\`${row.run_id}\``]] as Array<[string, string]>) : []),
		['Id', `\`${row.id}\``],
		// A non-breaking hyphen keeps the label on one line; the start of the digest is enough to tell files apart.
		['SHA\u2011256', `\`${row.sha256.slice(0, 16)}…\``],
	];
	const cell = (value: string) => (value.startsWith('`') ? value : escapeMarkdown(value));
	item.tooltip = new vscode.MarkdownString(
		`**${escapeMarkdown(row.name)}**${row.note ? `\n\n${markdownLines(row.note)}` : ''}\n\n| | |\n|---|---|\n${facts.map(([k, v]) => `| ${k} | ${cell(v)} |`).join('\n')}\n${
			row.unavailable !== null ? `\n$(warning) **Unavailable:** ${escapeMarkdown(row.unavailable)}\n` : ''
		}`,
		true,
	);
	item.command = { command: 'agentDesk.openAttachment', title: 'Open Attachment', arguments: [node] };
	// attachment.<kind>[.renderable][.run].<available|unavailable>: the view's menus go by it.
	item.contextValue = [
		'attachment',
		kind,
		renderable(row.media_type) ? 'renderable' : '',
		row.run_id ? 'run' : '',
		row.unavailable === null ? 'available' : 'unavailable',
	]
		.filter(Boolean)
		.join('.');
	item.accessibilityInformation = { label: `${row.name}, ${item.description}` };
	return item;
}
