import * as vscode from 'vscode';
import { ListAssets, ListVersions, type AssetSummary, type AssetVersion } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../deskClient';

/** A project of this window, as the Assets view groups by it when the window has several. */
export interface WindowProject {
	name: string;
	path: string;
}

export type AssetsNode =
	| { type: 'project'; project: WindowProject }
	| { type: 'asset'; asset: AssetSummary; project: string }
	| { type: 'version'; asset: AssetSummary; version: AssetVersion }
	| { type: 'message'; text: string; icon: string };

/**
 * The Assets view: the assets of the window's projects, main asset first, each with its kind,
 * engine, branch and number of versions; an asset expands to its versions, newest first.
 */
export class AssetsTreeProvider implements vscode.TreeDataProvider<AssetsNode>, vscode.Disposable {
	private readonly changeEmitter = new vscode.EventEmitter<AssetsNode | undefined>();
	readonly onDidChangeTreeData = this.changeEmitter.event;
	private projects: WindowProject[] = [];

	constructor(private readonly desk: DeskClient, private readonly onError: (error: unknown) => void) {}

	setProjects(projects: WindowProject[]): void {
		this.projects = projects;
		this.refresh();
	}

	refresh(): void {
		this.changeEmitter.fire(undefined);
	}

	async getChildren(node?: AssetsNode): Promise<AssetsNode[]> {
		if (this.desk.state !== 'ready' || !vscode.workspace.isTrusted) {
			return [];
		}
		try {
			if (!node) {
				if (this.projects.length === 1) {
					return await this.assetsOf(this.projects[0]!);
				}
				return this.projects.map((project) => ({ type: 'project', project }));
			}
			switch (node.type) {
				case 'project':
					return await this.assetsOf(node.project);
				case 'asset':
					return await this.versionsOf(node.asset);
				default:
					return [];
			}
		} catch (error) {
			this.onError(error);
			return [{ type: 'message', text: 'Could not read the library — see the log', icon: 'error' }];
		}
	}

	getTreeItem(node: AssetsNode): vscode.TreeItem {
		switch (node.type) {
			case 'project': {
				const item = new vscode.TreeItem(node.project.name, vscode.TreeItemCollapsibleState.Expanded);
				item.iconPath = new vscode.ThemeIcon('project');
				item.description = node.project.path;
				item.contextValue = 'project';
				return item;
			}
			case 'asset':
				return assetItem(node.asset, node.project);
			case 'version':
				return versionItem(node.asset, node.version);
			case 'message': {
				const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
				item.iconPath = new vscode.ThemeIcon(node.icon);
				return item;
			}
		}
	}

	dispose(): void {
		this.changeEmitter.dispose();
	}

	private async assetsOf(project: WindowProject): Promise<AssetsNode[]> {
		const { assets } = await this.desk.request(ListAssets, { project: project.name });
		const isMain = (a: AssetSummary) => a.projects.some((p) => p.name === project.name && p.main);
		return [...assets]
			.sort((a, b) => Number(isMain(b)) - Number(isMain(a)) || a.name.localeCompare(b.name))
			.map((asset) => ({ type: 'asset', asset, project: project.name }));
	}

	private async versionsOf(asset: AssetSummary): Promise<AssetsNode[]> {
		const { versions } = await this.desk.request(ListVersions, { id: asset.id });
		if (versions.length === 0) {
			return [{ type: 'message', text: 'No versions yet', icon: 'info' }];
		}
		return versions.reverse().map((version) => ({ type: 'version', asset, version }));
	}
}

