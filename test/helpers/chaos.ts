/**
 * Pieces of the random-kill loop (test/protocol/lineageChaos.test.ts): a seeded PRNG whose seed is
 * printed so a failure can be played again, a call to the real server that tells an answer, a
 * refusal (a DeskError) and a call lost because the server died apart, and the `desk` command line
 * run beside the servers, killed at a moment of the test's choosing.
 */
import { spawn } from 'node:child_process';
import type { DeskErrorJson } from '../../server/src/core/errors';
import type { ParamsOf, ResultOf } from '../../server/src/protocol/protocol';
import { deskJs } from './deskCli';
import type { ProtocolRequest, RunningServer } from './serverProcess';

/** mulberry32: small, fast and the same on every machine for one seed. */
export function seededRandom(seed: number): {
	next(): number;
	int(min: number, max: number): number;
	pick<T>(items: readonly T[]): T;
	chance(p: number): boolean;
} {
	let state = seed >>> 0;
	const next = () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		int: (min, max) => min + Math.floor(next() * (max - min + 1)),
		pick: (items) => items[Math.floor(next() * items.length)]!,
		chance: (p) => next() < p,
	};
}

export type Outcome<T> = { answer: T } | { refused: DeskErrorJson } | { lost: true };

/**
 * Sends one request and says how it ended: answered, refused with a DeskError, or lost because the
 * server died before it answered (the caller sends it again, with the same request id, to the next
 * server). Any other failure (bad params, an internal error) is the test's or the desk's bug: thrown.
 */
export async function attempt<D extends ProtocolRequest>(
	server: RunningServer,
	definition: D,
	params: ParamsOf<D>,
): Promise<Outcome<ResultOf<D>>> {
	const died = server.exited.then(() => ({ lost: true }) as const);
	try {
		return await Promise.race([server.call(definition, params).then((answer) => ({ answer })), died]);
	} catch (error) {
		const data = (error as { data?: unknown }).data as DeskErrorJson | undefined;
		if (data && typeof data.code === 'string') {
			return { refused: data };
		}
		// The connection closes a moment before the exit is seen.
		const gone = await Promise.race([died, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000))]);
		if (gone) {
			return gone;
		}
		throw new Error(`${definition.method} failed and the server lives: ${(error as Error).message}`, { cause: error });
	}
}

export function isAlive(server: RunningServer): boolean {
	return server.child.exitCode === null && server.child.signalCode === null;
}

/** How one `desk` command run ended: its exit code, or the signal that killed it, and what it printed. */
export interface CliRun {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

/**
 * Runs the built `desk` command line with `args` without blocking the test (a second writer beside
 * the servers), SIGKILLed after `killAfterMs` when given and still running.
 */
export function deskInBackground(args: string[], killAfterMs?: number): Promise<CliRun> {
	return new Promise((resolve) => {
		const child = spawn(process.execPath, [deskJs, ...args], {
			env: { ...process.env, DESK_STORE: '' },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
		child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
		const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
		child.once('close', (code, signal) => {
			clearTimeout(timer);
			resolve({ code, signal, stdout, stderr });
		});
	});
}
