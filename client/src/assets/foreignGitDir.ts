import type * as vscode from 'vscode';
import { ImportAsset, type DeskErrorJson } from '../../../server/src/protocol/protocol';
import type { DeskClient } from '../common/deskClient';
import { showWarningMessage } from '../common/messages';
import type { ReportError } from '../common/reportError';

/** What adopting a foreign git folder needs of the extension. */
export interface AdoptionHost {
	desk: DeskClient;
	output: vscode.LogOutputChannel;
	reportError: ReportError;
	/** The folder was adopted: the workspace is opened again. */
	reopenWorkspace(): Promise<void>;
}

/**
 * A workspace folder whose `.git` leads to a git folder outside what the desk adopts by itself
 * (a `.git` file or link to another repository, a worktree of a repository not open here,
 * alternates reading another repository): a modal says where the git folder really is, and only
 * the person's "Adopt Anyway" adopts it (allowGitDir). Dismissed, nothing is adopted.
 */
export async function offerForeignGitDir(
	host: AdoptionHost,
	name: string,
	folderPath: string,
	error: DeskErrorJson,
): Promise<void> {
	const { desk, output } = host;
	output.warn(`${name}: ${error.message} [${error.code}]`);
	const gitDir = String(error.data['gitDir'] ?? '');
	const outside = Array.isArray(error.data['outside']) ? (error.data['outside'] as unknown[]).map(String) : [];
	const detail = [
		error.message,
		'',
		`Its git folder is really: ${gitDir}`,
		...(outside.length > 0 ? [`Outside the folder: ${outside.join(', ')}`] : []),
		'',
		'Adopt it only if you trust that folder: the desk will read its history and land runs into it.',
	].join('\n');
	const picked = await showWarningMessage(
		`Agent Desk: the git folder of ${name} is not inside it.`,
		{ modal: true, detail },
		'Adopt Anyway',
	);
	if (picked !== 'Adopt Anyway') {
		return;
	}
	try {
		await desk.requestOnce(ImportAsset, { dir: folderPath, project: name, main: true, allowGitDir: true });
		output.info(`${name}: adopted with its git folder at ${gitDir}, as the person allowed`);
		await host.reopenWorkspace();
	} catch (failure) {
		host.reportError(failure);
	}
}
