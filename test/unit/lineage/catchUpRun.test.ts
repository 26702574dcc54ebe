import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { ContextSnapshot, Run } from '../../../server/src/ai/types';
import { GitRepository } from '../../../server/src/git/repository';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { openDesk } from '../../helpers/deskFixture';
import { commitFile, git, makeRepo, makeRepoWithOrigin } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { openTestDatabase } from '../../helpers/testDatabase';
import { tempDir } from '../../helpers/temp';

const decider = { kind: 'human' as const, id: 'Tess Tester <tess@example.com>' };

/** Rows of the lineage written straight into the project database, as the fork and the board write them. */
async function lineageRows(repo: string) {
	const db = await openTestDatabase(path.join(repo, '.desk', 'project.db'), [...projectMigrations], {
		schema: projectSchema,
		lockTimeoutMs: 2_000,
	});
	let seq = 0;
	const at = () => new Date(Date.UTC(2026, 11, 2, 12, 0, ++seq)).toISOString();
	const post = (node: string, kind: string, from: string, text: string, data?: object, frozen = 0) =>
		db.write((tx) =>
			tx.run(
				`INSERT INTO board_messages (message_id, request_id, node, kind, from_node, reply_enabled, passive, frozen, text, data, created_at)
				 VALUES (?, ?, ?, ?, ?, 0, 1, ?, ?, ?, ?)`,
				[
					`m${seq}`,
					`test:${kind}:${from}:${seq}`,
					node,
					kind,
					from,
					frozen,
					text,
					data ? JSON.stringify(data) : null,
					at(),
				],
			),
		);
	const tally = 'tally-of-main';
	db.write((tx) => {
		tx.run(
			"INSERT INTO lineage_roots (name, about, listed_at, listed_by, tally_task) VALUES ('main', '', ?, 'test', ?) ON CONFLICT (name) DO UPDATE SET tally_task = excluded.tally_task",
			[at(), tally],
		);
		tx.run(
			"INSERT INTO lineage_nodes (node_id, kind, root, grant_chain, depth, config, created_at) VALUES (?, 'tally', 'main', '[]', 0, '{}', ?)",
			[tally, at()],
		);
	});
	return {
		db,
		tally,
		branch(task: string, intent: string) {
			db.write((tx) =>
				tx.run(
					`INSERT INTO lineage_nodes (node_id, kind, root, fork_of, grant_chain, depth, config, created_at)
					 VALUES (?, 'branch', 'main', ?, '[]', 1, '{}', ?)`,
					[task, tally, at()],
				),
			);
			post(tally, 'intent', task, intent, { branch: task });
		},
		abstract(task: string, text: string) {
			post(tally, 'abstract', task, text);
		},
		land(task: string, commit: string, subject: string) {
			const liquid = db.get<{ text: string }>(
				"SELECT text FROM board_messages WHERE node = ? AND kind = 'abstract' AND from_node = ? AND frozen = 0",
				[tally, task],
			);
			db.write((tx) =>
				tx.run("UPDATE board_messages SET frozen = 1 WHERE node = ? AND kind = 'abstract' AND from_node = ?", [
					tally,
					task,
				]),
			);
			post(tally, 'landed', task, `landed as ${commit.slice(0, 12)}: ${subject}`, {
				commit,
				subject,
				touched: ['parser.ts'],
				abstract: liquid?.text ?? '',
			});
		},
	};
}

/**
 * A desk on `repo` with two launched runs whose tasks are branches of `main` (rows written as the fork
 * writes them): the sibling's, working on the lexer, and mine.
 */
async function twoBranches(root: string, repo: string) {
	const desk = await openDesk(path.join(root, 'library'));
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	const launches = await desk.launches(repo);
	launches.setTicket('Split the parser');
	const sibling = await launches.go();
	launches.setTicket('Add parser tests');
	const mine = await launches.go();
	const ai = await desk.projectAi(repo);
	const rows = await lineageRows(repo);
	const siblingTask = ai.require<Run>(sibling.run, 'run').task;
	const myTask = ai.require<Run>(mine.run, 'run').task;
	rows.branch(siblingTask, 'Split the parser into lexer and grammar');
	rows.branch(myTask, 'Add parser tests');
	rows.abstract(siblingTask, 'moving lexer.ts into its own module');
	return { desk, launches, sibling, mine, ai, rows, siblingTask, myTask };
}

