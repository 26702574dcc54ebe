import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ImportAsset, ListVersions, OpenWorkspace, type DeskErrorJson } from '../../server/src/protocol/protocol';
import { git, makeRepo } from '../helpers/gitRepo';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('what is adopted: the git directory, over JSON-RPC', () => {
	const root = tempDir();
	const server = serverForSuite(path.join(root, 'library'));

	it('a workspace folder whose .git leads to another repository fails with git.foreignGitDir naming it; allowGitDir adopts it', async () => {
		const other = makeRepo(path.join(root, 'private'), { commits: 3 });
		const planted = path.join(root, 'planted');
		fs.mkdirSync(planted);
		fs.writeFileSync(path.join(planted, '.git'), `gitdir: ${path.join(other, '.git')}\n`);
		const opened = await server.call(OpenWorkspace, { folders: [{ name: 'planted', path: planted }] });
		const outcome = opened.folders[0]!;
		assert.equal(outcome.outcome, 'failed');
		const error = (outcome as { error: DeskErrorJson }).error;
		assert.equal(error.code, 'git.foreignGitDir');
		assert.equal(error.data.gitDir, path.join(other, '.git'));

		const refused = await expectRpcError(server.connection, ImportAsset.method, { dir: planted, project: 'planted' });
		assert.equal((refused.data as DeskErrorJson).code, 'git.foreignGitDir');
		const allowed = await server.call(ImportAsset, { dir: planted, project: 'planted', allowGitDir: true });
		assert.equal(allowed.asset.engine, 'git');
		const versions = await server.call(ListVersions, { id: allowed.asset.id });
		assert.deepEqual(
			versions.versions.map((v) => (v as { commit: string }).commit),
			git(other, 'log', '--reverse', '--format=%H').split('\n'),
			'allowed: read where the person said',
		);
	});

	it('a linked worktree opened with its repository is adopted with its own history; opened alone it asks', async () => {
		const repo = makeRepo(path.join(root, 'main-repo'), { commits: 3 });
		const wt = path.join(root, 'side');
		git(repo, 'worktree', 'add', '-q', '-b', 'side', wt, 'HEAD~2');
		const alone = await server.call(OpenWorkspace, { folders: [{ name: 'side', path: wt }] });
		assert.equal(alone.folders[0]!.outcome, 'failed');
		assert.equal((alone.folders[0] as { error: DeskErrorJson }).error.code, 'git.foreignGitDir');
		assert.equal((alone.folders[0] as { error: DeskErrorJson }).error.data.commonDir, path.join(repo, '.git'));

		const both = await server.call(OpenWorkspace, {
			folders: [
				{ name: 'main-repo', path: repo },
				{ name: 'side', path: wt },
			],
		});
		assert.deepEqual(
			both.folders.map((f) => f.outcome),
			['adopted', 'adopted'],
		);

		// A .git folder brought along with a folder's contents, whose commondir borrows the open
		// repository and whose gitdir file names itself back: not one of that repository's worktrees.
		const forged = path.join(root, 'forged');
		fs.mkdirSync(path.join(forged, '.git'), { recursive: true });
		fs.writeFileSync(path.join(forged, '.git', 'HEAD'), 'ref: refs/heads/main\n');
		fs.writeFileSync(path.join(forged, '.git', 'commondir'), `${path.join(repo, '.git')}\n`);
		fs.writeFileSync(path.join(forged, '.git', 'gitdir'), `${path.join(forged, '.git')}\n`);
		const borrowing = await server.call(OpenWorkspace, {
			folders: [
				{ name: 'main-repo', path: repo },
				{ name: 'forged', path: forged },
			],
		});
		assert.deepEqual(
			borrowing.folders.map((f) => f.outcome),
			['adopted', 'failed'],
		);
		assert.equal((borrowing.folders[1] as { error: DeskErrorJson }).error.code, 'git.foreignGitDir');
		assert.match(
			(borrowing.folders[1] as { error: DeskErrorJson }).error.message,
			/without being one of its worktrees/,
		);
		const side = both.folders[1] as { asset: { id: string; branch: string } };
		const versions = await server.call(ListVersions, { id: side.asset.id });
		assert.deepEqual(
			versions.versions.map((v) => (v as { commit: string }).commit).sort(),
			git(wt, 'log', '--first-parent', '--format=%H', side.asset.branch === '' ? 'HEAD' : side.asset.branch)
				.split('\n')
				.sort(),
		);
	});
});
