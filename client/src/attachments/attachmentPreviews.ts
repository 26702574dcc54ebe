import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { showInformationMessage, showWarningMessage } from '../common/messages';
import { baseName } from '../../../server/src/attachments/names';
import { ReadAttachment, type AttachmentContent, type AttachmentRow } from '../../../server/src/protocol/protocol';
import { readForOpening, readWhole, type ReadPiece } from './attachmentReader';
import { externalReference } from './externalReference';
import { formatJson } from './formatJson';
import { imageSize } from './imageSize';
import { attachmentKind, languageFor, safeFileName } from './kinds';
import {
	downloadPage,
	headerFacts,
	imagePage,
	markdownPage,
	pageButton,
	pdfPage,
	renderedPage,
	tablePage,
	type PageHeader,
} from './pages';
import { parsePdfMessage, type PdfHostToWebview } from '../../../webview/src/pdfMessages';
import type { DeskClient } from '../common/deskClient';
import { newNonce } from '../common/html';

/**
 * `desk-attachment:/<task id>/<attachment id>/<base name>?project=<name>[&as=text]`: an attachment's
 * stored bytes as a read-only text document. The path ends with the file's base name so that VS Code
 * picks its language; the name is only a label here, never a path on disk.
 */
export const attachmentScheme = 'desk-attachment';

/** One attachment of one task of one project of this window. */
export interface AttachmentRef {
	project: string;
	task: string;
	id: string;
}

/**
 * `inert`: the name gets `.txt` added, so that VS Code opens it as plain text from the start (it picks
 * the language by the extension before the desk could set one) and no language service reads it.
 */
export function attachmentUri(ref: AttachmentRef, name: string, asText = false, inert = false): vscode.Uri {
	const query = new URLSearchParams({ project: ref.project, ...(asText ? { as: 'text' } : {}) });
	return vscode.Uri.from({
		scheme: attachmentScheme,
		path: `/${ref.task}/${ref.id}/${baseName(name)}${inert ? '.txt' : ''}`,
		query: query.toString(),
	});
}

export function parseAttachmentUri(uri: vscode.Uri): (AttachmentRef & { asText: boolean }) | undefined {
	const match = /^\/([0-9A-Za-z][0-9A-Za-z._-]*)\/([0-9a-f]{32})\//.exec(uri.path);
	const query = new URLSearchParams(uri.query);
	const project = query.get('project');
	if (uri.scheme !== attachmentScheme || !match || !project) {
		return undefined;
	}
	return { project, task: match[1]!, id: match[2]!, asText: query.get('as') === 'text' };
}

const untrustedPdf = 'Agent Desk renders no PDF in an untrusted workspace. Save As… writes the PDF where you choose.';

/** Commands a preview page's links may run; nothing else. */
export const previewPageCommands = [
	'agentDesk.saveAttachmentAs',
	'agentDesk.openAttachmentAsText',
	'agentDesk.openAttachmentInPdfViewer',
] as const;
type PageCommand = (typeof previewPageCommands)[number];

function link(command: PageCommand, ref: AttachmentRef, label: string, primary = false): string {
	const args = encodeURIComponent(JSON.stringify([ref.project, ref.task, ref.id]));
	return pageButton(`command:${command}?${args}`, label, primary);
}

/** The header of a page made from a text attachment: its name and facts, a link to the text (`textLabel`) and Save As…. */
function textPageHeader(ref: AttachmentRef, content: AttachmentContent, textLabel: string): PageHeader {
	return {
		name: content.row.name,
		facts: headerFacts(content.row, content.inline_type),
		links: [
			link('agentDesk.openAttachmentAsText', ref, textLabel),
			link('agentDesk.saveAttachmentAs', ref, 'Save As…'),
		],
	};
}

/** A custom editor another extension contributes for `*.pdf` (a viewer such as one built on pdf.js), with the extension's name. */
export interface PdfViewer {
	viewType: string;
	/** The extension's display name (else its name). */
	extensionName: string;
	/** publisher.name */
	extensionId: string;
}

