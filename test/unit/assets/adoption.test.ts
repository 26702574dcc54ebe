import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { LibraryStore } from '../../../server/src/assets/ports';
import type { AssetRecord } from '../../../server/src/assets/types';
import { isDeskError } from '../../../server/src/core/errors';
import { Desk } from '../../../server/src/desk';
import { commitFile, git, makeRepo } from '../../helpers/gitRepo';
import { openDesk, recordingLogger } from '../../helpers/deskFixture';
import { tempDir } from '../../helpers/temp';

describe('desk boot (registerRepoAssets)', () => {
	it('adopts the repository of a workspace folder as its project main asset, logging the import once', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 3 });
		const logger = recordingLogger();
		const libraryDir = path.join(root, 'library');
		let desk = await Desk.open({ libraryDir, logger });
		const [first] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.equal(first?.outcome, 'adopted');
		assert.ok(first?.outcome === 'adopted');
		const { asset, project, created } = first;
		assert.equal(created, true);
		assert.match(asset.id, /^a-[0-9a-f]{16}$/);
		assert.deepEqual(
			{
				name: asset.name,
				kind: asset.kind,
				engine: asset.engine,
				branch: asset.branch,
				working_dir: asset.working_dir,
				picked_version: asset.picked_version,
				created_by: asset.created_by,
			},
			{
				name: 'shop',
				kind: 'code',
				engine: 'git',
				branch: 'main',
				working_dir: repo,
				picked_version: 0,
				created_by: "desk boot: project shop's repo",
			},
		);
		assert.deepEqual(
			{ name: project.name, path: project.path, main_asset: project.main_asset },
			{ name: 'shop', path: repo, main_asset: asset.id },
		);
		const imported = logger.infos().filter((m) => m.startsWith('asset imported:'));
		assert.deepEqual(imported, [`asset imported: ${asset.id} shop ${repo} (desk boot: project shop's repo)`]);

		// The project's own store lives in the repository, ignored by git.
		assert.equal(
			fs
				.readFileSync(path.join(repo, '.desk', '.gitignore'), 'utf8')
				.trim()
				.split('\n')
				.pop(),
			'*',
		);
		assert.ok(fs.existsSync(path.join(repo, '.desk', 'project.db')));
		assert.equal(git(repo, 'status', '--porcelain'), '', '.desk/ does not show up as a change');

		// A second boot finds the same record, logs nothing new, and keeps the main asset.
		desk.close();
		desk = await Desk.open({ libraryDir, logger });
		const [second] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(second?.outcome === 'adopted');
		assert.equal(second.created, false);
		assert.equal(second.asset.id, asset.id);
		assert.equal(logger.infos().filter((m) => m.startsWith('asset imported:')).length, 1);
		const assets = await desk.library.listAssets();
		assert.equal(assets.length, 1);
		assert.deepEqual(assets[0]?.projects, [{ name: 'shop', main: true }]);
		assert.equal(assets[0]?.version_count, 3);
		assert.equal(assets[0]?.file_count, 3);
		desk.close();
	});

	it('adopts from a folder inside the repository too, and reports folders in no repository', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'mono'));
		fs.mkdirSync(path.join(repo, 'packages', 'web'), { recursive: true });
		const plain = path.join(root, 'notes');
		fs.mkdirSync(plain);
		const desk = await openDesk(path.join(root, 'library'));
		const results = await desk.openWorkspace([
			{ name: 'web', path: path.join(repo, 'packages', 'web') },
			{ name: 'notes', path: plain },
		]);
		assert.equal(results[0]?.outcome, 'adopted');
		assert.ok(results[0]?.outcome === 'adopted' && results[0].asset.working_dir === repo);
		assert.equal(results[1]?.outcome, 'notARepository');
	});

	it('keeps a main asset the project already has', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'svc'));
		const other = makeRepo(path.join(root, 'lib'));
		const desk = await openDesk(path.join(root, 'library'));
		const [adopted] = await desk.openWorkspace([{ name: 'svc', path: repo }]);
		assert.ok(adopted?.outcome === 'adopted');
		const imported = await desk.library.importDir({ dir: other, project: 'svc', main: true });
		assert.equal(imported.project?.main_asset, imported.asset.id);
		const [again] = await desk.library.registerRepoAssets([desk.library.listProjects().find((p) => p.name === 'svc')!]);
		assert.equal(again?.project.main_asset, imported.asset.id, 'desk boot does not take main back');
	});

	it('names two projects from folders of the same name apart', async () => {
		const root = tempDir();
		const a = makeRepo(path.join(root, 'one', 'app'));
		const b = makeRepo(path.join(root, 'two', 'app'));
		const desk = await openDesk(path.join(root, 'library'));
		const results = await desk.openWorkspace([
			{ name: 'app', path: a },
			{ name: 'app', path: b },
		]);
		assert.deepEqual(
			results.map((r) => (r.outcome === 'adopted' ? r.project.name : r.outcome)),
			['app', 'app-2'],
		);
	});
});

