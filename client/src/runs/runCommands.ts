import * as vscode from 'vscode';
import { visibleText } from '../common/markdownText';
import { showInformationMessage, showWarningMessage, showStatusMessage } from '../common/messages';
import {
	CancelIntent,
	CancelTask,
	ExportHistory,
	FollowUp,
	ImportHistory,
	ShowRun,
	type EndingResult,
	type HistoryRefusal,
} from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { chooseProject } from '../common/windowProjects';
import { guardedBy } from '../common/guarded';
import { loadPatchSet, openRunText, patchScheme, type PatchSides, type RunPages, type RunTexts } from './runDocuments';
import { runTextTarget } from './runRef';
import { rowRef, type RowRef } from './runRef';
import { runSettings } from './runSettings';
import type { RunsTreeProvider } from './runsTree';

/**
 * Commands of the Runs view: open a run's page, a text of a run (a call's input or output, a check's
 * log, a whole message) in a tab, a PatchSet's diff, import and export run history,
 * and the endings and follow-ups of its rows (glossary: Ending, Follow-up), each confirmed first.
 */
export function registerRunCommands(
	desk: DeskClient,
	runs: RunsTreeProvider,
	pages: RunPages,
	patches: PatchSides,
	texts: RunTexts,
	reportError: (error: unknown) => void,
): vscode.Disposable[] {
	const guarded = guardedBy(reportError);
	const pickProject = async () => (await chooseProject(runs.windowProjects, undefined))?.name;
	/** A project of this window and ids, all strings (a caller may pass anything), else an error. */
	const named = (project: unknown, ...ids: unknown[]): [string, ...string[]] => {
		if (
			typeof project !== 'string' ||
			!runs.windowProjects.some((p) => p.name === project) ||
			!ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 128)
		) {
			throw new Error('That names no run of this window.');
		}
		return [project, ...(ids as string[])];
	};
	return [
		vscode.commands.registerCommand('agentDesk.refreshRuns', () => runs.refresh()),
		vscode.commands.registerCommand(
			'agentDesk.openRun',
			guarded(async (projectArg: unknown, runIdArg: unknown) => {
				const [project, runId] = named(projectArg, runIdArg);
				await pages.open(project, runId!);
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.openRunText',
			guarded(async (projectArg: unknown, runIdArg: unknown, targetArg: unknown) => {
				const [project, runId] = named(projectArg, runIdArg);
				const target = runTextTarget(targetArg);
				if (!target) {
					throw new Error('That names no text of the run.');
				}
				await openRunText(desk, texts, project, runId!, target);
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.openPatchSet',
			guarded(async (projectArg: unknown, runIdArg: unknown, patchsetArg: unknown) => {
				const [project, runId, patchsetId] = named(projectArg, runIdArg, patchsetArg);
				const [detail, { source, paths, changes }] = await Promise.all([
					desk.request(ShowRun, { project, id: runId! }),
					loadPatchSet(desk, patches, project, patchsetId!),
				]);
				const title = visibleText(`PatchSet: ${detail.task.title}${source === 'artifact' ? ' (proposed)' : ''}`);
				if (changes.length === 0) {
					void showInformationMessage('Agent Desk: this PatchSet changes no file.');
				} else if (changes.length === 1) {
					await vscode.commands.executeCommand(
						'vscode.diff',
						changes[0]![1],
						changes[0]![2],
						`${visibleText(paths[0]!)} (${title})`,
					);
				} else {
					await vscode.commands.executeCommand('vscode.changes', title, changes);
				}
			}),
		),
		...(['intent', 'task'] as const).map((kind) =>
			vscode.commands.registerCommand(
				kind === 'intent' ? 'agentDesk.cancelIntent' : 'agentDesk.cancelTask',
				guarded(async (node: unknown) => {
					const row = rowRef(node, [kind], runs.windowProjects);
					if (row && (await confirmEnding(row))) {
						const result =
							kind === 'intent'
								? await desk.request(CancelIntent, { project: row.project, intent: row.id })
								: await desk.request(CancelTask, { project: row.project, task: row.id });
						showStatusMessage(`Agent Desk: ${kind} ‘${row.label}’ ${endingSummary(result)}`);
					}
				}),
			),
		),
		vscode.commands.registerCommand(
			'agentDesk.followUp',
			guarded(async (node: unknown) => {
				const row = rowRef(node, ['intent', 'run'], runs.windowProjects);
				if (!row) {
					return;
				}
				const ticket = await vscode.window.showInputBox({
					title: visibleText(`Follow Up: ${row.label}`),
					prompt:
						'The follow-up ticket: a new intent that refines this one, run with the same plugs (the target as it is now).',
					placeHolder: 'Also…',
					ignoreFocusOut: true,
					validateInput: (text) => (text.trim() === '' ? 'Write what the follow-up should do.' : undefined),
				});
				if (ticket === undefined) {
					return;
				}
				const projectPath = runs.windowProjects.find((p) => p.name === row.project)?.path;
				const record = await desk.requestOnce(FollowUp, {
					project: row.project,
					from: row.id,
					ticket,
					settings: runSettings(projectPath),
				});
				void showInformationMessage(`Agent Desk: follow-up of ‘${row.label}’ started (run ${record.run}).`);
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.importHistory',
			guarded(async () => {
				const project = await pickProject();
				if (!project) {
					return;
				}
				// The server's desk/runs/didChange refreshes the view; refreshing here too would replace the
				// rows twice, and a click on a row being replaced is lost.
				const result = await desk.request(ImportHistory, { project });
				const summary = `Agent Desk: ${result.added} object${result.added === 1 ? '' : 's'} imported from refs/desk/history, ${result.unchanged} already here.`;
				if (result.refused.length === 0) {
					showStatusMessage(summary);
					return;
				}
				const choice = await showWarningMessage(
					`${summary} ${result.refused.length} refused: not what could have happened to this project's history; nothing of them was stored.`,
					'Show Details',
				);
				if (choice === 'Show Details') {
					await showRefusals(patches, project, result.refused);
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
				showStatusMessage(
					result.commit
						? `Agent Desk: ${result.objects} objects written to refs/desk/history (${result.commit.slice(0, 7)}); push that ref to share them.`
						: 'Agent Desk: the run history is already up to date.',
				);
			}),
		),
	];
}

/** Asks before an ending: what it stops, abandons and ends. */
async function confirmEnding(row: RowRef): Promise<boolean> {
	const action = row.kind === 'intent' ? 'Cancel Intent' : 'Cancel Task';
	const choice = await showWarningMessage(
		`${action} ‘${row.label}’?`,
		{
			modal: true,
			detail: `A run of it still working is cancelled first (its agent stopped); each run waiting for review or failed is abandoned, its files in the checkout put back (files you changed since are kept). The ${row.kind} ends cancelled and cannot run again; Follow Up… starts a new intent from it.`,
		},
		action,
	);
	return choice === action;
}

function endingSummary(result: EndingResult): string {
	const parts = [
		result.cancelled_runs.length ? `${result.cancelled_runs.length} run(s) cancelled` : '',
		result.abandoned_runs.length ? `${result.abandoned_runs.length} run(s) abandoned` : '',
	].filter(Boolean);
	return `is cancelled${parts.length ? ` (${parts.join(', ')})` : ''}.`;
}

/**
 * The refused objects of an import, one a line with its reason code, in a read-only plain-text
 * document (held by `sides`, so closing it asks nothing): the text comes from a ref anyone with push
 * access wrote, so nothing in it is a link.
 */
async function showRefusals(sides: PatchSides, project: string, refused: readonly HistoryRefusal[]): Promise<void> {
	const lines = [
		`Objects of refs/desk/history refused by the import into ${project} (none of them was stored):`,
		'',
		...refused.map((r) => `${r.path}  [${r.code}]\n    ${r.reason}`),
	];
	const uri = vscode.Uri.from({
		scheme: patchScheme,
		path: `/Refused by the history import into ${project}.txt`,
		query: `at=${Date.now()}`,
	});
	sides.set(uri, `${lines.join('\n')}\n`);
	const document = await vscode.workspace.openTextDocument(uri);
	await vscode.window.showTextDocument(document, { preview: true });
}
