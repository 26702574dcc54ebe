import * as vscode from 'vscode';
import {
	GetAtGo,
	ListAssets,
	ListFolder,
	ListRetireProposals,
	ListVersions,
	UsedInLaunches,
	type AssetSummary,
	type RetireProposal,
	type AssetVersion,
	type AtGo,
	type UsedIn,
	type VersionFile,
} from '../../../server/src/protocol/protocol';
import { assetFileUri } from './assetFileSystem';
import { assetTooltip, atGoText, groupOf, versionFileRow, versionTooltip, type AssetGroup } from './assetText';
import { ProjectTreeProvider, type ProjectNode } from '../common/projectTree';
import type { WindowProject } from '../common/windowProjects';

const groupLabels: Record<AssetGroup, string> = {
	folders: 'Folders',
	repos: 'Repos',
	links: 'Links and Notes',
	skills: 'Skills',
};
const groupIcons: Record<AssetGroup, string> = {
	folders: 'folder-library',
	repos: 'repo',
	links: 'link',
	skills: 'mortar-board',
};

/** The node of one asset (under its project or its group); it expands to the asset's versions. */
export interface AssetNode {
	type: 'asset';
	asset: AssetSummary;
	project: string;
	main: boolean;
	atGo?: AtGo | { error: string };
	/** An open proposal to retire it (an agent's), waiting for the person's answer. */
	proposal?: RetireProposal;
}

/** Any row of the Assets view: a project, a group, one asset, a version, a folder or file in it, where it was used, a message. */
export type AssetsViewNode =
	| ProjectNode
	| { type: 'group'; group: AssetGroup; project: string; assets: AssetNode[] }
	| AssetNode
	| { type: 'version'; asset: AssetSummary; version: AssetVersion }
	| { type: 'olderVersions'; parent: AssetNode; remaining: number }
	| { type: 'folder'; asset: AssetSummary; version: number; path: string }
	| { type: 'file'; asset: AssetSummary; version: number; file: VersionFile }
	| { type: 'usedIn'; asset: AssetSummary; launches: UsedIn[] }
	| { type: 'launch'; asset: AssetSummary; launch: UsedIn }
	| { type: 'message'; text: string; icon: string };

/** Versions are shown this many at a time, newest first: a history of 24,000 commits is scrolled only by choice. */
export const versionPageSize = 200;

/**
 * The Assets view: per project, the main asset first, then the other assets grouped by kind
 * (folders, repos, links and notes, skills; retired ones only when shown). An asset expands to its
 * newest versions (older ones a page at a time), and a version to its top folder, a folder at a
 * time, as the Explorer does.
 */
export class AssetsTreeProvider extends ProjectTreeProvider<AssetsViewNode> {
	private showRetired = false;
	/** Per asset, how many versions its node shows (a page more each time older ones are asked for). */
	private readonly versionsShown = new Map<string, number>();

	/** Shows the next page of older versions under the asset the node belongs to. */
	showOlderVersions(node: Extract<AssetsViewNode, { type: 'olderVersions' }>): void {
		const id = node.parent.asset.id;
		this.versionsShown.set(id, (this.versionsShown.get(id) ?? versionPageSize) + versionPageSize);
		this.refreshNode(node.parent);
	}

	setShowRetired(show: boolean): void {
		this.showRetired = show;
		void vscode.commands.executeCommand('setContext', 'agentDesk.showRetired', show);
		this.refresh();
	}

	protected projectNode(project: WindowProject): AssetsViewNode {
		return { type: 'project', project };
	}

	protected async childrenOf(node: AssetsViewNode): Promise<AssetsViewNode[]> {
		switch (node.type) {
			case 'group':
				return node.assets;
			case 'asset':
				return await this.versionsOf(node);
			case 'version':
				return await this.folderOf(node.asset, node.version.version, '');
			case 'folder':
				return await this.folderOf(node.asset, node.version, node.path);
			case 'usedIn':
				return node.launches.map((launch): AssetsViewNode => ({ type: 'launch', asset: node.asset, launch }));
			default:
				return [];
		}
	}

	protected override failed(): AssetsViewNode[] {
		return [{ type: 'message', text: 'Could not read the library — see the log', icon: 'error' }];
	}

