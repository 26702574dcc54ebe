import type { AdoptedGitDir, GitDirLocation } from '../git/gitDir';
import type {
	AssetCheck,
	AssetRecord,
	FileKind,
	HeadObservation,
	MadeBy,
	Manifest,
	ProjectRecord,
	SnapshotVersion,
	UsedIn,
} from './types';

/**
 * What the asset library needs from the outside world. The domain core talks only to these; the
 * adapters (sql.js store, isomorphic-git, node:fs) live beside it and tests can substitute them.
 */

export interface LibraryReads {
	getAsset(id: string): AssetRecord | undefined;
	/** The git asset of this checkout and remote, if the library has one. */
	findGitAsset(workingDir: string, remote: string): AssetRecord | undefined;
	listAssets(): AssetRecord[];
	getProject(name: string): ProjectRecord | undefined;
	getProjectByPath(path: string): ProjectRecord | undefined;
	listProjects(): ProjectRecord[];
	headObservations(assetId: string): HeadObservation[];
	snapshotVersions(assetId: string): SnapshotVersion[];
	snapshotVersion(assetId: string, version: number): SnapshotVersion | undefined;
	latestSnapshotVersion(assetId: string): SnapshotVersion | undefined;
	/** Launch records that plugged the asset (glossary: Used in). */
	usedIn(assetId: string): UsedIn[];
	/** A project's member assets in the order they joined, in one read. */
	projectAssets(project: string): AssetRecord[];
	/** The git folder recorded for the git asset of a checkout (the newest one that has one). */
	adoptedGitDir(workingDir: string): AdoptedGitDir | undefined;
	/** The branch tip and version count last seen for a git asset. */
	gitTip(assetId: string): { tip: string; count: number } | undefined;
	/** Per snapshot asset: its number of versions and the file count of its picked version, in one read. */
	snapshotFacts(): Map<string, { versions: number; files: number }>;
	/** Every project membership, in one read. */
	memberships(): Array<{ project: string; asset_id: string }>;
}

/** The fields of an asset record that change after it is made. */
export interface AssetChanges {
	name?: string;
	kind?: string;
	about?: string;
	about_model_written?: boolean;
	picked_version?: number;
	tags?: string[];
	checks?: AssetCheck[];
	retired?: boolean;
}

export interface LibraryWrites extends LibraryReads {
	insertAsset(asset: AssetRecord): void;
	updateAsset(id: string, changes: AssetChanges): void;
	insertSnapshotVersion(assetId: string, version: SnapshotVersion): void;
	setGitTip(assetId: string, tip: string, count: number, seenAt: string): void;
	/** Records where a git asset's git folder is, as adopted (library v4). */
	setGitDir(assetId: string, gitDir: AdoptedGitDir): void;
	insertLaunchPlug(plug: UsedIn & { asset_id: string }): void;
	insertProject(project: ProjectRecord): void;
	setMainAsset(project: string, assetId: string): void;
	/** Ties a project made without a repository to the repository whose top is `path`. */
	setProjectPath(project: string, path: string): void;
	/** Adds the asset to the project; a no-op when it is there already. */
	addProjectAsset(project: string, assetId: string, addedAt: string): void;
	/**
	 * Answers the asset's open proposal to retire it (glossary: Retired), if it has one, as accepted
	 * by `by` at `at`: the person retired the asset directly.
	 */
	acceptRetireProposals(assetId: string, by: string, at: string): void;
	/** Records the first observation of `commit` as the checkout's head; later ones change nothing. Returns whether it was new. */
	recordHead(assetId: string, observation: HeadObservation): boolean;
	/**
	 * Records the answer to a client's request id with the effect it describes (nothing when there is
	 * no request); throws when the id was answered meanwhile, so the effect is not made twice.
	 */
	answer(request: ClientRequestKey | undefined, result: unknown, at: string): void;
}

/** A client's request id with the hash of what it asked (see store/clientRequests). */
export interface ClientRequestKey {
	readonly id: string;
	readonly method: string;
	readonly hash: string;
}

