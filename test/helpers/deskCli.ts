import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { findProjectRoot } from './temp';

/** The built `desk` command line (`npm run build` makes it). */
export const deskJs = path.join(findProjectRoot(), 'dist', 'desk.js');

/** What one `desk` command printed and how it ended. */
export interface DeskOutput {
	code: number | null;
	stdout: string;
	stderr: string;
}

/**
 * Runs the real `desk` command line with `args` and captures its output as text. DESK_STORE is
 * cleared so only `--store` chooses the library. The timeout only bounds a command that would never
 * end on a broken build; the assertions are on what it printed and its exit code.
 */
export function desk(...args: string[]): DeskOutput {
	const result = spawnSync(process.execPath, [deskJs, ...args], {
		encoding: 'utf8',
		env: { ...process.env, DESK_STORE: '' },
		timeout: 120_000,
		maxBuffer: 64 * 1024 * 1024,
	});
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A task of `project`, made as a person makes one at the command line: `ticket` on the card and Go,
 * the run not carried out (attachments belong to a task the project holds).
 */
export function launchedTask(store: string, project: string, ticket: string): string {
	for (const args of [
		['card', 'suggest', '--project', project, '--ticket', ticket],
		['card', 'go', '--project', project, '--json'],
	]) {
		const done = desk('--store', store, ...args);
		if (done.code !== 0) {
			throw new Error(`desk ${args.join(' ')}: ${done.stderr}`);
		}
		if (args[1] === 'go') {
			return (JSON.parse(done.stdout) as { task: string }).task;
		}
	}
	throw new Error('unreachable');
}