	protected makeTreeItem(node: AssetsViewNode): vscode.TreeItem {
		switch (node.type) {
			case 'project': {
				const item = new vscode.TreeItem(node.project.name, vscode.TreeItemCollapsibleState.Expanded);
				item.iconPath = new vscode.ThemeIcon('project');
				item.description = node.project.path;
				item.contextValue = 'project';
				return item;
			}
			case 'group': {
				const item = new vscode.TreeItem(groupLabels[node.group], vscode.TreeItemCollapsibleState.Expanded);
				item.id = `${node.project}/group/${node.group}`;
				item.iconPath = new vscode.ThemeIcon(groupIcons[node.group]);
				item.description = String(node.assets.length);
				item.contextValue = 'group';
				return item;
			}
			case 'asset':
				return assetItem(node);
			case 'version':
				return versionItem(node.asset, node.version);
			case 'olderVersions': {
				const count = Math.min(versionPageSize, node.remaining);
				const item = new vscode.TreeItem(
					`Show ${count} older version${count === 1 ? '' : 's'}…`,
					vscode.TreeItemCollapsibleState.None,
				);
				item.id = `${node.parent.asset.id}/older`;
				item.iconPath = new vscode.ThemeIcon('history');
				item.description = `${node.remaining.toLocaleString('en-US')} more`;
				item.tooltip = `v1–v${node.remaining} are not listed yet`;
				item.command = { command: 'agentDesk.showOlderVersions', title: 'Show Older Versions', arguments: [node] };
				item.contextValue = 'olderVersions';
				item.accessibilityInformation = { label: `Show ${count} older versions, ${item.description} not listed yet` };
				return item;
			}
			case 'folder': {
				const item = new vscode.TreeItem(baseName(node.path), vscode.TreeItemCollapsibleState.Collapsed);
				item.id = `${node.asset.id}/v${node.version}/d/${node.path}`;
				item.resourceUri = assetFileUri(node.asset.id, node.version, node.path);
				item.iconPath = vscode.ThemeIcon.Folder;
				item.contextValue = 'folder';
				item.accessibilityInformation = { label: `${baseName(node.path)}, folder ${node.path} at v${node.version}` };
				return item;
			}
			case 'file': {
				const item = new vscode.TreeItem(baseName(node.file.path), vscode.TreeItemCollapsibleState.None);
				item.id = `${node.asset.id}/v${node.version}/f/${node.file.path}`;
				item.resourceUri = assetFileUri(node.asset.id, node.version, node.file.path);
				const row = versionFileRow(node.file, node.version);
				item.iconPath = new vscode.ThemeIcon(row.icon);
				item.description = row.description;
				item.tooltip = row.tooltip;
				item.accessibilityInformation = {
					label: `${baseName(node.file.path)}, ${item.tooltip}${item.description ? `, ${String(item.description)}` : ''}`,
				};
				item.command = { command: 'agentDesk.openFileAtVersion', title: 'Open File at Version', arguments: [node] };
				item.contextValue = 'file';
				return item;
			}
			case 'usedIn': {
				const item = new vscode.TreeItem('Used in', vscode.TreeItemCollapsibleState.Collapsed);
				item.id = `${node.asset.id}/used-in`;
				item.iconPath = new vscode.ThemeIcon('references');
				item.description = `${node.launches.length} launch${node.launches.length === 1 ? '' : 'es'}`;
				return item;
			}
			case 'launch': {
				const { launch } = node;
				const item = new vscode.TreeItem(`${launch.role} v${launch.version}`, vscode.TreeItemCollapsibleState.None);
				item.id = `${node.asset.id}/used-in/${launch.launch_id}`;
				item.iconPath = new vscode.ThemeIcon('rocket');
				item.description = `${launch.project} · ${launch.launched_at.slice(0, 16).replace('T', ' ')}`;
				item.tooltip = `Launch ${launch.launch_id}: plugged as ${launch.role}, frozen at v${launch.version}`;
				item.accessibilityInformation = {
					label: `Used in launch as ${launch.role} at v${launch.version}, ${item.description}`,
				};
				return item;
			}
			case 'message': {
				const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
				item.iconPath = new vscode.ThemeIcon(node.icon);
				return item;
			}
		}
	}

	/** Every asset node of the window's projects, for pickers. */
	async allAssets(): Promise<AssetNode[]> {
		const nodes: AssetNode[] = [];
		for (const project of this.projects) {
			nodes.push(...(await this.assetNodes(project)));
		}
		return nodes;
	}

	protected async projectChildren(project: WindowProject): Promise<AssetsViewNode[]> {
		const nodes = (await this.assetNodes(project)).filter((n) => this.showRetired || !n.asset.retired);
		const main = nodes.filter((n) => n.main);
		const groups = new Map<AssetGroup, AssetNode[]>();
		for (const node of nodes) {
			if (node.main) {
				continue;
			}
			const group = groupOf(node.asset);
			groups.set(group, [...(groups.get(group) ?? []), node]);
		}
		const order: AssetGroup[] = ['folders', 'repos', 'links', 'skills'];
		return [
			...main,
			...order
				.filter((g) => groups.has(g))
				.map((group): AssetsViewNode => ({ type: 'group', group, project: project.name, assets: groups.get(group)! })),
		];
	}

	/** Waiting for the view to read its top rows again (see {@link readAgain}). */
	private readonly rootReads: Array<() => void> = [];

