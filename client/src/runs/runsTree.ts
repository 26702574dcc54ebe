import * as vscode from 'vscode';
import {
	LineageTreeRequest,
	ListBoard,
	ListRuns,
	ShowRun,
	type BoardMessage,
	type LineageTree,
	type RunDetail,
	type RunSummary,
	type RunsOverview,
} from '../../../server/src/protocol/protocol';
import type { WindowProject } from '../common/windowProjects';
import { ProjectTreeProvider, type ProjectNode } from '../common/projectTree';
import {
	allBranches,
	boardCounts,
	boardDescription,
	boardKindWords,
	boardLabel,
	boardTooltip,
	branchDescription,
	branchStateIcons,
	branchTooltip,
	hasLineage,
	isDeliveredReport,
	newestFirst,
	rootDescription,
	rootTooltip,
	withAnswers,
	type LineageBranch,
	type LineageTreeRoot,
} from '../lineage/lineageText';
import { argsSummary, callTree, splitToolCalls, type CallNode } from './runPage';
import {
	callUsageWords,
	followUpOf,
	intentDescription,
	intentTooltip,
	rollupNotes,
	rollupWords,
	runTooltip,
	runUsageWords,
} from './runTooltips';
import { formatDuration, intentState, runIcon, runState, runStatusText, type RunState } from './runWords';

type Overview = RunsOverview;
type IntentView = Overview['intents'][number];
type TaskView = IntentView['tasks'][number];
type Plan = IntentView['plans'][number];

/** Any row of the Runs view. */
export type RunsViewNode =
	| ProjectNode
	/** `followed`: the first line of the intent this one follows up (glossary: Follow-up). */
	| { type: 'intent'; project: string; view: IntentView; followed?: string }
	| { type: 'plan'; project: string; plan: Plan; latest: boolean }
	/** An intent's plan revisions before its latest, folded into one row when there are several (each run revises the plan). */
	| { type: 'earlierPlans'; project: string; intent: string; plans: Plan[] }
	/** A branch's task carries its lineage node: its row says the branch's state and its subtree's cost. */
	| { type: 'task'; project: string; view: TaskView; branch?: LineageBranch }
	/** `place`: the run's place among its task's runs, from 1, as its page and tab name it (0: not listed). */
	| { type: 'run'; project: string; run: RunSummary; title: string; place: number }
	/** The project's listed roots and their tallies (glossary: Lineage, Tally). */
	| { type: 'roots'; project: string; roots: LineageTreeRoot[] }
	| ({ type: 'root'; project: string } & LineageTreeRoot)
	/** A branch under its root (the Roots node), or under its starter run when its task is not in the overview. */
	| { type: 'branch'; project: string; branch: LineageBranch; where: 'roots' | 'run' }
	/** A run's task's board: reports, notes and answers, newest first. */
	| { type: 'board'; project: string; runId: string; node: string; title: string; messages: BoardMessage[] }
	| { type: 'message'; project: string; runId: string; message: BoardMessage }
	| { type: 'group'; project: string; runId: string; label: string; icon: string; children: RunsViewNode[] }
	| {
			type: 'leaf';
			project: string;
			runId: string;
			label: string;
			description?: string;
			icon: vscode.ThemeIcon;
			tooltip?: string;
			command?: vscode.Command;
			contextValue?: string;
			/** A call that started a subagent: the calls the subagent made. */
			children?: RunsViewNode[];
	  };

const taskIcons: Record<string, [string, string?]> = {
	draft: ['circle-large-outline'],
	running: ['loading~spin', 'charts.blue'],
	done: ['pass-filled', 'testing.iconPassed'],
	failed: ['error', 'testing.iconFailed'],
	cancelled: ['circle-slash', 'disabledForeground'],
};
const runIcons: Record<RunState, [string, string?]> = {
	running: ['sync~spin', 'charts.blue'],
	gate: ['eye', 'charts.yellow'],
	failed: ['error', 'testing.iconFailed'],
	decided: ['pass-filled', 'testing.iconPassed'],
};

function icon([name, color]: [string, string?]): vscode.ThemeIcon {
	return new vscode.ThemeIcon(name, color ? new vscode.ThemeColor(color) : undefined);
}