export function pdfViewer(): PdfViewer | undefined {
	for (const extension of vscode.extensions.all) {
		const manifest = extension.packageJSON as
			{ displayName?: unknown; name?: unknown; contributes?: { customEditors?: unknown } } | undefined;
		const editors = manifest?.contributes?.customEditors;
		if (!Array.isArray(editors)) {
			continue;
		}
		for (const editor of editors as Array<{ viewType?: unknown; selector?: unknown }>) {
			const selectors = Array.isArray(editor.selector)
				? (editor.selector as Array<{ filenamePattern?: unknown } | null>)
				: [];
			if (
				typeof editor.viewType === 'string' &&
				selectors.some((s) => typeof s?.filenamePattern === 'string' && /\*\.pdf$/i.test(s.filenamePattern))
			) {
				const name =
					typeof manifest?.displayName === 'string' && manifest.displayName.trim()
						? manifest.displayName.trim()
						: typeof manifest?.name === 'string'
							? manifest.name
							: extension.id;
				return { viewType: editor.viewType, extensionName: name.slice(0, 100), extensionId: extension.id };
			}
		}
	}
	return undefined;
}

/**
 * Previews of attachments in editor tabs, by the type the server checked against the stored bytes
 * (never the recorded claim): images, CSV/TSV tables and rendered Markdown in webviews without
 * scripts; text, source code, formatted JSON, and HTML/SVG source in read-only editors; HTML and SVG
 * rendered only on request, in a sandboxed frame; PDF drawn by the pdf.js the extension ships (in a
 * trusted workspace; otherwise, or where that pdf.js cannot start, offered for Save As…, and for an
 * installed PDF viewer extension only when the person asks for it there); the rest offered for Save As….
 */
export class AttachmentPreviews implements vscode.TextDocumentContentProvider, vscode.Disposable {
	private readonly panels = new Map<string, vscode.WebviewPanel>();
	/** Content read by open(), handed to the document provider so the bytes cross the wire once. */
	private readonly pending = new Map<string, AttachmentContent>();
	/**
	 * PDFs handed to a viewer extension are written here: a folder of this window's session alone
	 * (other windows share the storage folder and may have theirs open), removed when the window closes.
	 */
	private readonly previewFolder: vscode.Uri;

	constructor(
		private readonly desk: DeskClient,
		storage: vscode.Uri,
		private readonly extensionUri: vscode.Uri,
	) {
		this.previewFolder = vscode.Uri.joinPath(storage, 'attachment-previews', randomBytes(12).toString('hex'));
	}

	/** The attachment's bytes, whole and checked, read in pieces. */
	read(ref: AttachmentRef): Promise<AttachmentContent> {
		return readWhole(this.pieces(ref));
	}

	private pieces(ref: AttachmentRef): ReadPiece {
		return (offset, maxBytes) =>
			this.desk.request(ReadAttachment, {
				project: ref.project,
				task: ref.task,
				ref: ref.id,
				offset,
				max_bytes: maxBytes,
			});
	}

	/**
	 * Opens the preview its checked type calls for: decided from the recorded type (`row`, as listed)
	 * before a byte is read, then from the first piece; only what is shown is read whole.
	 */
	async open(ref: AttachmentRef, row: AttachmentRow): Promise<void> {
		if (row.media_type === 'application/pdf' && !vscode.workspace.isTrusted) {
			// Not drawn here whatever its bytes are: nothing to read for the page that says so.
			this.showPdfDownload(ref, row, untrustedPdf, false);
			return;
		}
		const opening = await readForOpening(row, this.pieces(ref));
		if ('download' in opening) {
			const recorded = opening.download.media_type;
			const claim =
				opening.shownAs === undefined
					? 'The desk has no preview for its type'
					: recorded === 'application/octet-stream'
						? 'Its bytes are not a type the desk shows'
						: `It is recorded as ${recorded}, but its stored bytes are not that`;
			this.showDownload(
				ref,
				opening.download,
				opening.shownAs ?? 'application/octet-stream',
				`${claim}, so it is not shown here. Save As… writes it where you choose.`,
			);
			return;
		}
		const { content } = opening;
		const type = content.inline_type;
		switch (attachmentKind(type, content.row.name)) {
			case 'image':
				if (type === 'image/svg+xml') {
					await this.showText(ref, content);
				} else {
					this.showImage(ref, content);
				}
				return;
			case 'markdown':
				if (vscode.workspace.isTrusted) {
					await this.showMarkdown(ref, content);
				} else {
					await this.showText(ref, content);
				}
				return;
			case 'table':
				this.showTable(ref, content);
				return;
			case 'pdf':
				this.showPdf(ref, content);
				return;
			case 'other':
				this.showDownload(
					ref,
					content.row,
					type,
					'The desk has no preview for this type. Save As… writes it where you choose.',
				);
				return;
			default:
				// Text, source code, JSON, and HTML as its source.
				await this.showText(ref, content);
		}
	}

