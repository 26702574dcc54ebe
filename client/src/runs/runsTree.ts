import * as vscode from 'vscode';
import {
	ListRuns,
	ShowRun,
	type RunDetail,
	type RunSummary,
	type RunsOverview,
} from '../../../server/src/protocol/protocol';
import type { WindowProject } from '../common/windowProjects';
import { ProjectTreeProvider, type ProjectNode } from '../common/projectTree';
import { argsSummary, splitToolCalls } from './runPage';
import { intentTooltip, runTooltip } from './runTooltips';
import { formatDuration, runState, runStatusText, type RunState } from './runWords';

type Overview = RunsOverview;
type IntentView = Overview['intents'][number];
type TaskView = IntentView['tasks'][number];
type Plan = IntentView['plans'][number];

/** Any row of the Runs view. */
export type RunsViewNode =
	| ProjectNode
	| { type: 'intent'; project: string; view: IntentView }
	| { type: 'plan'; project: string; plan: Plan; latest: boolean }
	| { type: 'task'; project: string; view: TaskView }
	| { type: 'run'; project: string; run: RunSummary; title: string }
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
	  };

const intentIcons: Record<string, [string, string?]> = {
	draft: ['circle-large-outline'],
	active: ['sync', 'charts.blue'],
	completed: ['pass-filled', 'testing.iconPassed'],
	cancelled: ['circle-slash', 'disabledForeground'],
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
	protected projectNode(project: WindowProject): RunsViewNode {
		return { type: 'project', project };
	}

	protected async childrenOf(node: RunsViewNode): Promise<RunsViewNode[]> {
		switch (node.type) {
			case 'intent':
				return [
					...node.view.plans.map((plan, i): RunsViewNode => ({
						type: 'plan',
						project: node.project,
						plan,
						latest: i === 0,
					})),
					...node.view.tasks.map((view): RunsViewNode => ({ type: 'task', project: node.project, view })),
				];
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
			case 'task':
				return node.view.runs.map((run): RunsViewNode => ({
					type: 'run',
					project: node.project,
					run,
					title: node.view.task.title,
				}));
			case 'run':
				return this.runChildren(
					node.project,
					await this.desk.request(ShowRun, { project: node.project, id: node.run.id }),
				);
			case 'group':
				return node.children;
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
				item.iconPath = icon(intentIcons[node.view.status] ?? ['circle-large-outline']);
				item.description = node.view.status;
				item.tooltip = new vscode.MarkdownString(intentTooltip(intent, node.view.status));
				item.contextValue = 'intent';
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
				item.description = `${steps} step${steps === 1 ? '' : 's'}${node.plan.fwindow ? ` · frames ${node.plan.fwindow[0]}–${node.plan.fwindow[1]}` : ''}`;
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
				const waiting =
					task.status === 'running' && !states.includes('running')
						? states.includes('gate')
							? 'gate'
							: states.includes('failed')
								? 'failed'
								: undefined
						: undefined;
				item.iconPath = icon(waiting ? runIcons[waiting] : (taskIcons[task.status] ?? ['circle-large-outline']));
				item.description = `${waiting === 'gate' ? 'waiting for review' : waiting === 'failed' ? 'run failed: retry or abandon' : task.status}${task.goal ? ` · ${typeof task.goal === 'string' ? task.goal : task.goal.other}` : ''} · ${node.view.runs.length} run${node.view.runs.length === 1 ? '' : 's'}`;
				item.contextValue = 'task';
				return item;
			}
			case 'run':
				return runItem(node);
			case 'group': {
				const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Collapsed);
				item.id = `${node.project}/${node.runId}/${node.label}`;
				item.iconPath = new vscode.ThemeIcon(node.icon);
				item.description = String(node.children.length);
				return item;
			}
			case 'leaf': {
				const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
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
		const overview = await this.desk.request(ListRuns, { project: project.name });
		return [
			...overview.intents.map((view): RunsViewNode => ({ type: 'intent', project: project.name, view })),
			...overview.tasks.map((view): RunsViewNode => ({ type: 'task', project: project.name, view })),
		];
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
			nodes.push({
				type: 'group',
				project,
				runId,
				label: 'Tool calls',
				icon: 'tools',
				children: calls.own.map((call) => {
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
						description: [call.status, files].filter(Boolean).join(' · '),
						icon: new vscode.ThemeIcon(call.status === 'ok' ? 'symbol-event' : 'error'),
						tooltip: call.result_summary,
					};
				}),
			});
		}
		return nodes;
	}
}

function runItem(node: Extract<RunsViewNode, { type: 'run' }>): vscode.TreeItem {
	const { run } = node;
	const item = new vscode.TreeItem(
		`Run ${run.started_at.slice(0, 16).replace('T', ' ')}`,
		vscode.TreeItemCollapsibleState.Collapsed,
	);
	item.id = `${node.project}/run/${run.id}`;
	const state = runState(run);
	item.iconPath = icon(state === 'decided' && run.status === 'failed' ? runIcons.failed : runIcons[state]);
	const parts = [
		runStatusText(run),
		run.duration_ms !== undefined ? formatDuration(run.duration_ms) : '',
		run.model ?? '',
		run.total_tokens !== undefined ? `${run.total_tokens.toLocaleString('en-US')} tokens` : '',
		run.cost_usd !== undefined ? `$${run.cost_usd.toFixed(4)}` : '',
	];
	item.description = parts.filter(Boolean).join(' · ');
	item.tooltip = new vscode.MarkdownString(runTooltip(run, node.title), true);
	item.command = { command: 'agentDesk.openRun', title: 'Open Run', arguments: [node.project, run.id] };
	// run.<state>.<patch|nopatch>: the Runs view's menus offer the gate's decisions by it.
	item.contextValue = `run.${state}.${run.patchsets > 0 ? 'patch' : 'nopatch'}`;
	item.accessibilityInformation = { label: `Run, ${item.description}` };
	return item;
}