/**
 * The Runs view: per project, Intents (newest first) with their Plans and Tasks, each Task's Runs,
 * and under a Run its PatchSets, Evidence, Decision and tool calls. Selecting a Run opens its page.
 */
export class RunsTreeProvider extends ProjectTreeProvider<RunsViewNode> {
	/** Per project, the lineage as last read (undefined when it could not be read) and the overview's tasks by id. */
	private readonly lineage = new Map<string, { tree?: LineageTree; tasks: Map<string, TaskView> }>();
	/** Runs that never started are listed only when asked (glossary: Agent check). */
	private showNeverStarted = false;

	setShowNeverStarted(show: boolean): void {
		this.showNeverStarted = show;
		void vscode.commands.executeCommand('setContext', 'agentDesk.showNeverStarted', show);
		this.refresh();
	}

	protected projectNode(project: WindowProject): RunsViewNode {
		return { type: 'project', project };
	}

	protected async childrenOf(node: RunsViewNode): Promise<RunsViewNode[]> {
		switch (node.type) {
			case 'intent': {
				const [latest, ...earlier] = node.view.plans;
				const planRow = (plan: Plan, isLatest: boolean): RunsViewNode => ({
					type: 'plan',
					project: node.project,
					plan,
					latest: isLatest,
				});
				return [
					...(latest ? [planRow(latest, true)] : []),
					...(earlier.length > 1
						? [
								{
									type: 'earlierPlans',
									project: node.project,
									intent: node.view.intent.object_id,
									plans: earlier,
								} satisfies RunsViewNode,
							]
						: earlier.map((plan) => planRow(plan, false))),
					...node.view.tasks.map((view): RunsViewNode => ({ type: 'task', project: node.project, view })),
				];
			}
			case 'earlierPlans':
				return node.plans.map((plan): RunsViewNode => ({ type: 'plan', project: node.project, plan, latest: false }));
			case 'plan':
				return node.plan.steps.map((step, i) => {
					const status = step.statuses[step.statuses.length - 1]?.status ?? 'pending';
					return {
						type: 'leaf',
						project: node.project,
						runId: '',
						label: `${i + 1}. ${step.description}`,
						description: status,
						icon: new vscode.ThemeIcon(
							status === 'completed'
								? 'check'
								: status === 'failed'
									? 'error'
									: status === 'skipped'
										? 'debug-step-over'
										: status === 'progressing'
											? 'play'
											: 'circle-small',
						),
					};
				});
			case 'roots':
				return node.roots.map((root): RunsViewNode => ({ type: 'root', project: node.project, ...root }));
			case 'root':
				return node.branches.map((branch): RunsViewNode => ({
					type: 'branch',
					project: node.project,
					branch,
					where: 'roots',
				}));
			case 'branch':
				return node.branch.children.map((branch): RunsViewNode => ({
					type: 'branch',
					project: node.project,
					branch,
					where: node.where,
				}));
			case 'board':
				return newestFirst(node.messages).map((message): RunsViewNode => ({
					type: 'message',
					project: node.project,
					runId: node.runId,
					message,
				}));
			case 'task':
				return node.view.runs.map((run): RunsViewNode => ({
					type: 'run',
					project: node.project,
					run,
					title: node.view.task.title,
					place: (node.view.task.runs ?? []).indexOf(run.id) + 1,
				}));
			case 'run': {
				const [detail, board] = await Promise.all([
					this.desk.request(ShowRun, { project: node.project, id: node.run.id }),
					this.boardOf(node.project, node.run.task),
				]);
				return [
					...this.lineageChildren(node.project, node.run.id, node.title, board),
					...this.runChildren(node.project, detail),
				];
			}
			case 'group':
				return node.children;
			case 'leaf':
				return node.children ?? [];
			default:
				return [];
		}
	}

