import * as vscode from 'vscode';
import {
	AddLineageRoot,
	AnswerReport,
	BranchFromRun,
	ContinueWithReports,
	LineageTreeRequest,
	ListBoard,
	ListLineageRoots,
	ListRuns,
	PostToBoard,
	PromptLineage,
	ShowRun,
	type BoardDidReport,
	type BoardMessage,
	type BranchResult,
	type NotificationParamsOf,
} from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { guardedBy } from '../common/guarded';
import { pickText, visibleLines } from '../common/markdownText';
import { showInformationMessage, showStatusMessage } from '../common/messages';
import { chooseProject, type WindowProject } from '../common/windowProjects';
import { boardArg, reportArg, rootArg, rootNamePattern, runArg } from './lineageArgs';
import {
	allBranches,
	boardDocument,
	branchStateWords,
	oneLine,
	reportMessage,
	withAnswers,
	type LineageBranch,
} from './lineageText';

/** What the lineage commands need of the rest of the extension (given by extension.ts, so this folder imports no other feature). */
export interface LineageHost {
	projects(): readonly WindowProject[];
	/** The run settings for a project's folder, with the `lineage` key (runs/runSettings.ts). */
	settings(projectPath?: string): Record<string, unknown>;
	openRun(project: string, runId: string): Promise<void>;
	/** The Runs view and the open run pages read again. */
	refreshRuns(project: string): void;
}

/** `desk-board:/<project>/<title>.txt?node=<id>`: a board as a read-only text document. */
export const boardScheme = 'desk-board';

/** The boards' text documents, read from the desk each time one is opened or told to change. */
export class BoardDocuments implements vscode.TextDocumentContentProvider {
	private readonly changes = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changes.event;
	private readonly open = new Set<string>();

	constructor(private readonly desk: DeskClient) {}

