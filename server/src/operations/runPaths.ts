/**
 * The paths an agent names in a desk tool call, confined to its run's folders as the sandbox
 * confines the agent itself: inside its work folder or its outbox, never into a folder the sandbox
 * hides (`.desk`, where the project's database and other tasks' attachments lie; the outbox inside
 * it excepted), never a write into one it shows read-only (`.git`, `.vscode`, `.claude`, `.agents`
 * of the person's own checkout: git's config runs commands on the person's machine), and never
 * through a link. A file is opened from the run's folder one component at a time, each without
 * following a link (ConfinedDir), and read only through the descriptor that was checked, so a
 * folder swapped for a link after the check leads nowhere.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeskError, isDeskError } from '../core/errors';
import { ConfinedDir, type OpenedFile } from '../store/confinedDir';
import type { FolderIdentity } from '../assets/ports';
import type { Actor } from './actor';

export type AgentActor = Extract<Actor, { kind: 'agent' }>;

/** What a path is for: read (a file to copy from) or written (a folder an asset lives in, a file put there). */
export type RunPathUse = 'read' | 'write';

/** An agent's path placed under one of its run's folders. */
export interface RunPath {
	/** The run's folder it lies in (the work folder or the outbox, as given or as its real path). */
	readonly root: string;
	/** The names below `root`, one a component (none: the folder itself). */
	readonly parts: readonly string[];
	/** `root` joined with `parts`. */
	readonly path: string;
	/** The field of the call that named it, for messages. */
	readonly field: string;
}

/**
 * Places `named` (relative: against the work folder) under the agent's outbox or work folder, read
 * without following any link (`..` is taken by name: a link on the way is refused when opened), and
 * refuses it (`operation.outsideRun`) outside both, inside a hidden folder, or for `write` inside a
 * read-only one.
 */
export function placeInRun(actor: AgentActor, named: string, field: string, use: RunPathUse): RunPath {
	const file = path.resolve(actor.workFolder, named);
	const outside = () =>
		new DeskError(
			'operation.outsideRun',
			`${field}: a run may name only files inside its work folder or its outbox, not ${file}.`,
			{ field, path: file },
		);
	// The outbox first: it lies inside the hidden `.desk/`.
	for (const root of [actor.outbox, actor.workFolder]) {
		for (const seen of rootsOf(root)) {
			const parts = partsBelow(seen, file);
			if (parts === undefined) {
				continue;
			}
			if (root === actor.workFolder) {
				const hidden = (actor.hiddenInside ?? []).find((folder) => startsWith(parts, partsBelow(root, folder)));
				if (hidden !== undefined) {
					throw new DeskError(
						'operation.outsideRun',
						`${field}: ${file} is inside ${hidden}, which a run does not see.`,
						{ field, path: file },
					);
				}
				const readOnly =
					use === 'write'
						? (actor.readOnlyInside ?? []).find((folder) => startsWith(parts, partsBelow(root, folder)))
						: undefined;
				if (readOnly !== undefined) {
					throw new DeskError(
						'operation.outsideRun',
						`${field}: ${file} is inside ${readOnly}, which a run may read but not write.`,
						{ field, path: file },
					);
				}
			}
			return { root: seen, parts, path: path.join(seen, ...parts), field };
		}
	}
	throw outside();
}

/**
 * The folder at `place`, checked from its run folder down, one component at a time without following
 * a link: a link on the way is refused (`operation.outsideRun`); the part that does not exist yet (a
 * new asset's folder) is left to be made. Returns its path and, when it exists, which folder it is
 * (device and inode): what opens it again by its path checks it is still that one.
 */
export function folderInRun(place: RunPath): { path: string; folder?: FolderIdentity } {
	let dir = openRoot(place);
	try {
		for (const index of place.parts.keys()) {
			const next = childOrRefused(dir, place, index);
			if (next === undefined) {
				return { path: place.path };
			}
			dir.close();
			dir = next;
		}
		const { dev, ino } = dir.stat();
		return { path: place.path, folder: { dev, ino } };
	} finally {
		dir.close();
	}
}

/**
 * `body` with the regular file at `place`, opened from its run folder one component at a time, never
 * through a link, and read only through that descriptor. Refused (`operation.outsideRun`): a link
 * anywhere on the way, a hard link (a file with another name, maybe outside the run's folders). A
 * missing file is `attachment.unavailable`, one that is no regular file `attachment.notRegular`.
 */
export function withFileInRun<T>(place: RunPath, body: (file: OpenedFile) => T): T {
	const last = place.parts[place.parts.length - 1];
	if (last === undefined) {
		throw new DeskError('attachment.notRegular', `${place.path} is a folder, not a regular file.`, {
			path: place.path,
		});
	}
	let dir = openRoot(place);
	try {
		for (const index of place.parts.keys()) {
			if (index === place.parts.length - 1) {
				break;
			}
			const next = childOrRefused(dir, place, index);
			if (next === undefined) {
				throw new DeskError('attachment.unavailable', `${place.path} does not exist.`, { path: place.path });
			}
			dir.close();
			dir = next;
		}
		const opened = dir;
		try {
			return opened.withFile(last, (file) => {
				if (file.stat.nlink > 1) {
					throw new DeskError(
						'operation.outsideRun',
						`${place.field}: ${place.path} is a hard link (a file with another name, maybe outside the run's folders): not read.`,
						{ field: place.field, path: place.path },
					);
				}
				return body(file);
			});
		} catch (error) {
			throw linkRefusal(opened, place, place.parts.length - 1, error);
		}
	} finally {
		dir.close();
	}
}

function openRoot(place: RunPath): ConfinedDir {
	// The run's folder itself is the desk's choice, reached as given; everything below is confined.
	return ConfinedDir.open(place.root, true);
}

/** The sub-folder `place.parts[index]` of `dir`, undefined when missing; a link there is refused. */
function childOrRefused(dir: ConfinedDir, place: RunPath, index: number): ConfinedDir | undefined {
	try {
		return dir.child(place.parts[index]!);
	} catch (error) {
		throw linkRefusal(dir, place, index, error);
	}
}

/** `operation.outsideRun` when the entry `place.parts[index]` in `dir` is a link; else `error` as it was. */
function linkRefusal(dir: ConfinedDir, place: RunPath, index: number, error: unknown): unknown {
	if (isDeskError(error, 'attachment.notRegular') && dir.lstat(place.parts[index]!)?.isSymbolicLink()) {
		const link = path.join(place.root, ...place.parts.slice(0, index + 1));
		return new DeskError(
			'operation.outsideRun',
			`${place.field}: ${link} is a link; a run's paths are never followed through a link.`,
			{ field: place.field, path: place.path },
		);
	}
	return error;
}

/** The run folder as given, and as its real path when that differs (an agent may name either). */
function rootsOf(root: string): string[] {
	try {
		const real = fs.realpathSync(root);
		return real === root ? [root] : [root, real];
	} catch {
		return [root];
	}
}

/** The names of `file` below `root` (none when it is `root`), or undefined when it is not inside. */
function partsBelow(root: string, file: string): string[] | undefined {
	const rel = path.relative(root, file);
	if (rel === '') {
		return [];
	}
	if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
		return undefined;
	}
	return rel.split(path.sep);
}

function startsWith(parts: readonly string[], prefix: readonly string[] | undefined): boolean {
	return prefix !== undefined && prefix.length <= parts.length && prefix.every((name, i) => parts[i] === name);
}
