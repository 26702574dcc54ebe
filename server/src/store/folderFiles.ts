import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { isSafeRelativePath } from '../assets/manifest';
import { DeskError, isDeskError } from '../core/errors';
import { ConfinedDir, readLimited } from './confinedDir';
import { tempPrefix, writeAll } from './durableFile';

/**
 * Writing, removing and reading files inside a folder someone else may have planted links in (an
 * asset's working folder, a checkout an agent worked in). Every folder on the way is opened
 * through the descriptor of the one before it (ConfinedDir), never through a link, so a folder
 * swapped for a link between a check and a write leads nowhere; a file is replaced by rename in
 * that folder's descriptor, so nothing is ever written through a link. The temp file of a write
 * lies beside its target (a rename is atomic only within one file system) under `.desk-tmp-`; a
 * snapshot never takes such a file as content.
 */

export interface FolderWriteOptions {
	executable?: boolean;
	/** A link at the file's own place is replaced (never followed); otherwise it is refused. */
	replaceLink?: boolean;
	/** `folder` must be this one when opened: one its caller checked and that was swapped since is refused. */
	folderIs?: { readonly dev: number; readonly ino: number };
}

export function writeInFolder(folder: string, rel: string, bytes: Uint8Array, options: FolderWriteOptions = {}): void {
	const name = lastName(rel);
	const dir = openMadeParent(folder, rel, options.folderIs);
	try {
		const stat = dir.lstat(name);
		if (stat && !stat.isFile() && !(stat.isSymbolicLink() && options.replaceLink)) {
			throw new DeskError(
				'asset.unsafePath',
				`${rel} is ${stat.isSymbolicLink() ? 'a link' : 'not a file'}; nothing is written through it.`,
				{ path: rel },
			);
		}
		// Replace by rename: a link created at the target meanwhile is replaced, never followed.
		replaceByRename(dir, name, rel, `write ${rel}`, (temp) => {
			const fd = dir.createFile(temp, options.executable ? 0o755 : 0o644);
			try {
				writeAll(fd, bytes);
			} finally {
				fs.closeSync(fd);
			}
		});
	} finally {
		dir.close();
	}
}

/**
 * Puts the link `rel` pointing at `target` in place, replacing a file or link there by rename (never
 * following it); a link on the way is refused, as in `writeInFolder`, and missing folders are made.
 */
export function linkInFolder(folder: string, rel: string, target: string | Buffer): void {
	const name = lastName(rel);
	const dir = openMadeParent(folder, rel);
	try {
		const stat = dir.lstat(name);
		if (stat && !stat.isFile() && !stat.isSymbolicLink()) {
			throw new DeskError('asset.unsafePath', `${rel} is not a file; no link is put in its place.`, { path: rel });
		}
		replaceByRename(dir, name, rel, `put the link ${rel}`, (temp) => dir.createLink(temp, target));
	} finally {
		dir.close();
	}
}

/**
 * Makes `name` in `dir` by `make` under a temp name and a rename over whatever is there. On failure
 * the temp entry is removed and the error is `store.io` "Could not <doing>" for the file `rel`.
 */
function replaceByRename(
	dir: ConfinedDir,
	name: string,
	rel: string,
	doing: string,
	make: (temp: string) => void,
): void {
	const temp = `${tempPrefix}${randomBytes(6).toString('hex')}`;
	try {
		make(temp);
		dir.rename(temp, name);
	} catch (error) {
		try {
			dir.unlink(temp);
		} catch {
			// Left for the snapshot to skip; the write's own error is the one to report.
		}
		throw new DeskError('store.io', `Could not ${doing}: ${(error as Error).message}`, { path: rel }, { cause: error });
	}
}

/** Removes a file (or, with `replaceLink`, a link itself); a link on the way is refused, a missing file is fine. */
export function removeInFolder(
	folder: string,
	rel: string,
	options: Pick<FolderWriteOptions, 'replaceLink'> = {},
): void {
	const name = lastName(rel);
	const dir = openParent(folder, rel, false);
	if (dir === undefined) {
		return;
	}
	try {
		const stat = dir.lstat(name);
		if (!stat) {
			return;
		}
		if (!stat.isFile() && !(stat.isSymbolicLink() && options.replaceLink)) {
			throw new DeskError(
				'asset.unsafePath',
				`${rel} is ${stat.isSymbolicLink() ? 'a link' : 'not a file'}; it is not removed.`,
				{ path: rel },
			);
		}
		dir.unlink(name);
	} finally {
		dir.close();
	}
}

/**
 * Up to `maxBytes` of the regular file `rel` inside `folder`, read through descriptors (no link on
 * the way or at the end is followed, a FIFO is not waited on); undefined when it cannot be read so.
 */
export function readInFolder(folder: string, rel: string, maxBytes: number): Buffer | undefined {
	if (!isSafeRelativePath(rel)) {
		return undefined;
	}
	let dir: ConfinedDir | undefined;
	let fd: number | undefined;
	try {
		dir = openParent(folder, rel, false);
		if (dir === undefined) {
			return undefined;
		}
		fd = dir.openFile(lastName(rel)).fd;
		return readLimited(fd, maxBytes).bytes;
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) {
			fs.closeSync(fd);
		}
		dir?.close();
	}
}

/** As `openParent` making what is missing; a folder made and gone again at once (a race) is refused by name. */
function openMadeParent(folder: string, rel: string, folderIs?: FolderWriteOptions['folderIs']): ConfinedDir {
	const dir = openParent(folder, rel, true, folderIs);
	if (!dir) {
		throw new DeskError(
			'asset.unsafePath',
			`${rel}: a folder on the way went away while it was made; nothing is written.`,
			{ path: rel },
		);
	}
	return dir;
}

