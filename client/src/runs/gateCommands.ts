import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { messageText, pickText, visibleText } from '../common/markdownText';
import { showErrorMessage, showInformationMessage, showWarningMessage } from '../common/messages';
import {
	CancelRun,
	CheckAgents,
	DecideRun,
	ListRuns,
	ResumeRun,
	ShowRun,
	type AgentFix,
	type DecideResult,
	type RunDetail,
	type RunFinishedParams,
	type RunSummary,
} from '../../../server/src/protocol/protocol';
import { DeskRequestError, type DeskClient } from '../common/deskClient';
import { loadPatchSet, type PatchSides, type RunPages } from './runDocuments';
import { runSettings } from './runSettings';
import type { RunsTreeProvider } from './runsTree';
import { runRef, type RunRef } from './runRef';
import { runName, runState, runStatusText } from './runWords';
import { checkpointKept, checkpointQuestion, landedWords, landingQuestion } from './gateWords';
import { guardedBy } from '../common/guarded';
import { applyAgentFix } from '../common/agentFixes';

type GateDecision = 'commit' | 'retry' | 'abandon' | 'checkpoint' | 'rollback';

interface DecisionWords {
	/** The command's words, for the rationale box. */
	title: string;
	/** The question of the pick when no run is named. */
	pick: string;
	/** What the pick says when no run fits. */
	none: string;
	progress: string;
	/** Which runs the decision is open to. */
	accepts(run: RunSummary): boolean;
}

const atGateWithChange = (run: RunSummary) => runState(run) === 'gate' && run.patchsets > 0;
const atGateOrFailed = (run: RunSummary) => runState(run) === 'gate' || runState(run) === 'failed';

const decisions: Record<GateDecision, DecisionWords> = {
	commit: {
		title: 'Approve and Land',
		pick: 'Approve and land which run?',
		none: 'No run is waiting for review with a change to land.',
		progress: 'Landing',
		accepts: atGateWithChange,
	},
	retry: {
		title: 'Retry',
		pick: 'Retry which run?',
		none: 'No run is waiting for review or failed.',
		progress: 'Starting a new run of',
		accepts: atGateOrFailed,
	},
	abandon: {
		title: 'Abandon',
		pick: 'Abandon which run?',
		none: 'No run is waiting for review or failed.',
		progress: 'Abandoning',
		accepts: atGateOrFailed,
	},
	checkpoint: {
		title: 'Checkpoint',
		pick: 'Keep which run as a checkpoint?',
		none: 'No run is waiting for review with a change to keep.',
		progress: 'Keeping a checkpoint of',
		accepts: atGateWithChange,
	},
	rollback: {
		title: 'Rollback',
		pick: 'Roll back which landed run?',
		none: 'No landed run is left to roll back.',
		progress: 'Rolling back',
		accepts: (run) => run.decision === 'commit' && !run.rolled_back_by,
	},
};

