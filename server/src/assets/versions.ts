import { DeskError } from '../core/errors';
import type { LibraryContext } from './libraryContext';
import { diffManifests } from './manifest';
import type { ClientRequestKey, CommitHistory, FolderIdentity, GitTreeFile } from './ports';
import type {
	AssetRecord,
	AssetVersion,
	AtGo,
	BranchRewrite,
	GitVersion,
	HeadObservation,
	MadeBy,
	Manifest,
	SnapshotResult,
	SnapshotVersion,
	VersionDiff,
	VersionFile,
} from './types';

/** How asset_snapshot is asked: the version's note, who made it, and its cancel and progress. */
export interface SnapshotOptions {
	note?: string;
	madeBy: MadeBy;
	signal?: AbortSignal;
	onProgress?: (files: number) => void;
	clientRequest?: ClientRequestKey;
	/** The working folder must be this one when opened (one its caller checked). */
	folderIs?: FolderIdentity;
}

/**
 * An asset's versions (glossary: Asset, Version): snapshot versions cut from a working folder, git
 * versions numbered along a branch's first-parent history with the heads the desk observed, AtGo,
 * and the files, folders, bytes and diffs of a version.
 */
export class Versions {
	/** Told when a git asset's branch was found rewritten (numbers after the fork changed). */
	onHistoryRewritten: ((rewrite: BranchRewrite) => void) | undefined;

	constructor(private readonly ctx: LibraryContext) {}

	/** asset_snapshot: cuts the next version from the working folder when it changed (glossary: Version). */
	async snapshot(id: string, options: SnapshotOptions): Promise<SnapshotResult> {
		const asset = this.writableFolderAsset(id);
		const scan = await this.ctx.snapshots.scan(asset.id, asset.working_dir, {
			store: true,
			signal: options.signal,
			onProgress: options.onProgress,
			...(options.folderIs ? { folderIs: options.folderIs } : {}),
		});
		const now = this.ctx.now();
		const result = this.ctx.store.batch((writes) => {
			const latest = writes.latestSnapshotVersion(asset.id);
			let cut: { version: SnapshotVersion; created: boolean };
			if (latest && latest.manifest === scan.manifestHash) {
				cut = { version: latest, created: false };
			} else {
				const version = versionOf(
					(latest?.version ?? 0) + 1,
					scan.manifestHash,
					scan.manifest,
					options.note ?? '',
					now,
					options.madeBy,
				);
				writes.insertSnapshotVersion(asset.id, version);
				writes.updateAsset(asset.id, { picked_version: version.version });
				cut = { version, created: true };
			}
			// The answer to the client's request is written with the version it names.
			writes.answer(
				options.clientRequest,
				{
					asset: writes.getAsset(asset.id),
					...cut,
					skipped: scan.skipped,
					lookalikes: scan.lookalikes,
					filesRead: scan.filesRead,
				},
				now,
			);
			return cut;
		});
		if (scan.skipped.length > 0) {
			this.ctx.logger.warn(
				`snapshot of ${asset.name}: ${scan.skipped.length} entr${scan.skipped.length === 1 ? 'y' : 'ies'} not stored (${scan.skipped
					.slice(0, 3)
					.map((s) => `${s.path}: ${s.reason}`)
					.join('; ')})`,
			);
		}
		if (scan.lookalikes.length > 0) {
			this.ctx.logger.warn(
				`snapshot of ${asset.name}: names that differ only by case or normalisation, kept apart: ${scan.lookalikes.map((g) => g.join(' / ')).join('; ')}`,
			);
		}
		return {
			asset: this.ctx.getAsset(asset.id),
			...result,
			skipped: scan.skipped,
			lookalikes: scan.lookalikes,
			filesRead: scan.filesRead,
		};
	}

	/**
	 * asset_version: writes files into a snapshot asset's working folder, then cuts the next version.
	 * Refuses a path outside the folder and an asset with no folder the desk may write (git, link, notes).
	 */
	async putFiles(
		id: string,
		files: Array<{ path: string; bytes: Uint8Array }>,
		options: { note?: string; madeBy: MadeBy; clientRequest?: ClientRequestKey; folderIs?: FolderIdentity },
	) {
		const asset = this.writableFolderAsset(id);
		for (const file of files) {
			this.ctx.snapshots.writeInFolder(asset.working_dir, file.path, file.bytes, false, options.folderIs);
		}
		return this.snapshot(asset.id, options);
	}

