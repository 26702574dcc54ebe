import * as vscode from 'vscode';
import { showErrorMessage, showInformationMessage, showWarningMessage } from './common/messages';
import * as path from 'node:path';
import { GetStatus, ImportAsset, OpenWorkspace, RecoverStore, type DeskErrorJson, type FolderOutcome, type LogLevel, type ServerStatus } from '../../server/src/protocol/protocol';
import { DeskClient, DeskRequestError, type DeskState } from './common/deskClient';
import { DeskStatusBar } from './common/statusBar';
import { AssetFileSystemProvider, assetScheme } from './assets/assetFileSystem';
import { AttachmentPreviews, attachmentScheme } from './attachments/attachmentPreviews';
import { registerAssetCommands } from './assets/assetCommands';
import { registerAttachmentCommands } from './attachments/attachmentCommands';
import { registerCardCommands } from './card/cardCommands';
import { registerGateCommands } from './runs/gateCommands';
import { registerRunCommands } from './runs/runCommands';
import { LaunchCards } from './card/launchCard';
import { runSettings } from './runs/runSettings';
import { PatchSides, patchScheme, RunPages } from './runs/runDocuments';
import { RunsTreeProvider } from './runs/runsTree';
import { AssetsTreeProvider, type AssetsViewNode } from './assets/assetsTree';
import type { WindowProject } from './common/windowProjects';
import { AttachmentsTreeProvider } from './attachments/attachmentsTree';

/** What the extension exports, for the extension-host tests and for other extensions. */
export interface AgentDeskApi {
	/** Resolves once the desk has adopted the workspace (or failed to, with the error). */
	whenSettled(): Promise<DeskState>;
	state(): DeskState;
	/** Outcome of the last desk boot per workspace folder. */
	folders(): readonly FolderOutcome[];
	status(): Promise<ServerStatus>;
	/** What the person was told each time the server stopped on its own and a new one was started. */
	serverRestarts(): readonly string[];
	assets: AssetsTreeProvider;
	runs: RunsTreeProvider;
	attachments: AttachmentsTreeProvider;
}