function assetItem(asset: AssetSummary, project: string): vscode.TreeItem {
	const main = asset.projects.some((p) => p.name === project && p.main);
	const item = new vscode.TreeItem(asset.name, asset.engine === 'none' ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed);
	item.id = `${project}/${asset.id}`;
	item.iconPath = new vscode.ThemeIcon(main ? 'star-full' : asset.engine === 'git' ? 'repo' : asset.engine === 'snapshot' ? 'folder-library' : 'note');
	const versions = asset.engine === 'none' ? '' : `${asset.version_count} version${asset.version_count === 1 ? '' : 's'}`;
	// Short enough for a default-width sidebar; the tooltip and the accessible label say it in full.
	item.description = [main ? 'main' : '', versions, asset.engine === 'git' && asset.branch ? `git ${asset.branch}` : asset.engine, asset.kind].filter(Boolean).join(' · ');
	const tooltip = new vscode.MarkdownString(undefined, true);
	tooltip.appendMarkdown(`**${escape(asset.name)}**${main ? ` — main asset of ${escape(project)}` : ''}\n\n`);
	if (asset.about) {
		tooltip.appendMarkdown(`${escape(asset.about)}\n\n`);
	}
	tooltip.appendMarkdown(`| | |\n|---|---|\n`);
	tooltip.appendMarkdown(`| Id | \`${asset.id}\` |\n| Kind | ${escape(asset.kind || '—')} |\n| Engine | ${asset.engine} |\n`);
	if (asset.engine === 'git') {
		tooltip.appendMarkdown(`| Branch | ${escape(asset.branch || '(detached HEAD)')} |\n| Remote | ${escape(asset.remote || '—')} |\n`);
	}
	tooltip.appendMarkdown(`| Versions | ${asset.version_count} |\n| Files | ${asset.file_count} |\n| Folder | ${escape(asset.working_dir)} |\n| Added | ${asset.created_at} by ${escape(asset.created_by)} |\n`);
	if (asset.tags.length > 0) {
		tooltip.appendMarkdown(`| Tags | ${asset.tags.map(escape).join(', ')} |\n`);
	}
	if (asset.problem) {
		tooltip.appendMarkdown(`\n$(warning) ${escape(asset.problem)}`);
		item.iconPath = new vscode.ThemeIcon('warning');
	}
	item.tooltip = tooltip;
	item.contextValue = `asset.${asset.engine}${main ? '.main' : ''}`;
	item.accessibilityInformation = {
		label: [
			asset.name,
			main ? 'main asset' : '',
			asset.kind ? `kind ${asset.kind}` : '',
			`${asset.engine} engine`,
			asset.branch ? `branch ${asset.branch}` : '',
			versions,
		]
			.filter(Boolean)
			.join(', '),
	};
	return item;
}

function versionItem(asset: AssetSummary, version: AssetVersion): vscode.TreeItem {
	const title = version.engine === 'git' ? version.subject : version.note || `${version.file_count} file${version.file_count === 1 ? '' : 's'}`;
	const item = new vscode.TreeItem(`v${version.version}  ${title}`, vscode.TreeItemCollapsibleState.None);
	item.id = `${asset.id}/v${version.version}/${version.engine === 'git' ? version.commit : version.manifest}`;
	const when = version.made_at.slice(0, 16).replace('T', ' ');
	const tooltip = new vscode.MarkdownString();
	tooltip.appendMarkdown(`**v${version.version}** of ${escape(asset.name)}\n\n${escape(title)}\n\n`);
	if (version.engine === 'git') {
		item.iconPath = new vscode.ThemeIcon(version.head_at ? 'git-commit' : 'circle-small');
		item.description = `${version.commit.slice(0, 7)} · ${when} · ${version.made_by}${version.never_head ? ' · never head' : ''}`;
		tooltip.appendMarkdown(`Commit \`${version.commit}\`  \nMade ${version.made_at} (${version.made_by})`);
		if (version.head_at) {
			tooltip.appendMarkdown(`  \nFirst seen as the checkout's head ${version.head_at}`);
		}
		if (version.never_head) {
			tooltip.appendMarkdown(`  \nNever observed as the checkout's head`);
		}
	} else {
		item.iconPath = new vscode.ThemeIcon(version.version === asset.picked_version ? 'pass-filled' : 'circle-outline');
		item.description = `${version.file_count} file${version.file_count === 1 ? '' : 's'} · ${when} · ${version.made_by}`;
		tooltip.appendMarkdown(`${version.file_count} files, ${version.bytes} bytes  \nMade ${version.made_at} (${version.made_by})  \nManifest \`${version.manifest.slice(0, 16)}…\``);
	}
	item.tooltip = tooltip;
	item.contextValue = `version.${version.engine}`;
	return item;
}

function escape(text: string): string {
	return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
