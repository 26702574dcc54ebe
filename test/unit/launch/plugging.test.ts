import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AssetRecord, ProjectRecord } from '../../../server/src/assets/types';
import { isDeskError } from '../../../server/src/core/errors';
import {
	checkPlug,
	launchKeep,
	newPlug,
	plugInto,
	plugNodes,
	type CheckoutPlace,
} from '../../../server/src/launch/plugging';
import { defaultTemplate, type LaunchCard } from '../../../server/src/launch/types';
import { testAsset } from '../../helpers/assetRecord';

const repo = testAsset('a-0000000000000001', 'shop', { engine: 'git', kind: 'code', working_dir: '/w/shop' });
const otherRepo = testAsset('a-0000000000000002', 'lib', { engine: 'git', kind: 'code', working_dir: '/w/lib' });
const folder = testAsset('a-0000000000000003', 'specs', { engine: 'snapshot', working_dir: '/l/specs' });
const link = testAsset('a-0000000000000004', 'docs', { engine: 'none', kind: 'link', url: 'https://example.com' });
const skill = testAsset('a-0000000000000005', 'review', {
	engine: 'snapshot',
	kind: 'skill',
	working_dir: '/l/review',
});
const project: ProjectRecord = { name: 'shop', path: '/w/shop', main_asset: repo.id, created_at: '' };
const card: LaunchCard = { project: 'shop', ticket: 't', template: defaultTemplate, plugs: [] };
const validSkill = { name: 'review', description: 'Reviews' };
/** Where git finds each repository's folders (a git target's checkout is compared with the project's by them). */
const places: Record<string, CheckoutPlace> = {
	'/w/shop': { top: '/w/shop', gitDir: '/w/shop/.git', commonDir: '/w/shop/.git' },
	'/w/lib': { top: '/w/lib', gitDir: '/w/lib/.git', commonDir: '/w/lib/.git' },
};
const ctx = (asset: AssetRecord, skillFront = asset === skill ? validSkill : undefined) => ({
	asset,
	project,
	skill: skillFront,
	checkouts:
		asset.engine === 'git' ? { target: places[asset.working_dir]!, project: places[project.path]! } : undefined,
});

