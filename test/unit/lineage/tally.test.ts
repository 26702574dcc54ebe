/**
 * An empty root becomes a tally when its first branch starts, once (glossary: Tally): two real
 * processes fork the same empty roots at the same moment over one project database, and every root
 * ends with one tally that both processes' branches hang under. A tally runs no model turns.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { actor, newRun } from '../../../server/src/ai/model';
import type { Task } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import type { BranchResult } from '../../../server/src/lineage/types';
import { openDesk, recordingLogger } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { tempDir } from '../../helpers/temp';
import { openLineage, personFork } from './lineageFixture';

function forker(folder: string, tag: string, roots: string[]) {
	const child = spawn(process.execPath, [path.join(__dirname, 'forkProcess.js'), folder, tag, ...roots], {
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	let out = '';
	const opened = new Promise<void>((resolve) =>
		child.stdout.on('data', (chunk: Buffer) => {
			out += chunk.toString('utf8');
			if (out.startsWith('open\n')) {
				resolve();
			}
		}),
	);
	const results = new Promise<BranchResult[]>((resolve, reject) =>
		child.on('exit', (code) =>
			code === 0
				? resolve(
						out
							.split('\n')
							.slice(1)
							.filter((l) => l.trim())
							.map((l) => JSON.parse(l) as BranchResult),
					)
				: reject(new Error(`forker ${tag} exited with ${code}`)),
		),
	);
	return { opened, results };
}

describe('the tally of a root', () => {
	it('is made once when two processes fork the same empty roots at the same moment', async () => {
		const folder = tempDir();
		const roots = Array.from({ length: 12 }, (_, i) => `race-${i}`);
		const setup = await openLineage(folder);
		for (const root of roots) {
			setup.lineage.addRoot(root, '', 'test', new Date().toISOString());
		}
		setup.db.close();
		const a = forker(folder, 'a', roots);
		const b = forker(folder, 'b', [...roots].reverse());
		await Promise.all([a.opened, b.opened]);
		fs.writeFileSync(path.join(folder, 'go'), '');
		const [fromA, fromB] = await Promise.all([a.results, b.results]);
		assert.equal(fromA.length, roots.length);
		assert.equal(fromB.length, roots.length);
		const { db, lineage } = await openLineage(folder);
		for (const root of roots) {
			const tallies = db.all<{ node_id: string }>(
				"SELECT node_id FROM lineage_nodes WHERE kind = 'tally' AND root = ?",
				[root],
			);
			assert.equal(tallies.length, 1, `${root}: one tally`);
			const tally = tallies[0]!.node_id;
			assert.equal(fromA.find((r) => r.root === root)!.tally, tally);
			assert.equal(fromB.find((r) => r.root === root)!.tally, tally);
			assert.equal(
				db.get<{ n: number }>("SELECT COUNT(*) AS n FROM lineage_nodes WHERE kind = 'branch' AND fork_of = ?", [tally])!
					.n,
				2,
			);
		}
		assert.equal(lineage.roots().filter((r) => r.name.startsWith('race-') && r.branches === 2).length, roots.length);
		db.close();
	});

	it('runs no model turns: a run of its Task is refused to start and to claim the checkout (lineage.tallyNoRuns)', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const desk = await openDesk(path.join(root, 'library'), recordingLogger());
		try {
			await desk.openWorkspace([{ name: 'shop', path: repo }]);
			const lineage = await desk.lineage(repo);
			const { tally } = lineage.fork(personFork('req-tally-001', { head: await desk.headCommit(repo) }));
			const ai = await desk.projectAi(repo);
			// A run of the tally's Task, as no desk operation makes one.
			const forged = newRun(actor('system', 'test'), ai.require<Task>(tally, 'task'), await desk.headCommit(repo));
			ai.put([forged]);
			const queued = lineage.queued()[0]!;
			const record = { ...queued.record, task: tally, run: forged.object_id };
			const settings = scriptedAgentSettings({ writes: [] });
			const { executor } = await desk.runs(repo);
			await assert.rejects(executor.execute(record, forged.object_id, settings), (e: unknown) =>
				isDeskError(e, 'lineage.tallyNoRuns'),
			);
			const db = await desk.projectRequests(repo);
			assert.throws(
				() =>
					(db as unknown as { write(body: (tx: never) => void): void }).write((tx) =>
						executor.claimIn(tx, settings, record, forged.object_id),
					),
				(e: unknown) => isDeskError(e, 'lineage.tallyNoRuns'),
			);
			assert.equal(ai.require<Task>(tally, 'task').status, 'running', 'the tally is untouched');
		} finally {
			desk.close();
		}
	});
});
