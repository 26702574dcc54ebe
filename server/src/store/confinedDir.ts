import { isUtf8 } from 'node:buffer';
import * as fs from 'node:fs';
import { DeskError } from '../core/errors';
import { writeAll } from './durableFile';

export type EntryKind = 'file' | 'dir' | 'link' | 'fifo' | 'socket' | 'device' | 'other';

/** What an entry that is not a file or folder is, in the words a report of it uses. */
export function entryKindText(kind: EntryKind): string {
	switch (kind) {
		case 'link':
			return 'a link (never followed)';
		case 'fifo':
			return 'a FIFO';
		case 'socket':
			return 'a socket';
		case 'device':
			return 'a device';
		default:
			return 'not a regular file';
	}
}

/**
 * One name inside a folder: a string, or the raw bytes readdir gave (names are bytes on Linux; a
 * name that is not UTF-8 can only be reached as a Buffer).
 */
export type EntryName = string | Buffer;

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_CREAT, O_EXCL, O_WRONLY } = fs.constants;

/**
 * A folder reached and used only through its descriptor, the confinement RELIABILITY.md measured
 * (Node has no openat): every name is resolved as `/proc/self/fd/<fd>/<name>`, one component at a
 * time, with O_NOFOLLOW, so a link anywhere — the folder itself swapped for one included — leads
 * nowhere; a file is read only through the descriptor that was checked with fstat, never reopened
 * by path. Linux only (it needs /proc). Limits: a name is one component (no `/`); a hard link to a
 * file outside is a regular file like any other, so callers that must not read one check `nlink`.
 * Snapshots walk whole trees with it (`child`, `rawEntries`, `stat`, `statPath`), attachments read
 * outboxes, and `folderFiles` writes into working folders through it.
 */
export class ConfinedDir {
	private closed = false;

	private constructor(
		private readonly fd: number,
		/** For messages only. */
		readonly label: string,
	) {}

	/**
	 * Opens `folder` itself without following a link at its last component, or, with `followLink`,
	 * following one (a root the person chose by a path that is a link; what lies below it is confined
	 * either way).
	 */
	static open(folder: string, followLink = false): ConfinedDir {
		try {
			return new ConfinedDir(fs.openSync(folder, O_RDONLY | O_DIRECTORY | (followLink ? 0 : O_NOFOLLOW)), folder);
		} catch (error) {
			throw confinedError(error, folder);
		}
	}

	/** `open`, after making the folder (and the folders above it) with `mode` when it is missing. */
	static openMade(folder: string, mode = 0o700): ConfinedDir {
		if (!fs.existsSync(folder)) {
			fs.mkdirSync(folder, { recursive: true, mode });
		}
		return ConfinedDir.open(folder);
	}

