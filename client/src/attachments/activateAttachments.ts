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
	context.subscriptions.push(
		tree,
		previews,
		vscode.window.createTreeView('agentDesk.attachments', { treeDataProvider: tree, showCollapseAll: true }),
		vscode.workspace.registerTextDocumentContentProvider(attachmentScheme, previews),
		...registerAttachmentCommands(desk, tree, previews, reportError),
	);
	return { tree, previews };
}
