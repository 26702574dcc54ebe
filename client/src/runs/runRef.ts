import type { WindowProject } from '../common/windowProjects';
import type { RunTextTarget } from './runConversation';
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

/** An intent, a task or a run a Runs view row names: what Cancel Intent, Cancel Task and Follow Up… act on. */
export interface RowRef {
	project: string;
	kind: 'intent' | 'task' | 'run';
	id: string;
	/** The row's words: the intent's first line, the task's or the run's task's title. */
	label: string;
	/** The intent's or task's status (a run's state words for a run). */
	status: string;
}

/**
 * The row a Runs view command was given, when it is one of `kinds` of a project of this window;
 * undefined for anything else (a command from the palette gets no row).
 */
export function rowRef(
	node: unknown,
	kinds: ReadonlyArray<RowRef['kind']>,
	windowProjects: readonly WindowProject[],
): RowRef | undefined {
	const row = node as Partial<RunsViewNode> | undefined;
	if (
		!row ||
		typeof row !== 'object' ||
		typeof row.project !== 'string' ||
		!kinds.includes(row.type as RowRef['kind'])
	) {
		return undefined;
	}
	if (!windowProjects.some((p) => p.name === row.project)) {
		throw new Error('That names nothing of this window.');
	}
	let ref: RowRef | undefined;
	if (row.type === 'intent' && row.view) {
		const { intent, status } = row.view;
		ref = { project: row.project, kind: 'intent', id: intent.object_id, label: firstLine(intent.prompt), status };
	} else if (row.type === 'task' && row.view) {
		const { task } = row.view;
		ref = { project: row.project, kind: 'task', id: task.object_id, label: task.title, status: task.status };
	} else if (row.type === 'run' && row.run) {
		ref = { project: row.project, kind: 'run', id: row.run.id, label: row.title ?? '', status: row.run.status };
	}
	if (!ref || !runIdPattern.test(ref.id)) {
		throw new Error('That names nothing of this window.');
	}
	return ref;
}

function firstLine(text: string): string {
	return text.trim().split('\n', 1)[0] ?? '';
}

/**
 * The text of a run a link names (the run page's *Open in a tab*, *Open log*; a Runs view row): a
 * call's input or output, a check's log, a whole message; undefined for anything else (a link or a
 * caller may pass anything).
 */
export function runTextTarget(value: unknown): RunTextTarget | undefined {
	if (typeof value !== 'object' || value === null) {
		return undefined;
	}
	const v = value as Record<string, unknown>;
	const id = (x: unknown): x is string => typeof x === 'string' && runIdPattern.test(x);
	if (id(v['call']) && (v['part'] === 'input' || v['part'] === 'output')) {
		return { call: v['call'], part: v['part'] };
	}
	if (id(v['evidence'])) {
		return { evidence: v['evidence'] };
	}
	if (typeof v['message'] === 'number' && Number.isSafeInteger(v['message']) && v['message'] >= 0) {
		return { message: v['message'] };
	}
	return undefined;
}