describe('desk boot: a project made earlier without a repository (glossary: Adopt)', () => {
	function notesFolder(root: string, name = 'notes'): string {
		const dir = path.join(root, name);
		fs.mkdirSync(dir);
		fs.writeFileSync(path.join(dir, 'a.md'), 'notes\n');
		return dir;
	}

	/** A project as a desk before `--main` gave repositories kept it: no repository, a repository as its main asset. */
	function legacyProject(desk: Desk, name: string, main: AssetRecord): void {
		const store = (desk.library as unknown as { context: { store: LibraryStore } }).context.store;
		store.batch((writes) => {
			writes.insertProject({ name, path: '', main_asset: '', created_at: new Date().toISOString() });
			writes.addProjectAsset(name, main.id, new Date().toISOString());
			writes.setMainAsset(name, main.id);
		});
	}

	it('gives the project of the folder’s name its repository, keeping its members, instead of making shop-2', async () => {
		const root = tempDir();
		const notes = notesFolder(root);
		const repo = makeRepo(path.join(root, 'shop'));
		const logger = recordingLogger();
		const desk = await openDesk(path.join(root, 'library'), logger);
		const folder = await desk.library.importDir({ dir: notes, project: 'shop', main: false });
		assert.equal(folder.project?.path, '');

		const [opened] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(opened?.outcome === 'adopted', JSON.stringify(opened));
		assert.deepEqual(
			{ name: opened.project.name, path: opened.project.path, main: opened.project.main_asset },
			{ name: 'shop', path: repo, main: opened.asset.id },
		);
		assert.deepEqual(
			desk.library.listProjects().map((p) => p.name),
			['shop'],
			'no second project',
		);
		assert.deepEqual(
			desk.library.listProjectAssets('shop').map((a) => a.id),
			[folder.asset.id, opened.asset.id],
			'the folder stays a member',
		);
		assert.equal(desk.projectAt(repo).name, 'shop');
		assert.ok(
			logger.infos().includes(`project shop: made without a repository, given ${repo}`),
			logger.infos().join('\n'),
		);

		// A main asset it had (a folder) stays its main asset; a later boot finds it by its repository.
		const other = makeRepo(path.join(root, 'billing'));
		const main = await desk.library.importDir({ dir: notesFolder(root, 'plans'), project: 'billing', main: true });
		const [billing] = await desk.openWorkspace([{ name: 'billing', path: other }]);
		assert.ok(billing?.outcome === 'adopted');
		assert.deepEqual([billing.project.name, billing.project.path], ['billing', other]);
		assert.equal(billing.project.main_asset, main.asset.id, 'its main asset is kept');
		const [again] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(again?.outcome === 'adopted' && again.project.name === 'shop' && !again.created);
		assert.deepEqual(
			desk.library.listProjects().map((p) => p.name),
			['billing', 'shop'],
		);
	});

	it('gives the repository to the project whose main asset it is, whatever the folder is called', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'));
		const desk = await openDesk(path.join(root, 'library'));
		const { asset } = await desk.library.importDir({ dir: repo, main: false });
		legacyProject(desk, 'storefront', asset);

		const [opened] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(opened?.outcome === 'adopted');
		assert.deepEqual(
			[opened.project.name, opened.project.path, opened.project.main_asset, opened.asset.id],
			['storefront', repo, asset.id, asset.id],
		);
		assert.deepEqual(
			desk.library.listProjects().map((p) => p.name),
			['storefront'],
		);
	});

	it('makes a project of its own, as before, and says why, when it is not clear which project was meant', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'));
		const elsewhere = makeRepo(path.join(root, 'elsewhere', 'shop'));
		const logger = recordingLogger();
		const desk = await openDesk(path.join(root, 'library'), logger);
		const { asset } = await desk.library.importDir({ dir: repo, main: false });
		// Two projects without a repository: one of the folder's name, one whose main asset is the repository.
		await desk.library.importDir({ dir: notesFolder(root), project: 'shop', main: false });
		legacyProject(desk, 'storefront', asset);
		// The other clone's project of that name has the other clone as its main asset.
		const { asset: other } = await desk.library.importDir({ dir: elsewhere, main: false });
		legacyProject(desk, 'tools', other);

		const [opened] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(opened?.outcome === 'adopted');
		assert.deepEqual([opened.project.name, opened.project.path], ['shop-2', repo]);
		const warned = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
		assert.deepEqual(warned, [
			`${repo}: given to no project made without a repository (projects shop and storefront could each be the one meant); it is project shop-2`,
		]);

		const [tools] = await desk.openWorkspace([{ name: 'tools', path: makeRepo(path.join(root, 'tools')) }]);
		assert.ok(tools?.outcome === 'adopted');
		assert.equal(tools.project.name, 'tools-2', 'the project of that name has another repository as its main asset');
		assert.match(
			logger.lines.filter((l) => l.level === 'warn').pop()?.message ?? '',
			new RegExp(
				`project tools has its name, but the repository ${elsewhere} as its main asset\\); it is project tools-2$`,
			),
		);
		assert.deepEqual(
			desk.library.listProjects().map((p) => [p.name, p.path]),
			[
				['shop', ''],
				['shop-2', repo],
				['storefront', ''],
				['tools', ''],
				['tools-2', path.join(root, 'tools')],
			],
			'nothing of the projects made without a repository changed',
		);
	});
});

