import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { GitRepository } from '../../../server/src/git/repository';
import { targetTip, walkFirstParents } from '../../../server/src/git/targetWalk';
import { adoptedLocation } from '../../../server/src/git/gitDir';
import {
	catchUpWalkLimit,
	composeTallySection,
	deskRunsOf,
	prepareCatchUp,
	type CatchUpPorts,
	type CommitWalker,
	type SavedCatchUp,
	type TallyView,
} from '../../../server/src/lineage/catchUp';
import { estimateTokens } from '../../../server/src/lineage/memory';
import { SqlCatchUp } from '../../../server/src/store/sqlCatchUp';
import { commitFile, git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';
import { LineageRows } from './catchUpRows';

/** A walker over the real repository that counts its walks: the guarantee is about this port's calls. */
function countingWalker(repo: GitRepository): CommitWalker & { calls: number } {
	const walker = {
		calls: 0,
		walk(tip: string, stop: string, limit: number) {
			walker.calls += 1;
			return walkFirstParents(repo, tip, stop, limit);
		},
	};
	return walker;
}

function openRepo(top: string): GitRepository {
	return GitRepository.open(top, adoptedLocation(top, { trusted: [path.dirname(top)] }));
}

/** A catch-up as an input uses it: prepared, then its baseline saved (the runner does it in the pinning transaction). */
function catchUpOnce(
	ports: CatchUpPorts,
	reads: SqlCatchUp,
	rows: LineageRows,
	node: string,
	root = 'main',
	tallyTokens = 1500,
) {
	const prepared = prepareCatchUp(ports, { node, root, tallyTokens, memoryTokens: 1000 });
	if (prepared.save) {
		rows.db.write((tx) => reads.save(tx, node, prepared.save!.ref, prepared.save!.saved, '2026-12-02T13:00:00Z'));
	}
	return prepared;
}

describe('catch-up', () => {
	it('reads the tip from a loose ref, from packed-refs after git pack-refs --all, and through a worktree', () => {
		const root = tempDir();
		const top = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const first = git(top, 'rev-parse', 'HEAD');
		assert.ok(fs.existsSync(path.join(top, '.git', 'refs', 'heads', 'main')), 'the fixture starts with a loose ref');
		assert.deepEqual(targetTip(openRepo(top)), { ref: 'refs/heads/main', tip: first });
		git(top, 'pack-refs', '--all');
		assert.ok(!fs.existsSync(path.join(top, '.git', 'refs', 'heads', 'main')), 'pack-refs moved the ref');
		assert.match(
			fs.readFileSync(path.join(top, '.git', 'packed-refs'), 'utf8'),
			new RegExp(`${first} refs/heads/main`),
		);
		assert.deepEqual(targetTip(openRepo(top)), { ref: 'refs/heads/main', tip: first });
		// A commit after packing writes a loose ref again, which wins over the packed one.
		const second = commitFile(top, 'after.txt', 'after\n', 'after packing');
		assert.deepEqual(targetTip(openRepo(top)), { ref: 'refs/heads/main', tip: second });
		// A worktree's HEAD is its own; its branch's tip is read from the common folder (commondir).
		git(top, 'worktree', 'add', '-q', '-b', 'side', path.join(root, 'side'), 'HEAD~1');
		git(top, 'pack-refs', '--all');
		const side = fs.realpathSync(path.join(root, 'side'));
		assert.deepEqual(targetTip(openRepo(side)), { ref: 'refs/heads/side', tip: first });
		const onSide = commitFile(side, 'side.txt', 'side\n', 'on the side');
		assert.deepEqual(targetTip(openRepo(side)), { ref: 'refs/heads/side', tip: onSide });
		assert.equal(targetTip(openRepo(top)).tip, second, 'the main checkout still reads its own branch');
	});

	it('walks first parents only, from the tip back to the baseline, within the limit', () => {
		const top = makeRepo(path.join(tempDir(), 'shop'), { commits: 1 });
		const base = git(top, 'rev-parse', 'HEAD');
		git(top, 'checkout', '-q', '-b', 'side');
		const side = commitFile(top, 'side.txt', 'side\n', 'on the side');
		git(top, 'checkout', '-q', 'main');
		const a = commitFile(top, 'a.txt', 'a\n', 'a');
		git(top, 'merge', '-q', '--no-ff', '-m', 'Merge side', 'side');
		const merge = git(top, 'rev-parse', 'HEAD');
		const b = commitFile(top, 'b.txt', 'b\n', 'b\n\nDesk-Run: r1');
		const repo = openRepo(top);
		const all = walkFirstParents(repo, b, base, 500);
		assert.deepEqual(
			all.commits.map((c) => c.oid),
			[b, merge, a],
			'the side branch is not on the first-parent chain',
		);
		assert.ok(!all.commits.some((c) => c.oid === side));
		assert.equal(all.reachedStop, true);
		assert.equal(all.commits[0]!.message, 'b\n\nDesk-Run: r1\n');
		assert.deepEqual(walkFirstParents(repo, b, base, 2), { commits: all.commits.slice(0, 2), reachedStop: false });
		assert.equal(walkFirstParents(repo, b, base, 3).reachedStop, true, 'the baseline right after the limit');
		const gone = walkFirstParents(repo, b, 'f'.repeat(40), 500);
		assert.deepEqual([gone.commits.length, gone.reachedStop], [4, false], 'a baseline off the chain: history ends');
		repo.close();
	});

	it('reads Desk-Run trailers from the last paragraph only', () => {
		assert.deepEqual(deskRunsOf('Fix it\n\nDesk-Run: 0194-a\n'), ['0194-a']);
		assert.deepEqual(deskRunsOf('Fix it\n\nbody text\nDesk-Run: r1\nOther: x\n'), ['r1']);
		assert.deepEqual(deskRunsOf('Fix it\n\nDesk-Run: r1\n\nThe body after it.\n'), [], 'not a trailer: a body follows');
		assert.deepEqual(deskRunsOf('Desk-Run: r1'), [], 'a subject is no trailer');
		assert.deepEqual(deskRunsOf('Fix\n\nSee: Desk-Run: r1'), []);
		assert.deepEqual(deskRunsOf('Fix\r\n\r\nDesk-Run: r2\r\n'), ['r2']);
	});

	it('walks only when the tip moved since the baseline, and attributes mixed commits by their Desk-Run trailer', async () => {
		const root = tempDir();
		const top = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const rows = await LineageRows.open(root);
		const { tally } = rows.root('main');
		const me = rows.branch('main', tally, 'Add parser tests');
		const sibling = rows.branch('main', tally, 'Split the parser');
		const person = rows.plainRun('Tidy the docs');
		const repo = openRepo(top);
		const walker = countingWalker(repo);
		const reads = new SqlCatchUp(rows.db);
		const ports: CatchUpPorts = { refs: { target: () => targetTip(repo) }, walker, reads };

		// The first input starts the branch: the tip then is its baseline, nothing came since.
		const first = catchUpOnce(ports, reads, rows, me.node);
		assert.equal(first.first, true);
		assert.equal(first.section.walked, false);
		assert.equal(walker.calls, 0);
		assert.doesNotMatch(first.section.tally, /### Commits/);
		// The tip unchanged: no walk, however often.
		for (let i = 0; i < 3; i++) {
			const again = catchUpOnce(ports, reads, rows, me.node);
			assert.equal(again.section.walked, false);
			assert.equal(again.first, false);
		}
		assert.equal(walker.calls, 0, 'an unchanged tip costs no commit walk');

		const a = commitFile(top, 'a.txt', 'a\n', `Split the parser\n\nDesk-Run: ${sibling.run}`);
		const b = commitFile(top, 'b.txt', 'b\n', 'Fix a typo by hand');
		const c = commitFile(top, 'c.txt', 'c\n', `Tidy the docs\n\nDesk-Run: ${person}`);
		const d = commitFile(top, 'd.txt', 'd\n', 'Unknown run\n\nDesk-Run: 0194ffff-dead-7000-8000-000000000000');
		const e = commitFile(top, 'e.txt', 'e\n', `My own landing\n\nDesk-Run: ${me.run}`);
		const moved = catchUpOnce(ports, reads, rows, me.node);
		assert.equal(walker.calls, 1);
		assert.equal(moved.section.walked, true);
		assert.equal(moved.section.tip, e);
		const saved = reads.saved(me.node, 'refs/heads/main')!;
		assert.equal(saved.baseline, e);
		assert.deepEqual(saved.told, { tally: moved.section.tally, memory: '' }, 'the row keeps the section it made');
		assert.deepEqual(
			saved.commits.map((x) => [x.oid, x.subject, x.by.kind]),
			[
				[e, 'My own landing', 'branch'],
				[d, 'Unknown run', 'outside'],
				[c, 'Tidy the docs', 'run'],
				[b, 'Fix a typo by hand', 'outside'],
				[a, 'Split the parser', 'branch'],
			],
		);
		const told = moved.section.tally;
		assert.ok(told.includes(`- ${a.slice(0, 10)} Split the parser (branch "Split the parser")`), told);
		assert.ok(told.includes(`- ${b.slice(0, 10)} Fix a typo by hand (outside the lineage)`));
		assert.ok(told.includes(`- ${c.slice(0, 10)} Tidy the docs (run of "Tidy the docs")`));
		assert.ok(told.includes(`- ${e.slice(0, 10)} My own landing (this branch)`));

		// Unchanged again: the saved commits are told again without a walk.
		const still = catchUpOnce(ports, reads, rows, me.node);
		assert.equal(walker.calls, 1);
		assert.equal(still.section.walked, false);
		assert.equal(still.section.tally, told);

		// The next move walks only the new commit and keeps the earlier ones (commits since you started).
		const f = commitFile(top, 'f.txt', 'f\n', 'Another outside commit');
		const next = catchUpOnce(ports, reads, rows, me.node);
		assert.equal(walker.calls, 2);
		assert.deepEqual(
			reads.saved(me.node, 'refs/heads/main')!.commits.map((x) => x.oid),
			[f, e, d, c, b, a],
		);
		assert.ok(next.section.tally.indexOf(f.slice(0, 10)) < next.section.tally.indexOf(a.slice(0, 10)), 'newest first');

		// After git pack-refs --all the tip is read from packed-refs: still unchanged, still no walk.
		git(top, 'pack-refs', '--all');
		const packed = catchUpOnce(ports, reads, rows, me.node);
		assert.equal(packed.section.tip, f);
		assert.equal(packed.section.walked, false);
		assert.equal(walker.calls, 2);
		repo.close();
	});

	it('keeps at most the walk limit of commits and counts the rest', async () => {
		const root = tempDir();
		const rows = await LineageRows.open(root);
		const { tally } = rows.root('main');
		const me = rows.branch('main', tally, 'Long wait');
		const reads = new SqlCatchUp(rows.db);
		let tip = 'b'.repeat(40);
		const asked: number[] = [];
		const ports: CatchUpPorts = {
			refs: { target: () => ({ ref: 'refs/heads/main', tip }) },
			walker: {
				walk(_tip, _stop, limit) {
					asked.push(limit);
					// More commits than the limit between the tip and the baseline: the walk stops at the limit.
					return {
						commits: Array.from({ length: limit }, (_, i) => ({
							oid: i.toString(16).padStart(40, '0'),
							message: `c${i}`,
						})),
						reachedStop: false,
					};
				},
			},
			reads,
		};
		catchUpOnce(ports, reads, rows, me.node);
		tip = 'c'.repeat(40);
		const moved = catchUpOnce(ports, reads, rows, me.node, 'main', 100_000);
		assert.deepEqual(asked, [catchUpWalkLimit]);
		const saved = reads.saved(me.node, 'refs/heads/main')!;
		assert.equal(saved.commits.length, catchUpWalkLimit);
		assert.equal(saved.unlistedAtLeast, true);
		assert.match(moved.section.tally, /… at least 1 more \(see the Runs view\)$/);
	});

	it('lists live branches by their liquid abstract, never the caller, and a landed branch only under Landed', async () => {
		const root = tempDir();
		const rows = await LineageRows.open(root);
		const { tally } = rows.root('main');
		const me = rows.branch('main', tally, 'Add parser tests');
		const sibling = rows.branch('main', tally, 'Split the parser');
		const quiet = rows.branch('main', tally, 'Document the parser');
		rows.post(tally.object_id, 'abstract', me.node, 'MY OWN ABSTRACT');
		rows.post(tally.object_id, 'abstract', sibling.node, 'old abstract of the split');
		rows.post(tally.object_id, 'abstract', sibling.node, 'moving lexer.ts into its own module');
		const reads = new SqlCatchUp(rows.db);
		const before = reads.tally('main', me.node);
		assert.deepEqual(
			before.live.map((b) => [b.title, b.abstract]),
			[
				['Split the parser', 'moving lexer.ts into its own module'],
				['Document the parser', undefined],
			],
		);
		assert.deepEqual(before.landed, []);
		const text = composeTallySection(
			{ root: 'main', ref: 'refs/heads/main', tally: before, commits: undefined },
			1500,
			me.node,
		);
		assert.match(text, /^## Other branches of `main`\n/);
		assert.ok(text.includes('### Working now\n- Split the parser: moving lexer.ts into its own module'), text);
		assert.ok(text.includes('- Document the parser: started to: Intent: Document the parser (no abstract yet)'));
		assert.ok(!text.includes('MY OWN ABSTRACT'), 'the caller is never told its own abstract');
		assert.ok(!text.includes('old abstract'), 'a superseded abstract is gone');

		rows.land(tally.object_id, sibling.node, 'a'.repeat(40), 'Split the parser');
		const after = reads.tally('main', me.node);
		assert.deepEqual(
			after.live.map((b) => b.title),
			['Document the parser'],
			'landed: never live again',
		);
		assert.deepEqual(
			after.landed.map((l) => [l.title, l.text, l.commit]),
			[['Split the parser', 'moving lexer.ts into its own module', 'a'.repeat(40)]],
		);
		const landedText = composeTallySection(
			{ root: 'main', ref: 'refs/heads/main', tally: after, commits: undefined },
			1500,
			me.node,
		);
		assert.ok(
			landedText.includes(
				`### Landed, newest first\n- Split the parser — ${'a'.repeat(10)} "Split the parser": moving lexer.ts into its own module`,
			),
			landedText,
		);
		assert.ok(!landedText.includes('- Split the parser: moving'), 'its liquid anchor is gone');
		// Landings newest first; a branch that reported (abandoned) is not live either.
		rows.land(tally.object_id, quiet.node, 'b'.repeat(40), 'Document it');
		assert.deepEqual(
			reads.tally('main', me.node).landed.map((l) => l.title),
			['Document the parser', 'Split the parser'],
		);
		const other = rows.branch('main', tally, 'Abandoned idea');
		rows.post(other.node, 'report', other.node, 'abandoned: not needed', { data: { outcome: 'abandoned' } });
		assert.deepEqual(reads.tally('main', me.node).live, []);
	});

	it('stays within the token budget: everything exactly at it, one token less drops an entry for "… N more"', () => {
		const tally: TallyView = {
			live: [
				{ node: 'n1', title: 'One', abstract: 'first abstract, with some words in it' },
				{ node: 'n2', title: 'Two', abstract: 'second abstract' },
			],
			landed: [{ node: 'n3', title: 'Three', text: 'landed work', commit: 'c'.repeat(40), subject: 'Three', at: '' }],
		};
		const commits: SavedCatchUp = {
			baseline: 'f'.repeat(40),
			commits: [
				{ oid: 'd'.repeat(40), subject: 'A commit', by: { kind: 'outside' } },
				{
					oid: 'e'.repeat(40),
					subject: 'Another commit',
					by: { kind: 'branch', node: 'n3', title: 'Three', run: 'r' },
				},
			],
			unlisted: 0,
			unlistedAtLeast: false,
		};
		const input = { root: 'main', ref: 'refs/heads/main', tally, commits };
		const full = composeTallySection(input, 1_000_000);
		assert.doesNotMatch(full, /more \(see the Runs view\)/);
		const exact = estimateTokens(full);
		assert.equal(composeTallySection(input, exact), full, 'exactly at the budget: all of it');
		const under = composeTallySection(input, exact - 1);
		assert.ok(estimateTokens(under) <= exact - 1, `${estimateTokens(under)} tokens within ${exact - 1}`);
		assert.match(under, /\n\n… 1 more \(see the Runs view\)$/);
		assert.ok(!under.includes('Another commit'), 'the last entry is the one left out');
		assert.ok(under.includes('A commit'));
		// Each smaller budget leaves out more, never breaking the budget, never reordering.
		let previous = 0;
		for (let budget = exact - 1; budget > 0; budget--) {
			const text = composeTallySection(input, budget);
			if (text !== '') {
				const more = Number(/… (\d+) more/.exec(text)?.[1] ?? 0);
				assert.ok(more >= previous, `at ${budget}: ${more} more after ${previous}`);
				previous = more;
			}
			assert.ok(estimateTokens(text) <= budget, `at ${budget}: ${estimateTokens(text)} tokens`);
		}
		assert.equal(composeTallySection(input, 15), '## Other branches of `main`\n\n… 5 more (see the Runs view)');
		assert.equal(composeTallySection(input, 5), '', 'not even the heading fits');
		assert.equal(estimateTokens('abcd'), 1);
		assert.equal(estimateTokens('abcde'), 2);
		assert.equal(
			composeTallySection({ root: 'main', ref: 'x', tally: { live: [], landed: [] }, commits }, 1500).length > 0,
			true,
		);
		assert.equal(
			composeTallySection({ root: 'main', ref: 'x', tally: { live: [], landed: [] }, commits: undefined }, 1500),
			'',
			'nothing to tell: no section',
		);
	});

	it("gives a branch's first input its root's memory index and the last five landings, and later inputs none", async () => {
		const root = tempDir();
		const rows = await LineageRows.open(root);
		const { tally } = rows.root('main');
		const me = rows.branch('main', tally, 'Add parser tests');
		for (let i = 1; i <= 7; i++) {
			const done = rows.branch('main', tally, `Landed ${i}`);
			rows.land(tally.object_id, done.node, String(i).repeat(40), `Subject ${i}`);
		}
		const reads = new SqlCatchUp(rows.db);
		const budgets: number[] = [];
		const ports: CatchUpPorts = {
			refs: { target: () => ({ ref: 'refs/heads/main', tip: 'a'.repeat(40) }) },
			walker: { walk: () => assert.fail('no walk: the tip never moves here') },
			reads,
			memoryIndex: (name, budget) => {
				budgets.push(budget);
				return name === 'main' ? '## Project memory (`main`)\n\n- Tests: run npm test.' : undefined;
			},
		};
		const first = catchUpOnce(ports, reads, rows, me.node);
		assert.deepEqual(budgets, [1000]);
		assert.match(
			first.section.memory,
			/^## Project memory \(`main`\)\n\n- Tests: run npm test\.\n\n### Recent landings\n/,
		);
		const recent = first.section.memory.split('### Recent landings\n\n')[1]!.split('\n');
		assert.deepEqual(
			recent.map((l) => /^- (Landed \d)/.exec(l)?.[1]),
			['Landed 7', 'Landed 6', 'Landed 5', 'Landed 4', 'Landed 3'],
		);
		const second = catchUpOnce(ports, reads, rows, me.node);
		assert.equal(second.section.memory, '', 'only the first input');
		// A root without memory: no memory section even on the first input.
		const other = rows.root('other');
		const lone = rows.branch('other', other.tally, 'Lone branch');
		assert.equal(catchUpOnce(ports, reads, rows, lone.node, 'other').section.memory, '');
	});

	it('refuses a run that is no branch (lineage.notBranch), and one that is not there (ai.notFound)', async () => {
		const rows = await LineageRows.open(tempDir());
		const { tally } = rows.root('main');
		const me = rows.branch('main', tally, 'A branch');
		const reads = new SqlCatchUp(rows.db);
		assert.deepEqual(reads.branchOfRun(me.run), { node: me.node, root: 'main', title: 'A branch' });
		assert.throws(
			() => reads.branchOfRun(rows.plainRun('Not a branch')),
			(e) => isDeskError(e) && e.code === 'lineage.notBranch',
		);
		assert.throws(
			() => reads.branchOfRun('0194ffff-dead-7000-8000-000000000000'),
			(e) => isDeskError(e) && e.code === 'ai.notFound',
		);
		// A damaged saved catch-up is refused, never taken for a fresh start.
		rows.db.write((tx) =>
			tx.run(
				"INSERT INTO lineage_catchup (node, ref, baseline, section, at) VALUES (?, 'refs/heads/main', ?, 'garbage', 'x')",
				[me.node, 'a'.repeat(40)],
			),
		);
		assert.throws(
			() => reads.saved(me.node, 'refs/heads/main'),
			(e) => isDeskError(e) && e.code === 'store.corrupt',
		);
	});
});
