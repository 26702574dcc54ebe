import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeskError } from '../core/errors';
import { parseGitConfig, readGitFile } from './gitFiles';

/** What `<top>/.git` is: git's own folder, a `gitdir:` file (worktrees, submodules) or a link. */
export type DotGitShape = 'folder' | 'file' | 'link';

/** Where a work tree's git directory really is, every path real (links resolved). */
export interface GitDirLocation {
	top: string;
	shape: DotGitShape;
	/** This work tree's git folder (HEAD, index, per-worktree refs). */
	gitDir: string;
	/** The folder shared by a repository's work trees (objects, refs, config): `commondir`, else gitDir. */
	commonDir: string;
	/** Object folders `objects/info/alternates` adds (real paths; those that do not exist left out). */
	alternates: string[];
}

/** The git folder the person adopted for a work tree, as recorded on its asset. */
export interface AdoptedGitDir {
	gitDir: string;
	/** The person allowed it although it is outside what the desk adopts by itself. */
	allowed: boolean;
}

/** Why a location is adopted, or what lies outside and why it is not. */
export type Adoption =
	{ adopted: true; why: 'inside' | 'worktree' | 'submodule' } | { adopted: false; reason: string; outside: string[] };

/**
 * Where the git folder of the work tree whose top is `top` really is, the way git finds it: `.git`
 * as a folder, a `.git` link (followed to its real folder), or a `.git` file whose `gitdir:` line
 * names the folder (absolute, or relative to the top); then the folder's `commondir` (relative to
 * it). Undefined when there is no `.git` or what it names holds no HEAD. Nothing is run.
 */
export function locateGitDir(top: string): GitDirLocation | undefined {
	const realTop = realOrUndefined(top);
	if (realTop === undefined) {
		return undefined;
	}
	const dotGit = path.join(realTop, '.git');
	let lstat: fs.Stats;
	try {
		lstat = fs.lstatSync(dotGit);
	} catch {
		return undefined;
	}
	let shape: DotGitShape;
	let named: string;
	if (lstat.isSymbolicLink()) {
		shape = 'link';
		named = dotGit;
	} else if (lstat.isDirectory()) {
		shape = 'folder';
		named = dotGit;
	} else if (lstat.isFile()) {
		shape = 'file';
		const text = readGitFile(dotGit, { maxBytes: 4096 })?.toString('utf8') ?? '';
		const match = /^gitdir: *(.+?)\s*$/m.exec(text);
		if (!match) {
			return undefined;
		}
		named = path.resolve(realTop, match[1]!);
	} else {
		return undefined;
	}
	const gitDir = realOrUndefined(named);
	if (gitDir === undefined || !isDirectory(gitDir) || !fs.existsSync(path.join(gitDir, 'HEAD'))) {
		return undefined;
	}
	const common = readGitFile(path.join(gitDir, 'commondir'), { maxBytes: 4096 })?.toString('utf8').trim();
	const commonDir = common ? realOrUndefined(path.resolve(gitDir, common)) : gitDir;
	if (commonDir === undefined || !isDirectory(commonDir)) {
		return undefined;
	}
	return { top: realTop, shape, gitDir, commonDir, alternates: alternatesOf(path.join(commonDir, 'objects')) };
}

/**
 * Whether the desk adopts a location by itself. `trusted` are the folders being adopted or opened
 * together (the workspace folders; for one import, the top itself). Adopted are:
 * - `inside`: the git folder and the common folder both inside the top (a plain `.git` folder, or a
 *   `.git` file or link to a folder inside the top);
 * - `worktree`: a linked worktree (`git worktree add`): its git folder is in `<common>/worktrees/`,
 *   names this top back (its `gitdir` file points at `<top>/.git`), and its repository (common
 *   folder) is inside a trusted folder;
 * - `submodule`: a git folder inside `<P>/.git/modules/` of a superproject P above the top, whose
 *   `core.worktree` names this top back (git itself writes both when it clones a submodule).
 * In every case, the object folders the alternates add, and where links in the git folders lead
 * (`objects`, `refs`, `config`, ...), must be inside the top or the git folders.
 * The back-pointers are what a repository's contents cannot forge: a `.git` file planted to point
 * at another repository's folder finds no pointer back to itself there.
 */
