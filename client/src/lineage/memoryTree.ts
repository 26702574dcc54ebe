import * as vscode from 'vscode';
import { ListLineageRoots, ShowMemory, type LineageRoot } from '../../../server/src/protocol/protocol';
import { ProjectTreeProvider, type ProjectNode } from '../common/projectTree';
import type { WindowProject } from '../common/windowProjects';
import {
	memoryDescription,
	memoryRootDescription,
	memoryRootTooltip,
	memoryTooltip,
	newestMemoriesFirst,
	type MemoryEntry,
} from './memoryText';

/** Any row of the Memory view. */
export type MemoryViewNode =
	| ProjectNode
	| { type: 'memoryRoot'; project: string; root: LineageRoot }
	| { type: 'memory'; project: string; root: string; entry: MemoryEntry }
	/** The row under a root without memory: what Remember… does, and the command itself. */
	| { type: 'memoryEmpty'; project: string; root: LineageRoot };

/**
 * The Memory view (glossary: Project memory): per project its roots, each with the memories of its
 * `.desk-memory/<root>.json` as the desk reads the file now, newest first, with "uncommitted" on the
 * root and "⚠ evidence changed" on a memory whose cited file moved on. In an untrusted workspace it
 * shows nothing (ProjectTreeProvider): the file is repository content.
 */
export class MemoryTreeProvider extends ProjectTreeProvider<MemoryViewNode> {
	protected projectNode(project: WindowProject): MemoryViewNode {
		return { type: 'project', project };
	}

	protected async projectChildren(project: WindowProject): Promise<MemoryViewNode[]> {
		const { roots } = await this.desk.request(ListLineageRoots, { project: project.name });
		return roots.map((root): MemoryViewNode => ({ type: 'memoryRoot', project: project.name, root }));
	}

	protected async childrenOf(node: MemoryViewNode): Promise<MemoryViewNode[]> {
		if (node.type !== 'memoryRoot') {
			return [];
		}
		if (!node.root.memory.exists || node.root.memory.corrupt) {
			return [{ type: 'memoryEmpty', project: node.project, root: node.root }];
		}
		const view = await this.desk.request(ShowMemory, { project: node.project, root: node.root.name });
		if (view.memories.length === 0) {
			return [{ type: 'memoryEmpty', project: node.project, root: node.root }];
		}
		return newestMemoriesFirst(view.memories).map((entry): MemoryViewNode => ({
			type: 'memory',
			project: node.project,
			root: node.root.name,
			entry,
		}));
	}

	protected makeTreeItem(node: MemoryViewNode): vscode.TreeItem {
		switch (node.type) {
			case 'project': {
				const item = new vscode.TreeItem(node.project.name, vscode.TreeItemCollapsibleState.Expanded);
				item.iconPath = new vscode.ThemeIcon('project');
				return item;
			}
			case 'memoryRoot': {
				const { root } = node;
				const item = new vscode.TreeItem(root.name, vscode.TreeItemCollapsibleState.Expanded);
				item.id = `${node.project}/memory/${root.name}`;
				item.description = memoryRootDescription(root);
				item.tooltip = new vscode.MarkdownString(memoryRootTooltip(root));
				item.iconPath = root.memory.corrupt
					? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
					: new vscode.ThemeIcon(
							'book',
							root.memory.uncommitted ? new vscode.ThemeColor('gitDecoration.modifiedResourceForeground') : undefined,
						);
				// memoryRoot.<file|none>[.uncommitted]: the menus offer Commit Memory only where there is something to commit.
				item.contextValue = `memoryRoot.${root.memory.exists ? 'file' : 'none'}${root.memory.uncommitted ? '.uncommitted' : ''}`;
				item.accessibilityInformation = { label: `Root ${root.name}, ${item.description}` };
				return item;
			}
			case 'memory': {
				const { entry } = node;
				const item = new vscode.TreeItem(entry.memory.title, vscode.TreeItemCollapsibleState.None);
				item.id = `${node.project}/memory/${node.root}/${entry.id}`;
				item.description = memoryDescription(entry);
				item.tooltip = new vscode.MarkdownString(memoryTooltip(entry));
				item.iconPath = entry.evidence_changed.length
					? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
					: new vscode.ThemeIcon(entry.memory.source.kind === 'landing' ? 'git-merge' : 'note');
				item.contextValue = 'memory';
				item.accessibilityInformation = { label: `Memory ${entry.memory.title}, ${item.description}` };
				return item;
			}
			case 'memoryEmpty': {
				const corrupt = node.root.memory.corrupt;
				const item = new vscode.TreeItem(
					corrupt
						? 'The memory file is damaged: it was kept aside, nothing replaced it'
						: 'No memory yet: Remember… adds one',
					vscode.TreeItemCollapsibleState.None,
				);
				item.description = corrupt ? corrupt : 'branches of this root start with its index';
				item.iconPath = new vscode.ThemeIcon(corrupt ? 'warning' : 'lightbulb');
				item.command = corrupt
					? undefined
					: { command: 'agentDesk.remember', title: 'Remember…', arguments: [node.project, node.root.name] };
				item.contextValue = 'memoryEmpty';
				return item;
			}
		}
	}
}
