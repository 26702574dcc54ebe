/**
 * Where a command's answer goes: JSON with --json, else human text, both through the terminal
 * guard of `terminal.ts`.
 */
import { jsonForTerminal, writeMessage } from './terminal';

export interface Output {
	json: boolean;
	/** Whether stdout is a terminal (default: `process.stdout.isTTY`): `cat` output is escaped there. */
	toTerminal?: boolean;
	write(text: string | Uint8Array): void;
}

/**
 * Every record and line of text the command line prints: JSON with --json (terminal-inert escapes),
 * else the human text through {@link writeMessage}. Formatters pass each untrusted field through
 * `t` (one line, every control shown as an escape); writeMessage is the guard behind them.
 */
export function print(out: Output, value: unknown, human: () => string): void {
	if (out.json) {
		out.write(jsonForTerminal(value) + '\n');
	} else {
		writeMessage(out, human() + '\n');
	}
}

/**
 * The stored bytes of a file (`asset cat`, `task attachments cat`): as they are into a pipe or a
 * file; to a terminal as text with its controls escaped, since the terminal would obey them.
 */
export function writeBytes(out: Output, bytes: Uint8Array): void {
	if (out.toTerminal ?? process.stdout.isTTY) {
		writeMessage(out, Buffer.from(bytes).toString('utf8'));
	} else {
		out.write(bytes);
	}
}
