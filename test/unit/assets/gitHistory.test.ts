import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { BranchRewrite } from '../../../server/src/assets/types';
import { commitFile, git, makeRepo } from '../../helpers/gitRepo';
import { openDesk } from '../../helpers/deskFixture';
import { tempDir } from '../../helpers/temp';

describe('git versions as the branch moves', () => {
	it('extends the versions when the branch moves forward, and says nothing', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 3 });
		const desk = await openDesk(path.join(root, 'library'));
		const rewrites: BranchRewrite[] = [];
		desk.library.onHistoryRewritten = (r) => rewrites.push(r);
		const { asset } = await desk.library.adoptRepo(repo, 'adopted');
		assert.equal((await desk.library.versions(asset.id)).length, 3);
		commitFile(repo, 'four.txt', '4', 'commit 4');
		const versions = await desk.library.versions(asset.id);
		assert.deepEqual(
			versions.map((v) => v.subject),
			['commit 1', 'commit 2', 'commit 3', 'commit 4'],
		);
		assert.deepEqual(rewrites, []);
	});

	it('notices a rewritten branch, says which numbers changed, and keeps observations with their commits', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 5 });
		const desk = await openDesk(path.join(root, 'library'));
		const rewrites: BranchRewrite[] = [];
		desk.library.onHistoryRewritten = (r) => rewrites.push(r);
		const [boot] = await desk.openWorkspace([{ name: 'r', path: repo }]);
		assert.ok(boot?.outcome === 'adopted');
		const id = boot.asset.id;
		const before = await desk.library.versions(id);
		assert.equal(before[4]?.head_at !== undefined, true, 'v5 was observed as the head at boot');
		const oldV5 = before[4]!.commit;

		git(repo, 'reset', '-q', '--hard', 'HEAD~2');
		commitFile(repo, 'x.txt', 'x', 'rewritten 4');
		commitFile(repo, 'y.txt', 'y', 'rewritten 5');
		commitFile(repo, 'z.txt', 'z', 'rewritten 6');
		const after = await desk.library.versions(id);
		assert.deepEqual(
			after.map((v) => v.subject),
			['commit 1', 'commit 2', 'commit 3', 'rewritten 4', 'rewritten 5', 'rewritten 6'],
		);
		assert.equal(rewrites.length, 1);
		assert.deepEqual(
			{
				firstChanged: rewrites[0]!.firstChanged,
				oldCount: rewrites[0]!.oldCount,
				newCount: rewrites[0]!.newCount,
				oldTip: rewrites[0]!.oldTip,
			},
			{ firstChanged: 4, oldCount: 5, newCount: 6, oldTip: oldV5 },
		);
		// The observation of the old v5 stays with that commit: no new version inherits it.
		assert.ok(after.slice(3).every((v) => v.head_at === undefined));
		assert.deepEqual(
			after.slice(0, 3).map((v) => v.commit),
			before.slice(0, 3).map((v) => v.commit),
		);
		await desk.library.versions(id);
		assert.equal(rewrites.length, 1, 'told once');
	});

	it('records a head that moves while the desk runs (made_by outside) and tells the views', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 3 });
		const desk = await openDesk(path.join(root, 'library'));
		const changes: string[] = [];
		desk.onLibraryChanged = (reason) => changes.push(reason);
		const [boot] = await desk.openWorkspace([{ name: 'r', path: repo }]);
		assert.ok(boot?.outcome === 'adopted');
		git(repo, 'checkout', '-q', 'HEAD~2');
		const deadline = Date.now() + 10_000;
		let versions = await desk.library.versions(boot.asset.id);
		while (versions[0]?.head_at === undefined && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			versions = await desk.library.versions(boot.asset.id);
		}
		assert.ok(versions[0]?.head_at, 'v1 was observed when HEAD moved to it');
		assert.equal(versions[0]?.made_by, 'outside');
		assert.equal(versions[1]?.never_head, true, 'v2 lies between observed heads and was never one');
		assert.ok(changes.includes('head moved'));
	});

	it('records a head that moves in a linked worktree, whose HEAD and refs are not under <top>/.git', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 3 });
		const worktree = path.join(root, 'wt');
		git(repo, 'worktree', 'add', '-q', '-b', 'side', worktree);
		const desk = await openDesk(path.join(root, 'library'));
		const boots = await desk.openWorkspace([
			{ name: 'r', path: repo },
			{ name: 'wt', path: worktree },
		]);
		const boot = boots[1];
		assert.ok(boot?.outcome === 'adopted', JSON.stringify(boot));
		git(worktree, 'checkout', '-q', 'HEAD~2');
		const deadline = Date.now() + 10_000;
		let versions = await desk.library.versions(boot.asset.id);
		while (versions[0]?.head_at === undefined && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			versions = await desk.library.versions(boot.asset.id);
		}
		assert.ok(versions[0]?.head_at, "v1 was observed when the worktree's HEAD moved to it");
	});
});