const resumable = (run: RunSummary) => run.decision === 'checkpoint' && !run.resumed_by;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The gate (glossary: Gate) in the editor: the notification when a run finishes, Review (every changed
 * file in the multi-file diff editor, the run's page with its evidence and provenance beside it),
 * Approve and Land, Retry, Abandon, Checkpoint, Cancel Run while an agent works, and after the gate
 * Rollback… of a landed run and Resume from Checkpoint.
 */
export function registerGateCommands(
	desk: DeskClient,
	runs: RunsTreeProvider,
	pages: RunPages,
	patches: PatchSides,
	reportError: (error: unknown) => void,
): { disposables: vscode.Disposable[]; onRunFinished(params: RunFinishedParams): void } {
	const guarded = guardedBy(reportError);
	const projectPath = (project: string) => runs.windowProjects.find((p) => p.name === project)?.path;

	const pickRun = async (
		title: string,
		accepts: (run: RunSummary) => boolean,
		none: string,
		single: 'pick' | 'take' = 'pick',
	): Promise<RunRef | undefined> => {
		const items: Array<vscode.QuickPickItem & { ref: RunRef; started: string }> = [];
		const several = runs.windowProjects.length > 1;
		for (const project of runs.windowProjects) {
			const overview = await desk.request(ListRuns, { project: project.name });
			for (const { task, runs: taskRuns } of [...overview.intents.flatMap((i) => i.tasks), ...overview.tasks]) {
				for (const run of taskRuns.filter(accepts)) {
					items.push({
						label: pickText(task.title),
						description: runStatusText(run),
						detail: `${several ? `${pickText(project.name)} · ` : ''}started ${run.started_at.slice(0, 16).replace('T', ' ')} · ${plural(run.patchsets, 'PatchSet')} · run ${run.id}`,
						ref: { project: project.name, runId: run.id },
						started: run.started_at,
					});
				}
			}
		}
		if (items.length === 0) {
			void showInformationMessage(`Agent Desk: ${none}`);
			return undefined;
		}
		items.sort((a, b) => b.started.localeCompare(a.started));
		if (single === 'take' && items.length === 1) {
			return items[0]!.ref;
		}
		return (await vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true }))?.ref;
	};

	const review = async (ref: RunRef): Promise<void> => {
		const detail = await desk.request(ShowRun, { project: ref.project, id: ref.runId });
		const last = detail.patchsets[detail.patchsets.length - 1];
		if (!last) {
			void showInformationMessage(`Agent Desk: run ‘${detail.task.title}’ made no change to review.`);
			await pages.open(ref.project, ref.runId);
			return;
		}
		// On the shared checkout each file is named by its path there (and opens from the diff).
		const top = detail.run.tags['desk.isolation'] === 'shared' ? projectPath(ref.project) : undefined;
		const { changes } = await loadPatchSet(
			desk,
			patches,
			ref.project,
			last.object_id,
			top ? (file) => vscode.Uri.file(path.join(top, ...file.split('/'))) : undefined,
		);
		if (changes.length === 0) {
			void showInformationMessage(`Agent Desk: run ‘${detail.task.title}’ changes no file.`);
		} else {
			// The multi-file diff editor adds the number of files to the title itself.
			// Named with the run's place among its task's runs: the reviews of two runs of a task are two tabs apart.
			await vscode.commands.executeCommand(
				'vscode.changes',
				`Review: ${visibleText(detail.task.title)} (${runName(detail)})`,
				changes,
			);
		}
		await pages.open(ref.project, ref.runId, true);
	};

	/** What Rollback reverts, in words, for the confirmation (glossary: Rollback). */
	const rollbackText = (ref: RunRef, detail: RunDetail): string => {
		const landed = detail.patchsets.find((p) => p.object_id === detail.decision?.chosen_patchset_id);
		const touched = landed?.touched ?? [];
		// Reverted, an added file goes, a deleted one comes back.
		const files = touched
			.map((f) => `  ${f.change_type === 'added' ? 'D' : f.change_type === 'deleted' ? 'A' : 'M'} ${f.path}`)
			.slice(0, 12);
		const more = touched.length > files.length ? `\n  … and ${touched.length - files.length} more` : '';
		const version = detail.decision?.tags['desk.version'];
		if (version !== undefined) {
			return `Restore the target asset's files as they were before v${version} (which this run landed), cut as its next version; ${plural(touched.length, 'file')}, as the revert changes them:\n\n${files.join('\n')}${more}\n\nRefused if the asset moved on since v${version}.`;
		}
		const commit = detail.decision?.result_commit_sha ?? '';
		const branch =
			detail.run.tags['desk.isolation'] === 'worktree'
				? `desk/run-${ref.runId} (or the checked-out branch, if it holds the commit)`
				: checkedOutBranch(projectPath(ref.project));
		return `Make a commit on ${branch} that reverts ${commit.slice(0, 12)} (“${detail.task.title}”, landed by this run), with a Desk-Run trailer naming a new rollback run of the task; ${plural(touched.length, 'file')} in the checkout follow it. As the revert changes them (A back, D gone, M modified):\n\n${files.join('\n')}${more}\n\nRefused, with nothing changed, if you changed any of these files since.`;
	};

	const abandonText = (detail: RunDetail): string => {
		return `Its change is rejected and the task marked failed.${putsBack(detail) ? ' The files the agent changed in the checkout are put back as they were when the run began (a file you edited since is left as it is).' : ''}`;
	};

	/** The files a Retry or an Abandon puts back: on the shared checkout, those the run's last PatchSet touched; none elsewhere. */
	const putsBack = (detail: RunDetail): number => {
		const last = detail.patchsets[detail.patchsets.length - 1];
		return detail.run.tags['desk.isolation'] === 'shared' && last ? new Set(last.touched.map((f) => f.path)).size : 0;
	};

	/** What the server says it put back and what it left (files changed since the run), in words. */
	const restoredText = (result: DecideResult): string => {
		const restored = result.restored?.length ? ` ${plural(result.restored.length, 'file')} put back.` : '';
		const left = result.left?.length ? ` Left as they are (changed since the run): ${result.left.join(', ')}.` : '';
		return `${restored}${left}`;
	};

	const report = async (ref: RunRef, detail: RunDetail, result: DecideResult): Promise<void> => {
		const title = detail.task.title;
		switch (result.decision.decision_type) {
			case 'commit': {
				if (result.commit) {
					const copy = 'Copy Commit Id';
					const top = projectPath(ref.project);
					// On the run's own branch (worktree mode) the next step is the person's: merge it, or switch to it.
					const { message, merge, switchTo } = landedWords(detail, result.commit, ref.runId, checkedOutBranch(top));
					const next = [merge, switchTo].filter((n): n is { title: string; command: string } => n !== undefined);
					const choice = await showInformationMessage(message, ...next.map((n) => n.title), copy);
					const chosen = next.find((n) => n.title === choice);
					if (chosen) {
						inTerminal(chosen.title, top, chosen.command);
					} else if (choice === copy) {
						await vscode.env.clipboard.writeText(result.commit);
						vscode.window.setStatusBarMessage(`Copied ${result.commit}`, 3000);
					}
				} else {
					void showInformationMessage(`Agent Desk: landed ‘${title}’ as v${result.version} of its target asset.`);
				}
				return;
			}
			case 'retry': {
				const show = 'Show Run';
				const choice = await showInformationMessage(
					`Agent Desk: retrying ‘${title}’ in a new run.${restoredText(result)}`,
					show,
				);
				if (choice === show && result.new_run) {
					await pages.open(ref.project, result.new_run);
				}
				return;
			}
			case 'abandon': {
				void showInformationMessage(`Agent Desk: abandoned ‘${title}’.${restoredText(result)}`);
				return;
			}
			case 'rollback': {
				const show = 'Show Rollback Run';
				const choice = await showInformationMessage(
					result.commit
						? `Agent Desk: rolled back ‘${title}’: commit ${result.commit.slice(0, 7)} reverts it.`
						: `Agent Desk: rolled back ‘${title}’: v${result.version} of its target asset restores the version before it.`,
					show,
				);
				if (choice === show && result.rollback_run) {
					await pages.open(ref.project, result.rollback_run);
				}
				return;
			}
			case 'checkpoint': {
				const resumeIt = 'Resume from Checkpoint';
				const show = 'Show Run';
				const choice = await showInformationMessage(checkpointKept(detail, result, ref.runId), resumeIt, show);
				if (choice === resumeIt) {
					await resume(ref);
				} else if (choice === show) {
					await pages.open(ref.project, ref.runId);
				}
				return;
			}
			default:
				return;
		}
	};

	/**
	 * A decision: an optional rationale, a confirmation that says what happens for Land, Checkpoint and
	 * Abandon (and for Retry when it puts files of the shared checkout back), then the server.
	 */
	const decide = async (ref: RunRef, decision: GateDecision): Promise<void> => {
		const words = decisions[decision];
		const detail = await desk.request(ShowRun, { project: ref.project, id: ref.runId });
		const title = detail.task.title;
		const rationale = await vscode.window.showInputBox({
			title: `${words.title}: ${pickText(title)}`,
			prompt: 'Why? Recorded with the decision. Optional: press Enter to go on without one, Escape to cancel.',
			placeHolder: 'Rationale (optional)',
			ignoreFocusOut: true,
		});
		if (rationale === undefined) {
			return;
		}
		const restoring = decision === 'retry' ? putsBack(detail) : 0;
		if (decision === 'commit') {
			const question = landingQuestion(detail, ref.runId, checkedOutBranch(projectPath(ref.project)));
			const options = { modal: true, detail: question.detail };
			// With a failing check: a warning that names them, its default button reviewing them.
			const choice = question.warning
				? await showWarningMessage(question.message, options, ...question.actions)
				: await showInformationMessage(question.message, options, ...question.actions);
			if (choice === 'Review Checks') {
				await pages.open(ref.project, ref.runId, true);
			}
			if (choice !== question.land) {
				return;
			}
		} else if (decision === 'checkpoint') {
			const question = checkpointQuestion(detail, ref.runId);
			const keep = 'Keep as Checkpoint';
			if ((await showInformationMessage(question.message, { modal: true, detail: question.detail }, keep)) !== keep) {
				return;
			}
		} else if (decision === 'abandon' || decision === 'rollback' || restoring > 0) {
			const action = decision === 'abandon' ? 'Abandon' : decision === 'rollback' ? 'Roll Back' : 'Retry';
			const question = `${action} run ‘${title}’?`;
			const choice = await showWarningMessage(
				question,
				{
					modal: true,
					detail:
						decision === 'abandon'
							? abandonText(detail)
							: decision === 'rollback'
								? rollbackText(ref, detail)
								: `Retry puts back the ${plural(restoring, 'file')} the agent changed in the checkout (files you changed since are kept) and starts a new run of the task.`,
				},
				action,
			);
			if (choice !== action) {
				return;
			}
		}
		const settings = decision === 'retry' ? runSettings(projectPath(ref.project)) : undefined;
		const send = (identity: PersonName | undefined) =>
			vscode.window.withProgress(
				{
					location: vscode.ProgressLocation.Notification,
					title: messageText(`Agent Desk: ${words.progress} ‘${title}’…`),
				},
				() =>
					desk.requestOnce(DecideRun, {
						project: ref.project,
						run: ref.runId,
						decision,
						...(rationale.trim() ? { rationale: rationale.trim() } : {}),
						...(settings ? { settings } : {}),
						...(identity ? { identity } : {}),
					}),
			);
		let result: DecideResult;
		try {
			result = await send(savedIdentity());
		} catch (error) {
			// Git has no identity to commit with here: the person is asked once, and it is kept.
			if (!(error instanceof DeskRequestError && error.deskError?.code === 'run.noIdentity')) {
				throw error;
			}
			const identity = await askIdentity();
			if (!identity) {
				return;
			}
			result = await send(identity);
		}
		await report(ref, detail, result);
	};

	/** Resume from Checkpoint (glossary: Checkpoint): a new run of the task, configured from this run's launch. */
	const resume = async (ref: RunRef): Promise<void> => {
		const detail = await desk.request(ShowRun, { project: ref.project, id: ref.runId });
		const result = await vscode.window.withProgress(
			{
				location: vscode.ProgressLocation.Notification,
				title: messageText(`Agent Desk: resuming ‘${detail.task.title}’ from its checkpoint…`),
			},
			() =>
				desk.requestOnce(ResumeRun, {
					project: ref.project,
					run: ref.runId,
					settings: runSettings(projectPath(ref.project)),
				}),
		);
		const show = 'Show Run';
		const choice = await showInformationMessage(
			`Agent Desk: resumed ‘${detail.task.title}’ from its checkpoint in a new run.`,
			show,
		);
		if (choice === show) {
			await pages.open(ref.project, result.run);
		}
	};

	const cancel = async (ref: RunRef): Promise<void> => {
		const detail = await desk.request(ShowRun, { project: ref.project, id: ref.runId });
		const action = 'Cancel Run';
		const choice = await showWarningMessage(
			`Cancel run ‘${detail.task.title}’?`,
			{
				modal: true,
				detail:
					'The agent and every process it started are stopped and the run is marked failed; you can retry or abandon it then.',
			},
			action,
		);
		if (choice !== action) {
			return;
		}
		const { stopped } = await desk.request(CancelRun, { project: ref.project, run: ref.runId });
		void showInformationMessage(
			stopped
				? `Agent Desk: cancelled run ‘${detail.task.title}’.`
				: `Agent Desk: no agent was working on run ‘${detail.task.title}’ any more; it is marked failed.`,
		);
	};

	/** A command on a run: the one it is given, else the one the person picks among those it fits. */
	const onRun = (
		body: (ref: RunRef) => Promise<void>,
		pick: string,
		accepts: (run: RunSummary) => boolean,
		none: string,
	) =>
		guarded(async (first?: unknown, second?: unknown) => {
			const ref = runRef(first, second, runs.windowProjects) ?? (await pickRun(pick, accepts, none));
			if (ref) {
				await body(ref);
			}
		});
	const decisionCommand = (decision: GateDecision) =>
		onRun(
			(ref) => decide(ref, decision),
			decisions[decision].pick,
			decisions[decision].accepts,
			decisions[decision].none,
		);

	const disposables = [
		vscode.commands.registerCommand(
			'agentDesk.reviewRun',
			onRun(review, 'Review which run?', (run) => run.patchsets > 0, 'No run has a change to review yet.'),
		),
		// The status bar's "N to review": the one waiting run straight away, else a pick of them.
		vscode.commands.registerCommand(
			'agentDesk.reviewWaitingRun',
			guarded(async () => {
				const ref = await pickRun(
					'Review which waiting run?',
					(run) => runState(run) === 'gate',
					'No run is waiting for review.',
					'take',
				);
				if (ref) {
					await review(ref);
				}
			}),
		),
		vscode.commands.registerCommand('agentDesk.approveRun', decisionCommand('commit')),
		vscode.commands.registerCommand('agentDesk.retryRun', decisionCommand('retry')),
		vscode.commands.registerCommand('agentDesk.abandonRun', decisionCommand('abandon')),
		vscode.commands.registerCommand('agentDesk.checkpointRun', decisionCommand('checkpoint')),
		vscode.commands.registerCommand('agentDesk.rollbackRun', decisionCommand('rollback')),
		vscode.commands.registerCommand(
			'agentDesk.resumeRun',
			onRun(resume, 'Resume which checkpointed run?', resumable, 'No checkpointed run is left to resume.'),
		),
		vscode.commands.registerCommand(
			'agentDesk.cancelRun',
			onRun(cancel, 'Cancel which run?', (run) => runState(run) === 'running', 'No run is in progress.'),
		),
	];

	/**
	 * A run whose agent stopped before doing anything (glossary: Agent check): Retry would stop the same
	 * way, so the agent's fix comes first (a sign-in, say), then Retry and Show Run. The run is left
	 * out of the Runs view, which the message says.
	 */
	const notStarted = async (params: RunFinishedParams): Promise<void> => {
		let fixes: AgentFix[] = [];
		try {
			const { agents } = await desk.request(CheckAgents, {
				settings: runSettings(projectPath(params.project)),
				...(params.agent ? { agent: params.agent } : {}),
				fresh: true,
			});
			fixes = agents[0]?.fixes ?? [];
		} catch {
			// The agent is no longer in the settings: there is nothing of it to fix.
		}
		const agent = params.agent ? `agent ${params.agent}` : 'the agent';
		const choice = await showErrorMessage(
			`Run ‘${params.title}’ never started: ${agent} stopped before doing anything (${params.error ?? 'no reason was recorded'}). The Runs view leaves it out.`,
			...fixes.map((f) => f.title),
			'Retry',
			'Show Run',
		);
		const fix = fixes.find((f) => f.title === choice);
		const ref = { project: params.project, runId: params.run };
		if (fix) {
			applyAgentFix(fix);
		} else if (choice === 'Retry') {
			await decide(ref, 'retry');
		} else if (choice === 'Show Run') {
			await pages.open(ref.project, ref.runId);
		}
	};

	const onRunFinished = (params: RunFinishedParams): void => {
		if (!runs.windowProjects.some((p) => p.name === params.project)) {
			return;
		}
		const ref = { project: params.project, runId: params.run };
		const then = (actions: Record<string, (ref: RunRef) => Promise<void>>) => (choice: string | undefined) => {
			const action = choice ? actions[choice] : undefined;
			if (action) {
				void guarded(action)(ref);
			}
		};
		if (params.status === 'failed' && params.never_started) {
			void guarded(notStarted)(params);
		} else if (params.status === 'gate') {
			const { passed, failed } = params.checks;
			// Only Review: landing is decided next to the diff (the run page), in the Runs view or the palette, never blind from a toast.
			void showInformationMessage(
				`Run ‘${params.title}’ is ready for review: ${plural(params.touched, 'file')} changed, checks: ${passed} passed, ${failed} failed`,
				'Review',
			).then(then({ Review: review }));
		} else {
			void showErrorMessage(
				`Run ‘${params.title}’ failed: ${params.error ?? 'no reason was recorded'}`,
				'Show Run',
				'Retry',
			).then(then({ 'Show Run': (r) => pages.open(r.project, r.runId), Retry: (r) => decide(r, 'retry') }));
		}
	};
	return { disposables, onRunFinished };
}

