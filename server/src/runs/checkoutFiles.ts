import type { Logger } from '../core/logger';
import { linkInFolder, removeInFolder, writeInFolder } from '../store/folderFiles';
import type { SafeGit } from './safeGit';

/**
 * Puts each of `paths` in the folder `top` at its state in `targetTree`, when the folder still has
 * it exactly as in `leftTree` (what the agent, or the branch, left); the others are left and named.
 * Nothing is written through a link: folders on the way are checked, files are replaced by rename,
 * and a link in a file's place is replaced, never followed. Shared by the gate (Abandon, Retry,
 * Checkpoint and Rollback on the shared checkout) and a resumed run's work folder.
 */
export async function putBackFiles(
	git: SafeGit,
	top: string,
	logger: Logger,
	change: { leftTree: string; targetTree: string; paths: readonly string[]; installed?: readonly string[] },
): Promise<{ restored: string[]; left: string[] }> {
	const now = await git.treeOfFolder(top, change.leftTree, change.installed ?? []);
	const restored: string[] = [];
	const left: string[] = [];
	// The reads below change no config: the keys are listed once, not before each ls-tree.
	const reader = await git.pinned();
	for (const rel of [...new Set(change.paths)]) {
		const wasLeft = await entryAt(reader, change.leftTree, rel);
		const current = await entryAt(reader, now, rel);
		if (wasLeft?.oid !== current?.oid || wasLeft?.mode !== current?.mode) {
			left.push(rel);
			continue;
		}
		const wanted = await entryAt(reader, change.targetTree, rel);
		try {
			if (wanted === undefined || wanted.type !== 'blob') {
				removeInFolder(top, rel, { replaceLink: true });
			} else if (wanted.mode === '120000') {
				// A link of the repository's own: put back as the link it was, pointing where it did,
				// made inside the folder reached through descriptors (never through a link on the way).
				linkInFolder(top, rel, await git.run(['cat-file', 'blob', wanted.oid]));
			} else {
				writeInFolder(top, rel, await git.run(['cat-file', 'blob', wanted.oid]), {
					executable: wanted.mode === '100755',
					replaceLink: true,
				});
			}
			restored.push(rel);
		} catch (error) {
			logger.warn(`${rel} was not put back: ${(error as Error).message}`);
			left.push(rel);
		}
	}
	await git.run(['update-index', '-q', '--refresh'], { okCodes: [0, 1] }).catch(() => undefined);
	return { restored, left };
}

/** The entry at exactly `rel` in a tree (a file, a link, a folder or a submodule), or undefined. */
export async function entryAt(
	git: SafeGit,
	treeish: string,
	rel: string,
): Promise<{ oid: string; mode: string; type: string } | undefined> {
	for (const record of (await git.run(['ls-tree', '-z', '--full-tree', treeish, '--', rel]))
		.toString('utf8')
		.split('\0')) {
		const tab = record.indexOf('\t');
		if (tab > 0 && record.slice(tab + 1) === rel) {
			const [mode, type, oid] = record.slice(0, tab).split(' ');
			return { oid: oid!, mode: mode!, type: type! };
		}
	}
	return undefined;
}
