/**
 * The grant chain of a branch (glossary: Lineage): who it answers to, nearest first. Fork ancestry
 * comes before starter ancestry, and each conversation occurs once:
 *
 *   chain(c) = dedupe([branch:c] ++ forkAncestry(c) ++ chain(starter(c)))
 *
 * where `forkAncestry` is the forked root as `root:<name>` (for a fork of a branch: that branch and
 * its own fork ancestry), the chain of a starter that is no branch is `ultimate:<its run>` (the
 * conversation the person drives), and the person at the editor is `ultimate:person`. `dedupe`
 * keeps each entry's first place. A branch of the person's run forking `main` reads
 * `["branch:<task>", "root:main", "ultimate:<run>"]`.
 */

/** What the chain of a new branch is made of. */
export interface ChainInput {
	/** The new branch's node (its Task). */
	branch: string;
	/** What it forks: a root (its tally), or a branch with that branch's fork ancestry. */
	fork: { root: string } | { branch: string; ancestry: readonly string[] };
	/** Who starts it: a branch (its chain), a conversation the person drives (its run), or the person. */
	starter: { chain: readonly string[] } | { ultimateRun: string } | 'person';
}

export function grantChain(input: ChainInput): string[] {
	const forkAncestry =
		'root' in input.fork ? [`root:${input.fork.root}`] : [`branch:${input.fork.branch}`, ...input.fork.ancestry];
	const starterChain =
		input.starter === 'person'
			? ['ultimate:person']
			: 'chain' in input.starter
				? input.starter.chain
				: [`ultimate:${input.starter.ultimateRun}`];
	return dedupe([`branch:${input.branch}`, ...forkAncestry, ...starterChain]);
}

/** The fork ancestry a chain carries: its entries after the branch itself, up to its starter's part (a root ends it). */
export function forkAncestryOf(chain: readonly string[]): string[] {
	const end = chain.findIndex((entry, i) => i > 0 && entry.startsWith('root:'));
	return end < 0 ? chain.slice(1) : chain.slice(1, end + 1);
}

/** Branches in a chain: how deep a branch is (a branch of the person's conversation has depth 1). */
export function depthOf(chain: readonly string[]): number {
	return chain.filter((entry) => entry.startsWith('branch:')).length;
}

/** The conversation the person drives at the chain's end (`run id` or `person`); undefined for a malformed chain. */
export function ultimateOf(chain: readonly string[]): string | undefined {
	const last = chain[chain.length - 1];
	return last?.startsWith('ultimate:') ? last.slice('ultimate:'.length) : undefined;
}

function dedupe(entries: readonly string[]): string[] {
	const seen = new Set<string>();
	const kept: string[] = [];
	for (const entry of entries) {
		if (!seen.has(entry)) {
			seen.add(entry);
			kept.push(entry);
		}
	}
	return kept;
}
