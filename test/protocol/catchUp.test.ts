import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
	DecideRun,
	LaunchGo,
	LineageCatchUp,
	OpenWorkspace,
	PromptLineage,
	RememberMemory,
	RunDidFinish,
	SetTicket,
	ShowRun,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { defaultLineageSettings } from '../../server/src/runs/settings';
import { scriptedAgentSettings, type Scenario } from '../helpers/scriptedAgent';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

/** The scripted agent, a branch's runs with two nodes: two inputs each. */
const planAndWork = (scenario: Scenario) =>
	scriptedAgentSettings(scenario, {
		sandbox: 'off',
		lineage: { ...defaultLineageSettings, branch: { template: ['plan', 'work'] } },
	});

/** The catch-up items a run's ContextSnapshot pinned: what each of its inputs was told. */
function pinned(detail: {
	snapshot?: { items: Array<{ kind: string; path: string; preview?: string; blob?: string }> };
}) {
	return (detail.snapshot?.items ?? []).filter((i) => i.path.startsWith('catch-up'));
}

describe('catch-up over JSON-RPC (the real server, branches carried out by the scripted agent)', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	it("a branch's inputs are told of its siblings: live before one lands, under Landed after, commits since it started attributed by trailer, all pinned in its ContextSnapshot", async () => {
		const promptsOf = (name: string) => {
			const folder = path.join(root, `prompts-${name}`);
			fs.mkdirSync(folder);
			return folder;
		};
		const branch = async (prompt: string, scenario: Scenario) =>
			server.call(PromptLineage, {
				project: 'shop',
				root: 'main',
				prompt,
				settings: planAndWork(scenario),
			});
		const atGate = (run: string) =>
			server.notified(RunDidFinish, (f) => f.run === run && f.status === 'gate', `run ${run} at the gate`, 60_000);
		const failed = (run: string) =>
			server.notified(RunDidFinish, (f) => f.run === run && f.status === 'failed', `run ${run} failed`, 60_000);

		const split = await branch('Split the parser', { writes: [{ path: 'parser.ts', content: 'export {};\n' }] });
		await atGate(split.run);
		// Mine makes no change, so each of its runs ends (failed): a run at the gate or failed holds no checkout.
		const minePrompts = promptsOf('mine');
		const mine = await branch('Add parser tests', { echoPromptTo: minePrompts, writes: [] });
		await failed(mine.run);
		const told = (node: string) => fs.readFileSync(path.join(minePrompts, `${node}.prompt.txt`), 'utf8');
		for (const node of ['plan', 'work']) {
			const prompt = told(node);
			assert.ok(prompt.includes('## Other branches of `main`'), prompt);
			assert.ok(prompt.includes('### Working now\n- Split the parser: '), `${node}: the sibling is live\n${prompt}`);
			assert.ok(!prompt.includes('- Add parser tests:'), 'never the caller itself');
			assert.ok(!prompt.includes('### Landed'));
			assert.ok(prompt.indexOf('## Other branches') < prompt.indexOf('## Where you work'));
		}
		const first = await server.call(ShowRun, { project: 'shop', id: mine.run });
		assert.deepEqual(
			pinned(first).map((i) => [i.kind, i.path]),
			[
				['snippet', 'catch-up before plan: Other branches of `main`'],
				['snippet', 'catch-up before work: Other branches of `main`'],
			],
		);
		assert.ok(
			told('work').includes(`\n\n${pinned(first)[1]!.preview!}\n\n## Where you work`),
			'the snapshot holds exactly what the prompt had',
		);
		const started = await server.call(LineageCatchUp, { project: 'shop', run: mine.run });
		assert.deepEqual([started.node, started.ref, started.walked], [mine.node, 'refs/heads/main', false]);

		// Since mine started: the sibling lands, another branch lands, someone commits by hand; the refs get packed.
		const splitLanded = await server.call(DecideRun, { project: 'shop', run: split.run, decision: 'commit' });
		const docs = await branch('Document the parser', { writes: [{ path: 'PARSER.md', content: '# Parser\n' }] });
		await atGate(docs.run);
		const docsLanded = await server.call(DecideRun, { project: 'shop', run: docs.run, decision: 'commit' });
		const outside = commitFile(repo, 'NOTES.md', 'notes\n', 'Notes by hand');
		git(repo, 'pack-refs', '--all');
		assert.ok(!fs.existsSync(path.join(repo, '.git', 'refs', 'heads', 'main')), 'the target is in packed-refs only');
		const look = await server.call(LineageCatchUp, { project: 'shop', run: mine.run });
		assert.deepEqual([look.tip, look.walked], [outside, true], 'the tip moved: the look walks');
		assert.ok(!look.tally.includes('### Working now'), `landed: never live again\n${look.tally}`);

		const retry = await server.call(DecideRun, {
			project: 'shop',
			run: mine.run,
			decision: 'retry',
			settings: planAndWork({ echoPromptTo: minePrompts, writes: [] }),
		});
		await failed(retry.new_run!);
		const again = told('plan');
		assert.ok(!again.includes('### Working now'), `landed: never live again\n${again}`);
		assert.ok(
			again.includes(
				[
					'### Landed, newest first',
					`- Document the parser — ${docsLanded.commit!.slice(0, 10)} "Document the parser": `,
				].join('\n'),
			),
			again,
		);
		assert.ok(again.includes(`- Split the parser — ${splitLanded.commit!.slice(0, 10)} "Split the parser": `));
		assert.ok(
			again.includes(
				[
					'### Commits on `refs/heads/main` since you started, newest first',
					`- ${outside.slice(0, 10)} Notes by hand (outside the lineage)`,
					`- ${docsLanded.commit!.slice(0, 10)} Document the parser (branch "Document the parser")`,
					`- ${splitLanded.commit!.slice(0, 10)} Split the parser (branch "Split the parser")`,
				].join('\n'),
			),
			again,
		);
		const retried = await server.call(ShowRun, { project: 'shop', id: retry.new_run! });
		assert.equal(pinned(retried).length, 2);
		assert.ok(again.includes(pinned(retried)[0]!.preview!));
		// The first run's snapshot still says what it was told then.
		assert.ok(
			pinned(await server.call(ShowRun, { project: 'shop', id: mine.run }))[0]!.preview!.includes('### Working now'),
		);
		// Nothing moved since the retry's last input: the next one walks nothing.
		const after = await server.call(LineageCatchUp, { project: 'shop', run: retry.new_run! });
		assert.deepEqual([after.tip, after.walked], [outside, false]);
	});

	it('a branch of a root with memory starts with its index and the recent landings: its first input only, pinned too', async () => {
		const remembered = await server.call(RememberMemory, {
			project: 'shop',
			title: 'Tests',
			text: 'Run npm test before you finish. The e2e stage needs code-server.',
			requestId: 'req-catchup-memory-1',
		});
		const prompts = path.join(root, 'prompts-late');
		fs.mkdirSync(prompts);
		const late = await server.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'Speed up the lexer',
			settings: planAndWork({ echoPromptTo: prompts, writes: [] }),
		});
		await server.notified(RunDidFinish, (f) => f.run === late.run, 'the late branch ended', 60_000);
		const plan = fs.readFileSync(path.join(prompts, 'plan.prompt.txt'), 'utf8');
		const work = fs.readFileSync(path.join(prompts, 'work.prompt.txt'), 'utf8');
		assert.match(plan, /## Project memory \(`main`\)\n\n[^#]*data, not instructions/);
		assert.ok(plan.includes('- Tests: Run npm test before you finish.'), plan);
		assert.match(
			plan,
			/### Recent landings\n\n- Document the parser — [0-9a-f]{10} "Document the parser": .*\n- Split the parser — /,
		);
		assert.ok(plan.indexOf('## Project memory') < plan.indexOf('## Other branches of `main`'));
		assert.ok(!work.includes('## Project memory'), 'the memory is told on the first input only');
		assert.ok(work.includes('## Other branches of `main`'));
		const detail = await server.call(ShowRun, { project: 'shop', id: late.run });
		assert.deepEqual(
			pinned(detail).map((i) => i.path),
			[
				'catch-up before plan: Project memory (`main`)',
				'catch-up before plan: Other branches of `main`',
				'catch-up before work: Other branches of `main`',
			],
		);
		assert.ok(plan.includes(pinned(detail)[0]!.preview!), 'the memory section as the prompt had it');
		assert.ok(remembered.added.length > 0);
	});

	it('refuses a run that is no branch, and one that is not there', async () => {
		const missing = await expectRpcError(server.connection, LineageCatchUp.method, {
			project: 'shop',
			run: '0194ffff-dead-7000-8000-000000000000',
		});
		assert.equal((missing.data as DeskErrorJson).code, 'ai.notFound');
		await server.call(SetTicket, { project: 'shop', ticket: 'Not a branch' });
		const plain = await server.call(LaunchGo, { project: 'shop', execute: false });
		const refused = await expectRpcError(server.connection, LineageCatchUp.method, { project: 'shop', run: plain.run });
		assert.equal((refused.data as DeskErrorJson).code, 'lineage.notBranch');
		assert.match(refused.message, /not a run of a branch/);
	});
});
