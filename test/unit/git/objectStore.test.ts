import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { GitObjectStore } from '../../../server/src/git/objectStore';
import { parseCommit } from '../../../server/src/git/objects';
import { allObjectsByGit, makeDelta, objectId, packEntryTypes, writeRefDeltaPack } from '../../helpers/gitPack';
import { commitFile, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

/** A repository with every object type: commits (a merge among them), trees, blobs that delta well, an annotated tag. */
function richRepo(dir: string): string {
	const repo = makeRepo(dir, { commits: 2 });
	const big = Array.from({ length: 2000 }, (_, i) => `line ${i} of a file that changes a little each commit\n`).join(
		'',
	);
	for (let i = 0; i < 30; i++) {
		commitFile(
			repo,
			i % 2 === 0 ? 'big.txt' : 'src/deep/er/big.txt',
			big.replace(`line ${i} `, `LINE ${i} `),
			`edit ${i}`,
		);
	}
	git(repo, 'checkout', '-q', '-b', 'side', 'HEAD~3');
	commitFile(repo, 'side.txt', 'side\n', 'side work');
	git(repo, 'checkout', '-q', 'main');
	git(repo, 'merge', '-q', '--no-ff', '-m', 'merge side', 'side');
	git(repo, 'tag', '-a', '-m', 'release one', 'v1');
	return repo;
}

function assertReadsAsGit(repo: string, store: GitObjectStore, label: string): number {
	const expected = allObjectsByGit(repo);
	for (const [oid, object] of expected) {
		const got = store.read(oid);
		assert.equal(got.type, object.type, `${label}: type of ${oid}`);
		assert.ok(got.data.equals(object.data), `${label}: bytes of ${oid}`);
	}
	return expected.size;
}

describe('GitObjectStore against git on the same repositories', () => {
	it('reads every object, loose and then packed with ofs-deltas, byte for byte as git cat-file does', () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		const objects = path.join(repo, '.git', 'objects');
		const loose = new GitObjectStore(objects);
		const types = new Set([...allObjectsByGit(repo).values()].map((o) => o.type));
		assert.deepEqual([...types].sort(), ['blob', 'commit', 'tag', 'tree']);
		assertReadsAsGit(repo, loose, 'loose');
		loose.close();

		git(repo, 'repack', '-a', '-d', '-f', '-q', '--depth=50', '--window=50');
		git(repo, 'prune-packed');
		const entryTypes = packEntryTypes(repo);
		assert.ok(entryTypes.filter((t) => t === 6).length >= 10, `the pack holds ofs-deltas: ${entryTypes.join(',')}`);
		const packed = new GitObjectStore(objects);
		const count = assertReadsAsGit(repo, packed, 'packed');
		assert.ok(count > 60);
		assert.throws(
			() => packed.read('0'.repeat(40)),
			(e) => isDeskError(e, 'git.missingObject'),
		);
		assert.throws(
			() => packed.read('not an oid'),
			(e) => isDeskError(e, 'git.badRef'),
		);
		assert.equal(packed.tryRead('1'.repeat(40)), undefined);
		packed.close();
	});

	it('resolves ref-deltas, in several packs', () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		git(repo, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-f', '-q');
		for (let i = 0; i < 6; i++) {
			commitFile(repo, 'big.txt', `${fs.readFileSync(path.join(repo, 'big.txt'), 'utf8')}more ${i}\n`, `more ${i}`);
		}
		git(repo, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-d', '-q');
		assert.equal(
			fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack')).length,
			2,
		);
		assert.ok(packEntryTypes(repo).filter((t) => t === 7).length >= 10, 'the packs hold ref-deltas');
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		assertReadsAsGit(repo, store, 'ref-deltas');
		store.close();
	});

	it('refuses a ref-delta that is its own base instead of looping', () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		const oid = objectId('blob', Buffer.from('never stored\n'));
		writeRefDeltaPack(repo, oid, oid, makeDelta(10, 5, Buffer.from('x')));
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		assert.throws(
			() => store.read(oid),
			(e) => isDeskError(e, 'git.corrupt'),
		);
		assert.equal(store.read(git(repo, 'rev-parse', 'HEAD')).type, 'commit', 'the rest is still read');
		store.close();
	});

	it('reads objects of several packs and loose ones together', () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		git(repo, 'repack', '-d', '-q');
		commitFile(repo, 'later.txt', 'later\n', 'later');
		git(repo, 'repack', '-d', '-q');
		commitFile(repo, 'loose.txt', 'loose\n', 'loose');
		assert.ok(
			fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack')).length >= 2,
		);
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		assertReadsAsGit(repo, store, 'mixed');
		store.close();
	});

	it('keeps reading while git gc replaces the pack it has open, finds the new pack, and lets the old one go', async () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		git(repo, 'repack', '-a', '-d', '-q');
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		const head = git(repo, 'rev-parse', 'HEAD');
		assert.equal(store.read(head).type, 'commit');
		const oldPacks = fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
		commitFile(repo, 'after-gc.txt', 'after\n', 'after gc');
		git(repo, 'gc', '-q', '--prune=now');
		const newPacks = fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack'));
		assert.ok(
			oldPacks.every((p) => !newPacks.includes(p)),
			'gc wrote a new pack and removed the old one',
		);
		// Objects of the old pack are still served (its descriptor is open), new ones found in the new pack.
		assertReadsAsGit(repo, store, 'after gc');
		await new Promise((resolve) => setTimeout(resolve, 2_100));
		store.read(git(repo, 'rev-parse', 'HEAD'));
		const deleted = fs.readdirSync('/proc/self/fd').filter((fd) => {
			try {
				return fs.readlinkSync(`/proc/self/fd/${fd}`).includes(' (deleted)');
			} catch {
				return false;
			}
		});
		assert.deepEqual(deleted, [], 'the removed pack is closed once the folder is looked at again');
		store.close();
	});

	it('refuses a truncated pack with a clear error, never wrong bytes', () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		git(repo, 'repack', '-a', '-d', '-q');
		const dir = path.join(repo, '.git', 'objects', 'pack');
		const pack = path.join(
			dir,
			fs.readdirSync(dir).find((n) => n.endsWith('.pack'))!,
		);
		fs.truncateSync(pack, fs.statSync(pack).size - 100);
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		const head = git(repo, 'rev-parse', 'HEAD');
		assert.throws(
			() => store.read(head),
			(e: unknown) => isDeskError(e, 'git.corrupt') && /pack-[0-9a-f]+\.pack is damaged: .*truncated/.test(e.message),
		);
		store.close();
	});

	it('refuses a damaged object, and an index that does not fit its pack', () => {
		const repo = richRepo(path.join(tempDir(), 'r'));
		git(repo, 'repack', '-a', '-d', '-q');
		const dir = path.join(repo, '.git', 'objects', 'pack');
		const name = fs
			.readdirSync(dir)
			.find((n) => n.endsWith('.pack'))!
			.slice(0, -5);
		const pack = path.join(dir, `${name}.pack`);
		// Flip a byte in the middle of the pack: whatever object holds it must fail, not come back altered.
		const bytes = fs.readFileSync(pack);
		const listing = execFileSync('git', ['show-index'], {
			input: fs.readFileSync(path.join(dir, `${name}.idx`)),
			encoding: 'utf8',
		})
			.trim()
			.split('\n')
			.map((l) => l.split(' '))
			.map(([offset, oid]) => ({ offset: Number(offset), oid: oid! }))
			.sort((a, b) => a.offset - b.offset);
		const victim = listing[Math.floor(listing.length / 2)]!;
		const next = listing.find((e) => e.offset > victim.offset)!;
		bytes[Math.floor((victim.offset + next.offset) / 2) + 1]! ^= 0xff;
		fs.chmodSync(pack, 0o644);
		fs.writeFileSync(pack, bytes);
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		assert.throws(
			() => store.read(victim.oid),
			(e) => isDeskError(e, 'git.corrupt'),
		);
		store.close();

		// An index cut short is refused when the pack folder is read, and named when an object is missed.
		const idx = path.join(dir, `${name}.idx`);
		fs.chmodSync(idx, 0o644);
		fs.truncateSync(idx, fs.statSync(idx).size - 7);
		const again = new GitObjectStore(path.join(repo, '.git', 'objects'));
		assert.throws(
			() => again.read(victim.oid),
			(e: unknown) => isDeskError(e, 'git.corrupt') && /damaged pack/.test(e.message),
		);
		again.close();
	});

	it('reads a SHA-256 repository', () => {
		const dir = path.join(tempDir(), 'r');
		fs.mkdirSync(dir);
		git(dir, 'init', '-q', '--object-format=sha256', '-b', 'main');
		for (let i = 0; i < 12; i++) {
			commitFile(dir, 'f.txt', `content ${i}\n`.repeat(50), `c${i}`);
		}
		const store = new GitObjectStore(path.join(dir, '.git', 'objects'), 32);
		assertReadsAsGit(dir, store, 'sha256 loose');
		store.close();
		git(dir, 'repack', '-a', '-d', '-f', '-q');
		const packed = new GitObjectStore(path.join(dir, '.git', 'objects'), 32);
		assertReadsAsGit(dir, packed, 'sha256 packed');
		packed.close();
	});

	it('reads objects through alternates (a clone --shared)', () => {
		const root = tempDir();
		const origin = richRepo(path.join(root, 'origin'));
		git(origin, 'repack', '-a', '-d', '-q');
		execFileSync('git', ['clone', '-q', '--shared', origin, path.join(root, 'shared')], { env: gitEnv(root) });
		const shared = path.join(root, 'shared');
		commitFile(shared, 'own.txt', 'own\n', 'own commit');
		const store = new GitObjectStore(path.join(shared, '.git', 'objects'));
		assertReadsAsGit(shared, store, 'alternates');
		store.close();
	});

	it('parses a commit: tree, parents, committer time and offset, message', () => {
		const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 2, startTime: 1_700_000_000 });
		const head = git(repo, 'rev-parse', 'HEAD');
		const store = new GitObjectStore(path.join(repo, '.git', 'objects'));
		const commit = parseCommit(store.read(head).data)!;
		assert.equal(commit.tree, git(repo, 'rev-parse', 'HEAD^{tree}'));
		assert.deepEqual(commit.parents, [git(repo, 'rev-parse', 'HEAD~1')]);
		assert.equal(commit.committerTime, Number(git(repo, 'log', '-1', '--format=%ct')));
		assert.equal(commit.committerOffsetMinutes, 60);
		assert.equal(commit.message, 'commit 2\n');
		store.close();
	});
});
