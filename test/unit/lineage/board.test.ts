/**
 * Boards and deliveries over a real project database (lineage/board.ts, store/sqlBoard.ts): the work
 * end of a branch, passive notes while something is pending, the reply rules, the bounded exchange,
 * the landing note and recovery.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
	actor,
	addPatchSet,
	addRun,
	failRun,
	newDecision,
	newPatchSet,
	newRun,
	newTask,
	setRunStatus,
} from '../../../server/src/ai/model';
import type { Run, Task } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { noFaults, type Faults } from '../../../server/src/core/faults';
import { silentLogger } from '../../../server/src/core/logger';
import { BoardService } from '../../../server/src/lineage/board';
import type { ReportNotice } from '../../../server/src/lineage/boardPorts';
import { AiStore } from '../../../server/src/store/aiStore';
import { DurableDatabase, type WriteTransaction } from '../../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { SqlBoardStore } from '../../../server/src/store/sqlBoard';
import { tempDir } from '../../helpers/temp';

const system = actor('system', 'test');
const config = JSON.stringify({ agent: 'scripted', template: ['work'], isolation: 'shared' });

/** A project with a tally, a starter task with a run, and what each test adds. */
class World {
	readonly reported: ReportNotice[] = [];
	readonly ai: AiStore;
	readonly board: BoardService<WriteTransaction>;
	readonly tally: Task;
	readonly starter: Task;
	readonly starterRun: Run;

	private constructor(
		readonly db: DurableDatabase,
		faults: Faults,
	) {
		this.ai = new AiStore(db);
		this.board = new BoardService(new SqlBoardStore(db), this.ai, {
			faults,
			logger: silentLogger,
			reported: (notice) => this.reported.push(notice),
		});
		this.tally = newTask(system, 'main');
		this.starter = newTask(system, 'Refactor the parser');
		this.starterRun = newRun(system, this.starter, 'c0');
		addRun(this.starter, this.starterRun);
		this.ai.put([this.tally, this.starter, this.starterRun]);
		db.write((tx) => {
			tx.run(
				"INSERT INTO lineage_roots (name, about, listed_at, listed_by, tally_task) VALUES ('main', '', 't', 'test', ?)",
				[this.tally.object_id],
			);
			tx.run(
				"INSERT INTO lineage_nodes (node_id, kind, root, grant_chain, depth, config, created_at) VALUES (?, 'tally', 'main', '[]', 0, ?, 't')",
				[this.tally.object_id, config],
			);
		});
	}

	static async open(faults: Faults = noFaults): Promise<World> {
		const db = await DurableDatabase.open({
			file: path.join(tempDir(), 'project.db'),
			schema: projectSchema,
			migrations: projectMigrations,
			logger: silentLogger,
			lockTimeoutMs: 5_000,
		});
		return new World(db, faults);
	}

	/** A branch started by `by` (a task and its run, or the person), with its input on its board, and its first run. */
	branch(title: string, by?: { task: Task; run: Run }, depth = 1): { task: Task; run: Run } {
		const task = newTask(system, title, by ? { parent: by.task } : {});
		const run = newRun(system, task, 'c0');
		addRun(task, run);
		this.ai.put([task, run]);
		this.db.write((tx) => {
			tx.run(
				"INSERT INTO lineage_nodes (node_id, kind, root, fork_of, starter_node, starter_run, grant_chain, depth, config, created_at) VALUES (?, 'branch', 'main', ?, ?, ?, '[]', ?, ?, ?)",
				[
					task.object_id,
					this.tally.object_id,
					by?.task.object_id ?? null,
					by?.run.object_id ?? null,
					depth,
					config,
					new Date().toISOString(),
				],
			);
			tx.run(
				"INSERT INTO board_messages (message_id, request_id, node, kind, reply_enabled, passive, text, created_at) VALUES (?, ?, ?, 'input', 1, 0, ?, 't')",
				[`in-${task.object_id}`, `dlv:${task.object_id}:in`, task.object_id, title],
			);
			tx.run(
				"INSERT INTO board_deliveries (delivery_id, phase, request_id, message_id, at) VALUES (?, 'input', ?, ?, 't')",
				[`dlv:${task.object_id}`, `dlv:${task.object_id}:in`, `in-${task.object_id}`],
			);
		});
		return { task, run };
	}