export function adoptionOf(location: GitDirLocation, trusted: readonly string[]): Adoption {
	const { top, gitDir, commonDir } = location;
	const outsideObjects = outsideAlternates(location);
	let why: 'inside' | 'worktree' | 'submodule' | undefined;
	let reason: string;
	if (isInside(gitDir, top) && isInside(commonDir, top)) {
		why = 'inside';
		reason = '';
	} else if (commonDir !== gitDir) {
		const back = readGitFile(path.join(gitDir, 'gitdir'), { maxBytes: 4096 })?.toString('utf8').trim();
		const backReal = back ? realOrUndefined(path.resolve(gitDir, back)) : undefined;
		const trustedReal = trusted.map((t) => realOrUndefined(t)).filter((t): t is string => t !== undefined);
		// Git keeps a linked worktree's folder in `<common>/worktrees/`: a pointer back written
		// anywhere else (in a `.git` folder the repository's contents brought along) proves nothing.
		const worktrees = path.join(commonDir, 'worktrees');
		if (!isInside(gitDir, worktrees) || gitDir === worktrees) {
			reason = `its git folder ${gitDir} borrows the repository at ${commonDir} (commondir) without being one of its worktrees`;
		} else if (backReal !== path.join(top, '.git')) {
			reason = `its .git names the linked worktree folder ${gitDir}, which belongs to another work tree (${back ?? 'no gitdir file'})`;
		} else if (!trustedReal.some((t) => isInside(commonDir, t))) {
			reason = `it is a linked worktree of the repository at ${commonDir}, which is outside the folders being adopted`;
		} else {
			why = 'worktree';
			reason = '';
		}
	} else {
		const modules = submoduleParent(gitDir, top);
		const config = parseGitConfig(readGitFile(path.join(gitDir, 'config'))?.toString('utf8') ?? '');
		const worktree = config.get('core.worktree')?.at(-1);
		const worktreeReal = worktree ? realOrUndefined(path.resolve(gitDir, worktree)) : undefined;
		if (modules && worktreeReal === top) {
			why = 'submodule';
			reason = '';
		} else {
			reason = `its .git ${location.shape === 'link' ? 'is a link' : 'is a file'} naming the git folder ${gitDir}, outside the folder being adopted`;
		}
	}
	if (why !== undefined && outsideObjects.length === 0) {
		return { adopted: true, why };
	}
	const outside = [...(why === undefined ? [gitDir] : []), ...outsideObjects];
	if (outsideObjects.length > 0) {
		reason = `${reason ? `${reason}; ` : ''}it reads ${outsideObjects.join(', ')} (through objects/info/alternates or a link in its git folder), outside the repository`;
	}
	return { adopted: false, reason, outside };
}

/**
 * The location of `top` when the desk may read it: the recorded git folder when one is given
 * (refused with `git.gitDirChanged` when `.git` names another folder now), else what the adoption
 * rule accepts (refused with `git.foreignGitDir`, naming the real git folder, when it does not and
 * `allow` is not set). `git.unreadable` when the top holds no repository.
 */
export function adoptedLocation(
	top: string,
	options: { recorded?: AdoptedGitDir; trusted?: readonly string[]; allow?: boolean } = {},
): GitDirLocation {
	const location = locateGitDir(top);
	if (!location) {
		throw new DeskError('git.unreadable', `${top} is not the top of a git work tree.`, { dir: top });
	}
	const recorded = options.recorded;
	if (recorded && recorded.gitDir !== '') {
		if (location.gitDir !== recorded.gitDir) {
			if (options.allow) {
				return location;
			}
			throw new DeskError(
				'git.gitDirChanged',
				`The .git of ${top} now names the git folder ${location.gitDir}, not ${recorded.gitDir} that was adopted; nothing of it is read or written. Put it back, or adopt the repository again.`,
				{ dir: top, adopted: recorded.gitDir, now: location.gitDir },
			);
		}
		// The folder the rule (or the person) took at adoption; only alternates added since are news.
		const outside = outsideAlternates(location);
		if (recorded.allowed || options.allow || outside.length === 0) {
			return location;
		}
		throw foreignGitDir(location, {
			reason: `it reads ${outside.join(', ')} (through objects/info/alternates or a link in its git folder), outside the repository`,
			outside,
		});
	}
	if (options.allow) {
		return location;
	}
	const adoption = adoptionOf(location, options.trusted ?? [location.top]);
	if (!adoption.adopted) {
		throw foreignGitDir(location, adoption);
	}
	return location;
}

