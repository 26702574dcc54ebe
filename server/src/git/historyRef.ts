import * as fs from 'node:fs';
import git from 'isomorphic-git';
import { canonicalJson } from '../ai/canonical';
import { fromBytes, seal, toJson, verifyChecksum } from '../ai/model';
import { aiObjectTypes, type AiObject } from '../ai/types';

/**
 * Run history in git: a project's AI objects as a tree of `<type>/<id>.json` on a ref of the
 * repository (`refs/desk/history`), one commit per export that changed something, so the history
 * travels with the repository through any remote. Blobs that context snapshots name are anchored
 * under `refs/desk/blobs/<oid>` so that gc keeps them (seed 001, "Ref anchoring").
 * Written and read with isomorphic-git: no repository-configured program runs.
 */
export const historyRef = 'refs/desk/history';
export const blobAnchorPrefix = 'refs/desk/blobs/';

const deskIdentity = { name: 'Agent Desk', email: 'desk@agent-desk.invalid' };

export interface ExportResult {
	/** The new commit, when the export changed the ref. */
	commit?: string;
	objects: number;
	anchored: number;
}

/** Writes `objects` (sealed) as the ref's tree; a new commit only when the tree changed. */
export async function exportHistory(top: string, objects: readonly AiObject[], ref = historyRef, now = new Date()): Promise<ExportResult> {
	const cache = {};
	const byType = new Map<string, Array<{ path: string; oid: string; mode: string; type: 'blob' }>>();
	for (const object of objects) {
		const sealed = object.checksum ? object : seal(structuredClone(object));
		const oid = await git.writeBlob({ fs, dir: top, blob: Buffer.from(canonicalJson(toJson(sealed)), 'utf8') });
		const entries = byType.get(sealed.object_type) ?? [];
		entries.push({ path: `${sealed.object_id}.json`, oid, mode: '100644', type: 'blob' });
		byType.set(sealed.object_type, entries);
	}
	const rootEntries: Array<{ path: string; oid: string; mode: string; type: 'tree' }> = [];
	for (const [type, entries] of [...byType.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
		entries.sort((a, b) => (a.path < b.path ? -1 : 1));
		rootEntries.push({ path: type, oid: await git.writeTree({ fs, dir: top, tree: entries }), mode: '040000', type: 'tree' });
	}
	const tree = await git.writeTree({ fs, dir: top, tree: rootEntries });
	const parent = await tryResolve(top, ref);
	let commit: string | undefined;
	if (!parent || (await git.readCommit({ fs, dir: top, oid: parent, cache })).commit.tree !== tree) {
		const when = { ...deskIdentity, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 };
		commit = await git.writeCommit({
			fs,
			dir: top,
			commit: { message: `Agent Desk history: ${objects.length} object${objects.length === 1 ? '' : 's'}\n`, tree, parent: parent ? [parent] : [], author: when, committer: when },
		});
		await git.writeRef({ fs, dir: top, ref, value: commit, force: true });
	}
	let anchored = 0;
	for (const object of objects) {
		if (object.object_type !== 'context_snapshot') {
			continue;
		}
		for (const item of object.items) {
			if (item.blob && /^[0-9a-f]{40}$/.test(item.blob) && (await exists(top, item.blob, cache))) {
				const anchor = `${blobAnchorPrefix}${item.blob}`;
				if ((await tryResolve(top, anchor)) !== item.blob) {
					await git.writeRef({ fs, dir: top, ref: anchor, value: item.blob, force: true });
					anchored++;
				}
			}
		}
	}
	return { ...(commit ? { commit } : {}), objects: objects.length, anchored };
}

export interface ImportRead {
	objects: AiObject[];
	/** Entries that were not taken, with the reason: a bad checksum, a bad name, not an AI object. */
	refused: Array<{ path: string; reason: string }>;
}

/** Reads the objects on a history ref; an object whose checksum does not verify is refused. */
export async function readHistory(top: string, ref = historyRef): Promise<ImportRead> {
	const tip = await tryResolve(top, ref);
	const result: ImportRead = { objects: [], refused: [] };
	if (!tip) {
		return result;
	}
	const cache = {};
	const { commit } = await git.readCommit({ fs, dir: top, oid: tip, cache });
	const { tree } = await git.readTree({ fs, dir: top, oid: commit.tree, cache });
	for (const folder of tree) {
		if (folder.type !== 'tree' || !(folder.path in aiObjectTypes)) {
			result.refused.push({ path: folder.path, reason: 'not a folder of AI objects' });
			continue;
		}
		const { tree: files } = await git.readTree({ fs, dir: top, oid: folder.oid, cache });
		for (const file of files) {
			const path = `${folder.path}/${file.path}`;
			try {
				const { blob } = await git.readBlob({ fs, dir: top, oid: file.oid, cache });
				const object = fromBytes(blob);
				if (object.object_type !== folder.path || `${object.object_id}.json` !== file.path) {
					result.refused.push({ path, reason: `holds ${object.object_type} ${object.object_id}, not what its name says` });
				} else if (!verifyChecksum(object)) {
					result.refused.push({ path, reason: object.checksum ? 'its checksum does not verify' : 'it is not sealed' });
				} else {
					result.objects.push(object);
				}
			} catch (error) {
				result.refused.push({ path, reason: (error as Error).message });
			}
		}
	}
	return result;
}

async function tryResolve(top: string, ref: string): Promise<string | undefined> {
	try {
		return await git.resolveRef({ fs, dir: top, ref });
	} catch {
		return undefined;
	}
}

async function exists(top: string, oid: string, cache: object): Promise<boolean> {
	try {
		await git.readObject({ fs, dir: top, oid, format: 'deflated', cache });
		return true;
	} catch {
		return false;
	}
}
