import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { LibraryStore } from '../../../server/src/assets/ports';
import { isDeskError } from '../../../server/src/core/errors';
import { openDesk } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

it('two windows opening one repository at once make one project for it, not "shop" and "shop-2"', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const libraryDir = path.join(root, 'library');
	const first = await openDesk(libraryDir);
	const second = await openDesk(libraryDir);
	// The second window reads "no project for this repository" just before the first window's boot makes it.
	const store = (second.library as unknown as { context: { store: LibraryStore } }).context.store;
	const lookup = store.getProjectByPath.bind(store);
	let raced = false;
	store.getProjectByPath = (top: string) => {
		const found = lookup(top);
		if (!raced) {
			raced = true;
			(first.library as unknown as { context: { store: LibraryStore } }).context.store.batch((writes) =>
				writes.insertProject({ name: 'shop', path: top, main_asset: '', created_at: new Date().toISOString() }),
			);
		}
		return found;
	};
	const [opened] = await second.openWorkspace([{ name: 'shop', path: repo }]);
	assert.ok(opened?.outcome === 'adopted', JSON.stringify(opened));
	assert.equal(opened.project.name, 'shop');
	assert.deepEqual(
		first.library
			.listProjects()
			.filter((p) => p.path !== '')
			.map((p) => p.name),
		['shop'],
		'one project for the repository',
	);
});

it('one folder imported twice at once (two windows, the CLI) is one asset', async () => {
	const root = tempDir();
	const folder = path.join(root, 'specs');
	fs.mkdirSync(folder);
	for (let i = 0; i < 200; i++) {
		fs.writeFileSync(path.join(folder, `spec-${i}.md`), `Spec ${i}.\n`);
	}
	const desk = await openDesk(path.join(root, 'library'));
	const [a, b] = await Promise.all([
		desk.library.importDir({ dir: folder, main: false }),
		desk.library.importDir({ dir: folder, main: false }),
	]);
	assert.equal(a.asset.id, b.asset.id, 'the same asset');
	assert.deepEqual([a.created, b.created].sort(), [false, true]);
	assert.equal(desk.library.allAssets().filter((x) => x.working_dir === folder).length, 1);
});

it("a new asset in a folder that is another new asset's (still empty) is refused by name, not made a second asset of one folder", async () => {
	const root = tempDir();
	const desk = await openDesk(path.join(root, 'library'));
	const dir = path.join(root, 'drafts');
	const first = await desk.library.newAsset({ name: 'drafts', dir, madeBy: 'user' });
	await assert.rejects(
		desk.library.newAsset({ name: 'drafts again', dir, madeBy: 'user' }),
		(e) => isDeskError(e, 'asset.folderNotEmpty') && (e.data as { asset: string }).asset === first.asset.id,
	);
	assert.equal(desk.library.allAssets().filter((a) => a.working_dir === first.asset.working_dir).length, 1);
});
