import * as path from 'node:path';
import type * as vscode from 'vscode';
import { RecoverStore, type DeskErrorJson } from '../../../server/src/protocol/protocol';
import { DeskRequestError, type DeskClient } from './deskClient';
import { showErrorMessage, showInformationMessage } from './messages';
import type { ReportError } from './reportError';

/** A store the desk set aside as damaged, waiting for the person's choice (`desk/store/recover`). */
export function isDamagedStore(error: DeskErrorJson): boolean {
	return error.code === 'store.corrupt' && error.data['damaged'] === true;
}

/** What a recovery needs of the extension: the desk, the log, and how to carry on once a store is back. */
export interface RecoveryHost {
	desk: DeskClient;
	output: vscode.LogOutputChannel;
	reportError: ReportError;
	/** The library was recovered: the desk is started again. */
	restart(): Promise<unknown>;
	/** A project's database was recovered: the workspace is opened again. */
	reopenWorkspace(): Promise<void>;
}

/**
 * A store the desk set aside as damaged: one message naming it and the kept copy, with a button
 * per choice the server offers (and Open Log). Nothing is chosen for the person; dismissing the
 * message leaves the store refused, and the next start asks again. `repo` names the project's
 * repository; without it the store is the library.
 */
export async function offerRecovery(host: RecoveryHost, error: DeskErrorJson, repo?: string): Promise<void> {
	const { desk, output } = host;
	output.error(`${error.message} [${error.code}]`);
	const labels: Record<string, string> = {
		restore: 'Restore Kept Copy',
		empty: 'Start Empty',
		rebuild: 'Rebuild from History',
	};
	const choices = (Array.isArray(error.data['choices']) ? (error.data['choices'] as string[]) : []).filter(
		(c) => c in labels,
	);
	const picked = await showErrorMessage(`Agent Desk: ${error.message}`, ...choices.map((c) => labels[c]!), 'Open Log');
	if (picked === 'Open Log') {
		output.show(true);
		return;
	}
	const choice = choices.find((c) => labels[c] === picked);
	if (!choice) {
		return;
	}
	try {
		const result = await desk.request(RecoverStore, {
			store: repo === undefined ? 'library' : 'project',
			...(repo === undefined ? {} : { repo }),
			choice,
		});
		const rebuilt = result.rebuilt ? ` ${result.rebuilt.added} object(s) read back from refs/desk/history.` : '';
		const kept = result.attachmentsKept
			? ` ${result.attachmentsKept} attachment file(s) without a record are kept.`
			: '';
		output.warn(`${result.file}: recovered (${result.choice}); the damaged copy stays at ${result.keptAs ?? '(none)'}`);
		void showInformationMessage(
			`Agent Desk: ${path.basename(result.file)} recovered (${labels[result.choice]}).${rebuilt}${kept} The damaged copy stays at ${result.keptAs ?? '(none)'}.`,
		);
		if (repo === undefined) {
			await host.restart();
		} else {
			await host.reopenWorkspace();
		}
	} catch (failure) {
		host.reportError(failure);
		if (failure instanceof DeskRequestError && failure.deskError?.code === 'store.cannotRecover') {
			// Still damaged: the choices are still open.
			await offerRecovery(host, error, repo);
		}
	}
}