describe('AdoptRepo: branch and identity', () => {
	it("takes origin/HEAD's branch over main, master and the checked-out branch", async () => {
		const root = tempDir();
		const upstream = makeRepo(path.join(root, 'upstream'), { branch: 'trunk' });
		git(root, 'clone', '-q', upstream, 'clone');
		const clone = fs.realpathSync(path.join(root, 'clone'));
		git(clone, 'checkout', '-q', '-b', 'main');
		git(clone, 'checkout', '-q', '-b', 'feature');
		const desk = await openDesk(path.join(root, 'library'));
		const { asset } = await desk.library.adoptRepo(clone, 'adopted');
		assert.equal(asset.branch, 'trunk');
		assert.equal(asset.remote, upstream);
	});

	it('takes main, else master, else the checked-out branch', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const both = makeRepo(path.join(root, 'both'), { branch: 'master' });
		git(both, 'branch', 'main');
		git(both, 'checkout', '-q', '-b', 'dev');
		assert.equal((await desk.library.adoptRepo(both, 'adopted')).asset.branch, 'main');
		const master = makeRepo(path.join(root, 'master'), { branch: 'master' });
		git(master, 'checkout', '-q', '-b', 'dev');
		assert.equal((await desk.library.adoptRepo(master, 'adopted')).asset.branch, 'master');
		const dev = makeRepo(path.join(root, 'dev'), { branch: 'dev' });
		assert.equal((await desk.library.adoptRepo(dev, 'adopted')).asset.branch, 'dev');
	});

	it('returns the record already there for the same checkout and remote, a new one for another remote', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'));
		git(repo, 'remote', 'add', 'origin', 'https://example.com/r.git');
		const desk = await openDesk(path.join(root, 'library'));
		const first = await desk.library.adoptRepo(repo, 'adopted');
		const second = await desk.library.adoptRepo(repo, 'adopted');
		assert.equal(first.created, true);
		assert.equal(second.created, false);
		assert.equal(second.asset.id, first.asset.id);
		git(repo, 'remote', 'set-url', 'origin', 'https://example.com/moved.git');
		const third = await desk.library.adoptRepo(repo, 'adopted');
		assert.equal(third.created, true);
		assert.notEqual(third.asset.id, first.asset.id);
	});
});

