/**
 * The library's records, with the field names of seed 000 §01 and §04. They are what the CLI prints
 * with --json and what the protocol carries, so their names are part of the public surface.
 */

/** snapshot: manifests over the blob store; git: commits of a branch; none: links and notes. */
export type Engine = 'snapshot' | 'git' | 'none';

/** Who made a version: a run, a sync, something outside the desk, the window's own press, or a desk tool call. */
export type MadeBy = 'run' | 'sync' | 'outside' | 'user' | 'conductor';

export interface AssetRecord {
	/** `a-` and 16 hex digits. */
	id: string;
	name: string;
	/** A free label; `code` is set on adopted repos, `skill` on folders with a valid SKILL.md. */
	kind: string;
	/** One-line description. */
	about: string;
	working_dir: string;
	engine: Engine;
	/** Read by AtGo for snapshot assets; stays 0 for git assets. */
	picked_version: number;
	/** Git assets: the origin remote's URL ('' when there is none). */
	remote: string;
	/** Git assets: the branch whose first-parent commits are the versions. */
	branch: string;
	/** Link assets. */
	url: string;
	/** Notes assets. */
	notes: string;
	tags: string[];
	created_at: string;
	created_by: string;
}

export interface ProjectRecord {
	name: string;
	/** The repository top the project lives in; '' for a project without a checkout. */
	path: string;
	/** Id of the main asset, '' while it has none. */
	main_asset: string;
	created_at: string;
}

/** One version of a git asset: the n-th commit of `git log --first-parent --reverse` of its branch. */
export interface GitVersion {
	version: number;
	commit: string;
	/** Commit time as `%cI` prints it (ISO 8601 with the committer's offset). */
	made_at: string;
	made_by: MadeBy;
	/** When the commit was first observed as the checkout's head. */
	head_at?: string;
	/** A commit between the first and last observed heads that was never observed itself. */
	never_head?: boolean;
	/** First line of the commit message. */
	subject: string;
}

export interface HeadObservation {
	commit: string;
	head_at: string;
	made_by: MadeBy;
}

/** What the Assets view and `assets list` show for an asset. */
export interface AssetSummary extends AssetRecord {
	/** Projects that have this asset, with whether it is their main asset. */
	projects: Array<{ name: string; main: boolean }>;
	/** Number of versions; for a git asset the first-parent commits of its branch. */
	version_count: number;
	/** Files in the tip (git) or the picked version (snapshot), as the assets page shows. */
	file_count: number;
	/** Why versions could not be read, when they could not. */
	problem?: string;
}
