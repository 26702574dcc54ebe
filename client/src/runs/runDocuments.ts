import * as vscode from 'vscode';
import {
	LineageTreeRequest,
	ListBoard,
	PatchSetFiles,
	ShowRun,
	type PatchSetFilesJson,
	type RunDetail,
} from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { escapeHtml, newNonce } from '../common/html';
import { visibleText } from '../common/markdownText';
import { hasLineageSection, renderLineageSection, type LineageFacts } from '../lineage/lineagePage';
import { allBranches, withAnswers } from '../lineage/lineageText';
import { readRunPageState, renderActions, renderRunBody, runPageCommands, runPageHtml } from './runPage';

/**
 * `desk-patch:/<path>?patchset=<id>&side=<before|after>`: one side of a PatchSet's file. The path
 * comes first so that editors and the multi-file diff name the file by it.
 */
export const patchScheme = 'desk-patch';

/**
 * The two sides of a PatchSet's files, as the server computed them, served read-only to VS Code's
 * diff editor. They are kept until the window closes (they never change: a PatchSet is immutable).
 */
export class PatchSides implements vscode.TextDocumentContentProvider {
	private readonly texts = new Map<string, string>();

	set(uri: vscode.Uri, text: string): void {
		this.texts.set(uri.toString(), text);
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.texts.get(uri.toString()) ?? '';
	}
}

export function patchSideUri(patchsetId: string, side: 'before' | 'after', filePath: string): vscode.Uri {
	return vscode.Uri.from({ scheme: patchScheme, path: `/${filePath}`, query: `patchset=${patchsetId}&side=${side}` });
}

/** One changed file for `vscode.changes`: the resource it is named by, its before side and its after side. */
export type PatchChange = [resource: vscode.Uri, before: vscode.Uri, after: vscode.Uri];

/**
 * Fetches a PatchSet's files from the server into `sides` and returns them as `vscode.changes` wants
 * them. `resourceFor` names each file (default: its after side), e.g. by its path in the checkout.
 */
export async function loadPatchSet(
	desk: DeskClient,
	sides: PatchSides,
	project: string,
	patchsetId: string,
	resourceFor?: (filePath: string) => vscode.Uri,
): Promise<{ source: PatchSetFilesJson['source']; paths: string[]; changes: PatchChange[] }> {
	const loaded = await desk.request(PatchSetFiles, { project, patchset: patchsetId });
	const text = (b64: string | null) => (b64 === null ? '' : Buffer.from(b64, 'base64').toString('utf8'));
	const changes = loaded.files.map((f): PatchChange => {
		const before = patchSideUri(patchsetId, 'before', f.path);
		const after = patchSideUri(patchsetId, 'after', f.path);
		sides.set(before, text(f.before));
		sides.set(after, text(f.after));
		return [resourceFor?.(f.path) ?? after, before, after];
	});
	return { source: loaded.source, paths: loaded.files.map((f) => f.path), changes };
}

const runPageType = 'agentDesk.run';

/**
 * A run's page in an editor tab: a webview styled with the theme's colours, made anew when the run
 * changes. Its decision links are command: URIs, limited to the gate's commands. Its one script
 * only tells VS Code which run it shows, so that a window reload restores the tab (the serializer
 * below) and it follows the run on, carried meanwhile by the run's own process (glossary: Carrier).
 */
export class RunPages implements vscode.Disposable {
	/** Each open page and the nonce of its one script (kept, so a page unchanged is not made again). */
	private readonly panels = new Map<string, { panel: vscode.WebviewPanel; nonce: string }>();
	private readonly serializer: vscode.Disposable;

	constructor(
		private readonly desk: DeskClient,
		/** Settles once the desk has opened the window's projects: a restored page asks for its run then. */
		private readonly whenSettled: () => Promise<unknown>,
	) {
		this.serializer = vscode.window.registerWebviewPanelSerializer(runPageType, {
			deserializeWebviewPanel: (panel, state: unknown) => this.restore(panel, state),
		});
	}

	/** Opens (or shows) the run's page; `beside` puts it next to the active editor without taking the focus. */
	async open(project: string, runId: string, beside = false): Promise<void> {
		const key = pageKey(project, runId);
		const detail = await this.desk.request(ShowRun, { project, id: runId });
		const lineage = await this.lineageOf(project, detail);
		let page = this.panels.get(key);
		const column = beside ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
		if (page) {
			page.panel.reveal(beside ? column : undefined, beside);
		} else {
			const panel = vscode.window.createWebviewPanel(
				runPageType,
				`Run: ${visibleText(detail.task.title)}`,
				{ viewColumn: column, preserveFocus: beside },
				pageOptions,
			);
			page = this.adopt(key, panel);
		}
		this.render(page, project, detail, lineage);
	}

