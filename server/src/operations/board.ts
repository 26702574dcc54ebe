/**
 * Boards (glossary: Lineage): a node's board, a branch's one-way updates to its starter, the
 * starter's one answer to a report, and Continue with Reports. Reports themselves are never posted:
 * the desk delivers a branch's report when its work ends (lineage/board.ts).
 */
import { uuidv7 } from '../ai/ids';
import { actor, addRun, newRun } from '../ai/model';
import type { Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import type { BoardMessage } from '../lineage/types';
import { AnswerReport, ContinueWithReports, ListBoard, PostToBoard } from '../protocol/protocol';
import { integer, object, optional, string } from '../protocol/schema';
import { SafeGit } from '../runs/safeGit';
import { parseRunSettings } from '../runs/settings';
import { answerOnce, recordAnswer } from '../store/clientRequests';
import type { BoardCaller } from '../lineage/board';
import { operation, type RunningCall } from './operation';
import { projectTop } from './attachments';

/** The project's repository top: an agent's is its run's (another project is refused). */
function topOf(call: RunningCall, project: string): string {
	if (call.actor.kind === 'agent' && call.actor.project !== project) {
		throw new DeskError('operation.outsideRun', `A run may touch only its own project (${call.actor.project}).`, {
			project,
		});
	}
	return projectTop(call.desk, project);
}

/** The boards of a project, once its runs were opened (so what a stopped desk left is recovered first). */
async function boardOf(call: RunningCall, top: string) {
	await call.desk.runs(top);
	return call.desk.board(top);
}

/** Records the answer of the call's request in the transaction that writes its message. */
function recording(call: RunningCall) {
	return (tx: Parameters<typeof recordAnswer>[0], message: BoardMessage) =>
		recordAnswer(tx, call.request, message, new Date().toISOString());
}

export const listBoard = operation({
	name: 'board.list',
	summary: "List a node's board (a branch's, a tally's or a run's task's): reports, notes, answers, abstracts.",
	params: ListBoard.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListBoard, cli: 'board list' },
	async run(call, { project, node, since }) {
		const board = await boardOf(call, topOf(call, project));
		return { messages: board.list(node, since) };
	},
});

/** The longest a `reports` call waits for its board (seconds): a long-poll, not a parked agent. */
export const maxReportsWaitSeconds = 300;

export const readReports = operation({
	name: 'board.reports',
	summary: "Read this run's board: the reports of the branches it started, notes, answers.",
	params: object({
		project: string({ minLength: 1, maxLength: 1024 }),
		since: optional(integer({ min: 0 })),
		wait_s: optional(integer({ min: 0, max: maxReportsWaitSeconds })),
	}),
	callers: ['agent'],
	mutates: false,
	idempotent: true,
	surfaces: {
		mcp: {
			tool: 'reports',
			title: "Read this run's board",
			description:
				"The messages on your task's board, oldest first: the report of each branch you started (once its work ended: landed, abandoned, failed or stopped), passive notes from them while they work or wait at the gate, and answers to your own report. `since` is the `seq` of the last message you read; only newer ones come back. `wait_s` (at most 300) waits that many seconds for a message when there is none yet, and answers as soon as one arrives (an empty list when none did): wait for your branches this way rather than calling again and again. Branches in the shared checkout start only after you exit, so wait only for worktree branches.",
			boundByRun: ['project'],
		},
	},
	async run(call, { project, since, wait_s }) {
		if (call.actor.kind !== 'agent') {
			throw new DeskError('operation.outsideRun', 'Only a run has a board of its own to read.', {});
		}
		const board = await boardOf(call, topOf(call, project));
		if (!wait_s) {
			return { messages: board.list(call.actor.task, since) };
		}
		return { messages: await board.wait(call.actor.task, since, wait_s * 1000, call.signal) };
	},
});

