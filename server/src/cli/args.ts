/**
 * The command line's arguments: the options `desk` knows, and the checks every command makes on
 * what follows its name. A wrong argument is a {@link UsageError} (exit 64, the usage after it).
 */
import { parseArgs } from 'node:util';

/** Bad usage: the message, then the usage text, on stderr; exit code 64. */
export class UsageError extends Error {}

/** Every option of every command (strict: an unknown option is bad usage). */
export function parseCommandLine(argv: string[]) {
	return parseArgs({
		args: argv,
		allowPositionals: true,
		strict: true,
		options: {
			store: { type: 'string' },
			library: { type: 'boolean', default: false },
			json: { type: 'boolean', default: false },
			verbose: { type: 'boolean', short: 'v', default: false },
			help: { type: 'boolean', short: 'h', default: false },
			dir: { type: 'string' },
			new: { type: 'string' },
			skill: { type: 'string' },
			asset: { type: 'string' },
			project: { type: 'string' },
			main: { type: 'boolean', default: false },
			'allow-git-dir': { type: 'boolean', default: false },
			all: { type: 'boolean', default: false },
			version: { type: 'string' },
			note: { type: 'string' },
			put: { type: 'string', multiple: true },
			name: { type: 'string' },
			url: { type: 'string' },
			text: { type: 'string' },
			file: { type: 'string' },
			from: { type: 'string' },
			repo: { type: 'string' },
			ref: { type: 'string' },
			'ticket-file': { type: 'string' },
			ticket: { type: 'string' },
			role: { type: 'string' },
			nodes: { type: 'string' },
			files: { type: 'string', multiple: true },
			copy: { type: 'string', multiple: true },
			settings: { type: 'string' },
			agent: { type: 'string' },
			isolation: { type: 'string' },
			reason: { type: 'string' },
			decision: { type: 'string' },
			patchset: { type: 'string' },
			rationale: { type: 'string' },
			'request-id': { type: 'string' },
			root: { type: 'string' },
			about: { type: 'string' },
			prompt: { type: 'string' },
			'prompt-file': { type: 'string' },
			'from-run': { type: 'string' },
			'repo-path': { type: 'string' },
			since: { type: 'string' },
			kind: { type: 'string' },
			title: { type: 'string' },
		},
	});
}

/** The options as parsed. */
export type OptionValues = ReturnType<typeof parseCommandLine>['values'];

export function expectArgs(rest: string[], count: number, command: string): void {
	if (rest.length !== count) {
		throw new UsageError(
			`${command} takes ${count === 0 ? 'no arguments' : `${count} argument${count > 1 ? 's' : ''}`}`,
		);
	}
}

export function oneId(rest: string[], command: string): string {
	expectArgs(rest, 1, command);
	return rest[0]!;
}

export function positiveInteger(text: string, what: string): number {
	const n = Number(text);
	if (!Number.isSafeInteger(n) || n < 1 || String(n) !== text.trim()) {
		throw new UsageError(`${what} must be a version number (1, 2, ...), not ${JSON.stringify(text)}`);
	}
	return n;
}
