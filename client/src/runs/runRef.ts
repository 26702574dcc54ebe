import type { WindowProject } from '../common/windowProjects';
import type { RunsViewNode } from './runsTree';

/** A run of a project of this window. */
export interface RunRef {
	project: string;
	runId: string;
}

/** What a run id looks like (an object id); anything else is no run. */
const runIdPattern = /^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$/;

/**
 * A run named by a tree item (the Runs view's menus) or by (project, run id) (the run page's links,
 * the notifications), reduced to those two strings. Undefined when the arguments name no run; an
 * error when they name one outside this window's projects (a link or a caller may pass anything).
 */
export function runRef(first: unknown, second: unknown, windowProjects: readonly WindowProject[]): RunRef | undefined {
	let ref: RunRef | undefined;
	if (typeof first === 'string' && typeof second === 'string') {
		ref = { project: first, runId: second };
	} else {
		const node = first as Partial<RunsViewNode> | undefined;
		if (node && typeof node === 'object' && node.type === 'run') {
			const run = (node as { run?: { id?: unknown } }).run;
			const project = (node as { project?: unknown }).project;
			if (typeof project !== 'string' || typeof run?.id !== 'string') {
				throw new Error('That names no run of this window.');
			}
			ref = { project, runId: run.id };
		}
	}
	if (ref && (!windowProjects.some((p) => p.name === ref.project) || !runIdPattern.test(ref.runId))) {
		throw new Error('That names no run of this window.');
	}
	return ref;
}