	uri(project: string, node: string, title: string): vscode.Uri {
		const name = oneLine(title, 60).replace(/[/\\?#%]/g, '-') || node;
		return vscode.Uri.from({
			scheme: boardScheme,
			path: `/${encodeURIComponent(project)}/Board of ${name}.txt`,
			query: new URLSearchParams({ project, node, title: oneLine(title, 200) }).toString(),
		});
	}

	async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
		const query = new URLSearchParams(uri.query);
		const project = query.get('project') ?? '';
		const node = query.get('node') ?? '';
		this.open.add(uri.toString());
		const [{ messages }, tree] = await Promise.all([
			this.desk.request(ListBoard, { project, node }),
			this.desk.request(LineageTreeRequest, { project }).catch(() => undefined),
		]);
		return visibleLines(boardDocument(query.get('title') ?? node, withAnswers(messages, tree)));
	}

	/** Open boards of the project are read again. */
	refresh(project: string): void {
		for (const key of this.open) {
			const uri = vscode.Uri.parse(key);
			if (new URLSearchParams(uri.query).get('project') === project) {
				this.changes.fire(uri);
			}
		}
	}

	dispose(): void {
		this.changes.dispose();
	}
}

/** The project a command acts on when no row names one: the window's only one, else the one the person picks. */
export async function pickProject(projects: readonly WindowProject[]): Promise<WindowProject | undefined> {
	if (projects.length === 0) {
		void showInformationMessage(
			vscode.workspace.isTrusted
				? 'Agent Desk: no project is open in this window.'
				: 'Agent Desk: this workspace is not trusted, so the desk adopted nothing of it.',
		);
		return undefined;
	}
	return chooseProject(projects, undefined);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : word.endsWith('ch') ? 'es' : 's'}`;

/**
 * Branch from Here…, New Lineage Root…, Answer Report…, Post Note…, Continue with Reports and Open
 * Board (glossary: Lineage), and the one notification of an active report. Requests that make
 * something go under a fresh request id (DeskClient.requestOnce), so a retry after a server restart
 * answers the stored result.
 */
export function registerLineageCommands(
	desk: DeskClient,
	host: LineageHost,
	boards: BoardDocuments,
	reportError: (error: unknown) => void,
): { disposables: vscode.Disposable[]; onReport(params: NotificationParamsOf<typeof BoardDidReport>): void } {
	const guarded = guardedBy(reportError);
	const projectPath = (project: string) => host.projects().find((p) => p.name === project)?.path;

	/** Every run of the window's projects the person may pick, newest first, with its task's title. */
	const pickRun = async (
		title: string,
		accepts: (run: { id: string; task: string; status: string; decision?: string }, task: string) => boolean,
		none: string,
		extra: Array<vscode.QuickPickItem & { ref?: undefined; project?: string }> = [],
	): Promise<{ project: string; runId: string } | 'extra' | undefined> => {
		type Item = vscode.QuickPickItem & { ref?: { project: string; runId: string }; started?: string };
		const items: Item[] = [];
		const several = host.projects().length > 1;
		for (const project of host.projects()) {
			const overview = await desk.request(ListRuns, { project: project.name });
			for (const { task, runs } of [...overview.intents.flatMap((i) => i.tasks), ...overview.tasks]) {
				for (const run of runs.filter((r) => accepts(r, task.object_id))) {
					items.push({
						label: pickText(task.title),
						description: pickText(run.status + (run.decision ? ` · ${run.decision}` : '')),
						detail: `${several ? `${pickText(project.name)} · ` : ''}started ${run.started_at.slice(0, 16).replace('T', ' ')} · run ${run.id}`,
						ref: { project: project.name, runId: run.id },
						started: run.started_at,
					});
				}
			}
		}
		items.sort((a, b) => (b.started ?? '').localeCompare(a.started ?? ''));
		if (items.length === 0 && extra.length === 0) {
			void showInformationMessage(`Agent Desk: ${none}`);
			return undefined;
		}
		const picked = await vscode.window.showQuickPick<Item>([...extra, ...items], {
			title,
			matchOnDescription: true,
			matchOnDetail: true,
		});
		return picked ? (picked.ref ?? 'extra') : undefined;
	};

	/** The root a branch forks: the only one listed, else the one the person picks (main first). */
	const pickRoot = async (project: string, title: string): Promise<string | undefined> => {
		const { roots } = await desk.request(ListLineageRoots, { project });
		if (roots.length <= 1) {
			return roots[0]?.name ?? 'main';
		}
		const sorted = [...roots].sort((a, b) =>
			a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name.localeCompare(b.name),
		);
		const picked = await vscode.window.showQuickPick(
			sorted.map((r) => ({
				label: pickText(r.name),
				description: pickText(
					r.branches === 0 ? 'no branch yet' : `${plural(r.branches, 'branch')}${r.live ? `, ${r.live} working` : ''}`,
				),
				detail: r.about ? pickText(r.about) : undefined,
				name: r.name,
			})),
			{ title, placeHolder: 'Which root does the branch fork?' },
		);
		return picked?.name;
	};

	const askPrompt = (title: string) =>
		vscode.window.showInputBox({
			title,
			prompt:
				'What should the branch do? Its first line names it; it reports back to its starter once when its work ends.',
			placeHolder: 'e.g. Document the parser in docs/parser.md',
			ignoreFocusOut: true,
			validateInput: (v) =>
				v.trim() === '' ? 'Say what the branch should do.' : v.length > 64 * 1024 ? 'At most 64 KiB.' : undefined,
		});

	const started = async (project: string, prompt: string, result: BranchResult): Promise<void> => {
		host.refreshRuns(project);
		const name = oneLine(prompt, 80);
		const queued = result.queued
			? ' It waits for the shared checkout: it starts when the agent working there is done.'
			: '';
		const show = 'Show Run';
		const choice = await showInformationMessage(
			`Agent Desk: ${result.replayed ? 'already started' : 'started'} branch ‘${name}’ of root ${result.root}.${queued}`,
			show,
		);
		if (choice === show) {
			await host.openRun(project, result.run);
		}
	};

	/** Branch from Here on a run (the run's task starts it), or on a root (the person starts it). */
	const branchFromHere = async (first?: unknown, second?: unknown): Promise<void> => {
		const projects = host.projects();
		const onRoot = rootArg(first, undefined, projects);
		let ref: { project: string; runId: string } | 'extra' | undefined = onRoot
			? undefined
			: runArg(first, second, projects);
		if (!onRoot && !ref) {
			ref = await pickRun(
				'Branch from which run?',
				() => true,
				'No run yet: launch a ticket first, or start a branch on a root.',
				[{ label: '$(person) No run: start it yourself on a root', description: 'you are its starter' }],
			);
			if (!ref) {
				return;
			}
		}
		if (onRoot || ref === 'extra') {
			const project = onRoot?.project ?? (await pickProject(host.projects()))?.name;
			const root = onRoot?.root ?? (project ? await pickRoot(project, 'Branch from a root') : undefined);
			if (!project || !root) {
				return;
			}
			const prompt = await askPrompt(`Branch from root ${pickText(root)}`);
			if (!prompt?.trim()) {
				return;
			}
			const result = await vscode.window.withProgress(
				{ location: vscode.ProgressLocation.Notification, title: 'Agent Desk: starting the branch…' },
				() =>
					desk.requestOnce(PromptLineage, {
						project,
						root,
						prompt,
						settings: host.settings(projectPath(project)),
					}),
			);
			await started(project, prompt, result);
			return;
		}
		const { project, runId } = ref!;
		const detail = await desk.request(ShowRun, { project, id: runId });
		const root = await pickRoot(project, `Branch from ‘${pickText(oneLine(detail.task.title, 60))}’`);
		if (!root) {
			return;
		}
		const prompt = await askPrompt(
			`Branch from ‘${pickText(oneLine(detail.task.title, 60))}’ (root ${pickText(root)})`,
		);
		if (!prompt?.trim()) {
			return;
		}
		const repo = projectPath(project);
		if (!repo) {
			throw new Error('That names no project of this window.');
		}
		const result = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: 'Agent Desk: starting the branch…' },
			() =>
				desk.requestOnce(BranchFromRun, {
					project,
					repo,
					prompt,
					root,
					starterRun: runId,
					settings: host.settings(repo),
				}),
		);
		await started(project, prompt, result);
	};

	const newRoot = async (): Promise<void> => {
		const project = await pickProject(host.projects());
		if (!project) {
			return;
		}
		const name = await vscode.window.showInputBox({
			title: 'New Lineage Root',
			prompt: 'A name branches can fork besides main: lowercase letters, digits, dot, dash or underscore.',
			placeHolder: 'e.g. parser-rewrite',
			ignoreFocusOut: true,
			validateInput: (v) =>
				rootNamePattern.test(v)
					? undefined
					: 'Lowercase letters, digits, dot, dash or underscore; starting with a letter or digit; at most 64.',
		});
		if (!name) {
			return;
		}
		const about = await vscode.window.showInputBox({
			title: `New Lineage Root: ${name}`,
			prompt: 'What is it for? Optional: press Enter to go on without.',
			ignoreFocusOut: true,
		});
		if (about === undefined) {
			return;
		}
		const root = await desk.requestOnce(AddLineageRoot, {
			project: project.name,
			name,
			...(about.trim() ? { about: about.trim() } : {}),
		});
		host.refreshRuns(project.name);
		showStatusMessage(
			`Agent Desk: listed root ${root.name}. Branch from Here… can fork it; it becomes a tally when its first branch starts.`,
		);
	};

	/** The board of a node in an editor tab. */
	const openBoard = async (project: string, node: string, title: string): Promise<void> => {
		const document = await vscode.workspace.openTextDocument(boards.uri(project, node, title));
		await vscode.window.showTextDocument(document, { preview: true });
	};

	const answer = async (project: string, report: string, title?: string): Promise<void> => {
		const text = await vscode.window.showInputBox({
			title: `Answer Report${title ? `: ${pickText(oneLine(title, 60))}` : ''}`,
			prompt:
				'Your answer goes on the branch’s board. A report is answered once: the exchange with that branch ends here.',
			ignoreFocusOut: true,
			validateInput: (v) =>
				v.trim() === '' ? 'Write the answer.' : v.length > 4000 ? 'At most 4000 characters.' : undefined,
		});
		if (!text?.trim()) {
			return;
		}
		await desk.requestOnce(AnswerReport, { project, report, text });
		host.refreshRuns(project);
		boards.refresh(project);
		showStatusMessage(`Agent Desk: answered${title ? ` ‘${oneLine(title, 80)}’` : ' the report'}.`);
	};

	const continueWith = async (project: string, runId: string): Promise<void> => {
		const result = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: 'Agent Desk: starting a new run with the reports…' },
			() =>
				desk.requestOnce(ContinueWithReports, { project, run: runId, settings: host.settings(projectPath(project)) }),
		);
		host.refreshRuns(project);
		const show = 'Show Run';
		const choice = await showInformationMessage(
			`Agent Desk: a new run continues the task with ${plural(result.reports, 'report')} in its prompt.`,
			show,
		);
		if (choice === show) {
			await host.openRun(project, result.run);
		}
	};

	/** Unanswered reports delivered to starters in the window, for the palette's Answer Report…. */
	const pickReport = async (): Promise<{ project: string; report: string; title: string } | undefined> => {
		type Item = vscode.QuickPickItem & { project: string; message: BoardMessage; title: string };
		const items: Item[] = [];
		for (const project of host.projects()) {
			const tree = await desk.request(LineageTreeRequest, { project: project.name });
			const waiting = tree.roots.flatMap((r) => allBranches(r.branches)).filter((b) => b.board.unanswered > 0);
			const boardsRead = new Map<string, BoardMessage[]>();
			for (const branch of waiting) {
				const node = branch.node.starter_node ?? branch.node.node;
				if (!boardsRead.has(node)) {
					boardsRead.set(node, (await desk.request(ListBoard, { project: project.name, node })).messages);
				}
				for (const message of boardsRead.get(node)!) {
					const fromBranch = message.from_node === branch.node.node || message.node === branch.node.node;
					if (
						message.kind === 'report' &&
						!message.answered_by &&
						fromBranch &&
						!items.some((i) => i.message.id === message.id)
					) {
						items.push({
							label: pickText(oneLine(branch.title, 80)),
							description: pickText(branchStateWords[branch.state]),
							detail: pickText(oneLine(message.text, 160)),
							project: project.name,
							message,
							title: branch.title,
						});
					}
				}
			}
		}
		if (items.length === 0) {
			void showInformationMessage('Agent Desk: no report is waiting for an answer.');
			return undefined;
		}
		const picked = await vscode.window.showQuickPick(items, { title: 'Answer which report?', matchOnDetail: true });
		return picked && { project: picked.project, report: picked.message.id, title: picked.title };
	};

	/** The branches of the window's projects, for the palette's Post Note…. */
	const branchesOf = async (): Promise<Map<string, LineageBranch>> => {
		const byTask = new Map<string, LineageBranch>();
		for (const project of host.projects()) {
			const tree = await desk.request(LineageTreeRequest, { project: project.name });
			for (const branch of tree.roots.flatMap((r) => allBranches(r.branches))) {
				byTask.set(`${project.name}\n${branch.node.node}`, branch);
			}
		}
		return byTask;
	};

	const onReport = (params: NotificationParamsOf<typeof BoardDidReport>): void => {
		if (!host.projects().some((p) => p.name === params.project) || notified.has(params.report)) {
			return;
		}
		notified.add(params.report);
		host.refreshRuns(params.project);
		boards.refresh(params.project);
		const buttons = ['Open Report', 'Answer…', ...(params.starter_run ? ['Continue with Reports'] : [])];
		void showInformationMessage(reportMessage(params), ...buttons).then((choice) => {
			if (choice === 'Open Report') {
				void guarded(() => openBoard(params.project, params.branch, params.title))();
			} else if (choice === 'Answer…') {
				void guarded(() => answer(params.project, params.report, params.title))();
			} else if (choice === 'Continue with Reports' && params.starter_run) {
				void guarded(() => continueWith(params.project, params.starter_run!))();
			}
		});
	};
	/** Reports told in this window: a report is told once, even when the desk says it again after a restart. */
	const notified = new Set<string>();

	const disposables = [
		vscode.commands.registerCommand('agentDesk.branchFromHere', guarded(branchFromHere)),
		vscode.commands.registerCommand('agentDesk.newLineageRoot', guarded(newRoot)),
		vscode.commands.registerCommand(
			'agentDesk.answerReport',
			guarded(async (first?: unknown, second?: unknown) => {
				const ref: { project: string; report: string; title?: string } | undefined =
					reportArg(first, second, host.projects()) ?? (await pickReport());
				if (ref) {
					await answer(ref.project, ref.report, ref.title);
				}
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.postNote',
			guarded(async (first?: unknown, second?: unknown) => {
				let ref = runArg(first, second, host.projects());
				if (!ref) {
					const branches = await branchesOf();
					const picked = await pickRun(
						'Post a note from which branch run?',
						(_run, task) => [...branches.keys()].some((k) => k.endsWith(`\n${task}`)),
						'No run of a branch: Post Note… sends a one-way update from a branch to its starter.',
					);
					ref = picked === 'extra' ? undefined : picked;
				}
				if (!ref) {
					return;
				}
				const text = await vscode.window.showInputBox({
					title: 'Post Note',
					prompt: 'A one-way update to the branch’s starter: a passive note on its board (no notification).',
					ignoreFocusOut: true,
					validateInput: (v) =>
						v.trim() === '' ? 'Write the note.' : v.length > 4000 ? 'At most 4000 characters.' : undefined,
				});
				if (!text?.trim()) {
					return;
				}
				await desk.requestOnce(PostToBoard, { project: ref.project, run: ref.runId, text, kind: 'note' });
				host.refreshRuns(ref.project);
				boards.refresh(ref.project);
				showStatusMessage('Agent Desk: note posted to the starter’s board.');
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.continueWithReports',
			guarded(async (first?: unknown, second?: unknown) => {
				let ref = runArg(first, second, host.projects());
				if (!ref) {
					const starters = new Set<string>();
					for (const project of host.projects()) {
						const tree = await desk.request(LineageTreeRequest, { project: project.name });
						for (const [run, branches] of Object.entries(tree.by_starter_run)) {
							if (branches.length > 0) {
								starters.add(run);
							}
						}
					}
					const picked = await pickRun(
						'Continue which run with its reports?',
						(run) => starters.has(run.id),
						'No run started a branch: there is no report to continue with.',
					);
					ref = picked === 'extra' ? undefined : picked;
				}
				if (ref) {
					await continueWith(ref.project, ref.runId);
				}
			}),
		),
		vscode.commands.registerCommand(
			'agentDesk.openBoard',
			guarded(async (first?: unknown, second?: unknown) => {
				const projects = host.projects();
				const board = boardArg(first, projects);
				if (board) {
					const title = boardTitle(first) ?? board.node;
					await openBoard(board.project, board.node, title);
					return;
				}
				let ref = runArg(first, second, projects);
				if (!ref) {
					const picked = await pickRun('Open the board of which run’s task?', () => true, 'No run yet.');
					ref = picked === 'extra' ? undefined : picked;
				}
				if (ref) {
					const detail = await desk.request(ShowRun, { project: ref.project, id: ref.runId });
					await openBoard(ref.project, detail.task.object_id, detail.task.title);
				}
			}),
		),
	];
	return { disposables, onReport };
}

/** The title a row of the Runs view gives its board. */
function boardTitle(node: unknown): string | undefined {
	const n = node as { type?: string; title?: unknown; branch?: { title?: unknown }; root?: { name?: unknown } };
	const title = n.type === 'branch' ? n.branch?.title : n.type === 'root' ? `root ${String(n.root?.name)}` : n.title;
	return typeof title === 'string' ? title : undefined;
}