	/**
	 * Lands a run on a snapshot target (glossary: Gate): its changed files written into the asset's working
	 * folder and deleted ones removed, then the next version cut with made_by run. Refused when the
	 * asset moved on since the run began (another version, or working changes), so nothing made
	 * meanwhile is folded into the run's version.
	 */
	async landRunChanges(
		id: string,
		began: number,
		changes: ReadonlyArray<{ path: string; bytes?: Uint8Array; executable?: boolean }>,
		note: string,
	) {
		const asset = this.writableFolderAsset(id);
		const atGo = await this.atGo(asset.id);
		if (atGo.engine !== 'snapshot' || atGo.version !== began || atGo.working_changes) {
			throw new DeskError(
				'run.targetMoved',
				`${asset.name} moved on since the run began at v${began} (${atGo.engine === 'snapshot' && atGo.working_changes ? 'its folder has working changes' : `it is at v${atGo.version} now`}); snapshot or revert that first, or retry the run.`,
				{ id: asset.id, began, now: atGo.version },
			);
		}
		for (const change of changes) {
			if (change.bytes === undefined) {
				this.ctx.snapshots.removeInFolder(asset.working_dir, change.path);
			} else {
				this.ctx.snapshots.writeInFolder(asset.working_dir, change.path, change.bytes, change.executable ?? false);
			}
		}
		return this.snapshot(asset.id, { note, madeBy: 'run' });
	}

	/** Records a commit a run made (on the checkout's branch or the run's own) as made_by run. */
	recordRunCommit(id: string, commit: string): void {
		this.ctx.store.batch((writes) => writes.recordHead(id, { commit, head_at: this.ctx.now(), made_by: 'run' }));
	}