export function foreignGitDir(location: GitDirLocation, adoption: { reason: string; outside: string[] }): DeskError {
	return new DeskError(
		'git.foreignGitDir',
		`${location.top} is not adopted: ${adoption.reason}. Its git folder is really ${location.gitDir}. Adopt it only if you trust that folder (--allow-git-dir; allowGitDir).`,
		{
			dir: location.top,
			gitDir: location.gitDir,
			commonDir: location.commonDir,
			shape: location.shape,
			outside: adoption.outside,
		},
	);
}

/**
 * What the repository reads from outside the top and its git folders: the object folders
 * alternates add, and where links inside the git folders lead (an `objects` or `refs` that is a
 * link to another repository's, which git follows too).
 */
function outsideAlternates(location: GitDirLocation): string[] {
	const inside = (dir: string) =>
		isInside(dir, location.top) || isInside(dir, location.commonDir) || isInside(dir, location.gitDir);
	const linked = [
		...['HEAD', 'refs', 'logs', 'index', 'config', 'commondir'].map((name) => path.join(location.gitDir, name)),
		...['objects', 'objects/pack', 'objects/info', 'refs', 'packed-refs', 'config', 'info', 'worktrees'].map((name) =>
			path.join(location.commonDir, name),
		),
	]
		.map((entry) => realOrUndefined(entry))
		.filter((real): real is string => real !== undefined && !inside(real));
	return [...new Set([...location.alternates.filter((dir) => !inside(dir)), ...linked])];
}

/** Whether `child` is `parent` or inside it (both real, absolute). */
export function isInside(child: string, parent: string): boolean {
	const rel = path.relative(parent, child);
	return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The superproject top P when `gitDir` is inside `<P>/.git/modules/` and P is above `top`. */
function submoduleParent(gitDir: string, top: string): string | undefined {
	const marker = `${path.sep}.git${path.sep}modules${path.sep}`;
	const at = gitDir.indexOf(marker);
	if (at < 0) {
		return undefined;
	}
	const parent = gitDir.slice(0, at);
	let stat: fs.Stats;
	try {
		stat = fs.lstatSync(path.join(parent, '.git'));
	} catch {
		return undefined;
	}
	return stat.isDirectory() && isInside(top, parent) && top !== parent ? parent : undefined;
}

/** The object folders alternates add, depth first as git reads them (at most five levels), real paths. */
function alternatesOf(objectsDir: string, depth = 5, seen = new Set<string>()): string[] {
	const found: string[] = [];
	if (depth <= 0 || seen.has(objectsDir)) {
		return found;
	}
	seen.add(objectsDir);
	const text =
		readGitFile(path.join(objectsDir, 'info', 'alternates'), { maxBytes: 64 * 1024 })?.toString('utf8') ?? '';
	for (const line of text.split('\n')) {
		const entry = line.trim();
		if (entry === '' || entry.startsWith('#')) {
			continue;
		}
		// A quoted (C-style) path is taken as written, quotes and all: it names nothing that exists.
		const real = realOrUndefined(path.resolve(objectsDir, entry));
		if (real !== undefined && !seen.has(real)) {
			found.push(real, ...alternatesOf(real, depth - 1, seen));
		}
	}
	return found;
}

function realOrUndefined(file: string): string | undefined {
	try {
		return fs.realpathSync(file);
	} catch {
		return undefined;
	}
}

function isDirectory(dir: string): boolean {
	try {
		return fs.statSync(dir).isDirectory();
	} catch {
		return false;
	}
}
