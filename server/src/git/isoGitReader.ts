import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import type { CommitInfo, GitReader } from '../assets/ports';
import { GitObjectStore, parseCommit } from './objectStore';

/**
 * GitReader over isomorphic-git. It reads objects and refs itself and never runs a program that a
 * repository's config names (fsmonitor, filters, textconv), which the native git binary would.
 *
 * First-parent histories are cached per tip commit: a tip's history never changes, and a branch
 * that moved forward extends the cached history of the old tip instead of walking it again.
 */
export class IsoGitReader implements GitReader {
	/** isomorphic-git's object cache (parsed packfile indexes), one per repository. */
	private readonly objectCaches = new Map<string, object>();
	private readonly histories = new Map<string, Map<string, CommitInfo[]>>();
	private readonly fileCounts = new Map<string, number>();
	private readonly objectStores = new Map<string, GitObjectStore>();

	async findTop(dir: string): Promise<string | undefined> {
		try {
			const root = await git.findRoot({ fs, filepath: dir });
			return fs.realpathSync(root);
		} catch {
			return undefined;
		}
	}

	async originUrl(top: string): Promise<string> {
		const url = (await git.getConfig({ fs, dir: top, path: 'remote.origin.url' })) as unknown;
		return typeof url === 'string' ? url : '';
	}

	async defaultBranch(top: string): Promise<string> {
		try {
			const target = await git.resolveRef({ fs, dir: top, ref: 'refs/remotes/origin/HEAD', depth: 2 });
			const prefix = 'refs/remotes/origin/';
			if (target.startsWith(prefix) && target !== `${prefix}HEAD`) {
				return target.slice(prefix.length);
			}
		} catch {
			// No origin/HEAD: fall through to main, master, the checked-out branch.
		}
		for (const candidate of ['main', 'master']) {
			if ((await this.tryResolve(top, `refs/heads/${candidate}`)) || (await this.tryResolve(top, `refs/remotes/origin/${candidate}`))) {
				return candidate;
			}
		}
		return (await git.currentBranch({ fs, dir: top, fullname: false })) ?? '';
	}

	async headCommit(top: string): Promise<string | undefined> {
		return this.tryResolve(top, 'HEAD');
	}

	async firstParentHistory(top: string, branch: string, signal?: AbortSignal): Promise<CommitInfo[]> {
		const tip = await this.branchTip(top, branch);
		return tip === undefined ? [] : this.walkFirstParents(top, tip, signal);
	}

	async firstParentHistoryFrom(top: string, commit: string, signal?: AbortSignal): Promise<CommitInfo[] | undefined> {
		try {
			return await this.walkFirstParents(top, commit, signal);
		} catch (error) {
			if ((error as { code?: string }).code === 'NotFoundError') {
				return undefined;
			}
			throw error;
		}
	}

	private async walkFirstParents(top: string, tip: string, signal?: AbortSignal): Promise<CommitInfo[]> {
		const known = this.historiesOf(top);
		const cached = known.get(tip);
		if (cached) {
			return cached;
		}
		const cache = this.objectCacheOf(top);
		const objects = this.objectStoreOf(top);
		const newestFirst: CommitInfo[] = [];
		let oid: string | undefined = tip;
		let base: CommitInfo[] = [];
		while (oid !== undefined) {
			signal?.throwIfAborted();
			const older = known.get(oid);
			if (older) {
				base = older;
				break;
			}
			// Our own pack reader first; isomorphic-git for what it cannot read (or finds damaged).
			let object;
			try {
				object = objects.read(oid);
			} catch {
				object = undefined;
			}
			const parsed = object?.type === 'commit' ? parseCommit(object.data) : undefined;
			if (parsed) {
				newestFirst.push({ oid, committedAt: formatCommitTime(parsed.committerTime, -parsed.committerOffsetMinutes), subject: parsed.message.split('\n', 1)[0] ?? '' });
				oid = parsed.parents[0];
				continue;
			}
			let commit;
			try {
				({ commit } = await git.readCommit({ fs, dir: top, oid, cache }));
			} catch (error) {
				if ((error as { code?: string }).code === 'NotFoundError' && newestFirst.length > 0) {
					break; // A shallow clone: history ends where the objects do.
				}
				throw error;
			}
			newestFirst.push({ oid, committedAt: formatCommitTime(commit.committer.timestamp, commit.committer.timezoneOffset), subject: commit.message.split('\n', 1)[0] ?? '' });
			oid = commit.parent[0];
		}
		const history = base.concat(newestFirst.reverse());
		// Keep the newest few tips only: each history shares nothing with the next in memory.
		if (known.size >= 8) {
			known.delete(known.keys().next().value!);
		}
		known.set(tip, history);
		return history;
	}