	protected makeTreeItem(node: RunsViewNode): vscode.TreeItem {
		switch (node.type) {
			case 'project': {
				const item = new vscode.TreeItem(node.project.name, vscode.TreeItemCollapsibleState.Expanded);
				item.iconPath = new vscode.ThemeIcon('project');
				return item;
			}
			case 'intent': {
				const { intent } = node.view;
				// The first line of the ticket names it; the tooltip has the whole of it.
				const item = new vscode.TreeItem(
					intent.prompt.trim().split('\n', 1)[0]!,
					vscode.TreeItemCollapsibleState.Expanded,
				);
				item.id = `${node.project}/intent/${intent.object_id}`;
				const shown = intentState(node.view);
				item.iconPath = icon(shown.icon);
				// Its tasks' runs' tokens and cost added up, and what makes the sum uncertain.
				item.description = [
					intentDescription(shown.words, node.followed),
					node.view.usage.runs > 0 ? rollupWords(node.view.usage) : '',
				]
					.filter(Boolean)
					.join(' · ');
				item.tooltip = new vscode.MarkdownString(intentTooltip(intent, node.view.status, node.followed));
				item.contextValue = `intent.${node.view.status}`;
				return item;
			}
			case 'earlierPlans': {
				const item = new vscode.TreeItem('Earlier plans', vscode.TreeItemCollapsibleState.Collapsed);
				item.id = `${node.project}/earlier-plans/${node.intent}`;
				item.iconPath = new vscode.ThemeIcon('history');
				item.description = `${node.plans.length} revisions`;
				item.accessibilityInformation = { label: `Earlier plans, ${item.description}` };
				item.tooltip =
					'The plan as it was before each later revision (the desk’s, then each run’s agent’s), newest first.';
				return item;
			}
			case 'plan': {
				const steps = node.plan.steps.length;
				const item = new vscode.TreeItem(
					node.latest ? 'Plan' : 'Earlier plan',
					steps > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
				);
				item.id = `${node.project}/plan/${node.plan.object_id}`;
				item.iconPath = new vscode.ThemeIcon(node.latest ? 'list-ordered' : 'history');
				item.description = `${steps} step${steps === 1 ? '' : 's'}`;
				return item;
			}
			case 'task': {
				const { task } = node.view;
				const item = new vscode.TreeItem(
					task.title,
					node.view.runs.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
				);
				item.id = `${node.project}/task/${task.object_id}`;
				// A running task whose runs have all stopped waits for the person: at the gate, or after a failure.
				const states = node.view.runs.map(runState);
				const stopped =
					task.status === 'running' && !states.includes('running')
						? states.includes('gate')
							? 'gate'
							: states.includes('failed')
								? 'failed'
								: undefined
						: undefined;
				// A task continued after it was done (Continue with Reports) keeps its status while its newest
				// run works or waits at the gate: the row says what that run does.
				const newest = [...node.view.runs].sort((a, b) => b.started_at.localeCompare(a.started_at))[0];
				const newestState = newest && runState(newest);
				const waiting =
					task.status !== 'running' && (newestState === 'running' || newestState === 'gate') ? newestState : stopped;
				if (node.branch) {
					// A branch: its state in lineage words (queued ones wait for the checkout) and its subtree's tokens and cost.
					item.iconPath = icon(branchStateIcons[node.branch.state]);
					// The lineage's words, and what makes its subtree's sum uncertain (an estimate, usage incomplete).
					const notes = node.view.subtree_usage ? rollupNotes(node.view.subtree_usage) : '';
					item.description = `branch · ${branchDescription(node.branch)}${notes ? ` (${notes})` : ''}`;
					item.tooltip = new vscode.MarkdownString(branchTooltip(node.branch));
					item.contextValue = 'task.branch';
					item.accessibilityInformation = { label: `Branch ${task.title}, ${item.description}` };
					return item;
				}
				// A task still running with no run working, waiting or failed (its newest checkpointed, say) shows that run's end, never a spinner.
				item.iconPath = icon(
					waiting
						? runIcons[waiting]
						: task.status === 'running' && newest
							? runIcon(newest)
							: (taskIcons[task.status] ?? ['circle-large-outline']),
				);
				// Its runs' usage added up; a task whose runs started branches, its lineage subtree's too.
				const subtree = node.view.subtree_usage;
				const withBranches =
					subtree && subtree.runs > node.view.usage.runs ? ` · with its branches: ${rollupWords(subtree)}` : '';
				item.description = `${waiting === 'gate' ? 'waiting for review' : waiting === 'failed' ? 'run failed: retry or abandon' : waiting === 'running' ? 'running' : task.status}${task.goal ? ` · ${typeof task.goal === 'string' ? task.goal : task.goal.other}` : ''} · ${rollupWords(node.view.usage)}${withBranches}`;
				item.contextValue = `task.${task.status}`;
				return item;
			}
			case 'run':
				return runItem(node, this.runRole(node.project, node.run));
			case 'roots': {
				const item = new vscode.TreeItem('Roots', vscode.TreeItemCollapsibleState.Expanded);
				item.id = `${node.project}/roots`;
				item.iconPath = new vscode.ThemeIcon('type-hierarchy-sub');
				const branches = node.roots.reduce((n, r) => n + allBranches(r.branches).length, 0);
				item.description = `${node.roots.length} root${node.roots.length === 1 ? '' : 's'} · ${branches} branch${branches === 1 ? '' : 'es'}`;
				item.tooltip =
					'The roots branches fork (main is always listed), each a tally once its first branch started: it runs no model turns, it records what its branches intend, do and land.';
				item.accessibilityInformation = { label: `Roots, ${item.description}` };
				return item;
			}
			case 'root': {
				const item = new vscode.TreeItem(
					node.root.name,
					node.branches.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
				);
				// A root's first branch gives it a new id: the workbench keeps the folded state of a row it knew
				// without children, so the root would stay folded over its branch.
				item.id = `${node.project}/lineage-root/${node.root.name}${node.branches.length ? '' : '/empty'}`;
				item.iconPath = new vscode.ThemeIcon(node.tally ? 'git-merge' : 'git-branch');
				item.description = rootDescription(node);
				item.tooltip = new vscode.MarkdownString(rootTooltip(node.root));
				item.contextValue = node.tally ? 'lineageRoot.tally' : 'lineageRoot';
				item.accessibilityInformation = { label: `Root ${node.root.name}, ${item.description}` };
				return item;
			}
			case 'branch': {
				const { branch } = node;
				const item = new vscode.TreeItem(
					branch.title,
					branch.children.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
				);
				item.id = `${node.project}/${node.where}-branch/${branch.node.node}`;
				item.iconPath = icon(branchStateIcons[branch.state]);
				item.description = branchDescription(branch);
				item.tooltip = new vscode.MarkdownString(branchTooltip(branch));
				const last = branch.runs[branch.runs.length - 1];
				if (last) {
					item.command = { command: 'agentDesk.openRun', title: 'Open Run', arguments: [node.project, last.id] };
				}
				item.contextValue = 'lineageBranch';
				item.accessibilityInformation = { label: `Branch ${branch.title}, ${item.description}` };
				return item;
			}
			case 'board': {
				const item = new vscode.TreeItem('Board', vscode.TreeItemCollapsibleState.Collapsed);
				item.id = `${node.project}/board/${node.runId}`;
				item.iconPath = new vscode.ThemeIcon('comment-discussion');
				const waiting = node.messages.filter((m) => isDeliveredReport(m) && !m.answered_by).length;
				item.description = `${boardCounts(node.messages)}${waiting ? ` · ${waiting} to answer` : ''}`;
				item.tooltip = `The board of “${node.title}”: the reports of the branches it started and its own, notes and answers, newest first.`;
				item.accessibilityInformation = { label: `Board, ${item.description}` };
				item.contextValue = 'board';
				return item;
			}
			case 'message': {
				const { message } = node;
				const item = new vscode.TreeItem(boardLabel(message), vscode.TreeItemCollapsibleState.None);
				item.id = `${node.project}/board/${node.runId}/${message.id}`;
				item.iconPath = new vscode.ThemeIcon(
					boardKindWords[message.kind]?.icon ?? 'circle-small',
					message.kind === 'report' && !message.passive ? new vscode.ThemeColor('charts.yellow') : undefined,
				);
				item.description = boardDescription(message);
				item.tooltip = new vscode.MarkdownString(boardTooltip(message));
				const waiting = isDeliveredReport(message) && !message.answered_by;
				// board.<kind>[.unanswered]: the menus offer Answer Report… on a report delivered here and not answered.
				item.contextValue = `board.${message.kind}${waiting ? '.unanswered' : ''}`;
				item.command = {
					command: 'agentDesk.openBoard',
					title: 'Open Board',
					arguments: [{ type: 'board', project: node.project, runId: node.runId, node: message.node }],
				};
				item.accessibilityInformation = { label: [item.label as string, item.description].join(', ') };
				return item;
			}
			case 'group': {
				// The branches a run started are what one looks for under it; the tool calls are looked up.
				const item = new vscode.TreeItem(
					node.label,
					node.label === 'Branches'
						? vscode.TreeItemCollapsibleState.Expanded
						: vscode.TreeItemCollapsibleState.Collapsed,
				);
				item.id = `${node.project}/${node.runId}/${node.label}`;
				item.iconPath = new vscode.ThemeIcon(node.icon);
				item.description = String(node.children.length);
				item.accessibilityInformation = { label: `${node.label}, ${node.children.length}` };
				return item;
			}
			case 'leaf': {
				const item = new vscode.TreeItem(
					node.label,
					node.children?.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
				);
				item.iconPath = node.icon;
				item.description = node.description;
				item.tooltip = node.tooltip;
				item.command = node.command;
				item.contextValue = node.contextValue;
				// Without this a string tooltip would become what a screen reader says.
				item.accessibilityInformation = { label: [node.label, node.description].filter(Boolean).join(', ') };
				return item;
			}
		}
	}

