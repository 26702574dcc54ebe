import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Run } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { Desk } from '../../../server/src/desk';
import { newPlug } from '../../../server/src/launch/plugging';
import { encodeLaunchCard } from '../../../server/src/launch/storedFormats';
import { AiStore } from '../../../server/src/store/aiStore';
import type { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { SqlLaunchStore } from '../../../server/src/store/sqlLaunchStore';
import { runsOverview } from '../../../server/src/runs/runViews';
import { recordingLogger } from '../../helpers/deskFixture';
import { git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

it('keeps a draft card across a restart, plugs by the rules, and Go freezes every plug, records the launch and makes the run', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 3 });
	const libraryDir = path.join(root, 'library');
	let desk = await Desk.open({ libraryDir, logger: recordingLogger() });
	const [boot] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
	assert.ok(boot?.outcome === 'adopted');
	const specs = path.join(root, 'pagination-specs');
	fs.mkdirSync(specs);
	fs.writeFileSync(path.join(specs, 'cursors.md'), 'Opaque cursor pagination for listing endpoints.\n');
	const folder = (await desk.library.importDir({ dir: specs, project: 'shop', main: false })).asset;
	let launches = await desk.launches(repo);
	launches.setTicket('Add cursor pagination to the listing endpoints');
	desk.close();

	desk = await Desk.open({ libraryDir, logger: recordingLogger() });
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	launches = await desk.launches(repo);
	assert.equal(launches.card().ticket, 'Add cursor pagination to the listing endpoints', 'the draft survived');
	const suggestions = await launches.suggest();
	assert.deepEqual(
		suggestions.map((s) => [s.name, s.role]),
		[['pagination-specs', 'reference']],
	);
	await launches.plug(folder.id, 'reference');
	await launches.plug(boot.asset.id, 'target');
	await assert.rejects(launches.plug(folder.id, 'reference'), (e) => isDeskError(e, 'launch.alreadyPlugged'));
	assert.deepEqual(await launches.suggest(), [], 'a plugged asset is not suggested again');

	// Working changes at Go are snapshotted first, so the frozen version exists.
	fs.writeFileSync(path.join(specs, 'limits.md'), 'Page size at most 100.\n');
	const record = await launches.go();
	assert.deepEqual(
		record.plugs.map((p) => [p.name, p.role, p.version]),
		[
			['pagination-specs', 'reference', 2],
			['shop', 'target', 3],
		],
	);
	assert.equal((await desk.library.assetVersions(folder.id)).at(-1)?.version, 2);
	assert.equal(launches.card().plugs.length, 0, 'the card starts afresh');
	assert.equal(launches.records().length, 1);

	// "used in" names the launch with role and frozen version, also after the asset is retired.
	desk.library.setRetired(folder.id, true, 'Jane Doe');
	assert.deepEqual(
		desk.library.usedIn(folder.id).map((u) => [u.launch_id, u.role, u.version, u.project]),
		[[record.launch_id, 'reference', 2, 'shop']],
	);

	const overview = runsOverview(await desk.projectAi(repo));
	assert.equal(overview.intents[0]?.intent.prompt, 'Add cursor pagination to the listing endpoints');
	const run = overview.intents[0]?.tasks[0]?.runs[0];
	assert.deepEqual([run?.id, run?.status], [record.run, 'created']);
	assert.equal(
		(await desk.projectAi(repo)).require<Run>(record.run, 'run').commit,
		git(repo, 'rev-parse', 'HEAD'),
		"the run starts from the checkout's head",
	);
	await assert.rejects(launches.go(), (e) => isDeskError(e, 'launch.emptyTicket'));
	desk.close();
});

it('Go refuses a card whose git target is not the checkout the run writes (plugged by an earlier desk), before anything is snapshotted or written', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const billing = makeRepo(path.join(root, 'billing'), { commits: 1 });
	const desk = await Desk.open({ libraryDir: path.join(root, 'library'), logger: recordingLogger() });
	try {
		const [boot] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
		assert.ok(boot?.outcome === 'adopted');
		// Made the project's main asset: the rule of plugging an earlier desk kept let it through as a target.
		const other = (await desk.library.importDir({ dir: billing, project: 'shop', main: true })).asset;
		const specs = path.join(root, 'specs');
		fs.mkdirSync(specs);
		fs.writeFileSync(path.join(specs, 'totals.md'), 'Totals.\n');
		const folder = (await desk.library.importDir({ dir: specs, project: 'shop', main: false })).asset;
		fs.writeFileSync(path.join(specs, 'more.md'), 'Working changes Go would snapshot.\n');
		const launches = await desk.launches(repo);
		launches.setTicket('Fix the totals');
		await launches.plug(folder.id, 'reference');
		const db = (desk as unknown as { projectDatabases: Map<string, DurableDatabase> }).projectDatabases.get(repo)!;
		const store = new SqlLaunchStore(db, new AiStore(db));
		const card = { ...launches.card(), plugs: [...launches.card().plugs, newPlug(other.id, 'target')] };
		store.write((writes) => writes.saveCard(encodeLaunchCard(card), new Date().toISOString()));

		await assert.rejects(
			launches.go(),
			(e) =>
				isDeskError(e, 'launch.foreignRepo') &&
				e.message.includes(repo) &&
				e.message.includes(billing) &&
				(e.data as { checkout_git_dir?: string }).checkout_git_dir === path.join(repo, '.git') &&
				(e.data as { target_git_dir?: string }).target_git_dir === path.join(billing, '.git'),
		);
		assert.equal(launches.records().length, 0, 'no launch');
		assert.deepEqual(launches.card(), card, 'the card as it was');
		assert.equal((await desk.library.assetVersions(folder.id)).length, 1, 'the reference was not snapshotted');
		assert.deepEqual(runsOverview(await desk.projectAi(repo)).intents, [], 'no Intent, Task or Run');
	} finally {
		desk.close();
	}
});
