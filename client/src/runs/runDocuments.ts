import * as vscode from 'vscode';
import {
	LineageTreeRequest,
	ListBoard,
	PatchSetFiles,
	ReadRunText,
	ShowRun,
	type PatchSetFilesJson,
	type RunDetail,
} from '../../../server/src/protocol/protocol';
import { parseRunPageMessage, type RunPageToWebview } from '../../../webview/src/runPageMessages';
import type { DeskClient } from '../common/deskClient';
import { escapeHtml, newNonce } from '../common/html';
import { visibleText } from '../common/markdownText';
import { hasLineageSection, renderLineageSection, type LineageFacts } from '../lineage/lineagePage';
import { allBranches, withAnswers } from '../lineage/lineageText';
import { inputDocument, splitToolCalls, toolWords, type RunTextTarget, type TextPreview } from './runConversation';
import { readRunPageState, renderActions, renderRunBody, runPageCommands, runPageHtml } from './runPage';
import { runName } from './runWords';

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

/** A run's page open in a tab: what it shows, and the beginnings of outputs it was asked for. */
interface OpenPage {
	readonly panel: vscode.WebviewPanel;
	readonly project: string;
	readonly runId: string;
	detail: RunDetail;
	lineage: string;
	/** By the stored text's hash: what the page was asked to show of a call's output. */
	readonly previews: Map<string, TextPreview>;
	/** The body last given to the page. */
	shown: string;
}

/** How much of a call's output the page shows when it is opened (the whole opens in a tab). */
const previewBytes = 4096;

const runPageType = 'agentDesk.run';

/**
 * A run's page in an editor tab: a webview styled with the theme's colours whose one script, the
 * page's own (webview/src/runPage.ts, by nonce), lays each new body over the page as the run changes,
 * so the page follows the run live without losing its scroll or the calls a person opened. Its links
 * are command: URIs, limited to the gate's commands and the one that opens a run's text in a tab. The
 * script keeps the run it shows in the tab's state, so that a window reload restores the tab (the
 * serializer below) and the page follows the run on, carried meanwhile by its own process
 * (glossary: Carrier).
 */
export class RunPages implements vscode.Disposable {
	private readonly pages = new Map<string, OpenPage>();
	private readonly serializer: vscode.Disposable;

	constructor(
		private readonly desk: DeskClient,
		private readonly extensionUri: vscode.Uri,
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
		const column = beside ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
		const open = this.pages.get(key);
		if (open) {
			open.panel.reveal(beside ? column : undefined, beside);
			this.render(open, detail, lineage);
			return;
		}
		const panel = vscode.window.createWebviewPanel(
			runPageType,
			// Its place among the task's runs: two runs of a task never make two tabs of the same title.
			`${runName(detail)}: ${visibleText(detail.task.title)}`,
			{ viewColumn: column, preserveFocus: beside },
			this.pageOptions(),
		);
		this.show(panel, key, { panel, project, runId, detail, lineage, previews: new Map(), shown: '' });
	}

	/** A run page's webview: its one script, command links to the gate's commands only, no other files. */
	private pageOptions(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
		return {
			enableScripts: true,
			enableCommandUris: runPageCommands,
			localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'runPage')],
		};
	}

	/** The page made in `panel` (new, or restored after a reload), and followed from now on. */
	private show(panel: vscode.WebviewPanel, key: string, page: OpenPage): void {
		const scriptFolder = vscode.Uri.joinPath(this.extensionUri, 'dist', 'runPage');
		page.shown = this.body(page);
		panel.webview.html = runPageHtml(panel.webview.cspSource, page.shown, {
			nonce: newNonce(),
			src: panel.webview.asWebviewUri(vscode.Uri.joinPath(scriptFolder, 'runPage.js')).toString(),
			shows: { project: page.project, run: page.runId },
		});
		panel.webview.onDidReceiveMessage((message: unknown) => this.onMessage(page, message));
		panel.onDidDispose(() => {
			if (this.pages.get(key) === page) {
				this.pages.delete(key);
			}
		});
		this.pages.set(key, page);
	}

	/**
	 * A page VS Code restores after a reload: it shows its run again once the desk is up, and follows it
	 * from there. A tab whose state names no run (one saved by an older page) is closed.
	 */
	private async restore(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
		const shown = readRunPageState(state);
		const key = shown ? pageKey(shown.project, shown.run) : '';
		if (!shown || this.pages.has(key)) {
			panel.dispose();
			return;
		}
		panel.webview.options = this.pageOptions();
		let closed = false;
		const closing = panel.onDidDispose(() => (closed = true));
		await this.whenSettled();
		try {
			const detail = await this.desk.request(ShowRun, { project: shown.project, id: shown.run });
			const lineage = await this.lineageOf(shown.project, detail);
			if (closed || this.pages.has(key)) {
				// Closed while the desk started, or opened from the Runs view meanwhile.
				panel.dispose();
				return;
			}
			this.show(panel, key, {
				panel,
				project: shown.project,
				runId: shown.run,
				detail,
				lineage,
				previews: new Map(),
				shown: '',
			});
		} catch (error) {
			this.desk.output.warn(`the page of run ${shown.run} could not be restored: ${(error as Error).message}`);
			if (closed) {
				return;
			}
			panel.webview.html = runPageHtml(
				panel.webview.cspSource,
				`<p>Run ${escapeHtml(shown.run)} of ${escapeHtml(visibleText(shown.project))} could not be shown: ${escapeHtml(visibleText((error as Error).message))}</p>`,
			);
		} finally {
			closing.dispose();
		}
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

	/** Pages of the project's runs are brought up to date (the page keeps its scroll and what was opened). */
	async refresh(project: string): Promise<void> {
		// A copy: a page closed while a request is out leaves the map meanwhile.
		for (const [key, page] of [...this.pages]) {
			if (page.project === project) {
				const detail = await this.desk.request(ShowRun, { project, id: page.runId }).catch(() => undefined);
				const lineage = detail ? await this.lineageOf(project, detail) : '';
				// Only a page still open (the one in the map, not disposed while the request was out) is made again.
				if (detail && this.pages.get(key) === page) {
					this.render(page, detail, lineage);
				}
			}
		}
	}

	private body(page: OpenPage): string {
		const { detail, project, runId } = page;
		return renderRunBody(detail, renderActions(project, detail), page.lineage, { project, runId }, page.previews);
	}

	/** The page given its new body, when it changed; the page lays it over what it shows. */
	private render(page: OpenPage, detail?: RunDetail, lineage?: string): void {
		if (detail) {
			page.detail = detail;
		}
		if (lineage !== undefined) {
			page.lineage = lineage;
		}
		const body = this.body(page);
		if (body !== page.shown) {
			page.shown = body;
			void page.panel.webview.postMessage({ type: 'body', html: body } satisfies RunPageToWebview);
		}
	}

	private onMessage(page: OpenPage, raw: unknown): void {
		const message = parseRunPageMessage(raw);
		if (message?.type === 'ready') {
			// A page loaded again (after it was hidden) shows the body it was made with: it gets today's.
			void page.panel.webview.postMessage({ type: 'body', html: page.shown } satisfies RunPageToWebview);
		} else if (message?.type === 'preview' && !page.previews.has(message.hash)) {
			void this.preview(page, message.hash);
		}
	}

	/** The beginning of a call's output, read when the call is opened on the page. */
	private async preview(page: OpenPage, hash: string): Promise<void> {
		const ours = page.detail.tool_invocations.some((c) => c.artifacts.some((a) => a.hash === hash));
		if (!ours) {
			return;
		}
		try {
			const read = await this.desk.request(ReadRunText, {
				project: page.project,
				run: page.runId,
				hash,
				max_bytes: previewBytes,
			});
			page.previews.set(hash, { text: read.text, partial: read.partial, bytes: read.bytes });
		} catch (error) {
			page.previews.set(hash, { error: (error as Error).message });
		}
		if (this.pages.get(pageKey(page.project, page.runId)) === page) {
			this.render(page);
		}
	}

	dispose(): void {
		this.serializer.dispose();
		for (const page of this.pages.values()) {
			page.panel.dispose();
		}
	}
}