	/**
	 * A page VS Code restores after a reload: it shows its run again once the desk is up, and follows it
	 * from there. A tab whose state names no run (one saved by an older page) is closed.
	 */
	private async restore(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
		const shown = readRunPageState(state);
		if (!shown) {
			panel.dispose();
			return;
		}
		const key = pageKey(shown.project, shown.run);
		if (this.panels.has(key)) {
			panel.dispose();
			return;
		}
		panel.webview.options = pageOptions;
		const page = this.adopt(key, panel);
		await this.whenSettled();
		try {
			const detail = await this.desk.request(ShowRun, { project: shown.project, id: shown.run });
			const lineage = await this.lineageOf(shown.project, detail);
			if (this.panels.get(key) === page) {
				this.render(page, shown.project, detail, lineage);
			}
		} catch (error) {
			this.desk.output.warn(`the page of run ${shown.run} could not be restored: ${(error as Error).message}`);
			page.panel.webview.html = runPageHtml(
				page.panel.webview.cspSource,
				`<p>Run ${escapeHtml(shown.run)} of ${escapeHtml(visibleText(shown.project))} could not be shown: ${escapeHtml(visibleText((error as Error).message))}</p>`,
			);
		}
	}

	private adopt(key: string, panel: vscode.WebviewPanel): { panel: vscode.WebviewPanel; nonce: string } {
		const page = { panel, nonce: newNonce() };
		panel.onDidDispose(() => {
			if (this.panels.get(key) === page) {
				this.panels.delete(key);
			}
		});
		this.panels.set(key, page);
		return page;
	}

	/**
	 * The run's Lineage section: its task's place in the project's lineage and its board. Empty for a
	 * run outside any lineage, and a line saying so when the desk could not tell (the page still shows).
	 */
	private async lineageOf(project: string, detail: RunDetail): Promise<string> {
		const facts: LineageFacts = { project, detail };
		try {
			facts.tree = await this.desk.request(LineageTreeRequest, { project });
			const task = detail.task.object_id;
			const branches = facts.tree.roots.flatMap((r) => allBranches(r.branches));
			if (branches.some((b) => b.node.node === task || b.node.starter_node === task)) {
				facts.board = withAnswers((await this.desk.request(ListBoard, { project, node: task })).messages, facts.tree);
			}
		} catch (error) {
			this.desk.output.warn(
				`the lineage of run ${detail.run.object_id} could not be read: ${(error as Error).message}`,
			);
			return '';
		}
		return hasLineageSection(facts) ? renderLineageSection(facts) : '';
	}

	/** Pages of the project's runs are made again (only where something changed, so a page keeps its scroll). */
	async refresh(project: string): Promise<void> {
		// A copy: a page closed while a request is out leaves the map meanwhile.
		for (const [key, page] of [...this.panels]) {
			const [p, runId] = splitKey(key);
			if (p === project) {
				const detail = await this.desk.request(ShowRun, { project, id: runId }).catch(() => undefined);
				const lineage = detail ? await this.lineageOf(project, detail) : '';
				// Only a page still open (the one in the map, not disposed while the request was out) is made again.
				if (detail && this.panels.get(key) === page) {
					this.render(page, project, detail, lineage);
				}
			}
		}
	}

	private render(
		page: { panel: vscode.WebviewPanel; nonce: string },
		project: string,
		detail: RunDetail,
		lineage: string,
	): void {
		const html = runPageHtml(
			page.panel.webview.cspSource,
			renderRunBody(detail, renderActions(project, detail), lineage),
			{ nonce: page.nonce, state: { project, run: detail.run.object_id } },
		);
		if (page.panel.webview.html !== html) {
			page.panel.webview.html = html;
		}
	}

	dispose(): void {
		this.serializer.dispose();
		for (const { panel } of this.panels.values()) {
			panel.dispose();
		}
	}
}

/** A run page's webview: its one script (the state it keeps), command links to the gate's commands only, no files. */
const pageOptions: vscode.WebviewOptions & vscode.WebviewPanelOptions = {
	enableScripts: true,
	enableCommandUris: runPageCommands,
	localResourceRoots: [],
};

/** The key of a run's page: the project's name encoded (a name may hold a slash), then the run id. */
function pageKey(project: string, runId: string): string {
	return `${encodeURIComponent(project)}/${runId}`;
}

function splitKey(key: string): [project: string, runId: string] {
	const slash = key.indexOf('/');
	return [decodeURIComponent(key.slice(0, slash)), key.slice(slash + 1)];
}
