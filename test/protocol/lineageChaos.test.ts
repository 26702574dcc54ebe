/**
 * The random-kill loop of the lineage (glossary: Lineage, Tally, Project memory): the real server on
 * a real repository, SIGKILLed at random moments (and at named kill points) while the person prompts
 * branches of main, their scripted agents branch again through the `branch` desk tool and post notes,
 * the person decides the runs at the gate (each landing memorized by a summary agent), answers
 * reports, posts notes and remembers things, beside a second window and `desk memory remember`
 * processes that are killed too. Every request carries a request id and is sent again, with the same
 * id, until it is answered. Bounded by rounds and by wall time. Afterwards, and after clean restarts
 * so recovery ran, the guarantees are checked as invariants over the project database (read with the
 * desk's own store code), the memory file and `git log`: a fork once per request, each delivery
 * phase once, a landing once per Desk-Run commit and never shown working again, each memory once and
 * its file never torn, at most one answer per report, nothing acknowledged lost.
 *
 * The seed is printed (`LINEAGE_CHAOS_SEED=<n>`): set the variable to play the same choices again
 * (the moments the processes reach differ from run to run, and with them what there is to choose).
 * `LINEAGE_CHAOS_POINTS` narrows the kill points, `LINEAGE_CHAOS_ROUNDS` and `LINEAGE_CHAOS_MS` the
 * bounds (by default 10 rounds in 30 s, a new seed each run: the suite's share; a long hunt sets them
 * higher); `LINEAGE_CHAOS_DEBUG` tells each round and request.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, it, type TestContext } from 'node:test';
import type { DeskErrorJson } from '../../server/src/core/errors';
import { silentLogger } from '../../server/src/core/logger';
import type { BranchResult, LineageTree, LineageTreeNode } from '../../server/src/lineage/types';
import {
	AnswerReport,
	DecideRun,
	LaunchGo,
	LineageCatchUp,
	LineageTreeRequest,
	ListBoard,
	OpenWorkspace,
	PostToBoard,
	PromptLineage,
	RememberMemory,
	RunDidFinish,
	SetTicket,
	ShowRun,
	type ParamsOf,
} from '../../server/src/protocol/protocol';
import type { RunSettings } from '../../server/src/runs/settings';
import { DurableDatabase } from '../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../server/src/store/schemas';
import { attempt, deskInBackground, isAlive, seededRandom, type Outcome } from '../helpers/chaos';
import { git, makeRepo } from '../helpers/gitRepo';
import { deskToolAnswers, scriptedAgentSettings } from '../helpers/scriptedAgent';
import { killStartedServers, startServer, type ProtocolRequest, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

/** The named kill points a round may arm (a point the code does not reach is harmless: the timer kills). */
const killPoints = [
	'branch.beforeCommit',
	'branch.afterCommit',
	'delivery.afterInput',
	'delivery.afterReply',
	'delivery.afterDeliver',
	'land.afterCommit.beforeDecision',
	'land.afterDecision.beforeNote',
	'memory.beforeRename',
	'memory.afterRename.beforeQueueDelete',
	'memorize.afterModel.beforeEnqueue',
];

/** The points a round may arm: `LINEAGE_CHAOS_POINTS` (comma-separated) narrows them, to aim at one window. */
const armable = process.env['LINEAGE_CHAOS_POINTS']?.split(',').filter((p) => p.length > 0) ?? killPoints;
const maxRounds = Number(process.env['LINEAGE_CHAOS_ROUNDS'] ?? 10);
/** Wall time of the killing rounds; the settling and the checks come after. */
const loopMs = Number(process.env['LINEAGE_CHAOS_MS'] ?? 30_000);

type Kind = 'prompt' | 'decide' | 'remember' | 'answer' | 'post';

/** One request the person made: sent (again after a kill, with the same id) until answered or refused. */
interface Sent {
	kind: Kind;
	id: string;
	definition: ProtocolRequest;
	params: unknown;
	sends: number;
	answer?: unknown;
	refused?: DeskErrorJson;
	/** remember, answer, post: the marker text that names what it wrote. */
	marker?: string;
	/** decide, post: the run. */
	run?: string;
	/** answer: the report. */
	report?: string;
	/** Sent through the `desk` command line (and sent again through it), not JSON-RPC. */
	face?: 'cli';
	/** Being sent now (by another window, or the command line): not sent again meanwhile. */
	inFlight?: boolean;
}

it(
	'SIGKILLs of the server while branches fork, report and land, and memory is remembered: every guarantee holds',
	{
		timeout: 170_000,
	},
	async (t) => {
		const seed = process.env['LINEAGE_CHAOS_SEED']
			? Number(process.env['LINEAGE_CHAOS_SEED'])
			: Math.floor(Math.random() * 2 ** 31);
		t.diagnostic(`LINEAGE_CHAOS_SEED=${seed}`);
		await chaos(t, seed);
	},
);

