import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CommitHistory, GitFileChange, GitReader, GitTreeFile } from '../assets/ports';
import { DeskError } from '../core/errors';
import { ByteLru } from './byteLru';
import { FirstParentHistory, HistoryCache, HistoryWalk } from './firstParentHistory';
import { emptyScan, hexInto, holdsSubject, scanCommit } from './objects';
import { adoptedLocation, adoptionOf, type AdoptedGitDir, type GitDirLocation } from './gitDir';
import { fileOf, gitDirOf, GitRepository, type TreeFile } from './repository';

export interface RepositoryReaderOptions {
	/** Where first-parent histories are kept between processes; none keeps them in memory only. */
	historyCacheDir?: string;
	/**
	 * The git folder recorded for a work tree's top when it was adopted (the library's), and the
	 * folders trusted for one not adopted yet (default: the top alone). See gitDir.ts.
	 */
	gitDirPolicy?: (top: string) => { recorded?: AdoptedGitDir; trusted?: readonly string[] };
}

/** A walk yields to the event loop this often, so a server walking a long history keeps answering. */
const yieldEvery = 4096;

/**
 * The desk's GitReader: every read of a repository goes through one GitRepository per work tree
 * (packs read object by object, bounded caches; see GitObjectStore), and first-parent histories are
 * kept per repository and branch, in memory and in the history cache, so that a branch that moved
 * on is extended from the commits already known instead of walked again. Nothing the repository
 * configures runs.
 */
export class RepositoryReader implements GitReader {
	private readonly repositories = new Map<string, { repo: GitRepository; dotGit: string | undefined }>();
	/** Git folders adopted in this process, by top (the library records them too). */
	private readonly adopted = new Map<string, AdoptedGitDir>();
	/** The newest history known per repository and ref. */
	private readonly histories = new Map<string, FirstParentHistory>();
	private readonly fileCounts = new ByteLru<string, number>(64 * 1024);
	private readonly cache: HistoryCache | undefined;
	/** Walks under way, by ref and tip. */
	private readonly walking = new Map<string, Promise<FirstParentHistory>>();
	/** Histories found or extended since the cache was last written. */
	private readonly unsaved = new Map<string, FirstParentHistory>();

	constructor(private readonly options: RepositoryReaderOptions = {}) {
		this.cache = options.historyCacheDir === undefined ? undefined : new HistoryCache(options.historyCacheDir);
	}

	async adoptGitDir(
		top: string,
		options: { recorded?: AdoptedGitDir; trusted?: readonly string[]; allow?: boolean },
	): Promise<{ location: GitDirLocation; allowed: boolean }> {
		const location = adoptedLocation(top, options);
		// Allowed: adopted on the person's word (now or before), not by the rule alone.
		const allowed =
			options.recorded?.gitDir === location.gitDir && options.recorded.allowed
				? true
				: options.allow === true && !adoptionOf(location, options.trusted ?? [location.top]).adopted;
		this.adopted.set(top, { gitDir: location.gitDir, allowed });
		return { location, allowed };
	}

	async findTop(dir: string): Promise<string | undefined> {
		let current = path.resolve(dir);
		for (;;) {
			if (gitDirOf(current)) {
				try {
					return fs.realpathSync(current);
				} catch {
					return undefined;
				}
			}
			const parent = path.dirname(current);
			if (parent === current) {
				return undefined;
			}
			current = parent;
		}
	}

	async originUrl(top: string): Promise<string> {
		return this.repository(top).configValue('remote.origin.url') ?? '';
	}