	protected async projectChildren(project: WindowProject): Promise<RunsViewNode[]> {
		const [overview, tree] = await Promise.all([
			this.desk.request(ListRuns, { project: project.name, ...(this.showNeverStarted ? { all: true } : {}) }),
			this.readLineage(project.name),
		]);
		const tasks = new Map<string, TaskView>();
		for (const view of [...overview.intents.flatMap((i) => i.tasks), ...overview.tasks]) {
			tasks.set(view.task.object_id, view);
		}
		this.lineage.set(project.name, { tree, tasks });
		// Branches started by a run the view lists are nested under that run, not listed again at the top.
		const runs = new Set([...tasks.values()].flatMap((t) => t.runs.map((r) => r.id)));
		const nested = new Set<string>();
		for (const root of tree?.roots ?? []) {
			if (root.tally) {
				nested.add(root.tally);
			}
			for (const branch of allBranches(root.branches)) {
				if (branch.node.starter_run && runs.has(branch.node.starter_run)) {
					nested.add(branch.node.node);
				}
			}
		}
		const branchOf = (taskId: string) => (tree ? this.branchOf(tree, taskId) : undefined);
		const taskNode = (view: TaskView): RunsViewNode => ({
			type: 'task',
			project: project.name,
			view,
			branch: branchOf(view.task.object_id),
		});
		return [
			...(tree && hasLineage(tree) ? [{ type: 'roots' as const, project: project.name, roots: tree.roots }] : []),
			...overview.intents
				.filter((i) => i.tasks.length === 0 || !i.tasks.every((t) => nested.has(t.task.object_id)))
				.map((view): RunsViewNode => {
					const followed = followUpOf(view.intent, overview.intents);
					return { type: 'intent', project: project.name, view, ...(followed !== undefined ? { followed } : {}) };
				}),
			...overview.tasks.filter((t) => !nested.has(t.task.object_id)).map(taskNode),
		];
	}

