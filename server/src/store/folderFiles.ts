import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSafeRelativePath } from '../assets/manifest';
import { DeskError } from '../core/errors';
import { tempPrefix, writeAll } from './durableFile';

/**
 * Writing and removing files inside a folder someone else may have planted links in (an asset's
 * working folder, a checkout an agent worked in): every folder on the way is checked to be a real
 * folder, never a link, and a file is replaced by rename, so nothing is ever written through a link.
 */

export interface FolderWriteOptions {
	executable?: boolean;
	/** A link at the file's own place is replaced (never followed); otherwise it is refused. */
	replaceLink?: boolean;
}

export function writeInFolder(folder: string, rel: string, bytes: Uint8Array, options: FolderWriteOptions = {}): void {
	const dir = parentInFolder(folder, rel, true)!;
	const target = path.join(dir, rel.split('/').pop()!);
	const stat = lstatOrUndefined(target);
	if (stat && !stat.isFile() && !(stat.isSymbolicLink() && options.replaceLink)) {
		throw new DeskError('asset.unsafePath', `${rel} is ${stat.isSymbolicLink() ? 'a link' : 'not a file'}; nothing is written through it.`, { path: rel });
	}
	// Replace by rename: a link created at the target meanwhile is replaced, never followed.
	const temp = path.join(dir, `${tempPrefix}${randomBytes(6).toString('hex')}`);
	try {
		writeNewFile(temp, bytes, options.executable ? 0o755 : 0o644);
		fs.renameSync(temp, target);
	} catch (error) {
		fs.rmSync(temp, { force: true });
		throw new DeskError('store.io', `Could not write ${rel}: ${(error as Error).message}`, { path: rel }, { cause: error });
	}
}

/** Removes a file (or, with `replaceLink`, a link itself); a link on the way is refused, a missing file is fine. */
export function removeInFolder(folder: string, rel: string, options: Pick<FolderWriteOptions, 'replaceLink'> = {}): void {
	const dir = parentInFolder(folder, rel, false);
	if (dir === undefined) {
		return;
	}
	const target = path.join(dir, rel.split('/').pop()!);
	const stat = lstatOrUndefined(target);
	if (!stat) {
		return;
	}
	if (!stat.isFile() && !(stat.isSymbolicLink() && options.replaceLink)) {
		throw new DeskError('asset.unsafePath', `${rel} is ${stat.isSymbolicLink() ? 'a link' : 'not a file'}; it is not removed.`, { path: rel });
	}
	fs.unlinkSync(target);
}

/**
 * The folder that holds `rel` inside `folder`, each component checked to be a real folder (never
 * a link); made when `create`, else undefined when one is missing.
 */
export function parentInFolder(folder: string, rel: string, create: boolean): string | undefined {
	if (!isSafeRelativePath(rel)) {
		throw new DeskError('asset.badPath', `${JSON.stringify(rel)} is not a path inside the folder.`, { path: rel });
	}
	let dir = folder;
	for (const part of rel.split('/').slice(0, -1)) {
		dir = path.join(dir, part);
		const stat = lstatOrUndefined(dir);
		if (!stat) {
			if (!create) {
				return undefined;
			}
			fs.mkdirSync(dir);
			continue;
		}
		if (!stat.isDirectory()) {
			throw new DeskError('asset.unsafePath', `${rel}: ${path.relative(folder, dir)} is ${stat.isSymbolicLink() ? 'a link' : 'not a folder'}; nothing is written through it.`, { path: rel });
		}
	}
	return dir;
}

/** True when no folder between `folder` and `rel` is a link (the file itself may be anything). */
export function hasNoLinkOnTheWay(folder: string, rel: string): boolean {
	try {
		// A missing folder is no link: the file is simply not there.
		parentInFolder(folder, rel, false);
		return true;
	} catch {
		return false;
	}
}

/** Creates a file that must not exist yet (never through a link) and writes it whole. */
export function writeNewFile(file: string, bytes: Uint8Array, mode: number, durable = false): void {
	const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
	try {
		writeAll(fd, bytes);
		if (durable) {
			fs.fsyncSync(fd);
		}
	} finally {
		fs.closeSync(fd);
	}
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
	try {
		return fs.lstatSync(p);
	} catch {
		return undefined;
	}
}
