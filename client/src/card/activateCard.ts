import type * as vscode from 'vscode';
import type { AssetsTreeProvider, AssetsViewNode } from '../assets/assetsTree';
import type { DeskClient } from '../common/deskClient';
import type { ReportError } from '../common/reportError';
import { runSettings } from '../runs/runSettings';
import { registerCardCommands } from './cardCommands';
import { LaunchCards } from './launchCard';

/**
 * The launch card feature: a card per project (its Go uses the run settings of the project's folder,
 * `projectPath`), opened and plugged into from the Assets view.
 */
export function activateCard(
	context: vscode.ExtensionContext,
	desk: DeskClient,
	assets: { tree: AssetsTreeProvider; view: vscode.TreeView<AssetsViewNode> },
	projectPath: (project: string) => string | undefined,
	reportError: ReportError,
): LaunchCards {
	const cards = new LaunchCards(
		context.extensionUri,
		desk,
		(project) => runSettings(projectPath(project)),
		reportError,
	);
	context.subscriptions.push(cards, ...registerCardCommands(desk, assets.tree, assets.view, cards, reportError));
	return cards;
}