	async fileCount(top: string, commit: string): Promise<number> {
		const key = `${top}\0${commit}`;
		const cached = this.fileCounts.get(key);
		if (cached !== undefined) {
			return cached;
		}
		const files = await git.listFiles({ fs, dir: top, ref: commit, cache: this.objectCacheOf(top) });
		this.fileCounts.set(key, files.length);
		return files.length;
	}

	async treeFiles(top: string, commit: string): Promise<Array<{ path: string; oid: string; executable: boolean }>> {
		const cache = this.objectCacheOf(top);
		const files: Array<{ path: string; oid: string; executable: boolean }> = [];
		const walkTree = async (oid: string, prefix: string): Promise<void> => {
			const { tree } = await git.readTree({ fs, dir: top, oid, cache });
			for (const entry of tree) {
				const entryPath = prefix === '' ? entry.path : `${prefix}/${entry.path}`;
				if (entry.type === 'tree') {
					await walkTree(entry.oid, entryPath);
				} else if (entry.type === 'blob' && entry.mode !== '120000') {
					files.push({ path: entryPath, oid: entry.oid, executable: entry.mode === '100755' });
				}
			}
		};
		await walkTree(commit, '');
		return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
	}

	async readBlob(top: string, oid: string): Promise<Uint8Array> {
		const { blob } = await git.readBlob({ fs, dir: top, oid, cache: this.objectCacheOf(top) });
		return blob;
	}

	async branchTip(top: string, branch: string): Promise<string | undefined> {
		if (branch === '') {
			return this.tryResolve(top, 'HEAD');
		}
		return (await this.tryResolve(top, `refs/heads/${branch}`)) ?? (await this.tryResolve(top, `refs/remotes/origin/${branch}`));
	}

	private async tryResolve(top: string, ref: string): Promise<string | undefined> {
		try {
			return await git.resolveRef({ fs, dir: top, ref });
		} catch {
			return undefined;
		}
	}

	private objectCacheOf(top: string): object {
		let cache = this.objectCaches.get(top);
		if (!cache) {
			cache = {};
			this.objectCaches.set(top, cache);
		}
		return cache;
	}

	private objectStoreOf(top: string): GitObjectStore {
		let store = this.objectStores.get(top);
		if (!store) {
			store = new GitObjectStore(path.join(top, '.git'));
			this.objectStores.set(top, store);
		}
		return store;
	}

	private historiesOf(top: string): Map<string, CommitInfo[]> {
		let map = this.histories.get(top);
		if (!map) {
			map = new Map();
			this.histories.set(top, map);
		}
		return map;
	}
}

/**
 * `%cI`: strict ISO 8601 in the committer's own offset, e.g. 2026-11-30T03:04:05+01:00.
 * isomorphic-git's timezoneOffset has JavaScript's sign: minutes to add to local time to get UTC.
 */
export function formatCommitTime(timestamp: number, timezoneOffset: number): string {
	const offsetMinutes = -timezoneOffset;
	const local = new Date((timestamp + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
	const sign = offsetMinutes < 0 ? '-' : '+';
	const abs = Math.abs(offsetMinutes);
	return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
