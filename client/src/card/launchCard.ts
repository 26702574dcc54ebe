import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { visibleText } from '../common/markdownText';
import { showStatusMessage } from '../common/messages';
import {
	GetCard,
	LaunchGo,
	PlugAsset,
	SetTicket,
	SuggestAssets,
	UnplugAsset,
	type SuggestIndexProgress,
} from '../../../server/src/protocol/protocol';
import type { CardState, HostToWebview, WebviewToHost } from '../../../webview/src/messages';
import { DeskRequestError, type DeskClient } from '../common/deskClient';
import { cardState, runWith } from './cardState';

const viewType = 'agentDesk.launchCard';

/**
 * Launch cards in editor tabs, one per project. The webview only talks to this host, which relays
 * to the desk server; the draft lives in the project database, so a card survives a reload.
 */
export class LaunchCards implements vscode.Disposable {
	private readonly panels = new Map<
		string,
		{ panel: vscode.WebviewPanel; ready: boolean; launched?: CardState['launched'] }
	>();
	private readonly disposables: vscode.Disposable[] = [];

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly desk: DeskClient,
		/** The run settings Go sends for the project (the agentDesk.* settings of its folder). */
		private readonly settingsFor: (project: string) => Record<string, unknown>,
		private readonly reportError: (error: unknown) => void,
	) {
		this.disposables.push(
			vscode.window.registerWebviewPanelSerializer(viewType, {
				deserializeWebviewPanel: async (panel, state: unknown) => {
					const project = (state as { project?: unknown } | undefined)?.project;
					if (typeof project === 'string') {
						this.adopt(project, panel);
					} else {
						panel.dispose();
					}
				},
			}),
		);
	}

	open(project: string): void {
		const existing = this.panels.get(project);
		if (existing) {
			existing.panel.reveal();
			return;
		}
		const panel = vscode.window.createWebviewPanel(
			viewType,
			`Launch Card — ${visibleText(project)}`,
			vscode.ViewColumn.Active,
			{
				enableScripts: true,
				localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist')],
			},
		);
		this.adopt(project, panel);
	}

	/** Shows the card again (after a plug from the sidebar, or a change by another window). */
	async refresh(project: string): Promise<void> {
		const entry = this.panels.get(project);
		if (entry?.ready) {
			await this.send(project);
		}
	}

	/**
	 * The project's suggestion index changed (SuggestIndexDidChange): it grew, is complete, or took in
	 * what a walk of the members' folders found. The card asks again, so it shows the count while the
	 * index builds and, at the end, the full answer.
	 */
	async onIndexProgress(project: string, _progress: SuggestIndexProgress): Promise<void> {
		await this.refresh(project);
	}

	/** Shows every open card again (the run settings it names changed). */
	async refreshAll(): Promise<void> {
		await Promise.all([...this.panels.keys()].map((project) => this.refresh(project)));
	}

	dispose(): void {
		for (const { panel } of this.panels.values()) {
			panel.dispose();
		}
		this.disposables.forEach((d) => d.dispose());
	}

	private adopt(project: string, panel: vscode.WebviewPanel): void {
		panel.webview.options = {
			enableScripts: true,
			localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist')],
		};
		panel.webview.html = this.html(panel.webview);
		const entry = { panel, ready: false };
		this.panels.set(project, entry);
		panel.onDidDispose(() => this.panels.delete(project));
		panel.webview.onDidReceiveMessage((message: WebviewToHost) => void this.receive(project, message));
	}

	private async receive(project: string, message: WebviewToHost): Promise<void> {
		const entry = this.panels.get(project);
		if (!entry) {
			return;
		}
		try {
			switch (message.type) {
				case 'ready':
					entry.ready = true;
					break;
				case 'setTicket':
					await this.desk.request(SetTicket, { project, ticket: message.ticket });
					break;
				case 'keep':
					await this.desk.request(PlugAsset, { project, id: message.id, role: message.role });
					break;
				case 'unplug':
					await this.desk.request(UnplugAsset, { project, id: message.id });
					break;
				case 'go': {
					await this.send(project, { busy: true });
					const record = await this.desk.requestOnce(LaunchGo, { project, settings: this.settingsFor(project) });
					entry.launched = { runId: record.run, plugs: record.plugs.length };
					// The card says it too: the notification area stays for what needs the person.
					showStatusMessage(
						`$(rocket) Launched “${record.ticket.split('\n', 1)[0]!.replaceAll('$(', '$ (')}” with ${record.plugs.length} plug${record.plugs.length === 1 ? '' : 's'} frozen`,
					);
					break;
				}
			}
			await this.send(project);
		} catch (error) {
			// A refusal (a plug rule, an empty ticket) is shown on the card itself, in words.
			if (error instanceof DeskRequestError && error.deskError) {
				await this.send(project, { error: error.message });
			} else {
				this.reportError(error);
			}
		}
	}

	private async send(project: string, extra: Partial<CardState> = {}): Promise<void> {
		const entry = this.panels.get(project);
		if (!entry) {
			return;
		}
		const [view, suggested] = await Promise.all([
			this.desk.request(GetCard, { project }),
			this.desk.request(SuggestAssets, { project }),
		]);
		const state: CardState = {
			...cardState(project, view, suggested),
			runWith: runWith(this.settingsFor(project)),
			...(entry.launched ? { launched: entry.launched } : {}),
			...extra,
		};
		const message: HostToWebview = { type: 'state', state };
		await entry.panel.webview.postMessage(message);
	}

	private html(webview: vscode.Webview): string {
		const nonce = randomBytes(16).toString('base64');
		const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
		return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}'; style-src ${webview.cspSource} 'unsafe-inline'; font-src ${webview.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 20px 20px; max-width: 960px; }
h1 { font-size: 1.4em; font-weight: 600; } h2 { font-size: 1.05em; margin: 1.4em 0 0.4em; color: var(--vscode-descriptionForeground); text-transform: uppercase; letter-spacing: 0.04em; }
#ticket { width: 100%; }
.row { display: flex; align-items: center; gap: 10px; padding: 4px 0; border-bottom: 1px solid var(--vscode-panel-border); }
.row .name { font-weight: 600; min-width: 10em; } .row .reason { flex: 1; color: var(--vscode-descriptionForeground); }
.row .version, .row .changes { flex: 1; } .row .changes { color: var(--vscode-gitDecoration-modifiedResourceForeground); }
.muted { color: var(--vscode-descriptionForeground); }
.footer { display: flex; align-items: center; gap: 14px; margin-top: 18px; }
.error { color: var(--vscode-errorForeground); } .launched { color: var(--vscode-testing-iconPassed); }
</style></head><body><div id="app"></div><script nonce="${nonce}" src="${script}"></script></body></html>`;
	}
}
