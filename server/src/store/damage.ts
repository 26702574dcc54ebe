import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { DeskError } from '../core/errors';
import { fsyncFolder, quarantine, replaceFile, writeFileDurably } from './durableFile';

/**
 * A database found damaged stays damaged until the person chooses what to do (issue 12): the file is
 * moved aside as `*.corrupt-<time>` and `<db>.damaged` records what was found, where the kept copy
 * is and when. While that marker exists every open of the store fails with `store.corrupt` naming
 * the file and the kept copy; nothing ever opens (or creates) an empty database in its place.
 *
 * The person's choices (`desk store recover`, JSON-RPC `desk/store/recover`):
 * - `restore`: take the kept copy back as it is (after replacing it with a backup, or knowing that a
 *   record in it is wrong); a journal damaged in the middle comes back up to its damage. Refused with `store.cannotRecover` when SQLite cannot read it, its
 *   integrity check fails or it is another kind of store; the marker then stays.
 * - `empty`: start a new, empty database; the kept copy stays where it is.
 * - `rebuild` (a project database): `empty`, then what refs/desk/history holds is imported (the
 *   desk does this; see `Desk.recoverProject`).
 */
export type RecoverChoice = 'restore' | 'empty' | 'rebuild';

export interface DamageRecord {
	/** The database file. */
	file: string;
	/** What was found, in words. */
	problem: string;
	/** Where the damaged base file was moved; absent when the base itself was missing. */
	keptAs?: string;
	/** Where its journal was moved, when it had one. */
	journalKeptAs?: string;
	/** The journal's bytes before its damage: what `restore` takes back of it. */
	journalValidBytes?: number;
	/** When the damage was found (ISO 8601). */
	at: string;
}

/** How a store tells people to recover it: the command, and the choices it offers. */
export interface RecoverHint {
	/** The command line that recovers this store, without the choice (`desk store recover --library`). */
	command: string;
	choices: readonly RecoverChoice[];
}

export const defaultRecoverHint: RecoverHint = { command: 'desk store recover', choices: ['restore', 'empty'] };

export function damageMarkerFile(file: string): string {
	return `${file}.damaged`;
}

/** The damage recorded for `file`, or undefined when it is not marked damaged. A marker that cannot be read still marks it. */
export function readDamage(file: string): DamageRecord | undefined {
	const marker = damageMarkerFile(file);
	let text: string;
	try {
		text = fs.readFileSync(marker, 'utf8');
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
			return undefined;
		}
		return { file, problem: `its damage marker ${marker} cannot be read: ${(error as Error).message}`, at: '' };
	}
	try {
		const parsed = JSON.parse(text) as Partial<DamageRecord>;
		return {
			file,
			problem: typeof parsed.problem === 'string' ? parsed.problem : 'damage of an unknown kind',
			...(typeof parsed.keptAs === 'string' ? { keptAs: parsed.keptAs } : {}),
			...(typeof parsed.journalKeptAs === 'string' ? { journalKeptAs: parsed.journalKeptAs } : {}),
			...(Number.isSafeInteger(parsed.journalValidBytes) ? { journalValidBytes: parsed.journalValidBytes } : {}),
			at: typeof parsed.at === 'string' ? parsed.at : '',
		};
	} catch {
		return { file, problem: `its damage marker ${marker} is not valid JSON`, at: '' };
	}
}

/** Sets the damaged base (and its journal) aside, records the marker durably and returns the error to throw. */
export function setAside(
	file: string,
	problem: string,
	hint: RecoverHint,
	now = new Date(),
	journalValidBytes?: number,
): DeskError {
	const keptAs = fs.existsSync(file) ? quarantine(file, now) : undefined;
	const journal = `${file}.journal`;
	const journalKeptAs = fs.existsSync(journal) ? quarantine(journal, now) : undefined;
	const record: DamageRecord = {
		file,
		problem,
		...(keptAs ? { keptAs } : {}),
		...(journalKeptAs ? { journalKeptAs } : {}),
		...(journalValidBytes !== undefined ? { journalValidBytes } : {}),
		at: now.toISOString(),
	};
	writeFileDurably(damageMarkerFile(file), Buffer.from(JSON.stringify(record, null, 2) + '\n'));
	return damagedError(record, hint);
}

/** The refusal of a store marked damaged: names the file, the kept copy and the choices. */
export function damagedError(record: DamageRecord, hint: RecoverHint): DeskError {
	const kept = record.keptAs
		? ` It was kept as ${record.keptAs}${record.journalKeptAs ? ` (its journal as ${record.journalKeptAs})` : ''}; nothing was replaced.`
		: '';
	return new DeskError(
		'store.corrupt',
		`${record.file} is damaged (${record.problem}).${kept} The desk will not use it until you choose: ${hint.command} ${hint.choices.join('|')}.`,
		{
			file: record.file,
			problem: record.problem,
			damaged: true,
			marker: damageMarkerFile(record.file),
			...(record.keptAs ? { keptAs: record.keptAs } : {}),
			...(record.journalKeptAs ? { journalKeptAs: record.journalKeptAs } : {}),
			...(record.at ? { damagedAt: record.at } : {}),
			choices: [...hint.choices],
			command: hint.command,
		},
	);
}

export interface RecoverResult {
	file: string;
	choice: RecoverChoice;
	/** The kept copy, left where it is (restore copies it back). */
	keptAs?: string;
	problem: string;
}

/**
 * Carries out `restore` or `empty` on the files (the caller holds the store's lock, and opens the
 * database afterwards). `check` says why bytes are not a usable database of this kind, or undefined.
 */
