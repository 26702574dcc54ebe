import { DeskError } from '../core/errors';

/**
 * Unified diffs (as `git diff` prints them) read into per-file hunks, and applied to a file's
 * text. Used to show a PatchSet that was never committed: its diff artifact applied to the
 * baseline commit's files.
 */
export interface FilePatch {
	/** The path before ('' for an added file) and after ('' for a deleted one). */
	from: string;
	to: string;
	hunks: Hunk[];
}

interface Hunk {
	oldStart: number;
	lines: string[];
}

export function parseUnifiedDiff(text: string): FilePatch[] {
	const patches: FilePatch[] = [];
	let current: FilePatch | undefined;
	let hunk: Hunk | undefined;
	const stripPrefix = (p: string) => (p === '/dev/null' ? '' : p.replace(/^[ab]\//, '').replace(/\t.*$/, ''));
	const lines = text.split('\n');
	// Lines the current hunk still has, from its header's counts: inside a hunk, a line is the
	// hunk's whatever it looks like (a removed "-- x" followed by an added "++ y" reads as a
	// "--- x" / "+++ y" file header otherwise).
	let oldLeft = 0;
	let newLeft = 0;
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i]!;
		if (
			hunk &&
			(oldLeft > 0 || newLeft > 0) &&
			(line.startsWith(' ') || line.startsWith('+') || line.startsWith('-'))
		) {
			oldLeft -= line.startsWith('+') ? 0 : 1;
			newLeft -= line.startsWith('-') ? 0 : 1;
			hunk.lines.push(line);
			continue;
		}
		if (hunk && line.startsWith('\\')) {
			// "\ No newline at end of file": the previous line had no newline.
			const last = hunk.lines.pop();
			if (last !== undefined) {
				hunk.lines.push(`${last}\u0000`);
			}
			continue;
		}
		if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
			current = { from: stripPrefix(line.slice(4)), to: stripPrefix(lines[i + 1]!.slice(4)), hunks: [] };
			patches.push(current);
			hunk = undefined;
			i++;
			continue;
		}
		const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
		if (header && current) {
			hunk = { oldStart: Number(header[1]), lines: [] };
			oldLeft = header[2] === undefined ? 1 : Number(header[2]);
			newLeft = header[3] === undefined ? 1 : Number(header[3]);
			current.hunks.push(hunk);
		}
	}
	return patches;
}

/** Applies one file's hunks to its old text; a hunk that does not match is an error, never a guess. */
export function applyFilePatch(oldText: string, patch: FilePatch): string {
	const old = oldText === '' ? [] : oldText.replace(/\n$/, '').split('\n');
	const endsWithNewline = oldText === '' || oldText.endsWith('\n');
	const out: string[] = [];
	let cursor = 0;
	let finalNewline = endsWithNewline;
	for (const hunk of patch.hunks) {
		const start = Math.max(0, hunk.oldStart - 1);
		out.push(...old.slice(cursor, start));
		cursor = start;
		for (const raw of hunk.lines) {
			const noNewline = raw.endsWith('\u0000');
			const line = noNewline ? raw.slice(0, -1) : raw;
			const body = line.slice(1);
			if (line[0] === '+') {
				out.push(body);
				if (noNewline) {
					finalNewline = false;
				}
			} else {
				if (old[cursor] !== body) {
					throw new DeskError(
						'ai.badObject',
						`The patch of ${patch.to || patch.from} does not apply at line ${cursor + 1}.`,
						{ path: patch.to || patch.from, line: cursor + 1 },
					);
				}
				if (line[0] === ' ') {
					out.push(body);
				} else if (noNewline) {
					// The old last line, which had no newline, is gone: the new text ends as its added lines do.
					finalNewline = true;
				}
				cursor++;
			}
		}
	}
	out.push(...old.slice(cursor));
	if (out.length === 0) {
		return '';
	}
	return out.join('\n') + (finalNewline ? '\n' : '');
}