	/** AtGo (glossary: AtGo): what a run would read if go were pressed now. */
	async atGo(id: string, signal?: AbortSignal): Promise<AtGo> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine === 'none') {
			throw new DeskError('asset.noFiles', `${asset.name} has no files to read.`, { id });
		}
		if (asset.engine === 'git') {
			const history = await this.gitHistory(asset, signal);
			if (history.tip === undefined) {
				throw new DeskError('asset.noVersion', `${asset.name} has no commits on ${asset.branch || 'HEAD'}.`, { id });
			}
			return { engine: 'git', version: history.count, commit: history.tip, branch: asset.branch };
		}
		const picked = this.ctx.store.snapshotVersion(asset.id, asset.picked_version);
		const latest = this.ctx.store.latestSnapshotVersion(asset.id);
		if (!picked || !latest) {
			throw new DeskError('asset.noVersion', `${asset.name} has no version ${asset.picked_version}.`, {
				id,
				version: asset.picked_version,
			});
		}
		const scan = await this.ctx.snapshots.scan(asset.id, asset.working_dir, { store: false, signal });
		if (scan.manifestHash === picked.manifest) {
			return { engine: 'snapshot', version: picked.version, working_changes: false, manifest: picked.manifest };
		}
		const diff = diffManifests(this.ctx.snapshots.readManifest(picked.manifest), scan.manifest);
		return {
			engine: 'snapshot',
			version: latest.version + 1,
			working_changes: true,
			changed: diff.added.length + diff.removed.length + diff.modified.length,
		};
	}

	/** Versions of any engine, oldest first. */
	async assetVersions(id: string, signal?: AbortSignal): Promise<AssetVersion[]> {
		return (await this.versionPage(id, {}, signal)).versions;
	}

	/**
	 * The versions numbered `range.from` to `range.to` (inclusive, clipped to what exists), oldest
	 * first, and how many there are in all: a page of a long history for a view.
	 */
	async versionPage(
		id: string,
		range: VersionRange,
		signal?: AbortSignal,
	): Promise<{ versions: AssetVersion[]; total: number }> {
		const source = await this.versionSource(id, signal);
		const { from, to } = clip(range, source.total);
		return { versions: source.page(from, to), total: source.total };
	}

	/**
	 * Every version, oldest first, `pageSize` at a time, all from one reading of the history: a
	 * listing of tens of thousands of versions is written out page by page in flat memory.
	 */
	async *versionsInPages(id: string, pageSize: number, signal?: AbortSignal): AsyncGenerator<AssetVersion[]> {
		const source = await this.versionSource(id, signal);
		for (let from = 1; from <= source.total; from += pageSize) {
			yield source.page(from, Math.min(source.total, from + pageSize - 1));
		}
	}

	private async versionSource(
		id: string,
		signal?: AbortSignal,
	): Promise<{ total: number; page: (from: number, to: number) => AssetVersion[] }> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine === 'snapshot') {
			const all = this.ctx.store.snapshotVersions(asset.id);
			return {
				total: all.length,
				page: (from, to) => all.slice(from - 1, to).map((v): AssetVersion => ({ engine: 'snapshot', ...v })),
			};
		}
		if (asset.engine !== 'git') {
			return { total: 0, page: () => [] };
		}
		const history = await this.gitHistory(asset, signal);
		const observations = this.ctx.store.headObservations(asset.id);
		return { total: history.count, page: (from, to) => numberVersions(history, observations, from, to) };
	}

	/** The files of a version (default: the picked version of a snapshot asset, the tip of a git asset). */
	async files(id: string, version?: number): Promise<{ version: number; files: VersionFile[] }> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine === 'none') {
			throw new DeskError('asset.noFiles', `${asset.name} has no files to read.`, { id });
		}
		if (asset.engine === 'snapshot') {
			const n = version ?? asset.picked_version;
			const manifest = this.ctx.snapshots.readManifest(this.ctx.snapshotVersionOf(asset, n).manifest);
			return {
				version: n,
				files: manifest.files.map((f) => ({
					path: f.path,
					size: f.size,
					hash: f.hash,
					executable: f.executable,
					kind: f.executable ? 'executable' : 'file',
				})),
			};
		}
		const { n, commit } = await this.gitVersionOf(asset, version);
		const tree = await this.ctx.readGit(asset.working_dir, () => this.ctx.git.treeFiles(asset.working_dir, commit));
		return { version: n, files: tree.map((entry) => gitFile(entry)) };
	}

	/**
	 * One folder of a version ('' is the top): its subfolders' names and its files, so that a view
	 * of a version of tens of thousands of files reads only what is opened. `asset.fileNotFound`
	 * when the version has no such folder.
	 */
	async folder(
		id: string,
		folderPath: string,
		version?: number,
	): Promise<{ version: number; folders: string[]; files: VersionFile[] }> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine === 'none') {
			throw new DeskError('asset.noFiles', `${asset.name} has no files to read.`, { id });
		}
		const folder = folderPath.replace(/^\/+|\/+$/g, '');
		const notFound = () =>
			new DeskError(
				'asset.fileNotFound',
				`${folder || 'The top folder'} is not a folder of that version of ${asset.name}.`,
				{ id, path: folder, version },
			);
		if (asset.engine === 'git') {
			const { n, commit } = await this.gitVersionOf(asset, version);
			const listed = await this.ctx.readGit(asset.working_dir, () =>
				this.ctx.git.listFolder(asset.working_dir, commit, folder),
			);
			if (!listed) {
				throw notFound();
			}
			return { version: n, folders: listed.folders, files: listed.files.map((f) => gitFile(f)) };
		}
		const { version: n, files } = await this.files(id, version);
		const prefix = folder === '' ? '' : `${folder}/`;
		const folders = new Set<string>();
		const inFolder: VersionFile[] = [];
		for (const file of files) {
			if (!file.path.startsWith(prefix)) {
				continue;
			}
			const rest = file.path.slice(prefix.length);
			const slash = rest.indexOf('/');
			if (slash < 0) {
				inFolder.push(file);
			} else {
				folders.add(rest.slice(0, slash));
			}
		}
		if (folder !== '' && folders.size === 0 && inFolder.length === 0) {
			throw notFound();
		}
		return { version: n, folders: [...folders], files: inFolder };
	}

	/**
	 * The bytes of one file of a version; of a git version's symbolic link, its target (never
	 * followed); of a submodule, the commit it records and a newline.
	 */
	async cat(id: string, filePath: string, version?: number): Promise<Uint8Array> {
		const asset = this.ctx.getAsset(id);
		const notFound = () =>
			new DeskError('asset.fileNotFound', `${filePath} is not in that version of ${asset.name}.`, {
				id,
				path: filePath,
				version,
			});
		if (asset.engine === 'git') {
			// One path down the trees, not the whole file list of the version.
			const { commit } = await this.gitVersionOf(asset, version);
			const bytes = await this.ctx.readGit(asset.working_dir, () =>
				this.ctx.git.readFile(asset.working_dir, commit, filePath),
			);
			if (!bytes) {
				throw notFound();
			}
			return bytes;
		}
		const file = (await this.files(id, version)).files.find((f) => f.path === filePath);
		if (!file) {
			throw notFound();
		}
		return this.ctx.snapshots.readBlob(file.hash);
	}

	/** What changed between two versions, by file. */
	async diff(id: string, from: number, to: number): Promise<VersionDiff> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine === 'git') {
			// Trees compared by id: subtrees that did not change are never read.
			const a = await this.gitVersionOf(asset, from);
			const b = await this.gitVersionOf(asset, to);
			const changes = await this.ctx.readGit(asset.working_dir, () =>
				this.ctx.git.diffCommits(asset.working_dir, a.commit, b.commit),
			);
			const diff: VersionDiff = { from, to, added: [], removed: [], modified: [] };
			for (const change of changes) {
				if (change.before && change.after) {
					diff.modified.push({ before: gitFile(change.before), after: gitFile(change.after) });
				} else if (change.after) {
					diff.added.push(gitFile(change.after));
				} else if (change.before) {
					diff.removed.push(gitFile(change.before));
				}
			}
			return diff;
		}
		const a = await this.files(id, from);
		const b = await this.files(id, to);
		const toManifest = (files: VersionFile[]): Manifest => ({
			format: 1,
			files: files.map((f) => ({ path: f.path, hash: f.hash, size: Math.max(f.size, 0), executable: f.executable })),
		});
		const diff = diffManifests(toManifest(a.files), toManifest(b.files));
		const byPath = (files: VersionFile[]) => new Map(files.map((f) => [f.path, f]));
		const before = byPath(a.files);
		const after = byPath(b.files);
		return {
			from,
			to,
			added: diff.added.map((f) => after.get(f.path)!),
			removed: diff.removed.map((f) => before.get(f.path)!),
			modified: diff.modified.map((m) => ({ before: before.get(m.before.path)!, after: after.get(m.after.path)! })),
		};
	}

	/** Sync of a git asset: records the checkout's head with made_by sync (glossary: Version). */
	async sync(id: string): Promise<{ asset: AssetRecord; head?: string; recorded: boolean }> {
		return this.observeHead(id, 'sync');
	}

	/**
	 * Records the checkout's head as observed now: made_by sync on Sync, outside at desk boot and when
	 * HEAD moves while the desk runs. Only a commit's first observation is kept.
	 */
	async observeHead(
		id: string,
		madeBy: 'sync' | 'outside' | 'run',
	): Promise<{ asset: AssetRecord; head?: string; recorded: boolean }> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine !== 'git') {
			throw new DeskError('asset.noFolder', `${asset.name} is not a git asset; sync reads a repository's head.`, {
				id,
			});
		}
		const head = await this.ctx.readGit(asset.working_dir, () => this.ctx.git.headCommit(asset.working_dir));
		if (head === undefined) {
			return { asset, recorded: false };
		}
		const recorded = this.ctx.store.batch((writes) =>
			writes.recordHead(asset.id, { commit: head, head_at: this.ctx.now(), made_by: madeBy }),
		);
		return { asset, head, recorded };
	}

	/** Versions of an asset, oldest first (for git assets; glossary: Version). */
	async versions(id: string, signal?: AbortSignal): Promise<GitVersion[]> {
		const asset = this.ctx.getAsset(id);
		if (asset.engine !== 'git') {
			return [];
		}
		const history = await this.gitHistory(asset, signal);
		return numberVersions(history, this.ctx.store.headObservations(asset.id));
	}

	private writableFolderAsset(id: string): AssetRecord {
		const asset = this.ctx.getAsset(id);
		if (asset.engine !== 'snapshot') {
			throw new DeskError(
				'asset.noFolder',
				`${asset.name} has no folder the desk may write to (${asset.engine === 'git' ? 'a git asset: its versions are commits' : `a ${asset.kind || 'link or notes'} asset`}).`,
				{ id, engine: asset.engine },
			);
		}
		return asset;
	}

	private async gitVersionOf(asset: AssetRecord, n: number | undefined): Promise<{ n: number; commit: string }> {
		const history = await this.gitHistory(asset);
		const version = n ?? history.count;
		if (!Number.isInteger(version) || version < 1 || version > history.count) {
			throw new DeskError('asset.noVersion', `${asset.name} has no version ${n ?? 0}.`, { id: asset.id, version: n });
		}
		return { n: version, commit: history.oidAt(version - 1) };
	}

	/**
	 * The first-parent history of a git asset's branch, checked against the tip seen last time: a
	 * branch that moved forward just gains numbers; one whose old tip left the first-parent chain was
	 * rewritten, and the versions after the fork now name other commits. Observations stay with their
	 * commits (they are stored by commit), so they follow the rewrite.
	 */
	async gitHistory(asset: AssetRecord, signal?: AbortSignal): Promise<CommitHistory> {
		const history = await this.ctx.readGit(asset.working_dir, () =>
			this.ctx.git.firstParentHistory(asset.working_dir, asset.branch, signal),
		);
		const tip = history.tip;
		if (tip === undefined) {
			return history;
		}
		const last = this.ctx.store.gitTip(asset.id);
		if (last && last.tip === tip && last.count === history.count) {
			return history;
		}
		if (last && !(last.count <= history.count && history.oidAt(last.count - 1) === last.tip)) {
			const old = await this.ctx.readGit(asset.working_dir, () =>
				this.ctx.git.firstParentHistoryFrom(asset.working_dir, last.tip, signal),
			);
			const common = old ? commonPrefix(old, history) : 0;
			const rewrite: BranchRewrite = {
				id: asset.id,
				name: asset.name,
				branch: asset.branch,
				firstChanged: common + 1,
				oldCount: last.count,
				newCount: history.count,
				oldTip: last.tip,
				newTip: tip,
			};
			this.ctx.logger.warn(
				`${asset.name}: ${asset.branch || 'HEAD'} was rewritten; versions from v${rewrite.firstChanged} on now name other commits (v${rewrite.firstChanged}–v${rewrite.oldCount} before, v${rewrite.firstChanged}–v${rewrite.newCount} now)`,
			);
			this.onHistoryRewritten?.(rewrite);
		}
		this.ctx.store.batch((writes) => writes.setGitTip(asset.id, tip, history.count, this.ctx.now()));
		return history;
	}
}

