import type { PatchSet } from '../ai/types';
import type { Logger } from '../core/logger';
import { linkInFolder, removeInFolder, writeInFolder } from '../store/folderFiles';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { SafeGit } from './safeGit';

/**
 * Puts each of `paths` in the folder `top` at its state in `targetTree`, when the folder still has
 * it exactly as in `leftTree` (what the agent, or the branch, left); the others are left and named.
 * Nothing is written through a link: folders on the way are checked, files are replaced by rename,
 * and a link in a file's place is replaced, never followed. A file already as in `targetTree` is
 * neither (a run whose files crash recovery put back, abandoned later). Shared by the gate (Abandon,
 * Retry, Checkpoint and Rollback on the shared checkout), crash recovery and a resumed run's work folder.
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
		const wanted = await entryAt(reader, change.targetTree, rel);
		if (wanted?.oid === current?.oid && wanted?.mode === current?.mode) {
			continue;
		}
		if (wasLeft?.oid !== current?.oid || wasLeft?.mode !== current?.mode) {
			left.push(rel);
			continue;
		}
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

/**
 * On the shared checkout, a stopped or abandoned run's edits put back to how the files were when it
 * began — each file only while it is still exactly as the agent left it (`last`, the run's latest
 * PatchSet), so nothing the person wrote meanwhile is lost. Nothing for a run with a folder of its
 * own, or whose change landed.
 */
export async function putBackSharedCheckout(
	ports: Pick<RunnerPorts, 'project' | 'library' | 'logger'>,
	placement: RunPlacement,
	last: PatchSet | undefined,
): Promise<{ restored: string[]; left: string[] }> {
	if (placement.isolation !== 'shared' || !last || last.apply_status === 'applied' || !last.tags['desk.tree']) {
		return { restored: [], left: [] };
	}
	const git = await SafeGit.open(ports.project.path, await ports.library.gitLocation(ports.project.path));
	return putBackFiles(git, ports.project.path, ports.logger, {
		leftTree: last.tags['desk.tree'],
		targetTree: placement.start_tree!,
		paths: last.touched.map((t) => t.path),
		installed: placement.installed,
	});
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
