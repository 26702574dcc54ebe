import * as vscode from 'vscode';
import * as path from 'node:path';
import {
	GetStatus,
	OpenWorkspace,
	type FolderOutcome,
	type LogLevel,
	type ServerStatus,
} from '../../server/src/protocol/protocol';
import { activateAssets } from './assets/activateAssets';
import type { AssetsTreeProvider } from './assets/assetsTree';
import { offerForeignGitDir } from './assets/foreignGitDir';
import { activateAttachments } from './attachments/activateAttachments';
import type { AttachmentsTreeProvider } from './attachments/attachmentsTree';
import { activateCard } from './card/activateCard';
import { isDamagedStore, offerRecovery, type RecoveryHost } from './common/damagedStore';
import { DeskClient, DeskRequestError, type DeskState } from './common/deskClient';
import { errorReporter } from './common/reportError';
import { logRoutineMessagesTo } from './common/messages';
import { restartOnUnexpectedExit } from './common/serverRestarts';
import { DeskStatusBar } from './common/statusBar';
import type { WindowProject } from './common/windowProjects';
import { activateLineage } from './lineage/activateLineage';
import type { MemoryTreeProvider } from './lineage/memoryTree';
import { activateRuns } from './runs/activateRuns';
import { runSettings } from './runs/runSettings';
import type { RunsTreeProvider } from './runs/runsTree';

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
	memory: MemoryTreeProvider;
}

