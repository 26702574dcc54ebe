import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { it } from 'node:test';
import type {
	ContextPipeline,
	ContextSnapshot,
	Decision,
	Evidence,
	Intent,
	PatchSet,
	Plan,
	Provenance,
	Run,
	Task,
	ToolInvocation,
} from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { isAtGate } from '../../../server/src/runs/runViews';
import type { Desk } from '../../../server/src/desk';
import { sandboxStatus } from '../../../server/src/runs/sandbox';
import type { RunSettings } from '../../../server/src/runs/settings';
import { openDesk, recordingLogger } from '../../helpers/deskFixture';
import { commitAll, commitFile, commitSubmodule, git, makeRepo } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { atExit, tempDir } from '../../helpers/temp';

/** Who decides in these tests: a person, as the gate records them. */
const decider = { kind: 'human' as const, id: 'Tess Tester <tess@example.com>' };

/** How many worktrees the repository has, its own checkout included. */
function worktreeCount(repo: string): number {
	return git(repo, 'worktree', 'list', '--porcelain')
		.split('\n')
		.filter((l) => l.startsWith('worktree ')).length;
}

async function project(
	files: Record<string, string> = {},
	logger = recordingLogger(),
): Promise<{ desk: Desk; repo: string; root: string; mainAsset: string; logger: typeof logger }> {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	for (const [name, text] of Object.entries(files)) {
		commitFile(repo, name, text, `add ${name}`);
	}
	const desk = await openDesk(path.join(root, 'library'), logger);
	const [boot] = await desk.openWorkspace([{ name: 'shop', path: repo }]);
	assert.ok(boot?.outcome === 'adopted');
	return { desk, repo, root, mainAsset: boot.asset.id, logger };
}

/** Goes with a ticket whose agent writes `x`, then sleeps a minute: the run is still going on return. */
async function goSlowRun(desk: Desk, repo: string, overrides: Partial<RunSettings> = {}) {
	const launches = await desk.launches(repo);
	launches.setTicket('A slow task');
	const record = await launches.go();
	const { executor } = await desk.runs(repo);
	const running = executor.execute(
		record,
		record.run,
		scriptedAgentSettings({ sleepMs: 60_000, writes: [{ path: 'x', content: 'x' }] }, overrides),
	);
	return { record, executor, running };
}

/** Waits (up to 20 seconds) until `file` exists: the agent has written it. */
async function waitForFile(file: string): Promise<void> {
	for (let i = 0; i < 400 && !fs.existsSync(file); i++) {
		await new Promise((r) => setTimeout(r, 50));
	}
}

async function goAndRun(
	desk: Desk,
	repo: string,
	ticket: string,
	settings: RunSettings,
	plugs: Array<{
		id: string;
		role: 'reference' | 'target' | 'instructions';
		files?: string[];
		copy?: Record<string, string>;
	}> = [],
) {
	const launches = await desk.launches(repo);
	launches.setTicket(ticket);
	for (const plug of plugs) {
		await launches.plug(plug.id, plug.role, {
			...(plug.files ? { files: plug.files } : {}),
			...(plug.copy ? { copy: plug.copy } : {}),
		});
	}
	const record = await launches.go();
	const { executor, gate } = await desk.runs(repo);
	const run = await executor.execute(record, record.run, settings);
	const ai = await desk.projectAi(repo);
	return { record, run, executor, gate, ai };
}

