import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ManifestEntry } from '../assets/types';
import { DeskError } from '../core/errors';

/** `.desk/target.json`: the version a snapshot target's run folder began as, and its files. */
export interface TargetMarker {
	format: 1;
	asset_id: string;
	asset_name: string;
	version: number;
	files: ManifestEntry[];
}

export const markerPath = '.desk/target.json';

export interface TargetChange {
	path: string;
	change_type: 'added' | 'modified' | 'deleted';
	before?: ManifestEntry;
	/** The file as the run left it (absent for a deleted file). */
	after?: { hash: string; size: number; executable: boolean; bytes: Buffer };
}

/**
 * Lays a snapshot version out as a run's target folder (not a git checkout), with the marker that
 * names the version and its files (§12). Files come from the blob store through `read`.
 */
export function prepareTargetFolder(folder: string, marker: TargetMarker, read: (hash: string) => Buffer, keptCopy?: string): void {
	fs.mkdirSync(folder, { recursive: true });
	for (const file of marker.files) {
		const target = path.join(folder, ...file.path.split('/'));
		fs.mkdirSync(path.dirname(target), { recursive: true });
		fs.writeFileSync(target, read(file.hash), { mode: file.executable ? 0o755 : 0o644 });
	}
	fs.mkdirSync(path.join(folder, '.desk'), { recursive: true });
	fs.writeFileSync(path.join(folder, markerPath), JSON.stringify(marker, null, '\t') + '\n');
	if (keptCopy) {
		// The marker in the folder is in the agent's reach; the changes are told from this copy.
		fs.writeFileSync(keptCopy, JSON.stringify(marker, null, '\t') + '\n');
	}
}

export function readMarker(folder: string, file = path.join(folder, markerPath)): TargetMarker {
	let marker: TargetMarker;
	try {
		marker = JSON.parse(fs.readFileSync(file, 'utf8')) as TargetMarker;
	} catch (error) {
		throw new DeskError('run.targetMoved', `The run folder's ${markerPath} cannot be read (${(error as Error).message}); the run's changes cannot be told apart.`, { folder });
	}
	if (marker.format !== 1 || !Array.isArray(marker.files)) {
		throw new DeskError('run.targetMoved', `The run folder's ${markerPath} is not a marker this desk wrote.`, { folder });
	}
	return marker;
}

/**
 * The files that differ from the marker's: added, modified (content or executable bit) and deleted.
 * Links and other non-files are not part of a snapshot and are skipped; `.desk/` and the `exclude`d
 * paths (installed skills) are the desk's own.
 */
export function targetChanges(folder: string, exclude: readonly string[] = [], markerFile?: string): TargetChange[] {
	const marker = readMarker(folder, markerFile);
	const before = new Map(marker.files.map((f) => [f.path, f]));
	const seen = new Set<string>();
	const changes: TargetChange[] = [];
	const walk = (rel: string): void => {
		for (const entry of fs.readdirSync(path.join(folder, rel), { withFileTypes: true })) {
			const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
			if (child === '.desk' || exclude.some((e) => child === e || child.startsWith(`${e}/`))) {
				continue;
			}
			if (entry.isDirectory()) {
				walk(child);
			} else if (entry.isFile()) {
				seen.add(child);
				const full = path.join(folder, ...child.split('/'));
				const bytes = fs.readFileSync(full);
				const after = { hash: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, executable: (fs.statSync(full).mode & 0o111) !== 0, bytes };
				const old = before.get(child);
				if (!old) {
					changes.push({ path: child, change_type: 'added', after });
				} else if (old.hash !== after.hash || old.executable !== after.executable) {
					changes.push({ path: child, change_type: 'modified', before: old, after });
				}
			}
		}
	};
	walk('');
	for (const old of marker.files) {
		if (!seen.has(old.path)) {
			changes.push({ path: old.path, change_type: 'deleted', before: old });
		}
	}
	return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
