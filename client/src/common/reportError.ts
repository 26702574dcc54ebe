import type * as vscode from 'vscode';
import { DeskRequestError } from './deskClient';
import { showErrorMessage } from './messages';

/** Shows a failure to the person; every feature gets one at activation. */
export type ReportError = (error: unknown) => void;

/** One message per failure, with "Open Log"; the details (and the desk's error code) go to the log. */
export function errorReporter(output: vscode.LogOutputChannel): ReportError {
	return (error) => {
		const message = error instanceof Error ? error.message : String(error);
		const code = error instanceof DeskRequestError && error.deskError ? ` [${error.deskError.code}]` : '';
		output.error(`${message}${code}`);
		void showErrorMessage(`Agent Desk: ${message}`, 'Open Log').then((choice) => {
			if (choice === 'Open Log') {
				output.show(true);
			}
		});
	};
}
