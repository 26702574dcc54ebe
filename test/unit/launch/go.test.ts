import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Run } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { Desk } from '../../../server/src/desk';
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
	desk.library.setRetired(folder.id, true);
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
