import * as vscode from 'vscode';
import type { AgentFix } from '../../../server/src/protocol/protocol';
import { visibleText } from './markdownText';

/**
 * Carries out a fix of the agent check (glossary: Agent check), one click from the launch card or a
 * run that never started: the setting opened, or a terminal of its own running the command (a
 * sign-in, an install) where the person answers it. The terminal closes itself once the command
 * succeeds, and stays open on its error; `closed` resolves when it closes, for the check to look again.
 */
export function applyAgentFix(fix: AgentFix): { closed?: Promise<void> } {
	if (fix.kind === 'setting') {
		void vscode.commands.executeCommand('workbench.action.openSettings', fix.setting);
		return {};
	}
	const terminal = vscode.window.createTerminal({ name: visibleText(fix.title) });
	const closed = new Promise<void>((resolve) => {
		const listener = vscode.window.onDidCloseTerminal((closing) => {
			if (closing === terminal) {
				listener.dispose();
				resolve();
			}
		});
	});
	terminal.show();
	// `&&` reads the same in bash, zsh, fish 3 and PowerShell 7.
	terminal.sendText(`${fix.command} && exit`);
	return { closed };
}
