/**
 * The grant chain (glossary: Lineage) against a plain model of its definition: generated lineages
 * (branches forking a root or a branch, started by the person, by a conversation the person drives or
 * by a branch) have, for every branch, the chain the definition gives when computed from scratch,
 * while the implementation builds each from its starter's stored chain. Golden chains for the cases
 * the product names. fast-check prints the seed and the smallest failing lineage.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { depthOf, forkAncestryOf, grantChain, ultimateOf } from '../../../server/src/lineage/grantChain';

type Fork = { root: string } | { branch: number };
type Starter = 'person' | { run: string } | { branch: number };
interface Step {
	fork: Fork;
	starter: Starter;
}

/** The definition, computed from scratch: chain(c) = dedupe([branch:c] ++ forkAncestry(c) ++ chain(starter(c))). */
function modelChain(steps: readonly Step[], c: number): string[] {
	const forkAncestry = (i: number): string[] => {
		const fork = steps[i]!.fork;
		return 'root' in fork ? [`root:${fork.root}`] : [`branch:b${fork.branch}`, ...forkAncestry(fork.branch)];
	};
	const starter = steps[c]!.starter;
	const starterChain =
		starter === 'person'
			? ['ultimate:person']
			: 'run' in starter
				? [`ultimate:${starter.run}`]
				: modelChain(steps, starter.branch);
	const all = [`branch:b${c}`, ...forkAncestry(c), ...starterChain];
	return all.filter((entry, i) => all.indexOf(entry) === i);
}

/** A lineage: each step forks a root or an earlier branch, started by the person, a run or an earlier branch. */
const lineages = fc
	.array(fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat()), { minLength: 1, maxLength: 25 })
	.map((raw) =>
		raw.map(([f, fi, s, si], i): Step => {
			const fork: Fork = i > 0 && f % 3 === 0 ? { branch: fi % i } : { root: ['main', 'exp'][fi % 2]! };
			const starter: Starter =
				i > 0 && s % 3 === 0 ? { branch: si % i } : s % 3 === 1 ? { run: ['u1', 'u2'][si % 2]! } : 'person';
			return { fork, starter };
		}),
	);

describe('the grant chain', () => {
	it('is, for every branch of a generated lineage, what the definition gives', () => {
		fc.assert(
			fc.property(lineages, (steps) => {
				const stored: string[][] = [];
				for (const [i, step] of steps.entries()) {
					const chain = grantChain({
						branch: `b${i}`,
						fork:
							'root' in step.fork
								? { root: step.fork.root }
								: { branch: `b${step.fork.branch}`, ancestry: forkAncestryOf(stored[step.fork.branch]!) },
						starter:
							step.starter === 'person'
								? 'person'
								: 'run' in step.starter
									? { ultimateRun: step.starter.run }
									: { chain: stored[step.starter.branch]! },
					});
					stored.push(chain);
					assert.deepEqual(chain, modelChain(steps, i));
					assert.equal(new Set(chain).size, chain.length, 'each conversation occurs once');
					assert.equal(chain[0], `branch:b${i}`, 'the branch first');
					assert.ok(ultimateOf(chain), 'the conversation the person drives last');
					assert.ok(depthOf(chain) >= 1);
				}
			}),
			{ numRuns: 300 },
		);
	});

	it('reads [branch, root, ultimate] for a root fork by the conversation the person drives (golden)', () => {
		assert.deepEqual(grantChain({ branch: 'T1', fork: { root: 'main' }, starter: { ultimateRun: 'R0' } }), [
			'branch:T1',
			'root:main',
			'ultimate:R0',
		]);
		assert.deepEqual(grantChain({ branch: 'T1', fork: { root: 'main' }, starter: 'person' }), [
			'branch:T1',
			'root:main',
			'ultimate:person',
		]);
		// A branch of that branch, forking main again: the root once, its starter's chain after it.
		assert.deepEqual(
			grantChain({
				branch: 'T2',
				fork: { root: 'main' },
				starter: { chain: ['branch:T1', 'root:main', 'ultimate:R0'] },
			}),
			['branch:T2', 'root:main', 'branch:T1', 'ultimate:R0'],
		);
		// A fork of T1 itself (fork ancestry before starter ancestry), started by the person.
		assert.deepEqual(
			grantChain({
				branch: 'T3',
				fork: { branch: 'T1', ancestry: forkAncestryOf(['branch:T1', 'root:main', 'ultimate:R0']) },
				starter: 'person',
			}),
			['branch:T3', 'branch:T1', 'root:main', 'ultimate:person'],
		);
		assert.equal(depthOf(['branch:T2', 'root:main', 'branch:T1', 'ultimate:R0']), 2);
	});
});
