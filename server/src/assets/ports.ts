import type { AssetRecord, HeadObservation, MadeBy, ProjectRecord } from './types';

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
	/** Asset ids of a project, in the order they were added. */
	projectAssetIds(project: string): string[];
	headObservations(assetId: string): HeadObservation[];
}

export interface LibraryWrites extends LibraryReads {
	insertAsset(asset: AssetRecord): void;
	insertProject(project: ProjectRecord): void;
	setMainAsset(project: string, assetId: string): void;
	/** Adds the asset to the project; a no-op when it is there already. */
	addProjectAsset(project: string, assetId: string, addedAt: string): void;
	/** Records the first observation of `commit` as the checkout's head; later ones change nothing. Returns whether it was new. */
	recordHead(assetId: string, observation: HeadObservation): boolean;
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

/** Read-only access to git repositories. Implementations must never run repository-configured programs. */
export interface GitReader {
	/** Top of the work tree that contains `dir`, or undefined when it is in no repository. */
	findTop(dir: string): Promise<string | undefined>;
	/** URL of the `origin` remote, '' when there is none. */
	originUrl(top: string): Promise<string>;
	/** origin/HEAD's branch, else main, else master, else the checked-out branch ('' when HEAD is detached and none exists). */
	defaultBranch(top: string): Promise<string>;
	/** Commit the checkout's HEAD points at, undefined in a repository with no commits. */
	headCommit(top: string): Promise<string | undefined>;
	/** `git log --first-parent --reverse` of the branch (HEAD when branch is ''), oldest first. */
	firstParentHistory(top: string, branch: string, signal?: AbortSignal): Promise<CommitInfo[]>;
	/** Number of files in a commit's tree. */
	fileCount(top: string, commit: string): Promise<number>;
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

export type { MadeBy };