/** Version numbers `from` to `to`, inclusive; missing or out-of-range ends are clipped to 1..total. */
export interface VersionRange {
	from?: number;
	to?: number;
}

function clip(range: VersionRange, total: number): { from: number; to: number } {
	return { from: Math.max(1, range.from ?? 1), to: Math.min(total, range.to ?? total) };
}

/**
 * Numbers first-parent commits (oldest is v1) and attaches head observations: head_at and made_by
 * from the first observation of a commit, `outside` for one never observed, and never_head for a
 * commit between the first and last observed heads that was never observed itself. Only versions
 * `from` to `to` are made (a page of a long history).
 */
export function numberVersions(
	history: CommitHistory,
	observations: readonly HeadObservation[],
	from = 1,
	to = history.count,
): Array<GitVersion & { engine: 'git' }> {
	const byCommit = new Map(observations.map((o) => [o.commit, o]));
	let first = -1;
	let last = -1;
	for (const observation of observations) {
		const index = history.indexOf(observation.commit);
		if (index >= 0) {
			first = first === -1 ? index : Math.min(first, index);
			last = Math.max(last, index);
		}
	}
	const versions: Array<GitVersion & { engine: 'git' }> = [];
	for (let index = from - 1; index < to; index++) {
		const oid = history.oidAt(index);
		const seen = byCommit.get(oid);
		const version: GitVersion & { engine: 'git' } = {
			engine: 'git',
			version: index + 1,
			commit: oid,
			made_at: history.committedAt(index),
			made_by: seen?.made_by ?? 'outside',
			subject: history.subjectAt(index),
		};
		if (seen) {
			version.head_at = seen.head_at;
		} else if (index > first && index < last) {
			version.never_head = true;
		}
		versions.push(version);
	}
	return versions;
}

/** How many versions two histories share from the oldest on (they share a prefix or nothing, by hash). */
function commonPrefix(a: CommitHistory, b: CommitHistory): number {
	let low = 0;
	let high = Math.min(a.count, b.count);
	// A commit on both at the same number means everything older is the same too.
	while (low < high) {
		const mid = (low + high + 1) >>> 1;
		if (a.oidAt(mid - 1) === b.oidAt(mid - 1)) {
			low = mid;
		} else {
			high = mid - 1;
		}
	}
	return low;
}

function gitFile(entry: GitTreeFile): VersionFile {
	return {
		path: entry.path,
		hash: entry.oid,
		executable: entry.executable,
		size: -1,
		kind: entry.kind,
		...(entry.target === undefined ? {} : { target: entry.target }),
	};
}

export function versionOf(
	version: number,
	manifestHash: string,
	manifest: Manifest,
	note: string,
	madeAt: string,
	madeBy: MadeBy,
): SnapshotVersion {
	return {
		version,
		manifest: manifestHash,
		file_count: manifest.files.length,
		bytes: manifest.files.reduce((sum, f) => sum + f.size, 0),
		note,
		made_at: madeAt,
		made_by: madeBy,
	};
}
