/**
 * Boards and deliveries (glossary: Lineage, Tally): what a branch says to its starter, and when.
 *
 * A branch `c` started by `s` has one delivery, `dlv:<c>`, in three phases, each consuming its own
 * request id once (`dlv:<c>:in` at the fork, `dlv:<c>:reply` and `dlv:<c>:out` when its work ends),
 * so a restart at any point repeats phases, never effects. Its work ends when its last run is decided
 * or failed and nothing is pending: no branch it started still undelivered, no run of it at the gate.
 * (A branch asks its starter nothing but through its report, which is the last thing it routes: an
 * unanswered question of its own cannot be pending before it.) Then one transaction records the
 * report on its own board and delivers it, active, to the starter's board. Whatever it says before
 * (its final answer while something is pending, a one-way update) or after (a later run's outcome)
 * is a passive note: one routed report and at most one routed answer per edge, however eager the
 * agents on both ends are.
 *
 * A person-started branch (no starter run, no starter node) reports to its root's tally: the board
 * the person reads the root on.
 */
import { uuidv7 } from '../ai/ids';
import type { Decision, PatchSet, Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import type { Faults } from '../core/faults';
import type { Logger } from '../core/logger';
import type { BoardObjects, BoardReads, BoardStore, BoardWrite, NewBoardMessage, ReportNotice } from './boardPorts';
import { defaultLineageLimits, type BoardMessage, type LineageNode } from './types';

/** What a branch's work came to, as its report's `data.outcome` says. */
export type ReportOutcome = 'landed' | 'abandoned' | 'failed' | 'stopped';

/** Where a branch's work stands: ended (with its outcome), or what it still waits for. */
export interface WorkState {
	ended: boolean;
	/** Its last run, once it has one. */
	run?: Run;
	decision?: Decision;
	outcome?: ReportOutcome;
	/** What keeps it from ending: `gate`, `running`, `branch:<id>` (a branch it started, not yet reported). */
	pending: string[];
}

/** What a landing records on the tally; the gate knows it, recovery reads it from the Decision. */
export interface LandingFacts {
	subject: string;
	commit?: string;
	version?: number;
	touched: string[];
}

/** What a liquid abstract is made of after a node of a branch's run. */
export interface NodeProgressNote {
	run: string;
	node: string;
	attempt: number;
	ticket: string;
	steps?: readonly string[];
	summary?: string;
}

export interface BoardOptions {
	faults: Faults;
	logger: Logger;
	/** Told after the commit that delivered an active report (never for a repeat, never for a note). */
	reported?: (notice: ReportNotice) => void;
	now?: () => string;
	newId?: () => string;
}

/** Who posts or answers: an agent's run (its Task is its node) or the person. */
export interface BoardCaller {
	node?: string;
	run?: string;
}

/** The longest abstract: what a catch-up can afford for each live branch. */
export const abstractChars = 400;
/** The longest final answer a report or note carries (the whole one stays on the run). */
const answerChars = 3000;

/** The run tag the gate sets while a run waits for its decision (runs/runViews.ts `gateTag`). */
const gateTag = 'desk.gate';

export class BoardService<Tx> {
	private readonly now: () => string;
	private readonly newId: () => string;
	private readonly store: BoardStore<Tx>;
	/** The `reports` calls of this process waiting for their board to change: each is woken by every write. */
	private readonly waiting = new Set<() => void>();

	constructor(
		store: BoardStore<Tx>,
		private readonly objects: BoardObjects,
		private readonly options: BoardOptions,
	) {
		this.now = options.now ?? (() => new Date().toISOString());
		this.newId = options.newId ?? (() => uuidv7());
		this.store = wakingAfterWrites(store, () => {
			for (const wake of [...this.waiting]) {
				wake();
			}
		});
	}

	/** A node's board, oldest first, after `since`. Any Task has one (empty until something is said to it). */
	list(node: string, since?: number): BoardMessage[] {
		const task = this.objects.get(node);
		if (!task || task.object_type !== 'task') {
			throw new DeskError('ai.notFound', `No task ${node}: a board is a task's (a branch, a tally or a run's task).`, {
				id: node,
			});
		}
		return this.store.messages(node, since);
	}

	/**
	 * A node's board after `since`, waiting up to `waitMs` for something new when there is nothing yet:
	 * a write of this process's boards wakes the wait at once (a delivery, a note, an answer); what
	 * another process (the CLI) writes is seen by a re-read every `recheckMs`. Answers what there is,
	 * maybe nothing, when the time is up or `signal` aborts (the caller went away).
	 */
	async wait(
		node: string,
		since: number | undefined,
		waitMs: number,
		signal: AbortSignal,
		recheckMs = 5000,
	): Promise<BoardMessage[]> {
		const deadline = Date.now() + waitMs;
		for (;;) {
			const messages = this.list(node, since);
			const left = deadline - Date.now();
			if (messages.length > 0 || left <= 0 || signal.aborted) {
				return messages;
			}
			// Nothing runs between the read above and this registration: no write can slip in between.
			await new Promise<void>((resolve) => {
				const done = () => {
					clearTimeout(timer);
					this.waiting.delete(done);
					signal.removeEventListener('abort', done);
					resolve();
				};
				const timer = setTimeout(done, Math.min(left, recheckMs));
				this.waiting.add(done);
				signal.addEventListener('abort', done);
			});
		}
	}

	/** Where `branch` reports: its starter's node, else (the person started it) its root's tally. */
	starterOf(branch: LineageNode): { node: string; run?: string; person: boolean } | undefined {
		if (branch.starter_node !== undefined) {
			return {
				node: branch.starter_node,
				...(branch.starter_run !== undefined ? { run: branch.starter_run } : {}),
				person: branch.starter_run === undefined,
			};
		}
		const tally = this.store.tallyOf(branch.root) ?? branch.fork_of;
		return tally === undefined ? undefined : { node: tally, person: true };
	}

	/** Whether the work of `branch` ended, and with what; else what it waits for. */
	workState(branch: LineageNode): WorkState {
		const pending: string[] = [];
		for (const child of this.store.startedBy(branch.node)) {
			if (child.kind === 'branch' && !this.store.phases(deliveryOf(child.node)).some((p) => p.phase === 'delivered')) {
				pending.push(`branch:${child.node}`);
			}
		}
		const task = this.objects.get<Task>(branch.node);
		const runId = task?.object_type === 'task' ? task.runs.at(-1) : undefined;
		const run = runId === undefined ? undefined : this.objects.get<Run>(runId);
		if (!run || run.object_type !== 'run') {
			return { ended: false, pending: [...pending, 'running'] };
		}
		const decision = this.objects.runDecision(run.object_id);
		let outcome: ReportOutcome | undefined;
		if (decision?.decision_type === 'commit') {
			outcome = 'landed';
		} else if (decision?.decision_type === 'abandon' || decision?.decision_type === 'checkpoint') {
			outcome = run.status === 'failed' ? failedOutcome(run) : 'abandoned';
		} else if (decision === undefined && run.status === 'failed') {
			outcome = failedOutcome(run);
		} else if (atGate(run)) {
			pending.push('gate');
		} else {
			pending.push('running');
		}
		const state: WorkState = { ended: outcome !== undefined && pending.length === 0, run, pending };
		if (decision) {
			state.decision = decision;
		}
		if (outcome) {
			state.outcome = outcome;
		}
		return state;
	}

	/**
	 * A run of a branch reached the gate or failed (the runner's hook, whichever process carried it
	 * out): its work may have ended (the report), else its final answer is a passive note to the
	 * starter, as it is after the branch reported already.
	 */
	runFinished(runId: string): void {
		const found = this.branchOfRun(runId);
		if (!found) {
			return;
		}
		const { branch, run } = found;
		if (this.settle(branch)) {
			return;
		}
		const state = this.workState(branch);
		const answer = finalAnswer(this.objects, run);
		const why = state.pending.filter((p) => p !== 'running');
		const text = atGate(run)
			? `at the gate: ${answer || 'a change waits for the decision'}`
			: `${run.status === 'failed' ? `failed: ${run.error ?? 'no reason recorded'}` : run.status}${answer ? `\n\n${answer}` : ''}`;
		this.note(branch, run.object_id, `note:${branch.node}:${run.object_id}:final`, withPending(text, why));
	}

	/**
	 * A run of a branch was decided (the gate's hook, after the Decision is stored; a landing calls
	 * {@link landed} first): the work may have ended. A decision after the branch reported is a
	 * passive note.
	 */
	decided(runId: string): boolean {
		const found = this.branchOfRun(runId);
		if (!found) {
			return false;
		}
		const { branch, run } = found;
		if (this.settle(branch)) {
			return true;
		}
		const decision = this.objects.runDecision(runId);
		if (decision && this.replied(branch) && decision.decision_type !== 'retry') {
			this.note(
				branch,
				runId,
				`note:${branch.node}:${runId}:decided`,
				`${outcomeWords(run, decision)} (a later run; the branch reported already)`,
			);
		}
		return false;
	}

	/**
	 * The landing hook (after the gate stored a landing Decision): the branch's abstract frozen and a
	 * `landed` entry on its tally, once per run (`land:<run>`), then the work-end check.
	 */
	landed(runId: string, facts?: LandingFacts): boolean {
		this.options.faults.point('land.afterDecision.beforeNote');
		const found = this.branchOfRun(runId);
		if (!found) {
			return false;
		}
		const { branch, run } = found;
		const decision = this.objects.runDecision(runId);
		const tally = this.store.tallyOf(branch.root);
		if (decision?.decision_type !== 'commit' || tally === undefined) {
			return this.decided(runId);
		}
		const landing = facts ?? this.factsOf(run, decision);
		this.store.write((board) => {
			if (board.messageByRequest(`land:${runId}`)) {
				return;
			}
			const liquid = liquidAbstract(board, tally, branch.node);
			if (liquid) {
				board.freeze(liquid.id);
			}
			const where =
				landing.commit !== undefined ? `landed as ${landing.commit.slice(0, 12)}` : `landed as v${landing.version}`;
			board.insertMessage(
				this.message({
					request_id: `land:${runId}`,
					node: tally,
					kind: 'landed',
					from_node: branch.node,
					from_run: runId,
					passive: true,
					text: `${where}: ${landing.subject}`,
					data: {
						...(landing.commit !== undefined ? { commit: landing.commit } : {}),
						...(landing.version !== undefined ? { version: landing.version } : {}),
						subject: landing.subject,
						touched: landing.touched,
						abstract: liquid?.text ?? '',
						decision: decision.object_id,
					},
				}),
			);
		});
		return this.decided(runId);
	}

	/**
	 * After every node of a branch's run: its liquid abstract on the tally (the ticket's first line,
	 * the plan's steps, the last step's summary), replacing the one before.
	 */
	nodeEnded(progress: NodeProgressNote): void {
		const found = this.branchOfRun(progress.run);
		if (!found) {
			return;
		}
		const lines = [firstLine(progress.ticket)];
		if (progress.steps && progress.steps.length > 0) {
			lines.push(`Plan: ${progress.steps.map((s, i) => `${i + 1}. ${firstLine(s)}`).join('; ')}`);
		}
		if (progress.summary) {
			lines.push(`Last: ${firstLine(progress.summary)}`);
		}
		this.abstract(
			found.branch,
			progress.run,
			`abstract:${found.branch.node}:${progress.run}:${progress.node}:${progress.attempt}`,
			lines.join('\n'),
		);
	}

	/**
	 * A one-way update from a branch's run to its starter: a passive note, or (`abstract`) its liquid
	 * abstract on the tally. Fails with `board.noStarter` when the run's task is no branch.
	 */
	post(
		runId: string,
		text: string,
		kind: 'note' | 'abstract',
		key: string,
		record?: (tx: Tx, message: BoardMessage) => void,
	): BoardMessage {
		const found = this.branchOfRun(runId);
		if (!found) {
			throw new DeskError(
				'board.noStarter',
				`Run ${runId} is not a branch's run: it has no starter to post to (a branch's runs post to the run or person that started it).`,
				{ run: runId },
			);
		}
		const requestId = `post:${runId}:${key}`;
		const message =
			kind === 'abstract'
				? this.abstract(found.branch, runId, requestId, text, record)
				: this.note(
						found.branch,
						runId,
						requestId,
						text,
						record,
						found.branch.config.maxNotes ?? defaultLineageLimits.maxNotesPerBranch,
					);
		if (!message) {
			throw new DeskError('board.noStarter', `The branch of run ${runId} has no starter board to post to.`, {
				run: runId,
			});
		}
		return message;
	}

	/**
	 * The starter's one answer to a branch's report, on the branch's board, never reply-enabled. The
	 * report may be named by its copy on either board. An agent may answer only a report made to its
	 * own node. Fails with `board.notReplyEnabled`, `board.alreadyAnswered`, `ai.notFound`.
	 */
	answer(
		reportId: string,
		text: string,
		caller: BoardCaller,
		record?: (tx: Tx, message: BoardMessage) => void,
	): BoardMessage {
		const named = this.store.message(reportId);
		if (!named) {
			throw new DeskError('ai.notFound', `No board message ${reportId}.`, { id: reportId });
		}
		if (named.kind !== 'report') {
			throw new DeskError(
				'board.notReplyEnabled',
				`Message ${reportId} is ${articled(named.kind)}, not a report: only a branch's report can be answered (answers and notes are never answered).`,
				{ id: reportId, kind: named.kind },
			);
		}
		const branchId = named.from_node ?? named.node;
		const report = named.request_id.endsWith(':out')
			? this.store.messageByRequest(`${deliveryOf(branchId)}:reply`)
			: named;
		const branch = this.store.node(branchId);
		const starter = branch && this.starterOf(branch);
		if (!report || !starter) {
			throw new DeskError('ai.notFound', `The report ${reportId} has no branch on record.`, { id: reportId });
		}
		if (caller.node !== undefined && caller.node !== starter.node) {
			throw new DeskError(
				'board.notReplyEnabled',
				`Report ${reportId} was made to another node's board; a run answers only the reports of the branches it started.`,
				{ id: reportId },
			);
		}
		if (report.answered_by !== undefined) {
			throw alreadyAnswered(reportId, report.answered_by);
		}
		return this.store.write((board, tx) => {
			const written = board.insertMessage(
				this.message({
					request_id: `answer:${report.id}`,
					node: branchId,
					kind: 'answer',
					...(caller.node !== undefined ? { from_node: caller.node } : {}),
					...(caller.run !== undefined ? { from_run: caller.run } : {}),
					in_reply_to: report.id,
					passive: false,
					text,
				}),
			);
			if (!written.created) {
				// Another window or process answered it meanwhile.
				throw alreadyAnswered(reportId, written.message.id);
			}
			record?.(tx, written.message);
			return written.message;
		});
	}

	/** The reports delivered to `node`'s board and the answers it got, not yet carried into a continuation. */
	uncarried(node: string): BoardMessage[] {
		return uncarried(this.store, node);
	}

	/**
	 * Continue with Reports: records, in one transaction with what `more` writes (the new Run, its
	 * claim, the request's answer), the continuation's input on `node`'s board and one carry phase per
	 * report or answer it carries, so each reaches one continuation only. Fails with `board.noReports`.
	 */
	continueWith<T>(
		node: string,
		runId: string,
		more: (tx: Tx, carried: BoardMessage[], section: string) => T,
	): { result: T; carried: BoardMessage[]; section: string } {
		return this.store.write((board, tx) => {
			const carried = uncarried(board, node);
			if (carried.length === 0) {
				throw new DeskError(
					'board.noReports',
					`Nothing new came back to this run's board: no report or answer that a continuation has not carried already.`,
					{ node },
				);
			}
			const section = reportsSection(carried, (id) => this.titleOf(id));
			const input = board.insertMessage(
				this.message({
					request_id: `continue:${runId}`,
					node,
					kind: 'input',
					from_run: runId,
					passive: true,
					text: section,
					data: { run: runId, carried: carried.map((m) => m.id) },
				}),
			).message;
			const at = this.now();
			for (const message of carried) {
				board.insertDelivery({
					delivery_id: carryOf(message.id),
					phase: 'input',
					request_id: `${carryOf(message.id)}:in`,
					message_id: input.id,
					at,
				});
			}
			return { result: more(tx, carried, section), carried, section };
		});
	}

	/**
	 * At desk start, once the runs a stopped desk left were failed: every landing without its note gets
	 * it, and every branch whose work ended reports (a run the desk stopped included); a report
	 * recorded and not delivered is delivered. Deepest branches first, so a starter sees its children
	 * reported before its own work-end check.
	 */
	recover(): { landings: number; reports: number } {
		let landings = 0;
		let reports = 0;
		const branches = [...this.store.branches()].sort((a, b) => b.depth - a.depth);
		for (const branch of branches) {
			const task = this.objects.get<Task>(branch.node);
			for (const runId of task?.object_type === 'task' ? task.runs : []) {
				if (
					this.objects.runDecision(runId)?.decision_type === 'commit' &&
					!this.store.messageByRequest(`land:${runId}`)
				) {
					reports += this.landed(runId) ? 1 : 0;
					landings += 1;
				}
			}
		}
		for (const branch of branches) {
			if (this.settle(branch)) {
				reports += 1;
			}
		}
		return { landings, reports };
	}

	/**
	 * The active reports delivered to a starter's board, by this process or another, that are neither
	 * answered nor carried yet: what a window opening the project, or seeing another process write
	 * it, is told of.
	 */
	openReports(): ReportNotice[] {
		return this.store.openReports().flatMap((message) => this.noticeOf(message) ?? []);
	}

	/** What the windows are told of a report delivered to its starter's board. */
	private noticeOf(delivered: BoardMessage): ReportNotice | undefined {
		const branch = delivered.from_node === undefined ? undefined : this.store.node(delivered.from_node);
		const starter = branch && this.starterOf(branch);
		if (!branch || !starter) {
			return undefined;
		}
		return {
			starter_node: starter.node,
			...(starter.run !== undefined ? { starter_run: starter.run } : {}),
			person: starter.person,
			branch: branch.node,
			report: delivered.id,
			title: this.titleOf(branch.node),
			outcome: typeof delivered.data?.outcome === 'string' ? delivered.data.outcome : 'reported',
		};
	}

	/**
	 * A continuation whose run failed before its agent was told anything (no ContextSnapshot: the
	 * desk stopped between the carry and the start, or the start failed) carried its reports to
	 * nobody: they go back, to be carried by the next Continue with Reports (and told again). At desk
	 * start, once crash recovery failed the runs a stopped desk left. How many.
	 */
	releaseUnstarted(): number {
		let released = 0;
		for (const input of this.store.carrying()) {
			const runId = typeof input.data?.run === 'string' ? input.data.run : input.from_run;
			const run = runId === undefined ? undefined : this.objects.get<Run>(runId);
			if (run?.object_type === 'run' && run.status === 'failed' && run.snapshot === undefined) {
				released += this.store.write((board) => board.release(input.id));
			}
		}
		return released;
	}

	/**
	 * The work-end check: when `branch`'s work ended and its report was not delivered, one transaction
	 * records it (`reply`) and delivers it (`delivered`); the windows are told after the commit. True
	 * when this call delivered it. A starter that is itself a branch is checked next: its own work
	 * may have waited for this one.
	 */
	private settle(branch: LineageNode): boolean {
		const state = this.workState(branch);
		const starter = this.starterOf(branch);
		if (!state.ended || !state.run || !state.outcome || !starter) {
			return false;
		}
		const delivery = deliveryOf(branch.node);
		if (this.store.phases(delivery).some((p) => p.phase === 'delivered')) {
			return false;
		}
		const { run, outcome } = state;
		const data: Record<string, unknown> = { outcome, run: run.object_id };
		if (state.decision) {
			data.decision = state.decision.object_id;
			if (state.decision.result_commit_sha) {
				data.commit = state.decision.result_commit_sha;
			}
			const version = state.decision.tags['desk.version'];
			if (version !== undefined) {
				data.version = Number(version);
			}
		}
		const text = reportText(this.objects, run, outcome, state.decision);
		const at = this.now();
		const delivered = this.store.write((board) => {
			if (board.phases(delivery).some((p) => p.phase === 'delivered')) {
				return undefined;
			}
			const input = board.messageByRequest(`${delivery}:in`);
			const reply = board.insertMessage(
				this.message({
					request_id: `${delivery}:reply`,
					node: branch.node,
					kind: 'report',
					from_node: branch.node,
					from_run: run.object_id,
					...(input ? { in_reply_to: input.id } : {}),
					passive: false,
					text,
					data,
				}),
			).message;
			board.insertDelivery({
				delivery_id: delivery,
				phase: 'reply',
				request_id: `${delivery}:reply`,
				message_id: reply.id,
				at,
			});
			this.options.faults.point('delivery.afterReply');
			const out = board.insertMessage(
				this.message({
					request_id: `${delivery}:out`,
					node: starter.node,
					kind: 'report',
					from_node: branch.node,
					from_run: run.object_id,
					passive: false,
					text: reply.text,
					data: { ...reply.data, report: reply.id },
				}),
			);
			board.insertDelivery({
				delivery_id: delivery,
				phase: 'delivered',
				request_id: `${delivery}:out`,
				message_id: out.message.id,
				at,
			});
			return out.created ? out.message : undefined;
		});
		this.options.faults.point('delivery.afterDeliver');
		if (!delivered) {
			return false;
		}
		try {
			const notice = this.noticeOf(delivered);
			if (notice) {
				this.options.reported?.(notice);
			}
		} catch (error) {
			this.options.logger.warn(
				`the report of branch ${branch.node} was delivered; telling the windows failed: ${String(error)}`,
			);
		}
		const above = this.store.node(starter.node);
		if (above?.kind === 'branch') {
			this.settle(above);
		}
		return true;
	}

	/**
	 * A passive note from `branch`'s run to its starter's board, once per request id. With `cap`, a
	 * new posted note (`post:` request ids; the desk's own notes are not counted) over it is refused
	 * (`lineage.limit` naming `maxNotesPerBranch`): an eager agent cannot flood its starter's board.
	 */
	private note(
		branch: LineageNode,
		runId: string,
		requestId: string,
		text: string,
		record?: (tx: Tx, message: BoardMessage) => void,
		cap?: number,
	): BoardMessage | undefined {
		const starter = this.starterOf(branch);
		if (!starter) {
			return undefined;
		}
		return this.store.write((board, tx) => {
			if (cap !== undefined && !board.messageByRequest(requestId)) {
				const posted = board
					.messages(starter.node)
					.filter((m) => m.kind === 'note' && m.from_node === branch.node && m.request_id.startsWith('post:')).length;
				if (posted >= cap) {
					throw new DeskError(
						'lineage.limit',
						`No note posted: branch ${branch.node} posted ${posted} notes to its starter already, the limit (maxNotesPerBranch ${cap}). Its report still goes to the starter when its work ends.`,
						{ limit: 'maxNotesPerBranch', value: cap },
					);
				}
			}
			const { message } = board.insertMessage(
				this.message({
					request_id: requestId,
					node: starter.node,
					kind: 'note',
					from_node: branch.node,
					from_run: runId,
					passive: true,
					text: clip(text, 4000),
				}),
			);
			record?.(tx, message);
			return message;
		});
	}

	/** A liquid abstract of `branch` on its tally, superseding the one before (none once it landed frozen). */
	private abstract(
		branch: LineageNode,
		runId: string,
		requestId: string,
		text: string,
		record?: (tx: Tx, message: BoardMessage) => void,
	): BoardMessage | undefined {
		const tally = this.store.tallyOf(branch.root);
		if (tally === undefined) {
			return undefined;
		}
		return this.store.write((board, tx) => {
			const before = liquidAbstract(board, tally, branch.node);
			const written = board.insertMessage(
				this.message({
					request_id: requestId,
					node: tally,
					kind: 'abstract',
					from_node: branch.node,
					from_run: runId,
					passive: true,
					text: clip(text, abstractChars),
				}),
			);
			if (written.created && before && before.id !== written.message.id) {
				board.supersede(before.id, written.message.id);
			}
			record?.(tx, written.message);
			return written.message;
		});
	}

	private message(fields: Omit<NewBoardMessage, 'id' | 'created_at' | 'reply_enabled' | 'frozen'>): NewBoardMessage {
		// Only a branch's input (written by the fork) is reply-enabled: its reply is the report.
		return { id: this.newId(), created_at: this.now(), reply_enabled: false, frozen: false, ...fields };
	}

	private replied(branch: LineageNode): boolean {
		return this.store.phases(deliveryOf(branch.node)).some((p) => p.phase === 'reply');
	}

	private branchOfRun(runId: string): { branch: LineageNode; run: Run } | undefined {
		const run = this.objects.get<Run>(runId);
		if (!run || run.object_type !== 'run') {
			return undefined;
		}
		const branch = this.store.node(run.task);
		return branch?.kind === 'branch' ? { branch, run } : undefined;
	}

	private titleOf(node: string): string {
		const task = this.objects.get<Task>(node);
		return task?.object_type === 'task' ? task.title : node;
	}

	/** A landing's facts from its Decision (recovery: the gate did not live to tell them). */
	private factsOf(run: Run, decision: Decision): LandingFacts {
		const chosen = this.objects.runPatchSets(run).find((p) => p.object_id === decision.chosen_patchset_id);
		const version = decision.tags['desk.version'];
		return {
			subject: this.titleOf(run.task),
			...(decision.result_commit_sha ? { commit: decision.result_commit_sha } : {}),
			...(version !== undefined ? { version: Number(version) } : {}),
			touched: chosen?.touched.map((t) => t.path) ?? [],
		};
	}
}

/** The delivery of a branch's input and report. */
export function deliveryOf(branch: string): string {
	return `dlv:${branch}`;
}

/** The reports delivered to `node`'s board (not its own) and the answers it got, without a carry phase. */
function uncarried(reads: BoardReads, node: string): BoardMessage[] {
	return reads
		.messages(node)
		.filter(
			(m) =>
				((m.kind === 'report' && m.from_node !== node) || m.kind === 'answer') &&
				reads.phases(carryOf(m.id)).length === 0,
		);
}

/** A report or answer carried into a continuation. */
function carryOf(message: string): string {
	return `carry:${message}`;
}

function atGate(run: Run): boolean {
	return run.status === 'validating' && run.tags[gateTag] === 'waiting';
}

function failedOutcome(run: Run): ReportOutcome {
	return run.error?.startsWith('the desk stopped') ? 'stopped' : 'failed';
}

/** The liquid abstract of `branch` on `tally`: the newest not superseded and not frozen. */
function liquidAbstract(board: BoardWrite, tally: string, branch: string): BoardMessage | undefined {
	return board
		.messages(tally)
		.filter((m) => m.kind === 'abstract' && m.from_node === branch && !m.frozen && m.superseded_by === undefined)
		.at(-1);
}

/** What the agent said last: the newest PatchSet's rationale (the agent's answer), else the run's error. */
function finalAnswer(objects: BoardObjects, run: Run, chosen?: string): string {
	const patchsets: PatchSet[] = objects.runPatchSets(run);
	const patch = (chosen ? patchsets.find((p) => p.object_id === chosen) : undefined) ?? patchsets.at(-1);
	return clip(patch?.rationale?.trim() ?? '', answerChars);
}

function reportText(objects: BoardObjects, run: Run, outcome: ReportOutcome, decision?: Decision): string {
	const answer = finalAnswer(objects, run, decision?.chosen_patchset_id);
	const head = outcomeWords(run, decision, outcome);
	return answer && outcome !== 'stopped' ? `${head}\n\n${answer}` : head;
}

function outcomeWords(run: Run, decision?: Decision, outcome?: ReportOutcome): string {
	switch (decision?.decision_type) {
		case 'commit': {
			const version = decision.tags['desk.version'];
			return decision.result_commit_sha
				? `landed as ${decision.result_commit_sha.slice(0, 12)} (Desk-Run: ${run.object_id})`
				: `landed as v${version ?? '?'} (run ${run.object_id})`;
		}
		case 'checkpoint':
			return `kept as a checkpoint (${decision.checkpoint_id ?? 'no id'}); nothing was landed`;
		case 'abandon':
			if (run.status !== 'failed') {
				return `abandoned${decision.rationale ? `: ${decision.rationale}` : ''}; nothing was landed`;
			}
			break;
		case 'retry':
			return 'retried';
		default:
			break;
	}
	if (outcome === 'stopped' || run.error?.startsWith('the desk stopped')) {
		return run.error ?? 'the desk stopped while the run was working; nothing was landed';
	}
	return `failed: ${run.error ?? 'no reason recorded'}; nothing was landed`;
}

function withPending(text: string, pending: readonly string[]): string {
	if (pending.length === 0) {
		return text;
	}
	const words = pending.map((p) => (p === 'gate' ? 'the decision at the gate' : `branch ${p.slice('branch:'.length)}`));
	return `${text}\n\n(still waiting for ${words.join(', ')}; the report follows when that is done)`;
}

/** The "Reports from branches" section of a continuation's prompt. */
export function reportsSection(carried: readonly BoardMessage[], titleOf: (node: string) => string): string {
	const parts = [
		'## Reports from branches',
		'',
		'What came back from the branches this conversation started since its last run (each is told once). A report can be answered once with board_answer; the exchange ends there.',
	];
	for (const message of carried) {
		if (message.kind === 'report') {
			const outcome = typeof message.data?.outcome === 'string' ? message.data.outcome : 'reported';
			parts.push(
				'',
				`### ${titleOf(message.from_node ?? message.node)}: ${outcome} (report ${message.id})`,
				'',
				message.text,
			);
		} else {
			parts.push('', `### The answer to your report ${message.in_reply_to ?? ''}`.trimEnd(), '', message.text);
		}
	}
	return parts.join('\n');
}

function alreadyAnswered(report: string, answer: string): DeskError {
	return new DeskError(
		'board.alreadyAnswered',
		`Report ${report} was answered already (${answer}); a report is answered once.`,
		{
			id: report,
			answer,
		},
	);
}

function articled(kind: string): string {
	return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

function firstLine(text: string): string {
	return text.trim().split('\n')[0]?.trim() ?? '';
}

function clip(text: string, max: number): string {
	return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `store` whose every committed write calls `written` (a write that throws committed nothing and calls nothing). */
function wakingAfterWrites<Tx>(store: BoardStore<Tx>, written: () => void): BoardStore<Tx> {
	return new Proxy(store, {
		get(target, key) {
			if (key === 'write') {
				return <T>(body: (board: BoardWrite, tx: Tx) => T): T => {
					const result = target.write(body);
					written();
					return result;
				};
			}
			const value: unknown = Reflect.get(target, key, target);
			return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
		},
	});
}
