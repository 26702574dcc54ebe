import type * as vscode from 'vscode';
import type { DeskClient } from './deskClient';
import { showErrorMessage, showWarningMessage } from './messages';
import type { DeskStatusBar } from './statusBar';

/**
 * A server that stops on its own (a crash, a kill, a broken message on its input) is started again
 * at once (`restart`) and the person is told with a notice; five stops within three minutes leave it
 * stopped, with an error. `restarts` lists what the person was told each time.
 */
export function restartOnUnexpectedExit(
	desk: DeskClient,
	output: vscode.LogOutputChannel,
	statusBar: DeskStatusBar,
	restart: () => void,
): { disposable: vscode.Disposable; restarts: readonly string[] } {
	const restarts: string[] = [];
	const recentStops: number[] = [];
	const disposable = desk.onDidExitUnexpectedly(({ reason }) => {
		const now = Date.now();
		recentStops.push(now);
		while (recentStops.length > 0 && recentStops[0]! < now - 3 * 60_000) {
			recentStops.shift();
		}
		if (recentStops.length >= 5) {
			const message = `Agent Desk: the desk server stopped ${recentStops.length} times in three minutes and was not started again${reason ? ` (last: ${reason})` : ''}. Use "Agent Desk: Restart Server" when ready.`;
			output.error(message);
			statusBar.show('error', 'The desk server stopped');
			void showErrorMessage(message, 'Open Log').then((choice) => choice && output.show(true));
			return;
		}
		const message = `Agent Desk: the desk server stopped unexpectedly${reason ? ` (${reason})` : ''}; a new one was started.`;
		restarts.push(message);
		output.warn(message);
		void showWarningMessage(message, 'Open Log').then((choice) => choice && output.show(true));
		restart();
	});
	return { disposable, restarts };
}