describe('asset_import with dir', () => {
	it('creates the project when it does not exist and makes the asset main with --main', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'tool'));
		const desk = await openDesk(path.join(root, 'library'));
		const result = await desk.library.importDir({ dir: repo, project: 'tools', main: true });
		assert.equal(result.asset.created_by, 'adopted');
		assert.deepEqual(
			{ name: result.project?.name, main: result.project?.main_asset, path: result.project?.path },
			{ name: 'tools', main: result.asset.id, path: repo },
		);
		const plain = await desk.library.importDir({
			dir: makeRepo(path.join(root, 'other')),
			project: 'tools',
			main: false,
		});
		assert.equal(plain.project?.main_asset, result.asset.id, 'without --main the main asset stays');
	});

	it('--main with a repository gives a project made without one that repository, never a second project', async () => {
		const root = tempDir();
		const notes = path.join(root, 'notes');
		fs.mkdirSync(notes);
		fs.writeFileSync(path.join(notes, 'a.md'), 'notes\n');
		const repo = makeRepo(path.join(root, 'shop'));
		const desk = await openDesk(path.join(root, 'library'));
		const folder = await desk.library.importDir({ dir: notes, project: 'shop', main: false });
		assert.equal(folder.project?.path, '', 'a folder gives the project no repository');

		const result = await desk.library.importDir({ dir: repo, project: 'shop', main: true });
		assert.deepEqual(
			{ main: result.project?.main_asset, path: result.project?.path },
			{ main: result.asset.id, path: repo },
		);
		assert.equal(desk.projectAt(repo).name, 'shop', 'the card and runs find the project by its repository');

		await desk.library.importDir({ dir: notes, project: 'second', main: false });
		await assert.rejects(desk.library.importDir({ dir: repo, project: 'second', main: true }), (e) =>
			isDeskError(e, 'project.repositoryTaken'),
		);
		const projects = desk.library.listProjects().map((p) => ({ name: p.name, path: p.path, main: p.main_asset }));
		assert.deepEqual(projects, [
			{ name: 'second', path: '', main: '' },
			{ name: 'shop', path: repo, main: result.asset.id },
		]);
	});

	it('--main with a repository already in the library (--asset ID) gives a project made without one that repository', async () => {
		const root = tempDir();
		const notes = path.join(root, 'notes');
		fs.mkdirSync(notes);
		fs.writeFileSync(path.join(notes, 'a.md'), 'notes\n');
		const repo = makeRepo(path.join(root, 'shop'));
		const desk = await openDesk(path.join(root, 'library'));
		await desk.library.importDir({ dir: notes, project: 'shop', main: false });
		const adopted = await desk.library.importDir({ dir: repo, main: false });

		const result = desk.library.importAsset({ id: adopted.asset.id, project: 'shop', main: true });
		assert.deepEqual(
			{ main: result.project?.main_asset, path: result.project?.path },
			{ main: adopted.asset.id, path: repo },
		);
		assert.equal(desk.projectAt(repo).name, 'shop');
		const folder = desk.library.listProjectAssets('shop').find((a) => a.engine === 'snapshot')!;
		desk.library.importAsset({ id: folder.id, project: 'shop', main: true });
		assert.equal(desk.projectAt(repo).name, 'shop', 'a folder made main takes no repository away');
	});

	it('--main never gives a new project a repository another project has', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'));
		const desk = await openDesk(path.join(root, 'library'));
		const shop = await desk.library.importDir({ dir: repo, project: 'shop', main: true });
		await assert.rejects(desk.library.importDir({ dir: repo, project: 'third', main: true }), (e) =>
			isDeskError(e, 'project.repositoryTaken'),
		);
		assert.throws(
			() => desk.library.importAsset({ id: shop.asset.id, project: 'fourth', main: true }),
			(e) => isDeskError(e, 'project.repositoryTaken'),
		);
		assert.deepEqual(
			desk.library.listProjects().map((p) => ({ name: p.name, path: p.path })),
			[{ name: 'shop', path: repo }],
			'one project has the repository, and no other was made',
		);
	});

	it('refuses a missing path and a file, clearly, creating no project', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'));
		const desk = await openDesk(path.join(root, 'library'));
		await assert.rejects(desk.library.importDir({ dir: path.join(root, 'nope'), project: 'p', main: false }), (e) =>
			isDeskError(e, 'import.notADirectory'),
		);
		await assert.rejects(
			desk.library.importDir({ dir: path.join(repo, 'file1.txt'), project: 'p', main: false }),
			(e) => isDeskError(e, 'import.notADirectory'),
		);
		assert.deepEqual(desk.library.listProjects(), []);
	});

	it('adopts a folder that is not a repository top as a snapshot asset whose v1 is what it holds', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'));
		fs.mkdirSync(path.join(repo, 'docs'));
		fs.writeFileSync(path.join(repo, 'docs', 'guide.md'), '# Guide\n');
		fs.mkdirSync(path.join(root, 'plain'));
		fs.writeFileSync(path.join(root, 'plain', 'a.txt'), 'a');
		const desk = await openDesk(path.join(root, 'library'));
		const docs = await desk.library.importDir({ dir: path.join(repo, 'docs'), project: 'p', main: false });
		assert.equal(docs.asset.engine, 'snapshot');
		assert.equal(docs.asset.picked_version, 1);
		const plain = await desk.library.importDir({ dir: path.join(root, 'plain'), main: false });
		assert.equal(plain.project, undefined);
		const versions = await desk.library.assetVersions(plain.asset.id);
		assert.deepEqual(
			versions.map((v) => [v.version, v.engine === 'snapshot' && v.file_count, v.engine === 'snapshot' && v.note]),
			[[1, 1, 'adopted']],
		);
		const again = await desk.library.importDir({ dir: path.join(root, 'plain'), main: false });
		assert.equal(again.created, false);
		assert.equal(again.asset.id, plain.asset.id);
	});
});