/**
 * The folder that holds `rel` inside `folder`, opened one component at a time through the
 * descriptor of the one before, each a real folder (a link is refused); made when `create`, else
 * undefined when one is missing. The caller closes it.
 */
export function openParent(
	folder: string,
	rel: string,
	create: boolean,
	folderIs?: FolderWriteOptions['folderIs'],
): ConfinedDir | undefined {
	if (!isSafeRelativePath(rel)) {
		throw new DeskError('asset.badPath', `${JSON.stringify(rel)} is not a path inside the folder.`, { path: rel });
	}
	let dir: ConfinedDir;
	try {
		// The root is the caller's (a checkout's top, an asset's folder, a run folder), reached as the
		// old path-based code did, a link at its end included; everything below is confined.
		dir = ConfinedDir.open(folder, true);
	} catch (error) {
		if (isDeskError(error, 'attachment.unavailable') && !create) {
			return undefined;
		}
		throw new DeskError('asset.unsafePath', `${folder} cannot be opened as a folder: ${(error as Error).message}`, {
			path: rel,
		});
	}
	if (folderIs && !sameFolder(dir.stat(), folderIs)) {
		dir.close();
		throw swappedFolder(folder);
	}
	const parts = rel.split('/').slice(0, -1);
	for (const [index, part] of parts.entries()) {
		let next: ConfinedDir | undefined;
		try {
			next = dir.child(part, create, 0o777);
		} catch (error) {
			dir.close();
			const where = parts.slice(0, index + 1).join('/');
			const link = isDeskError(error, 'attachment.notRegular');
			throw new DeskError(
				'asset.unsafePath',
				`${rel}: ${where} is ${link ? 'a link or not a folder' : `unreadable (${(error as Error).message})`}; nothing is written through it.`,
				{ path: rel },
			);
		}
		dir.close();
		if (next === undefined) {
			return undefined;
		}
		dir = next;
	}
	return dir;
}

/**
 * Removes the folder `rel` inside `folder` and everything in it, through descriptors: no link on the
 * way is followed and links inside are removed, never what they point to. Then removes the folders
 * above it up to (not including) `keepAbove` levels from the top, each only when empty. False (and
 * nothing removed) when `rel` is no longer a real folder reached through real folders.
 */
export function removeTreeInFolder(folder: string, rel: string, emptyParents = 0): boolean {
	const name = lastName(rel);
	let dir: ConfinedDir | undefined;
	try {
		dir = openParent(folder, rel, false);
	} catch {
		return false;
	}
	if (dir === undefined) {
		return false;
	}
	try {
		if (!dir.lstat(name)?.isDirectory()) {
			return false;
		}
		dir.removeTree(name);
	} catch {
		return false;
	} finally {
		dir.close();
	}
	// The folders above it, innermost first, each only when empty now.
	const parts = rel.split('/').slice(0, -1);
	for (let n = 0; n < emptyParents && parts.length > 0; n++) {
		const last = parts.pop()!;
		let parent: ConfinedDir | undefined;
		try {
			parent =
				parts.length === 0 ? ConfinedDir.open(folder, true) : openParent(folder, `${parts.join('/')}/${last}`, false);
		} catch {
			break;
		}
		if (!parent) {
			break;
		}
		const removed = parent.rmdir(last);
		parent.close();
		if (!removed) {
			break;
		}
	}
	return true;
}

function lastName(rel: string): string {
	if (!isSafeRelativePath(rel)) {
		throw new DeskError('asset.badPath', `${JSON.stringify(rel)} is not a path inside the folder.`, { path: rel });
	}
	return rel.split('/').pop()!;
}

/** Whether `stat` is of the folder `identity` names. */
export function sameFolder(stat: fs.Stats, identity: { readonly dev: number; readonly ino: number }): boolean {
	return stat.dev === identity.dev && stat.ino === identity.ino;
}

/** A folder its caller checked that is another one now (swapped for a link, say): nothing is read or written there. */
export function swappedFolder(folder: string): DeskError {
	return new DeskError(
		'asset.unsafePath',
		`${folder} is no longer the folder that was checked (swapped for a link or another folder); nothing is read or written there.`,
		{ folder },
	);
}

/**
 * Gives every folder under `folder` its write bit back, so that it can be removed (a run's
 * read-only references, a mount being rebuilt), through folder descriptors (fchmod): a folder
 * someone swapped for a link is never followed, so nothing outside changes mode.
 */
export function makeWritable(folder: string, dir?: ConfinedDir, depth = 0): void {
	let opened: ConfinedDir | undefined;
	try {
		opened = dir ?? ConfinedDir.open(folder);
		opened.chmod(0o755);
		for (const entry of opened.rawEntries()) {
			if (entry.kind === 'dir' && depth < 256) {
				let sub: ConfinedDir | undefined;
				try {
					try {
						sub = opened.child(entry.name);
					} catch (error) {
						// A folder whose read bit was taken cannot be opened: its mode is set by
						// name after lstat says it is a folder (a swap in between is the one residual window).
						if ((error as DeskError).data?.errno !== 'EACCES' || !opened.chmodFolderByName(entry.name, 0o755)) {
							throw error;
						}
						sub = opened.child(entry.name);
					}
					if (sub) {
						makeWritable(folder, sub, depth + 1);
					}
				} catch {
					// A link or a folder gone: not followed; best effort.
				} finally {
					sub?.close();
				}
			}
		}
	} catch {
		// Best effort.
	} finally {
		if (!dir) {
			opened?.close();
		}
	}
}
