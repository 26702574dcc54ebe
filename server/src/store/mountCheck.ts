import * as fs from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { Manifest, ManifestEntry } from '../assets/types';
import { ConfinedDir, entryKindText, shownName, utf8Name } from './confinedDir';
import { changedTooRecently } from './racyStat';

/** A mount's folders: read-only, as git references are laid out for a run. */
export const mountFolderMode = 0o555;

/** A mounted file's mode: read-only, executable when the version's file is. */
export function mountFileMode(file: ManifestEntry): number {
	return file.executable ? 0o555 : 0o444;
}

/**
 * What vouches for a mounted file without reading it: [size, mtimeMs, ctimeMs, inode, sha256] when
 * its bytes were last read and found to be the version's. Any write or chmod moves ctime, which no
 * one but the clock can set back, so a file whose stat still is all of these still holds them.
 */
export type MountStampEntry = [number, number, number, number, string];

/** What a mount check found (glossary: Mount). */
export interface MountCheck {
	/** What differs between the mount and its version; undefined when nothing does. */
	difference: string | undefined;
	/** The mount's files looked at. */
	files: number;
	/** Those read and hashed because the stamp did not vouch for them. */
	read: number;
	/** The stamp to keep: every file found as its version's whose change is not too recent to vouch for. */
	stamp: Map<string, MountStampEntry>;
}

/**
 * Checks the mount `mounts/<name>` against the version it was laid out from: every folder the
 * manifest's paths imply and no other, each read-only; every file it names and no other, each a
 * regular file of one name, its mode, its size and its sha256 (the blob id the manifest records).
 * A file the stamp vouches for (its stat unchanged since it was last read) is not read again, so a
 * mount nobody touched costs a walk and a stat a file. Nothing is followed: a link is a difference.
 * Stops at the first difference.
 */
export function checkMount(
	mounts: ConfinedDir,
	name: string,
	manifest: Manifest,
	stamp: ReadonlyMap<string, MountStampEntry>,
	started = Date.now(),
): MountCheck {
	const result: MountCheck = { difference: undefined, files: 0, read: 0, stamp: new Map() };
	const files = new Map(manifest.files.map((f) => [f.path, f]));
	const folders = new Set<string>(['']);
	for (const file of manifest.files) {
		for (let slash = file.path.lastIndexOf('/'); slash > 0; slash = file.path.lastIndexOf('/', slash - 1)) {
			folders.add(file.path.slice(0, slash));
		}
	}
	const seen = new Set<string>();
	const walk = (dir: ConfinedDir, at: string): string | undefined => {
		const shown = at === '' ? 'its top folder' : `${at}/`;
		if ((dir.stat().mode & 0o7777) !== mountFolderMode) {
			return `${shown} is not read-only (mode ${(dir.stat().mode & 0o7777).toString(8)})`;
		}
		seen.add(`${at}/`);
		for (const entry of dir.rawEntries()) {
			const entryName = utf8Name(entry.name);
			const rel = `${at === '' ? '' : `${at}/`}${entryName ?? shownName(entry.name)}`;
			if (entryName === undefined) {
				return `${rel} was added`;
			}
			if (entry.kind === 'dir') {
				if (!folders.has(rel)) {
					return `${rel}/ was added`;
				}
				let child: ConfinedDir | undefined;
				try {
					child = dir.child(entryName);
				} catch {
					return `${rel}/ cannot be read`;
				}
				if (!child) {
					return `${rel}/ was removed`;
				}
				try {
					const found = walk(child, rel);
					if (found !== undefined) {
						return found;
					}
				} finally {
					child.close();
				}
			} else if (entry.kind === 'file') {
				const expected = files.get(rel);
				if (!expected) {
					return `${rel} was added`;
				}
				seen.add(rel);
				result.files += 1;
				const found = checkFile(dir, entryName, rel, expected, stamp.get(rel), started, result);
				if (found !== undefined) {
					return found;
				}
			} else {
				return `${rel} is ${entryKindText(entry.kind)}`;
			}
		}
		return undefined;
	};
	let root: ConfinedDir | undefined;
	try {
		root = mounts.child(name);
	} catch {
		return { ...result, difference: 'it is not a folder' };
	}
	if (!root) {
		return { ...result, difference: 'it was removed' };
	}
	try {
		result.difference = walk(root, '');
	} finally {
		root.close();
	}
	if (result.difference === undefined) {
		const missingFile = manifest.files.find((f) => !seen.has(f.path));
		const missingFolder = [...folders].find((f) => !seen.has(`${f}/`));
		result.difference =
			missingFile !== undefined
				? `${missingFile.path} was removed`
				: missingFolder !== undefined
					? `${missingFolder}/ was removed`
					: undefined;
	}
	return result;
}

/**
 * What differs between a mounted file and the manifest's entry for it, or undefined. Its stat comes
 * first; its bytes are read only when `known` does not vouch for them. A file found as its version's
 * goes into the check's stamp unless it changed too recently to be vouched for next time.
 */
