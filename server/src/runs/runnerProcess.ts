import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { isAlive } from '../core/processes';

/**
 * Which process carries a run out, and the process groups of its agents: this process's runner
 * token, whether the runner a control row names is still alive, and signalling an agent's group.
 * Reads /proc (Linux): a pid alone may have been reused by another process.
 */

/** Fields 3 onwards of /proc/<pid>/stat (state first), or undefined when there is no such process. */
function statFields(pid: number): string[] | undefined {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		// The command name (field 2) may hold spaces and parentheses: count from its closing one.
		return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	} catch {
		return undefined;
	}
}

/** The kernel's start time of a process (field 22 of /proc/<pid>/stat), which a reused pid does not share. */
export function processStartTime(pid: number): string | undefined {
	return statFields(pid)?.[19];
}

/** This process's token: random, and its start time, so a reused pid is not taken for this process. */
export const runnerToken = `${randomBytes(8).toString('hex')}:${processStartTime(process.pid) ?? ''}`;

/**
 * The token a runner leaves on a run's claim once its part is over (see `RunControl.partOver`): no
 * process carries that run any more, though the one that did may live on.
 */
export function endedRunnerToken(token: string): string {
	return `${endedPrefix}${token}`;
}

const endedPrefix = 'ended:';

/** Is the process that wrote `token` still running? A live pid with another start time is another process. */
export function isRunnerAlive(pid: number, token: string): boolean {
	if (token.startsWith(endedPrefix)) {
		return false;
	}
	if (!isAlive(pid)) {
		return false;
	}
	const fields = statFields(pid);
	// A zombie carries nothing out: a runner killed after its parent was (a carrier whose desk died
	// first) waits there for a reaper that a container's first process may never be.
	if (fields?.[0] === 'Z' || fields?.[0] === 'X') {
		return false;
	}
	const started = token.split(':')[1];
	const now = fields?.[19];
	return !started || now === undefined || started === now;
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pgid, signal);
	} catch {
		// Gone already.
	}
}

/**
 * Signals a run's agent group only while it still is that run's agent: its leader's environment
 * names the run (a group number alone may have been reused by another process since). Whether it did.
 */
export function signalRunAgent(pgid: number, runId: string, signal: NodeJS.Signals): boolean {
	try {
		const environ = fs.readFileSync(`/proc/${pgid}/environ`);
		if (!environ.includes(Buffer.from(`DESK_RUN_ID=${runId}\0`))) {
			return false;
		}
	} catch {
		// Not there, or not ours to read: leave it.
		return false;
	}
	killGroup(pgid, signal);
	return true;
}

/** Stops an agent left running by a dead desk, only when the process group is still that run's agent. */
export function stopStrayAgent(pgid: number, runId: string): void {
	signalRunAgent(pgid, runId, 'SIGKILL');
}
