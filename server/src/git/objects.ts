import { DeskError } from '../core/errors';

export interface ParsedCommit {
	tree: string;
	parents: string[];
	/** Seconds since the epoch and the committer's offset in minutes east of UTC. */
	committerTime: number;
	committerOffsetMinutes: number;
	message: string;
}

/** The fields of a commit object this desk reads; header continuation lines (signatures) are skipped. */
export function parseCommit(data: Buffer): ParsedCommit | undefined {
	// Headers are ASCII up to the message; decoding only them keeps a walk of thousands of commits cheap.
	const blank = data.indexOf('\n\n');
	const headerEnd = blank < 0 ? data.length : blank;
	const text = data.toString('latin1', 0, headerEnd);
	const commit: ParsedCommit = {
		tree: '',
		parents: [],
		committerTime: 0,
		committerOffsetMinutes: 0,
		message: blank < 0 ? '' : data.toString('utf8', blank + 2),
	};
	let at = 0;
	while (at < text.length) {
		const end = text.indexOf('\n', at);
		const lineEnd = end < 0 ? text.length : end;
		// Only the first characters tell the header; a signature's continuation lines start with a space.
		if (text.startsWith('parent ', at)) {
			commit.parents.push(text.slice(at + 7, lineEnd));
		} else if (text.startsWith('tree ', at)) {
			commit.tree = text.slice(at + 5, lineEnd);
		} else if (text.startsWith('committer ', at)) {
			const match = / (\d+) ([+-])(\d\d)(\d\d)$/.exec(text.slice(at, lineEnd));
			if (match) {
				commit.committerTime = Number(match[1]);
				commit.committerOffsetMinutes = (match[2] === '-' ? -1 : 1) * (Number(match[3]) * 60 + Number(match[4]));
			}
		}
		at = lineEnd + 1;
	}
	return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit.tree) ? commit : undefined;
}

/** What a first-parent walk needs of a commit: no more is decoded. */
export interface WalkFields {
	firstParent: string | undefined;
	/** Committer time, seconds since the epoch, and offset in minutes east of UTC. */
	time: number;
	offsetMinutes: number;
	/** As `git log --format=%s`: the message's subject lines joined on one line. */
	subject: string;
}

const newline = 0x0a;

/** Where a walk's fields lie in a commit's bytes (filled by {@link scanCommit}; no string made). */
export interface CommitScan {
	/** Offset of the first parent's hex id, -1 for a root commit. */
	parentAt: number;
	/** Committer time, seconds since the epoch, and offset in minutes east of UTC. */
	time: number;
	offsetMinutes: number;
	/** The subject's bytes (see subjectBounds), before its lines are joined. */
	subjectStart: number;
	subjectEnd: number;
	/** True when those bytes are already the subject: one line of ASCII, trailing whitespace cut. */
	subjectIsBytes: boolean;
}

export function emptyScan(): CommitScan {
	return { parentAt: -1, time: 0, offsetMinutes: 0, subjectStart: 0, subjectEnd: 0, subjectIsBytes: true };
}

/**
 * What a first-parent walk needs of a commit, found in its bytes (a walk reads tens of thousands).
 * False when the commit is malformed.
 */
