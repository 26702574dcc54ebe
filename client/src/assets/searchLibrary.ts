import * as vscode from 'vscode';
import { SearchLibrary, type LibraryHit } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { pickText } from '../common/markdownText';
import type { AssetNode, AssetsTreeProvider, AssetsViewNode } from './assetsTree';

/** How long typing must pause before the library is searched: one search a word, not one a key. */
const typingPauseMs = 200;

interface HitItem extends vscode.QuickPickItem {
	readonly hit?: LibraryHit;
}

/**
 * Search Library…: a quick pick that searches the library as the person types (BM25 over names,
 * tags, about and text; glossary: Suggestion), each asset with its score and why it matched, the
 * window's projects' assets only (the ones the Assets view can show). Choosing one reveals it in the
 * Assets view, selected and expanded to its versions.
 */
export function registerSearchLibrary(
	desk: DeskClient,
	assets: AssetsTreeProvider,
	view: vscode.TreeView<AssetsViewNode>,
	reportError: (error: unknown) => void,
): vscode.Disposable {
	return vscode.commands.registerCommand('agentDesk.searchLibrary', () => {
		const pick = vscode.window.createQuickPick<HitItem>();
		pick.title = 'Search Library';
		pick.placeholder = "Words to find in the assets' names, tags, about and text";
		// The desk ranks; the quick pick must neither hide an item whose label lacks the words nor re-rank.
		pick.matchOnDescription = false;
		pick.matchOnDetail = false;
		const projects = assets.windowProjects;
		// One project: the desk searches it alone; several: the library, kept to the window's projects.
		const project = projects.length === 1 ? projects[0]!.name : undefined;
		const shown = assets.allAssets().then(
			(nodes) => new Map(nodes.map((n): [string, AssetNode] => [n.asset.id, n])),
			(error: unknown) => {
				reportError(error);
				return new Map<string, AssetNode>();
			},
		);
		let asked = 0;
		let timer: NodeJS.Timeout | undefined;

		const search = async (query: string, ask: number) => {
			pick.busy = true;
			try {
				const [{ hits }, nodes] = await Promise.all([
					desk.request(SearchLibrary, { query, limit: project ? 50 : 200, ...(project ? { project } : {}) }),
					shown,
				]);
				if (ask !== asked) {
					return;
				}
				const items = hits
					.filter((h) => nodes.has(h.id))
					.slice(0, 50)
					.map((hit): HitItem => ({
						label: pickText(hit.name),
						description: `score ${hit.score.toFixed(2)}`,
						detail: pickText(hit.reason),
						alwaysShow: true,
						hit,
					}));
				pick.items =
					items.length > 0
						? items
						: [{ label: pickText(`No asset matches “${query.slice(0, 80)}”`), alwaysShow: true }];
			} catch (error) {
				if (ask === asked) {
					pick.items = [];
					reportError(error);
				}
			} finally {
				if (ask === asked) {
					pick.busy = false;
				}
			}
		};

		pick.onDidChangeValue((value) => {
			clearTimeout(timer);
			const ask = ++asked;
			const query = value.trim().slice(0, 4096);
			if (!query) {
				pick.items = [];
				pick.busy = false;
				return;
			}
			timer = setTimeout(() => void search(query, ask), typingPauseMs);
		});
		pick.onDidAccept(async () => {
			const hit = pick.selectedItems[0]?.hit;
			if (!hit) {
				return;
			}
			pick.hide();
			const node = (await shown).get(hit.id);
			if (node) {
				try {
					await assets.readAgain();
					await view.reveal(node, { select: true, focus: true, expand: 1 });
				} catch (error) {
					reportError(error);
				}
			}
		});
		pick.onDidHide(() => {
			clearTimeout(timer);
			asked++;
			pick.dispose();
		});
		pick.show();
	});
}
