import * as vscode from 'vscode';
import type { DeskClient } from '../common/deskClient';
import type { ReportError } from '../common/reportError';
import { registerAttachmentCommands } from './attachmentCommands';
import { AttachmentPreviews, attachmentScheme } from './attachmentPreviews';
import { AttachmentsTreeProvider } from './attachmentsTree';

/** The Attachments feature: its view, the previews in editor tabs (`desk-attachment:` documents and pages) and its commands. */
export function activateAttachments(context: vscode.ExtensionContext, desk: DeskClient, reportError: ReportError) {
	const tree = new AttachmentsTreeProvider(desk, reportError);
	const previews = new AttachmentPreviews(desk, context.globalStorageUri, context.extensionUri);
	const view = vscode.window.createTreeView('agentDesk.attachments', { treeDataProvider: tree, showCollapseAll: true });
	context.subscriptions.push(
		tree,
		previews,
		view,
		tree.openRowsBySelection(view, 'agentDesk.attachments.openRow'),
		vscode.workspace.registerTextDocumentContentProvider(attachmentScheme, previews),
		...registerAttachmentCommands(desk, tree, previews, reportError),
	);
	return { tree, previews };
}