it("a branch's every input gets the tally section, pinned in its run's ContextSnapshot; a sibling's landing moves it from live to Landed", async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const { desk, launches, sibling, mine, ai, rows, siblingTask, myTask } = await twoBranches(root, repo);
	rows.abstract(myTask, 'MY OWN ABSTRACT');

	const prompts = path.join(root, 'prompts');
	fs.mkdirSync(prompts);
	const { executor, gate } = await desk.runs(repo);
	// No change: the run fails after both nodes, leaving the shared checkout to the next one.
	const settings = scriptedAgentSettings({ echoPromptTo: prompts, writes: [] }, { sandbox: 'off' });
	const first = await executor.execute(mine, mine.run, settings);
	assert.equal(first.status, 'failed');
	const told = (node: string) => fs.readFileSync(path.join(prompts, `${node}.prompt.txt`), 'utf8');
	for (const node of ['plan', 'work']) {
		const prompt = told(node);
		assert.ok(prompt.includes('## Other branches of `main`'), `${node}: ${prompt}`);
		assert.ok(prompt.includes('### Working now\n- Split the parser: moving lexer.ts into its own module'), prompt);
		assert.ok(!prompt.includes('MY OWN ABSTRACT'), 'never the caller itself');
		assert.ok(!prompt.includes('### Landed'));
		assert.ok(prompt.indexOf('## Other branches') < prompt.indexOf('## Where you work'));
	}
	const snapshotOf = (run: string) =>
		ai.require<ContextSnapshot>(ai.require<Run>(run, 'run').snapshot!, 'context_snapshot');
	const pinned = snapshotOf(mine.run).items.filter((i) => i.path.startsWith('catch-up'));
	assert.deepEqual(
		pinned.map((i) => [i.kind, i.path]),
		[
			['snippet', 'catch-up before plan: Other branches of `main`'],
			['snippet', 'catch-up before work: Other branches of `main`'],
		],
	);
	assert.match(pinned[1]!.preview!, /^## Other branches of `main`\n/);
	assert.ok(
		told('work').includes(`\n\n${pinned[1]!.preview!}\n\n## Where you work`),
		'the snapshot holds exactly what the prompt had',
	);
	assert.equal(
		git(repo, 'cat-file', 'blob', `refs/desk/blobs/${pinned[1]!.blob!}`),
		pinned[1]!.preview!.trimEnd(),
		'the text is a git blob anchored as the other items are',
	);
	const baseline = git(repo, 'rev-parse', 'HEAD');
	assert.deepEqual(rows.db.all('SELECT node, ref, baseline FROM lineage_catchup'), [
		{ node: myTask, ref: 'refs/heads/main', baseline },
	]);

	// The sibling lands (its commit carries its run's trailer), and someone commits by hand.
	const landed = commitFile(repo, 'parser.ts', 'export {};\n', `Split the parser\n\nDesk-Run: ${sibling.run}`);
	rows.land(siblingTask, landed, 'Split the parser');
	const outside = commitFile(repo, 'NOTES.md', 'notes\n', 'Notes by hand');
	git(repo, 'pack-refs', '--all');

	const retry = await gate.decide(mine.run, { by: decider, decision: 'retry', rationale: 'again' });
	const next = await executor.execute(
		gate.launchRecord(ai.require<Run>(retry.new_run!, 'run'))!,
		retry.new_run!,
		settings,
	);
	assert.equal(next.status, 'failed');
	const after = told('plan');
	assert.ok(!after.includes('### Working now'), `a landed branch is never live: ${after}`);
	assert.ok(
		after.includes(
			`### Landed, newest first\n- Split the parser — ${landed.slice(0, 10)} "Split the parser": moving lexer.ts into its own module`,
		),
		after,
	);
	assert.ok(after.includes(`- ${outside.slice(0, 10)} Notes by hand (outside the lineage)`));
	assert.ok(after.includes(`- ${landed.slice(0, 10)} Split the parser (branch "Split the parser")`));
	assert.ok(after.indexOf(outside.slice(0, 10)) < after.indexOf(`- ${landed.slice(0, 10)} Split`), 'newest first');
	assert.deepEqual(
		snapshotOf(retry.new_run!)
			.items.filter((i) => i.path.startsWith('catch-up'))
			.map((i) => i.path),
		['catch-up before plan: Other branches of `main`', 'catch-up before work: Other branches of `main`'],
	);
	assert.equal(snapshotOf(retry.new_run!).items.at(-2)!.preview!.includes('### Landed'), true);
	assert.deepEqual(rows.db.all('SELECT baseline FROM lineage_catchup'), [{ baseline: outside }]);
	// The first run's snapshot still says what it was told then.
	assert.ok(snapshotOf(mine.run).items.at(-1)!.preview!.includes('### Working now'));

	// The look an editor gets is the next input's; the tip unchanged since, so no walk.
	const look = await desk.catchUp(repo, retry.new_run!);
	assert.equal(look.section.walked, false);
	assert.equal(look.section.tip, outside);
	assert.equal(look.section.memory, '');
	// A run whose task is no branch gets nothing, and its prompt is as it was.
	launches.setTicket('Not a branch');
	const plain = await launches.go();
	const plainRun = await executor.execute(plain, plain.run, settings);
	assert.equal(plainRun.status, 'failed');
	assert.ok(!told('plan').includes('Other branches'));
	assert.equal(snapshotOf(plain.run).items.filter((i) => i.path.startsWith('catch-up')).length, 0);
});