	/** The project's lineage; undefined (and logged) when the desk could not say, so the runs still show. */
	private async readLineage(project: string): Promise<LineageTree | undefined> {
		try {
			return await this.desk.request(LineageTreeRequest, { project });
		} catch (error) {
			this.desk.output.warn(`the lineage of ${project} could not be read: ${(error as Error).message}`);
			return undefined;
		}
	}

	private branchOf(tree: LineageTree, taskId: string): LineageBranch | undefined {
		for (const root of tree.roots) {
			const found = allBranches(root.branches).find((b) => b.node.node === taskId);
			if (found) {
				return found;
			}
		}
		return undefined;
	}

	/** Whether a run's task is a branch, and whether the run started branches (the menus offer Post Note… and Continue with Reports by it). */
	private runRole(project: string, run: RunSummary): { branch: boolean; starter: boolean } {
		const tree = this.lineage.get(project)?.tree;
		return {
			branch: tree !== undefined && this.branchOf(tree, run.task) !== undefined,
			starter: (tree?.by_starter_run[run.id]?.length ?? 0) > 0,
		};
	}

	/** A task's board, when it takes part in a lineage (a branch, or the starter of one); else none, without asking. */
	private async boardOf(project: string, taskId: string): Promise<BoardMessage[]> {
		const tree = this.lineage.get(project)?.tree;
		if (!tree) {
			return [];
		}
		const branches = tree.roots.flatMap((r) => allBranches(r.branches));
		if (!branches.some((b) => b.node.node === taskId || b.node.starter_node === taskId)) {
			return [];
		}
		try {
			return withAnswers((await this.desk.request(ListBoard, { project, node: taskId })).messages, tree);
		} catch (error) {
			this.desk.output.warn(`the board of task ${taskId} could not be read: ${(error as Error).message}`);
			return [];
		}
	}

