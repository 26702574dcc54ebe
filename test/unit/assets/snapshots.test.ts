import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { decodeManifest } from '../../../server/src/assets/manifest';
import { newSkillFile, parseSkillFile } from '../../../server/src/assets/skill';
import { isDeskError } from '../../../server/src/core/errors';
import type { Desk } from '../../../server/src/desk';
import { flipBlobByte } from '../../helpers/blobs';
import { makeRepo } from '../../helpers/gitRepo';
import { openDesk, recordingLogger } from '../../helpers/deskFixture';
import { tempDir } from '../../helpers/temp';

async function newAsset(desk: Desk, name = 'notes', dir?: string) {
	return (await desk.library.newAsset({ name, dir, madeBy: 'user' })).asset;
}

describe('snapshot assets', () => {
	it('a new asset gets an empty folder under the library and at once an empty v1 "created"; the first snapshot is v2', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const desk = await openDesk(libraryDir);
		const asset = await newAsset(desk);
		assert.equal(asset.engine, 'snapshot');
		assert.equal(asset.working_dir, fs.realpathSync(path.join(libraryDir, 'assets', 'folders', asset.id)));
		assert.deepEqual(fs.readdirSync(asset.working_dir), []);
		const [v1] = await desk.library.assetVersions(asset.id);
		assert.ok(v1?.engine === 'snapshot');
		assert.deepEqual(
			{ version: v1.version, files: v1.file_count, note: v1.note, by: v1.made_by },
			{ version: 1, files: 0, note: 'created', by: 'user' },
		);
		fs.writeFileSync(path.join(asset.working_dir, 'a.md'), 'hello');
		const snap = await desk.library.snapshot(asset.id, { madeBy: 'user', note: 'first words' });
		assert.equal(snap.created, true);
		assert.equal(snap.version.version, 2);
		assert.equal(snap.asset.picked_version, 2);
		const again = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.equal(again.created, false, 'nothing changed: no new version');
		assert.equal(again.version.version, 2);
	});

	it('a new skill is a skill from its add: v1 holds a SKILL.md whose name and description read back as written', async () => {
		const desk = await openDesk(path.join(tempDir(), 'library'));
		const description = "Reviews a PR's SQL: use it when a change touches migrations # or queries";
		const { asset } = await desk.library.newAsset({
			name: 'sql-review',
			skillDescription: description,
			madeBy: 'user',
		});
		assert.equal(asset.kind, 'skill');
		assert.equal(asset.about, description);
		const [v1] = await desk.library.assetVersions(asset.id);
		assert.ok(v1?.engine === 'snapshot');
		assert.deepEqual([v1.version, v1.file_count, v1.note], [1, 1, 'created']);
		const text = Buffer.from(await desk.library.cat(asset.id, 'SKILL.md', 1)).toString('utf8');
		assert.deepEqual(parseSkillFile(text), { name: 'sql-review', description });
		assert.equal(fs.readFileSync(path.join(asset.working_dir, 'SKILL.md'), 'utf8'), text, 'the working folder has it');
		assert.equal((await desk.library.snapshot(asset.id, { madeBy: 'user' })).created, false, 'no working changes');
		for (const plain of ['Formats dates', 'a: b', "it's plain", '-dash first', 'ends with colon:']) {
			assert.deepEqual(parseSkillFile(newSkillFile('x', plain)), { name: 'x', description: plain }, plain);
		}
		await assert.rejects(desk.library.newAsset({ name: 'SQL Review', skillDescription: 'x', madeBy: 'user' }), (e) =>
			isDeskError(e, 'asset.badSkill'),
		);
		await assert.rejects(desk.library.newAsset({ name: 'sql', skillDescription: 'two\nlines', madeBy: 'user' }), (e) =>
			isDeskError(e, 'asset.badSkill'),
		);
		assert.equal((await desk.library.listAssets()).length, 1, 'the refused ones left no record');
	});

	it('a working folder given for new must not exist or be empty', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const taken = path.join(root, 'taken');
		fs.mkdirSync(taken);
		fs.writeFileSync(path.join(taken, 'x'), 'x');
		await assert.rejects(newAsset(desk, 'a', taken), (e) => isDeskError(e, 'asset.folderNotEmpty'));
		fs.writeFileSync(path.join(root, 'file'), 'x');
		await assert.rejects(newAsset(desk, 'b', path.join(root, 'file')), (e) => isDeskError(e, 'asset.folderNotEmpty'));
		const empty = path.join(root, 'empty');
		fs.mkdirSync(empty);
		assert.equal((await newAsset(desk, 'c', empty)).working_dir, empty);
		assert.equal(
			(await newAsset(desk, 'd', path.join(root, 'fresh', 'deep'))).working_dir,
			path.join(root, 'fresh', 'deep'),
		);
		assert.equal((await desk.library.listAssets()).length, 2, 'the refused ones left no record');
	});

	it('AtGo reads the picked version, or the folder as the next number when it has working changes, storing nothing', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const desk = await openDesk(libraryDir);
		const asset = await newAsset(desk);
		fs.writeFileSync(path.join(asset.working_dir, 'a.txt'), 'one');
		const v2 = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.deepEqual(await desk.library.atGo(asset.id), {
			engine: 'snapshot',
			version: 2,
			working_changes: false,
			manifest: v2.version.manifest,
		});
		const blobsBefore = desk.blobs.list().length;
		fs.writeFileSync(path.join(asset.working_dir, 'a.txt'), 'two');
		fs.writeFileSync(path.join(asset.working_dir, 'b.txt'), 'new');
		const atGo = await desk.library.atGo(asset.id);
		assert.deepEqual(atGo, { engine: 'snapshot', version: 3, working_changes: true, changed: 2 });
		assert.equal(desk.blobs.list().length, blobsBefore, 'AtGo stored nothing');
		assert.equal((await desk.library.assetVersions(asset.id)).length, 2);
	});

	it('AtGo on a link or notes asset refuses with "has no files to read"; on a git asset it reads the branch tip', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const link = desk.library.addLink({ name: 'Spec', url: 'https://example.com/spec', madeBy: 'user' });
		await assert.rejects(
			desk.library.atGo(link.id),
			(e) => isDeskError(e, 'asset.noFiles') && e.message === 'Spec has no files to read.',
		);
		const note = desk.library.addNote({ name: 'Decisions', text: 'Use sql.js', madeBy: 'user' });
		await assert.rejects(desk.library.atGo(note.id), (e) => isDeskError(e, 'asset.noFiles'));
		const repo = makeRepo(path.join(root, 'r'), { commits: 3 });
		const { asset } = await desk.library.adoptRepo(repo, 'adopted');
		const atGo = await desk.library.atGo(asset.id);
		assert.equal(atGo.engine === 'git' && atGo.version, 3);
		assert.equal(asset.picked_version, 0, 'adopting a repo never sets picked_version');
	});

	it('asset_version writes into the folder and cuts a version; it refuses paths outside the folder and assets without one', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const asset = await newAsset(desk);
		const result = await desk.library.putFiles(asset.id, [{ path: 'docs/plan.md', bytes: Buffer.from('# Plan\n') }], {
			madeBy: 'conductor',
			note: 'plan',
		});
		assert.equal(result.version.version, 2);
		assert.equal(result.version.made_by, 'conductor');
		assert.equal(fs.readFileSync(path.join(asset.working_dir, 'docs', 'plan.md'), 'utf8'), '# Plan\n');
		for (const bad of ['../escape.txt', '/etc/passwd', 'a/../../b', '', 'a//b', './a']) {
			await assert.rejects(
				desk.library.putFiles(asset.id, [{ path: bad, bytes: Buffer.from('x') }], { madeBy: 'user' }),
				(e) => isDeskError(e, 'asset.badPath'),
				bad,
			);
		}
		assert.equal(fs.existsSync(path.join(root, 'library', 'assets', 'folders', 'escape.txt')), false);
		// A link inside the folder is never written through.
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		fs.symlinkSync(outside, path.join(asset.working_dir, 'link'));
		await assert.rejects(
			desk.library.putFiles(asset.id, [{ path: 'link/x.txt', bytes: Buffer.from('x') }], { madeBy: 'user' }),
			(e) => isDeskError(e, 'asset.unsafePath'),
		);
		assert.deepEqual(fs.readdirSync(outside), []);
		const repo = makeRepo(path.join(root, 'r'));
		const git = (await desk.library.adoptRepo(repo, 'adopted')).asset;
		const link = desk.library.addLink({ name: 'l', url: 'https://example.com', madeBy: 'user' });
		const note = desk.library.addNote({ name: 'n', text: 't', madeBy: 'user' });
		for (const id of [git.id, link.id, note.id]) {
			await assert.rejects(
				desk.library.putFiles(id, [{ path: 'x', bytes: Buffer.from('x') }], { madeBy: 'user' }),
				(e) => isDeskError(e, 'asset.noFolder'),
			);
		}
		assert.equal(fs.existsSync(path.join(repo, 'x')), false);
	});

	it('never stores or follows links, FIFOs or other special files; reports them', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const asset = await newAsset(desk);
		fs.writeFileSync(path.join(root, 'secret'), 'outside the folder');
		fs.symlinkSync(path.join(root, 'secret'), path.join(asset.working_dir, 'secret-link'));
		fs.writeFileSync(path.join(asset.working_dir, 'real.txt'), 'real');
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.deepEqual(
			result.skipped.map((s) => s.path),
			['secret-link'],
		);
		const { files } = await desk.library.files(asset.id);
		assert.deepEqual(
			files.map((f) => f.path),
			['real.txt'],
		);
	});

	it('keeps names that differ only by case apart and reports them', async () => {
		const desk = await openDesk();
		const asset = await newAsset(desk);
		fs.writeFileSync(path.join(asset.working_dir, 'Readme.md'), 'a');
		fs.writeFileSync(path.join(asset.working_dir, 'README.md'), 'b');
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.deepEqual(result.lookalikes, [['README.md', 'Readme.md']]);
		assert.equal(result.version.file_count, 2);
	});

	it('versions are immutable: files and cat read each version as it was; diff lists the changes', async () => {
		const desk = await openDesk();
		const asset = await newAsset(desk);
		fs.writeFileSync(path.join(asset.working_dir, 'a.txt'), 'v2 a');
		fs.writeFileSync(path.join(asset.working_dir, 'gone.txt'), 'bye');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		fs.writeFileSync(path.join(asset.working_dir, 'a.txt'), 'v3 a');
		fs.rmSync(path.join(asset.working_dir, 'gone.txt'));
		fs.writeFileSync(path.join(asset.working_dir, 'new.txt'), 'hi');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.equal(Buffer.from(await desk.library.cat(asset.id, 'a.txt', 2)).toString(), 'v2 a');
		assert.equal(Buffer.from(await desk.library.cat(asset.id, 'a.txt')).toString(), 'v3 a');
		await assert.rejects(desk.library.cat(asset.id, 'gone.txt', 3), (e) => isDeskError(e, 'asset.fileNotFound'));
		await assert.rejects(desk.library.files(asset.id, 9), (e) => isDeskError(e, 'asset.noVersion'));
		const diff = await desk.library.diff(asset.id, 2, 3);
		assert.deepEqual(
			{
				added: diff.added.map((f) => f.path),
				removed: diff.removed.map((f) => f.path),
				modified: diff.modified.map((m) => m.after.path),
			},
			{ added: ['new.txt'], removed: ['gone.txt'], modified: ['a.txt'] },
		);
	});

	it('refuses to read a blob whose bytes were corrupted', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const desk = await openDesk(libraryDir);
		const asset = await newAsset(desk);
		fs.writeFileSync(path.join(asset.working_dir, 'a.txt'), 'precious');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		const [file] = (await desk.library.files(asset.id)).files;
		flipBlobByte(desk.blobs, file!.hash);
		await assert.rejects(desk.library.cat(asset.id, 'a.txt'), (e) => isDeskError(e, 'blob.corrupt'));
	});

	it('mounts a version once, read-only, built beside its final name; mounting again returns the same path', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const desk = await openDesk(libraryDir);
		const asset = await newAsset(desk);
		fs.mkdirSync(path.join(asset.working_dir, 'bin'));
		fs.writeFileSync(path.join(asset.working_dir, 'bin', 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
		fs.writeFileSync(path.join(asset.working_dir, 'data.csv'), 'a,b\n1,2\n');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		const mounted = desk.library.mount(asset.id, 2);
		assert.equal(mounted, path.join(libraryDir, 'mounts', asset.id, '2'));
		assert.equal(fs.readFileSync(path.join(mounted, 'data.csv'), 'utf8'), 'a,b\n1,2\n');
		assert.equal(fs.statSync(path.join(mounted, 'data.csv')).mode & 0o777, 0o444);
		assert.equal(fs.statSync(path.join(mounted, 'bin', 'run.sh')).mode & 0o777, 0o555);
		assert.equal(fs.statSync(path.join(mounted, 'bin')).mode & 0o777, 0o555, 'folders are read-only too');
		assert.equal(fs.statSync(mounted).mode & 0o777, 0o555);
		const inode = fs.statSync(path.join(mounted, 'data.csv')).ino;
		assert.equal(desk.library.mount(asset.id, 2), mounted);
		assert.equal(fs.statSync(path.join(mounted, 'data.csv')).ino, inode, 'an unchanged mount is reused as it is');
		assert.deepEqual(fs.readdirSync(path.dirname(mounted)), ['2'], 'no temp folder is left beside it');
		assert.deepEqual(fs.readdirSync(desk.library.mount(asset.id, 1)), [], 'v1 is real and empty');
		assert.throws(
			() => desk.library.mount(asset.id, 3),
			(e) => isDeskError(e, 'asset.noVersion'),
		);
	});
});

