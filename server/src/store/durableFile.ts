import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DeskError } from '../core/errors';

/**
 * Crash-safe file replacement, as RELIABILITY.md measured it: a temp file in the same folder
 * (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), write, fsync, close, rename over the target, fsync the
 * folder. A reader sees the old bytes or the new ones, never a torn mix, and once this returns the
 * new bytes survive a power cut.
 */
export const tempPrefix = '.desk-tmp-';

export function writeFileDurably(target: string, bytes: Uint8Array, beforeRename?: () => void): void {
	replaceFile(target, bytes, { fsyncFile: true, fsyncFolder: true }, beforeRename);
}

/**
 * The replacement writeFileDurably makes, with each fsync chosen: without `fsyncFolder` the rename is
 * durable only once a later write fsyncs the folder; without `fsyncFile` the bytes may be lost too.
 */
export function replaceFile(
	target: string,
	bytes: Uint8Array,
	sync: { fsyncFile: boolean; fsyncFolder: boolean },
	/** Called with the new bytes durable in the temp file and the target still the old one (a crash test's kill point). */
	beforeRename?: () => void,
): void {
	const folder = path.dirname(target);
	const temp = path.join(folder, `${tempPrefix}${path.basename(target)}-${randomBytes(6).toString('hex')}`);
	let fd: number | undefined;
	try {
		fd = fs.openSync(
			temp,
			fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
			0o600,
		);
		writeAll(fd, bytes);
		if (sync.fsyncFile) {
			fs.fsyncSync(fd);
		}
		fs.closeSync(fd);
		fd = undefined;
		beforeRename?.();
		fs.renameSync(temp, target);
		if (sync.fsyncFolder) {
			fsyncFolder(folder);
		}
	} catch (error) {
		if (fd !== undefined) {
			fs.closeSync(fd);
		}
		fs.rmSync(temp, { force: true });
		throw new DeskError(
			'store.io',
			`Could not write ${target}: ${(error as Error).message}`,
			{ file: target },
			{ cause: error },
		);
	}
}

/**
 * writeFileDurably for a file made in pieces, without holding the event loop: each chunk is written
 * as it comes (the producer may yield between chunks), then fsync, rename and fsync of the folder.
 * `abandon()` returning true before the rename drops the temp file and leaves the target as it was.
 * Resolves to whether the target was replaced.
 */
export async function writeFileDurablyFrom(
	target: string,
	chunks: AsyncIterable<string>,
	abandon: () => boolean = () => false,
): Promise<boolean> {
	const folder = path.dirname(target);
	const temp = path.join(folder, `${tempPrefix}${path.basename(target)}-${randomBytes(6).toString('hex')}`);
	let handle: fs.promises.FileHandle | undefined;
	try {
		handle = await fs.promises.open(
			temp,
			fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
			0o600,
		);
		for await (const chunk of chunks) {
			await handle.writeFile(chunk);
		}
		await handle.sync();
		await handle.close();
		handle = undefined;
		if (abandon()) {
			await fs.promises.rm(temp, { force: true });
			return false;
		}
		await fs.promises.rename(temp, target);
		const dir = await fs.promises.open(folder, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
		try {
			await dir.sync();
		} finally {
			await dir.close();
		}
		return true;
	} catch (error) {
		await handle?.close().catch(() => undefined);
		await fs.promises.rm(temp, { force: true });
		throw new DeskError(
			'store.io',
			`Could not write ${target}: ${(error as Error).message}`,
			{ file: target },
			{ cause: error },
		);
	}
}

export function writeAll(fd: number, bytes: Uint8Array): void {
	let offset = 0;
	while (offset < bytes.length) {
		offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
	}
}

/** Makes a rename or a new name in `folder` durable. */
export function fsyncFolder(folder: string): void {
	const fd = fs.openSync(folder, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
	try {
		fs.fsyncSync(fd);
	} finally {
		fs.closeSync(fd);
	}
}

/**
 * Removes temp files that a killed writer left in `folder`. Only names with our prefix are touched,
 * and only when older than `minAgeMs`, so a live writer in another process is never raced.
 */
export function removeStaleTempFiles(folder: string, minAgeMs = 60_000, now = Date.now()): number {
	let removed = 0;
	let names: string[];
	try {
		names = fs.readdirSync(folder);
	} catch {
		return 0;
	}
	for (const name of names) {
		if (!name.startsWith(tempPrefix)) {
			continue;
		}
		const file = path.join(folder, name);
		try {
			const stat = fs.lstatSync(file);
			if (stat.isFile() && now - stat.mtimeMs >= minAgeMs) {
				fs.rmSync(file, { force: true });
				removed++;
			}
		} catch {
			// Gone already: another cleaner got there first.
		}
	}
	return removed;
}

/** Moves a damaged file aside as `<name>.corrupt-<time>` and returns the new path. */
export function quarantine(file: string, now = new Date()): string {
	const stamp = now.toISOString().replace(/[:.]/g, '-');
	let kept = `${file}.corrupt-${stamp}`;
	for (let n = 2; fs.existsSync(kept); n++) {
		kept = `${file}.corrupt-${stamp}-${n}`;
	}
	fs.renameSync(file, kept);
	fsyncFolder(path.dirname(file));
	return kept;
}
