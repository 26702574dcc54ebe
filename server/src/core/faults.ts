/**
 * Kill points: named moments between two durable effects (`branch.afterCommit`, `memory.afterRename`)
 * where a crash test stops the process to prove that a restart repeats phases, never effects. The
 * desk calls `faults.point(name)` there; in production it does nothing. A process started with the
 * environment variable `DESK_TEST_FAULTS` naming points (comma-separated) kills itself with SIGKILL
 * at the first of them it reaches: only tests set it, the extension never does.
 */
export interface Faults {
	point(name: string): void;
}

export const noFaults: Faults = { point() {} };

/** The environment variable that names the points a test process dies at. */
export const testFaultsVariable = 'DESK_TEST_FAULTS';

/** Faults from a value of {@link testFaultsVariable}: `kill` is called at a named point (SIGKILL of this process in the server and the CLI). */
export function faultsFrom(value: string | undefined, kill: (point: string) => void): Faults {
	const points = new Set(
		(value ?? '')
			.split(',')
			.map((p) => p.trim())
			.filter((p) => p.length > 0),
	);
	return points.size === 0 ? noFaults : { point: (name) => (points.has(name) ? kill(name) : undefined) };
}
