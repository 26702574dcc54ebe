/**
 * The library's records, with the field names of the glossary (Asset, Version). They are what the CLI prints
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
	/** The about was written by a model and accepted automatically (glossary: Tags and about). */
	about_model_written: boolean;
	/** The asset this one was derived from, and that asset's picked version then ('' and 0 when none). */
	derived_from: string;
	derived_from_version: number;
	/** Command checks a run that writes this asset is held to (glossary: Checks). */
	checks: AssetCheck[];
	/** Out of the lists and suggestions, never deleted (glossary: Retired). */
	retired: boolean;
}

/**
 * A proposal to retire an asset (glossary: Retired), made by an agent through `propose_asset_retire`
 * or by a person's own agent through `desk mcp`: it never retires anything; the person accepts it in
 * the editor (the asset is retired then, by them) or declines it; retiring the asset directly
 * accepts it the same way. At most one is open an asset.
 */
export interface RetireProposal {
	id: string;
	asset_id: string;
	/** Why, in the proposer's words (untrusted text: shown inert). */
	reason: string;
	/** Who proposed it, as `actorLabel` writes it (`agent claude, run <id>`). */
	proposed_by: string;
	/** The run the proposal came from, when an agent made it. */
	run_id?: string;
	created_at: string;
	state: 'open' | 'accepted' | 'declined';
	/** Who accepted or declined it, and when. */
	answered_by?: string;
	answered_at?: string;
}

/** A command check (glossary: Checks): run in `cwd` (relative to the asset's folder) within `timeout` seconds. */
export interface AssetCheck {
	id: string;
	executable: string;
	args: string[];
	cwd: string;
	timeout: number;
}

/** One file of a snapshot version. */
export interface ManifestEntry {
	/** Relative, `/`-separated, no `.`, `..` or empty components. */
	path: string;
	/** sha256 of the content, the blob's name. */
	hash: string;
	size: number;
	executable: boolean;
}

/** A snapshot version's list of files, stored as a blob itself. */
export interface Manifest {
	format: 1;
	files: ManifestEntry[];
}

/** One version of a snapshot asset (glossary: Version): a manifest over the blob store, never rewritten. */
export interface SnapshotVersion {
	version: number;
	/** sha256 of the manifest blob. */
	manifest: string;
	file_count: number;
	bytes: number;
	note: string;
	made_at: string;
	made_by: MadeBy;
}

/** What asset_snapshot made: the version cut, or the latest when nothing changed, and what the walk passed over. */
export interface SnapshotResult {
	asset: AssetRecord;
	version: SnapshotVersion;
	/** False when nothing changed since the last version (no new version is cut). */
	created: boolean;
	skipped: Array<{ path: string; reason: string }>;
	lookalikes: string[][];
	filesRead: number;
}

/** What go would read now (glossary: AtGo). */
export type AtGo =
	| { engine: 'snapshot'; version: number; working_changes: false; manifest: string }
	/** The folder has working changes: go would read the folder itself as `version` (the next number); nothing is stored. */
	| { engine: 'snapshot'; version: number; working_changes: true; changed: number }
	| { engine: 'git'; version: number; commit: string; branch: string };

/** A launch that plugged an asset (glossary: Used in), with the version it froze. */
export interface UsedIn {
	launch_id: string;
	project: string;
	role: string;
	version: number;
	launched_at: string;
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

/** A version of any engine, as the Assets view and `asset versions` list them. */
export type AssetVersion = ({ engine: 'git' } & GitVersion) | ({ engine: 'snapshot' } & SnapshotVersion);

/** One file of a version. */
/**
 * What a path of a version is. A snapshot version holds files and executable files only (a link in
 * its folder is reported and never stored); a git version also holds symbolic links (mode 120000)
 * and submodules (gitlinks, mode 160000), as `git ls-tree -r` lists them.
 */
export type FileKind = 'file' | 'executable' | 'symlink' | 'submodule';

export interface VersionFile {
	path: string;
	/** In bytes; -1 when not known without reading the content (git versions). */
	size: number;
	/**
	 * sha256 of the content for snapshot versions; for git versions the object id of the entry: a
	 * blob's (a link's blob holds its target), or the commit a submodule records.
	 */
	hash: string;
	executable: boolean;
	kind: FileKind;
	/** A symbolic link's target, as the link's blob holds it (its first 4 KiB). Read as text, never followed. */
	target?: string;
}

export interface VersionDiff {
	from: number;
	to: number;
	added: VersionFile[];
	removed: VersionFile[];
	modified: Array<{ before: VersionFile; after: VersionFile }>;
}

/** A git asset's branch was rewritten: the versions from `firstChanged` on now name other commits. */
export interface BranchRewrite {
	id: string;
	name: string;
	branch: string;
	firstChanged: number;
	oldCount: number;
	newCount: number;
	oldTip: string;
	newTip: string;
}
