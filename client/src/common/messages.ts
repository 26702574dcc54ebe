/**
 * The one way the extension shows a notification or a modal message. Messages carry names from
 * repositories, snapshot folders and agents; VS Code makes `[label](command:…)` in a message a link
 * that runs the command, so every message (and a modal's detail) goes through {@link messageText}
 * first. Button labels are the extension's own.
 */
import * as vscode from 'vscode';
import { messageText, visibleText } from './markdownText';

type Rest<T> = T[] | [vscode.MessageOptions, ...T[]];

function clean<T>(rest: Rest<T>): unknown[] {
	const [first, ...others] = rest as unknown[];
	if (first && typeof first === 'object' && !('title' in first)) {
		const options = first as vscode.MessageOptions;
		return [
			{ ...options, ...(options.detail !== undefined ? { detail: messageText(options.detail) } : {}) },
			...others,
		];
	}
	return rest as unknown[];
}

export function showInformationMessage<T extends string | vscode.MessageItem>(
	message: string,
	...rest: Rest<T>
): Thenable<T | undefined> {
	return (vscode.window.showInformationMessage as (m: string, ...r: unknown[]) => Thenable<T | undefined>)(
		messageText(message),
		...clean(rest),
	);
}

export function showWarningMessage<T extends string | vscode.MessageItem>(
	message: string,
	...rest: Rest<T>
): Thenable<T | undefined> {
	return (vscode.window.showWarningMessage as (m: string, ...r: unknown[]) => Thenable<T | undefined>)(
		messageText(message),
		...clean(rest),
	);
}

export function showErrorMessage<T extends string | vscode.MessageItem>(
	message: string,
	...rest: Rest<T>
): Thenable<T | undefined> {
	return (vscode.window.showErrorMessage as (m: string, ...r: unknown[]) => Thenable<T | undefined>)(
		messageText(message),
		...clean(rest),
	);
}

let routineLog: vscode.LogOutputChannel | undefined;

/** Where routine confirmations are also written, so that one missed in the status bar is still found. */
export function logRoutineMessagesTo(output: vscode.LogOutputChannel): void {
	routineLog = output;
}

/**
 * A routine confirmation (a launch, a snapshot, something saved or sent): ten seconds in the status
 * bar and a line in the Agent Desk log, never a notification, so that the ones that need the person
 * (a run to review, a report to answer, a failure) stand out.
 */
export function showStatusMessage(message: string, icon?: string): void {
	const text = visibleText(message);
	routineLog?.info(text);
	// The status bar draws `$(name)` as an icon; a name from a repository must read as written, so
	// the text is escaped and only the icon asked for here is drawn.
	vscode.window.setStatusBarMessage(`${icon ? `$(${icon}) ` : ''}${text.replace(/\$\(/g, '\\$(')}`, 10_000);
}