/** A name and an email, as a commit records a person. */
interface PersonName {
	name: string;
	email: string;
}

/** The identity the person gave once (setting agentDesk.gitIdentity), for commits where git has none. */
function savedIdentity(): PersonName | undefined {
	const saved = vscode.workspace.getConfiguration('agentDesk').get<Partial<PersonName> | null>('gitIdentity');
	return typeof saved?.name === 'string' && saved.name.trim() && typeof saved.email === 'string' && saved.email.trim()
		? { name: saved.name.trim(), email: saved.email.trim() }
		: undefined;
}

/**
 * Asks for the name and email a landing commits with, once: git has none here (no user.name or
 * user.email in the repository's or the person's configuration). Kept in the user setting
 * agentDesk.gitIdentity, which the desk uses only where git has none.
 */
async function askIdentity(): Promise<PersonName | undefined> {
	const why = 'Git has no name and email to commit with here. Asked once; kept in the setting agentDesk.gitIdentity.';
	const name = await vscode.window.showInputBox({
		title: 'Your name for the commit',
		prompt: why,
		placeHolder: 'Ada Lovelace',
		ignoreFocusOut: true,
		validateInput: (value) => (value.trim() ? undefined : 'A name, as git records it (user.name).'),
	});
	if (name === undefined) {
		return undefined;
	}
	const email = await vscode.window.showInputBox({
		title: 'Your email for the commit',
		prompt: why,
		placeHolder: 'ada@example.com',
		ignoreFocusOut: true,
		validateInput: (value) =>
			/^[^\s<>]+@[^\s<>]+$/.test(value.trim()) ? undefined : 'An email, as git records it (user.email).',
	});
	if (email === undefined) {
		return undefined;
	}
	const identity = { name: name.trim(), email: email.trim() };
	await vscode.workspace
		.getConfiguration('agentDesk')
		.update('gitIdentity', identity, vscode.ConfigurationTarget.Global);
	return identity;
}

/** A terminal in the repository running a git command the person chose (a merge, a switch): it stays open to show what git said. */
function inTerminal(name: string, cwd: string | undefined, command: string): void {
	const terminal = vscode.window.createTerminal({ name, ...(cwd ? { cwd } : {}) });
	terminal.show();
	terminal.sendText(command);
}

/** The branch checked out in the repository at `top` (what a land on the shared checkout commits on). */
function checkedOutBranch(top: string | undefined): string {
	try {
		const head = top ? fs.readFileSync(path.join(top, '.git', 'HEAD'), 'utf8').trim() : '';
		if (head.startsWith('ref: refs/heads/')) {
			return head.slice('ref: refs/heads/'.length);
		}
	} catch {
		// A linked worktree (.git is a file) or no checkout: say it in general words.
	}
	return 'the checked-out branch';
}