export function scanCommit(data: Buffer, hashLength: number, out: CommitScan): boolean {
	const hex = hashLength * 2;
	if (!startsWith(data, 0, treePrefix) || !isHexAt(data, 5, hex) || data[5 + hex] !== newline) {
		return false;
	}
	const headerEnd = data.indexOf(blankLine);
	const headers = headerEnd < 0 ? data.length : headerEnd;
	let at = 6 + hex;
	out.parentAt = -1;
	if (startsWith(data, at, parentPrefix)) {
		if (!isHexAt(data, at + 7, hex) || data[at + 7 + hex] !== newline) {
			return false;
		}
		out.parentAt = at + 7;
		at += 8 + hex;
	}
	out.time = 0;
	out.offsetMinutes = 0;
	const committer = data.indexOf(committerPrefix, at - 1);
	if (committer >= 0 && committer < headers) {
		// The line ends in ` <seconds> <+|-><hh><mm>`: read backwards from its end.
		const found = data.indexOf(newline, committer + 1);
		const end = found < 0 || found > headers ? headers : found;
		const sign = data[end - 5];
		if (end - 6 > committer && data[end - 6] === space && (sign === plus || sign === minus)) {
			const hours = (data[end - 4]! - zero) * 10 + (data[end - 3]! - zero);
			const minutes = (data[end - 2]! - zero) * 10 + (data[end - 1]! - zero);
			let digit = end - 7;
			let value = 0;
			let scale = 1;
			while (digit > committer && data[digit]! >= zero && data[digit]! <= zero + 9) {
				value += (data[digit]! - zero) * scale;
				scale *= 10;
				digit--;
			}
			if (scale > 1 && data[digit] === space && hours >= 0 && hours <= 99 && minutes >= 0 && minutes <= 99) {
				out.time = value;
				out.offsetMinutes = (sign === minus ? -1 : 1) * (hours * 60 + minutes);
			}
		}
	}
	out.subjectStart = out.subjectEnd = 0;
	out.subjectIsBytes = true;
	if (headerEnd >= 0) {
		const subject = subjectBounds(data, headerEnd + 2, data.length);
		out.subjectStart = subject.start;
		out.subjectEnd = subject.end;
		let simple = true;
		for (let i = subject.start; i < subject.end; i++) {
			const c = data[i]!;
			if (c === newline || c >= 0x80) {
				simple = false;
				break;
			}
		}
		out.subjectIsBytes = simple;
	}
	return true;
}

/** Git's whitespace (`isspace` of git's ctype): tab, line feed, carriage return and space; not \v or \f. */
function isGitSpace(c: number | undefined): boolean {
	return c === space || c === tab || c === newline || c === carriageReturn;
}

/**
 * Where the subject lies in a message starting at `from`, as `git log --format=%s` finds it (pretty.c,
 * format_subject): blank lines (nothing but whitespace) before it are skipped, and it ends at the
 * next blank line or the message's end, trailing whitespace cut. `complete` is false when the
 * bytes end before a blank line does (a prefix of the object may not hold all of the subject).
 */
function subjectBounds(data: Buffer, from: number, length: number): { start: number; end: number; complete: boolean } {
	let start = from;
	let end = from;
	let at = from;
	while (at < length) {
		// (Not indexOf: past `length` the buffer may hold older bytes.)
		let lineEnd = at;
		while (lineEnd < length && data[lineEnd] !== newline) {
			lineEnd++;
		}
		if (lineEnd === length) {
			break;
		}
		let last = lineEnd;
		while (last > at && isGitSpace(data[last - 1])) {
			last--;
		}
		if (last === at) {
			if (end > start) {
				return { start, end, complete: true };
			}
			start = end = lineEnd + 1;
		} else {
			end = last;
		}
		at = lineEnd + 1;
	}
	// The last line has no line feed: it belongs to the subject unless it is blank.
	let last = length;
	while (last > at && isGitSpace(data[last - 1])) {
		last--;
	}
	if (last > at) {
		end = last;
	} else if (end === start) {
		start = end = length;
	}
	return { start, end, complete: false };
}

/** True when `data` (the start of a commit) holds its whole header and subject: what {@link scanCommit} reads. */
export function holdsSubject(data: Buffer, length = data.length): boolean {
	for (let i = 1; i < length; i++) {
		if (data[i] === newline && data[i - 1] === newline) {
			return subjectBounds(data, i + 1, length).complete;
		}
	}
	return false;
}

/** Writes the object id spelled in lowercase hex at `data[at]` into `key` as bytes (checked hex: see scanCommit). */
export function hexInto(data: Buffer, at: number, key: Buffer): void {
	for (let i = 0; i < key.length; i++) {
		const high = data[at + 2 * i]!;
		const low = data[at + 2 * i + 1]!;
		key[i] = ((high <= zero + 9 ? high - zero : high - 0x57) << 4) | (low <= zero + 9 ? low - zero : low - 0x57);
	}
}

/** As `git log --format=%s`: the subject's lines joined by spaces, each without its trailing whitespace (see subjectBounds). */
export function subjectOf(data: Buffer, scan: CommitScan): string {
	const subject = data.toString('utf8', scan.subjectStart, scan.subjectEnd);
	return scan.subjectIsBytes ? subject : subject.split('\n').map(trimGitSpaceEnd).join(' ');
}