	/**
	 * The sub-folder `name` (never through a link: a link there is refused with ELOOP), made with
	 * `mode` (0700 unless told) when `create` and missing. Undefined when missing and not made.
	 */
	child(name: EntryName, create = false, mode = 0o700): ConfinedDir | undefined {
		checkName(name);
		try {
			return new ConfinedDir(
				fs.openSync(this.at(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW),
				`${this.label}/${shownName(name)}`,
			);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT' && create) {
				try {
					fs.mkdirSync(this.at(name), { mode });
				} catch (made) {
					if ((made as NodeJS.ErrnoException).code !== 'EEXIST') {
						throw confinedError(made, `${this.label}/${shownName(name)}`);
					}
				}
				return this.child(name, false);
			}
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
				return undefined;
			}
			throw confinedError(error, `${this.label}/${shownName(name)}`);
		}
	}

	/** What the folder holds, each entry with its kind as lstat sees it (a link is a link). */
	entries(): Array<{ name: string; kind: EntryKind }> {
		return fs
			.readdirSync(this.at(), { withFileTypes: true })
			.map((entry) => ({ name: entry.name, kind: kindOf(entry) }));
	}

	/**
	 * As `entries`, with each name as the bytes the file system holds: `entries` decodes names as
	 * UTF-8 and turns every invalid byte into U+FFFD, so two different names can come out equal.
	 */
	rawEntries(): Array<{ name: Buffer; kind: EntryKind }> {
		return fs
			.readdirSync(this.at(), { withFileTypes: true, encoding: 'buffer' })
			.map((entry) => ({ name: entry.name, kind: kindOf(entry) }));
	}

	/** fstat of this folder's own descriptor (its device and inode say which folder it really is). */
	stat(): fs.Stats {
		return fs.fstatSync(this.checkedFd());
	}

	/**
	 * The path `/proc/self/fd/<fd>/<name>`, for lstat only (worker threads share the descriptor
	 * table, so `StatPool` can lstat through it). Never open a file by it: use `openFile`.
	 */
	statPath(name: string): string {
		checkName(name);
		return this.at(name) as string;
	}

	lstat(name: EntryName): fs.Stats | undefined {
		checkName(name);
		try {
			return fs.lstatSync(this.at(name));
		} catch {
			return undefined;
		}
	}

	/** The target of the link `name`, as bytes (readlink never follows the link it reads). Undefined when `name` is no link. */
	readLink(name: EntryName): Buffer | undefined {
		checkName(name);
		try {
			return fs.readlinkSync(this.at(name), { encoding: 'buffer' });
		} catch {
			return undefined;
		}
	}

	/**
	 * Opens the regular file `name` for reading: not through a link, without waiting on a FIFO, and
	 * checked with fstat once open. The caller reads from `fd` and closes it.
	 */
	openFile(name: EntryName): { fd: number; stat: fs.Stats } {
		checkName(name);
		let fd: number;
		try {
			fd = fs.openSync(this.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		} catch (error) {
			throw confinedError(error, `${this.label}/${shownName(name)}`);
		}
		const stat = fs.fstatSync(fd);
		if (!stat.isFile()) {
			fs.closeSync(fd);
			throw new DeskError('attachment.notRegular', `${this.label}/${shownName(name)} is not a regular file.`, {
				name: shownName(name),
			});
		}
		return { fd, stat };
	}

	/**
	 * `openFile`, then `body` with what fstat said and a reader bounded by its limit, through the
	 * descriptor that was checked; the descriptor is closed when `body` returns or throws.
	 */
	withFile<T>(name: EntryName, body: (file: OpenedFile) => T): T {
		const { fd, stat } = this.openFile(name);
		try {
			return body({ stat, read: (limit, position) => readLimited(fd, limit, position) });
		} finally {
			fs.closeSync(fd);
		}
	}

	/**
	 * Writes the new file `name` durably: `temp` made exclusively (never over an entry or through a
	 * link), written, fsynced, renamed to `name`, the folder fsynced. A failed write removes `temp`
	 * and is `store.io`; a failed create is the create's own error.
	 */
	writeDurably(name: string, bytes: Uint8Array, temp: string): void {
		const fd = this.createFile(temp);
		try {
			writeAll(fd, bytes);
			fs.fsyncSync(fd);
		} catch (error) {
			fs.closeSync(fd);
			this.unlink(temp);
			throw new DeskError('store.io', `Could not store ${name}: ${(error as Error).message}`, {
				errno: (error as NodeJS.ErrnoException).code,
			});
		}
		fs.closeSync(fd);
		this.rename(temp, name);
		this.fsync();
	}

	/** Creates `name` anew (never over an existing file or link), with `mode` (0600 unless told), for writing. */
	createFile(name: string, mode = 0o600): number {
		checkName(name);
		try {
			return fs.openSync(this.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
		} catch (error) {
			throw confinedError(error, `${this.label}/${name}`);
		}
	}

	/** Creates the link `name` pointing at `target` (never over an existing entry; the target is not looked at). */
	createLink(name: string, target: string | Buffer): void {
		checkName(name);
		try {
			fs.symlinkSync(target, this.at(name));
		} catch (error) {
			throw confinedError(error, `${this.label}/${name}`);
		}
	}

	/** Renames within this folder; the new name is replaced atomically when it exists. */
	rename(from: string, to: string): void {
		checkName(from);
		checkName(to);
		fs.renameSync(this.at(from), this.at(to));
	}

	/** Removes the entry `name` (a file, link, FIFO or socket; never what a link points to). */
	unlink(name: EntryName): void {
		checkName(name);
		try {
			fs.unlinkSync(this.at(name));
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
				throw confinedError(error, `${this.label}/${shownName(name)}`);
			}
		}
	}

	/**
	 * Removes the entry `name` when it is anything but a folder; a folder (one that took the place of
	 * what was there, in a race) is left for its own walk.
	 */
	discard(name: EntryName): void {
		checkName(name);
		try {
			fs.unlinkSync(this.at(name));
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code !== 'ENOENT' && code !== 'EISDIR' && code !== 'EPERM') {
				throw confinedError(error, `${this.label}/${shownName(name)}`);
			}
		}
	}

	/** Removes the empty sub-folder `name`; false when it is not empty or not there. */
	rmdir(name: EntryName): boolean {
		checkName(name);
		try {
			fs.rmdirSync(this.at(name));
			return true;
		} catch {
			return false;
		}
	}

	/** Removes the sub-folder `name` and everything in it, through descriptors (links are removed, not followed). */
	removeTree(name: EntryName): void {
		let dir: ConfinedDir | undefined;
		try {
			dir = this.child(name);
		} catch (error) {
			if (!(error instanceof DeskError && error.code === 'attachment.notRegular')) {
				throw error;
			}
			// A link (or a file) where a folder was: the entry itself goes, never what it points to.
			this.unlink(name);
			return;
		}
		if (!dir) {
			return;
		}
		try {
			// Raw names: a name that is not UTF-8 is removed like any other.
			for (const entry of dir.rawEntries()) {
				if (entry.kind === 'dir') {
					dir.removeTree(entry.name);
				} else {
					dir.unlink(entry.name);
				}
			}
		} finally {
			dir.close();
		}
		this.rmdir(name);
	}

	fsync(): void {
		fs.fsyncSync(this.fd);
	}

	/**
	 * Sets the mode of the sub-folder `name` by name, for a folder that cannot be opened (no read
	 * bit); only when lstat says it is a folder. A swap for a link between the lstat and the chmod
	 * is not excluded: use `child(name).chmod` whenever the folder can be opened. False when not a folder.
	 */
	chmodFolderByName(name: EntryName, mode: number): boolean {
		checkName(name);
		if (!this.lstat(name)?.isDirectory()) {
			return false;
		}
		fs.chmodSync(this.at(name), mode);
		return true;
	}

	/** Changes this folder's own mode (fchmod of its descriptor: never a link's target). */
	chmod(mode: number): void {
		fs.fchmodSync(this.checkedFd(), mode);
	}

	close(): void {
		if (!this.closed) {
			this.closed = true;
			fs.closeSync(this.fd);
		}
	}

	private checkedFd(): number {
		if (this.closed) {
			throw new DeskError('store.closed', `${this.label} was closed.`);
		}
		return this.fd;
	}

	private at(name?: EntryName): string | Buffer {
		const fd = this.checkedFd();
		if (name === undefined) {
			return `/proc/self/fd/${fd}`;
		}
		return typeof name === 'string'
			? `/proc/self/fd/${fd}/${name}`
			: Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
	}
}

