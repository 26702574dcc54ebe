import { DeskError } from '../core/errors';
import { readStoredObject } from '../core/storedJson';

/**
 * `desk.target_changes`: the blob a snapshot target's PatchSet names, listing every file the run
 * changed against the version it began as, with the blobs of the files before and after. Written
 * when the PatchSet is made; read to land it, keep it as a checkpoint, and show its files.
 */
export interface TargetChangesRecord {
	format: 1;
	/** The target asset and the version the run began as. */
	asset?: string;
	version?: number;
	files: TargetChangedFile[];
}

export interface TargetChangedFile {
	path: string;
	change_type: 'added' | 'modified' | 'deleted';
	/** The blob of the file before (absent for an added file) and after (absent for a deleted one). */
	before?: string;
	after?: string;
	size: number;
	executable: boolean;
}

export const targetChangesFormat = 1;

export function targetChangesBytes(record: Omit<TargetChangesRecord, 'format'>): Buffer {
	return Buffer.from(
		JSON.stringify({ format: targetChangesFormat, asset: record.asset, version: record.version, files: record.files }),
		'utf8',
	);
}

const changeTypes: ReadonlySet<unknown> = new Set(['added', 'modified', 'deleted']);

/**
 * The one reader of a `desk.target_changes` blob (`hash` names it in errors). Refuses a format it
 * does not know (`store.unknownSchema`) and a shape it did not write (`store.corrupt`, naming the
 * field); a record without a format reads as format 1.
 */
export function readTargetChanges(bytes: Uint8Array, hash: string): TargetChangesRecord {
	const bad = (field: string, problem: string) =>
		new DeskError(
			'store.corrupt',
			`The list of a snapshot run's changes (${hash}) is not one this desk wrote: ${field} ${problem}.`,
			{ blob: hash, record: 'target_changes', field },
		);
	const record = readStoredObject(Buffer.from(bytes).toString('utf8'), targetChangesFormat, {
		corrupt: (problem) => bad('json', `is ${problem}`),
		unknownFormat: (found) =>
			new DeskError(
				'store.unknownSchema',
				`The list of a snapshot run's changes (${hash}) has format ${JSON.stringify(found)}; this desk reads format ${targetChangesFormat}. Update the desk.`,
				{ blob: hash, record: 'target_changes', format: found },
			),
	});
	if (record.asset !== undefined && typeof record.asset !== 'string') {
		throw bad('asset', 'is not an asset id');
	}
	if (record.version !== undefined && !Number.isInteger(record.version)) {
		throw bad('version', 'is not a version number');
	}
	if (!Array.isArray(record.files)) {
		throw bad('files', 'is not a list');
	}
	const files: TargetChangedFile[] = [];
	for (const [index, file] of (record.files as unknown[]).entries()) {
		const where = `files[${index}]`;
		if (file === null || typeof file !== 'object' || Array.isArray(file)) {
			throw bad(where, 'is not an object');
		}
		const f = file as Record<string, unknown>;
		if (typeof f.path !== 'string' || f.path === '') {
			throw bad(`${where}.path`, 'is not a path');
		}
		if (!changeTypes.has(f.change_type)) {
			throw bad(`${where}.change_type`, 'is not added, modified or deleted');
		}
		for (const side of ['before', 'after'] as const) {
			if (f[side] !== undefined && (typeof f[side] !== 'string' || !/^[0-9a-f]{64}$/.test(f[side]))) {
				throw bad(`${where}.${side}`, 'is not a blob name');
			}
		}
		if (typeof f.size !== 'number' || typeof f.executable !== 'boolean') {
			throw bad(`${where}`, 'has no size or executable bit');
		}
		files.push({
			path: f.path,
			change_type: f.change_type as TargetChangedFile['change_type'],
			...(f.before !== undefined ? { before: f.before as string } : {}),
			...(f.after !== undefined ? { after: f.after as string } : {}),
			size: f.size,
			executable: f.executable,
		});
	}
	return {
		format: 1,
		...(record.asset !== undefined ? { asset: record.asset as string } : {}),
		...(record.version !== undefined ? { version: record.version as number } : {}),
		files,
	};
}