	/** Under a run: the branches it started (their tasks, with their runs) and its task's board. */
	private lineageChildren(project: string, runId: string, title: string, board: BoardMessage[]): RunsViewNode[] {
		const known = this.lineage.get(project);
		const nodes: RunsViewNode[] = [];
		const started = known?.tree?.by_starter_run[runId] ?? [];
		if (known?.tree && started.length > 0) {
			const children = started
				.map((id) => this.branchOf(known.tree!, id))
				.filter((b): b is LineageBranch => b !== undefined)
				.map((branch): RunsViewNode => {
					const view = known.tasks.get(branch.node.node);
					return view ? { type: 'task', project, view, branch } : { type: 'branch', project, branch, where: 'run' };
				});
			nodes.push({ type: 'group', project, runId, label: 'Branches', icon: 'type-hierarchy-sub', children });
		}
		if (board.length > 0) {
			nodes.push({ type: 'board', project, runId, node: board[0]!.node, title, messages: board });
		}
		return nodes;
	}

	private runChildren(project: string, detail: RunDetail): RunsViewNode[] {
		const runId = detail.run.object_id;
		const nodes: RunsViewNode[] = [];
		for (const [index, patchset] of detail.patchsets.entries()) {
			const added = patchset.touched.reduce((n, f) => n + f.lines_added, 0);
			const deleted = patchset.touched.reduce((n, f) => n + f.lines_deleted, 0);
			nodes.push({
				type: 'leaf',
				project,
				runId,
				label: `PatchSet ${index + 1}: ${patchset.touched.map((f) => f.path).join(', ') || 'no files'}`,
				description: `${patchset.apply_status} · +${added} −${deleted}`,
				icon: new vscode.ThemeIcon(
					'diff',
					new vscode.ThemeColor(
						patchset.apply_status === 'applied'
							? 'testing.iconPassed'
							: patchset.apply_status === 'rejected'
								? 'testing.iconFailed'
								: 'charts.yellow',
					),
				),
				tooltip: patchset.rationale,
				command: {
					command: 'agentDesk.openPatchSet',
					title: 'Open PatchSet',
					arguments: [project, runId, patchset.object_id],
				},
				contextValue: 'patchset',
			});
		}
		for (const evidence of detail.evidence) {
			const kind = typeof evidence.kind === 'string' ? evidence.kind : evidence.kind.other;
			const passed = evidence.exit_code === 0;
			nodes.push({
				type: 'leaf',
				project,
				runId,
				label: `${kind}: ${evidence.tool}`,
				description: `${evidence.exit_code === undefined ? 'no exit code' : `exit ${evidence.exit_code}`}${evidence.summary ? ` · ${evidence.summary}` : ''}`,
				icon: new vscode.ThemeIcon(
					passed ? 'pass' : 'error',
					new vscode.ThemeColor(passed ? 'testing.iconPassed' : 'testing.iconFailed'),
				),
				tooltip: evidence.command,
				// Its whole log opens in a tab.
				...(evidence.report_artifacts[0]
					? {
							command: {
								command: 'agentDesk.openRunText',
								title: 'Open Log',
								arguments: [project, runId, { evidence: evidence.object_id }],
							},
						}
					: {}),
			});
		}
		if (detail.decision) {
			nodes.push({
				type: 'leaf',
				project,
				runId,
				label: `Decision: ${detail.decision.decision_type}`,
				description: detail.decision.rationale,
				icon: new vscode.ThemeIcon('law'),
				tooltip: detail.decision.result_commit_sha ? `Result commit ${detail.decision.result_commit_sha}` : undefined,
			});
		}
		const calls = splitToolCalls(detail.tool_invocations);
		if (calls.desk.length > 0) {
			nodes.push({
				type: 'group',
				project,
				runId,
				label: 'Desk tool calls',
				icon: 'plug',
				children: calls.desk.map((call): RunsViewNode => ({
					type: 'leaf',
					project,
					runId,
					label: call.tool_name,
					description: [call.status, argsSummary(call.args, 80)].filter(Boolean).join(' · '),
					icon: new vscode.ThemeIcon(call.status === 'ok' ? 'plug' : 'error'),
					tooltip: [
						argsSummary(call.args, 400),
						call.result_summary,
						call.external_ids?.tool_use_id ? `agent's call id ${call.external_ids.tool_use_id}` : '',
					]
						.filter(Boolean)
						.join('\n'),
				})),
			});
		}
		if (calls.own.length > 0) {
			// A subagent's calls under the call that started it (callTree), which says what the subagent spent.
			const callNode = ({ call, children }: CallNode): RunsViewNode => {
				const read = call.io_footprint?.paths_read ?? [];
				const written = call.io_footprint?.paths_written ?? [];
				const files = [
					read.length ? `read ${read.join(', ')}` : '',
					written.length ? `wrote ${written.join(', ')}` : '',
				]
					.filter(Boolean)
					.join(' · ');
				return {
					type: 'leaf',
					project,
					runId,
					label: call.tool_name,
					description: [
						call.status,
						children.length > 0 ? `subagent: ${children.length} call${children.length === 1 ? '' : 's'}` : '',
						call.token_usage ? callUsageWords(call.token_usage) : '',
						files,
					]
						.filter(Boolean)
						.join(' · '),
					icon: new vscode.ThemeIcon(
						call.status !== 'ok' ? 'error' : children.length > 0 ? 'type-hierarchy-sub' : 'symbol-event',
					),
					tooltip: call.result_summary,
					// Its output (else its input) opens in a tab.
					command: {
						command: 'agentDesk.openRunText',
						title: 'Open Output',
						arguments: [project, runId, { call: call.object_id, part: call.artifacts.length > 0 ? 'output' : 'input' }],
					},
					...(children.length > 0 ? { children: children.map(callNode) } : {}),
				};
			};
			nodes.push({
				type: 'group',
				project,
				runId,
				label: 'Tool calls',
				icon: 'tools',
				children: callTree(calls.own).map(callNode),
			});
		}
		return nodes;
	}
}

