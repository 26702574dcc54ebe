import * as vscode from 'vscode';
import { ListRuns, type RunSummary } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import type { WindowProject } from '../common/windowProjects';
import { runState, waitingText } from './runWords';

/**
 * The runs that wait for the person at the gate, where a glance finds them: a badge with their count on
 * the Agent Desk entry of the activity bar (the Runs view's badge) and a status bar item that opens
 * the review. A notification can be dismissed or time out; these stay until the run is decided.
 * Counted again whenever the runs of a project change, from the server's list (not the Runs view's
 * rows, which are read only while the view is open).
 */
export class WaitingRuns implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('agentDesk.waitingRuns', vscode.StatusBarAlignment.Left, 9);
	private timer: NodeJS.Timeout | undefined;
	private counting = Promise.resolve();

	constructor(
		private readonly desk: DeskClient,
		private readonly view: vscode.TreeView<unknown>,
		private readonly projects: () => readonly WindowProject[],
		private readonly onError: (error: unknown) => void,
	) {
		this.item.name = 'Agent Desk: runs waiting for review';
		this.item.command = 'agentDesk.reviewWaitingRun';
		this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
	}

	/** Counts again soon: changes come in bursts (a run's every step is a change). */
	refresh(): void {
		clearTimeout(this.timer);
		this.timer = setTimeout(() => {
			this.counting = this.counting.then(() => this.count()).catch((error: unknown) => this.onError(error));
		}, 250);
	}

	private async count(): Promise<void> {
		const waiting: RunSummary[] = [];
		for (const project of this.projects()) {
			const overview = await this.desk.request(ListRuns, { project: project.name });
			for (const { runs } of [...overview.intents.flatMap((i) => i.tasks), ...overview.tasks]) {
				waiting.push(...runs.filter((run) => runState(run) === 'gate'));
			}
		}
		const text = waitingText(waiting.length);
		this.view.badge = text ? { value: waiting.length, tooltip: text.tooltip } : undefined;
		if (text) {
			this.item.text = text.status;
			this.item.tooltip = `${text.tooltip}: click to review`;
			this.item.accessibilityInformation = { label: text.tooltip };
			this.item.show();
		} else {
			this.item.hide();
		}
	}

	dispose(): void {
		clearTimeout(this.timer);
		this.item.dispose();
	}
}