describe('plugging', () => {
	it('takes the three roles and refuses any other by name', () => {
		assert.equal(plugInto(card, newPlug(folder.id, 'reference'), ctx(folder)).plugs.length, 1);
		assert.throws(
			() => checkPlug(card, { ...newPlug(folder.id, 'reference'), role: 'owner' as never }, ctx(folder)),
			(e) => isDeskError(e, 'launch.badRole') && /reference, target or instructions/.test(e.message),
		);
	});

	it("takes at most one target, a snapshot or git asset, and a git target only when it is the project's own repo", () => {
		const withTarget = plugInto(card, newPlug(repo.id, 'target'), ctx(repo));
		assert.throws(
			() => checkPlug(withTarget, newPlug(folder.id, 'target'), ctx(folder)),
			(e) => isDeskError(e, 'launch.secondTarget'),
		);
		assert.throws(
			() => checkPlug(card, newPlug(link.id, 'target'), ctx(link)),
			(e) => isDeskError(e, 'launch.badTarget'),
		);
		assert.throws(
			() => checkPlug(card, newPlug(otherRepo.id, 'target'), ctx(otherRepo)),
			(e) => isDeskError(e, 'launch.foreignRepo'),
		);
		// Main asset or not, another repository is not the checkout a run of the project writes.
		const otherMain = { ...ctx(otherRepo), project: { ...project, main_asset: otherRepo.id } };
		assert.throws(
			() => checkPlug(card, newPlug(otherRepo.id, 'target'), otherMain),
			(e) => isDeskError(e, 'launch.foreignRepo') && /\/w\/shop/.test(e.message) && /\/w\/lib/.test(e.message),
		);
		// Another work tree of the project's repository shares its objects, not the checkout a run writes.
		const worktree = {
			...ctx(repo),
			checkouts: {
				target: { top: '/w/shop-wt', gitDir: '/w/shop/.git/worktrees/shop-wt', commonDir: '/w/shop/.git' },
				project: places['/w/shop']!,
			},
		};
		assert.throws(
			() => checkPlug(card, newPlug(repo.id, 'target'), worktree),
			(e) => isDeskError(e, 'launch.foreignRepo') && /another work tree/.test(e.message),
		);
		// The same git folder reached by another path (a link) is the same checkout.
		const linked = {
			...ctx(repo),
			checkouts: { target: { ...places['/w/shop']!, top: '/links/shop' }, project: places['/w/shop']! },
		};
		assert.equal(plugInto(card, newPlug(repo.id, 'target'), linked).plugs.length, 1);
		assert.equal(plugInto(card, newPlug(folder.id, 'target'), ctx(folder)).plugs[0]?.role, 'target');
	});

	it('takes files and copy on a reference only', () => {
		assert.equal(
			plugInto(
				card,
				newPlug(folder.id, 'reference', { files: ['api/*.md'], copy: { 'fixtures/a.json': 'test/a.json' } }),
				ctx(folder),
			).plugs.length,
			1,
		);
		assert.throws(
			() => checkPlug(card, newPlug(repo.id, 'target', { copy: { a: 'b' } }), ctx(repo)),
			(e) => isDeskError(e, 'launch.referenceOnly'),
		);
		assert.throws(
			() => checkPlug(card, newPlug(skill.id, 'instructions', { files: ['*.md'] }), ctx(skill)),
			(e) => isDeskError(e, 'launch.referenceOnly'),
		);
		assert.throws(
			() => checkPlug(card, newPlug(folder.id, 'reference', { copy: { '../secret': 'a' } }), ctx(folder)),
			(e) => isDeskError(e, 'launch.badCopy'),
		);
		assert.throws(
			() => checkPlug(card, newPlug(folder.id, 'reference', { copy: { a: '/etc/passwd' } }), ctx(folder)),
			(e) => isDeskError(e, 'launch.badCopy'),
		);
	});

	it('takes instructions only from a skill with a valid SKILL.md', () => {
		assert.equal(plugInto(card, newPlug(skill.id, 'instructions'), ctx(skill)).plugs.length, 1);
		assert.throws(
			() => checkPlug(card, newPlug(folder.id, 'instructions'), ctx(folder)),
			(e) => isDeskError(e, 'launch.notSkill') && /kind none/.test(e.message),
		);
		assert.throws(
			() => checkPlug(card, newPlug(skill.id, 'instructions'), { asset: skill, project, skill: undefined }),
			(e) => isDeskError(e, 'launch.notSkill') && /SKILL\.md/.test(e.message),
		);
	});

	it("reaches the template's reading nodes when a plug names none, and refuses nodes the template lacks", () => {
		const plug = newPlug(folder.id, 'reference');
		assert.deepEqual(plugNodes(card, plug), ['plan', 'work']);
		assert.deepEqual(plugNodes(card, newPlug(folder.id, 'reference', { nodes: ['work'] })), ['work']);
		assert.throws(
			() => checkPlug(card, newPlug(folder.id, 'reference', { nodes: ['review'] }), ctx(folder)),
			(e) => isDeskError(e, 'launch.badNode'),
		);
	});

	it('refuses a retired asset in any role, and so a kept suggestion of one', () => {
		const retired = { ...folder, retired: true };
		for (const role of ['reference', 'target'] as const) {
			assert.throws(
				() => checkPlug(card, newPlug(retired.id, role), ctx(retired)),
				(e) => isDeskError(e, 'launch.retired') && /specs is retired/.test(e.message),
			);
		}
		const retiredSkill = { ...skill, retired: true };
		assert.throws(
			() => checkPlug(card, newPlug(retiredSkill.id, 'instructions'), ctx(retiredSkill, validSkill)),
			(e) => isDeskError(e, 'launch.retired'),
		);
		assert.throws(
			() =>
				launchKeep(
					card,
					{ asset_id: retired.id, name: 'specs', role: 'reference', reason: 'named in the ticket', named: true },
					ctx(retired),
				),
			(e) => isDeskError(e, 'launch.retired'),
		);
	});

	it('keeps a suggestion as a reference, or as instructions for a skill, and never plugs an asset twice', () => {
		const kept = launchKeep(
			card,
			{ asset_id: folder.id, name: 'specs', role: 'reference', reason: 'named in the ticket', named: true },
			ctx(folder),
		);
		const skilled = launchKeep(
			kept,
			{
				asset_id: skill.id,
				name: 'review',
				role: 'instructions',
				reason: 'matches “review”',
				score: 0.4,
				named: false,
			},
			ctx(skill),
		);
		assert.deepEqual(
			skilled.plugs.map((p) => [p.id, p.role]),
			[
				[folder.id, 'reference'],
				[skill.id, 'instructions'],
			],
		);
		assert.equal(card.plugs.length, 0, 'keeping makes a new card');
		assert.throws(
			() =>
				launchKeep(
					skilled,
					{ asset_id: folder.id, name: 'specs', role: 'reference', reason: 'x', named: true },
					ctx(folder),
				),
			(e) => isDeskError(e, 'launch.alreadyPlugged'),
		);
	});
});