function checkFile(
	dir: ConfinedDir,
	name: string,
	rel: string,
	expected: ManifestEntry,
	known: MountStampEntry | undefined,
	started: number,
	check: MountCheck,
): string | undefined {
	const stat = dir.lstat(name);
	if (!stat?.isFile()) {
		return stat ? `${rel} is not a regular file` : `${rel} was removed`;
	}
	const found = statDifference(stat, rel, expected);
	if (found !== undefined) {
		return found;
	}
	if (
		known !== undefined &&
		known[0] === stat.size &&
		known[1] === stat.mtimeMs &&
		known[2] === stat.ctimeMs &&
		known[3] === stat.ino &&
		known[4] === expected.hash
	) {
		check.stamp.set(rel, known);
		return undefined;
	}
	let opened: { fd: number; stat: fs.Stats };
	try {
		opened = dir.openFile(name);
	} catch {
		return `${rel} cannot be read`;
	}
	const { fd, stat: before } = opened;
	try {
		const changed = statDifference(before, rel, expected);
		if (changed !== undefined) {
			return changed;
		}
		check.read += 1;
		const hash = createHash('sha256');
		const chunk = Buffer.allocUnsafe(Math.min(Math.max(before.size, 1), 1024 * 1024));
		for (let at = 0; at < before.size;) {
			const read = fs.readSync(fd, chunk, 0, Math.min(chunk.length, before.size - at), at);
			if (read === 0) {
				return `${rel} changed size`;
			}
			hash.update(chunk.subarray(0, read));
			at += read;
		}
		if (hash.digest('hex') !== expected.hash) {
			return `${rel} changed`;
		}
		const after = fs.fstatSync(fd);
		// Vouched for next time only when it held still while read and not within the racy window.
		if (
			after.size === before.size &&
			after.mtimeMs === before.mtimeMs &&
			after.ctimeMs === before.ctimeMs &&
			!changedTooRecently(after.ctimeMs, started)
		) {
			check.stamp.set(rel, [after.size, after.mtimeMs, after.ctimeMs, after.ino, expected.hash]);
		}
		return undefined;
	} finally {
		fs.closeSync(fd);
	}
}

/** What a mounted file's stat says differs from its manifest entry: its mode, its names, its size. */
function statDifference(stat: fs.Stats, rel: string, expected: ManifestEntry): string | undefined {
	if ((stat.mode & 0o7777) !== mountFileMode(expected)) {
		return `${rel} has mode ${(stat.mode & 0o7777).toString(8)}, not ${mountFileMode(expected).toString(8)}`;
	}
	if (stat.nlink !== 1) {
		return `${rel} has another name (a hard link)`;
	}
	if (stat.size !== expected.size) {
		return `${rel} changed size (${stat.size} bytes, not ${expected.size})`;
	}
	return undefined;
}

/** The format of a mount's stamp file; another is not read (the mount is checked in full). */
const mountStampFormat = 1;

/**
 * A mount's stamp, `<library>/cache/mount/<id>/<version>.json`: empty when there is none or it
 * cannot be read, which only costs a full read of the mount.
 */
export function readMountStamp(file: string): Map<string, MountStampEntry> {
	let text: string;
	try {
		text = fs.readFileSync(file, 'utf8');
	} catch {
		return new Map();
	}
	try {
		const stored = JSON.parse(text) as { format?: unknown; files?: unknown } | null;
		const entries = stored?.files;
		if (
			stored?.format !== mountStampFormat ||
			entries === null ||
			typeof entries !== 'object' ||
			Array.isArray(entries)
		) {
			return new Map();
		}
		return new Map(
			Object.entries(entries as Record<string, unknown>).filter((entry): entry is [string, MountStampEntry] =>
				isStampEntry(entry[1]),
			),
		);
	} catch {
		return new Map();
	}
}

function isStampEntry(value: unknown): value is MountStampEntry {
	return (
		Array.isArray(value) &&
		value.length === 5 &&
		value.slice(0, 4).every((n) => typeof n === 'number') &&
		typeof value[4] === 'string'
	);
}

/** Writes a mount's stamp: renamed into place so it is never torn, not fsynced (a lost one costs a read). */
export function writeMountStamp(file: string, stamp: ReadonlyMap<string, MountStampEntry>): void {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
	fs.writeFileSync(temp, JSON.stringify({ format: mountStampFormat, files: Object.fromEntries(stamp) }));
	fs.renameSync(temp, file);
}

/** Whether two stamps vouch for the same files alike (an unchanged one is not written again). */
export function sameStamp(a: ReadonlyMap<string, MountStampEntry>, b: ReadonlyMap<string, MountStampEntry>): boolean {
	if (a.size !== b.size) {
		return false;
	}
	for (const [rel, entry] of a) {
		const other = b.get(rel);
		if (!other || other.some((value, i) => value !== entry[i])) {
			return false;
		}
	}
	return true;
}