/**
 * A file open for reading: what fstat said of it once open, and a reader of at most `limit` bytes
 * (`more`: there was at least one beyond), from where the last read ended or from `position`.
 */
export interface OpenedFile {
	readonly stat: fs.Stats;
	read(limit: number, position?: number): { bytes: Buffer; more: boolean };
}

/**
 * The file at `file`, a path someone named (not inside a confined folder), opened without following
 * a link at its last component and without waiting on a FIFO, then `body` with what fstat said and a
 * bounded reader; closed after. An error of the open is thrown as `openError` makes it of the errno
 * error; whether the file is a regular one is for `body` to check.
 */
export function withFileAt<T>(
	file: string,
	body: (file: OpenedFile) => T,
	openError: (error: NodeJS.ErrnoException) => Error,
): T {
	let fd: number;
	try {
		fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	} catch (error) {
		throw openError(error as NodeJS.ErrnoException);
	}
	try {
		return body({ stat: fs.fstatSync(fd), read: (limit, position) => readLimited(fd, limit, position) });
	} finally {
		fs.closeSync(fd);
	}
}

/**
 * Reads at most `limit` bytes from a descriptor, from its offset or from `position`; `more` says
 * there was at least one byte beyond.
 */
export function readLimited(fd: number, limit: number, position?: number): { bytes: Buffer; more: boolean } {
	const chunks: Buffer[] = [];
	let total = 0;
	const chunk = Buffer.alloc(1 << 20);
	for (;;) {
		const read = fs.readSync(
			fd,
			chunk,
			0,
			Math.min(chunk.length, limit + 1 - total),
			position === undefined ? null : position + total,
		);
		if (read === 0) {
			break;
		}
		chunks.push(Buffer.from(chunk.subarray(0, read)));
		total += read;
		if (total > limit) {
			const all = Buffer.concat(chunks);
			return { bytes: all.subarray(0, limit), more: true };
		}
	}
	return { bytes: Buffer.concat(chunks), more: false };
}

