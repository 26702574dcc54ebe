import * as path from 'node:path';
import * as vscode from 'vscode';
import {
	CommitMemory,
	ForgetMemory,
	LineageTreeRequest,
	ListLineageRoots,
	MemorizeLanding,
	RememberMemory,
	ShowRun,
} from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { guardedBy } from '../common/guarded';
import { messageText, pickText } from '../common/markdownText';
import { showInformationMessage, showWarningMessage, showStatusMessage } from '../common/messages';
import { memoryArg, rootArg, runArg } from './lineageArgs';
import { pickProject, type LineageHost } from './lineageCommands';
import { allBranches, memoriesText, oneLine } from './lineageText';
import type { MemoryTreeProvider } from './memoryTree';
import { memoryFilePath } from './memoryText';

/**
 * The Memory view's commands (glossary: Project memory): Remember…, Forget, Open Memory File,
 * Commit Memory and Memorize Landing…. The desk writes `.desk-memory/<root>.json` (one queue for
 * every window and the command line); the person reviews and commits it like any file.
 */
export function registerMemoryCommands(
	desk: DeskClient,
	host: LineageHost,
	tree: MemoryTreeProvider,
	reportError: (error: unknown) => void,
): vscode.Disposable[] {
	const guarded = guardedBy(reportError);
	const projectPath = (project: string) => host.projects().find((p) => p.name === project)?.path;

	/** The root a command acts on: the row's, else the only one listed, else the one the person picks. */
	const chooseRoot = async (
		first: unknown,
		second: unknown,
		title: string,
		accepts: (root: { memory: { exists: boolean; uncommitted: boolean } }) => boolean = () => true,
	): Promise<{ project: string; root: string } | undefined> => {
		const named = rootArg(first, second, host.projects());
		if (named) {
			return named;
		}
		const project = await pickProject(host.projects());
		if (!project) {
			return undefined;
		}
		const roots = (await desk.request(ListLineageRoots, { project: project.name })).roots.filter(accepts);
		if (roots.length === 0) {
			void showInformationMessage('Agent Desk: no root fits (see the Memory view).');
			return undefined;
		}
		if (roots.length === 1) {
			return { project: project.name, root: roots[0]!.name };
		}
		const picked = await vscode.window.showQuickPick(
			roots.map((r) => ({
				label: pickText(r.name),
				description: r.memory.exists
					? `${memoriesText(r.memory.memories)}${r.memory.uncommitted ? ' · uncommitted' : ''}`
					: 'no memory yet',
				name: r.name,
			})),
			{ title },
		);
		return picked && { project: project.name, root: picked.name };
	};

	const remember = async (first?: unknown, second?: unknown): Promise<void> => {
		const target = await chooseRoot(first, second, 'Remember in which root’s memory?');
		if (!target) {
			return;
		}
		const text = await vscode.window.showInputBox({
			title: `Remember (${pickText(target.root)})`,
			prompt: `What should branches of ${target.root} know? At most 1000 characters; it goes into ${memoryFilePath(target.root)}.`,
			placeHolder: 'e.g. Run npm test before landing; the e2e stage needs code-server.',
			ignoreFocusOut: true,
			validateInput: (v) =>
				v.trim() === ''
					? 'Write what to remember.'
					: v.length > 1000
						? `${v.length} characters: at most 1000.`
						: undefined,
		});
		if (!text?.trim()) {
			return;
		}
		const title = await vscode.window.showInputBox({
			title: `Remember (${pickText(target.root)}): title`,
			prompt: 'A short title. Optional: press Enter to let the desk take the first words.',
			ignoreFocusOut: true,
			validateInput: (v) => (v.length > 80 ? `${v.length} characters: at most 80.` : undefined),
		});
		if (title === undefined) {
			return;
		}
		const result = await desk.requestOnce(RememberMemory, {
			project: target.project,
			root: target.root,
			text: text.trim(),
			...(title.trim() ? { title: title.trim() } : {}),
		});
		tree.refresh();
		showStatusMessage(
			`Agent Desk: ${result.replayed ? 'already remembered' : 'remembered'} in ${memoryFilePath(target.root)}; Commit Memory commits the file.`,
		);
	};

	const forget = async (first?: unknown): Promise<void> => {
		const memory = memoryArg(first, host.projects());
		if (!memory) {
			void showInformationMessage('Agent Desk: choose a memory in the Memory view to forget it.');
			return;
		}
		const action = 'Forget';
		const choice = await showWarningMessage(
			`Forget ‘${oneLine(memory.title, 80)}’?`,
			{
				modal: true,
				detail: `It is removed from ${memoryFilePath(memory.root)}; branches of ${memory.root} no longer start with it. The file stays uncommitted until Commit Memory (git keeps the memory's history).`,
			},
			action,
		);
		if (choice !== action) {
			return;
		}
		await desk.requestOnce(ForgetMemory, { project: memory.project, root: memory.root, memory: memory.id });
		tree.refresh();
	};

	const openFile = async (first?: unknown, second?: unknown): Promise<void> => {
		if (!vscode.workspace.isTrusted) {
			void showInformationMessage('Agent Desk: this workspace is not trusted, so the desk opens no memory file of it.');
			return;
		}
		const target = await chooseRoot(first, second, 'Open which root’s memory file?', (r) => r.memory.exists);
		const top = target && projectPath(target.project);
		if (!target || !top) {
			return;
		}
		const uri = vscode.Uri.file(path.join(top, '.desk-memory', `${target.root}.json`));
		try {
			await vscode.workspace.fs.stat(uri);
		} catch {
			void showInformationMessage(
				`Agent Desk: ${memoryFilePath(target.root)} does not exist yet: Remember… writes it.`,
			);
			return;
		}
		await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
	};

	const commit = async (first?: unknown, second?: unknown): Promise<void> => {
		const target = await chooseRoot(first, second, 'Commit which root’s memory?', (r) => r.memory.uncommitted);
		if (!target) {
			return;
		}
		const { commit: sha } = await vscode.window.withProgress(
			{
				location: vscode.ProgressLocation.Notification,
				title: `Agent Desk: committing ${memoryFilePath(target.root)}…`,
			},
			() => desk.requestOnce(CommitMemory, { project: target.project, root: target.root }),
		);
		tree.refresh();
		const copy = 'Copy Commit Id';
		const choice = await showInformationMessage(
			`Agent Desk: committed ${memoryFilePath(target.root)} alone as ${sha.slice(0, 7)} (trailer Desk-Memory: ${target.root}).`,
			copy,
		);
		if (choice === copy) {
			await vscode.env.clipboard.writeText(sha);
		}
	};

	const memorize = async (first?: unknown, second?: unknown): Promise<void> => {
		let ref = runArg(first, second, host.projects());
		if (!ref) {
			type Item = vscode.QuickPickItem & { project: string; runId: string };
			const items: Item[] = [];
			for (const project of host.projects()) {
				const lineage = await desk.request(LineageTreeRequest, { project: project.name });
				for (const branch of lineage.roots
					.flatMap((r) => allBranches(r.branches))
					.filter((b) => b.state === 'landed')) {
					const landed =
						[...branch.runs].reverse().find((r) => r.status === 'completed') ?? branch.runs[branch.runs.length - 1];
					if (landed) {
						items.push({
							label: pickText(oneLine(branch.title, 80)),
							description: pickText(`root ${branch.node.root}`),
							detail: `run ${landed.id}`,
							project: project.name,
							runId: landed.id,
						});
					}
				}
			}
			if (items.length === 0) {
				void showInformationMessage('Agent Desk: no branch has landed yet.');
				return;
			}
			const picked = await vscode.window.showQuickPick(items, { title: 'Memorize which landing?' });
			ref = picked && { project: picked.project, runId: picked.runId };
		}
		if (!ref) {
			return;
		}
		const detail = await desk.request(ShowRun, { project: ref.project, id: ref.runId });
		const result = await vscode.window.withProgress(
			{
				location: vscode.ProgressLocation.Notification,
				title: messageText(`Agent Desk: memorizing ‘${oneLine(detail.task.title, 60)}’…`),
			},
			() =>
				desk.requestOnce(MemorizeLanding, {
					project: ref.project,
					run: ref.runId,
					settings: host.settings(projectPath(ref.project)),
				}),
		);
		tree.refresh();
		if (result.applied) {
			const { added, updated, removed } = result.applied;
			showStatusMessage(
				`Agent Desk: memorized ‘${oneLine(detail.task.title, 60)}’: ${memoriesText(added.length)} added, ${updated.length} updated, ${removed.length} removed${result.memo_hit ? ' (the summary agent’s earlier answer was reused)' : ''}.`,
			);
		} else {
			showStatusMessage(`Agent Desk: memory left unchanged: ${result.skipped ?? 'nothing to remember'}.`);
		}
	};

	return [
		vscode.commands.registerCommand('agentDesk.refreshMemory', () => tree.refresh()),
		vscode.commands.registerCommand('agentDesk.remember', guarded(remember)),
		vscode.commands.registerCommand('agentDesk.forget', guarded(forget)),
		vscode.commands.registerCommand('agentDesk.openMemoryFile', guarded(openFile)),
		vscode.commands.registerCommand('agentDesk.commitMemory', guarded(commit)),
		vscode.commands.registerCommand('agentDesk.memorizeLanding', guarded(memorize)),
	];
}
