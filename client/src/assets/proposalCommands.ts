import * as vscode from 'vscode';
import { AnswerRetireProposal } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { guardedBy } from '../common/guarded';
import { pickText } from '../common/markdownText';
import { showInformationMessage, showStatusMessage } from '../common/messages';
import type { AssetNode, AssetsTreeProvider, AssetsViewNode } from './assetsTree';

/**
 * Accept Retirement and Decline: the person's answer to an agent's proposal to retire an asset
 * (glossary: Retired). On the row of an asset with an open proposal (inline and in its menu), or
 * from the palette, which asks for one of the window's open proposals.
 */
export function registerProposalCommands(
	desk: DeskClient,
	assets: AssetsTreeProvider,
	view: vscode.TreeView<AssetsViewNode>,
	reportError: (error: unknown) => void,
): vscode.Disposable[] {
	const guarded = guardedBy(reportError);

	const pickProposal = async (node: AssetsViewNode | undefined, title: string) => {
		const given = node ?? view.selection[0];
		if (given?.type === 'asset' && given.proposal) {
			return given as AssetNode & { proposal: NonNullable<AssetNode['proposal']> };
		}
		const open = (await assets.allAssets()).filter((n) => n.proposal);
		if (open.length === 0) {
			void showInformationMessage('Agent Desk: no proposal to retire an asset is open.');
			return undefined;
		}
		const picked = await vscode.window.showQuickPick(
			open.map((n) => ({
				label: pickText(n.asset.name),
				description: pickText(`proposed by ${n.proposal!.proposed_by}`),
				detail: pickText(n.proposal!.reason.replace(/\s+/g, ' ').slice(0, 300)),
				node: n,
			})),
			{ title, matchOnDescription: true, matchOnDetail: true },
		);
		return picked?.node as (AssetNode & { proposal: NonNullable<AssetNode['proposal']> }) | undefined;
	};

	const answer = (answer: 'accept' | 'decline') =>
		guarded(async (node?: AssetsViewNode) => {
			const target = await pickProposal(
				node,
				answer === 'accept' ? 'Accept the retirement of which asset?' : 'Decline the retirement of which asset?',
			);
			if (!target) {
				return;
			}
			await desk.requestOnce(AnswerRetireProposal, { id: target.proposal.id, answer });
			showStatusMessage(
				answer === 'accept'
					? `Agent Desk: ${target.asset.name} is retired; Unretire puts it back.`
					: `Agent Desk: ${target.asset.name} stays; the proposal is declined.`,
			);
		});

	return [
		vscode.commands.registerCommand('agentDesk.acceptRetirement', answer('accept')),
		vscode.commands.registerCommand('agentDesk.declineRetirement', answer('decline')),
	];
}