it("a branch's catch-up items travel with the history: exported in one clone, gc'd, pushed, fetched and imported in another, they read the same there", async () => {
	const root = tempDir();
	const origin = path.join(root, 'origin.git');
	const repo = makeRepoWithOrigin(path.join(root, 'shop'), origin, { commits: 1 });
	const { desk, mine, ai } = await twoBranches(root, repo);
	const { executor } = await desk.runs(repo);
	const run = await executor.execute(mine, mine.run, scriptedAgentSettings({ writes: [] }, { sandbox: 'off' }));
	assert.equal(run.status, 'failed');
	const items = ai
		.require<ContextSnapshot>(ai.require<Run>(mine.run, 'run').snapshot!, 'context_snapshot')
		.items.filter((i) => i.path.startsWith('catch-up'));
	assert.equal(items.length, 2, JSON.stringify(items));
	for (const item of items) {
		assert.match(item.blob ?? '', /^[0-9a-f]{40}$/, 'named by its git blob id');
		assert.equal(git(repo, 'rev-parse', `refs/desk/blobs/${item.blob!}`), item.blob, 'anchored as the run pinned it');
	}
	// An anchor lost since (a ref deleted) is put back by the export.
	git(repo, 'update-ref', '-d', `refs/desk/blobs/${items[0]!.blob!}`);
	const exported = await desk.exportHistory(repo);
	assert.ok(exported.anchored >= 1, `anchored: ${exported.anchored}`);
	assert.equal(git(repo, 'rev-parse', `refs/desk/blobs/${items[0]!.blob!}`), items[0]!.blob);
	git(repo, 'gc', '-q', '--prune=now');
	git(repo, 'push', '-q', 'origin', 'refs/desk/*:refs/desk/*');

	git(root, 'clone', '-q', '--no-local', origin, path.join(root, 'other'));
	const other = fs.realpathSync(path.join(root, 'other'));
	git(other, 'fetch', '-q', 'origin', 'refs/desk/*:refs/desk/*');
	const desk2 = await openDesk(path.join(root, 'library2'));
	const imported = await desk2.importHistory(other);
	assert.deepEqual(imported.refused, []);
	const ai2 = await desk2.projectAi(other);
	const items2 = ai2
		.require<ContextSnapshot>(ai2.require<Run>(mine.run, 'run').snapshot!, 'context_snapshot')
		.items.filter((i) => i.path.startsWith('catch-up'));
	assert.deepEqual(items2, items);
	for (const item of items2) {
		assert.equal(
			Buffer.from(GitRepository.open(other).blob(item.blob!)).toString('utf8'),
			item.preview,
			"what the input was told, readable by the desk's reader there",
		);
	}
});