export interface LibraryStore extends LibraryReads {
	/** Runs `body` as one durable transaction: all of its writes land, or none. */
	batch<T>(body: (writes: LibraryWrites) => T): T;
}

export interface CommitInfo {
	oid: string;
	/** `%cI` of the commit. */
	committedAt: string;
	subject: string;
}

/** `git log --first-parent --reverse` of a branch, held compactly; index 0 is the oldest commit (v1). */
export interface CommitHistory {
	readonly count: number;
	/** The newest commit, undefined for an empty history. */
	readonly tip: string | undefined;
	oidAt(index: number): string;
	/** The index of a commit in the history, -1 when it is not on it. */
	indexOf(oid: string): number;
	entry(index: number): CommitInfo;
	/** `entry(index).committedAt` and `.subject` without the entry: a listing of tens of thousands makes no object it does not keep. */
	committedAt(index: number): string;
	subjectAt(index: number): string;
}

/** A path of a commit's tree that is not a folder: a file, an executable, a symbolic link or a submodule. */
export interface GitTreeFile {
	path: string;
	/** The blob's id (a link's blob holds its target), or the commit a submodule records. */
	oid: string;
	executable: boolean;
	kind: FileKind;
	/** A symbolic link's target (its first 4 KiB, as text), where the reader lists links with it. */
	target?: string;
}

/** A file that differs between two commits: `before` missing for an added file, `after` for a removed one. */
export interface GitFileChange {
	path: string;
	before?: GitTreeFile;
	after?: GitTreeFile;
}

/**
 * Read-only access to git repositories. Implementations must never run repository-configured
 * programs, and must read only the objects they are asked for (repositories run to gigabytes).
 */
export interface GitReader {
	/** Top of the work tree that contains `dir`, or undefined when it is in no repository. */
	findTop(dir: string): Promise<string | undefined>;
	/**
	 * Where the git folder of `top` really is, when the desk may adopt it (see git/gitDir.ts): the
	 * recorded one unchanged, or one the adoption rule takes with `trusted` folders, or any with
	 * `allow`. `allowed` says it was taken on the person's word. Refused with `git.foreignGitDir` or
	 * `git.gitDirChanged`. Later reads of `top` in this process use that folder.
	 */
	adoptGitDir(
		top: string,
		options: { recorded?: AdoptedGitDir; trusted?: readonly string[]; allow?: boolean },
	): Promise<{ location: GitDirLocation; allowed: boolean }>;
	/** URL of the `origin` remote, '' when there is none. */
	originUrl(top: string): Promise<string>;
	/** origin/HEAD's branch, else main, else master, else the checked-out branch ('' when HEAD is detached and none exists). */
	defaultBranch(top: string): Promise<string>;
	/** The commit a branch ('' for HEAD) points at, undefined when there is none. */
	branchTip(top: string, branch: string): Promise<string | undefined>;
	/** Commit the checkout's HEAD points at, undefined in a repository with no commits. */
	headCommit(top: string): Promise<string | undefined>;
	/** `git log --first-parent --reverse` of the branch (HEAD when branch is ''), oldest first. */
	firstParentHistory(top: string, branch: string, signal?: AbortSignal): Promise<CommitHistory>;
	/** The same from a commit; undefined when the commit is no longer in the repository. */
	firstParentHistoryFrom(top: string, commit: string, signal?: AbortSignal): Promise<CommitHistory | undefined>;
	/** Number of entries `treeFiles` lists for a commit (`git ls-tree -r` lists as many). */
	fileCount(top: string, commit: string): Promise<number>;
	/**
	 * Every entry of a commit's tree that is not a folder, sorted by path, with its kind: files,
	 * executables, symbolic links (with their targets) and submodules, as `git ls-tree -r` lists them.
	 */
	treeFiles(top: string, commit: string): Promise<GitTreeFile[]>;
	/** The content of a blob. */
	readBlob(top: string, oid: string): Promise<Uint8Array>;
	/**
	 * What the entry at `path` in a commit holds: a file's bytes, a symbolic link's target (its
	 * blob, never followed), a submodule's commit id and a newline. Undefined when there is no such
	 * entry or it is a folder.
	 */
	readFile(top: string, commit: string, path: string): Promise<Uint8Array | undefined>;
	/**
	 * One folder of a commit's tree ('' is the top): the names of its subfolders and its other
	 * entries (as `treeFiles` lists them), reading only the trees on the way. Undefined when there
	 * is no such folder.
	 */
	listFolder(
		top: string,
		commit: string,
		folder: string,
	): Promise<{ folders: string[]; files: GitTreeFile[] } | undefined>;
	/** The files that differ from one commit to another, sorted by path. */
	diffCommits(top: string, from: string, to: string): Promise<GitFileChange[]>;
	/** Lets go of open packs and caches. */
	close(): void;
}

