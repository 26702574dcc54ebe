import * as vscode from 'vscode';
import type { DeskClient } from '../common/deskClient';
import type { ReportError } from '../common/reportError';
import { BoardDocuments, boardScheme, registerLineageCommands, type LineageHost } from './lineageCommands';
import { registerMemoryCommands } from './memoryCommands';
import { MemoryTreeProvider } from './memoryTree';

/**
 * Lineage and project memory in the editor (glossary: Lineage, Project memory): the Memory view, the
 * boards' documents, the lineage and memory commands and the report notification. The Runs view and
 * the run page show the lineage themselves (runs/, from this folder's text modules).
 */
export function activateLineage(
	context: vscode.ExtensionContext,
	desk: DeskClient,
	host: LineageHost,
	reportError: ReportError,
) {
	const memory = new MemoryTreeProvider(desk, reportError);
	const boards = new BoardDocuments(desk);
	const lineage = registerLineageCommands(desk, host, boards, reportError);
	// A `git pull`, a checkout or an edit changes a memory file without the desk: the view reads it again.
	const watcher = vscode.workspace.createFileSystemWatcher('**/.desk-memory/*.json');
	let timer: NodeJS.Timeout | undefined;
	const soon = () => {
		clearTimeout(timer);
		timer = setTimeout(() => memory.refresh(), 300);
	};
	const memoryView = vscode.window.createTreeView('agentDesk.memory', {
		treeDataProvider: memory,
		showCollapseAll: true,
	});
	context.subscriptions.push(
		memory,
		boards,
		memoryView,
		memory.openRowsBySelection(memoryView, 'agentDesk.memory.openRow'),
		vscode.workspace.registerTextDocumentContentProvider(boardScheme, boards),
		watcher,
		watcher.onDidChange(soon),
		watcher.onDidCreate(soon),
		watcher.onDidDelete(soon),
		{ dispose: () => clearTimeout(timer) },
		...lineage.disposables,
		...registerMemoryCommands(desk, host, memory, reportError),
	);
	return {
		memory,
		onReport: lineage.onReport,
		/** desk/lineage/didChange and desk/runs/didChange: open boards read again (the Runs view refreshes itself). */
		onLineageChanged: (project: string) => boards.refresh(project),
	};
}
