import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, it } from 'node:test';
import { exportHistory, historyRef } from '../../server/src/git/historyRef';
import { GitRepository } from '../../server/src/git/repository';
import { ImportHistory, OpenWorkspace, RunsDidChange } from '../../server/src/protocol/protocol';
import { openDesk } from '../helpers/deskFixture';
import { git, makeRepo } from '../helpers/gitRepo';
import { startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';
import { craftedHistories, historyFixture, withChanges } from '../unit/ai/craftedHistory';

let server: RunningServer;
let repo: string;
let library: string;

before(async () => {
	const root = tempDir();
	repo = makeRepo(path.join(root, 'shop'));
	library = path.join(root, 'library');
	server = await startServer(library);
	await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
});
after(() => server.stop());

it('refuses every crafted rewrite of refs/desk/history object by object, with its reason, and the database stays as it was', async () => {
	const f = historyFixture(git(repo, 'rev-parse', 'HEAD'), git(repo, 'rev-parse', 'HEAD:file1.txt'));
	const repository = GitRepository.open(repo);
	await exportHistory(repository, f.all);
	const first = await server.call(ImportHistory, { project: 'shop' });
	assert.deepEqual([first.added, first.refused], [f.all.length, []]);

	const ai = await (await openDesk(library)).projectAi(repo);
	const stored = () => [...ai.hashes().entries()].sort();
	const before = stored();
	const changes = server.notifications.filter((n) => n.method === RunsDidChange.method).length;
	for (const crafted of craftedHistories(f)) {
		// What anyone with push access can do: write objects, reseal them, commit them onto the ref.
		await exportHistory(repository, withChanges(f.all, crafted.objects), historyRef, new Date());
		const result = await server.call(ImportHistory, { project: 'shop' });
		assert.equal(result.added, 0, crafted.name);
		assert.deepEqual(
			[...new Set(result.refused.map((r) => r.object_id))].sort(),
			[...crafted.refused].sort(),
			`${crafted.name}: ${JSON.stringify(result.refused)}`,
		);
		for (const refusal of result.refused) {
			assert.equal(refusal.code, crafted.code, `${crafted.name}: ${refusal.reason}`);
			assert.ok(refusal.reason.length > 0);
		}
		assert.deepEqual(stored(), before, `${crafted.name}: the database is unchanged`);
	}
	assert.equal(
		server.notifications.filter((n) => n.method === RunsDidChange.method).length,
		changes,
		'nothing changed, so the views were not told',
	);
	await exportHistory(repository, f.all, historyRef, new Date());
	const honest = await server.call(ImportHistory, { project: 'shop' });
	assert.deepEqual([honest.added, honest.unchanged, honest.refused], [0, f.all.length, []]);
});
