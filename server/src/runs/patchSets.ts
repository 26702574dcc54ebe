import * as path from 'node:path';
import { memoryFolder } from './workFolder';
import { actor, newPatchSet } from '../ai/model';
import type { PatchSet, Run } from '../ai/types';
import { describeError } from '../core/errors';
import { storeArtifact } from './artifacts';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { SafeGit } from './safeGit';
import { targetDiff } from './targetDiff';
import { targetChangesBytes } from './targetChangesRecord';
import { targetChanges } from './targetFolder';

/**
 * What the agent left when a run stopped, as a PatchSet for Abandon to put back; when it cannot be
 * made, why (logged here), never dropped in silence: the person must know Abandon has nothing to
 * put back then.
 */
export async function keepWhatWasLeft(
	ports: RunnerPorts,
	run: Run,
	placement: RunPlacement,
): Promise<{ patch?: PatchSet; notKept?: string }> {
	try {
		const patch = await makePatchSet(ports, run, placement, '');
		return patch ? { patch } : {};
	} catch (error) {
		const notKept = describeError(error);
		ports.logger.warn(
			`run ${run.object_id}: what the agent left could not be kept as a PatchSet, so Abandon cannot put those files back: ${notKept}`,
		);
		return { notKept };
	}
}

/**
 * The change the work folder holds now, as a PatchSet (undefined when nothing changed): for a git
 * target the tree of the folder against the start tree; for a snapshot target the files against the
 * marker, every file's bytes in the blob store and the list of changes (`desk.target_changes`) too.
 */
export async function makePatchSet(
	ports: RunnerPorts,
	run: Run,
	placement: RunPlacement,
	rationale: string,
): Promise<PatchSet | undefined> {
	const agent = actor('agent', placement.agent);
	if (placement.target === 'snapshot') {
		const skipped: Array<{ path: string; reason: string }> = [];
		const changes = targetChanges(
			placement.work_folder,
			placement.installed,
			path.join(placement.run_folder, 'target.json'),
			skipped,
		);
		if (skipped.length > 0) {
			ports.logger.warn(
				`run ${run.object_id}: not taken from the target folder: ${skipped
					.slice(0, 5)
					.map((s) => `${JSON.stringify(s.path)} (${s.reason})`)
					.join('; ')}${skipped.length > 5 ? ` and ${skipped.length - 5} more` : ''}`,
			);
		}
		if (changes.length === 0) {
			return undefined;
		}
		const before = (hash: string) => ports.blobs.get(hash);
		for (const change of changes) {
			if (change.after) {
				ports.blobs.put(change.after.bytes);
			}
		}
		const diff = targetDiff(changes, before);
		const record = changes.map((c) => ({
			path: c.path,
			change_type: c.change_type,
			before: c.before?.hash,
			after: c.after?.hash,
			size: c.after?.size ?? c.before?.size ?? 0,
			executable: c.after?.executable ?? false,
		}));
		const changesHash = ports.blobs.put(
			targetChangesBytes({
				...(placement.target_asset !== undefined ? { asset: placement.target_asset } : {}),
				...(placement.target_version !== undefined ? { version: placement.target_version } : {}),
				files: record,
			}),
		);
		const patch = newPatchSet(agent, run, {
			format: 'unified',
			artifact: storeArtifact(ports.blobs, diff.text, 'text/x-diff'),
			...(rationale ? { rationale } : {}),
		});
		patch.touched = changes.map((c) => ({
			path: c.path,
			change_type: c.change_type,
			lines_added: diff.counts.get(c.path)?.[0] ?? 0,
			lines_deleted: diff.counts.get(c.path)?.[1] ?? 0,
		}));
		patch.tags = {
			...patch.tags,
			'desk.target_asset': placement.target_asset!,
			'desk.target_version': String(placement.target_version),
			'desk.target_changes': changesHash,
		};
		return patch;
	}
	const git = (await SafeGit.open(ports.project.path, await ports.library.gitLocation(ports.project.path))).at(
		placement.work_folder,
	);
	// Project memory is never part of a run's change: the desk writes it (uncommitted) meanwhile, and an agent may not.
	const tree = await git.treeOfFolder(placement.work_folder, run.commit, [...placement.installed, memoryFolder]);
	const from = placement.start_tree!;
	const changes = await git.changes(from, tree);
	if (changes.length === 0) {
		return undefined;
	}
	const diff = await git.diff(from, tree);
	const patch = newPatchSet(agent, run, {
		format: 'git_diff',
		artifact: storeArtifact(ports.blobs, diff, 'text/x-diff'),
		...(rationale ? { rationale } : {}),
	});
	patch.touched = changes.map((c) => ({
		path: c.path,
		change_type: c.change_type,
		lines_added: c.lines_added ?? 0,
		lines_deleted: c.lines_deleted ?? 0,
	}));
	patch.tags = { ...patch.tags, 'desk.from_tree': from, 'desk.tree': tree };
	return patch;
}
