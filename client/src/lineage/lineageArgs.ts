import type { WindowProject } from '../common/windowProjects';

/*
 * What a lineage or memory command's arguments name: a row of the Runs or Memory view (its menus
 * pass the node), or strings from a run page's link or a notification (project, id). A caller may pass
 * anything: what names no project of this window, or an id of the wrong shape, is an error. No VS
 * Code import: tested in plain Node.
 */

/** Ids of runs, tasks and board messages (object ids, UUIDs). */
const idPattern = /^[0-9A-Za-z][0-9A-Za-z._:-]{0,127}$/;
/** A root's name (as the desk checks it). */
export const rootNamePattern = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const wrong = (what: string) => new Error(`That names no ${what} of this window.`);

function field(value: unknown, key: string): unknown {
	return value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function checked<T extends { project: string }>(
	ref: T,
	projects: readonly WindowProject[],
	ids: unknown[],
	what: string,
): T {
	if (
		!projects.some((p) => p.name === ref.project) ||
		!ids.every((id) => typeof id === 'string' && idPattern.test(id))
	) {
		throw wrong(what);
	}
	return ref;
}

/** A run: (project, run id), a run's row, a branch's row (its latest run) or a Board row (its run). */
export function runArg(
	first: unknown,
	second: unknown,
	projects: readonly WindowProject[],
): { project: string; runId: string } | undefined {
	if (typeof first === 'string' && typeof second === 'string') {
		return checked({ project: first, runId: second }, projects, [second], 'run');
	}
	const type = field(first, 'type');
	const project = field(first, 'project');
	let runId: unknown;
	if (type === 'run') {
		runId = field(field(first, 'run'), 'id');
	} else if (type === 'board') {
		runId = field(first, 'runId');
	} else if (type === 'branch') {
		const runs = field(field(first, 'branch'), 'runs');
		runId = Array.isArray(runs) ? field(runs[runs.length - 1], 'id') : undefined;
	} else {
		return undefined;
	}
	if (typeof project !== 'string') {
		throw wrong('run');
	}
	return checked({ project, runId: runId as string }, projects, [runId], 'run');
}

/** A board: a Board row, a branch's row, or a run's row (its task's board). */
export function boardArg(
	first: unknown,
	projects: readonly WindowProject[],
): { project: string; node: string } | undefined {
	const type = field(first, 'type');
	const project = field(first, 'project');
	let node: unknown;
	if (type === 'board') {
		node = field(first, 'node');
	} else if (type === 'branch') {
		node = field(field(field(first, 'branch'), 'node'), 'node');
	} else if (type === 'run') {
		node = field(field(first, 'run'), 'task');
	} else if (type === 'root') {
		node = field(first, 'tally');
	} else {
		return undefined;
	}
	if (typeof project !== 'string') {
		throw wrong('board');
	}
	return checked({ project, node: node as string }, projects, [node], 'board');
}

/** A report: (project, report id) or a Board row's report. */
export function reportArg(
	first: unknown,
	second: unknown,
	projects: readonly WindowProject[],
): { project: string; report: string } | undefined {
	if (typeof first === 'string' && typeof second === 'string') {
		return checked({ project: first, report: second }, projects, [second], 'report');
	}
	if (field(first, 'type') !== 'message') {
		return undefined;
	}
	const message = field(first, 'message');
	const project = field(first, 'project');
	if (typeof project !== 'string' || field(message, 'kind') !== 'report') {
		throw wrong('report');
	}
	return checked({ project, report: field(message, 'id') as string }, projects, [field(message, 'id')], 'report');
}

/** A root: a root's row in the Runs or Memory view, or (project, root name). */
export function rootArg(
	first: unknown,
	second: unknown,
	projects: readonly WindowProject[],
): { project: string; root: string } | undefined {
	let project: unknown;
	let root: unknown;
	if (typeof first === 'string' && typeof second === 'string') {
		[project, root] = [first, second];
	} else if (
		field(first, 'type') === 'root' ||
		field(first, 'type') === 'memoryRoot' ||
		field(first, 'type') === 'memoryEmpty'
	) {
		project = field(first, 'project');
		root = field(field(first, 'root'), 'name');
	} else if (field(first, 'type') === 'memory') {
		project = field(first, 'project');
		root = field(first, 'root');
	} else {
		return undefined;
	}
	if (
		typeof project !== 'string' ||
		typeof root !== 'string' ||
		!rootNamePattern.test(root) ||
		!projects.some((p) => p.name === project)
	) {
		throw wrong('root');
	}
	return { project, root };
}

/** A memory: a memory's row in the Memory view. */
export function memoryArg(
	first: unknown,
	projects: readonly WindowProject[],
): { project: string; root: string; id: string; title: string } | undefined {
	if (field(first, 'type') !== 'memory') {
		return undefined;
	}
	const root = rootArg(first, undefined, projects)!;
	const id = field(field(first, 'entry'), 'id');
	const title = field(field(field(first, 'entry'), 'memory'), 'title');
	return checked(
		{ ...root, id: id as string, title: typeof title === 'string' ? title : String(id) },
		projects,
		[id],
		'memory',
	);
}
