import { structuredPatch } from 'diff';
import type { TargetChange } from './targetFolder';
import { isText } from '../attachments/names';

/**
 * target_diff (glossary: Gate): the text diff of a snapshot target's run folder against the version it began
 * as, in git's unified format so the same reader shows it; binary files listed by size.
 */
export function targetDiff(
	changes: readonly TargetChange[],
	readBefore: (hash: string) => Buffer,
): { text: Buffer; counts: Map<string, [number, number]> } {
	const out: string[] = [];
	const counts = new Map<string, [number, number]>();
	for (const change of changes) {
		const before = change.before ? readBefore(change.before.hash) : Buffer.alloc(0);
		const after = change.after?.bytes ?? Buffer.alloc(0);
		out.push(`diff --git a/${change.path} b/${change.path}`);
		if (change.change_type === 'added') {
			out.push(`new file mode ${change.after!.executable ? '100755' : '100644'}`);
		} else if (change.change_type === 'deleted') {
			out.push(`deleted file mode ${change.before!.executable ? '100755' : '100644'}`);
		} else if (change.before!.executable !== change.after!.executable) {
			out.push(
				`old mode ${change.before!.executable ? '100755' : '100644'}`,
				`new mode ${change.after!.executable ? '100755' : '100644'}`,
			);
		}
		if (!isText(before) || !isText(after)) {
			out.push(
				`Binary files ${change.before ? `a/${change.path}` : '/dev/null'} (${before.length} bytes) and ${change.after ? `b/${change.path}` : '/dev/null'} (${after.length} bytes) differ`,
			);
			counts.set(change.path, [0, 0]);
			continue;
		}
		const patch = structuredPatch(change.path, change.path, before.toString('utf8'), after.toString('utf8'), '', '', {
			context: 3,
		});
		if (patch.hunks.length === 0) {
			counts.set(change.path, [0, 0]);
			continue;
		}
		out.push(
			`--- ${change.before ? `a/${change.path}` : '/dev/null'}`,
			`+++ ${change.after ? `b/${change.path}` : '/dev/null'}`,
		);
		let added = 0;
		let deleted = 0;
		for (const hunk of patch.hunks) {
			out.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
			for (const line of hunk.lines) {
				out.push(line);
				if (line.startsWith('+')) {
					added += 1;
				} else if (line.startsWith('-')) {
					deleted += 1;
				}
			}
		}
		counts.set(change.path, [added, deleted]);
	}
	return { text: Buffer.from(out.length > 0 ? `${out.join('\n')}\n` : '', 'utf8'), counts };
}
