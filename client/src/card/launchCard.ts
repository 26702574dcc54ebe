import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { visibleText } from '../common/markdownText';
import { showStatusMessage } from '../common/messages';
import {
	CheckAgents,
	GetCard,
	LaunchGo,
	PlugAsset,
	SetTicket,
	SuggestAssets,
	UnplugAsset,
	type AgentFix,
	type RunFinishedParams,
	type SuggestIndexProgress,
} from '../../../server/src/protocol/protocol';
import type { AgentStatusView, CardState, HostToWebview, WebviewToHost } from '../../../webview/src/messages';
import { applyAgentFix } from '../common/agentFixes';
import { DeskRequestError, type DeskClient } from '../common/deskClient';
import { agentStatus, cardState, runWith } from './cardState';

const viewType = 'agentDesk.launchCard';

/** A card that comes to the front asks again when its last check is older than this (the person may have signed in). */
const recheckAfterMs = 3_000;

interface CardPanel {
	panel: vscode.WebviewPanel;
	ready: boolean;
	launched?: CardState['launched'];
	/** The agent check as the card shows it, its fixes, and when it was made (glossary: Agent check). */
	agent?: AgentStatusView;
	fixes: AgentFix[];
	checkedAt?: number;
}

/**
 * Launch cards in editor tabs, one per project. The webview only talks to this host, which relays
 * to the desk server; the draft lives in the project database, so a card survives a reload.
 */
export class LaunchCards implements vscode.Disposable {
	private readonly panels = new Map<string, CardPanel>();
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

	/** Shows every open card again (the run settings it names changed), with its agent checked again. */
	async refreshAll(): Promise<void> {
		await Promise.all([...this.panels.keys()].map((project) => this.refresh(project)));
		this.checkAgents(false);
	}

	/** Every open card checks its agent again (glossary: Agent check). */
	checkAgents(fresh: boolean): void {
		for (const project of this.panels.keys()) {
			void this.checkAgent(project, fresh);
		}
	}

	/**
	 * A run ended. One whose agent never started (glossary: Agent check): the card that launched it
	 * says so in place of "Launched", with Retry, and every card looks at its agent again, so it says
	 * why before the next Go.
	 */
	onRunFinished(params: RunFinishedParams): void {
		if (!params.never_started) {
			return;
		}
		const entry = this.panels.get(params.project);
		if (entry?.launched?.runId === params.run) {
			entry.launched = {
				...entry.launched,
				notStarted: visibleText(params.error ?? 'it stopped before doing anything'),
			};
		}
		this.checkAgents(true);
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
		const entry: CardPanel = { panel, ready: false, fixes: [] };
		this.panels.set(project, entry);
		panel.onDidDispose(() => this.panels.delete(project));
		// Back to the card after a sign-in elsewhere: the agent is looked at again.
		panel.onDidChangeViewState(({ webviewPanel }) => {
			if (webviewPanel.active && entry.ready && Date.now() - (entry.checkedAt ?? 0) > recheckAfterMs) {
				void this.checkAgent(project, true);
			}
		});
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
					void this.checkAgent(project, false);
					break;
				case 'checkAgent':
					await this.checkAgent(project, true);
					return;
				case 'retryLaunched': {
					const runId = entry.launched?.runId;
					if (runId) {
						entry.launched = undefined;
						await this.send(project);
						await vscode.commands.executeCommand('agentDesk.retryRun', project, runId);
					}
					return;
				}
				case 'fixAgent': {
					const fix = entry.fixes[message.index];
					if (fix) {
						// Once its terminal closes (the sign-in or install succeeded), the card looks again.
						void applyAgentFix(fix).closed?.then(() => this.checkAgent(project, true));
					}
					return;
				}
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
						`Launched “${record.ticket.split('\n', 1)[0]!}” with ${record.plugs.length} plug${record.plugs.length === 1 ? '' : 's'} frozen`,
						'rocket',
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
		const agent: AgentStatusView | undefined = vscode.workspace.isTrusted
			? (entry.agent ?? { state: 'checking', text: 'Checking the agent…', detail: '', fixes: [] })
			: undefined;
		const state: CardState = {
			...cardState(project, view, suggested),
			runWith: runWith(this.settingsFor(project)),
			...(entry.launched ? { launched: entry.launched } : {}),
			...(agent ? { agent } : {}),
			...extra,
		};
		const message: HostToWebview = { type: 'state', state };
		await entry.panel.webview.postMessage(message);
	}

	/**
	 * The agent check of the agent Go would start (glossary: Agent check), on the server, the card
	 * shown at once and again with the answer; `fresh` looks again even when an answer is kept. Not in
	 * an untrusted folder, where the desk starts no agent. Settings the server refuses are said on the
	 * card's agent line.
	 */
	private async checkAgent(project: string, fresh: boolean): Promise<void> {
		const entry = this.panels.get(project);
		if (!entry?.ready || !vscode.workspace.isTrusted) {
			return;
		}
		entry.checkedAt = Date.now();
		try {
			const { agents } = await this.desk.request(CheckAgents, {
				settings: this.settingsFor(project),
				...(fresh ? { fresh } : {}),
			});
			const [check] = agents;
			entry.agent = check ? agentStatus(check) : undefined;
			entry.fixes = check?.fixes ?? [];
		} catch (error) {
			if (!(error instanceof DeskRequestError && error.deskError)) {
				this.reportError(error);
				return;
			}
			entry.agent = { state: 'missing', text: visibleText(error.message), detail: '', fixes: [] };
			entry.fixes = [];
		}
		await this.send(project).catch((error: unknown) => this.reportError(error));
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
.agent { margin-top: 18px; } .agent-line { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.agent-mark { font-weight: 700; width: 1.2em; text-align: center; } .agent-text { font-weight: 600; }
.agent.ready .agent-mark { color: var(--vscode-testing-iconPassed); } .agent.signIn .agent-mark { color: var(--vscode-editorWarning-foreground); }
.agent.missing .agent-mark, .agent.missing .agent-text { color: var(--vscode-errorForeground); } .agent.unknown .agent-mark, .agent.checking .agent-mark { color: var(--vscode-descriptionForeground); }
.agent-detail { margin: 2px 0 0 calc(1.2em + 10px); }
</style></head><body><div id="app"></div><script nonce="${nonce}" src="${script}"></script></body></html>`;
	}
}
