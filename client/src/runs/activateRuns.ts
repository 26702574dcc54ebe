import * as vscode from 'vscode';
import type { DeskClient } from '../common/deskClient';
import type { ReportError } from '../common/reportError';
import { registerGateCommands } from './gateCommands';
import { registerRunCommands } from './runCommands';
import { PatchSides, patchScheme, RunPages, RunTexts, runTextScheme } from './runDocuments';
import { RunsTreeProvider } from './runsTree';
import { WaitingRuns } from './waitingRuns';

/** The Runs feature: its view, the run pages, the PatchSets' `desk-patch:` sides, runs' `desk-run:` texts, its commands and the gate's. */
export function activateRuns(
	context: vscode.ExtensionContext,
	desk: DeskClient,
	reportError: ReportError,
	/** Settles once the desk has opened the window's projects (run pages restored after a reload wait for it). */
	whenSettled: () => Promise<unknown>,
) {
	const tree = new RunsTreeProvider(desk, reportError);
	const pages = new RunPages(desk, context.extensionUri, whenSettled);
	const patchSides = new PatchSides();
	const runTexts = new RunTexts();
	const view = vscode.window.createTreeView('agentDesk.runs', { treeDataProvider: tree, showCollapseAll: true });
	const waiting = new WaitingRuns(desk, view, () => tree.windowProjects, reportError);
	context.subscriptions.push(
		tree,
		view,
		tree.openRowsBySelection(view, 'agentDesk.runs.openRow'),
		waiting,
		// The view's rows change with every change of a project's runs, and with the window's projects.
		tree.onDidChangeTreeData(() => waiting.refresh()),
		pages,
		vscode.workspace.registerTextDocumentContentProvider(patchScheme, patchSides),
		vscode.workspace.registerTextDocumentContentProvider(runTextScheme, runTexts),
		...registerRunCommands(desk, tree, pages, patchSides, runTexts, reportError),
		vscode.commands.registerCommand('agentDesk.showNeverStartedRuns', () => tree.setShowNeverStarted(true)),
		vscode.commands.registerCommand('agentDesk.hideNeverStartedRuns', () => tree.setShowNeverStarted(false)),
	);
	void vscode.commands.executeCommand('setContext', 'agentDesk.showNeverStarted', false);
	const gate = registerGateCommands(desk, tree, pages, patchSides, reportError);
	context.subscriptions.push(...gate.disposables);
	return { tree, pages, onRunFinished: gate.onRunFinished };
}