describe('mounts found changed', () => {
	it('are laid out again from the version: a file made writable and edited, one added, one removed, a folder made writable', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const logger = recordingLogger();
		const desk = await openDesk(libraryDir, logger);
		const asset = await newAsset(desk);
		fs.mkdirSync(path.join(asset.working_dir, 'docs'));
		fs.writeFileSync(path.join(asset.working_dir, 'docs', 'spec.md'), '# Spec\n');
		fs.writeFileSync(path.join(asset.working_dir, 'data.csv'), 'a,b\n1,2\n');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		const mounted = desk.library.mount(asset.id, 2);
		const spec = path.join(mounted, 'docs', 'spec.md');
		const asVersion = () => {
			assert.equal(fs.readFileSync(spec, 'utf8'), '# Spec\n');
			assert.equal(fs.readFileSync(path.join(mounted, 'data.csv'), 'utf8'), 'a,b\n1,2\n');
			assert.deepEqual(fs.readdirSync(mounted).sort(), ['data.csv', 'docs']);
			assert.deepEqual(fs.readdirSync(path.join(mounted, 'docs')), ['spec.md']);
			assert.equal(fs.statSync(spec).mode & 0o777, 0o444);
			assert.equal(fs.statSync(path.join(mounted, 'docs')).mode & 0o777, 0o555);
			assert.deepEqual(
				fs.readdirSync(path.dirname(mounted)),
				['2'],
				'the changed mount is gone, nothing left beside it',
			);
		};
		const tamperings: Array<[string, () => void, RegExp]> = [
			[
				'a file made writable and edited (same size)',
				() => {
					fs.chmodSync(spec, 0o644);
					fs.writeFileSync(spec, '# Spam\n');
				},
				/docs\/spec\.md has mode 644/,
			],
			[
				'a file edited and made read-only again',
				() => {
					fs.chmodSync(spec, 0o644);
					fs.writeFileSync(spec, '# Spam\n');
					fs.chmodSync(spec, 0o444);
				},
				/\(docs\/spec\.md changed\)/,
			],
			['a file added', () => writeIn(path.join(mounted, 'docs'), 'extra.md', 'planted\n'), /docs\/extra\.md was added/],
			['a file removed', () => removeIn(path.join(mounted), 'data.csv'), /data\.csv was removed/],
			['a folder made writable', () => fs.chmodSync(path.join(mounted, 'docs'), 0o755), /docs\/ is not read-only/],
			[
				'a file replaced by a link',
				() => {
					removeIn(path.join(mounted), 'data.csv');
					withWritable(mounted, () => fs.symlinkSync('/etc/hostname', path.join(mounted, 'data.csv')));
				},
				/data\.csv is a link/,
			],
		];
		for (const [what, tamper, logged] of tamperings) {
			tamper();
			assert.equal(desk.library.mount(asset.id, 2), mounted, what);
			asVersion();
			assert.match(logger.lines.at(-1)?.message ?? '', logged, what);
		}
	});
});

