/**
 * Files the command line reads because a person named them (`--ticket-file`, `--settings`, `--file`,
 * `--put`): regular files only, and never more than the cap the server applies to the same input.
 * `/dev/zero` would read forever and a FIFO would wait for a writer; both are refused by what they
 * are, before one byte is read.
 */
import * as fs from 'node:fs';
import { DeskError } from '../core/errors';
import { humanBytes } from '../attachments/names';
import { readLimited } from '../store/confinedDir';

/** What a file that is not a regular file is, for the refusal. */
function kindOf(stat: fs.Stats): string {
	if (stat.isDirectory()) {
		return 'a folder';
	}
	if (stat.isFIFO()) {
		return 'a FIFO (named pipe)';
	}
	if (stat.isCharacterDevice()) {
		return 'a character device';
	}
	if (stat.isBlockDevice()) {
		return 'a block device';
	}
	if (stat.isSocket()) {
		return 'a socket';
	}
	return 'not a regular file';
}

/**
 * The bytes of the regular file at `file`, at most `maxBytes` of them. `what` names the input in a
 * refusal (`the ticket file`). Refuses with `input.unreadable` (cannot be opened or read),
 * `input.notAFile` (a folder, FIFO, device or socket; a link is followed to what it points to) and
 * `input.tooLarge` (over the cap, also when it grows over it while read). The file is opened without
 * blocking (a FIFO with no writer would otherwise hang the open) and checked through that descriptor.
 */
export function readInputFile(file: string, what: string, maxBytes: number): Buffer {
	let fd: number;
	try {
		fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
	} catch (error) {
		const errno = (error as NodeJS.ErrnoException).code;
		throw new DeskError('input.unreadable', `Could not read ${what} ${file}: ${(error as Error).message}`, {
			file,
			errno,
		});
	}
	try {
		let stat: fs.Stats;
		try {
			stat = fs.fstatSync(fd);
		} catch (error) {
			throw new DeskError('input.unreadable', `Could not read ${what} ${file}: ${(error as Error).message}`, {
				file,
				errno: (error as NodeJS.ErrnoException).code,
			});
		}
		if (!stat.isFile()) {
			throw new DeskError(
				'input.notAFile',
				`${what[0]!.toUpperCase()}${what.slice(1)} ${file} is ${kindOf(stat)}, not a regular file.`,
				{ file, kind: kindOf(stat) },
			);
		}
		const tooLarge = (size: number) =>
			new DeskError(
				'input.tooLarge',
				`${what[0]!.toUpperCase()}${what.slice(1)} ${file} is over the limit of ${humanBytes(maxBytes)}.`,
				{ file, size, limit: maxBytes },
			);
		if (stat.size > maxBytes) {
			throw tooLarge(stat.size);
		}
		// Read to the cap and one byte past it: a file that grew after fstat is refused, not cut short.
		let read: { bytes: Buffer; more: boolean };
		try {
			read = readLimited(fd, maxBytes);
		} catch (error) {
			throw new DeskError('input.unreadable', `Could not read ${what} ${file}: ${(error as Error).message}`, {
				file,
				errno: (error as NodeJS.ErrnoException).code,
			});
		}
		if (read.more) {
			throw tooLarge(maxBytes + 1);
		}
		return read.bytes;
	} finally {
		fs.closeSync(fd);
	}
}

/**
 * The file's text, refused as `input.notUtf8` when it is not UTF-8: never decoded with U+FFFD in
 * place of the bad bytes and stored so.
 */
export function readInputText(file: string, what: string, maxBytes: number): string {
	const bytes = readInputFile(file, what, maxBytes);
	try {
		return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
	} catch {
		throw new DeskError('input.notUtf8', `${what} ${file} is not UTF-8 text; nothing was read from it.`, { file });
	}
}