	/** The attachment as text in a read-only editor, whatever its preview would be (Markdown source, a CSV's text, JSON as written). */
	async openAsText(ref: AttachmentRef): Promise<void> {
		const content = await this.read(ref);
		if (
			!content.inline ||
			!(content.inline_type.startsWith('text/') || languageFor(content.inline_type, content.row.name))
		) {
			throw new Error(
				`${content.row.name} is not text (${content.inline ? content.inline_type : 'its bytes are not text'}).`,
			);
		}
		await this.showText(ref, content, true);
	}

	/**
	 * HTML or SVG rendered: a webview with scripts off whose policy allows no script and no network,
	 * the document in a frame with `sandbox=""`. Refused in an untrusted workspace.
	 */
	async showRendered(ref: AttachmentRef): Promise<void> {
		if (!vscode.workspace.isTrusted) {
			void showWarningMessage(
				'Agent Desk renders no HTML in an untrusted workspace: the source view shows what the file holds.',
			);
			return;
		}
		const content = await this.read(ref);
		const type = content.inline_type;
		if (!content.inline || (type !== 'text/html' && type !== 'image/svg+xml')) {
			throw new Error(
				`Only HTML and SVG attachments have a rendered view; ${content.row.name} is ${content.inline ? type : 'not text'}.`,
			);
		}
		const text = Buffer.from(content.base64, 'base64').toString('utf8');
		const header: PageHeader = {
			...textPageHeader(ref, content, 'Show Source'),
			note: 'Rendered without scripts, forms or network: what needs them does not work here.',
		};
		this.showPanel(
			ref,
			'rendered',
			`${baseName(content.row.name)} (rendered)`,
			renderedPage({ header, mediaType: type, text, base64: content.base64 }),
		);
	}

	/** Closes the previews of an attachment (it was deleted). */
	close(id: string): void {
		for (const [key, panel] of this.panels) {
			if (key.split('/')[2] === id) {
				panel.dispose();
			}
		}
	}

