import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCodes } from 'vscode-languageserver/node';
import {
	AddLink,
	AddNote,
	AssetsDidChange,
	DescribeAsset,
	DiffVersions,
	GetAtGo,
	ImportAsset,
	ListAssets,
	ListFiles,
	ListFolder,
	ListVersions,
	OpenWorkspace,
	ReadFile,
	SetChecks,
	SetRetired,
	SetTags,
	SnapshotAsset,
	SnapshotProgress,
	SyncAsset,
	UsedInLaunches,
	deskErrorCode,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import type { AssetRecord, AssetSummary, ProjectRecord } from '../../server/src/assets/types';
import { desk } from '../helpers/deskCli';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('the asset library over JSON-RPC', () => {
	const root = tempDir();
	const server = serverForSuite(path.join(root, 'library'));

	it('imports a folder, snapshots it with progress, reports AtGo, files, contents and diffs', async () => {
		const folder = path.join(root, 'specs');
		fs.mkdirSync(folder);
		for (let i = 0; i < 1200; i++) {
			fs.writeFileSync(path.join(folder, `spec-${i}.md`), `# Spec ${i}\n`);
		}
		const imported = await server.call(ImportAsset, { dir: folder, project: 'shop' });
		assert.equal(imported.asset.engine, 'snapshot');
		assert.equal(imported.project?.name, 'shop');
		assert.ok(server.notifications.some((n) => n.method === AssetsDidChange.method));
		const id = imported.asset.id;
		assert.deepEqual(await server.call(GetAtGo, { id }), {
			engine: 'snapshot',
			version: 1,
			working_changes: false,
			manifest: ((await server.call(ListVersions, { id })).versions[0] as { manifest: string }).manifest,
		});

		fs.writeFileSync(path.join(folder, 'spec-0.md'), '# Spec 0, revised\n');
		assert.deepEqual(await server.call(GetAtGo, { id }), {
			engine: 'snapshot',
			version: 2,
			working_changes: true,
			changed: 1,
		});
		const snap = await server.call(SnapshotAsset, { id, note: 'revised' });
		assert.deepEqual(
			[snap.created, snap.version.version, snap.version.made_by, snap.version.file_count],
			[true, 2, 'user', 1200],
		);
		assert.ok(
			server.notifications.some((n) => n.method === SnapshotProgress.method && (n.params as { id: string }).id === id),
			'progress was reported',
		);

		const files = await server.call(ListFiles, { id, version: 2 });
		assert.equal(files.files.length, 1200);
		const read = await server.call(ReadFile, { id, path: 'spec-0.md', version: 1 });
		assert.equal(Buffer.from(read.base64, 'base64').toString(), '# Spec 0\n');
		const diff = await server.call(DiffVersions, { id, from: 1, to: 2 });
		assert.deepEqual(
			diff.modified.map((m) => m.after.path),
			['spec-0.md'],
		);
	});

	it('edits records: tags, about, checks, retired; links and notes; used-in', async () => {
		const link = await server.call(AddLink, { name: 'API docs', url: 'https://example.com/api', project: 'shop' });
		const note = await server.call(AddNote, { name: 'Decisions', text: 'Keep sql.js', project: 'shop' });
		assert.deepEqual([link.engine, link.kind, note.kind], ['none', 'link', 'notes']);
		assert.deepEqual((await server.call(SetTags, { id: link.id, tags: ['docs', 'area:api'] })).tags, [
			'docs',
			'area:api',
		]);
		assert.equal((await server.call(DescribeAsset, { id: link.id, about: 'The public API' })).about, 'The public API');
		assert.equal((await server.call(SetRetired, { id: note.id, retired: true })).retired, true);
		const { assets } = await server.call(ListAssets, { project: 'shop' });
		assert.ok(assets.some((a) => a.id === note.id && a.retired));
		assert.deepEqual(await server.call(UsedInLaunches, { id: link.id }), { usedIn: [] });
		const failure = await expectRpcError(server.connection, GetAtGo.method, { id: link.id });
		assert.equal(failure.code, deskErrorCode);
		assert.equal((failure.data as DeskErrorJson).code, 'asset.noFiles');
		assert.equal(failure.message, 'API docs has no files to read.');
	});

	it('answers a link or a note asked for again the same with the first one; the same name with another URL or text is asset.nameTaken', async () => {
		const link = { name: 'Style guide', url: 'https://example.com/style', project: 'shop' };
		const note = { name: 'Ground rules', text: 'No new dependencies.', project: 'shop' };
		const firstLink = await server.call(AddLink, link);
		const firstNote = await server.call(AddNote, note);
		const count = (await server.call(ListAssets, {})).assets.length;
		assert.equal((await server.call(AddLink, link)).id, firstLink.id);
		assert.equal((await server.call(AddNote, note)).id, firstNote.id);
		for (const [method, params, id] of [
			[AddLink.method, { ...link, url: 'https://example.com/style-v2' }, firstLink.id],
			[AddNote.method, { ...note, text: 'Any dependency goes.' }, firstNote.id],
		] as const) {
			const taken = await expectRpcError(server.connection, method, params);
			assert.equal(taken.code, deskErrorCode);
			assert.deepEqual(
				[(taken.data as DeskErrorJson).code, (taken.data as DeskErrorJson).data?.['id']],
				['asset.nameTaken', id],
			);
			assert.match(taken.message, /Project shop has a (link|note) named .+ already .+ another (URL|text)/);
		}
		assert.equal((await server.call(ListAssets, {})).assets.length, count, 'nothing more was made');
	});

	it('refuses bad edits with their codes and changes nothing', async () => {
		const { asset } = await server.call(ImportAsset, { newName: 'scratch' });
		const tag = await expectRpcError(server.connection, SetTags.method, { id: asset.id, tags: ['Bad Tag'] });
		assert.equal((tag.data as DeskErrorJson).code, 'asset.badTag');
		const checks = await expectRpcError(server.connection, SetChecks.method, { id: asset.id, checks: [{ id: 'x' }] });
		assert.equal((checks.data as DeskErrorJson).code, 'asset.badChecks');
		const both = await expectRpcError(server.connection, ImportAsset.method, { newName: 'a', assetId: asset.id });
		assert.equal((both.data as DeskErrorJson).code, 'import.badArgs');
		const shape = await expectRpcError(server.connection, DiffVersions.method, { id: asset.id, from: 0, to: 1.5 });
		assert.equal(shape.code, ErrorCodes.InvalidParams);
		const { assets } = await server.call(ListAssets, {});
		const stored = assets.find((a) => a.id === asset.id)!;
		assert.deepEqual([stored.tags, stored.checks], [[], []]);
		const notGit = await expectRpcError(server.connection, SyncAsset.method, { id: asset.id });
		assert.equal((notGit.data as DeskErrorJson).code, 'asset.noFolder');
	});

	it('pages a long history and lists a version a folder at a time (git and snapshot assets)', async () => {
		const repo = makeRepo(path.join(root, 'paged'), { commits: 30 });
		commitFile(repo, 'src/lib/deep.ts', 'export {};\n', 'deep file');
		commitFile(repo, 'src/main.ts', 'main();\n', 'main file');
		const { asset } = await server.call(ImportAsset, { dir: repo, project: 'paged' });
		const page = await server.call(ListVersions, { id: asset.id, from: 23, to: 40 });
		assert.equal(page.total, 32);
		assert.deepEqual(
			page.versions.map((v) => v.version),
			[23, 24, 25, 26, 27, 28, 29, 30, 31, 32],
			'clipped to what exists, oldest first',
		);
		assert.equal((page.versions.at(-1) as { commit: string }).commit, git(repo, 'rev-parse', 'HEAD'));
		assert.deepEqual((await server.call(ListVersions, { id: asset.id, from: 40 })).versions, []);

		const top = await server.call(ListFolder, { id: asset.id, folder: '' });
		assert.equal(top.version, 32);
		assert.deepEqual(top.folders, ['src']);
		assert.equal(top.files.length, 30);
		const src = await server.call(ListFolder, { id: asset.id, folder: 'src' });
		assert.deepEqual([src.folders, src.files.map((f) => f.path)], [['lib'], ['src/main.ts']]);
		assert.equal(src.files[0]!.hash, git(repo, 'rev-parse', 'HEAD:src/main.ts'));
		const before = await server.call(ListFolder, { id: asset.id, folder: 'src', version: 31 });
		assert.deepEqual([before.folders, before.files], [['lib'], []]);
		for (const folder of ['src/main.ts', 'nowhere']) {
			const missing = await expectRpcError(server.connection, ListFolder.method, { id: asset.id, folder });
			assert.equal((missing.data as DeskErrorJson).code, 'asset.fileNotFound', folder);
		}

		const notes = path.join(root, 'notes');
		fs.mkdirSync(path.join(notes, 'a', 'b'), { recursive: true });
		fs.writeFileSync(path.join(notes, 'top.md'), 'top');
		fs.writeFileSync(path.join(notes, 'a', 'b', 'deep.md'), 'deep');
		const folderAsset = (await server.call(ImportAsset, { dir: notes })).asset;
		const snapshotTop = await server.call(ListFolder, { id: folderAsset.id, folder: '' });
		assert.deepEqual([snapshotTop.folders, snapshotTop.files.map((f) => [f.path, f.size])], [['a'], [['top.md', 3]]]);
		assert.deepEqual(
			(await server.call(ListFolder, { id: folderAsset.id, folder: 'a/b/' })).files.map((f) => f.path),
			['a/b/deep.md'],
		);
	});

	it('syncs a git asset: the head is recorded with made_by sync', async () => {
		const repo = makeRepo(path.join(root, 'svc'), { commits: 2 });
		const { asset } = await server.call(ImportAsset, { dir: repo, project: 'svc', main: true });
		const synced = await server.call(SyncAsset, { id: asset.id });
		assert.equal(synced.recorded, true);
		const { versions } = await server.call(ListVersions, { id: asset.id });
		assert.deepEqual(
			versions.map((v) => v.made_by),
			['outside', 'sync'],
		);
	});
});

describe('a project made at the command line without a repository, then its repository opened in a window', () => {
	const root = tempDir();
	const libraryDir = path.join(root, 'library');
	const server = serverForSuite(libraryDir);

	it('gives that project its repository, keeping its folder, and makes no shop-2', async () => {
		const notes = path.join(root, 'notes');
		fs.mkdirSync(notes);
		fs.writeFileSync(path.join(notes, 'plan.md'), '# Plan\n');
		const imported = desk('--store', libraryDir, 'asset', 'import', '--dir', notes, '--project', 'shop', '--json');
		assert.equal(imported.code, 0, imported.stderr);
		const folder = (JSON.parse(imported.stdout) as { asset: AssetRecord; project: ProjectRecord }).asset;
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		assert.equal(desk('--store', libraryDir, 'card', 'show', '--repo', repo).code, 2, 'no project has it yet');

		const opened = await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		const [outcome] = opened.folders;
		assert.ok(outcome?.outcome === 'adopted', JSON.stringify(outcome));
		assert.deepEqual(
			[outcome.project.name, outcome.project.path, outcome.project.main_asset],
			['shop', repo, outcome.asset.id],
		);
		assert.ok(server.logs.includes(`project shop: made without a repository, given ${repo}`), server.logs.join('\n'));
		const { assets } = await server.call(ListAssets, { project: 'shop' });
		assert.deepEqual(
			assets.map((a) => [a.id, a.projects]).sort(),
			[
				[folder.id, [{ name: 'shop', main: false }]],
				[outcome.asset.id, [{ name: 'shop', main: true }]],
			].sort(),
		);

		// The command line finds the project by its repository, and lists no other.
		const card = desk('--store', libraryDir, 'card', 'show', '--repo', repo);
		assert.equal(card.code, 0, card.stderr);
		const listed = desk('--store', libraryDir, 'assets', 'list', '--json');
		assert.equal(listed.code, 0, listed.stderr);
		assert.deepEqual(
			[...new Set((JSON.parse(listed.stdout) as AssetSummary[]).flatMap((a) => a.projects.map((p) => p.name)))],
			['shop'],
		);
	});
});
