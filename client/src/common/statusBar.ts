import * as vscode from 'vscode';
import { visibleText } from './markdownText';
import type { DeskState } from './deskClient';

/** The desk's state in the status bar: starting, ready, or an error that opens the log on click. */
export class DeskStatusBar implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('agentDesk.status', vscode.StatusBarAlignment.Left, 10);

	constructor() {
		this.item.name = 'Agent Desk';
		this.item.command = 'agentDesk.showLog';
		this.show('starting');
		this.item.show();
	}

	show(state: DeskState, shownDetail?: string): void {
		// The detail can carry a name or an error message from the server: shown inert.
		const detail = shownDetail === undefined ? undefined : visibleText(shownDetail);
		switch (state) {
			case 'starting':
				this.item.text = '$(loading~spin) Desk';
				this.item.tooltip = 'Agent Desk: the desk server is starting';
				this.item.backgroundColor = undefined;
				break;
			case 'ready':
				this.item.text = '$(layers) Desk';
				this.item.tooltip = `Agent Desk: ready${detail ? `\n${detail}` : ''}\nClick to open the log`;
				this.item.backgroundColor = undefined;
				break;
			case 'error':
			case 'stopped':
				this.item.text = '$(error) Desk';
				this.item.tooltip = `Agent Desk: ${state === 'error' ? 'error' : 'stopped'}${detail ? ` — ${detail}` : ''}\nClick to open the log`;
				this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
				break;
		}
		this.item.accessibilityInformation = { label: `Agent Desk ${state}` };
	}

	dispose(): void {
		this.item.dispose();
	}
}
