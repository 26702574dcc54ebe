import { DeskError } from '../core/errors';
import { readStoredObject } from '../core/storedJson';
import type { RunSettings } from './settings';

/** How a run is carried out, kept in run_control beside the Run. */
export interface RunPlacement {
	target: 'git' | 'snapshot';
	isolation: 'shared' | 'worktree' | 'folder';
	/** The folder the agent works in. */
	work_folder: string;
	/** The run's own folder in the library (worktree, target, materialised references). */
	run_folder: string;
	branch?: string;
	/** git: the tree the run started from (the shared checkout with its changes then, or the baseline). */
	start_tree?: string;
	/** snapshot: the target asset and the version the run began as. */
	target_asset?: string;
	target_version?: number;
	/** Paths the desk put into the work folder (installed skills), left out of the change and removed after. */
	installed: string[];
	/** The references' read-only folders: the only parts of the library the sandbox shows. */
	reference_folders: string[];
	agent: string;
	settings: RunSettings;
	isolated: boolean;
	isolation_note: string;
}

/** The version of the JSON a run_control row holds (`json`); a row without one is version 1, as written before versions. */
export const placementFormat = 1;

/** What a run_control row says of where its run works: the isolation it was claimed with, and the placement once it was placed. */
export interface StoredPlacement {
	/** Absent in a claim written before claims named it (`{}`, desks of 2026-11-30): not placed. */
	isolation?: RunPlacement['isolation'];
	placement?: RunPlacement;
}

/** The JSON of a claim: the isolation the run will have, before it is placed. */
export function claimJson(isolation: RunPlacement['isolation']): string {
	return JSON.stringify({ format: placementFormat, isolation });
}

/** The JSON of a placed run. */
export function placementJson(placement: RunPlacement): string {
	return JSON.stringify({ format: placementFormat, ...placement });
}

const isolations: ReadonlySet<unknown> = new Set(['shared', 'worktree', 'folder']);
const targets: ReadonlySet<unknown> = new Set(['git', 'snapshot']);

/**
 * The one reader of a run_control row's JSON. Refuses a format it does not know (`store.unknownSchema`)
 * and a shape it did not write (`store.corrupt`, naming the field), never guesses. A row written
 * before formats had versions reads as version 1; one placed before `reference_folders` existed
 * reads with none.
 */
export function readPlacement(json: string, runId: string): StoredPlacement {
	const bad = (field: string, problem: string) =>
		new DeskError('store.corrupt', `The run control of run ${runId} is not one this desk wrote: ${field} ${problem}.`, {
			run: runId,
			record: 'run_control',
			field,
		});
	const row = readStoredObject(json, placementFormat, {
		corrupt: (problem) => bad('json', `is ${problem}`),
		unknownFormat: (found) =>
			new DeskError(
				'store.unknownSchema',
				`The run control of run ${runId} has format ${JSON.stringify(found)}; this desk reads format ${placementFormat}. Update the desk.`,
				{ run: runId, record: 'run_control', format: found },
			),
	});
	if (row.isolation === undefined && row.work_folder === undefined) {
		return {};
	}
	if (!isolations.has(row.isolation)) {
		throw bad('isolation', 'is not shared, worktree or folder');
	}
	const isolation = row.isolation as RunPlacement['isolation'];
	if (row.work_folder === undefined) {
		return { isolation };
	}
	const text = (field: string, optional = false) => {
		if (!(typeof row[field] === 'string' || (optional && row[field] === undefined))) {
			throw bad(field, 'is not text');
		}
	};
	const texts = (field: string) => {
		if (!Array.isArray(row[field]) || !(row[field] as unknown[]).every((v) => typeof v === 'string')) {
			throw bad(field, 'is not a list of paths');
		}
	};
	if (!targets.has(row.target)) {
		throw bad('target', 'is not git or snapshot');
	}
	['work_folder', 'run_folder', 'agent', 'isolation_note'].forEach((field) => text(field));
	['branch', 'start_tree', 'target_asset'].forEach((field) => text(field, true));
	if (row.target_version !== undefined && !Number.isInteger(row.target_version)) {
		throw bad('target_version', 'is not a version number');
	}
	texts('installed');
	if (row.reference_folders !== undefined) {
		texts('reference_folders');
	}
	if (typeof row.isolated !== 'boolean') {
		throw bad('isolated', 'is not true or false');
	}
	if (row.settings === null || typeof row.settings !== 'object' || Array.isArray(row.settings)) {
		throw bad('settings', 'is not an object');
	}
	const fields = { ...row };
	delete fields.format;
	return {
		isolation,
		placement: {
			...fields,
			reference_folders: (row.reference_folders as string[] | undefined) ?? [],
		} as unknown as RunPlacement,
	};
}