function runItem(
	node: Extract<RunsViewNode, { type: 'run' }>,
	role: { branch: boolean; starter: boolean },
): vscode.TreeItem {
	const { run } = node;
	// Named as its page and tab name it (Run 2), with when it started.
	const started = run.started_at.slice(0, 16).replace('T', ' ');
	const item = new vscode.TreeItem(
		node.place > 0 ? `Run ${node.place} · ${started}` : `Run ${started}`,
		vscode.TreeItemCollapsibleState.Collapsed,
	);
	item.id = `${node.project}/run/${run.id}`;
	const state = runState(run);
	item.iconPath = icon(runIcon(run));
	const parts = [
		runStatusText(run),
		run.duration_ms !== undefined ? formatDuration(run.duration_ms) : '',
		// The desk records the model as 'unknown' until the agent names it: no word rather than that one.
		run.model && run.model !== 'unknown' ? run.model : '',
		runUsageWords(run),
	];
	item.description = parts.filter(Boolean).join(' · ');
	item.tooltip = new vscode.MarkdownString(runTooltip(run, node.title), true);
	item.command = { command: 'agentDesk.openRun', title: 'Open Run', arguments: [node.project, run.id] };
	// run.<state>.<patch|nopatch>[.branch][.starter][.landed|.checkpointed]: the Runs view's menus offer
	// the gate's decisions, Post Note… (a branch's run), Continue with Reports (a run that started
	// branches), Rollback… (landed, not rolled back) and Resume from Checkpoint (not resumed) by it.
	const followUp =
		run.decision === 'commit' && !run.rolled_back_by
			? '.landed'
			: run.decision === 'checkpoint' && !run.resumed_by
				? '.checkpointed'
				: '';
	item.contextValue = `run.${state}.${run.patchsets > 0 ? 'patch' : 'nopatch'}${role.branch ? '.branch' : ''}${role.starter ? '.starter' : ''}${followUp}`;
	item.accessibilityInformation = { label: `Run, ${item.description}` };
	return item;
}