export async function activate(context: vscode.ExtensionContext): Promise<AgentDeskApi> {
	const output = vscode.window.createOutputChannel('Agent Desk', { log: true });
	logRoutineMessagesTo(output);
	const desk = new DeskClient(context, output);
	const statusBar = new DeskStatusBar();
	const reportError = errorReporter(output);
	context.subscriptions.push(output, desk, statusBar);

	const assets = activateAssets(context, desk, reportError);
	let settled: Promise<DeskState> = Promise.resolve('starting');
	const runs = activateRuns(context, desk, reportError, () => settled);
	const projectPath = (project: string) => runs.tree.windowProjects.find((p) => p.name === project)?.path;
	const cards = activateCard(context, desk, assets, projectPath, reportError);
	const attachments = activateAttachments(context, desk, reportError).tree;
	const refreshRuns = (project: string) => {
		runs.tree.refresh();
		runs.pages.refresh(project).catch((error: unknown) => reportError(error));
	};
	const lineage = activateLineage(
		context,
		desk,
		{
			projects: () => runs.tree.windowProjects,
			settings: runSettings,
			openRun: (project, runId) => runs.pages.open(project, runId),
			refreshRuns,
		},
		reportError,
	);
	const trees = [assets.tree, runs.tree, attachments, lineage.memory];

	let folders: FolderOutcome[] = [];
	// Notification handlers belong to one server process; they are made again after a restart.
	let serverSubscriptions: vscode.Disposable[] = [];
	context.subscriptions.push({ dispose: () => serverSubscriptions.forEach((d) => d.dispose()) });

	const setContextState = (state: DeskState) =>
		void vscode.commands.executeCommand('setContext', 'agentDesk.state', state);
	setContextState('starting');
	context.subscriptions.push(
		desk.onDidChangeState((state) => {
			setContextState(state);
			statusBar.show(state);
			trees.forEach((tree) => tree.refresh());
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
		const result = await desk.request(OpenWorkspace, {
			folders: workspaceFolders.map((f) => ({ name: f.name, path: f.uri.fsPath })),
		});
		folders = result.folders;
		const projects: WindowProject[] = [];
		for (const folder of folders) {
			if (folder.outcome === 'adopted' && !projects.some((p) => p.name === folder.project.name)) {
				projects.push({ name: folder.project.name, path: folder.project.path });
			} else if (folder.outcome === 'failed') {
				if (folder.error.code === 'git.foreignGitDir') {
					void offerForeignGitDir(host, folder.name, folder.path, folder.error);
				} else if (isDamagedStore(folder.error)) {
					// <top>/.desk/project.db: the project is recovered by its repository top.
					void offerRecovery(host, folder.error, path.dirname(path.dirname(String(folder.error.data['file']))));
				} else {
					reportError(new DeskRequestError(`${folder.name}: ${folder.error.message}`, folder.error));
				}
			}
		}
		trees.forEach((tree) => tree.setProjects(projects));
		const failed = folders.filter((f) => f.outcome === 'failed').length;
		// The Assets view's welcome says why it is empty: a folder refused (a git folder elsewhere, a
		// damaged project database) is not "no git repository".
		void vscode.commands.executeCommand('setContext', 'agentDesk.foldersFailed', failed > 0);
		const summary =
			projects.length === 0
				? failed > 0
					? `${failed === 1 ? 'A folder was' : `${failed} folders were`} not opened`
					: 'No open folder is a git repository'
				: `Projects: ${projects.map((p) => p.name).join(', ')}${failed > 0 ? ` (${failed} not opened)` : ''}`;
		statusBar.show('ready', summary);
	};

	const start = async (): Promise<DeskState> => {
		const configuration = vscode.workspace.getConfiguration('agentDesk');
		const libraryDir = configuration.get<string>('libraryFolder')?.trim() || context.globalStorageUri.fsPath;
		const logLevel = configuration.get<LogLevel>('logLevel') ?? 'info';
		try {
			await desk.start({ libraryDir, logLevel });
			serverSubscriptions.forEach((d) => d.dispose());
			serverSubscriptions = desk.onNotifications({
				AssetsDidChange: () => assets.tree.refresh(),
				RunsDidChange: ({ project }) => {
					refreshRuns(project);
					attachments.refresh();
					lineage.onLineageChanged(project);
				},
				// Branches, tallies and boards show in the Runs view and on run pages; root tallies in the Memory view.
				LineageDidChange: ({ project }) => {
					refreshRuns(project);
					lineage.onLineageChanged(project);
					lineage.memory.refresh();
				},
				BoardDidReport: lineage.onReport,
				MemoryDidChange: () => lineage.memory.refresh(),
				AttachmentsDidChange: () => attachments.refresh(),
				SuggestIndexDidChange: ({ project, ...progress }) =>
					void cards.onIndexProgress(project, progress).catch((error: unknown) => reportError(error)),
				RunDidFinish: (params) => {
					runs.onRunFinished(params);
					cards.onRunFinished(params);
				},
				SnapshotProgress: assets.onSnapshotProgress,
				HistoryRewritten: assets.onHistoryRewritten,
			});
			const status = await desk.request(GetStatus, {});
			if (status.state === 'error') {
				desk.markFailed();
				statusBar.show('error', status.error?.message);
				if (status.error && isDamagedStore(status.error)) {
					void offerRecovery(host, status.error);
				} else {
					reportError(
						new DeskRequestError(status.error?.message ?? 'The desk could not open its library.', status.error),
					);
				}
				return 'error';
			}
			await openWorkspace();
			return desk.state;
		} catch (error) {
			desk.markFailed();
			statusBar.show('error', (error as Error).message);
			reportError(error);
			return 'error';
		}
	};
	const restart = (): Promise<DeskState> => (settled = start());
	/** What the offers for a damaged store or a foreign git folder do once the person chose. */
	const host: RecoveryHost = { desk, output, reportError, restart, reopenWorkspace: openWorkspace };

	context.subscriptions.push(
		vscode.commands.registerCommand('agentDesk.showLog', () => output.show(true)),
		vscode.commands.registerCommand('agentDesk.restartServer', async () => {
			await restart();
		}),
		vscode.workspace.onDidGrantWorkspaceTrust(() => {
			settled = settled
				.then(() => openWorkspace().then(() => desk.state))
				.catch((error: unknown) => {
					reportError(error);
					return desk.state;
				});
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => {
			if (desk.state === 'ready') {
				openWorkspace().catch((error: unknown) => reportError(error));
			}
		}),
		vscode.workspace.onDidChangeConfiguration((event) => {
			if (event.affectsConfiguration('agentDesk.libraryFolder') || event.affectsConfiguration('agentDesk.logLevel')) {
				void restart();
			} else if (event.affectsConfiguration('agentDesk.agents') || event.affectsConfiguration('agentDesk.runs')) {
				cards.refreshAll().catch((error: unknown) => reportError(error));
			}
		}),
	);
	const exits = restartOnUnexpectedExit(desk, output, statusBar, () => void restart());
	context.subscriptions.push(exits.disposable);

	void restart();
	return {
		serverRestarts: () => exits.restarts,
		whenSettled: () => settled,
		state: () => desk.state,
		folders: () => folders,
		status: () => desk.request(GetStatus, {}),
		assets: assets.tree,
		runs: runs.tree,
		attachments,
		memory: lineage.memory,
	};
}

export function deactivate(): void {
	// The DeskClient in context.subscriptions stops the server (which checkpoints its databases).
}
