import type { GitRepository } from './repository';

/**
 * What catch-up reads of a project's repository (glossary: Catch-up), without a git program: the
 * branch its checkout is on and that branch's tip (a loose ref file, else packed-refs, a worktree's
 * shared refs through its commondir: see GitRepository), and the commits on its first-parent chain
 * back to a baseline, through the repository's own object store.
 */

/** The ref HEAD is on (`refs/heads/main`), or HEAD itself when it is detached, and the commit it names. */
export function targetTip(repo: GitRepository): { ref: string; tip: string | undefined } {
	const ref = repo.symbolicTarget('HEAD') ?? 'HEAD';
	const oid = repo.resolveRef(ref);
	return { ref, tip: oid === undefined ? undefined : repo.peelToCommit(oid) };
}

/**
 * Commits from `tip` back along first parents, newest first, with their messages: it stops before
 * `stop` (not returned; `reachedStop`), after `limit` commits, or where history ends (a root commit,
 * the edge of a shallow clone).
 */
export function walkFirstParents(
	repo: GitRepository,
	tip: string,
	stop: string,
	limit: number,
): { commits: Array<{ oid: string; message: string }>; reachedStop: boolean } {
	const commits: Array<{ oid: string; message: string }> = [];
	let oid: string | undefined = tip;
	while (oid !== undefined && commits.length < limit) {
		if (oid === stop) {
			return { commits, reachedStop: true };
		}
		const commit = repo.tryCommit(oid);
		if (!commit) {
			break;
		}
		commits.push({ oid, message: commit.message });
		oid = commit.parents[0];
	}
	return { commits, reachedStop: oid === stop };
}
