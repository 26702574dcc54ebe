import * as vscode from 'vscode';
import type { BranchRewrite } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { showWarningMessage } from '../common/messages';
import type { ReportError } from '../common/reportError';
import { registerAddSkill } from './addSkill';
import { registerAssetCommands } from './assetCommands';
import { AssetFileSystemProvider, assetScheme } from './assetFileSystem';
import { AssetsTreeProvider, type AssetsViewNode } from './assetsTree';
import { registerProposalCommands } from './proposalCommands';
import { registerSearchLibrary } from './searchLibrary';

/** The Assets feature: its view, the read-only `desk-asset:` files of versions, and its commands. */
export function activateAssets(context: vscode.ExtensionContext, desk: DeskClient, reportError: ReportError) {
	const tree = new AssetsTreeProvider(desk, reportError);
	const view = vscode.window.createTreeView('agentDesk.assets', { treeDataProvider: tree, showCollapseAll: true });
	const files = new AssetFileSystemProvider(desk);
	context.subscriptions.push(
		tree,
		view,
		tree.openRowsBySelection(view, 'agentDesk.assets.openRow'),
		vscode.workspace.registerFileSystemProvider(assetScheme, files, {
			isReadonly: true,
			isCaseSensitive: true,
		}),
	);
	void vscode.commands.executeCommand('setContext', 'agentDesk.showRetired', false);
	const commands = registerAssetCommands(desk, tree, view, reportError);
	context.subscriptions.push(
		...commands.disposables,
		...registerProposalCommands(desk, tree, view, reportError),
		registerSearchLibrary(desk, tree, view, reportError),
		registerAddSkill(desk, tree, reportError),
		vscode.commands.registerCommand('agentDesk.refreshAssets', () => tree.refresh()),
		vscode.commands.registerCommand('agentDesk.copyAssetId', async (node?: AssetsViewNode) => {
			const selected = node ?? view.selection[0];
			if (selected?.type === 'asset' || selected?.type === 'version') {
				await vscode.env.clipboard.writeText(selected.asset.id);
				vscode.window.setStatusBarMessage(`Copied ${selected.asset.id}`, 3000);
			}
		}),
	);
	const onHistoryRewritten = (rewrite: BranchRewrite) => {
		files.forgetVersionsFrom(rewrite.id, rewrite.firstChanged);
		tellHistoryRewritten(rewrite);
	};
	return { tree, view, onSnapshotProgress: commands.onSnapshotProgress, onHistoryRewritten };
}

/** A branch a git asset follows was rewritten: which versions now name other commits. */
function tellHistoryRewritten(r: BranchRewrite): void {
	const range =
		r.firstChanged > r.newCount
			? ''
			: ` v${r.firstChanged}${r.newCount > r.firstChanged ? `–v${r.newCount}` : ''} now name other commits`;
	void showWarningMessage(
		`Agent Desk: ${r.branch || 'HEAD'} of ${r.name} was rewritten.${range}${r.oldCount >= r.firstChanged ? ` (it had v${r.firstChanged}–v${r.oldCount} before)` : ''} Runs and observations keep the commits they named.`,
	);
}
