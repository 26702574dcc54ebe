import * as fs from 'node:fs';
import { canonicalJson } from '../ai/canonical';
import { fromBytes, seal, toJson, verifyChecksum } from '../ai/model';
import { aiObjectTypes, type AiObject, type HistoryRefusal } from '../ai/types';
import { DeskError } from '../core/errors';
import { checkRefName } from './refName';
import type { GitRepository } from './repository';

/**
 * Run history in git: a project's AI objects as a tree of `<type>/<id>.json` on a ref of the
 * repository (`refs/desk/history`), one commit per export that changed something, so the history
 * travels with the repository through any remote. What context snapshots' items hold is written as
 * git blobs anchored under `refs/desk/blobs/<oid>` so that gc keeps them and a clone fetching
 * `refs/desk/*` can read them (glossary: Run history).
 * Objects are written with isomorphic-git (loose, SHA-1) and read with the desk's own reader; no
 * repository-configured program runs.
 */
export const historyRef = 'refs/desk/history';
export const blobAnchorPrefix = 'refs/desk/blobs/';

const deskIdentity = { name: 'Agent Desk', email: 'desk@agent-desk.invalid' };

export interface ExportResult {
	/** The new commit, when the export changed the ref. */
	commit?: string;
	objects: number;
	/** Blobs the context snapshots name that are anchored under `refs/desk/blobs/` (anchored before or now). */
	anchored: number;
}

/** History is written as SHA-1 objects (isomorphic-git's): a SHA-256 repository is refused, clearly. */
function refuseSha256(repo: GitRepository): void {
	if (repo.hashLength !== 20) {
		throw new DeskError(
			'git.unsupported',
			`${repo.top} names its objects with SHA-256; run history can be exported only to SHA-1 repositories for now.`,
			{ dir: repo.top },
		);
	}
}

/**
 * Keeps `content` (what a context snapshot's item holds: a file, a note, a command's output) as a
 * git blob of the repository, anchored at `refs/desk/blobs/<oid>` (the seed's ref anchoring): gc
 * keeps it, and a clone that fetches `refs/desk/*` can read it. Returns the blob's id.
 */
export async function anchorBlob(repo: GitRepository, content: Uint8Array): Promise<string> {
	refuseSha256(repo);
	const git = await import('./isoGitWriter.js');
	const oid = await git.writeBlob({ fs, gitdir: repo.commonDir, blob: content });
	await anchor(repo, oid);
	return oid;
}

async function anchor(repo: GitRepository, oid: string): Promise<void> {
	const ref = `${blobAnchorPrefix}${oid}`;
	if (repo.resolveRef(ref) !== oid) {
		const git = await import('./isoGitWriter.js');
		await git.writeRef({ fs, gitdir: repo.commonDir, ref, value: oid, force: true });
	}
}

/** Writes `objects` (sealed) as the ref's tree; a new commit only when the tree changed. */
export async function exportHistory(
	repo: GitRepository,
	objects: readonly AiObject[],
	ref = historyRef,
	now = new Date(),
): Promise<ExportResult> {
	checkRefName(ref);
	refuseSha256(repo);
	const git = await import('./isoGitWriter.js');
	const gitdir = repo.commonDir;
	const byType = new Map<string, Array<{ path: string; oid: string; mode: string; type: 'blob' }>>();
	for (const object of objects) {
		const sealed = object.checksum ? object : seal(structuredClone(object));
		const oid = await git.writeBlob({ fs, gitdir, blob: Buffer.from(canonicalJson(toJson(sealed)), 'utf8') });
		const entries = byType.get(sealed.object_type) ?? [];
		entries.push({ path: `${sealed.object_id}.json`, oid, mode: '100644', type: 'blob' });
		byType.set(sealed.object_type, entries);
	}
	const rootEntries: Array<{ path: string; oid: string; mode: string; type: 'tree' }> = [];
	for (const [type, entries] of [...byType.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
		entries.sort((a, b) => (a.path < b.path ? -1 : 1));
		rootEntries.push({
			path: type,
			oid: await git.writeTree({ fs, gitdir, tree: entries }),
			mode: '040000',
			type: 'tree',
		});
	}
	const tree = await git.writeTree({ fs, gitdir, tree: rootEntries });
	const parent = repo.resolveRef(ref);
	let commit: string | undefined;
	if (!parent || repo.commit(parent).tree !== tree) {
		const when = { ...deskIdentity, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 };
		commit = await git.writeCommit({
			fs,
			gitdir,
			commit: {
				message: `Agent Desk history: ${objects.length} object${objects.length === 1 ? '' : 's'}\n`,
				tree,
				parent: parent ? [parent] : [],
				author: when,
				committer: when,
			},
		});
		await git.writeRef({ fs, gitdir, ref, value: commit, force: true });
	}
	// Runs anchor their items' blobs as they capture them; an anchor lost since (a ref deleted) is put back.
	const anchored = new Set<string>();
	for (const object of objects) {
		if (object.object_type !== 'context_snapshot') {
			continue;
		}
		for (const item of object.items) {
			if (item.blob && /^[0-9a-f]{40}$/.test(item.blob) && repo.objects.has(item.blob)) {
				await anchor(repo, item.blob);
				anchored.add(item.blob);
			}
		}
	}
	return { ...(commit ? { commit } : {}), objects: objects.length, anchored: anchored.size };
}

export interface ImportRead {
	objects: AiObject[];
	/** Entries that were not taken, with the reason: a bad checksum, a bad name, not an AI object. */
	refused: HistoryRefusal[];
}

/**
 * Reads the objects on a history ref: each must be an AI object this desk reads, sealed, under the
 * path that names it. The seal is an unkeyed hash: it finds damage, not a forger (the import rules
 * of ai/importRules.ts judge what a verified object may change). Commit signatures are not read.
 */
export async function readHistory(repo: GitRepository, ref = historyRef): Promise<ImportRead> {
	checkRefName(ref);
	const tip = repo.resolveRef(ref);
	const result: ImportRead = { objects: [], refused: [] };
	if (!tip) {
		return result;
	}
	for (const folder of repo.tree(repo.treeOf(repo.peelToCommit(tip)))) {
		if (folder.kind !== 'tree' || !(folder.name in aiObjectTypes)) {
			result.refused.push({ path: folder.name, code: 'misplaced', reason: 'not a folder of AI objects' });
			continue;
		}
		for (const file of repo.tree(folder.oid)) {
			const path = `${folder.name}/${file.name}`;
			let object: AiObject;
			try {
				object = fromBytes(repo.blob(file.oid));
			} catch (error) {
				result.refused.push({ path, code: 'unreadable', reason: (error as Error).message });
				continue;
			}
			const named = { path, object_id: object.object_id, object_type: object.object_type };
			if (object.object_type !== folder.name || `${object.object_id}.json` !== file.name) {
				result.refused.push({
					...named,
					code: 'misplaced',
					reason: `holds ${object.object_type} ${object.object_id}, not what its name says`,
				});
			} else if (!verifyChecksum(object)) {
				result.refused.push({
					...named,
					code: 'bad_checksum',
					reason: object.checksum ? 'its checksum does not verify' : 'it is not sealed',
				});
			} else {
				result.objects.push(object);
			}
		}
	}
	return result;
}