export interface PathInfo {
	kind: 'directory' | 'file' | 'other' | 'missing';
	/** The path with links resolved, when it exists. */
	real?: string;
}

/** The few file-system facts the domain needs, and its clock and id source. */
export interface Environment {
	now(): Date;
	newAssetId(): string;
	inspectPath(path: string): Promise<PathInfo>;
	baseName(path: string): string;
}

/** What a walk of a snapshot asset's folder found. */
export interface FolderScan {
	manifest: Manifest;
	/** sha256 of the manifest's canonical bytes: equal manifests, equal hashes. */
	manifestHash: string;
	/**
	 * What the folder holds that the version does not, by path and reason, sorted by path: links,
	 * FIFOs, sockets, devices (never followed), names that are not UTF-8 (shown with `\xNN`), the
	 * desk's `.desk-tmp-*` files, the library's own folder, folders deeper than 256 levels, and files
	 * that vanished or kept changing while read.
	 */
	skipped: Array<{ path: string; reason: string }>;
	/** Groups of paths that differ only by case or Unicode normalisation: kept apart, reported. */
	lookalikes: string[][];
	/** Files whose content was read (the rest were known from the stat cache). */
	filesRead: number;
	bytesRead: number;
}

export interface ScanOptions {
	/** Store the files' contents in the blob store (a snapshot) or only hash them (a working-changes check). */
	store: boolean;
	signal?: AbortSignal;
	onProgress?: (filesDone: number) => void;
	/** The folder must be this one when opened: one its caller checked and that was swapped since (for a link, say) is refused. */
	folderIs?: FolderIdentity;
}

/** Which folder a path led to when it was checked: its device and inode. */
export interface FolderIdentity {
	readonly dev: number;
	readonly ino: number;
}

/**
 * The snapshot engine's file work (glossary: Version): walking a working folder with a stat cache, storing
 * blobs and manifests, reading files of a version, laying out mounts. Implemented over node:fs and
 * the blob store.
 */
export interface SnapshotFiles {
	scan(assetId: string, folder: string, options: ScanOptions): Promise<FolderScan>;
	putManifest(manifest: Manifest): string;
	readManifest(hash: string): Manifest;
	readBlob(hash: string): Buffer;
	/** Makes a working folder: `dir` must not exist or be empty; without it, the library's folder for `id`. */
	prepareFolder(id: string, dir: string | undefined): string;
	/** Writes `bytes` at `rel` inside `folder`, never through a link and never outside it. */
	writeInFolder(folder: string, rel: string, bytes: Uint8Array, executable?: boolean, folderIs?: FolderIdentity): void;
	removeInFolder(folder: string, rel: string): void;
	/** Up to `maxBytes` of a file in a working folder, never through a link; undefined when it cannot be read. */
	readWorkingFile(folder: string, rel: string, maxBytes: number): Buffer | undefined;
	/**
	 * Lays version `version` out read-only at `<library>/mounts/<id>/<version>` and returns that path:
	 * a mount already there is reused while it matches the manifest, and laid out again when not.
	 */
	mount(assetId: string, version: number, manifest: Manifest): string;
}

export type { MadeBy };