	override async getChildren(node?: AssetsViewNode): Promise<AssetsViewNode[]> {
		const children = await super.getChildren(node);
		if (!node) {
			this.rootReads.splice(0).forEach((read) => read());
		}
		return children;
	}

	/**
	 * Refreshes the view and resolves once it has read its top rows again (or after `timeoutMs`): a
	 * row is revealed only among rows the view has, and an asset another process added (the command
	 * line, `desk mcp`) has none until the view reads the library again.
	 */
	readAgain(timeoutMs = 3000): Promise<void> {
		return new Promise((resolve) => {
			const timer = setTimeout(resolve, timeoutMs);
			this.rootReads.push(() => {
				clearTimeout(timer);
				resolve();
			});
			this.refresh();
		});
	}

	/** The parent of an asset's row (its group, its project's, or none at the top), so the view can reveal it. */
	getParent(node: AssetsViewNode): AssetsViewNode | undefined {
		const projectNode = (name: string): AssetsViewNode | undefined => {
			const project = this.projects.find((p) => p.name === name);
			return this.projects.length > 1 && project ? { type: 'project', project } : undefined;
		};
		if (node.type === 'group' || (node.type === 'asset' && node.main)) {
			return projectNode(node.project);
		}
		if (node.type === 'asset') {
			// A group's row is known by its id (project and group), so a node built here stands for the one shown.
			return { type: 'group', group: groupOf(node.asset), project: node.project, assets: [] };
		}
		return undefined;
	}

	private async assetNodes(project: WindowProject): Promise<AssetNode[]> {
		const [{ assets }, { proposals }] = await Promise.all([
			this.desk.request(ListAssets, { project: project.name }),
			this.desk.request(ListRetireProposals, { project: project.name }),
		]);
		const proposalOf = new Map(proposals.map((p) => [p.asset_id, p]));
		const nodes = await Promise.all(
			assets.map(async (asset): Promise<AssetNode> => {
				const main = asset.projects.some((p) => p.name === project.name && p.main);
				// What go would read, for snapshot assets (git assets read their tip; links have no files).
				let atGo: AtGo | { error: string } | undefined;
				if (asset.engine === 'snapshot') {
					atGo = await this.desk
						.request(GetAtGo, { id: asset.id })
						.catch((error: unknown) => ({ error: (error as Error).message }));
				}
				const proposal = proposalOf.get(asset.id);
				return { type: 'asset', asset, project: project.name, main, atGo, ...(proposal ? { proposal } : {}) };
			}),
		);
		if (nodes.some((n) => n.main)) {
			// The walkthrough's first step: the open repository is a project's main asset.
			void vscode.commands.executeCommand('setContext', 'agentDesk.hasMainAsset', true);
		}
		return nodes.sort((a, b) => a.asset.name.localeCompare(b.asset.name));
	}

	private async versionsOf(node: AssetNode): Promise<AssetsViewNode[]> {
		const { asset } = node;
		const { usedIn } = await this.desk.request(UsedInLaunches, { id: asset.id });
		const used: AssetsViewNode[] =
			usedIn.length > 0 ? [{ type: 'usedIn', asset, launches: [...usedIn].reverse() }] : [];
		if (asset.engine === 'none') {
			return used;
		}
		// The newest page (and as many older ones as were asked for). The count the list read may be
		// out of date: a history that grew returns more (the newest are kept), one that shrank is asked again.
		const shown = this.versionsShown.get(asset.id) ?? versionPageSize;
		let page = await this.desk.request(ListVersions, {
			id: asset.id,
			from: Math.max(1, asset.version_count - shown + 1),
		});
		const wanted = Math.max(1, page.total - shown + 1);
		if (page.total > 0 && (page.versions.length === 0 || page.versions[0]!.version > wanted)) {
			page = await this.desk.request(ListVersions, { id: asset.id, from: wanted });
		}
		if (page.versions.length === 0) {
			return [...used, { type: 'message', text: 'No versions yet', icon: 'info' }];
		}
		const newest = page.versions.slice(-shown).reverse();
		const remaining = newest.at(-1)!.version - 1;
		const older: AssetsViewNode[] = remaining > 0 ? [{ type: 'olderVersions', parent: node, remaining }] : [];
		return [...used, ...newest.map((version): AssetsViewNode => ({ type: 'version', asset, version })), ...older];
	}

	private async folderOf(asset: AssetSummary, version: number, folder: string): Promise<AssetsViewNode[]> {
		const listed = await this.desk.request(ListFolder, { id: asset.id, version, folder });
		if (listed.folders.length === 0 && listed.files.length === 0) {
			return [{ type: 'message', text: 'No files in this version', icon: 'info' }];
		}
		const byName = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' });
		const prefix = folder === '' ? '' : `${folder}/`;
		return [
			...[...listed.folders]
				.sort(byName)
				.map((name): AssetsViewNode => ({ type: 'folder', asset, version, path: `${prefix}${name}` })),
			...[...listed.files]
				.sort((a, b) => byName(baseName(a.path), baseName(b.path)))
				.map((file): AssetsViewNode => ({ type: 'file', asset, version, file })),
		];
	}
}

