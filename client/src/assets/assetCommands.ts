import * as path from 'node:path';
import * as vscode from 'vscode';
import { messageText, pickText, visibleText } from '../common/markdownText';
import { showInformationMessage, showStatusMessage } from '../common/messages';
import {
	AddLink,
	AddNote,
	DescribeAsset,
	DiffVersions,
	ImportAsset,
	ListAssets,
	SetChecks,
	SetRetired,
	SetTags,
	SnapshotAsset,
	SyncAsset,
	type AssetSummary,
} from '../../../server/src/protocol/protocol';
import { assetFileUri } from './assetFileSystem';
import { addedFolderText, notStoredText } from './assetText';
import type { DeskClient } from '../common/deskClient';
import { chooseProject } from '../common/windowProjects';
import { guardedBy } from '../common/guarded';
import type { AssetNode, AssetsViewNode, AssetsTreeProvider } from './assetsTree';

/**
 * The Assets view's commands (context menus, view title and command palette). Each takes the node it
 * was invoked on, or asks for an asset when run from the palette.
 */
export function registerAssetCommands(
	desk: DeskClient,
	assets: AssetsTreeProvider,
	view: vscode.TreeView<AssetsViewNode>,
	reportError: (error: unknown) => void,
): { disposables: vscode.Disposable[]; onSnapshotProgress(params: { id: string; files: number }): void } {
	const guarded = guardedBy(reportError);

	const projectFor = (node?: AssetsViewNode) => chooseProject(assets.windowProjects, node);

	const pickAsset = async (
		node: AssetsViewNode | undefined,
		title: string,
		accept: (a: AssetSummary) => boolean = () => true,
	): Promise<AssetNode | undefined> => {
		if (node?.type === 'asset') {
			return node;
		}
		const selected = view.selection[0];
		if (!node && selected?.type === 'asset' && accept(selected.asset)) {
			return selected;
		}
		const candidates = (await assets.allAssets()).filter((n) => accept(n.asset));
		if (candidates.length === 0) {
			void showInformationMessage('Agent Desk: no asset fits.');
			return undefined;
		}
		const picked = await vscode.window.showQuickPick(
			candidates.map((n) => ({
				label: pickText(n.asset.name),
				description: `${n.asset.engine}${n.asset.kind ? ` · ${pickText(n.asset.kind)}` : ''}`,
				detail: pickText(n.asset.about || n.asset.working_dir || n.asset.url),
				node: n,
			})),
			{ title, matchOnDescription: true, matchOnDetail: true },
		);
		return picked?.node;
	};

	const snapshotProgress = new Map<string, (files: number) => void>();

	const disposables = [
		vscode.commands.registerCommand('agentDesk.showRetired', () => assets.setShowRetired(true)),
		vscode.commands.registerCommand('agentDesk.hideRetired', () => assets.setShowRetired(false)),

		vscode.commands.registerCommand(
			'agentDesk.addFolder',
			guarded(async (node?: AssetsViewNode) => {
				const project = await projectFor(node);
				const folders = await vscode.window.showOpenDialog({
					canSelectFolders: true,
					canSelectFiles: false,
					canSelectMany: false,
					openLabel: 'Add Folder',
					title: 'Add a folder to the library',
				});
				if (!folders?.[0]) {
					return;
				}
				const result = await desk.requestOnce(ImportAsset, {
					dir: folders[0].fsPath,
					...(project ? { project: project.name } : {}),
				});
				const added = addedFolderText(result);
				// What was not stored needs the person; a plain add is routine.
				if (added.notStored) {
					void showInformationMessage(added.text);
				} else {
					showStatusMessage(added.text);
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.newAsset',
			guarded(async (node?: AssetsViewNode) => {
				const project = await projectFor(node);
				const name = await vscode.window.showInputBox({
					title: 'New Asset',
					prompt: 'Name of the new asset (an empty folder; version 1 is "created")',
					validateInput: (v) => (v.trim() ? undefined : 'A name is needed'),
				});
				if (!name) {
					return;
				}
				const result = await desk.requestOnce(ImportAsset, {
					newName: name,
					...(project ? { project: project.name } : {}),
				});
				const choice = await showInformationMessage(
					`Agent Desk: ${result.asset.name} is ready; put files in its folder, then Snapshot Now.`,
					'Reveal Folder',
				);
				if (choice) {
					await revealFolder(result.asset.working_dir);
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.addLink',
			guarded(async (node?: AssetsViewNode) => {
				const project = await projectFor(node);
				const url = await vscode.window.showInputBox({
					title: 'Add Link (1/2)',
					prompt: 'URL',
					placeHolder: 'https://…',
					validateInput: (v) =>
						/^(https?|file|mailto):/.test(v.trim()) ? undefined : 'An http, https, file or mailto URL',
				});
				if (!url) {
					return;
				}
				const name = await vscode.window.showInputBox({
					title: 'Add Link (2/2)',
					prompt: 'Name',
					value: nameFromUrl(url),
				});
				if (!name) {
					return;
				}
				await desk.requestOnce(AddLink, { name, url: url.trim(), ...(project ? { project: project.name } : {}) });
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.addNote',
			guarded(async (node?: AssetsViewNode) => {
				const project = await projectFor(node);
				const name = await vscode.window.showInputBox({ title: 'Add Note (1/2)', prompt: 'Name of the note' });
				if (!name) {
					return;
				}
				const text = await vscode.window.showInputBox({ title: 'Add Note (2/2)', prompt: 'Text of the note' });
				if (text === undefined) {
					return;
				}
				await desk.requestOnce(AddNote, { name, text, ...(project ? { project: project.name } : {}) });
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.addToProject',
			guarded(async (node?: AssetsViewNode) => {
				const project = await projectFor(node);
				if (!project) {
					return;
				}
				const [{ assets: all }, { assets: members }] = await Promise.all([
					desk.request(ListAssets, {}),
					desk.request(ListAssets, { project: project.name }),
				]);
				const memberIds = new Set(members.map((a) => a.id));
				const candidates = all.filter((a) => !memberIds.has(a.id) && !a.retired);
				if (candidates.length === 0) {
					void showInformationMessage(`Agent Desk: every library asset is in ${project.name} already.`);
					return;
				}
				const picked = await vscode.window.showQuickPick(
					candidates.map((a) => ({
						label: pickText(a.name),
						description: `${a.engine}${a.kind ? ` · ${pickText(a.kind)}` : ''}`,
						detail: pickText(a.about || a.working_dir || a.url),
						id: a.id,
					})),
					{ title: `Add to ${pickText(project.name)}`, canPickMany: true },
				);
				for (const item of picked ?? []) {
					await desk.requestOnce(ImportAsset, { assetId: item.id, project: project.name });
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.snapshotNow',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Snapshot which asset?', (a) => a.engine === 'snapshot');
				if (!target) {
					return;
				}
				const result = await vscode.window.withProgress(
					{
						location: vscode.ProgressLocation.Notification,
						title: messageText(`Snapshot of ${target.asset.name}`),
						cancellable: true,
					},
					async (progress, token) => {
						snapshotProgress.set(target.asset.id, (files) => progress.report({ message: `${files} files` }));
						try {
							return await desk.requestOnce(SnapshotAsset, { id: target.asset.id }, token);
						} finally {
							snapshotProgress.delete(target.asset.id);
						}
					},
				);
				const notes = [
					// Links, special files, names that are not UTF-8, temp files, the library's own folder: by name.
					result.skipped.length > 0 ? notStoredText(result.skipped) : '',
					result.lookalikes.length > 0
						? `names differing only by case: ${result.lookalikes.map((g) => g.join(' / ')).join('; ')}`
						: '',
				].filter(Boolean);
				const snapshotText = `Agent Desk: ${result.created ? `${target.asset.name} v${result.version.version} — ${result.version.file_count} files` : `${target.asset.name} has no changes since v${result.version.version}`}${notes.length ? ` (${notes.join('; ')})` : ''}.`;
				// What was not stored needs the person; a plain snapshot is routine.
				if (notes.length > 0) {
					void showInformationMessage(snapshotText);
				} else {
					showStatusMessage(snapshotText);
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.describe',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Describe which asset?');
				if (!target) {
					return;
				}
				const about = await vscode.window.showInputBox({
					title: `Describe ${pickText(target.asset.name)}`,
					prompt: 'One line about the asset',
					value: target.asset.about,
				});
				if (about !== undefined) {
					await desk.request(DescribeAsset, { id: target.asset.id, about });
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.editTags',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Tag which asset?');
				if (!target) {
					return;
				}
				const text = await vscode.window.showInputBox({
					title: `Tags of ${pickText(target.asset.name)}`,
					prompt: 'Up to 16 tags separated by spaces: key or key:value, lowercase letters, digits and hyphens',
					value: target.asset.tags.join(' '),
					validateInput: (v) => {
						const tags = v.split(/\s+/).filter(Boolean);
						const bad = tags.find((t) => !/^[a-z0-9-]+(:[a-z0-9-]+)?$/.test(t));
						return bad ? `Not a tag: ${bad}` : tags.length > 16 ? 'At most 16 tags' : undefined;
					},
				});
				if (text !== undefined) {
					await desk.request(SetTags, { id: target.asset.id, tags: text.split(/\s+/).filter(Boolean) });
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.retire',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Retire which asset?', (a) => !a.retired);
				if (target) {
					await desk.request(SetRetired, { id: target.asset.id, retired: true });
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.unretire',
			guarded(async (node?: AssetsViewNode) => {
				assets.setShowRetired(true);
				const target = await pickAsset(node, 'Unretire which asset?', (a) => a.retired);
				if (target) {
					await desk.request(SetRetired, { id: target.asset.id, retired: false });
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.setChecks',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Set the checks of which asset?', (a) => a.engine !== 'none');
				if (!target) {
					return;
				}
				const files = await vscode.window.showOpenDialog({
					canSelectFiles: true,
					canSelectMany: false,
					filters: { 'Checks (JSON)': ['json'] },
					openLabel: 'Use These Checks',
					title: 'A JSON list of { id, executable, args, cwd, timeout }',
				});
				if (!files?.[0]) {
					return;
				}
				const text = Buffer.from(await vscode.workspace.fs.readFile(files[0])).toString('utf8');
				let checks: unknown;
				try {
					checks = JSON.parse(text);
				} catch (error) {
					throw new Error(`${path.basename(files[0].fsPath)} is not JSON: ${(error as Error).message}`, {
						cause: error,
					});
				}
				const asset = await desk.request(SetChecks, { id: target.asset.id, checks });
				showStatusMessage(
					`Agent Desk: ${asset.name} has ${asset.checks.length} check${asset.checks.length === 1 ? '' : 's'}.`,
				);
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.sync',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Sync which repository?', (a) => a.engine === 'git');
				if (target) {
					await desk.request(SyncAsset, { id: target.asset.id });
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.showOlderVersions',
			guarded(async (node?: AssetsViewNode) => {
				if (node?.type === 'olderVersions') {
					assets.showOlderVersions(node);
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.openFileAtVersion',
			guarded(async (node?: AssetsViewNode) => {
				if (node?.type !== 'file') {
					return;
				}
				await vscode.window.showTextDocument(assetFileUri(node.asset.id, node.version, node.file.path), {
					preview: true,
				});
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.compareWithPrevious',
			guarded(async (node?: AssetsViewNode) => {
				if (node?.type === 'file') {
					if (node.version <= 1) {
						return;
					}
					const left = assetFileUri(node.asset.id, node.version - 1, node.file.path);
					const right = assetFileUri(node.asset.id, node.version, node.file.path);
					await vscode.commands.executeCommand(
						'vscode.diff',
						left,
						right,
						visibleText(`${node.file.path} (v${node.version - 1} ↔ v${node.version})`),
					);
					return;
				}
				if (node?.type !== 'version' || node.version.version <= 1) {
					return;
				}
				const { asset } = node;
				const to = node.version.version;
				const from = to - 1;
				const diff = await desk.request(DiffVersions, { id: asset.id, from, to });
				const uri = (v: number, p: string) => assetFileUri(asset.id, v, p);
				const changes: Array<[vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined]> = [
					...diff.modified.map((m): [vscode.Uri, vscode.Uri, vscode.Uri] => [
						uri(to, m.after.path),
						uri(from, m.before.path),
						uri(to, m.after.path),
					]),
					...diff.added.map((f): [vscode.Uri, undefined, vscode.Uri] => [uri(to, f.path), undefined, uri(to, f.path)]),
					...diff.removed.map((f): [vscode.Uri, vscode.Uri, undefined] => [
						uri(from, f.path),
						uri(from, f.path),
						undefined,
					]),
				];
				const title = visibleText(`${asset.name}: v${from} ↔ v${to}`);
				if (changes.length === 0) {
					void showInformationMessage(`Agent Desk: v${from} and v${to} of ${asset.name} have the same files.`);
				} else if (changes.length === 1 && diff.modified.length === 1) {
					await vscode.commands.executeCommand('vscode.diff', changes[0]![1], changes[0]![2], title);
				} else {
					await vscode.commands.executeCommand('vscode.changes', title, changes);
				}
			}),
		),

		vscode.commands.registerCommand(
			'agentDesk.revealWorkingFolder',
			guarded(async (node?: AssetsViewNode) => {
				const target = await pickAsset(node, 'Reveal the folder of which asset?', (a) => a.engine !== 'none');
				if (target) {
					await revealFolder(target.asset.working_dir);
				}
			}),
		),
	];
	return { disposables, onSnapshotProgress: ({ id, files }) => snapshotProgress.get(id)?.(files) };
}

async function revealFolder(folder: string): Promise<void> {
	const uri = vscode.Uri.file(folder);
	if (vscode.workspace.getWorkspaceFolder(uri)) {
		await vscode.commands.executeCommand('revealInExplorer', uri);
		return;
	}
	// Outside the workspace: the OS file manager where there is one (desktop), else a new window.
	try {
		await vscode.commands.executeCommand('revealFileInOS', uri);
	} catch {
		await vscode.commands.executeCommand('vscode.openFolder', uri, { forceNewWindow: true });
	}
}

function nameFromUrl(url: string): string {
	try {
		const parsed = new URL(url.trim());
		return parsed.pathname.split('/').filter(Boolean).pop() ?? parsed.hostname;
	} catch {
		return '';
	}
}
