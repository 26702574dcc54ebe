import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ManifestEntry } from '../assets/types';
import { DeskError } from '../core/errors';
import { ConfinedDir, shownName, utf8Name } from '../store/confinedDir';
import { tempPrefix } from '../store/durableFile';
import { writeInFolder } from '../store/folderFiles';

/** Folders deeper than this in a target folder are reported, not walked (as in a snapshot). */
const maxDepth = 256;

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
 * names the version and its files (glossary: Gate). Files come from the blob store through `read`, and are
 * written through folder descriptors (`writeInFolder`), never through a link.
 */
export function prepareTargetFolder(
	folder: string,
	marker: TargetMarker,
	read: (hash: string) => Buffer,
	keptCopy?: string,
): void {
	fs.mkdirSync(folder, { recursive: true });
	for (const file of marker.files) {
		writeInFolder(folder, file.path, read(file.hash), { executable: file.executable });
	}
	writeInFolder(folder, markerPath, Buffer.from(JSON.stringify(marker, null, '\t') + '\n'));
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
		throw new DeskError(
			'run.targetMoved',
			`The run folder's ${markerPath} cannot be read (${(error as Error).message}); the run's changes cannot be told apart.`,
			{ folder },
		);
	}
	if (marker.format !== 1 || !Array.isArray(marker.files)) {
		throw new DeskError('run.targetMoved', `The run folder's ${markerPath} is not a marker this desk wrote.`, {
			folder,
		});
	}
	return marker;
}

/**
 * The files that differ from the marker's: added, modified (content or executable bit) and deleted.
 * The folder is walked and every file read through descriptors (ConfinedDir): a folder the agent
 * swapped for a link is never followed. Links and other non-files, names that are not UTF-8, the
 * desk's temp files and folders deeper than 256 levels are not part of a snapshot: they go to
 * `skipped` (by name, with the reason) when given; `.desk/` and the `exclude`d paths (installed
 * skills) are the desk's own.
 */
export function targetChanges(
	folder: string,
	exclude: readonly string[] = [],
	markerFile?: string,
	skipped?: Array<{ path: string; reason: string }>,
): TargetChange[] {
	const marker = readMarker(folder, markerFile);
	const before = new Map(marker.files.map((f) => [f.path, f]));
	const seen = new Set<string>();
	const changes: TargetChange[] = [];
	const skip = (p: string, reason: string) => skipped?.push({ path: p, reason });
	const walk = (dir: ConfinedDir, rel: string, depth: number): void => {
		for (const entry of dir.rawEntries()) {
			const name = utf8Name(entry.name);
			const child = (rel === '' ? '' : `${rel}/`) + (name ?? shownName(entry.name));
			if (child === '.desk' || exclude.some((e) => child === e || child.startsWith(`${e}/`))) {
				continue;
			}
			if (name === undefined) {
				skip(child, 'a name that is not UTF-8 (shown with \\x escapes): not taken');
			} else if (name.startsWith(tempPrefix)) {
				skip(child, "a temporary file of the desk's: not content");
			} else if (entry.kind === 'dir') {
				if (depth >= maxDepth) {
					skip(child, `a folder deeper than ${maxDepth} levels: not walked`);
					continue;
				}
				let sub: ConfinedDir | undefined;
				try {
					sub = dir.child(name);
				} catch {
					skip(child, 'changed into a link or something other than a folder while it was read (never followed)');
					continue;
				}
				if (sub) {
					try {
						walk(sub, child, depth + 1);
					} finally {
						sub.close();
					}
				}
			} else if (entry.kind === 'file') {
				let opened: { fd: number; stat: fs.Stats };
				try {
					opened = dir.openFile(name);
				} catch {
					skip(child, 'changed into a link or something other than a file while it was read (never followed)');
					continue;
				}
				let bytes: Buffer;
				try {
					bytes = fs.readFileSync(opened.fd);
				} finally {
					fs.closeSync(opened.fd);
				}
				seen.add(child);
				const after = {
					hash: createHash('sha256').update(bytes).digest('hex'),
					size: bytes.length,
					executable: (opened.stat.mode & 0o111) !== 0,
					bytes,
				};
				const old = before.get(child);
				if (!old) {
					changes.push({ path: child, change_type: 'added', after });
				} else if (old.hash !== after.hash || old.executable !== after.executable) {
					changes.push({ path: child, change_type: 'modified', before: old, after });
				}
			} else {
				skip(child, entry.kind === 'link' ? 'a link (never followed)' : `a ${entry.kind}: not read`);
			}
		}
	};
	const root = ConfinedDir.open(folder);
	try {
		walk(root, '', 0);
	} finally {
		root.close();
	}
	for (const old of marker.files) {
		if (!seen.has(old.path)) {
			changes.push({ path: old.path, change_type: 'deleted', before: old });
		}
	}
	return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