	/** The run did its work and waits at the gate with one PatchSet whose rationale is the agent's answer. */
	atGate(run: Run, answer: string): void {
		setRunStatus(run, 'patching');
		const patch = newPatchSet(actor('agent', 'scripted'), run, { rationale: answer });
		patch.touched = [{ path: 'src/parser.ts', change_type: 'modified', lines_added: 3, lines_deleted: 1 }];
		addPatchSet(run, patch);
		setRunStatus(run, 'validating');
		run.tags = { ...run.tags, 'desk.gate': 'waiting' };
		this.ai.put([patch, run]);
		this.board.runFinished(run.object_id);
	}

	/** The gate's Commit: the Decision stored, then the landing hook. */
	land(run: Run, commit = 'abc1234def567890'): void {
		const [chosen] = this.ai.runPatchSets(run);
		setRunStatus(run, 'completed');
		run.tags = { ...run.tags, 'desk.gate': 'decided' };
		this.ai.put([newDecision(system, run, 'commit', { chosen: chosen!, resultCommit: commit }), run]);
		this.board.landed(run.object_id, { subject: 'Split the parser', commit, touched: ['src/parser.ts'] });
	}

	abandon(run: Run, rationale?: string): void {
		if (run.status === 'validating') {
			setRunStatus(run, 'completed');
		}
		this.ai.put([newDecision(system, run, 'abandon', rationale ? { rationale } : {}), run]);
		this.board.decided(run.object_id);
	}

	fail(run: Run, error: string): void {
		setRunStatus(run, 'patching');
		failRun(run, error);
		this.ai.put([run]);
	}

	messages(node: string) {
		return this.board.list(node);
	}

	/** Active reports on a board from `branch` (routed: each raises a notification). */
	routedReports(node: string, branch: string) {
		return this.messages(node).filter(
			(m) => m.kind === 'report' && m.from_node === branch && !m.passive && m.node !== branch,
		);
	}

	close(): void {
		this.db.close();
	}
}