/** The key of a run's page: the project's name encoded (a name may hold a slash), then the run id. */
function pageKey(project: string, runId: string): string {
	return `${encodeURIComponent(project)}/${runId}`;
}

/**
 * `desk-run:/<name>?run=<id>&…`: a text of a run (a tool call's input or output, a check's log, a
 * whole message) in a read-only tab, named by what it is and the run's place among its task's runs.
 */
export const runTextScheme = 'desk-run';

/** The texts of runs shown in tabs, served read-only (a run's stored texts never change). */
export class RunTexts extends PatchSides {}

/** Opens a text of a run in a read-only editor tab. */
export async function openRunText(
	desk: DeskClient,
	texts: RunTexts,
	project: string,
	runId: string,
	target: RunTextTarget,
): Promise<void> {
	const detail = await desk.request(ShowRun, { project, id: runId });
	const run = runName(detail);
	const read = async (hash: string | undefined) => {
		if (!hash) {
			throw new Error('That text was not stored.');
		}
		return (await desk.request(ReadRunText, { project, run: runId, hash })).text;
	};
	let name: string;
	let text: string;
	if ('call' in target) {
		const own = splitToolCalls(detail.tool_invocations).own;
		const call = detail.tool_invocations.find((c) => c.object_id === target.call);
		if (!call) {
			throw new Error('That names no tool call of the run.');
		}
		const number = own.indexOf(call) + 1;
		const which = `${number > 0 ? `call ${number}, ` : ''}${run}`;
		const tool = toolWords(call.tool_name).name;
		if (target.part === 'input') {
			name = `${tool} input (${which}).txt`;
			text = inputDocument(call);
		} else {
			name = `${tool} output (${which}).log`;
			text = await read(call.artifacts[0]?.hash);
		}
	} else if ('evidence' in target) {
		const evidence = detail.evidence.find((e) => e.object_id === target.evidence);
		if (!evidence) {
			throw new Error('That names no check of the run.');
		}
		name = `${evidence.tags['desk.check'] ?? evidence.tool} log (${run}).log`;
		text = await read(evidence.report_artifacts[0]?.hash);
	} else {
		const frame = detail.pipeline?.frames.find((f) => f.frame_id === target.message);
		const data = frame?.data as { run?: string; artifact?: { hash?: string } } | undefined;
		if (!data || data.run !== runId) {
			throw new Error('That names no message of the run.');
		}
		name = `Agent message (${run}).md`;
		text = await read(data.artifact?.hash);
	}
	// A tab's title is the path's last part: no slash may split it, no control character show in it.
	const title = visibleText(name).replace(/[\\/]/g, '∕');
	const uri = vscode.Uri.from({
		scheme: runTextScheme,
		path: `/${title}`,
		query: `project=${encodeURIComponent(project)}&run=${runId}&target=${encodeURIComponent(JSON.stringify(target))}`,
	});
	texts.set(uri, text);
	const document = await vscode.workspace.openTextDocument(uri);
	await vscode.window.showTextDocument(document, { preview: true });
}
