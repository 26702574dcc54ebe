import * as vscode from 'vscode';
import { showInformationMessage } from '../common/messages';
import { PlugAsset, type PlugRole } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import type { LaunchCards } from './launchCard';
import type { AssetsViewNode, AssetsTreeProvider } from '../assets/assetsTree';
import { chooseProject } from '../common/windowProjects';
import { guardedBy } from '../common/guarded';

/** Opening a project's launch card, and plugging an asset into it from the Assets view. */
export function registerCardCommands(
	desk: DeskClient,
	assets: AssetsTreeProvider,
	view: vscode.TreeView<AssetsViewNode>,
	cards: LaunchCards,
	reportError: (error: unknown) => void,
): vscode.Disposable[] {
	const guarded = guardedBy(reportError);
	const project = async (node?: AssetsViewNode) =>
		(await chooseProject(assets.windowProjects, node, 'Launch card of which project?'))?.name;
	const plug = (role: PlugRole) =>
		guarded(async (node?: AssetsViewNode) => {
			const target =
				node?.type === 'asset' ? node : view.selection[0]?.type === 'asset' ? view.selection[0] : undefined;
			if (!target) {
				void showInformationMessage('Agent Desk: choose an asset in the Assets view to plug.');
				return;
			}
			await desk.request(PlugAsset, { project: target.project, id: target.asset.id, role });
			cards.open(target.project);
			await cards.refresh(target.project);
		});
	return [
		vscode.commands.registerCommand(
			'agentDesk.openLaunchCard',
			guarded(async (node?: AssetsViewNode) => {
				const name = await project(node);
				if (!name) {
					void showInformationMessage('Agent Desk: open a folder with a git repository to write a launch card for it.');
					return;
				}
				cards.open(name);
			}),
		),
		vscode.commands.registerCommand('agentDesk.plugAsReference', plug('reference')),
		vscode.commands.registerCommand('agentDesk.plugAsTarget', plug('target')),
		vscode.commands.registerCommand('agentDesk.plugAsInstructions', plug('instructions')),
	];
}
