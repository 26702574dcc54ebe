import { spawn } from 'node:child_process';

/** A child process running `script` until stopped (a swapper, a writer; the script ends itself after its own time cap). */
export function background(script: string): { stop: () => Promise<unknown> } {
	const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
	const exited = new Promise((resolve) => child.on('exit', resolve));
	return {
		stop: () => {
			child.kill();
			return exited;
		},
	};
}

/**
 * Runs `step` until `enough()` says the race was met often enough, 10 s at most (a loaded machine
 * takes longer to meet it; the assertions after say whether it was met, never how fast).
 */
export async function race(enough: () => boolean | Promise<boolean>, step: () => Promise<void> | void): Promise<void> {
	const cap = Date.now() + 10_000;
	while (!(await enough()) && Date.now() < cap) {
		await step();
		await new Promise((resolve) => setImmediate(resolve));
	}
}