function baseName(filePath: string): string {
	return filePath.slice(filePath.lastIndexOf('/') + 1);
}

function assetItem(node: AssetNode): vscode.TreeItem {
	const { asset, main, project, proposal } = node;
	const item = new vscode.TreeItem(
		asset.name,
		asset.engine === 'none' ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed,
	);
	item.id = `${project}/${asset.id}`;
	const workingChanges =
		node.atGo && !('error' in node.atGo) && node.atGo.engine === 'snapshot' && node.atGo.working_changes;
	item.iconPath = new vscode.ThemeIcon(
		main
			? 'star-full'
			: asset.kind === 'skill'
				? 'mortar-board'
				: asset.engine === 'git'
					? 'repo'
					: asset.engine === 'snapshot'
						? 'folder-library'
						: asset.kind === 'link'
							? 'link'
							: 'note',
		workingChanges ? new vscode.ThemeColor('gitDecoration.modifiedResourceForeground') : undefined,
	);
	const versions =
		asset.engine === 'none' ? '' : `${asset.version_count} version${asset.version_count === 1 ? '' : 's'}`;
	const changes = workingChanges ? `working changes → v${(node.atGo as { version: number }).version}` : '';
	// Short enough for a default-width sidebar; the tooltip and the accessible label say it in full.
	item.description = [
		proposal ? 'retirement proposed' : '',
		main ? 'main asset' : '',
		asset.retired ? 'retired' : '',
		changes || versions,
		asset.engine === 'git' && asset.branch ? `git ${asset.branch}` : asset.engine === 'none' ? '' : asset.engine,
		asset.kind,
	]
		.filter(Boolean)
		.join(' · ');
	const goText = atGoText(node.atGo);
	item.tooltip = new vscode.MarkdownString(assetTooltip(asset, main, project, node.atGo, proposal), true);
	if (proposal) {
		// Seen at a glance in a narrow sidebar, where the description is cut.
		item.iconPath = new vscode.ThemeIcon('lightbulb', new vscode.ThemeColor('charts.yellow'));
	}
	if (asset.problem) {
		item.iconPath = new vscode.ThemeIcon('warning');
	}
	item.contextValue = [
		'asset',
		asset.engine,
		main ? 'main' : '',
		asset.retired ? 'retired' : 'active',
		asset.kind === 'skill' ? 'skill' : '',
		// The Assets view's menus offer Accept Retirement and Decline by it.
		proposal ? 'proposal' : '',
	]
		.filter(Boolean)
		.join('.');
	item.accessibilityInformation = {
		label: [
			asset.name,
			main ? 'main asset' : '',
			proposal ? `retirement proposed by ${proposal.proposed_by}` : '',
			asset.retired ? 'retired' : '',
			asset.kind ? `kind ${asset.kind}` : '',
			`${asset.engine} engine`,
			asset.branch ? `branch ${asset.branch}` : '',
			versions,
			goText ?? '',
		]
			.filter(Boolean)
			.join(', '),
	};
	return item;
}

function versionItem(asset: AssetSummary, version: AssetVersion): vscode.TreeItem {
	const title = version.engine === 'git' ? version.subject : version.note;
	const item = new vscode.TreeItem(
		title ? `v${version.version}  ${title}` : `v${version.version}`,
		vscode.TreeItemCollapsibleState.Collapsed,
	);
	item.id = `${asset.id}/v${version.version}/${version.engine === 'git' ? version.commit : version.manifest}`;
	const when = version.made_at.slice(0, 16).replace('T', ' ');
	if (version.engine === 'git') {
		item.iconPath = new vscode.ThemeIcon(version.head_at ? 'git-commit' : 'circle-small');
		item.description = `${version.commit.slice(0, 7)} · ${when} · ${version.made_by}${version.never_head ? ' · never head' : ''}`;
	} else {
		item.iconPath = new vscode.ThemeIcon(version.version === asset.picked_version ? 'pass-filled' : 'circle-outline');
		item.description = `${version.file_count} file${version.file_count === 1 ? '' : 's'} · ${when} · ${version.made_by}`;
	}
	item.tooltip = new vscode.MarkdownString(versionTooltip(asset, version));
	item.contextValue = `version.${version.engine}${version.version > 1 ? '.hasPrevious' : ''}`;
	item.accessibilityInformation = { label: `v${version.version}${title ? ` ${title}` : ''}, ${item.description}` };
	return item;
}