it('a run on the shared checkout goes from Go to the gate and lands as a commit with the Desk-Run trailer', async () => {
	const { desk, repo } = await project({ 'src/cart.ts': 'export const total = 0;\n' });
	const settings = scriptedAgentSettings(
		{
			plan: ['Read cart.ts', 'Add the discount'],
			writes: [
				{ path: 'src/cart.ts', content: 'export const total = 0;\nexport const discount = 0.1;\n' },
				{ path: 'src/discount.test.ts', content: 'test\n' },
			],
		},
		{
			checks: [
				{
					id: 'unit-tests',
					executable: 'sh',
					args: ['-c', 'test -f src/discount.test.ts && echo 3 passing'],
					cwd: '.',
					timeout: 30,
				},
			],
		},
	);
	const { run, gate, ai } = await goAndRun(desk, repo, 'Add a discount to the cart\n\nTen percent off.', settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	assert.equal(run.patchsets.length, 1);
	const patch = ai.require<PatchSet>(run.patchsets[0]!, 'patchset');
	assert.deepEqual(
		patch.touched.map((t) => [t.path, t.change_type, t.lines_added, t.lines_deleted]),
		[
			['src/cart.ts', 'modified', 1, 0],
			['src/discount.test.ts', 'added', 1, 0],
		],
	);
	assert.equal(patch.rationale, 'I made the change the ticket asks for.');
	// The tool calls, the plan, the provenance with usage, the snapshot and the pipeline.
	const tools = ai.runToolInvocations(run.object_id);
	assert.deepEqual(
		tools.map((t) => [t.tool_name, t.status, t.io_footprint?.paths_written]),
		[
			['Write', 'ok', ['src/cart.ts']],
			['Write', 'ok', ['src/discount.test.ts']],
		],
	);
	// The Intent's plan is the agent's revision of the plan of nodes the run started on (Run.plan, kept).
	const plan = ai.require<Plan>(ai.require<Intent>(ai.require<Task>(run.task, 'task').intent!, 'intent').plan!, 'plan');
	assert.deepEqual(
		plan.steps.map((s) => [s.description, s.statuses.at(-1)?.status]),
		[
			['Read cart.ts', 'completed'],
			['Add the discount', 'completed'],
		],
	);
	assert.equal(plan.previous, run.plan, 'the run keeps the plan it started on');
	const nodes = ai.require<Plan>(plan.previous!, 'plan');
	assert.deepEqual(
		nodes.steps.map((s) => [s.description, s.statuses.at(-1)?.status]),
		[
			['plan', 'completed'],
			['work', 'completed'],
		],
		"the agent's plan revises the desk's plan of nodes",
	);
	const provenance = ai.runProvenance(run.object_id) as Provenance;
	assert.equal(provenance.model, 'scripted-model-1');
	// Two nodes (plan, work), each reporting 1000 in, 200 out, $0.0123 over 2 turns of 1.2 s.
	assert.deepEqual(provenance.token_usage, {
		input_tokens: 2000,
		output_tokens: 400,
		total_tokens: 2400,
		cost_usd: 0.0246,
		models: [
			{ model: 'scripted-model-1', input_tokens: 2000, output_tokens: 400, total_tokens: 2400, cost_usd: 0.0246 },
		],
		turns: 4,
		duration_ms: 2400,
	});
	assert.ok(ai.get<ContextSnapshot>(run.snapshot!));
	const pipeline = ai.pipeline(plan.pipeline) as ContextPipeline;
	const kinds = pipeline.frames.map((f) => (typeof f.kind === 'string' ? f.kind : f.kind.other));
	assert.equal(kinds[0], 'intent_analysis');
	assert.ok(
		kinds.includes('step_summary') && kinds.includes('code_change') && kinds.includes('tool_call'),
		kinds.join(','),
	);
	const [evidence] = ai.runEvidence(run.object_id) as Evidence[];
	assert.equal(evidence?.exit_code, 0);
	assert.equal(evidence?.kind, 'test');
	assert.match(evidence?.summary ?? '', /^passed/);
	assert.equal(
		ai.require<Intent>(ai.require<Task>(run.task, 'task').intent!, 'intent').statuses.at(-1)?.status,
		'active',
	);

	// Nothing lands before the decision: HEAD is where it was.
	const before = git(repo, 'rev-parse', 'HEAD');
	assert.equal(run.commit, before);
	const result = await gate.decide(run.object_id, { by: decider, decision: 'commit', rationale: 'looks right' });
	assert.ok(result.commit);
	assert.equal(git(repo, 'rev-parse', 'HEAD'), result.commit);
	assert.equal(git(repo, 'rev-parse', 'HEAD^'), before);
	const message = git(repo, 'log', '-1', '--format=%B');
	assert.match(message, /^Add a discount to the cart\n/);
	assert.match(message, new RegExp(`Desk-Run: ${run.object_id}$`));
	assert.equal(
		git(repo, 'status', '--porcelain'),
		'',
		'the checkout is clean after landing: index and files agree with the commit',
	);
	assert.equal(
		ai.require<Run>(run.object_id, 'run').status,
		'completed',
		'the run completes with its decision (glossary: AI objects)',
	);
	const decision = ai.runDecision(run.object_id) as Decision;
	assert.equal(decision.result_commit_sha, result.commit);
	assert.equal(ai.require<PatchSet>(patch.object_id, 'patchset').apply_status, 'applied');
	const task = ai.require<Task>(run.task, 'task');
	assert.equal(task.status, 'done');
	const intent = ai.require<Intent>(task.intent!, 'intent');
	assert.equal(intent.commit, result.commit);
	assert.equal(intent.statuses.at(-1)?.status, 'completed');
	const versions = await desk.library.versions(
		(await desk.library.listAssets('shop')).find((a) => a.engine === 'git')!.id,
	);
	assert.equal(versions.at(-1)?.made_by, 'run', 'the new head is recorded as made by the run');
	await assert.rejects(gate.decide(run.object_id, { by: decider, decision: 'commit' }), (e) =>
		isDeskError(e, 'run.notAwaitingDecision'),
	);
});

it('a small maxFrames evicts the oldest frames but never the intent analysis; steps name the frames they read and made, and the plan moves with them', async () => {
	const { desk, repo } = await project();
	const writes = ['a', 'b', 'c', 'd'].map((name) => ({ path: `${name}.txt`, content: `${name}\n` }));
	const settings = scriptedAgentSettings({ plan: ['Write four files'], writes }, { maxFrames: 3 });
	const { run, ai } = await goAndRun(desk, repo, 'Write four files', settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	const nodes = ai.require<Plan>(run.plan!, 'plan');
	assert.deepEqual(
		nodes.steps.map((s) => s.description),
		['plan', 'work'],
		'Run.plan is the plan the run started on, not rewritten by the plan node',
	);
	const pipeline = ai.pipeline(nodes.pipeline) as ContextPipeline;
	assert.equal(pipeline.max_frames, 3);
	const kind = (id: number) => pipeline.frames.find((f) => f.frame_id === id)?.kind;
	// 0 intent analysis, 1 the plan node's answer, 2 the plan's summary, 3–6 the four Write calls,
	// 7 the work node's answer, 8 the work summary, 9 the change.
	assert.equal(pipeline.next_frame_id, 10);
	assert.deepEqual(
		pipeline.frames.map((f) => [f.frame_id, f.kind]),
		[
			[0, 'intent_analysis'],
			[8, 'step_summary'],
			[9, 'code_change'],
		],
		'the oldest unprotected frames went; the intent analysis stayed',
	);
	assert.equal(kind(0), 'intent_analysis');
	const [planStep, workStep] = nodes.steps;
	assert.deepEqual([planStep!.iframes, planStep!.oframes], [[0], [1, 2]]);
	assert.deepEqual(
		[workStep!.iframes, workStep!.oframes],
		[
			[0, 1, 2],
			[3, 4, 5, 6, 7, 8, 9],
		],
		'the work step read the analysis and the plan, and made every frame of its node, evicted or not',
	);
	const revision = ai.list<Plan>('plan').find((p) => p.previous === nodes.object_id)!;
	assert.deepEqual(
		revision.steps.map((s) => [s.description, s.iframes, s.oframes, s.statuses.at(-1)?.status]),
		[['Write four files', [0, 1, 2], [3, 4, 5, 6, 7, 8, 9], 'completed']],
	);
	// A step's change moves its plan's update time (a step has none of its own).
	for (const plan of [nodes, revision]) {
		const lastMove = plan.steps
			.flatMap((s) => s.statuses.map((e) => e.changed_at))
			.sort()
			.at(-1)!;
		assert.ok(plan.updated_at >= lastMove, `${plan.updated_at} < ${lastMove}`);
	}
});

it('with worktree isolation the run works on its own branch and the checkout is never touched', async () => {
	const { desk, repo } = await project({ 'README.md': 'shop\n' });
	fs.writeFileSync(path.join(repo, 'README.md'), 'shop, with my own edit\n');
	const settings = scriptedAgentSettings(
		{ format: 'desk', writes: [{ path: 'README.md', content: 'shop\n\nA small shop.\n' }] },
		{ isolation: 'worktree' },
	);
	const { run, gate } = await goAndRun(desk, repo, 'Describe the shop in the README', settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	assert.equal(
		fs.readFileSync(path.join(repo, 'README.md'), 'utf8'),
		'shop, with my own edit\n',
		"the checkout kept the person's edit",
	);
	const head = git(repo, 'rev-parse', 'HEAD');
	const result = await gate.decide(run.object_id, { by: decider, decision: 'commit' });
	assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'HEAD did not move');
	assert.equal(git(repo, 'rev-parse', `desk/run-${run.object_id}`), result.commit);
	assert.equal(git(repo, 'show', `${result.commit}:README.md`), 'shop\n\nA small shop.');
	assert.equal(worktreeCount(repo), 1, "the run's worktree is gone after landing");
});

it('a failing check sends the work node round again with the failure in its prompt; each attempt is a PatchSet', async () => {
	const { desk, repo, root } = await project();
	const prompts = path.join(root, 'prompts');
	fs.mkdirSync(prompts);
	const settings = scriptedAgentSettings(
		{
			firstAttemptWrites: [{ path: 'VERSION', content: 'broken\n' }],
			writes: [{ path: 'VERSION', content: '1.2.0\n' }],
			echoPromptTo: prompts,
		},
		{
			checks: [
				{
					id: 'version-format',
					executable: 'sh',
					args: ['-c', 'grep -Eq "^[0-9]+\\.[0-9]+\\.[0-9]+$" VERSION || { echo "VERSION is not semver"; exit 3; }'],
					cwd: '.',
					timeout: 30,
				},
			],
			sandbox: 'off',
		},
	);
	const { run, ai } = await goAndRun(desk, repo, 'Write a VERSION file', settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	assert.equal(run.patchsets.length, 2);
	const evidence = ai.runEvidence(run.object_id) as Evidence[];
	assert.deepEqual(
		evidence.map((e) => [e.patchset_id, e.exit_code]),
		[
			[run.patchsets[0], 3],
			[run.patchsets[1], 0],
		],
	);
	assert.match(
		fs.readFileSync(path.join(prompts, 'work.prompt.txt'), 'utf8'),
		/Checks failed after attempt 1[\s\S]*VERSION is not semver/,
	);
	assert.equal(run.tags['desk.sandbox'], 'not isolated: the sandbox is turned off in the settings');
	// The second attempt read the failure: its frame is among what the work step read, and every
	// list of frames only grew at its end (an import takes them as append-only).
	const nodes = ai.require<Plan>(run.plan!, 'plan');
	const pipeline = ai.pipeline(nodes.pipeline) as ContextPipeline;
	const recovery = pipeline.frames.find((f) => f.kind === 'error_recovery')!;
	const work = nodes.steps.at(-1)!;
	assert.equal(work.iframes.at(-1), recovery.frame_id);
	assert.ok(work.oframes.includes(recovery.frame_id));
	for (const ids of [work.iframes, work.oframes]) {
		assert.deepEqual(
			ids,
			[...ids].sort((a, b) => a - b),
			'in the order the frames were made',
		);
	}
	assert.equal(work.oframes.at(-1), pipeline.next_frame_id - 1, 'the step made every frame up to the last');
});

it('an agent that fails, or makes no change, fails the run; Retry makes a new Run of the same Task and Abandon fails the Task', async () => {
	const { desk, repo } = await project();
	const { run, gate, ai } = await goAndRun(desk, repo, 'Do something', scriptedAgentSettings({ exitCode: 4 }));
	assert.equal(run.status, 'failed');
	assert.match(run.error ?? '', /exited with 4/);
	await assert.rejects(gate.decide(run.object_id, { by: decider, decision: 'commit' }), (e) =>
		isDeskError(e, 'run.noPatch'),
	);
	const retry = await gate.decide(run.object_id, { by: decider, decision: 'retry', rationale: 'try again' });
	assert.equal(ai.require<Run>(run.object_id, 'run').status, 'failed', 'a failed run stays failed after its decision');
	const task = ai.require<Task>(run.task, 'task');
	assert.deepEqual(task.runs, [run.object_id, retry.new_run]);
	const next = ai.require<Run>(retry.new_run!, 'run');
	assert.equal(next.status, 'created');
	const { executor } = await desk.runs(repo);
	const record = gate.launchRecord(next)!;
	const nothing = await executor.execute(record, next.object_id, scriptedAgentSettings({ writes: [] }));
	assert.equal(nothing.status, 'failed');
	assert.match(nothing.error ?? '', /without changing any file/);
	await gate.decide(next.object_id, { by: decider, decision: 'abandon' });
	assert.equal(ai.require<Task>(run.task, 'task').status, 'failed');
});

it('abandoning a run on the shared checkout puts its files back, keeping what the person changed since', async () => {
	const { desk, repo } = await project({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
	const { run, gate } = await goAndRun(
		desk,
		repo,
		'Change a and b',
		scriptedAgentSettings({
			writes: [
				{ path: 'a.txt', content: 'A\n' },
				{ path: 'b.txt', content: 'B\n' },
				{ path: 'new.txt', content: 'n\n' },
			],
		}),
	);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	fs.writeFileSync(path.join(repo, 'b.txt'), 'my own b\n');
	const result = await gate.decide(run.object_id, { by: decider, decision: 'abandon' });
	assert.deepEqual(result.restored?.sort(), ['a.txt', 'new.txt']);
	assert.deepEqual(result.left, ['b.txt']);
	assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'a\n');
	assert.equal(fs.existsSync(path.join(repo, 'new.txt')), false);
	assert.equal(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'my own b\n');
});

it("a snapshot target runs in a folder of its own with the marker, and lands as the asset's next version made by the run", async () => {
	const { desk, repo, root } = await project();
	const docs = path.join(root, 'docs');
	fs.mkdirSync(docs);
	fs.writeFileSync(path.join(docs, 'guide.md'), '# Guide\n\nOld text.\n');
	fs.writeFileSync(path.join(docs, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
	const asset = (await desk.library.importDir({ dir: docs, project: 'shop', main: false })).asset;
	const settings = scriptedAgentSettings({
		writes: [{ path: 'guide.md', content: '# Guide\n\nNew text.\n' }],
		deletes: ['logo.png'],
	});
	const { run, gate, ai } = await goAndRun(desk, repo, 'Rewrite the guide', settings, [
		{ id: asset.id, role: 'target' },
	]);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	assert.equal(
		fs.readFileSync(path.join(docs, 'guide.md'), 'utf8'),
		'# Guide\n\nOld text.\n',
		'the asset folder is untouched until landing',
	);
	const patch = ai.require<PatchSet>(run.patchsets[0]!, 'patchset');
	assert.deepEqual(
		patch.touched.map((t) => [t.path, t.change_type]),
		[
			['guide.md', 'modified'],
			['logo.png', 'deleted'],
		],
	);
	const targetDiff = desk.blobs.get(patch.artifact!.hash!).toString('utf8');
	assert.match(targetDiff, /-Old text\.\n\+New text\./);
	assert.match(targetDiff, /Binary files a\/logo\.png \(7 bytes\) and \/dev\/null \(0 bytes\) differ/);
	const files = await desk.patchSetFiles(repo, patch.object_id);
	assert.deepEqual(
		files.files.map((f) => [
			f.path,
			f.before === null ? null : Buffer.from(f.before).toString('utf8').slice(0, 7),
			f.after === null ? null : Buffer.from(f.after).toString('utf8'),
		]),
		[
			['guide.md', '# Guide', '# Guide\n\nNew text.\n'],
			['logo.png', '\u0089PNG\u0000\u0001\u0002'.slice(0, 7).replace('\u0089', '\ufffd'), null],
		],
	);
	const result = await gate.decide(run.object_id, { by: decider, decision: 'commit' });
	assert.equal(result.version, 2);
	assert.equal(fs.readFileSync(path.join(docs, 'guide.md'), 'utf8'), '# Guide\n\nNew text.\n');
	assert.equal(fs.existsSync(path.join(docs, 'logo.png')), false);
	const versions = await desk.library.assetVersions(asset.id);
	assert.equal(versions.at(-1)?.made_by, 'run');
});

it('a git reference is laid out read-only with its links as files holding their targets and its submodules as empty folders', async () => {
	const { desk, repo, root } = await project();
	const lib = makeRepo(path.join(root, 'lib'), { commits: 1 });
	fs.mkdirSync(path.join(lib, 'docs'));
	fs.writeFileSync(path.join(lib, 'docs', 'guide.md'), '# Guide\n');
	fs.symlinkSync('docs/guide.md', path.join(lib, 'README.md'));
	fs.symlinkSync('/etc/hostname', path.join(lib, 'host'));
	commitSubmodule(lib, 'vendor/sub', commitAll(lib, 'links'), 'a submodule');
	const asset = (await desk.library.importDir({ dir: lib, project: 'shop', main: false })).asset;
	const settings = scriptedAgentSettings({ writes: [{ path: 'notes.md', content: 'n\n' }] });
	const { run } = await goAndRun(desk, repo, 'Read the lib', settings, [{ id: asset.id, role: 'reference' }]);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	const references = path.join(desk.libraryDir, 'runs', run.object_id, 'references');
	const [folder] = fs.readdirSync(references);
	const mounted = path.join(references, folder!);
	const readme = fs.lstatSync(path.join(mounted, 'README.md'));
	assert.ok(readme.isFile(), 'a link is a file, never a link to follow');
	assert.equal(readme.mode & 0o777, 0o444);
	assert.equal(fs.readFileSync(path.join(mounted, 'README.md'), 'utf8'), 'docs/guide.md');
	assert.equal(fs.readFileSync(path.join(mounted, 'host'), 'utf8'), '/etc/hostname');
	const sub = fs.lstatSync(path.join(mounted, 'vendor', 'sub'));
	assert.ok(sub.isDirectory());
	assert.equal(sub.mode & 0o777, 0o555);
	assert.deepEqual(fs.readdirSync(path.join(mounted, 'vendor', 'sub')), []);
	assert.equal(fs.readFileSync(path.join(mounted, 'docs', 'guide.md'), 'utf8'), '# Guide\n');
});

it("cancel stops the agent's whole process group and fails the run with the reason", async () => {
	const { desk, repo } = await project();
	const { record, executor, running } = await goSlowRun(desk, repo);
	const ai = await desk.projectAi(repo);
	for (let i = 0; i < 200 && ai.require<Run>(record.run, 'run').status !== 'patching'; i++) {
		await new Promise((r) => setTimeout(r, 50));
	}
	// The agent writes, then sleeps: cancel once its write is in the checkout (a fixed wait lost that
	// race on a loaded machine).
	await waitForFile(path.join(repo, 'x'));
	const started = Date.now();
	executor.cancel(record.run, 'the person pressed Cancel');
	const run = await running;
	assert.ok(Date.now() - started < 5000, 'stopped within the grace period');
	assert.equal(run.status, 'failed');
	assert.equal(run.error, 'cancelled: the person pressed Cancel');
	// What the agent wrote before it was stopped is a PatchSet at the gate; Abandon puts it away.
	const ai2 = await desk.projectAi(repo);
	assert.deepEqual(
		ai2.runPatchSets(run).map((p) => p.touched.map((t) => t.path)),
		[['x']],
	);
	assert.equal(fs.existsSync(path.join(repo, 'x')), true);
	const { gate } = await desk.runs(repo);
	await gate.decide(run.object_id, { by: decider, decision: 'abandon' });
	assert.equal(fs.existsSync(path.join(repo, 'x')), false);
});

it("a desk that stops (the window's desk shutting down) fails the runs it carries itself and puts their files in the checkout back", async () => {
	const { desk, repo } = await project();
	const { record, running } = await goSlowRun(desk, repo);
	await waitForFile(path.join(repo, 'x'));
	await desk.stopRuns('the desk was shut down (the window closed or reloaded)');
	const run = await running;
	assert.equal(run.status, 'failed');
	assert.equal(
		run.error,
		'cancelled: the desk was shut down (the window closed or reloaded); the checkout was put back as at Go (1 file: x; its PatchSet keeps what the agent left)',
	);
	assert.equal(fs.existsSync(path.join(repo, 'x')), false, "the agent's file is gone from the checkout");
	const ai = await desk.projectAi(repo);
	assert.deepEqual(
		ai.runPatchSets(ai.require<Run>(record.run, 'run')).map((p) => p.touched.map((t) => t.path)),
		[['x']],
	);
});

it('a cancel another process writes for a run carried here reaches its agent within a second or two', async () => {
	const { desk, repo } = await project();
	const { record, running } = await goSlowRun(desk, repo);
	await waitForFile(path.join(repo, 'x'));
	// Written as another opener of the store writes it (CancelRun in a window that does not carry the
	// run): only the row, no signal to the agent.
	const { executor } = await desk.runs(repo);
	assert.equal(executor.claimedHere(record.run), true);
	const other = await DurableDatabase.open({
		file: path.join(repo, '.desk', 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
	});
	const started = Date.now();
	try {
		other.write((tx) =>
			tx.run('UPDATE run_control SET cancel_reason = ? WHERE run_id = ?', ['cancelled in another window', record.run]),
		);
	} finally {
		other.close();
	}
	const run = await running;
	assert.ok(Date.now() - started < 6000, `stopped after ${Date.now() - started} ms`);
	assert.equal(run.error, 'cancelled: cancelled in another window');
});

it(
	'the sandbox: a reference cannot be written, a path outside the plugs cannot be read, and the run says it was isolated',
	{ skip: sandboxStatus().available ? false : `no sandbox here: ${sandboxStatus().reason}` },
	async () => {
		const { desk, repo, root } = await project();
		const specs = path.join(root, 'specs');
		fs.mkdirSync(specs);
		fs.writeFileSync(path.join(specs, 'spec.md'), 'The spec.\n');
		const spec = (await desk.library.importDir({ dir: specs, project: 'shop', main: false })).asset;
		const secret = path.join(root, 'not-plugged', 'secret.txt');
		fs.mkdirSync(path.dirname(secret));
		fs.writeFileSync(secret, 'do not read\n');
		const mount = desk.library.mount(spec.id, 1);
		const listener = net.createServer((socket) => socket.end());
		await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
		const port = (listener.address() as net.AddressInfo).port;
		const settings = scriptedAgentSettings({
			tryRead: [path.join(mount, 'spec.md'), secret, path.join(desk.libraryDir, 'library.db')],
			tryWrite: [path.join(mount, 'spec.md')],
			tryConnect: [port],
			writes: [{ path: 'notes.md', content: 'n\n' }],
		});
		const { run, ai } = await goAndRun(desk, repo, 'Use the spec', settings, [{ id: spec.id, role: 'reference' }]);
		// With the network allowed, the same connection goes through.
		const open = scriptedAgentSettings({ tryConnect: [port], writes: [{ path: 'more.md', content: 'm\n' }] });
		open.agents[0]!.network = true;
		const networked = await goAndRun(desk, repo, 'Connect', open);
		listener.close();
		assert.deepEqual(
			ai.runToolInvocations(networked.run.object_id).map((c) => [c.tool_name, c.status]),
			[
				['Bash', 'ok'],
				['Write', 'ok'],
			],
		);
		assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
		assert.match(run.tags['desk.sandbox'] ?? '', /^isolated/);
		const calls = ai.runToolInvocations(run.object_id) as ToolInvocation[];
		assert.deepEqual(
			calls.map((c) => [c.tool_name, c.status]),
			[
				['Read', 'ok'],
				['Read', 'error'],
				['Read', 'error'],
				['Bash', 'error'],
				['Write', 'error'],
				['Write', 'ok'],
			],
		);
		assert.match(
			calls[3]?.result_summary ?? '',
			/ECONNREFUSED|ENETUNREACH/,
			"no network without the agent's network setting",
		);
		assert.match(calls[1]?.result_summary ?? '', /ENOENT/);
		assert.match(calls[4]?.result_summary ?? '', /EROFS|EACCES|read-only/i);
		assert.equal(fs.readFileSync(path.join(specs, 'spec.md'), 'utf8'), 'The spec.\n');
	},
);

it('Checkpoint keeps the change as a commit under refs/desk/checkpoints/, off every branch, and the run completes', async () => {
	const { desk, repo } = await project();
	const { run, gate, ai } = await goAndRun(
		desk,
		repo,
		'Half-way work',
		scriptedAgentSettings({ writes: [{ path: 'draft.md', content: 'draft\n' }] }, { isolation: 'worktree' }),
	);
	assert.ok(isAtGate(run), run.error);
	const head = git(repo, 'rev-parse', 'HEAD');
	const result = await gate.decide(run.object_id, {
		by: decider,
		decision: 'checkpoint',
		rationale: 'resume tomorrow',
	});
	const checkpoint = result.decision.checkpoint_id!;
	assert.equal(git(repo, 'rev-parse', `refs/desk/checkpoints/${run.object_id}`), checkpoint);
	assert.equal(git(repo, 'show', `${checkpoint}:draft.md`), 'draft');
	assert.equal(git(repo, 'rev-parse', `${checkpoint}^`), run.commit);
	assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'no branch moved');
	assert.equal(ai.require<Run>(run.object_id, 'run').status, 'completed');
	assert.equal(ai.runDecision(run.object_id)?.rationale, 'resume tomorrow');
	assert.equal(worktreeCount(repo), 1, "the run's worktree is gone; the checkpoint keeps its state");
});

it('a decided worktree run leaves no folder behind, and a folder the agent made a link loses the link, never what it points to', async () => {
	const { desk, repo, root } = await project({ 'docs/a.md': 'a\n' });
	const outside = path.join(root, 'outside');
	fs.mkdirSync(outside);
	fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep\n');
	const settings = scriptedAgentSettings(
		{ writes: [{ path: 'b.md', content: 'b\n' }], links: [{ path: 'docs', target: outside }] },
		{ isolation: 'worktree' },
	);
	const { run, gate, executor } = await goAndRun(desk, repo, 'Link out', settings);
	assert.ok(isAtGate(run), run.error);
	const placement = executor.placement(run.object_id)!;
	assert.ok(fs.existsSync(placement.run_folder));
	await gate.decide(run.object_id, { by: decider, decision: 'abandon' });
	assert.equal(fs.existsSync(placement.run_folder), false, 'the run folder is gone');
	assert.equal(fs.existsSync(placement.work_folder), false, 'the worktree is gone');
	assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'keep\n');
});

it('links the agent plants are never followed: a folder made a link is not read into the change, and Abandon does not write through a file made a link', async () => {
	const { desk, repo, root } = await project({ 'pkg/.npmrc': 'registry=local\n', 'scripts/setup.sh': 'echo setup\n' });
	const outside = path.join(root, 'outside');
	fs.mkdirSync(outside);
	fs.writeFileSync(path.join(outside, '.npmrc'), 'TOKEN=supersecret\n');
	fs.writeFileSync(path.join(outside, 'bashrc'), "the person's bashrc\n");
	// The agent (without the sandbox, so it can reach outside) swaps in the links as its last act.
	const settings = scriptedAgentSettings(
		{
			writes: [{ path: 'notes.md', content: 'n\n' }],
			links: [
				{ path: 'pkg', target: outside },
				{ path: 'scripts/setup.sh', target: path.join(outside, 'bashrc') },
			],
		},
		{ sandbox: 'off' },
	);
	const launches = await desk.launches(repo);
	launches.setTicket('Plant links');
	const record = await launches.go();
	const { executor, gate } = await desk.runs(repo);
	const run = await executor.execute(record, record.run, settings);
	assert.ok(isAtGate(run), run.error);
	const ai = await desk.projectAi(repo);
	const patch = ai.runPatchSets(run)[0]!;
	const diff = desk.blobs.get(patch.artifact!.hash!).toString('utf8');
	assert.doesNotMatch(diff, /supersecret/, 'nothing behind the planted folder link was read');
	assert.deepEqual(patch.touched.map((t) => [t.path, t.change_type]).sort(), [
		['notes.md', 'added'],
		['pkg', 'added'],
		['pkg/.npmrc', 'deleted'],
		['scripts/setup.sh', 'modified'],
	]);
	assert.equal(
		spawnSync('sh', ['-c', `git -C ${repo} cat-file --batch-all-objects --batch | grep -c supersecret`], {
			encoding: 'utf8',
		}).stdout.trim(),
		'0',
		'the secret is in no git object',
	);
	const result = await gate.decide(run.object_id, { by: decider, decision: 'abandon' });
	assert.equal(
		fs.readFileSync(path.join(outside, 'bashrc'), 'utf8'),
		"the person's bashrc\n",
		'Abandon did not write through the link',
	);
	assert.equal(
		fs.lstatSync(path.join(repo, 'scripts', 'setup.sh')).isFile(),
		true,
		'the link itself was replaced by the file it was',
	);
	assert.equal(fs.readFileSync(path.join(repo, 'scripts', 'setup.sh'), 'utf8'), 'echo setup\n');
	assert.ok(result.restored?.includes('scripts/setup.sh'));
});

it('one agent at a time in the shared checkout; a worktree run may work beside it', async () => {
	const { desk, repo } = await project();
	const launches = await desk.launches(repo);
	launches.setTicket('Slow');
	const first = await launches.go();
	const { executor } = await desk.runs(repo);
	const running = executor.execute(first, first.run, scriptedAgentSettings({ sleepMs: 60_000 }));
	const ai = await desk.projectAi(repo);
	for (let i = 0; i < 200 && ai.require<Run>(first.run, 'run').status !== 'patching'; i++) {
		await new Promise((r) => setTimeout(r, 25));
	}
	assert.throws(
		() => executor.assertCheckoutFree(scriptedAgentSettings({}), { plugs: [] }),
		(e) => isDeskError(e, 'run.checkoutBusy') && (e.data as { run: string }).run === first.run,
	);
	assert.doesNotThrow(() =>
		executor.assertCheckoutFree(scriptedAgentSettings({}, { isolation: 'worktree' }), { plugs: [] }),
	);
	executor.cancel(first.run, 'done with the test');
	await running;
	assert.doesNotThrow(() => executor.assertCheckoutFree(scriptedAgentSettings({}), { plugs: [] }));
});

it(
	'the agent gets its own home folder: its homeFiles copied in, what it changes there discarded',
	{ skip: sandboxStatus().available ? false : `no sandbox here: ${sandboxStatus().reason}` },
	async () => {
		const { desk, repo } = await project();
		const login = path.join(os.homedir(), `.desk-test-login-${process.pid}.json`);
		fs.writeFileSync(login, '{"token":"t"}\n');
		atExit(() => fs.rmSync(login, { force: true }));
		const settings = scriptedAgentSettings({
			tryRead: [login],
			tryWrite: [login],
			writes: [{ path: 'x.md', content: 'x\n' }],
		});
		settings.agents[0]!.homeFiles = [login];
		const { run, ai } = await goAndRun(desk, repo, 'Use the login', settings);
		assert.ok(isAtGate(run), run.error);
		assert.deepEqual(
			ai.runToolInvocations(run.object_id).map((c) => [c.tool_name, c.status]),
			[
				['Read', 'ok'],
				['Write', 'ok'],
				['Write', 'ok'],
			],
		);
		assert.equal(fs.readFileSync(login, 'utf8'), '{"token":"t"}\n', "the person's own file is unchanged");
	},
);

it('landing is idempotent after a crash between the commit and its record, and one decision is made at a time across processes', async () => {
	const { desk, repo } = await project({ 'a.txt': 'a\n' });
	const { run, gate, executor, ai } = await goAndRun(
		desk,
		repo,
		'Change a',
		scriptedAgentSettings({ writes: [{ path: 'a.txt', content: 'A\n' }] }),
	);
	assert.ok(isAtGate(run), run.error);
	// Another process is deciding this run: a decision here is refused until it gives the claim back.
	const release = executor.claimDecision(run.object_id);
	await assert.rejects(
		gate.decide(run.object_id, { by: decider, decision: 'commit' }),
		(e) => isDeskError(e, 'run.notAwaitingDecision') && /being made already/.test(e.message),
	);
	release();
	// An approval that committed and died before recording: the commit with the trailer is on HEAD.
	git(repo, 'commit', '-qam', `Change a\n\nDesk-Run: ${run.object_id}`);
	const landed = git(repo, 'rev-parse', 'HEAD');
	const result = await gate.decide(run.object_id, { by: decider, decision: 'commit' });
	assert.equal(result.commit, landed, 'the commit already made is recorded');
	assert.equal(git(repo, 'rev-parse', 'HEAD'), landed, 'no second commit');
	assert.equal(ai.runDecision(run.object_id)?.result_commit_sha, landed);
});

it('the files of a PatchSet whose tree git pruned are reported as missing (git.missingObject), never shown as absent files', async () => {
	const { desk, repo } = await project({ 'a.txt': 'a\n' });
	const { run, ai } = await goAndRun(
		desk,
		repo,
		'Change a',
		scriptedAgentSettings({ writes: [{ path: 'a.txt', content: 'A\n' }] }),
	);
	assert.ok(isAtGate(run), run.error);
	const patch = ai.require<PatchSet>(run.patchsets[0]!, 'patchset');
	assert.deepEqual(
		(await desk.patchSetFiles(repo, patch.object_id)).files.map((f) => [
			f.path,
			Buffer.from(f.before!).toString(),
			Buffer.from(f.after!).toString(),
		]),
		[['a.txt', 'a\n', 'A\n']],
	);
	// The tree the runner wrote is held by no commit: a gc may prune it (here its loose file goes).
	const tree = patch.tags['desk.tree']!;
	fs.rmSync(path.join(repo, '.git', 'objects', tree.slice(0, 2), tree.slice(2)));
	const reopened = await openDesk(path.join(path.dirname(repo), 'library'));
	// Read as "no such file", the change would show as a.txt deleted.
	await assert.rejects(
		reopened.patchSetFiles(repo, patch.object_id),
		(e) =>
			isDeskError(e, 'git.missingObject') &&
			(e.data as { patchset: string; path: string }).patchset === patch.object_id &&
			(e.data as { path: string }).path === 'a.txt',
	);
});

it('a run that stops when what the agent left cannot be read: the failure says the change was not kept, and the log says why', async () => {
	const { desk, repo, root, logger } = await project();
	const { record, executor, running } = await goSlowRun(desk, repo, { isolation: 'worktree' });
	const worktree = path.join(root, 'library', 'runs', record.run, 'worktree');
	await waitForFile(path.join(worktree, 'x'));
	// The worktree is gone (removed by hand, say): what the agent left cannot be made a PatchSet.
	fs.rmSync(worktree, { recursive: true, force: true });
	executor.cancel(record.run, 'the person pressed Cancel');
	const run = await running;
	assert.equal(run.status, 'failed');
	assert.equal(run.patchsets.length, 0);
	assert.match(run.error ?? '', /^cancelled: the person pressed Cancel; what the agent left could not be kept \(.+\)$/);
	assert.ok(
		logger.lines.some(
			(l) =>
				l.level === 'warn' &&
				l.message.startsWith(`run ${run.object_id}: what the agent left could not be kept as a PatchSet`),
		),
		JSON.stringify(logger.lines),
	);
});
