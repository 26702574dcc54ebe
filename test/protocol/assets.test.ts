import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
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
	ListVersions,
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
	type ResultOf,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { expectRpcError, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('the asset library over JSON-RPC', () => {
	let server: RunningServer;
	let root: string;
	const call = async <R>(definition: { method: string; result?: R }, params: unknown): Promise<R> => (await server.connection.sendRequest(definition.method, params)) as R;

	before(async () => {
		root = tempDir();
		server = await startServer(path.join(root, 'library'));
	});
	after(() => server.stop());

	it('imports a folder, snapshots it with progress, reports AtGo, files, contents and diffs', async () => {
		const folder = path.join(root, 'specs');
		fs.mkdirSync(folder);
		for (let i = 0; i < 1200; i++) {
			fs.writeFileSync(path.join(folder, `spec-${i}.md`), `# Spec ${i}\n`);
		}
		const imported = await call<ResultOf<typeof ImportAsset>>(ImportAsset, { dir: folder, project: 'shop' });
		assert.equal(imported.asset.engine, 'snapshot');
		assert.equal(imported.project?.name, 'shop');
		assert.ok(server.notifications.some((n) => n.method === AssetsDidChange.method));
		const id = imported.asset.id;
		assert.deepEqual(await call(GetAtGo, { id }), { engine: 'snapshot', version: 1, working_changes: false, manifest: ((await call<ResultOf<typeof ListVersions>>(ListVersions, { id })).versions[0] as { manifest: string }).manifest });

		fs.writeFileSync(path.join(folder, 'spec-0.md'), '# Spec 0, revised\n');
		assert.deepEqual(await call(GetAtGo, { id }), { engine: 'snapshot', version: 2, working_changes: true, changed: 1 });
		const snap = await call<ResultOf<typeof SnapshotAsset>>(SnapshotAsset, { id, note: 'revised' });
		assert.deepEqual([snap.created, snap.version.version, snap.version.made_by, snap.version.file_count], [true, 2, 'user', 1200]);
		assert.ok(server.notifications.some((n) => n.method === SnapshotProgress.method && (n.params as { id: string }).id === id), 'progress was reported');

		const files = await call<ResultOf<typeof ListFiles>>(ListFiles, { id, version: 2 });
		assert.equal(files.files.length, 1200);
		const read = await call<ResultOf<typeof ReadFile>>(ReadFile, { id, path: 'spec-0.md', version: 1 });
		assert.equal(Buffer.from(read.base64, 'base64').toString(), '# Spec 0\n');
		const diff = await call<ResultOf<typeof DiffVersions>>(DiffVersions, { id, from: 1, to: 2 });
		assert.deepEqual(diff.modified.map((m) => m.after.path), ['spec-0.md']);
	});

	it('edits records: tags, about, checks, retired; links and notes; used-in', async () => {
		const link = await call<ResultOf<typeof AddLink>>(AddLink, { name: 'API docs', url: 'https://example.com/api', project: 'shop' });
		const note = await call<ResultOf<typeof AddNote>>(AddNote, { name: 'Decisions', text: 'Keep sql.js', project: 'shop' });
		assert.deepEqual([link.engine, link.kind, note.kind], ['none', 'link', 'notes']);
		assert.deepEqual((await call<ResultOf<typeof SetTags>>(SetTags, { id: link.id, tags: ['docs', 'area:api'] })).tags, ['docs', 'area:api']);
		assert.equal((await call<ResultOf<typeof DescribeAsset>>(DescribeAsset, { id: link.id, about: 'The public API' })).about, 'The public API');
		assert.equal((await call<ResultOf<typeof SetRetired>>(SetRetired, { id: note.id, retired: true })).retired, true);
		const { assets } = await call<ResultOf<typeof ListAssets>>(ListAssets, { project: 'shop' });
		assert.ok(assets.some((a) => a.id === note.id && a.retired));
		assert.deepEqual(await call(UsedInLaunches, { id: link.id }), { usedIn: [] });
		const failure = await expectRpcError(server.connection, GetAtGo.method, { id: link.id });
		assert.equal(failure.code, deskErrorCode);
		assert.equal((failure.data as DeskErrorJson).code, 'asset.noFiles');
		assert.equal(failure.message, 'API docs has no files to read.');
	});

	it('refuses bad edits with their codes and changes nothing', async () => {
		const { asset } = await call<ResultOf<typeof ImportAsset>>(ImportAsset, { newName: 'scratch' });
		const tag = await expectRpcError(server.connection, SetTags.method, { id: asset.id, tags: ['Bad Tag'] });
		assert.equal((tag.data as DeskErrorJson).code, 'asset.badTag');
		const checks = await expectRpcError(server.connection, SetChecks.method, { id: asset.id, checks: [{ id: 'x' }] });
		assert.equal((checks.data as DeskErrorJson).code, 'asset.badChecks');
		const both = await expectRpcError(server.connection, ImportAsset.method, { newName: 'a', assetId: asset.id });
		assert.equal((both.data as DeskErrorJson).code, 'import.badArgs');
		const shape = await expectRpcError(server.connection, DiffVersions.method, { id: asset.id, from: 0, to: 1.5 });
		assert.equal(shape.code, ErrorCodes.InvalidParams);
		const { assets } = await call<ResultOf<typeof ListAssets>>(ListAssets, {});
		const stored = assets.find((a) => a.id === asset.id)!;
		assert.deepEqual([stored.tags, stored.checks], [[], []]);
		const notGit = await expectRpcError(server.connection, SyncAsset.method, { id: asset.id });
		assert.equal((notGit.data as DeskErrorJson).code, 'asset.noFolder');
	});

	it('syncs a git asset: the head is recorded with made_by sync', async () => {
		const repo = makeRepo(path.join(root, 'svc'), { commits: 2 });
		const { asset } = await call<ResultOf<typeof ImportAsset>>(ImportAsset, { dir: repo, project: 'svc', main: true });
		const synced = await call<ResultOf<typeof SyncAsset>>(SyncAsset, { id: asset.id });
		assert.equal(synced.recorded, true);
		const { versions } = await call<ResultOf<typeof ListVersions>>(ListVersions, { id: asset.id });
		assert.deepEqual(versions.map((v) => v.made_by), ['outside', 'sync']);
	});
});