function checkName(name: EntryName): void {
	const text = typeof name === 'string' ? name : name.toString('latin1');
	if (text === '' || text === '.' || text === '..' || text.includes('/') || text.includes('\0')) {
		throw new DeskError('attachment.badName', `${JSON.stringify(shownName(name))} is not one name inside a folder.`, {
			name: shownName(name),
		});
	}
}

/** The name when it is UTF-8 (exactly: decoding and encoding again gives the same bytes), else undefined. */
export function utf8Name(raw: Buffer): string | undefined {
	// isUtf8 is strict (no overlong forms, no surrogates), so the decoded text encodes back to `raw`.
	return isUtf8(raw) ? raw.toString('utf8') : undefined;
}

/**
 * A name fit to show: UTF-8 as it is, every byte that is not part of a valid UTF-8 sequence (and
 * every control byte) as `\xNN`, a backslash as `\\`. Distinct byte names give distinct texts.
 */
export function shownName(name: EntryName): string {
	if (typeof name === 'string') {
		return name;
	}
	if (utf8Name(name) !== undefined && !/[\x00-\x1f\x7f\\]/.test(name.toString('utf8'))) {
		return name.toString('utf8');
	}
	let out = '';
	let i = 0;
	while (i < name.length) {
		const b = name[i]!;
		const length =
			b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
		const part = name.subarray(i, i + length);
		if (length > 1 && part.length === length && utf8Name(part) !== undefined) {
			out += part.toString('utf8');
			i += length;
		} else if (length === 1 && b >= 0x20 && b !== 0x7f && b !== 0x5c) {
			out += String.fromCharCode(b);
			i += 1;
		} else {
			out += b === 0x5c ? '\\\\' : `\\x${b.toString(16).padStart(2, '0')}`;
			i += 1;
		}
	}
	return out;
}

function kindOf(entry: fs.Dirent<string | Buffer>): EntryKind {
	return entry.isSymbolicLink()
		? 'link'
		: entry.isFile()
			? 'file'
			: entry.isDirectory()
				? 'dir'
				: entry.isFIFO()
					? 'fifo'
					: entry.isSocket()
						? 'socket'
						: entry.isBlockDevice() || entry.isCharacterDevice()
							? 'device'
							: 'other';
}

function confinedError(error: unknown, where: string): DeskError {
	const code = (error as NodeJS.ErrnoException).code;
	if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'EMLINK') {
		return new DeskError('attachment.notRegular', `${where} is a link or not a folder; it is not followed.`, {
			path: where,
			errno: code,
		});
	}
	if (code === 'ENOENT') {
		return new DeskError('attachment.unavailable', `${where} does not exist.`, { path: where, errno: code });
	}
	return new DeskError('store.io', `${where}: ${(error as Error).message}`, { path: where, errno: code });
}