	async defaultBranch(top: string): Promise<string> {
		const repo = this.repository(top);
		const prefix = 'refs/remotes/origin/';
		const originHead = repo.symbolicTarget('refs/remotes/origin/HEAD');
		if (originHead?.startsWith(prefix) && originHead !== `${prefix}HEAD`) {
			return originHead.slice(prefix.length);
		}
		for (const candidate of ['main', 'master']) {
			if (repo.resolveRef(`refs/heads/${candidate}`) || repo.resolveRef(`refs/remotes/origin/${candidate}`)) {
				return candidate;
			}
		}
		return repo.symbolicTarget('HEAD')?.replace(/^refs\/heads\//, '') ?? '';
	}

	async headCommit(top: string): Promise<string | undefined> {
		return this.tipOf(this.repository(top), 'HEAD');
	}

	async branchTip(top: string, branch: string): Promise<string | undefined> {
		const repo = this.repository(top);
		return branch === ''
			? this.tipOf(repo, 'HEAD')
			: (this.tipOf(repo, `refs/heads/${branch}`) ?? this.tipOf(repo, `refs/remotes/origin/${branch}`));
	}

	async firstParentHistory(top: string, branch: string, signal?: AbortSignal): Promise<CommitHistory> {
		const repo = this.repository(top);
		const ref =
			branch === ''
				? 'HEAD'
				: repo.resolveRef(`refs/heads/${branch}`) !== undefined
					? `refs/heads/${branch}`
					: `refs/remotes/origin/${branch}`;
		const tip = this.tipOf(repo, ref);
		// HEAD is a work tree's own; branches are shared by the work trees of a repository.
		const key = `${ref === 'HEAD' ? repo.gitDir : repo.commonDir}\0${ref}\0${repo.hashLength}`;
		if (tip === undefined) {
			return FirstParentHistory.empty(repo.hashLength);
		}
		const known = this.histories.get(key) ?? this.loadCached(repo, key);
		if (known?.tip === tip) {
			this.histories.set(key, known);
			return known;
		}
		// Requests that arrive together (the view's list and an AtGo at start) share one walk; it is
		// not cancelled with one of them (what it finds is kept), each only stops waiting for it.
		const walkKey = `${key}\0${tip}`;
		let walking = this.walking.get(walkKey);
		if (!walking) {
			walking = this.walk(repo, tip, known).finally(() => this.walking.delete(walkKey));
			this.walking.set(walkKey, walking);
		}
		const history = await walking;
		signal?.throwIfAborted();
		if (this.histories.get(key)?.tip === tip) {
			return this.histories.get(key)!;
		}
		this.histories.set(key, history);
		// Written for other processes once this request is answered (and at close, before a CLI exits).
		if (this.cache) {
			if (this.unsaved.size === 0) {
				setImmediate(() => this.saveHistories());
			}
			this.unsaved.set(key, history);
		}
		return history;
	}

	async firstParentHistoryFrom(top: string, commit: string, signal?: AbortSignal): Promise<CommitHistory | undefined> {
		const repo = this.repository(top);
		if (!repo.isOid(commit) || !repo.objects.has(commit)) {
			return undefined;
		}
		// Any known history of this repository shares most of its commits with the one asked for.
		let base: FirstParentHistory | undefined;
		for (const [key, history] of this.histories) {
			if (key.startsWith(`${repo.commonDir}\0`) && (!base || history.count > base.count)) {
				base = history;
			}
		}
		return this.walk(repo, repo.peelToCommit(commit), base, signal);
	}

	async fileCount(top: string, commit: string): Promise<number> {
		const repo = this.repository(top);
		const tree = repo.treeOf(commit);
		const cached = this.fileCounts.get(`${repo.commonDir}\0${tree}`);
		if (cached !== undefined) {
			return cached;
		}
		const count = repo.treeFiles(tree).length;
		this.fileCounts.set(`${repo.commonDir}\0${tree}`, count, 64);
		return count;
	}

	async treeFiles(top: string, commit: string): Promise<GitTreeFile[]> {
		const repo = this.repository(top);
		return repo
			.treeFiles(commit)
			.map((file) => withTarget(repo, file))
			.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
	}

	async readBlob(top: string, oid: string): Promise<Uint8Array> {
		return this.repository(top).blob(oid);
	}

	async readFile(top: string, commit: string, filePath: string): Promise<Uint8Array | undefined> {
		return this.repository(top).contentAt(commit, filePath);
	}

	async listFolder(
		top: string,
		commit: string,
		folder: string,
	): Promise<{ folders: string[]; files: GitTreeFile[] } | undefined> {
		const entries = this.repository(top).folderAt(commit, folder);
		if (!entries) {
			return undefined;
		}
		const prefix = folder.replace(/^\/+|\/+$/g, '');
		const repo = this.repository(top);
		return {
			folders: entries.filter((e) => e.kind === 'tree').map((e) => e.name),
			files: entries
				.filter((e) => e.kind !== 'tree')
				.map((e) => withTarget(repo, fileOf(e, prefix === '' ? e.name : `${prefix}/${e.name}`))),
		};
	}

	async diffCommits(top: string, from: string, to: string): Promise<GitFileChange[]> {
		return this.repository(top).diffTrees(from, to);
	}

	/** Writes the cached histories still to be written, and closes the repositories' packs. */
	close(): void {
		this.saveHistories();
		for (const { repo } of this.repositories.values()) {
			repo.close();
		}
		this.repositories.clear();
	}

	/**
	 * The repository of a work tree's top, opened once and kept (its packs stay open), read from the
	 * git folder adopted for it. Whenever `.git` changed since, it is looked at again: a `.git` that
	 * names another folder than the adopted one is refused (`git.gitDirChanged`), one never adopted
	 * must pass the adoption rule (`git.foreignGitDir`).
	 */
	repository(top: string): GitRepository {
		const open = this.repositories.get(top);
		const dotGit = dotGitIdentity(top);
		if (open && open.dotGit === dotGit && dotGit !== undefined) {
			return open.repo;
		}
		const policy = this.options.gitDirPolicy?.(top) ?? {};
		const recorded = this.adopted.get(top) ?? policy.recorded;
		const location = adoptedLocation(top, { recorded, trusted: policy.trusted });
		if (open && open.repo.gitDir === location.gitDir && open.repo.commonDir === location.commonDir) {
			open.dotGit = dotGit;
			return open.repo;
		}
		open?.repo.close();
		const repo = GitRepository.open(top, location);
		this.repositories.set(top, { repo, dotGit });
		return repo;
	}

	private saveHistories(): void {
		for (const [key, history] of this.unsaved) {
			this.cache?.save(key, history);
		}
		this.unsaved.clear();
	}

	/**
	 * The history from `tip` back along first parents. With a known history, the walk stops at the
	 * first commit it shares with it (the old tip after a fetch, the fork point after a rewrite) and
	 * reuses everything older.
	 */
	private async walk(
		repo: GitRepository,
		tip: string,
		known: FirstParentHistory | undefined,
		signal?: AbortSignal,
	): Promise<FirstParentHistory> {
		const h = repo.hashLength;
		const walk = new HistoryWalk(h);
		const scan = emptyScan();
		let keep = 0;
		let endedShallow = false;
		// The commit being read, as raw bytes: each step writes its first parent's id here.
		const key = Buffer.from(tip, 'hex');
		for (;;) {
			// A branch that moved on meets the known tip within a few commits; only a longer walk (a
			// rewrite, an old cache) is worth building the known history's lookup table for.
			const index = !known
				? -1
				: known.isAt(known.count - 1, key)
					? known.count - 1
					: walk.count < 64
						? -1
						: known.indexOf(key.toString('hex'));
			if (index >= 0) {
				keep = index + 1;
				break;
			}
			// Only a few fields of each commit are kept: its bytes need no memory of their own, and
			// the message past its subject is not inflated.
			const object = repo.objects.peek(key, holdsSubject);
			if (!object) {
				if (walk.count === 0) {
					throw new DeskError('git.missingObject', `Commit ${tip} is not in ${repo.top}.`, { oid: tip });
				}
				endedShallow = true; // A shallow clone: history ends where the objects do.
				break;
			}
			if (object.type !== 'commit' || !scanCommit(object.data, h, scan)) {
				const oid = key.toString('hex');
				throw new DeskError('git.corrupt', `${oid} on the first-parent chain of ${repo.top} is not a valid commit.`, {
					oid,
				});
			}
			walk.add(key, object.data, scan);
			if (scan.parentAt < 0) {
				break;
			}
			hexInto(object.data, scan.parentAt, key);
			if (walk.count % yieldEvery === 0) {
				signal?.throwIfAborted();
				await new Promise((resolve) => setImmediate(resolve));
			}
		}
		const base = known ?? FirstParentHistory.empty(h);
		return base.extendWith(keep, walk, keep > 0 ? base.endedShallow : endedShallow);
	}

	/**
	 * The cached history of a ref, unless it ended at a shallow clone's boundary that a fetch has
	 * since deepened (its oldest commit has a parent now): then it starts too late and is walked again.
	 */
	private loadCached(repo: GitRepository, key: string): FirstParentHistory | undefined {
		const cached = this.cache?.load(key);
		if (!cached || cached.hashLength !== repo.hashLength) {
			return undefined;
		}
		if (cached.endedShallow && cached.count > 0) {
			const oldest = repo.tryCommit(cached.oidAt(0));
			const parent = oldest?.parents[0];
			if (!oldest || (parent !== undefined && repo.objects.has(parent))) {
				return undefined;
			}
		}
		return cached;
	}

	private tipOf(repo: GitRepository, ref: string): string | undefined {
		const oid = repo.resolveRef(ref);
		return oid === undefined ? undefined : repo.peelToCommit(oid);
	}
}

/** The longest part of a link's target listed with it: git's links are paths, far shorter. */
const maxTargetBytes = 4096;

/** A symbolic link with its target (its blob's text, cut at 4 KiB); anything else as it is. */
function withTarget(repo: GitRepository, file: TreeFile): GitTreeFile {
	return file.kind === 'symlink'
		? { ...file, target: repo.blob(file.oid).subarray(0, maxTargetBytes).toString('utf8') }
		: file;
}

/** What `<top>/.git` is now (its inode and times, and where it leads): a change means it is looked at again. */
function dotGitIdentity(top: string): string | undefined {
	const dotGit = path.join(top, '.git');
	try {
		const stat = fs.lstatSync(dotGit, { bigint: true });
		return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.isSymbolicLink() ? fs.realpathSync(dotGit) : ''}`;
	} catch {
		return undefined;
	}
}