describe('the work end of a branch', () => {
	it('at the gate its final answer is a passive note with no notification; landing it delivers one active report', async () => {
		const world = await World.open();
		try {
			const { task, run } = world.branch('Split the parser', { task: world.starter, run: world.starterRun });
			world.board.nodeEnded({
				run: run.object_id,
				node: 'work',
				attempt: 1,
				ticket: 'Split the parser\nmore',
				summary: 'split lexer.ts',
			});
			world.atGate(run, 'Split lexer.ts out of parser.ts.');
			const notes = world.messages(world.starter.object_id);
			assert.deepEqual(
				notes.map((m) => [m.kind, m.passive, m.from_node]),
				[['note', true, task.object_id]],
			);
			assert.match(notes[0]!.text, /^at the gate: Split lexer.ts out/);
			assert.equal(world.reported.length, 0, 'a passive note raises no notification');
			assert.equal(world.board.workState(new SqlBoardStore(world.db).node(task.object_id)!).pending.join(), 'gate');

			world.land(run);
			const tally = world.messages(world.tally.object_id);
			const landed = tally.filter((m) => m.kind === 'landed');
			assert.equal(landed.length, 1);
			assert.equal(landed[0]!.request_id, `land:${run.object_id}`);
			assert.deepEqual(landed[0]!.data, {
				commit: 'abc1234def567890',
				subject: 'Split the parser',
				touched: ['src/parser.ts'],
				abstract: 'Split the parser\nLast: split lexer.ts',
				decision: world.ai.runDecision(run.object_id)!.object_id,
			});
			assert.equal(tally.find((m) => m.kind === 'abstract')?.frozen, true, 'the landing froze the abstract');
			const own = world.messages(task.object_id).filter((m) => m.kind === 'report');
			assert.equal(own.length, 1);
			assert.equal(own[0]!.in_reply_to, `in-${task.object_id}`, 'the report replies to the input');
			assert.equal(own[0]!.reply_enabled, false);
			const delivered = world.routedReports(world.starter.object_id, task.object_id);
			assert.equal(delivered.length, 1);
			assert.equal(delivered[0]!.data?.outcome, 'landed');
			assert.match(delivered[0]!.text, /^landed as abc1234def56 \(Desk-Run: /);
			assert.deepEqual(
				world.reported.map((r) => [r.starter_node, r.starter_run, r.branch, r.report, r.outcome]),
				[[world.starter.object_id, world.starterRun.object_id, task.object_id, delivered[0]!.id, 'landed']],
			);
			// Every hook again, and recovery: nothing twice.
			world.board.landed(run.object_id, { subject: 'Split the parser', touched: [] });
			world.board.decided(run.object_id);
			world.board.runFinished(run.object_id);
			assert.deepEqual(world.board.recover(), { landings: 0, reports: 0 });
			assert.equal(world.routedReports(world.starter.object_id, task.object_id).length, 1);
			assert.equal(world.messages(world.tally.object_id).filter((m) => m.kind === 'landed').length, 1);
			assert.equal(world.reported.length, 1);
		} finally {
			world.close();
		}
	});

	it('abandoned: one report saying so; a person-started branch reports to its tally', async () => {
		const world = await World.open();
		try {
			const { task, run } = world.branch('Document the parser');
			world.atGate(run, 'Wrote docs.');
			assert.equal(world.messages(world.tally.object_id).filter((m) => m.kind === 'note').length, 1);
			world.abandon(run, 'not needed');
			const reports = world.routedReports(world.tally.object_id, task.object_id);
			assert.equal(reports.length, 1);
			assert.equal(reports[0]!.data?.outcome, 'abandoned');
			assert.match(reports[0]!.text, /^abandoned: not needed; nothing was landed/);
			assert.equal(world.reported[0]?.person, true);
		} finally {
			world.close();
		}
	});

	it('while a branch it started is pending, a failed run is a passive note; that branch reporting ends its starter too', async () => {
		const world = await World.open();
		try {
			const parent = world.branch('Parent', { task: world.starter, run: world.starterRun });
			const child = world.branch('Child', parent, 2);
			world.fail(parent.run, 'the agent failed');
			world.board.runFinished(parent.run.object_id);
			assert.equal(world.routedReports(world.starter.object_id, parent.task.object_id).length, 0);
			const note = world.messages(world.starter.object_id).find((m) => m.kind === 'note');
			assert.equal(note?.passive, true);
			assert.match(note!.text, /failed: the agent failed[\s\S]*still waiting for branch /);
			world.atGate(child.run, 'child work');
			world.abandon(child.run);
			assert.equal(
				world.routedReports(parent.task.object_id, child.task.object_id).length,
				1,
				'the child reported to the parent',
			);
			const up = world.routedReports(world.starter.object_id, parent.task.object_id);
			assert.equal(up.length, 1, 'then the parent, whose last run had failed, reported');
			assert.equal(up[0]!.data?.outcome, 'failed');
			assert.deepEqual(
				world.reported.map((r) => r.branch),
				[child.task.object_id, parent.task.object_id],
			);
		} finally {
			world.close();
		}
	});
});

describe('the reply rules', () => {
	it('answers a report once, on the branch’s board, never reply-enabled; notes and answers are not answered', async () => {
		const world = await World.open();
		try {
			const { task, run } = world.branch('Split the parser', { task: world.starter, run: world.starterRun });
			world.atGate(run, 'done');
			const note = world.messages(world.starter.object_id).find((m) => m.kind === 'note')!;
			assert.throws(
				() => world.board.answer(note.id, 'ok', {}),
				(e) => isDeskError(e, 'board.notReplyEnabled'),
			);
			world.land(run);
			const delivered = world.routedReports(world.starter.object_id, task.object_id)[0]!;
			assert.throws(
				() => world.board.answer(delivered.id, 'not mine', { node: 'another-task', run: 'another-run' }),
				(e) => isDeskError(e, 'board.notReplyEnabled'),
			);
			const answer = world.board.answer(delivered.id, 'Thanks; keep lexer.ts small.', {
				node: world.starter.object_id,
				run: world.starterRun.object_id,
			});
			assert.equal(answer.node, task.object_id, "the answer is on the branch's board");
			assert.equal(answer.reply_enabled, false);
			const report = world.messages(task.object_id).find((m) => m.kind === 'report')!;
			assert.equal(answer.in_reply_to, report.id);
			assert.equal(report.answered_by, answer.id);
			assert.throws(
				() => world.board.answer(delivered.id, 'again', {}),
				(e) => isDeskError(e, 'board.alreadyAnswered'),
			);
			assert.throws(
				() => world.board.answer(report.id, 'again', {}),
				(e) => isDeskError(e, 'board.alreadyAnswered'),
			);
			assert.throws(
				() => world.board.answer(answer.id, 'an answer to the answer', {}),
				(e) => isDeskError(e, 'board.notReplyEnabled'),
			);
			assert.throws(
				() => world.board.answer('no-such-message', 'x', {}),
				(e) => isDeskError(e, 'ai.notFound'),
			);
		} finally {
			world.close();
		}
	});

	it('a post is a passive note to the starter, or the branch’s abstract; a run that is no branch’s has no starter', async () => {
		const world = await World.open();
		try {
			const { task, run } = world.branch('Split the parser', { task: world.starter, run: world.starterRun });
			const note = world.board.post(run.object_id, 'halfway', 'note', 'k1');
			assert.deepEqual([note.node, note.kind, note.passive], [world.starter.object_id, 'note', true]);
			assert.equal(
				world.board.post(run.object_id, 'halfway again', 'note', 'k1').id,
				note.id,
				'the same key posts once',
			);
			const first = world.board.post(run.object_id, 'first abstract', 'abstract', 'k2');
			const second = world.board.post(run.object_id, 'second abstract', 'abstract', 'k3');
			const abstracts = world.messages(world.tally.object_id).filter((m) => m.kind === 'abstract');
			assert.deepEqual(
				abstracts.map((m) => [m.id, m.superseded_by]),
				[
					[first.id, second.id],
					[second.id, undefined],
				],
			);
			assert.equal(first.from_node, task.object_id);
			assert.throws(
				() => world.board.post(world.starterRun.object_id, 'x', 'note', 'k4'),
				(e) => isDeskError(e, 'board.noStarter'),
			);
			assert.equal(world.reported.length, 0);
		} finally {
			world.close();
		}
	});

	it("a wait for a board wakes on this process's write at once, re-reads for others', ends when its caller goes", async () => {
		const world = await World.open();
		try {
			const { run } = world.branch('Split the parser', { task: world.starter, run: world.starterRun });
			const starter = world.starter.object_id;
			const never = new AbortController().signal;
			// A re-read a minute away: only the wake can answer this wait within the test.
			const started = Date.now();
			const waiting = world.board.wait(starter, undefined, 10_000, never, 60_000);
			setTimeout(() => world.board.post(run.object_id, 'halfway', 'note', 'w1'), 50);
			const woken = await waiting;
			assert.deepEqual(
				woken.map((m) => m.text),
				['halfway'],
			);
			assert.ok(Date.now() - started < 5_000, 'woken by the write, not by the time');
			const since = woken[0]!.seq;
			// Another process's write (here: straight into the database) is seen by the re-read.
			const other = world.board.wait(starter, since, 60_000, never, 100);
			world.db.write((tx) =>
				tx.run(
					"INSERT INTO board_messages (message_id, request_id, node, kind, from_node, reply_enabled, passive, text, created_at) VALUES ('m-other', 'other-1', ?, 'note', ?, 0, 1, 'from the CLI', 't')",
					[starter, run.task],
				),
			);
			assert.deepEqual(
				(await other).map((m) => m.text),
				['from the CLI'],
			);
			const gone = new AbortController();
			const cancelled = world.board.wait(starter, since + 100, 60_000, gone.signal, 60_000);
			gone.abort();
			assert.deepEqual(await cancelled, []);
			assert.deepEqual(await world.board.wait(starter, since + 100, 50, never), [], 'nothing when the time is up');
		} finally {
			world.close();
		}
	});

	it('keeps the exchange bounded: agents that always answer and always reply route one report and at most one answer per edge', async () => {
		const world = await World.open();
		try {
			const branch = world.branch('Split the parser', { task: world.starter, run: world.starterRun });
			world.atGate(branch.run, 'first answer');
			world.land(branch.run);
			let run = branch.run;
			for (let round = 0; round < 6; round += 1) {
				// The starter answers every report on its board it has not answered.
				for (const report of world.messages(world.starter.object_id).filter((m) => m.kind === 'report')) {
					try {
						world.board.answer(report.id, `answer ${round}`, {
							node: world.starter.object_id,
							run: world.starterRun.object_id,
						});
					} catch (error) {
						assert.ok(isDeskError(error, 'board.alreadyAnswered'), String(error));
					}
				}
				// The branch always says something back: a post, and a continuation that finishes and is decided.
				world.board.post(run.object_id, `reply ${round}`, 'note', `round-${round}`);
				const next = newRun(system, branch.task, 'c0');
				addRun(branch.task, next);
				world.ai.put([branch.task, next]);
				run = next;
				world.atGate(run, `continuation ${round}`);
				world.abandon(run);
			}
			assert.equal(world.routedReports(world.starter.object_id, branch.task.object_id).length, 1, 'one routed report');
			const answers = world.messages(branch.task.object_id).filter((m) => m.kind === 'answer');
			assert.equal(answers.length, 1, 'at most one routed answer');
			assert.ok(
				world
					.messages(world.starter.object_id)
					.filter((m) => m.kind === 'note')
					.every((m) => m.passive),
			);
			assert.equal(world.reported.length, 1);
		} finally {
			world.close();
		}
	});
});

describe('recovery', () => {
	it('a run the desk stopped reports once; a landing without its note gets it once', async () => {
		const world = await World.open();
		try {
			const stopped = world.branch('Stopped', { task: world.starter, run: world.starterRun });
			world.fail(stopped.run, 'the desk stopped while the run was patching (process 42); nothing was landed');
			const landed = world.branch('Landed', { task: world.starter, run: world.starterRun });
			world.atGate(landed.run, 'landed work');
			const [chosen] = world.ai.runPatchSets(landed.run);
			setRunStatus(landed.run, 'completed');
			// The gate stored its Decision and the desk died before the landing note.
			world.ai.put([
				newDecision(system, landed.run, 'commit', { chosen: chosen!, resultCommit: 'feedface0000' }),
				landed.run,
			]);
			assert.deepEqual(world.board.recover(), { landings: 1, reports: 2 });
			assert.deepEqual(world.board.recover(), { landings: 0, reports: 0 });
			const reports = world.messages(world.starter.object_id).filter((m) => m.kind === 'report');
			assert.deepEqual(
				reports.map((m) => [m.from_node, m.data?.outcome]).sort(),
				[
					[landed.task.object_id, 'landed'],
					[stopped.task.object_id, 'stopped'],
				].sort(),
			);
			assert.match(
				reports.find((m) => m.from_node === stopped.task.object_id)!.text,
				/^the desk stopped while the run was patching/,
			);
			const notes = world.messages(world.tally.object_id).filter((m) => m.kind === 'landed');
			assert.equal(notes.length, 1);
			assert.equal(notes[0]!.data?.commit, 'feedface0000');
		} finally {
			world.close();
		}
	});

	it('a process killed between the report and its delivery left neither: the next check writes each phase once', async () => {
		let armed = true;
		const faults: Faults = {
			point(name) {
				if (armed && name === 'delivery.afterReply') {
					armed = false;
					throw new Error('killed at delivery.afterReply');
				}
			},
		};
		const world = await World.open(faults);
		try {
			const { task, run } = world.branch('Split the parser', { task: world.starter, run: world.starterRun });
			world.fail(run, 'the agent failed');
			assert.throws(() => world.board.runFinished(run.object_id), /killed at delivery.afterReply/);
			assert.equal(
				world.messages(task.object_id).filter((m) => m.kind === 'report').length,
				0,
				'the transaction left nothing',
			);
			assert.deepEqual(world.board.recover(), { landings: 0, reports: 1 });
			const phases = world.db.all<{ phase: string }>(
				'SELECT phase FROM board_deliveries WHERE delivery_id = ? ORDER BY phase',
				[`dlv:${task.object_id}`],
			);
			assert.deepEqual(
				phases.map((p) => p.phase),
				['delivered', 'input', 'reply'],
			);
		} finally {
			world.close();
		}
	});
});
