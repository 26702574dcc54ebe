/** The processes of a run, found through /proc: its agent's, and its carrier (glossary: Carrier). */
import * as fs from 'node:fs';

/** The processes whose environment names the run: its agent's (the agent and, sandboxed, bubblewrap). */
export function agentProcesses(run: string): number[] {
	return fs
		.readdirSync('/proc')
		.filter((p) => /^\d+$/.test(p))
		.filter((p) => {
			try {
				return fs.readFileSync(`/proc/${p}/environ`).includes(Buffer.from(`DESK_RUN_ID=${run}\0`));
			} catch {
				return false;
			}
		})
		.map(Number);
}

/** The carrier of a run of `library`: a `desk run carry` working in the library folder. */
export function carrierOf(library: string): number | undefined {
	for (const p of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
		try {
			const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
			if (argv.includes('carry') && argv.includes(library) && fs.readlinkSync(`/proc/${p}/cwd`) === library) {
				return Number(p);
			}
		} catch {
			// Gone meanwhile, or not ours.
		}
	}
	return undefined;
}

/** The first value `probe` gives (polled every 50 ms), or a failure naming `what` after `timeoutMs`. */
export async function probeUntil<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = probe();
		if (value !== undefined) {
			return value;
		}
		if (Date.now() > deadline) {
			throw new Error(`timed out waiting for ${what}`);
		}
		await new Promise((r) => setTimeout(r, 50));
	}
}
