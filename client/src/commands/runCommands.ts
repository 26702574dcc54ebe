import * as vscode from 'vscode';
import { ExportHistory, ImportHistory, ShowRun } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../deskClient';
import { repoFileUri, type RunPages } from '../runDocuments';
import type { RunsTreeProvider } from '../views/runsTree';

/** Commands of the Runs view: open a run's page, a PatchSet's diff, import and export run history. */
export function registerRunCommands(desk: DeskClient, runs: RunsTreeProvider, pages: RunPages, reportError: (error: unknown) => void): vscode.Disposable[] {
	const guarded =
		<A extends unknown[]>(body: (...args: A) => Promise<void>) =>
		async (...args: A) => {
			try {
				await body(...args);
			} catch (error) {
				reportError(error);
			}
		};
	const pickProject = async (): Promise<string | undefined> => {
		const projects = runs.windowProjects;
		if (projects.length <= 1) {
			return projects[0]?.name;
		}
		return (await vscode.window.showQuickPick(projects.map((p) => p.name), { title: 'Which project?' })) ?? undefined;
	};
	return [
		vscode.commands.registerCommand('agentDesk.refreshRuns', () => runs.refresh()),
		vscode.commands.registerCommand(
			'agentDesk.openRun',
			guarded(async (project: string, runId: string) => {
				await pages.open(project, runId);
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.openPatchSet',
			guarded(async (project: string, runId: string, patchsetId: string) => {
				const detail = await desk.request(ShowRun, { project, id: runId });
				const patchset = detail.patchsets.find((p) => p.object_id === patchsetId);
				if (!patchset) {
					return;
				}
				const result = detail.decision?.chosen_patchset_id === patchsetId ? detail.decision.result_commit_sha : undefined;
				if (!result || result === patchset.commit) {
					void vscode.window.showInformationMessage(`Agent Desk: this PatchSet was not committed, so its change is not in the repository to compare.${patchset.rationale ? ` Rationale: ${patchset.rationale}` : ''}`);
					return;
				}
				const changes = patchset.touched.map((f): [vscode.Uri, vscode.Uri, vscode.Uri] => [repoFileUri(project, result, f.path), repoFileUri(project, patchset.commit, f.path), repoFileUri(project, result, f.path)]);
				const title = `PatchSet: ${detail.task.title}`;
				if (changes.length === 1) {
					await vscode.commands.executeCommand('vscode.diff', changes[0]![1], changes[0]![2], `${patchset.touched[0]!.path} (${title})`);
				} else {
					await vscode.commands.executeCommand('vscode.changes', title, changes);
				}
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.importHistory',
			guarded(async () => {
				const project = await pickProject();
				if (!project) {
					return;
				}
				const result = await desk.request(ImportHistory, { project });
				runs.refresh();
				const refused = result.refused.length ? ` ${result.refused.length} refused (see the log).` : '';
				void vscode.window.showInformationMessage(`Agent Desk: ${result.added} object${result.added === 1 ? '' : 's'} imported from refs/desk/history, ${result.unchanged} already here.${refused}`);
				for (const r of result.refused) {
					reportError(new Error(`refused ${r.path}: ${r.reason}`));
				}
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.exportHistory',
			guarded(async () => {
				const project = await pickProject();
				if (!project) {
					return;
				}
				const result = await desk.request(ExportHistory, { project });
				void vscode.window.showInformationMessage(result.commit ? `Agent Desk: ${result.objects} objects written to refs/desk/history (${result.commit.slice(0, 7)}); push that ref to share them.` : 'Agent Desk: the run history is already up to date.');
			}),
		),
	];
}
