import * as vscode from 'vscode';
import type { DeskClient } from '../common/deskClient';
import type { ReportError } from '../common/reportError';
import { registerGateCommands } from './gateCommands';
import { registerRunCommands } from './runCommands';
import { PatchSides, patchScheme, RunPages } from './runDocuments';
import { RunsTreeProvider } from './runsTree';

/** The Runs feature: its view, the run pages, the PatchSets' `desk-patch:` sides, its commands and the gate's. */
export function activateRuns(context: vscode.ExtensionContext, desk: DeskClient, reportError: ReportError) {
	const tree = new RunsTreeProvider(desk, reportError);
	const pages = new RunPages(desk);
	const patchSides = new PatchSides();
	context.subscriptions.push(
		tree,
		vscode.window.createTreeView('agentDesk.runs', { treeDataProvider: tree, showCollapseAll: true }),
		pages,
		vscode.workspace.registerTextDocumentContentProvider(patchScheme, patchSides),
		...registerRunCommands(desk, tree, pages, patchSides, reportError),
	);
	const gate = registerGateCommands(desk, tree, pages, patchSides, reportError);
	context.subscriptions.push(...gate.disposables);
	return { tree, pages, onRunFinished: gate.onRunFinished };
}