export const postToBoard = operation({
	name: 'board.post',
	summary: "Post a one-way update from a branch's run to its starter (a passive note, or the branch's abstract).",
	params: PostToBoard.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: true,
	surfaces: {
		rpc: PostToBoard,
		cli: 'board post',
		mcp: {
			tool: 'board_post',
			title: 'Post a note to your starter',
			description:
				"A one-way update to the run (or person) that started this branch: a passive note on its board that raises no notification and asks for no answer. `kind: \"abstract\"` instead replaces this branch's short abstract on its root's tally (what other branches are told you are doing; at most 400 characters). Your report goes to the starter by itself when your work ends; do not post it. Refused (board.noStarter) when this run is no branch's.",
			boundByRun: ['project', 'run'],
		},
	},
	async run(call, { project, run, text, kind }) {
		const top = topOf(call, project);
		if (call.actor.kind === 'agent' && run !== call.actor.run) {
			throw new DeskError('operation.outsideRun', `A run may post only as itself (${call.actor.run}).`, { run });
		}
		const board = await boardOf(call, top);
		const { result, replayed } = await answerOnce(await call.desk.projectRequests(top), call.request, async () =>
			board.post(run, text.trim() || text, kind ?? 'note', call.request?.id ?? uuidv7(), recording(call)),
		);
		if (!replayed) {
			call.events.runsChanged(project, run);
		}
		return result;
	},
});

export const answerReport = operation({
	name: 'board.answer',
	summary: "Answer a branch's report, once; the answer is never itself answered.",
	params: AnswerReport.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: false,
	surfaces: {
		rpc: AnswerReport,
		cli: 'board answer',
		mcp: {
			tool: 'board_answer',
			title: "Answer a branch's report",
			description:
				"Answer the report of a branch you started (its message id from `reports`), once: the answer goes on the branch's board and is the end of the exchange (the branch's later messages are passive notes). Refused: a message that is not a report (board.notReplyEnabled), a report answered already (board.alreadyAnswered), a report of a branch another run started.",
			boundByRun: ['project'],
		},
	},
	async run(call, { project, report, text }) {
		const top = topOf(call, project);
		const board = await boardOf(call, top);
		const caller: BoardCaller = call.actor.kind === 'agent' ? { node: call.actor.task, run: call.actor.run } : {};
		const { result, replayed } = await answerOnce(await call.desk.projectRequests(top), call.request, async () =>
			board.answer(report, text, caller, recording(call)),
		);
		if (!replayed) {
			call.events.runsChanged(project);
		}
		return result;
	},
});

export const continueWithReports = operation({
	name: 'board.continue',
	summary:
		"Continue with Reports: a new run of a run's task whose prompt carries the reports its board got, each once.",
	params: ContinueWithReports.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: ContinueWithReports, cli: 'board continue' },
	async run(call, { project, run, settings }) {
		const { desk, request } = call;
		const top = topOf(call, project);
		// Settings are checked before anything is made.
		const runSettings = parseRunSettings(settings);
		const board = await boardOf(call, top);
		const { gate, executor } = await desk.runs(top);
		const ai = await desk.projectAi(top);
		const from = ai.get<Run>(run);
		if (!from || from.object_type !== 'run') {
			throw new DeskError('ai.notFound', `No run ${run}.`, { id: run });
		}
		const record = gate.launchRecord(from);
		if (!record) {
			throw new DeskError('ai.notFound', `Run ${run} has no launch record to continue from.`, { id: run });
		}
		let prompt: string | undefined;
		const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, async () => {
			executor.assertCheckoutFree(runSettings, record);
			const task = ai.require<Task>(from.task, 'task');
			const git = top ? await SafeGit.open(top, await desk.library.gitLocation(top)) : undefined;
			const head = git ? await git.resolveCommit('HEAD') : from.commit;
			const next = newRun(actor('system', 'agent-desk'), task, head);
			addRun(task, next);
			const made = board.continueWith(task.object_id, next.object_id, (tx, carried) => {
				ai.putIn(tx, [task, next]);
				executor.claimIn(tx, runSettings, record, next.object_id);
				const answer = { run: next.object_id, task: task.object_id, reports: carried.length };
				recordAnswer(tx, request, answer, new Date().toISOString());
				return answer;
			});
			prompt = made.section;
			return made.result;
		});
		if (replayed || prompt === undefined) {
			return result;
		}
		// A stop here leaves the run to crash recovery, which fails it unstarted; the board's recovery
		// then releases the reports it carried (lineage/board.ts `recover`).
		desk.faults.point('continue.afterCarry.beforeStart');
		// Not a resumed agent session: a new run whose ticket carries what came back.
		await desk.startRun(top, { ...record, ticket: `${record.ticket.trimEnd()}\n\n${prompt}` }, result.run, runSettings);
		call.events.runsChanged(project, result.run);
		return result;
	},
});

/** The boards' operations, in the table's order. */
export const boardOperations = [listBoard, readReports, postToBoard, answerReport, continueWithReports];