async function chaos(t: TestContext, seed: number): Promise<void> {
	const random = seededRandom(seed);
	const began = Date.now();
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const library = path.join(root, 'library');
	const memoryFile = path.join(repo, '.desk-memory', 'main.json');
	const sent: Sent[] = [];
	const stats = {
		rounds: 0,
		timeKills: 0,
		pointKills: new Map<string, number>(),
		resent: 0,
		windows: 0,
		cli: 0,
		cliKilled: 0,
		catchUps: 0,
	};

	/** Settings of one prompted branch: its agent writes a file, branches once through its tool, posts a note. */
	const promptSettings = (n: number): RunSettings => {
		// Side by side in worktrees, or one after another in the shared checkout (landing on HEAD).
		const isolation = random.chance(0.5) ? ('worktree' as const) : ('shared' as const);
		const settings = scriptedAgentSettings({
			sleepMs: random.int(0, 1200),
			// The prompted branch's agent is the scenario's first attempt; the branch it starts, the second.
			firstAttemptWrites: [{ path: `chaos/p${n}.txt`, content: `prompt ${n}\n` }],
			writes: [{ path: `chaos/p${n}-sub.txt`, content: `sub of ${n}\n` }],
			deskTools: [
				{ tool: 'branch', args: { repo, prompt: `Sub-branch of ${n}`, request_id: `chaos-sub-${n}` } },
				{ tool: 'board_post', args: { text: `note from a branch of prompt ${n}`, request_id: `chaos-note-${n}` } },
			],
		});
		return {
			...settings,
			lineage: {
				...settings.lineage,
				branch: { isolation },
				limits: { ...settings.lineage.limits, maxDepth: 2, maxBranchesPerNode: 50, maxLiveBranches: 12 },
			},
		};
	};
	// The person's settings when deciding: a landing is memorized by the summary agent (a scripted
	// agent answering one memory), in the background of the decision.
	const summary = scriptedAgentSettings({
		answers: [JSON.stringify({ ops: [{ op: 'add', title: 'A landing', text: 'Chaos work landed.' }] })],
	});
	const deciding: RunSettings = {
		...summary,
		lineage: { ...summary.lineage, summaryAgent: summary.agents[0]!.name, memorizeOnLanding: true },
	};

	let prompts = 0;
	let memories = 0;
	const decided = new Map<string, number>();
	const newPrompt = (): Sent => {
		prompts += 1;
		const id = `chaos-${seed}-prompt-${prompts}`;
		const params: ParamsOf<typeof PromptLineage> = {
			project: 'shop',
			root: 'main',
			prompt: `Chaos prompt ${prompts}`,
			settings: promptSettings(prompts),
			requestId: id,
		};
		return { kind: 'prompt', id, definition: PromptLineage, params, sends: 0 };
	};
	const newRemember = (face?: 'cli'): Sent => {
		memories += 1;
		const marker = `chaos-marker-${seed}-${memories}`;
		const id = `chaos-${seed}-remember-${memories}`;
		const params: ParamsOf<typeof RememberMemory> = {
			project: 'shop',
			root: 'main',
			title: `Chaos ${memories}`,
			text: `Remembered in the chaos loop: ${marker}.`,
			requestId: id,
		};
		return { kind: 'remember', id, definition: RememberMemory, params, sends: 0, marker, ...(face ? { face } : {}) };
	};
	const newDecision = (run: string, decision: 'commit' | 'abandon'): Sent => {
		const count = (decided.get(run) ?? 0) + 1;
		decided.set(run, count);
		const id = `chaos-${seed}-decide-${run}-${count}`;
		const params: ParamsOf<typeof DecideRun> = {
			project: 'shop',
			run,
			decision,
			rationale: `chaos ${decision}`,
			settings: deciding,
			requestId: id,
		};
		return { kind: 'decide', id, definition: DecideRun, params, sends: 0, run };
	};

	let answers = 0;
	/** The person's one answer to a report delivered to the tally that has none (and none asked for). */
	const pickAnswer = async (server: RunningServer): Promise<Sent | undefined> => {
		const tree = await attempt(server, LineageTreeRequest, { project: 'shop' });
		const tally = 'answer' in tree ? tree.answer.roots[0]?.tally : undefined;
		if (tally === undefined) {
			return undefined;
		}
		const board = await attempt(server, ListBoard, { project: 'shop', node: tally });
		if (!('answer' in board)) {
			return undefined;
		}
		const reports = board.answer.messages.filter(
			(m) => m.kind === 'report' && m.answered_by === undefined && !sent.some((s) => s.report === m.id),
		);
		if (reports.length === 0) {
			return undefined;
		}
		const report = random.pick(reports).id;
		answers += 1;
		const marker = `chaos-answer-${seed}-${answers}`;
		const id = `chaos-${seed}-answer-${answers}`;
		const params: ParamsOf<typeof AnswerReport> = {
			project: 'shop',
			report,
			text: `Thanks: ${marker}.`,
			requestId: id,
		};
		return { kind: 'answer', id, definition: AnswerReport, params, sends: 0, marker, report };
	};
	let posts = 0;
	/** A note posted from the editor for a branch's run to its starter (passive). */
	const pickPost = async (server: RunningServer, rng = random): Promise<Sent | undefined> => {
		const tree = await attempt(server, LineageTreeRequest, { project: 'shop' });
		if (!('answer' in tree)) {
			return undefined;
		}
		const runs = branchesOf(tree.answer).flatMap((b) => b.runs.map((r) => r.id));
		if (runs.length === 0) {
			return undefined;
		}
		const run = rng.pick(runs);
		posts += 1;
		const marker = `chaos-post-${seed}-${posts}`;
		const id = `chaos-${seed}-post-${posts}`;
		const params: ParamsOf<typeof PostToBoard> = { project: 'shop', run, text: `Note: ${marker}.`, requestId: id };
		return { kind: 'post', id, definition: PostToBoard, params, sends: 0, marker, run };
	};

	const send = async (server: RunningServer, request: Sent): Promise<Outcome<unknown>> => {
		if (request.sends > 0) {
			stats.resent += 1;
		}
		request.sends += 1;
		const t0 = Date.now();
		request.inFlight = true;
		const outcome = await attempt(server, request.definition, request.params as never).finally(
			() => (request.inFlight = false),
		);
		if (process.env['LINEAGE_CHAOS_DEBUG']) {
			t.diagnostic(
				`  ${request.id} #${request.sends}: ${'answer' in outcome ? 'answered' : 'refused' in outcome ? outcome.refused.code : 'lost'} in ${Date.now() - t0} ms`,
			);
		}
		if ('answer' in outcome) {
			if (request.answer === undefined) {
				request.answer = outcome.answer;
				if (request.kind === 'decide' && (outcome.answer as { commit?: string }).commit !== undefined) {
					await landedNotLive(server, request.run!);
				}
			} else {
				assertSameAnswer(seed, request, outcome.answer);
			}
		} else if ('refused' in outcome) {
			request.refused = outcome.refused;
		}
		return outcome;
	};
	/** Sends a new request (when there is one), then lets `pauseMs` pass. */
	const act = async (server: RunningServer, request: Sent | undefined, pauseMs: number): Promise<void> => {
		if (request) {
			sent.push(request);
			await send(server, request);
		}
		await new Promise((r) => setTimeout(r, pauseMs));
	};
	const open = (face?: 'cli'): Sent[] =>
		sent.filter((s) => s.answer === undefined && s.refused === undefined && !s.inFlight && s.face === face);

	/** A remember through `desk memory remember`, killed after `killAfterMs` when given. */
	const sendCli = async (request: Sent, killAfterMs?: number): Promise<void> => {
		if (request.sends > 0) {
			stats.resent += 1;
		}
		request.sends += 1;
		request.inFlight = true;
		const params = request.params as ParamsOf<typeof RememberMemory>;
		const ran = await deskInBackground(
			['--store', library, '--repo', repo, '--json', 'memory', 'remember', 'main', params.text].concat([
				'--title',
				params.title!,
				'--request-id',
				request.id,
			]),
			killAfterMs,
		).finally(() => (request.inFlight = false));
		stats.cli += 1;
		if (ran.signal === 'SIGKILL') {
			stats.cliKilled += 1;
			return;
		}
		if (ran.code === 0) {
			const answer: unknown = JSON.parse(ran.stdout);
			if (request.answer === undefined) {
				request.answer = answer;
			} else {
				assertSameAnswer(seed, request, answer);
			}
			return;
		}
		const code = /"code":\s*"([a-zA-Z]+\.[a-zA-Z]+)"/.exec(ran.stdout + ran.stderr)?.[1];
		assert.ok(ran.code === 2 && code, `seed ${seed}: desk memory remember ${request.id}: ${ran.code} ${ran.stderr}`);
		// Another writer holding the root's lock is worth another try, as a person would.
		if (code !== 'memory.locked') {
			request.refused = { code, message: ran.stderr } as DeskErrorJson;
		}
	};

	/**
	 * The other writers of a round (glossary: Project memory: one queue for every window and the
	 * command line): `desk memory remember` processes, some killed at random; in one round of two a
	 * second window (another server on the same library) that remembers and posts until it is killed.
	 */
	const otherRandom = seededRandom(seed ^ 0x5bd1e995);
	let otherWindow: RunningServer | undefined;
	const companions = async (): Promise<void> => {
		const kill = () => (otherRandom.chance(0.5) ? otherRandom.int(200, 2500) : undefined);
		const jobs: Array<Promise<unknown>> = open('cli').map((request) => sendCli(request, kill()));
		for (let n = otherRandom.int(0, 2); n > 0; n -= 1) {
			const request = newRemember('cli');
			sent.push(request);
			jobs.push(sendCli(request, kill()));
		}
		if (otherRandom.chance(0.5)) {
			jobs.push(
				(async () => {
					const other = await startServer(library);
					otherWindow = other;
					stats.windows += 1;
					const timer = setTimeout(() => other.child.kill('SIGKILL'), otherRandom.int(1500, 7000));
					try {
						const opened = await attempt(other, OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
						while (!('lost' in opened) && isAlive(other)) {
							const request = otherRandom.chance(0.6) ? newRemember() : await pickPost(other, otherRandom);
							await act(other, request, otherRandom.int(100, 500));
						}
					} finally {
						clearTimeout(timer);
					}
					await other.exited;
					other.connection.dispose();
				})(),
			);
		}
		await Promise.all(jobs);
	};

	/** Branches of the tree, children included. */
	const branchesOf = (tree: LineageTree): LineageTreeNode[] => {
		const all: LineageTreeNode[] = [];
		const walk = (nodes: LineageTreeNode[]) => {
			for (const node of nodes) {
				all.push(node);
				walk(node.children);
			}
		};
		for (const r of tree.roots) {
			walk(r.branches);
		}
		return all;
	};
	/** A decision on a run at the gate that has none yet (or whose commit was refused: then abandon it). */
	let lastStates = '';
	/** Titles of the branches and the branch of each run, as the trees showed them. */
	const titles = new Map<string, string>();
	const nodeOfRun = new Map<string, string>();
	/** Branches working or waiting, as the last tree showed them: no new prompt while four are. */
	let live = 0;
	/**
	 * G3: a catch-up composed after a landing (for another branch's run) does not show the landed
	 * branch among those working now, even when the target's tip did not move (a worktree branch
	 * lands on its own git branch) and the saved section could be reused.
	 */
	const landedNotLive = async (server: RunningServer, landedRun: string): Promise<void> => {
		const landed = nodeOfRun.get(landedRun);
		const others = [...nodeOfRun].filter(([, node]) => node !== landed).map(([run]) => run);
		if (landed === undefined || others.length === 0) {
			return;
		}
		const section = await attempt(server, LineageCatchUp, { project: 'shop', run: random.pick(others) });
		if (!('answer' in section)) {
			return;
		}
		stats.catchUps += 1;
		const working = workingNow(section.answer.tally);
		assert.ok(
			!working.some((line) => line.startsWith(`- ${titles.get(landed)!}:`)),
			`seed ${seed}: ${titles.get(landed)!} landed (run ${landedRun}) and is still shown working:\n${section.answer.tally}`,
		);
	};
	const pickDecision = async (server: RunningServer, final: boolean): Promise<Sent | undefined> => {
		const tree = await attempt(server, LineageTreeRequest, { project: 'shop' });
		if (!('answer' in tree)) {
			return undefined;
		}
		const states: Record<string, number> = {};
		for (const b of branchesOf(tree.answer)) {
			states[b.state] = (states[b.state] ?? 0) + 1;
		}
		lastStates = JSON.stringify(states);
		for (const b of branchesOf(tree.answer)) {
			titles.set(b.node.node, b.title);
			for (const r of b.runs) {
				nodeOfRun.set(r.id, b.node.node);
			}
		}
		live = (states['running'] ?? 0) + (states['queued'] ?? 0);
		const waiting = branchesOf(tree.answer).filter((b) => b.state === 'gate');
		const candidates = waiting
			.map((b) => b.runs[b.runs.length - 1]!.id)
			.filter((run) => !sent.some((s) => s.run === run && s.answer === undefined && s.refused === undefined))
			.filter((run) => (decided.get(run) ?? 0) < 2);
		if (candidates.length === 0) {
			return undefined;
		}
		const run = final ? candidates[0]! : random.pick(candidates);
		const refusedBefore = sent.some((s) => s.run === run && s.refused !== undefined);
		return newDecision(run, refusedBefore || random.chance(0.35) ? 'abandon' : 'commit');
	};

	const checkMemoryFile = (when: string) => {
		if (!fs.existsSync(memoryFile)) {
			return;
		}
		const text = fs.readFileSync(memoryFile, 'utf8');
		try {
			JSON.parse(text);
		} catch (error) {
			assert.fail(`seed ${seed}: .desk-memory/main.json is not JSON ${when}: ${(error as Error).message}`);
		}
	};

	// The killing rounds.
	while (stats.rounds < maxRounds && Date.now() - began < loopMs) {
		stats.rounds += 1;
		const point = random.chance(0.4) ? random.pick(armable) : undefined;
		const killAfterMs = random.int(200, 6000);
		const server = await startServer(library, {
			env: { ...process.env, ...(point ? { DESK_TEST_FAULTS: point } : {}) },
		});
		let byTimer = false;
		let timer: NodeJS.Timeout | undefined;
		let others: Promise<void> = Promise.resolve();
		try {
			const t0 = Date.now();
			const opened = await attempt(server, OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
			// The moment of the kill counts from the open: a start takes a second of a loaded machine.
			timer = setTimeout(() => {
				byTimer = true;
				server.child.kill('SIGKILL');
			}, killAfterMs);
			if (process.env['LINEAGE_CHAOS_DEBUG']) {
				t.diagnostic(`round ${stats.rounds + 0}: open ${'lost' in opened ? 'lost' : 'ok'} in ${Date.now() - t0} ms`);
			}
			if (!('lost' in opened)) {
				// First what the last server did not answer, with the same ids; then something new.
				for (const request of open()) {
					if (!isAlive(server) || 'lost' in (await send(server, request))) {
						break;
					}
				}
				others = companions();
				while (isAlive(server)) {
					const roll = random.next();
					let request: Sent | undefined;
					if (roll < 0.5) {
						request = await pickDecision(server, false);
					} else if (roll < 0.7) {
						request = live < 4 ? newPrompt() : undefined;
					} else if (roll < 0.8) {
						request = newRemember();
					} else if (roll < 0.9) {
						request = await pickAnswer(server);
					} else {
						request = await pickPost(server);
					}
					await act(server, request, random.int(50, 400));
				}
			}
		} finally {
			clearTimeout(timer);
		}
		const { signal } = await server.exited;
		server.connection.dispose();
		// The other window dies with this round (if its own moment did not come first).
		otherWindow?.child.kill('SIGKILL');
		await others;
		otherWindow = undefined;
		assert.equal(signal, 'SIGKILL', `seed ${seed}: round ${stats.rounds} ended by a kill\n${server.stderr()}`);
		if (point && !byTimer) {
			stats.pointKills.set(point, (stats.pointKills.get(point) ?? 0) + 1);
		} else {
			stats.timeKills += 1;
		}
		checkMemoryFile(`after round ${stats.rounds}`);
		if (process.env['LINEAGE_CHAOS_DEBUG']) {
			const ends = server.notifications
				.filter((n) => n.method === RunDidFinish.method)
				.map((n) => (n.params as { status: string }).status);
			t.diagnostic(
				`round ${stats.rounds}: ${point ?? 'timer'} ${killAfterMs} ms ${byTimer ? 'by timer' : 'at the point'}; runs ended: ${ends.join(',')}; open ${open().length}; states ${lastStates}`,
			);
		}
	}
	const loopEnded = Date.now();

	// Settling: a server nobody kills answers what is open and carries every branch to its end.
	const settle = await startServer(library);
	await settle.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	for (const request of open()) {
		const outcome = await send(settle, request);
		assert.ok(!('lost' in outcome), `seed ${seed}: ${request.id} answered by the settling server`);
	}
	for (let tries = 0; open('cli').length > 0; tries += 1) {
		assert.ok(
			tries < 5,
			`seed ${seed}: the command line answers ${open('cli')
				.map((r) => r.id)
				.join(', ')}`,
		);
		for (const request of open('cli')) {
			await sendCli(request);
		}
	}
	const settleBy = Date.now() + 40_000;
	let settled: LineageTreeNode[];
	for (;;) {
		const tree = await settle.call(LineageTreeRequest, { project: 'shop' });
		const branches = branchesOf(tree);
		settled = branches;
		const decision = await pickDecision(settle, true);
		if (decision) {
			sent.push(decision);
			await send(settle, decision);
			continue;
		}
		if (branches.every((b) => ['landed', 'abandoned', 'failed'].includes(b.state))) {
			break;
		}
		assert.ok(
			Date.now() < settleBy,
			`seed ${seed}: branches still working: ${JSON.stringify(branches.map((b) => [b.node.node, b.state]))}`,
		);
		await new Promise((r) => setTimeout(r, 200));
	}
	// Every branch's work ended: a catch-up shows none of them working.
	for (const run of [...nodeOfRun.keys()].slice(-3)) {
		const section = await settle.call(LineageCatchUp, { project: 'shop', run });
		assert.deepEqual(workingNow(section.tally), [], `seed ${seed}: nothing works now:\n${section.tally}`);
	}
	// Every answered request once more: the same answer, nothing made again.
	for (const request of sent.filter((s) => s.answer !== undefined)) {
		const outcome = await send(settle, request);
		assert.ok('answer' in outcome, `seed ${seed}: ${request.id} answered again: ${JSON.stringify(outcome)}`);
	}
	await settle.stop();
	// A clean restart: recovery runs over a settled project and must add nothing.
	const last = await startServer(library);
	await last.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	const finalTree = await last.call(LineageTreeRequest, { project: 'shop' });
	await last.stop();
	assert.deepEqual(
		branchesOf(finalTree).map((b) => [b.node.node, b.state, b.runs.length]),
		settled.map((b) => [b.node.node, b.state, b.runs.length]),
		`seed ${seed}: a clean restart changes no branch`,
	);
	checkMemoryFile('at the end');

	t.diagnostic(
		`seed ${seed}: ${stats.rounds} rounds in ${((loopEnded - began) / 1000).toFixed(1)} s (${stats.timeKills} kills by time, ` +
			`by point: ${JSON.stringify(Object.fromEntries(stats.pointKills))}), ${sent.length} requests ` +
			`(${sent.filter((s) => s.kind === 'prompt').length} prompts, ${sent.filter((s) => s.kind === 'decide').length} decisions, ` +
			`${sent.filter((s) => s.kind === 'remember').length} remembers, ${sent.filter((s) => s.kind === 'answer').length} answers, ` +
			`${sent.filter((s) => s.kind === 'post').length} posts; ${stats.windows} second windows, ` +
			`${stats.catchUps} catch-ups after a landing, ` +
			`${stats.cli} desk memory remember (${stats.cliKilled} killed)), ${stats.resent} sent again, ` +
			`${branchesOf(finalTree).length} branches; total ${((Date.now() - began) / 1000).toFixed(1)} s`,
	);

	const memorized = await checkInvariants({ seed, repo, sent, memoryFile });
	t.diagnostic(`seed ${seed}: ${memorized} landings memorized`);
}

/** The lines of a tally section listed under "Working now". */
function workingNow(section: string): string[] {
	const lines = section.split('\n');
	const start = lines.indexOf('### Working now');
	if (start < 0) {
		return [];
	}
	const end = lines.findIndex((line, i) => i > start && line.startsWith('#'));
	return lines.slice(start + 1, end < 0 ? undefined : end).filter((line) => line.startsWith('- '));
}

function assertSameAnswer(seed: number, request: Sent, again: unknown): void {
	const first = request.answer as Record<string, unknown>;
	const second = again as Record<string, unknown>;
	if (request.kind === 'prompt') {
		const a = first as unknown as BranchResult;
		const b = second as unknown as BranchResult;
		assert.deepEqual(
			[b.node, b.run, b.tally, b.replayed],
			[a.node, a.run, a.tally, true],
			`seed ${seed}: ${request.id}: the same branch again, replayed`,
		);
	} else if (request.kind === 'remember') {
		assert.equal(second['added'], first['added'], `seed ${seed}: ${request.id}: the same memory again`);
		assert.equal(second['replayed'], true, `seed ${seed}: ${request.id}: replayed`);
	} else if (request.kind === 'answer' || request.kind === 'post') {
		assert.equal(second['id'], first['id'], `seed ${seed}: ${request.id}: the same message again`);
	} else {
		assert.deepEqual(
			[second['decision'] !== undefined, second['commit']],
			[first['decision'] !== undefined, first['commit']],
			`seed ${seed}: ${request.id}: the same decision again`,
		);
	}
}

interface Invariants {
	seed: number;
	repo: string;
	sent: Sent[];
	memoryFile: string;
}

/** Checks the guarantees; returns how many landings were memorized. */
async function checkInvariants({ seed, repo, sent, memoryFile }: Invariants): Promise<number> {
	const db = await DurableDatabase.open({
		file: path.join(repo, '.desk', 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
	});
	const say = (what: string) => `seed ${seed}: ${what}`;
	try {
		const nodes = db.all<{
			node_id: string;
			kind: string;
			starter_node: string | null;
			starter_run: string | null;
			fork_of: string | null;
			depth: number;
		}>('SELECT node_id, kind, starter_node, starter_run, fork_of, depth FROM lineage_nodes');
		const branches = nodes.filter((n) => n.kind === 'branch');
		const receipts = db.all<{ scope: string; request_key: string; tool: string; result: string }>(
			"SELECT scope, request_key, tool, result FROM call_receipts WHERE tool IN ('prompt', 'branch')",
		);
		const messages = db.all<{
			message_id: string;
			node: string;
			kind: string;
			request_id: string;
			from_node: string | null;
			from_run: string | null;
			passive: number;
			frozen: number;
			superseded_by: string | null;
			in_reply_to: string | null;
			text: string;
		}>(
			'SELECT message_id, node, kind, request_id, from_node, from_run, passive, frozen, superseded_by, in_reply_to, text FROM board_messages',
		);
		const deliveries = db.all<{ delivery_id: string; phase: string }>(
			'SELECT delivery_id, phase FROM board_deliveries',
		);

		// G1: per (scope, request key) one child; every branch made by exactly one receipt, with one
		// board.started.by, one input and the input's delivery phase.
		const byNode = new Map<string, number>();
		for (const receipt of receipts) {
			const node = (JSON.parse(receipt.result) as BranchResult).node;
			byNode.set(node, (byNode.get(node) ?? 0) + 1);
			assert.ok(
				branches.some((b) => b.node_id === node),
				say(`receipt ${receipt.scope}/${receipt.request_key} names branch ${node}, which is not there`),
			);
		}
		for (const branch of branches) {
			const id = branch.node_id;
			assert.equal(byNode.get(id), 1, say(`branch ${id} made by exactly one receipt (${byNode.get(id) ?? 0})`));
			const count = (kind: string) => messages.filter((m) => m.node === id && m.kind === kind).length;
			assert.equal(count('board.started.by'), 1, say(`one board.started.by on ${id}`));
			assert.equal(count('input'), 1, say(`one input on ${id}`));
			assert.equal(
				deliveries.filter((d) => d.delivery_id === `dlv:${id}` && d.phase === 'input').length,
				1,
				say(`the input of ${id} delivered once`),
			);
		}
		// Each agent calls `branch` with one request id: a starter has at most one branch.
		for (const starter of new Set(branches.map((b) => b.starter_node).filter((s) => s !== null))) {
			const children = branches.filter((b) => b.starter_node === starter && b.starter_run !== null);
			assert.ok(children.length <= 1, say(`one branch per request id of ${starter}: ${children.length}`));
		}
		// Every prompt answered is there, under the branch first answered; none more than requested.
		const prompts = sent.filter((s) => s.kind === 'prompt');
		for (const prompt of prompts.filter((p) => p.answer !== undefined)) {
			const node = (prompt.answer as BranchResult).node;
			assert.ok(
				branches.some((b) => b.node_id === node && b.starter_run === null),
				say(`${prompt.id}'s branch ${node} is there`),
			);
		}
		const personBranches = branches.filter((b) => b.starter_run === null);
		assert.ok(personBranches.length <= prompts.length, say('no more person branches than prompts'));
		assert.equal(
			personBranches.length,
			prompts.filter((p) => p.answer !== undefined).length,
			say('every prompt that made a branch was answered with it (after the settling re-sends)'),
		);

		// G3: each Desk-Run commit of git log ↔ one decision that answered it.
		// Worktree branches land on their own git branches: every ref counts.
		const log = git(repo, 'log', '--all', '--format=%H%x01%B%x02');
		const landedRuns = new Map<string, string>();
		for (const entry of log.split('\x02')) {
			const [hash, body] = entry.trim().split('\x01');
			const run = /^Desk-Run: (\S+)$/m.exec(body ?? '')?.[1];
			if (hash && run) {
				assert.ok(!landedRuns.has(run), say(`run ${run} landed twice: ${landedRuns.get(run)} and ${hash}`));
				landedRuns.set(run, hash);
			}
		}
		const commits = sent.filter(
			(s) => s.kind === 'decide' && (s.answer as { commit?: string } | undefined)?.commit !== undefined,
		);
		for (const decision of commits) {
			assert.equal(
				landedRuns.get(decision.run!),
				(decision.answer as { commit: string }).commit,
				say(`the commit answered for ${decision.run} is in git log`),
			);
		}
		for (const [run] of landedRuns) {
			assert.ok(
				commits.some((c) => c.run === run),
				say(
					`commit of run ${run} was answered to a decision: ${JSON.stringify(sent.filter((c) => c.run === run).map((c) => [c.id, c.sends, c.answer, c.refused]))}`,
				),
			);
		}
		// ... and one `landed` entry on its tally, the branch's abstract frozen; none without its commit.
		for (const [run, hash] of landedRuns) {
			const landed = messages.filter((m) => m.kind === 'landed' && m.request_id === `land:${run}`);
			assert.equal(landed.length, 1, say(`one landed entry for ${run} (${hash})`));
			const branch = landed[0]!.from_node;
			const liquid = messages.filter(
				(m) => m.kind === 'abstract' && m.from_node === branch && m.superseded_by === null && m.frozen === 0,
			);
			assert.deepEqual(liquid, [], say(`the abstract of ${branch ?? run}, landed, is frozen`));
		}
		assert.equal(
			messages.filter((m) => m.kind === 'landed').length,
			landedRuns.size,
			say('no landed entry without its commit'),
		);

		// G2: per branch one report on its board and one delivered, active, on its starter's: the
		// settling decided every run at the gate, so every branch's work has ended.
		for (const branch of branches) {
			const id = branch.node_id;
			const own = messages.filter((m) => m.node === id && m.kind === 'report' && m.from_node === id);
			const delivered = messages.filter((m) => m.kind === 'report' && m.node !== id && m.from_node === id);
			// A person's branch reports to its root's tally, an agent's to its starter's node.
			const starterBoard = branch.starter_node ?? branch.fork_of;
			const phases = deliveries.filter((d) => d.delivery_id === `dlv:${id}`).map((d) => d.phase);
			assert.equal(own.length, 1, say(`branch ${id} reported once on its board`));
			assert.equal(delivered.length, 1, say(`branch ${id}'s report delivered once`));
			assert.equal(delivered[0]!.passive, 0, say(`branch ${id}'s report is active`));
			assert.equal(delivered[0]!.node, starterBoard, say(`branch ${id}'s report is on its starter's board`));
			assert.deepEqual(phases.sort(), ['delivered', 'input', 'reply'], say(`branch ${id}: each phase once`));
		}

		// G6: one answer at most per report, so per branch edge; G5: each answer and note the person
		// was answered is there once, each one sent (answered or not) at most once.
		for (const branch of branches) {
			const answersTo = messages.filter((m) => m.node === branch.node_id && m.kind === 'answer');
			assert.ok(answersTo.length <= 1, say(`branch ${branch.node_id} answered at most once: ${answersTo.length}`));
		}
		for (const request of sent.filter((s) => s.kind === 'answer' || s.kind === 'post')) {
			const holding = messages.filter((m) => m.text.includes(`${request.marker!}.`));
			assert.ok(holding.length <= 1, say(`${request.id} written at most once: ${holding.length}`));
			if (request.answer !== undefined) {
				const id = (request.answer as { id: string }).id;
				assert.deepEqual(
					holding.map((m) => [m.message_id, m.kind, m.passive]),
					[[id, request.kind === 'answer' ? 'answer' : 'note', request.kind === 'answer' ? 0 : 1]],
					say(`${request.id}, answered, is on the board`),
				);
			}
		}

		// G5 for the agents: what their desk tools answered (the last agent of each scenario that
		// finished wrote it down) is there: the branch it was given, the note it posted.
		for (const prompt of sent.filter((s) => s.kind === 'prompt')) {
			const settings = (prompt.params as ParamsOf<typeof PromptLineage>).settings as RunSettings;
			const logFile = `${settings.agents[0]!.args[1]!}.desk-tools.json`;
			if (!fs.existsSync(logFile)) {
				continue;
			}
			for (const step of deskToolAnswers(settings).slice(1) as Array<{
				tool: string;
				answer?: { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
			}>) {
				const result = step.answer?.result;
				if (!result || result.isError) {
					continue;
				}
				if (step.tool === 'branch') {
					const node = (result.structuredContent as unknown as BranchResult).node;
					assert.ok(
						branches.some((b) => b.node_id === node),
						say(`the branch ${node} an agent was given is there`),
					);
				} else if (step.tool === 'board_post') {
					const id = (result.structuredContent as { id: string }).id;
					assert.ok(
						messages.some((m) => m.message_id === id && m.kind === 'note' && m.passive === 1),
						say(`the note ${id} an agent posted is there, passive`),
					);
				}
			}
		}

		// G4, G5: the memory file parses; each request id once; each answered remember's memory once.
		{
			const remembers = sent.filter((s) => s.kind === 'remember');
			const text = fs.existsSync(memoryFile) ? fs.readFileSync(memoryFile, 'utf8') : undefined;
			if (remembers.some((r) => r.answer !== undefined)) {
				assert.ok(text !== undefined, say('the memory file is there'));
			}
			const file =
				text === undefined
					? undefined
					: (JSON.parse(text) as {
							memories: Record<string, { text: string; source?: { kind: string; run?: string } }>;
							requests: Record<string, unknown>;
						});
			const queue = db.all<{ request_id: string }>('SELECT request_id FROM memory_queue');
			assert.deepEqual(queue, [], say('the memory queue is drained'));
			for (const remember of remembers) {
				const holding = Object.entries(file?.memories ?? {}).filter(([, m]) => m.text.includes(`${remember.marker!}.`));
				const keyed = Object.keys(file?.requests ?? {}).filter((k) => k.endsWith(remember.id));
				const raw = text?.split(`${remember.id}"`).length ?? 1;
				assert.ok(holding.length <= 1, say(`${remember.id} applied at most once: ${holding.length}`));
				assert.ok(keyed.length <= 1 && raw - 1 <= 1, say(`${remember.id} once in requests`));
				if (remember.answer !== undefined) {
					assert.equal(holding.length, 1, say(`${remember.id}, answered, is remembered`));
					assert.equal(holding[0]![0], (remember.answer as { added: string }).added, say(`${remember.id}: its id`));
					assert.equal(keyed.length, 1, say(`${remember.id}'s receipt is in requests`));
				}
			}
			// A landing memorized once at most (its receipt land:<run>), and only a landing that landed.
			const memorized = Object.values(file?.memories ?? {}).filter((m) => m.source?.kind === 'landing');
			for (const memory of memorized) {
				assert.ok(landedRuns.has(memory.source!.run!), say(`memorized ${memory.source!.run!}, which landed`));
			}
			for (const [run] of landedRuns) {
				const count = memorized.filter((m) => m.source!.run === run).length;
				assert.ok(count <= 1, say(`the landing of ${run} memorized at most once: ${count}`));
				assert.ok((text?.split(`land:${run}"`).length ?? 1) - 1 <= 1, say(`land:${run} once in requests`));
			}
			return memorized.length;
		}
	} finally {
		db.close();
	}
}

/**
 * The window the loop found: the gate stores the Decision, the lineage's landing hook (and the
 * branch's report) follows, and only then is the request's answer recorded. A desk killed in between
 * has decided; the same request id sent again must be answered from the Decision, not refused.
 */
for (const [point, decision] of [
	['land.afterDecision.beforeNote', 'commit'],
	['delivery.afterDeliver', 'abandon'],
] as const) {
	it(`a decision (${decision}) re-sent with its request id after a SIGKILL at ${point} is answered with its result`, async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const library = path.join(root, 'library');
		const folders = [{ name: 'shop', path: repo }];
		const first = await startServer(library);
		await first.call(OpenWorkspace, { folders });
		const branch = await first.call(PromptLineage, {
			project: 'shop',
			root: 'main',
			prompt: 'Write d.txt',
			settings: scriptedAgentSettings({ writes: [{ path: 'd.txt', content: 'd\n' }] }),
			requestId: 'decide-window-prompt',
		});
		const end = await first.notified(RunDidFinish, (f) => f.run === branch.run, 'the branch at the gate');
		assert.equal(end.status, 'gate', end.error);
		await first.stop();
		const params = { project: 'shop', run: branch.run, decision, rationale: 'ok', requestId: 'decide-window-0001' };
		const killed = await startServer(library, { env: { ...process.env, DESK_TEST_FAULTS: point } });
		await killed.call(OpenWorkspace, { folders });
		const lost = await attempt(killed, DecideRun, params);
		assert.ok('lost' in lost, `the desk died at ${point}: ${JSON.stringify(lost)}`);
		assert.equal((await killed.exited).signal, 'SIGKILL');
		killed.connection.dispose();
		const again = await startServer(library);
		try {
			await again.call(OpenWorkspace, { folders });
			const answer = await attempt(again, DecideRun, params);
			assert.ok('answer' in answer, `the stored answer, not ${JSON.stringify(answer)}`);
			assert.equal(answer.answer.decision.decision_type, decision);
			if (decision === 'commit') {
				assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`Desk-Run: ${branch.run}`));
				assert.equal(answer.answer.commit, git(repo, 'rev-parse', 'HEAD'));
			}
		} finally {
			await again.stop();
		}
	});
}

it("an agent's branch call killed at branch.afterCommit: one child, started by the desk that follows the run; a Retry asking again is answered with it", async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const library = path.join(root, 'library');
	const folders = [{ name: 'shop', path: repo }];
	// The starter's agent branches through its tool; the branch's own agent (`child`) writes a file.
	const starter = scriptedAgentSettings({
		writes: [{ path: 'starter.txt', content: 'starter\n' }],
		deskTools: [{ tool: 'branch', args: { repo, prompt: 'Write child.txt', request_id: 'agent-sub-kill-1' } }],
	});
	const child = {
		...scriptedAgentSettings({ writes: [{ path: 'child.txt', content: 'child\n' }] }).agents[0]!,
		name: 'child',
	};
	const settings: RunSettings = {
		...starter,
		isolation: 'worktree',
		agents: [...starter.agents, child],
		lineage: { ...starter.lineage, branch: { agent: 'child', isolation: 'worktree' } },
	};
	// The desk serving the agent's call is the run's carrier (glossary: Carrier), which inherits the
	// kill point: it dies right after the fork's transaction, before the agent hears of it (the agent,
	// in its sandbox, dies with it). The window's desk follows the run: it finds the carrier gone,
	// fails the run, and starts the branch the dead carrier forked.
	const killed = await startServer(library, { env: { ...process.env, DESK_TEST_FAULTS: 'branch.afterCommit' } });
	await killed.call(OpenWorkspace, { folders });
	await killed.call(SetTicket, { project: 'shop', ticket: 'Write starter.txt and start a branch' });
	const go = await killed.call(LaunchGo, { project: 'shop', settings });
	const starterEnd = await killed.notified(RunDidFinish, (f) => f.run === go.run, 'the starter to fail');
	assert.match(starterEnd.error ?? '', /^the desk stopped while the run was patching/);
	await killed.stop();

	// Its branch's carrier goes on without that desk; the next one (no kill point armed) follows it.
	const server = await startServer(library);
	try {
		await server.call(OpenWorkspace, { folders });
		const tree = await server.call(LineageTreeRequest, { project: 'shop' });
		const forked = tree.by_starter_run[go.run] ?? [];
		assert.equal(forked.length, 1, `one branch of the killed run: ${JSON.stringify(tree.by_starter_run)}`);
		const branch = tree.roots[0]!.branches.find((b) => b.node.node === forked[0])!;
		assert.equal(branch.runs.length, 1);
		// The branch the dead carrier forked was started, and its run goes to the gate.
		const child = branch.runs[0]!.id;
		for (let i = 0; i < 600; i++) {
			const shown = (await server.call(ShowRun, { project: 'shop', id: child })).summary;
			if (shown.at_gate || shown.status === 'failed') {
				assert.ok(shown.at_gate, shown.error);
				break;
			}
			assert.ok(i < 599, 'the branch reaches the gate');
			await new Promise((r) => setTimeout(r, 100));
		}
		assert.equal((await server.call(ShowRun, { project: 'shop', id: go.run })).summary.status, 'failed');

		// A Retry of the starter asks for the same branch (its task's request id): the same child, replayed.
		const retry = await server.call(DecideRun, {
			project: 'shop',
			run: go.run,
			decision: 'retry',
			settings,
			requestId: 'agent-sub-kill-retry',
		});
		const end = await server.notified(RunDidFinish, (f) => f.run === retry.new_run, 'the retry to finish');
		assert.equal(end.status, 'gate', end.error);
		const [, asked] = deskToolAnswers(settings) as [
			unknown,
			{ answer: { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } } },
		];
		const answered = asked.answer.result?.structuredContent as unknown as BranchResult | undefined;
		assert.deepEqual(
			[answered?.node, answered?.replayed],
			[branch.node.node, true],
			`the retry's branch call: ${JSON.stringify(asked.answer)}`,
		);
		const after = await server.call(LineageTreeRequest, { project: 'shop' });
		assert.deepEqual(
			after.roots[0]!.branches.map((b) => [b.node.node, b.runs.length]),
			[[branch.node.node, 1]],
			'still one branch, run once',
		);
	} finally {
		await server.stop();
	}
});