describe('git versions', () => {
	it('numbers the first-parent commits of the branch, oldest first, with %cI times', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 2, startTime: 1_700_000_000 });
		git(repo, 'checkout', '-q', '-b', 'side');
		commitFile(repo, 'side1.txt', 'a', 'side 1', 1_700_001_000);
		commitFile(repo, 'side2.txt', 'b', 'side 2', 1_700_002_000);
		git(repo, 'checkout', '-q', 'main');
		git(repo, 'merge', '-q', '--no-ff', '-m', 'merge side', 'side');
		const desk = await openDesk(path.join(root, 'library'));
		const { asset } = await desk.library.adoptRepo(repo, 'adopted');
		const versions = await desk.library.versions(asset.id);
		assert.deepEqual(
			versions.map((v) => [v.version, v.subject]),
			[
				[1, 'commit 1'],
				[2, 'commit 2'],
				[3, 'merge side'],
			],
		);
		assert.equal(versions[0]?.made_at, git(repo, 'log', '-1', '--format=%cI', versions[0]!.commit));
		assert.equal(versions[0]?.made_at, '2023-11-14T23:14:20+01:00');
		assert.deepEqual(
			versions.map((v) => v.commit),
			git(repo, 'log', '--first-parent', '--reverse', '--format=%H', 'main').split('\n'),
		);
	});

	it('records head observations per commit: head_at, made_by outside at boot, never_head in between', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'r'), { commits: 1 });
		const libraryDir = path.join(root, 'library');
		let desk = await Desk.open({ libraryDir, logger: recordingLogger() });
		await desk.openWorkspace([{ name: 'r', path: repo }]);
		desk.close();
		commitFile(repo, 'b.txt', 'b', 'second');
		commitFile(repo, 'c.txt', 'c', 'third');
		desk = await Desk.open({ libraryDir, logger: recordingLogger() });
		const [boot] = await desk.openWorkspace([{ name: 'r', path: repo }]);
		assert.ok(boot?.outcome === 'adopted');
		const versions = await desk.library.versions(boot.asset.id);
		desk.close();
		assert.equal(versions.length, 3);
		assert.ok(versions[0]?.head_at && versions[2]?.head_at);
		assert.deepEqual(
			versions.map((v) => [v.made_by, v.never_head ?? false]),
			[
				['outside', false],
				['outside', true],
				['outside', false],
			],
		);
	});

	it('refuses a malformed or unknown asset id with a typed error', async () => {
		const desk = await openDesk();
		await assert.rejects(desk.library.versions('a-123'), (e) => isDeskError(e, 'asset.badId'));
		await assert.rejects(desk.library.versions('a-0123456789abcdef'), (e) => isDeskError(e, 'asset.notFound'));
	});
});