	async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
		const ref = parseAttachmentUri(uri);
		if (!ref) {
			throw new Error(`${uri.toString()} names no attachment.`);
		}
		const content = this.pending.get(uri.toString()) ?? (await this.read(ref));
		const text = Buffer.from(content.base64, 'base64').toString('utf8');
		if (!ref.asText && content.inline && content.inline_type === 'application/json') {
			const formatted = formatJson(text);
			return 'text' in formatted ? formatted.text : text;
		}
		return text;
	}

	dispose(): void {
		for (const panel of this.panels.values()) {
			panel.dispose();
		}
		// This window's files only; synchronous, as the extension host may stop right after.
		if (this.previewFolder.scheme === 'file') {
			try {
				fs.rmSync(this.previewFolder.fsPath, { recursive: true, force: true });
			} catch {
				// Nothing to remove, or it is in use: it goes with the storage folder.
			}
		}
	}

	private async showText(ref: AttachmentRef, content: AttachmentContent, asText = false): Promise<void> {
		const { row } = content;
		const type = content.inline_type;
		let language = languageFor(type, row.name);
		const json = !asText && type === 'application/json';
		const text = Buffer.from(content.base64, 'base64').toString('utf8');
		// A schema or DTD on the network: opened as plain text from the start, so no language service fetches it.
		const external = externalReference(text, language, row.name);
		const uri = attachmentUri(ref, row.name, asText, external !== undefined);
		if (external !== undefined) {
			language = 'plaintext';
			void showInformationMessage(
				`Agent Desk: ${row.name} names ${external}; it is shown as plain text so that the editor fetches nothing from the network.`,
			);
		} else if (json) {
			const formatted = formatJson(text);
			if ('error' in formatted) {
				language = 'plaintext';
				void showWarningMessage(`${row.name} is not valid JSON (${formatted.error}); it is shown as text.`);
			}
		}
		this.pending.set(uri.toString(), content);
		let document: vscode.TextDocument;
		try {
			document = await vscode.workspace.openTextDocument(uri);
		} finally {
			this.pending.delete(uri.toString());
		}
		if (language && document.languageId !== language && (await vscode.languages.getLanguages()).includes(language)) {
			document = await vscode.languages.setTextDocumentLanguage(document, language);
		}
		await vscode.window.showTextDocument(document, { preview: true });
	}

	private showImage(ref: AttachmentRef, content: AttachmentContent): void {
		const bytes = Buffer.from(content.base64, 'base64');
		const size = imageSize(bytes);
		const header: PageHeader = {
			name: content.row.name,
			facts: headerFacts(content.row, content.inline_type, size ? [`${size.width} × ${size.height} px`] : []),
			links: [link('agentDesk.saveAttachmentAs', ref, 'Save As…')],
		};
		this.showPanel(
			ref,
			'image',
			baseName(content.row.name),
			imagePage({
				header,
				mediaType: content.inline_type,
				base64: content.base64,
				...(size ? { size } : {}),
				nonce: newNonce(),
			}),
		);
	}

	private showTable(ref: AttachmentRef, content: AttachmentContent): void {
		const header = textPageHeader(ref, content, 'Show as Text');
		const text = Buffer.from(content.base64, 'base64').toString('utf8');
		const delimiter = content.inline_type === 'text/tab-separated-values' ? '\t' : ',';
		this.showPanel(ref, 'table', baseName(content.row.name), tablePage({ header, text, delimiter, nonce: newNonce() }));
	}

	private async showMarkdown(ref: AttachmentRef, content: AttachmentContent): Promise<void> {
		const text = Buffer.from(content.base64, 'base64').toString('utf8');
		const html = await vscode.commands.executeCommand<string>('markdown.api.render', text);
		const header = textPageHeader(ref, content, 'Show Source');
		this.showPanel(
			ref,
			'markdown',
			`${baseName(content.row.name)} (preview)`,
			markdownPage({ header, html: typeof html === 'string' ? html : '', nonce: newNonce() }),
		);
	}

	/**
	 * A PDF drawn by the pdf.js the extension ships, a current one (see pdfPage and dist/pdfViewer/pdfViewer.js for
	 * what it may do). For bytes the desk returned only part of, or where that pdf.js cannot start, the
	 * download page instead (in an untrusted workspace `open` shows it before reading a byte).
	 */
	private showPdf(ref: AttachmentRef, content: AttachmentContent): void {
		if (content.truncated) {
			this.showPdfDownload(
				ref,
				content.row,
				'The desk returned only part of this PDF, so it is not shown here. Save As… writes it where you choose.',
			);
			return;
		}
		const key = this.panelKey(ref, 'pdf');
		const open = this.panels.get(key);
		if (open) {
			open.reveal();
			return;
		}
		const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
		const pdfjsFolder = vscode.Uri.joinPath(dist, 'pdfjs');
		const scriptFolder = vscode.Uri.joinPath(dist, 'pdfViewer');
		const scriptFile = vscode.Uri.joinPath(scriptFolder, 'pdfViewer.js');
		// Scripts on for this page alone: its own script and pdf.js, no other local file, no command links, no forms.
		const panel = vscode.window.createWebviewPanel(
			'agentDesk.attachment',
			baseName(content.row.name),
			vscode.ViewColumn.Active,
			{
				enableScripts: true,
				enableForms: false,
				enableCommandUris: false,
				localResourceRoots: [pdfjsFolder, scriptFolder],
			},
		);
		this.panels.set(key, panel);
		const bytes = Buffer.from(content.base64, 'base64');
		let started = false;
		let fellBack = false;
		const fallBack = (why: string) => {
			if (fellBack) {
				return;
			}
			fellBack = true;
			this.panels.delete(key);
			panel.dispose();
			this.showPdfDownload(
				ref,
				content.row,
				`The desk's PDF viewer (pdf.js) could not start here (${why}). Save As… writes the PDF where you choose.`,
			);
		};
		// A page that never says it is ready (its script blocked or broken) falls back too.
		const timer = setTimeout(() => {
			if (!started) {
				fallBack('its page did not start');
			}
		}, 20_000);
		panel.onDidDispose(() => {
			clearTimeout(timer);
			if (this.panels.get(key) === panel) {
				this.panels.delete(key);
			}
		});
		panel.webview.onDidReceiveMessage((raw: unknown) => {
			const message = parsePdfMessage(raw);
			switch (message?.type) {
				case 'ready': {
					// Again after every reload of the page (a hidden tab shown again): the bytes go each time.
					started = true;
					const reply: PdfHostToWebview = { type: 'pdf', bytes: new Uint8Array(bytes) };
					void panel.webview.postMessage(reply);
					return;
				}
				case 'saveAs':
					void vscode.commands.executeCommand('agentDesk.saveAttachmentAs', ref.project, ref.task, ref.id);
					return;
				case 'unavailable':
					fallBack(message.reason || 'pdf.js did not load');
					return;
				default:
					// 'rendered' and 'failed' are for the page to show; it does.
					return;
			}
		});
		const webview = panel.webview;
		const header: PageHeader = { name: content.row.name, facts: headerFacts(content.row, content.inline_type) };
		webview.html = pdfPage({
			header,
			nonce: newNonce(),
			cspSource: webview.cspSource,
			script: webview.asWebviewUri(scriptFile).toString(),
			pdfjs: webview.asWebviewUri(vscode.Uri.joinPath(pdfjsFolder, 'pdf.min.mjs')).toString(),
			worker: webview.asWebviewUri(vscode.Uri.joinPath(pdfjsFolder, 'pdf.worker.min.mjs')).toString(),
		});
	}

	/**
	 * A PDF's download page. When an extension contributes a PDF editor (and `offerViewer`), the page
	 * also offers it, as a button the person clicks, named as the third-party extension it is: the desk
	 * cannot tell which pdf.js it is built on (those before 4.2.67 run what a crafted PDF carries, CVE-2024-4367).
	 */
	private showPdfDownload(ref: AttachmentRef, row: AttachmentRow, reason: string, offerViewer = true): void {
		const viewer = offerViewer ? pdfViewer() : undefined;
		if (!viewer) {
			this.showDownload(ref, row, 'application/pdf', reason);
			return;
		}
		this.showDownload(
			ref,
			row,
			'application/pdf',
			reason,
			[link('agentDesk.openAttachmentInPdfViewer', ref, `Open in ${viewer.extensionName}`)],
			[
				`${viewer.extensionName} (${viewer.extensionId}) is a PDF viewer from a third-party extension installed in this editor, not part of Agent Desk. The desk cannot check which version of pdf.js it is built on; viewers built on pdf.js before 4.2.67 can be made to run code by a crafted PDF (CVE-2024-4367). Open the PDF there only if you trust the viewer and where the file came from.`,
			],
		);
	}

	/** The PDF in the installed viewer, on the person's request from the PDF's page. */
	async openInPdfViewer(ref: AttachmentRef): Promise<void> {
		const viewer = pdfViewer();
		if (!viewer) {
			throw new Error('No PDF viewer extension is installed in this editor any more.');
		}
		const content = await this.read(ref);
		if (!content.inline || content.inline_type !== 'application/pdf' || content.truncated) {
			throw new Error(
				`${content.row.name} is not a whole PDF (${content.inline ? content.inline_type : 'its bytes are not a type the desk shows'}).`,
			);
		}
		// This window's folder, one per attachment, a file name of safe characters only: the recorded name never becomes a path as it is.
		// What this window wrote for the attachment before is removed first (and waited for).
		const folder = vscode.Uri.joinPath(this.previewFolder, ref.id);
		await vscode.workspace.fs.delete(folder, { recursive: true, useTrash: false }).then(undefined, () => undefined);
		await vscode.workspace.fs.createDirectory(folder);
		const file = vscode.Uri.joinPath(folder, safeFileName(content.row.name, 'pdf'));
		await vscode.workspace.fs.writeFile(file, Buffer.from(content.base64, 'base64'));
		await vscode.commands.executeCommand('vscode.openWith', file, viewer.viewType);
	}

	/** The Save As… page of `row`, its facts naming the type it is `shownAs` (the checked one, else octet-stream). */
	private showDownload(
		ref: AttachmentRef,
		row: AttachmentRow,
		shownAs: string,
		reason: string,
		extraLinks: string[] = [],
		more: string[] = [],
	): void {
		const header: PageHeader = {
			name: row.name,
			facts: headerFacts(row, shownAs),
			links: [link('agentDesk.saveAttachmentAs', ref, 'Save As…', true), ...extraLinks],
		};
		this.showPanel(ref, 'download', baseName(row.name), downloadPage({ header, reason, more, nonce: newNonce() }));
	}

	/** One tab per attachment and view: shown again if open. Scripts off, no local resources, only the preview commands as links. */
	private showPanel(ref: AttachmentRef, view: string, title: string, html: string): void {
		const key = this.panelKey(ref, view);
		let panel = this.panels.get(key);
		if (panel) {
			panel.reveal();
		} else {
			panel = vscode.window.createWebviewPanel('agentDesk.attachment', title, vscode.ViewColumn.Active, {
				enableScripts: false,
				enableForms: false,
				enableCommandUris: [...previewPageCommands],
				localResourceRoots: [],
			});
			const created = panel;
			created.onDidDispose(() => this.panels.delete(key));
			this.panels.set(key, created);
		}
		panel.webview.html = html;
	}

	private panelKey(ref: AttachmentRef, view: string): string {
		return `${encodeURIComponent(ref.project)}/${ref.task}/${ref.id}/${view}`;
	}
}