export async function activate(context: vscode.ExtensionContext): Promise<AgentDeskApi> {
	const output = vscode.window.createOutputChannel('Agent Desk', { log: true });
	const desk = new DeskClient(context, output);
	const statusBar = new DeskStatusBar();
	const assets = new AssetsTreeProvider(desk, (error) => reportError(output, error));
	const assetsView = vscode.window.createTreeView('agentDesk.assets', { treeDataProvider: assets, showCollapseAll: true });
	context.subscriptions.push(
		output,
		desk,
		statusBar,
		assets,
		assetsView,
		vscode.workspace.registerFileSystemProvider(assetScheme, new AssetFileSystemProvider(desk), { isReadonly: true, isCaseSensitive: true }),
	);
	void vscode.commands.executeCommand('setContext', 'agentDesk.showRetired', false);

	let folders: FolderOutcome[] = [];
	const runs = new RunsTreeProvider(desk, (error) => reportError(output, error));
	const runPages = new RunPages(desk);
	const patchSides = new PatchSides();
	const runsView = vscode.window.createTreeView('agentDesk.runs', { treeDataProvider: runs, showCollapseAll: true });
	context.subscriptions.push(
		runs,
		runsView,
		runPages,
		vscode.workspace.registerTextDocumentContentProvider(patchScheme, patchSides),
		...registerRunCommands(desk, runs, runPages, patchSides, (error) => reportError(output, error)),
	);
	const gate = registerGateCommands(desk, runs, runPages, patchSides, (error) => reportError(output, error));
	context.subscriptions.push(...gate.disposables);
	const projectPath = (project: string) => runs.windowProjects.find((p) => p.name === project)?.path;
	const cards = new LaunchCards(context.extensionUri, desk, (project) => runSettings(projectPath(project)), (error) => reportError(output, error));
	context.subscriptions.push(cards, ...registerCardCommands(desk, assets, assetsView, cards, (error) => reportError(output, error)));
	const attachments = new AttachmentsTreeProvider(desk, (error) => reportError(output, error));
	const previews = new AttachmentPreviews(desk, context.globalStorageUri, context.extensionUri);
	context.subscriptions.push(
		attachments,
		previews,
		vscode.window.createTreeView('agentDesk.attachments', { treeDataProvider: attachments, showCollapseAll: true }),
		vscode.workspace.registerTextDocumentContentProvider(attachmentScheme, previews),
		...registerAttachmentCommands(desk, attachments, previews, (error) => reportError(output, error)),
	);
	const assetCommands = registerAssetCommands(desk, assets, assetsView, (error) => reportError(output, error));
	context.subscriptions.push(...assetCommands.disposables);
	// Notification handlers belong to one server process; they are made again after a restart.
	let serverSubscriptions: vscode.Disposable[] = [];
	context.subscriptions.push({ dispose: () => serverSubscriptions.forEach((d) => d.dispose()) });
	let settled: Promise<DeskState> = Promise.resolve('starting');

	const setContextState = (state: DeskState) => void vscode.commands.executeCommand('setContext', 'agentDesk.state', state);
	setContextState('starting');
	context.subscriptions.push(
		desk.onDidChangeState((state) => {
			setContextState(state);
			statusBar.show(state);
			assets.refresh();
			runs.refresh();
			attachments.refresh();
		}),
	);

	/** Desk boot for this window: adopt the repository of each trusted workspace folder. */
	const openWorkspace = async (): Promise<void> => {
		if (!vscode.workspace.isTrusted) {
			output.info('this workspace is not trusted: Agent Desk adopts nothing from it until you trust it');
			statusBar.show('ready', 'Workspace not trusted: nothing adopted');
			return;
		}
		const workspaceFolders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
		const result = await desk.request(OpenWorkspace, { folders: workspaceFolders.map((f) => ({ name: f.name, path: f.uri.fsPath })) });
		folders = result.folders;
		const projects: WindowProject[] = [];
		for (const folder of folders) {
			if (folder.outcome === 'adopted' && !projects.some((p) => p.name === folder.project.name)) {
				projects.push({ name: folder.project.name, path: folder.project.path });
			} else if (folder.outcome === 'failed') {
				if (folder.error.code === 'git.foreignGitDir') {
					void offerForeignGitDir(folder.name, folder.path, folder.error);
				} else if (isDamagedStore(folder.error)) {
					// <top>/.desk/project.db: the project is recovered by its repository top.
					void offerRecovery(folder.error, path.dirname(path.dirname(String(folder.error.data['file']))));
				} else {
					reportError(output, new DeskRequestError(`${folder.name}: ${folder.error.message}`, folder.error));
				}
			}
		}
		assets.setProjects(projects);
		runs.setProjects(projects);
		attachments.setProjects(projects);
		const failed = folders.filter((f) => f.outcome === 'failed').length;
		// The Assets view's welcome says why it is empty: a folder refused (a git folder elsewhere, a
		// damaged project database) is not "no git repository".
		void vscode.commands.executeCommand('setContext', 'agentDesk.foldersFailed', failed > 0);
		const summary = projects.length === 0
			? (failed > 0 ? `${failed === 1 ? 'A folder was' : `${failed} folders were`} not opened` : 'No open folder is a git repository')
			: `Projects: ${projects.map((p) => p.name).join(', ')}${failed > 0 ? ` (${failed} not opened)` : ''}`;
		statusBar.show('ready', summary);
	};

	/**
	 * A workspace folder whose `.git` leads to a git folder outside what the desk adopts by itself
	 * (a `.git` file or link to another repository, a worktree of a repository not open here,
	 * alternates reading another repository): a modal says where the git folder really is, and only
	 * the person's "Adopt Anyway" adopts it (allowGitDir). Dismissed, nothing is adopted.
	 */
	const offerForeignGitDir = async (name: string, folderPath: string, error: DeskErrorJson): Promise<void> => {
		output.warn(`${name}: ${error.message} [${error.code}]`);
		const gitDir = String(error.data['gitDir'] ?? '');
		const outside = Array.isArray(error.data['outside']) ? (error.data['outside'] as unknown[]).map(String) : [];
		const detail = [
			error.message,
			'',
			`Its git folder is really: ${gitDir}`,
			...(outside.length > 0 ? [`Outside the folder: ${outside.join(', ')}`] : []),
			'',
			'Adopt it only if you trust that folder: the desk will read its history and land runs into it.',
		].join('\n');
		const picked = await showWarningMessage(`Agent Desk: the git folder of ${name} is not inside it.`, { modal: true, detail }, 'Adopt Anyway');
		if (picked !== 'Adopt Anyway') {
			return;
		}
		try {
			await desk.requestOnce(ImportAsset, { dir: folderPath, project: name, main: true, allowGitDir: true });
			output.info(`${name}: adopted with its git folder at ${gitDir}, as the person allowed`);
			await openWorkspace();
		} catch (failure) {
			reportError(output, failure);
		}
	};

	/**
	 * A store the desk set aside as damaged: one message naming it and the kept copy, with a button
	 * per choice the server offers (and Open Log). Nothing is chosen for the person; dismissing the
	 * message leaves the store refused, and the next start asks again.
	 */
	const offerRecovery = async (error: DeskErrorJson, repo?: string): Promise<void> => {
		output.error(`${error.message} [${error.code}]`);
		const labels: Record<string, string> = { restore: 'Restore Kept Copy', empty: 'Start Empty', rebuild: 'Rebuild from History' };
		const choices = (Array.isArray(error.data['choices']) ? (error.data['choices'] as string[]) : []).filter((c) => c in labels);
		const picked = await showErrorMessage(`Agent Desk: ${error.message}`, ...choices.map((c) => labels[c]!), 'Open Log');
		if (picked === 'Open Log') {
			output.show(true);
			return;
		}
		const choice = choices.find((c) => labels[c] === picked);
		if (!choice) {
			return;
		}
		try {
			const result = await desk.request(RecoverStore, { store: repo === undefined ? 'library' : 'project', ...(repo === undefined ? {} : { repo }), choice });
			const rebuilt = result.rebuilt ? ` ${result.rebuilt.added} object(s) read back from refs/desk/history.` : '';
			const kept = result.attachmentsKept ? ` ${result.attachmentsKept} attachment file(s) without a record are kept.` : '';
			output.warn(`${result.file}: recovered (${result.choice}); the damaged copy stays at ${result.keptAs ?? '(none)'}`);
			void showInformationMessage(`Agent Desk: ${path.basename(result.file)} recovered (${labels[result.choice]}).${rebuilt}${kept} The damaged copy stays at ${result.keptAs ?? '(none)'}.`);
			if (repo === undefined) {
				settled = start();
				await settled;
			} else {
				await openWorkspace();
			}
		} catch (failure) {
			reportError(output, failure);
			if (failure instanceof DeskRequestError && failure.deskError?.code === 'store.cannotRecover') {
				// Still damaged: the choices are still open.
				await offerRecovery(error, repo);
			}
		}
	};

	const start = async (): Promise<DeskState> => {
		const configuration = vscode.workspace.getConfiguration('agentDesk');
		const libraryDir = configuration.get<string>('libraryFolder')?.trim() || context.globalStorageUri.fsPath;
		const logLevel = configuration.get<LogLevel>('logLevel') ?? 'info';
		try {
			await desk.start({ libraryDir, logLevel });
			serverSubscriptions.forEach((d) => d.dispose());
			serverSubscriptions = desk.onNotifications({
				AssetsDidChange: () => assets.refresh(),
				RunsDidChange: ({ project }) => {
					runs.refresh();
					attachments.refresh();
					runPages.refresh(project).catch((error: unknown) => reportError(output, error));
				},
				AttachmentsDidChange: () => attachments.refresh(),
				SuggestIndexDidChange: ({ project, ...progress }) => void cards.onIndexProgress(project, progress).catch((error: unknown) => reportError(output, error)),
				RunDidFinish: gate.onRunFinished,
				SnapshotProgress: assetCommands.onSnapshotProgress,
				HistoryRewritten: (r) => {
					const range = r.firstChanged > r.newCount ? '' : ` v${r.firstChanged}${r.newCount > r.firstChanged ? `–v${r.newCount}` : ''} now name other commits`;
					void showWarningMessage(
						`Agent Desk: ${r.branch || 'HEAD'} of ${r.name} was rewritten.${range}${r.oldCount >= r.firstChanged ? ` (it had v${r.firstChanged}–v${r.oldCount} before)` : ''} Runs and observations keep the commits they named.`,
					);
				},
			});
			const status = await desk.request(GetStatus, {});
			if (status.state === 'error') {
				desk.markFailed();
				statusBar.show('error', status.error?.message);
				if (status.error && isDamagedStore(status.error)) {
					void offerRecovery(status.error);
				} else {
					reportError(output, new DeskRequestError(status.error?.message ?? 'The desk could not open its library.', status.error));
				}
				return 'error';
			}
			await openWorkspace();
			return desk.state;
		} catch (error) {
			desk.markFailed();
			statusBar.show('error', (error as Error).message);
			reportError(output, error);
			return 'error';
		}
	};

	context.subscriptions.push(
		vscode.commands.registerCommand('agentDesk.showLog', () => output.show(true)),
		vscode.commands.registerCommand('agentDesk.refreshAssets', () => assets.refresh()),
		vscode.commands.registerCommand('agentDesk.restartServer', async () => {
			settled = start();
			await settled;
		}),
		vscode.commands.registerCommand('agentDesk.copyAssetId', async (node?: AssetsViewNode) => {
			const selected = node ?? assetsView.selection[0];
			if (selected?.type === 'asset' || selected?.type === 'version') {
				await vscode.env.clipboard.writeText(selected.asset.id);
				vscode.window.setStatusBarMessage(`Copied ${selected.asset.id}`, 3000);
			}
		}),
		vscode.workspace.onDidGrantWorkspaceTrust(() => {
			settled = settled.then(() => openWorkspace().then(() => desk.state)).catch((error: unknown) => {
				reportError(output, error);
				return desk.state;
			});
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => {
			if (desk.state === 'ready') {
				openWorkspace().catch((error: unknown) => reportError(output, error));
			}
		}),
		vscode.workspace.onDidChangeConfiguration((event) => {
			if (event.affectsConfiguration('agentDesk.libraryFolder') || event.affectsConfiguration('agentDesk.logLevel')) {
				settled = start();
			} else if (event.affectsConfiguration('agentDesk.agents') || event.affectsConfiguration('agentDesk.runs')) {
				cards.refreshAll().catch((error: unknown) => reportError(output, error));
			}
		}),
	);

	// A server that stops on its own (a crash, a kill, a broken message on its input) is started again
	// at once and the person is told with a notice; five stops within three minutes leave it stopped.
	const restarts: string[] = [];
	const recentStops: number[] = [];
	context.subscriptions.push(
		desk.onDidExitUnexpectedly(({ reason }) => {
			const now = Date.now();
			recentStops.push(now);
			while (recentStops.length > 0 && recentStops[0]! < now - 3 * 60_000) {
				recentStops.shift();
			}
			if (recentStops.length >= 5) {
				const message = `Agent Desk: the desk server stopped ${recentStops.length} times in three minutes and was not started again${reason ? ` (last: ${reason})` : ''}. Use "Agent Desk: Restart Server" when ready.`;
				output.error(message);
				statusBar.show('error', 'The desk server stopped');
				void showErrorMessage(message, 'Open Log').then((choice) => choice && output.show(true));
				return;
			}
			const message = `Agent Desk: the desk server stopped unexpectedly${reason ? ` (${reason})` : ''}; a new one was started.`;
			restarts.push(message);
			output.warn(message);
			void showWarningMessage(message, 'Open Log').then((choice) => choice && output.show(true));
			settled = start();
		}),
	);

	settled = start();
	return {
		serverRestarts: () => restarts,
		whenSettled: () => settled,
		state: () => desk.state,
		folders: () => folders,
		status: () => desk.request(GetStatus, {}),
		assets,
		runs,
		attachments,
	};
}

export function deactivate(): void {
	// The DeskClient in context.subscriptions stops the server (which checkpoints its databases).
}

/** A store the desk set aside as damaged, waiting for the person's choice (`desk/store/recover`). */
function isDamagedStore(error: DeskErrorJson): boolean {
	return error.code === 'store.corrupt' && error.data['damaged'] === true;
}

/** One message per failure, with "Open Log"; the details go to the log. */
function reportError(output: vscode.LogOutputChannel, error: unknown): void {
	const message = error instanceof Error ? error.message : String(error);
	const code = error instanceof DeskRequestError && error.deskError ? ` [${error.deskError.code}]` : '';
	output.error(`${message}${code}`);
	void showErrorMessage(`Agent Desk: ${message}`, 'Open Log').then((choice) => {
		if (choice === 'Open Log') {
			output.show(true);
		}
	});
}