function trimGitSpaceEnd(line: string): string {
	let end = line.length;
	while (end > 0 && isGitSpace(line.charCodeAt(end - 1))) {
		end--;
	}
	return line.slice(0, end);
}

/** The fields of a commit a first-parent walk lists, as values. Undefined when the commit is malformed. */
export function walkFields(data: Buffer, hashLength: number): WalkFields | undefined {
	const scan = emptyScan();
	if (!scanCommit(data, hashLength, scan)) {
		return undefined;
	}
	return {
		firstParent: scan.parentAt < 0 ? undefined : data.toString('latin1', scan.parentAt, scan.parentAt + hashLength * 2),
		time: scan.time,
		offsetMinutes: scan.offsetMinutes,
		subject: subjectOf(data, scan),
	};
}

const treePrefix = Buffer.from('tree ');
const parentPrefix = Buffer.from('parent ');
const committerPrefix = Buffer.from('\ncommitter ');
const blankLine = Buffer.from('\n\n');
const space = 0x20;
const tab = 0x09;
const carriageReturn = 0x0d;
/** Bytes of the signs and digits of a commit's time zone, which formatCommitTime writes too. */
export const plus = 0x2b;
export const minus = 0x2d;
export const zero = 0x30;

/** Lowercase hex digits only, as git writes object ids. */
function isHexAt(data: Buffer, at: number, length: number): boolean {
	if (at + length > data.length) {
		return false;
	}
	for (let i = at; i < at + length; i++) {
		const c = data[i]!;
		if (!((c >= zero && c <= zero + 9) || (c >= 0x61 && c <= 0x66))) {
			return false;
		}
	}
	return true;
}

function startsWith(data: Buffer, at: number, prefix: Buffer): boolean {
	if (at + prefix.length > data.length) {
		return false;
	}
	for (let i = 0; i < prefix.length; i++) {
		if (data[at + i] !== prefix[i]) {
			return false;
		}
	}
	return true;
}

export interface TreeEntry {
	/** Octal mode as git writes it: 40000 (tree), 100644, 100755, 120000 (link), 160000 (submodule). */
	mode: string;
	name: string;
	oid: string;
	kind: 'tree' | 'blob' | 'link' | 'submodule';
}

/**
 * A tree's entries in their stored order. Names are decoded as UTF-8 (git stores bytes; a name that
 * is not UTF-8 shows with replacement characters). A malformed tree throws `git.corrupt`.
 */
export function parseTree(data: Buffer, hashLength: number, oid = ''): TreeEntry[] {
	const entries: TreeEntry[] = [];
	let at = 0;
	while (at < data.length) {
		const space = data.indexOf(0x20, at);
		const nul = space < 0 ? -1 : data.indexOf(0, space + 1);
		if (space < 0 || nul < 0 || nul + 1 + hashLength > data.length || space - at > 7) {
			throw new DeskError('git.corrupt', `Tree ${oid} is malformed at byte ${at}.`, { oid, at });
		}
		const mode = data.toString('latin1', at, space);
		const name = data.toString('utf8', space + 1, nul);
		if (name === '' || name === '.' || name === '..' || name.includes('/')) {
			throw new DeskError(
				'git.corrupt',
				`Tree ${oid} holds an entry named ${JSON.stringify(name)}, which git never writes.`,
				{ oid, name },
			);
		}
		const entryOid = data.toString('hex', nul + 1, nul + 1 + hashLength);
		entries.push({ mode, name, oid: entryOid, kind: kindOf(mode) });
		at = nul + 1 + hashLength;
	}
	return entries;
}

function kindOf(mode: string): TreeEntry['kind'] {
	switch (mode) {
		case '40000':
		case '040000':
			return 'tree';
		case '120000':
			return 'link';
		case '160000':
			return 'submodule';
		default:
			return 'blob';
	}
}

/** The object a tag points at and its type. */
export function parseTag(data: Buffer): { object: string; type: string } | undefined {
	const text = data.toString('latin1', 0, Math.min(data.length, 256));
	const object = /^object ([0-9a-f]{40}(?:[0-9a-f]{24})?)\n/.exec(text)?.[1];
	const type = /\ntype (commit|tree|blob|tag)\n/.exec(text)?.[1];
	return object && type ? { object, type } : undefined;
}