describe('mounts checked cheaply', () => {
	it('reads no file of an unchanged mount once its files were read and found the version (a stat each), and still finds a file edited with its times put back', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const logger = recordingLogger();
		const desk = await openDesk(libraryDir, logger);
		const asset = await newAsset(desk);
		fs.mkdirSync(path.join(asset.working_dir, 'docs'));
		for (let i = 0; i < 20; i++) {
			fs.writeFileSync(path.join(asset.working_dir, 'docs', `page-${i}.md`), `# Page ${i}\n`);
		}
		fs.writeFileSync(path.join(asset.working_dir, 'data.csv'), 'a,b\n1,2\n');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		const mounted = desk.library.mount(asset.id, 2);
		const reused = () => {
			assert.equal(desk.library.mount(asset.id, 2), mounted);
			const line = logger.lines.at(-1)?.message ?? '';
			const counts = /reused: (\d+) files, (\d+) read/.exec(line);
			assert.ok(counts, `the reuse is logged: ${line}`);
			return { files: Number(counts[1]), read: Number(counts[2]) };
		};
		// Files changed within the racy window are read: their stat cannot vouch for them yet.
		await sleep(250);
		assert.deepEqual(reused(), { files: 21, read: 21 }, 'the first reuse reads every file once');
		assert.deepEqual(reused(), { files: 21, read: 0 }, 'an unchanged mount is told by its stat alone');
		assert.deepEqual(reused(), { files: 21, read: 0 });

		// An edit of the same size with its mtime put back: ctime, which nobody sets, still moved.
		const data = path.join(mounted, 'data.csv');
		// touch -r copies times to the nanosecond (utimes from JavaScript numbers may not).
		const times = path.join(tempDir(), 'times');
		fs.writeFileSync(times, '');
		execFileSync('touch', ['-r', data, times]);
		const before = fs.statSync(data, { bigint: true });
		fs.chmodSync(data, 0o644);
		fs.writeFileSync(data, 'a,b\n3,4\n');
		fs.chmodSync(data, 0o444);
		execFileSync('touch', ['-r', times, data]);
		const after = fs.statSync(data, { bigint: true });
		assert.deepEqual([after.size, after.mtimeNs, after.ino], [before.size, before.mtimeNs, before.ino]);
		assert.notEqual(after.ctimeNs, before.ctimeNs);
		assert.equal(desk.library.mount(asset.id, 2), mounted);
		assert.match(logger.lines.at(-1)?.message ?? '', /\(data\.csv changed\)/);
		assert.equal(fs.readFileSync(data, 'utf8'), 'a,b\n1,2\n', 'laid out again from its version');
		await sleep(250);
		assert.deepEqual(reused(), { files: 21, read: 21 }, 'a mount laid out again is read once more');
		assert.deepEqual(reused(), { files: 21, read: 0 });
	});

	it('reads every file again when the stamp is lost or damaged, and never trusts one written for other bytes', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const logger = recordingLogger();
		const desk = await openDesk(libraryDir, logger);
		const asset = await newAsset(desk);
		fs.writeFileSync(path.join(asset.working_dir, 'a.txt'), 'one\n');
		fs.writeFileSync(path.join(asset.working_dir, 'b.txt'), 'two\n');
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		const mounted = desk.library.mount(asset.id, 2);
		await sleep(250);
		desk.library.mount(asset.id, 2);
		const stampFile = path.join(libraryDir, 'cache', 'mount', asset.id, '2.json');
		const stamp = JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { files: Record<string, unknown[]> };
		assert.deepEqual(Object.keys(stamp.files).sort(), ['a.txt', 'b.txt']);
		const readCount = () => Number(/(\d+) read/.exec(logger.lines.at(-1)?.message ?? '')?.[1]);
		fs.writeFileSync(stampFile, '{ not json');
		desk.library.mount(asset.id, 2);
		assert.equal(readCount(), 2, 'a damaged stamp: every file read');
		fs.rmSync(stampFile);
		desk.library.mount(asset.id, 2);
		assert.equal(readCount(), 2, 'no stamp: every file read');
		desk.library.mount(asset.id, 2);
		assert.equal(readCount(), 0);
		// A stamp whose hash is not the manifest's vouches for nothing.
		const written = JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { files: Record<string, unknown[]> };
		written.files['a.txt']![4] = '0'.repeat(64);
		fs.writeFileSync(stampFile, JSON.stringify(written));
		desk.library.mount(asset.id, 2);
		assert.equal(readCount(), 1);
		assert.equal(fs.readFileSync(path.join(mounted, 'a.txt'), 'utf8'), 'one\n');
	});
});

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `body` with `folder` writable for its while (a mount's folders are read-only). */
function withWritable(folder: string, body: () => void): void {
	fs.chmodSync(folder, 0o755);
	body();
	fs.chmodSync(folder, 0o555);
}

function writeIn(folder: string, name: string, text: string): void {
	withWritable(folder, () => fs.writeFileSync(path.join(folder, name), text));
}

function removeIn(folder: string, name: string): void {
	withWritable(folder, () => fs.rmSync(path.join(folder, name)));
}

describe('tags, about, checks, retired', () => {
	it('takes at most 16 tags, each key or key:value of lowercase letters, digits and hyphens', async () => {
		const desk = await openDesk();
		const asset = await newAsset(desk);
		assert.deepEqual(desk.library.setTags(asset.id, ['api', 'lang:ts', 'team-a', 'v2']).tags, [
			'api',
			'lang:ts',
			'team-a',
			'v2',
		]);
		const sixteen = Array.from({ length: 16 }, (_, i) => `t${i}`);
		assert.equal(desk.library.setTags(asset.id, sixteen).tags.length, 16);
		assert.throws(
			() => desk.library.setTags(asset.id, [...sixteen, 't16']),
			(e) => isDeskError(e, 'asset.badTag') && e.data['limit'] === 16,
		);
		for (const bad of ['API', 'has space', 'a:b:c', 'under_score', '', 'ünï', 'a:', ':b']) {
			assert.throws(
				() => desk.library.setTags(asset.id, [bad]),
				(e) => isDeskError(e, 'asset.badTag'),
				bad,
			);
		}
		assert.equal(desk.library.getAsset(asset.id).tags.length, 16, 'a refused change changed nothing');
	});

	it("a model's about is marked and replaces an empty or a model's one; never a person's, whose text replaces it and clears the mark", async () => {
		const desk = await openDesk();
		const asset = await newAsset(desk);
		const byModel = desk.library.describe(asset.id, 'What a model made of it', true);
		assert.deepEqual([byModel.about, byModel.about_model_written], ['What a model made of it', true]);
		const again = desk.library.describe(asset.id, 'A second model thought', true);
		assert.deepEqual([again.about, again.about_model_written], ['A second model thought', true]);
		const byPerson = desk.library.describe(asset.id, 'The billing contract, as I wrote it');
		assert.deepEqual([byPerson.about, byPerson.about_model_written], ['The billing contract, as I wrote it', false]);
		assert.throws(
			() => desk.library.describe(asset.id, 'A model disagrees', true),
			(e) => isDeskError(e, 'asset.aboutByPerson') && e.data['id'] === asset.id,
		);
		const kept = desk.library.getAsset(asset.id);
		assert.deepEqual([kept.about, kept.about_model_written], ['The billing contract, as I wrote it', false]);
		// The person's words said again by a model stay the person's.
		assert.equal(
			desk.library.describe(asset.id, 'The billing contract, as I wrote it', true).about_model_written,
			false,
		);
		// An about emptied is nobody's: a model may write it then.
		assert.equal(desk.library.describe(asset.id, '').about_model_written, false);
		assert.equal(desk.library.describe(asset.id, 'Filled in by a model', true).about_model_written, true);
	});

	it('describes, retires and unretires, and validates checks', async () => {
		const desk = await openDesk();
		const asset = await newAsset(desk);
		assert.equal(desk.library.describe(asset.id, '  The billing API\n contract ').about, 'The billing API contract');
		assert.equal(desk.library.setRetired(asset.id, true, 'Jane Doe').retired, true);
		assert.equal(desk.library.setRetired(asset.id, false, 'Jane Doe').retired, false);
		const checks = desk.library.setChecks(asset.id, [
			{ id: 'unit', executable: 'npm', args: ['test'], cwd: '.', timeout: 300 },
		]).checks;
		assert.deepEqual(checks, [{ id: 'unit', executable: 'npm', args: ['test'], cwd: '.', timeout: 300 }]);
		for (const bad of [
			{},
			[{ id: 'x' }],
			[{ id: 'Bad Id', executable: 'x' }],
			[{ id: 'a', executable: 'x', cwd: '../up' }],
			[{ id: 'a', executable: 'x', timeout: -1 }],
			[
				{ id: 'a', executable: 'x' },
				{ id: 'a', executable: 'y' },
			],
			[{ id: 'a', executable: 'x', shell: true }],
		]) {
			assert.throws(
				() => desk.library.setChecks(asset.id, bad),
				(e) => isDeskError(e, 'asset.badChecks'),
				JSON.stringify(bad),
			);
		}
		assert.equal(desk.library.getAsset(asset.id).checks.length, 1);
		assert.deepEqual(desk.library.usedIn(asset.id), [], 'no launch has used it yet');
	});

	it('makes a folder with a valid SKILL.md a skill, with its description as about', async () => {
		const root = tempDir();
		const skill = path.join(root, 'review-skill');
		fs.mkdirSync(skill);
		fs.writeFileSync(
			path.join(skill, 'SKILL.md'),
			'---\nname: review\ndescription: "Reviews a change for risky patterns"\n---\n\nBody.\n',
		);
		const desk = await openDesk(path.join(root, 'library'));
		const { asset } = await desk.library.importDir({ dir: skill, main: false });
		assert.equal(asset.kind, 'skill');
		assert.equal(asset.about, 'Reviews a change for risky patterns');
	});
});

describe('the stat cache', () => {
	it('notices every kind of change after an unchanged scan: a removed, an added, and a rewritten file', async () => {
		const desk = await openDesk();
		const asset = (await desk.library.newAsset({ name: 'cache', madeBy: 'user' })).asset;
		const file = (name: string) => path.join(asset.working_dir, name);
		fs.writeFileSync(file('a.txt'), 'aaaa');
		fs.writeFileSync(file('b.txt'), 'bbbb');
		const old = new Date(Date.now() - 10_000);
		fs.utimesSync(file('a.txt'), old, old);
		fs.utimesSync(file('b.txt'), old, old);
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		const unchanged = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.deepEqual([unchanged.created, unchanged.filesRead], [false, 0], 'nothing was read again');
		fs.rmSync(file('b.txt'));
		assert.deepEqual(await desk.library.atGo(asset.id), {
			engine: 'snapshot',
			version: 3,
			working_changes: true,
			changed: 1,
		});
		fs.writeFileSync(file('c.txt'), 'cccc');
		assert.equal(
			(await desk.library.atGo(asset.id)).engine === 'snapshot' &&
				((await desk.library.atGo(asset.id)) as { changed: number }).changed,
			2,
		);
		// Same size, same mtime as cached, other bytes: the inode change time gives it away.
		fs.writeFileSync(file('a.txt'), 'AAAA');
		fs.utimesSync(file('a.txt'), old, old);
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.equal(result.version.version, 3);
		assert.equal(Buffer.from(await desk.library.cat(asset.id, 'a.txt')).toString(), 'AAAA');
		assert.deepEqual(
			(await desk.library.files(asset.id)).files.map((f) => f.path),
			['a.txt', 'c.txt'],
		);
	});
});

describe('links', () => {
	it('a link or a note asked for twice the same (kind, name, URL or text, project) is the first record; another URL or text under its name is refused', async () => {
		const desk = await openDesk();
		const link = (project?: string, url = 'https://example.com/spec') =>
			desk.library.addLink({ name: 'Spec', url, madeBy: 'user', ...(project ? { project } : {}) });
		const note = (text: string, project = 'shop') =>
			desk.library.addNote({ name: 'Decisions', text, madeBy: 'user', project });
		const first = link('shop');
		assert.equal(link('shop').id, first.id);
		assert.throws(
			() => link('shop', 'https://example.com/spec-v2'),
			(e) => isDeskError(e, 'asset.nameTaken') && (e.data as { id: string }).id === first.id,
			'another URL under the same name',
		);
		assert.notEqual(link('billing', 'https://example.com/spec-v2').id, first.id, 'another project');
		const loose = link();
		assert.notEqual(loose.id, first.id, 'in no project');
		assert.equal(link().id, loose.id);
		assert.throws(
			() => link(undefined, 'https://example.com/spec-v2'),
			(e) => isDeskError(e, 'asset.nameTaken'),
		);
		const written = note('Use Postgres.');
		assert.equal(note('Use Postgres.').id, written.id);
		assert.throws(
			() => note('Use SQLite.'),
			(e) => isDeskError(e, 'asset.nameTaken'),
			'another text',
		);
		assert.notEqual(
			desk.library.addNote({ name: 'Spec', text: 'https://example.com/spec-v2', madeBy: 'user', project: 'shop' }).id,
			first.id,
			"a note may share a link's name",
		);
		assert.deepEqual(
			(await desk.library.listAssets('shop')).map((a) => [a.kind, a.name]),
			[
				['link', 'Spec'],
				['notes', 'Decisions'],
				['notes', 'Spec'],
			],
		);
		desk.library.setRetired(first.id, true, 'Jane Doe');
		assert.notEqual(link('shop').id, first.id, 'a retired one is out of the lists: asked for again, it is made again');
		desk.library.setRetired(link('shop').id, true, 'Jane Doe');
		assert.equal(link('shop', 'https://example.com/spec-v2').name, 'Spec', 'the name of retired links is free');
	});

	it('records the asset a link was made from, at its picked version then (derived_from)', async () => {
		const desk = await openDesk();
		const source = (await desk.library.newAsset({ name: 'spec', madeBy: 'user' })).asset;
		fs.writeFileSync(path.join(source.working_dir, 'spec.md'), 'spec');
		await desk.library.snapshot(source.id, { madeBy: 'user' });
		const link = desk.library.addLink({
			name: 'Published spec',
			url: 'https://example.com/spec',
			madeBy: 'user',
			from: source.id,
		});
		assert.deepEqual(
			[link.derived_from, link.derived_from_version, link.engine, link.kind],
			[source.id, 2, 'none', 'link'],
		);
		assert.throws(
			() => desk.library.addLink({ name: 'x', url: 'javascript:alert(1)', madeBy: 'user' }),
			(e) => isDeskError(e, 'asset.badUrl'),
		);
		assert.throws(
			() => desk.library.addLink({ name: 'x', url: 'not a url', madeBy: 'user' }),
			(e) => isDeskError(e, 'asset.badUrl'),
		);
	});
});

describe('manifests', () => {
	it('refuses a manifest that names a path outside its version, so a mount can never be led out of its folder', () => {
		const hash = 'a'.repeat(64);
		for (const bad of ['../escape', '/etc/passwd', 'a/../../b', 'a//b', '', 'nul\0byte']) {
			const bytes = Buffer.from(
				JSON.stringify({ format: 1, files: [{ path: bad, hash, size: 1, executable: false }] }),
			);
			assert.throws(
				() => decodeManifest(bytes, 'x'),
				(e) => isDeskError(e, 'manifest.corrupt'),
				JSON.stringify(bad),
			);
		}
		assert.throws(
			() => decodeManifest(Buffer.from('{"format":2,"files":[]}'), 'x'),
			(e) => isDeskError(e, 'manifest.corrupt'),
		);
		assert.throws(
			() => decodeManifest(Buffer.from('not json'), 'x'),
			(e) => isDeskError(e, 'manifest.corrupt'),
		);
	});
});

describe('checks then snapshots', () => {
	it('stores the manifest of a snapshot that follows an AtGo check of the same folder', async () => {
		const desk = await openDesk();
		const asset = (await desk.library.newAsset({ name: 'after-check', madeBy: 'user' })).asset;
		const old = new Date(Date.now() - 10_000);
		for (const name of ['a.txt', 'b.txt']) {
			fs.writeFileSync(path.join(asset.working_dir, name), name);
			fs.utimesSync(path.join(asset.working_dir, name), old, old);
		}
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		fs.rmSync(path.join(asset.working_dir, 'b.txt'));
		assert.equal(
			(await desk.library.atGo(asset.id)).engine === 'snapshot' &&
				((await desk.library.atGo(asset.id)) as { working_changes: boolean }).working_changes,
			true,
		);
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.equal(result.created, true);
		assert.deepEqual(
			(await desk.library.files(asset.id, result.version.version)).files.map((f) => f.path),
			['a.txt'],
			"the new version's manifest is in the store",
		);
	});

	it('sees a chmod +x as a change even when the content is the same', async () => {
		const desk = await openDesk();
		const asset = (await desk.library.newAsset({ name: 'modes', madeBy: 'user' })).asset;
		const file = path.join(asset.working_dir, 'run.sh');
		fs.writeFileSync(file, '#!/bin/sh\n');
		const old = new Date(Date.now() - 10_000);
		fs.utimesSync(file, old, old);
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		await desk.library.snapshot(asset.id, { madeBy: 'user' });
		fs.chmodSync(file, 0o755);
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.equal(result.created, true);
		assert.equal((await desk.library.files(asset.id)).files[0]?.executable, true);
	});
});