export function recoverFiles(
	file: string,
	choice: 'restore' | 'empty',
	check: (bytes: Buffer) => string | undefined,
	recordAccepted: (bytes: Buffer) => void,
): RecoverResult {
	const record = readDamage(file);
	if (!record) {
		throw new DeskError('store.notDamaged', `${file} is not marked damaged; there is nothing to recover.`, { file });
	}
	if (fs.existsSync(file)) {
		throw new DeskError(
			'store.cannotRecover',
			`${file} is there again (put back by hand?); move it away, then choose again.`,
			{ file, choice },
		);
	}
	const journal = `${file}.journal`;
	if (choice === 'restore') {
		if (!record.keptAs) {
			throw new DeskError(
				'store.cannotRecover',
				`${file} has no kept copy to restore (${record.problem}); choose empty${record.journalKeptAs ? ` (its journal is kept as ${record.journalKeptAs})` : ''}.`,
				{ file, choice },
			);
		}
		let bytes: Buffer;
		try {
			bytes = fs.readFileSync(record.keptAs);
		} catch (error) {
			throw new DeskError(
				'store.cannotRecover',
				`The kept copy ${record.keptAs} cannot be read: ${(error as Error).message}.`,
				{ file, choice, keptAs: record.keptAs },
			);
		}
		const problem = check(bytes);
		if (problem !== undefined) {
			throw new DeskError(
				'store.cannotRecover',
				`The kept copy ${record.keptAs} cannot be restored: ${problem}. Replace it with a backup and restore again, or choose empty.`,
				{
					file,
					choice,
					keptAs: record.keptAs,
					problem,
				},
			);
		}
		if (fs.existsSync(journal)) {
			quarantine(journal);
		}
		if (record.journalKeptAs && fs.existsSync(record.journalKeptAs)) {
			// A journal damaged in the middle comes back up to its damage; the records after it are lost (the kept copy has them).
			const kept = fs.readFileSync(record.journalKeptAs);
			writeFileDurably(
				journal,
				record.journalValidBytes === undefined ? kept : kept.subarray(0, record.journalValidBytes),
			);
		}
		recordAccepted(bytes);
		writeFileDurably(file, bytes);
	} else if (fs.existsSync(journal)) {
		// A journal of no base: an empty database must not replay it.
		quarantine(journal);
	}
	fs.rmSync(damageMarkerFile(file), { force: true });
	fsyncFolder(path.dirname(file));
	return { file, choice, ...(record.keptAs ? { keptAs: record.keptAs } : {}), problem: record.problem };
}

/**
 * The checksum sidecar `<db>.checked`: the size and CRC-32 of the base files this desk wrote (the
 * last one, and the one before while a checkpoint replaces it). A base whose bytes match one of
 * them is exactly what a checkpoint exported, so opening it skips SQLite's page-by-page check (every
 * `desk` command opens the library); a base that matches none was changed by something other than
 * the desk (a failing disk, a byte overwritten inside a record that `PRAGMA integrity_check` cannot
 * see) and is damage.
 */
export interface BaseSum {
	size: number;
	crc32: number;
}

export type SidecarVerdict = 'match' | 'mismatch' | 'none' | 'legacy-mismatch';

export function baseSum(bytes: Uint8Array): BaseSum {
	return { size: bytes.length, crc32: crc32(bytes) };
}

export function checkedFile(file: string): string {
	return `${file}.checked`;
}

export function readSidecar(file: string): { format: 1 | 2; accepted: BaseSum[] } | undefined {
	try {
		const parsed = JSON.parse(fs.readFileSync(checkedFile(file), 'utf8')) as {
			format?: unknown;
			accepted?: unknown;
			size?: unknown;
			crc32?: unknown;
		};
		const valid = (s: unknown): s is BaseSum =>
			typeof s === 'object' &&
			s !== null &&
			Number.isSafeInteger((s as BaseSum).size) &&
			Number.isSafeInteger((s as BaseSum).crc32);
		if (parsed.format === 2 && Array.isArray(parsed.accepted) && parsed.accepted.every(valid)) {
			return { format: 2, accepted: parsed.accepted };
		}
		if (valid(parsed)) {
			return { format: 1, accepted: [{ size: parsed.size, crc32: parsed.crc32 }] };
		}
		return undefined;
	} catch {
		return undefined;
	}
}

/** How `bytes` compare with what the sidecar accepts. `legacy-mismatch`: a sidecar of the format before checksums were binding. */
export function verifySidecar(file: string, bytes: Uint8Array): SidecarVerdict {
	const sidecar = readSidecar(file);
	if (!sidecar) {
		return 'none';
	}
	const sum = baseSum(bytes);
	if (sidecar.accepted.some((s) => s.size === sum.size && s.crc32 === sum.crc32)) {
		return 'match';
	}
	return sidecar.format === 1 ? 'legacy-mismatch' : 'mismatch';
}

/**
 * Records the sums a base may have. `synced` (before the base it describes is written): its bytes
 * are fsynced before the rename, and the rename is made durable by the folder fsync that the base's
 * own write does next in the same folder. Not synced (dropping the sum of the base just replaced):
 * losing it costs nothing, the sidecar then still accepts both.
 */
export function writeSidecar(file: string, accepted: readonly BaseSum[], synced = true): void {
	replaceFile(checkedFile(file), Buffer.from(JSON.stringify({ format: 2, accepted })), {
		fsyncFile: synced,
		fsyncFolder: false,
	});
}

export function describeSum(sum: BaseSum): string {
	return `${sum.size} bytes, crc32 ${sum.crc32.toString(16).padStart(8, '0')}`;
}
