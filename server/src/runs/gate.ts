import * as fs from 'node:fs';
import * as path from 'node:path';
import {
	actor,
	addRun,
	newDecision,
	newRun,
	setApplyStatus,
	setIntentCommit,
	setIntentStatus,
	setRunStatus,
	setTaskStatus,
} from '../ai/model';
import type { Decision, Intent, PatchSet, Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import type { LaunchRecord } from '../launch/types';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { tellBoard, type RunExecutor } from './runner';
import { closeRunPlans, endIntentOf } from './endings';
import { SafeGit, type CommitIdentity } from './safeGit';
import { makeWritable, removeTreeInFolder } from '../store/folderFiles';
import { putBackFiles, putBackSharedCheckout } from './checkoutFiles';
import { resumeFromCheckpoint } from './checkpoints';
import { forRequest, madeFor, type DecideRequest, type PersonName } from './decisionRequests';

export type { DecideRequest } from './decisionRequests';
import { rollBack } from './rollback';
import { gateTag, isAtGate, resumesTag } from './runViews';
import { readTargetChanges } from './targetChangesRecord';
import type { DecideResult, ResumeResult } from './types';
import { endTaskOutbox } from './taskOutbox';

/**
 * The gate (glossary: Gate): a person's verdict on a completed (or failed) run, one Decision a run.
 * Commit lands the chosen PatchSet — a commit with a `Desk-Run:` trailer on the run's branch, or the
 * snapshot target's next version — and completes the Intent (⑩). Nothing lands without it.
 */
export class RunGate {
	constructor(
		private readonly ports: RunnerPorts,
		private readonly executor: RunExecutor,
	) {}

	/** Runs a decision is being made for in this process: a second click waits for no one, it is refused. */
	private readonly deciding = new Set<string>();

	async decide(runId: string, request: DecideRequest): Promise<DecideResult> {
		if (this.deciding.has(runId)) {
			throw new DeskError('run.notAwaitingDecision', `A decision on run ${runId} is being made already.`, {
				run: runId,
			});
		}
		this.deciding.add(runId);
		let release: (() => void) | undefined;
		try {
			release = this.executor.claimDecision(runId);
			const result = await this.decideOnce(runId, request);
			// A decision that ended the task (landed, abandoned) leaves no attempt to take what its outbox kept.
			endTaskOutbox(this.ports, this.ports.ai.require<Run>(runId, 'run').task);
			return result;
		} finally {
			release?.();
			this.deciding.delete(runId);
		}
	}

	private async decideOnce(runId: string, request: DecideRequest): Promise<DecideResult> {
		const { ai } = this.ports;
		const run = ai.require<Run>(runId, 'run');
		if (request.decision === 'rollback') {
			// Not a verdict on this run, which has its Decision: the verdict of a run of its own (glossary: Rollback).
			return rollBack(this.ports, run, request, { subject: this.subjectOf(run) });
		}
		const existing = ai.runDecision(runId);
		if (existing && request.request && madeFor(existing, request.request)) {
			return this.resultOf(run, existing);
		}
		if (existing) {
			throw new DeskError(
				'run.notAwaitingDecision',
				`Run ${runId} has its decision already (${existing.decision_type}).`,
				{ run: runId, decision: existing.decision_type },
			);
		}
		if (!isAtGate(run) && run.status !== 'failed') {
			throw new DeskError(
				'run.notAwaitingDecision',
				`Run ${runId} is ${run.status}${run.status === 'validating' ? ' (its checks are running)' : ''}; it reaches the gate when its checks are done, or when it fails.`,
				{ run: runId, status: run.status },
			);
		}
		const task = ai.require<Task>(run.task, 'task');
		const placement = this.executor.placement(runId);
		const patchsets = ai.runPatchSets(run);
		const chosen = request.patchset
			? patchsets.find((p) => p.object_id === request.patchset)
			: patchsets[patchsets.length - 1];
		if (request.patchset && !chosen) {
			throw new DeskError('run.noPatch', `PatchSet ${request.patchset} is not one of run ${runId}'s.`, {
				run: runId,
				patchset: request.patchset,
			});
		}
		const rationale = request.rationale?.trim() || undefined;
		switch (request.decision) {
			case 'commit':
				if (run.status === 'failed' || !chosen || !placement) {
					throw new DeskError(
						'run.noPatch',
						run.status === 'failed'
							? `Run ${runId} failed; only Retry or Abandon are open to it.`
							: `Run ${runId} has no change to land.`,
						{ run: runId },
					);
				}
				return this.land(run, task, chosen, placement, patchsets, rationale, request);
			case 'retry': {
				request.check?.();
				const decision = forRequest(
					newDecision(request.by, run, 'retry', { ...(rationale ? { rationale } : {}) }),
					request,
				);
				const git = this.ports.project.path
					? await SafeGit.open(this.ports.project.path, await this.ports.library.gitLocation(this.ports.project.path))
					: undefined;
				const head = git ? await git.resolveCommit('HEAD') : run.commit;
				const next = newRun(actor('system', 'agent-desk'), task, head);
				if (run.tags[resumesTag]) {
					// A retry of a resumed run begins from the same checkpoint (glossary: Checkpoint).
					next.tags = { ...next.tags, [resumesTag]: run.tags[resumesTag] };
				}
				addRun(task, next);
				this.reject(patchsets);
				const restored = placement ? await this.restoreShared(placement, patchsets) : { restored: [], left: [] };
				this.closeGate(run);
				this.ports.control.transaction((tx) => {
					ai.putIn(tx, [decision, ...patchsets, task, next, run]);
					request.claim?.(tx, next.object_id);
				});
				tellBoard(this.ports, runId, (board) => board.decided(runId));
				if (placement) {
					await this.cleanUp(placement);
				}
				return { decision, new_run: next.object_id, ...restored };
			}
			case 'abandon': {
				const decision = forRequest(
					newDecision(request.by, run, 'abandon', { ...(rationale ? { rationale } : {}) }),
					request,
				);
				this.reject(patchsets);
				const restored = placement ? await this.restoreShared(placement, patchsets) : { restored: [], left: [] };
				if (task.status === 'running' || task.status === 'draft') {
					setTaskStatus(task, request.cancelTask ? 'cancelled' : 'failed');
				}
				this.closeGate(run);
				// Nothing carries the run's plan or the intent on now (glossary: Ending).
				const why = `${request.cancelTask ? 'cancelled' : 'abandoned'}${rationale ? `: ${rationale}` : ''}`;
				const intent = endIntentOf(ai, task, why);
				ai.put([decision, ...patchsets, task, run, ...closeRunPlans(ai, run, why), ...(intent ? [intent] : [])]);
				tellBoard(this.ports, runId, (board) => board.decided(runId));
				if (placement) {
					await this.cleanUp(placement);
				}
				return { decision, ...restored };
			}
			case 'checkpoint': {
				if (!chosen || !placement) {
					throw new DeskError('run.noPatch', `Run ${runId} has no change to keep as a checkpoint.`, { run: runId });
				}
				let checkpointId: string;
				if (placement.target === 'git') {
					// The change kept as a commit under refs/desk/checkpoints/, off every branch.
					const git = await SafeGit.open(
						this.ports.project.path,
						await this.ports.library.gitLocation(this.ports.project.path),
					);
					const identity = await this.identity(git, placement.agent, request.identity);
					// Its parent holds the tree the run started from, so the commit's own change is the run's
					// (what Resume applies): on the shared checkout that start may hold the person's changes,
					// kept in a parent of its own over the baseline.
					const start = placement.start_tree!;
					const base =
						start === (await git.text(['rev-parse', `${run.commit}^{tree}`]))
							? run.commit
							: await git.commitTree(
									start,
									[run.commit],
									`Checkpoint base of ${task.title}: the checkout as the run began\n\nDesk-Run: ${run.object_id}\n`,
									identity,
								);
					const commit = await git.commitTree(
						chosen.tags['desk.tree']!,
						[base],
						`Checkpoint of ${task.title}\n\nDesk-Run: ${run.object_id}\n`,
						identity,
					);
					// An empty old value: the ref must not exist yet (a zero id would be sha1's length only).
					await git.updateRef(`refs/desk/checkpoints/${run.object_id}`, commit, '', 'agent desk: checkpoint');
					checkpointId = commit;
				} else {
					checkpointId = chosen.tags['desk.target_changes']!;
				}
				// Checkpoint selects no PatchSet (glossary: Checkpoint): checkpoint_id names the state kept.
				const decision = forRequest(
					newDecision(request.by, run, 'checkpoint', {
						checkpointId,
						...(rationale ? { rationale } : {}),
					}),
					request,
				);
				// The change is kept aside: on the shared checkout its files are put back as at the start
				// (a file changed since is left), so a resumed run applies it again onto a checkout without it.
				const restored = await this.restoreShared(placement, patchsets);
				this.closeGate(run);
				ai.put([decision, run]);
				tellBoard(this.ports, runId, (board) => board.decided(runId));
				// The state is kept (the checkpoint commit, or every file's blob): the run's folder can go.
				await this.cleanUp(placement);
				return { decision, ...restored };
			}
		}
	}

	/** Resume from Checkpoint (glossary: Checkpoint): a new run of the task, made and claimed, not started. */
	resume(
		runId: string,
		options: Omit<Parameters<typeof resumeFromCheckpoint>[2], 'placement' | 'record'>,
	): Promise<ResumeResult> {
		const from = this.ports.ai.require<Run>(runId, 'run');
		return resumeFromCheckpoint(this.ports, runId, {
			...options,
			placement: this.executor.placement(runId),
			record: this.launchRecord(from),
		});
	}

	/** The answer a decision made earlier gave, read back from what it stored (files put back are not kept: none are listed). */
	private resultOf(run: Run, decision: Decision): DecideResult {
		const task = this.ports.ai.require<Task>(run.task, 'task');
		const version = decision.tags['desk.version'];
		const next = decision.decision_type === 'retry' ? task.runs[task.runs.indexOf(run.object_id) + 1] : undefined;
		return {
			decision,
			...(decision.result_commit_sha ? { commit: decision.result_commit_sha } : {}),
			...(version !== undefined ? { version: Number(version) } : {}),
			...(next ? { new_run: next } : {}),
		};
	}

	private async land(
		run: Run,
		task: Task,
		chosen: PatchSet,
		placement: RunPlacement,
		patchsets: PatchSet[],
		rationale: string | undefined,
		request: DecideRequest,
	): Promise<DecideResult> {
		const { ai, library } = this.ports;
		const by = request.by;
		const intent = task.intent ? ai.get<Intent>(task.intent) : undefined;
		const subject = this.subjectOf(run);
		let commit: string | undefined;
		let version: number | undefined;
		let afterLand: (() => Promise<void>) | undefined;
		let manifest: string | undefined;
		if (placement.target === 'git') {
			const top = this.ports.project.path;
			const git = await SafeGit.open(top, await this.ports.library.gitLocation(top));
			const identity = await this.identity(git, placement.agent, request.identity);
			const body = chosen.rationale ? `\n${chosen.rationale.trim()}\n` : '';
			const message = `${subject}\n${body}\nDesk-Run: ${run.object_id}\n`;
			const diff = this.ports.blobs.get(chosen.artifact!.hash!);
			const landedBefore = async (rev: string) =>
				new RegExp(`^Desk-Run: ${run.object_id}$`, 'm').test(await git.text(['log', '-1', '--format=%B', rev]));
			if (placement.isolation === 'worktree' && (await landedBefore(`refs/heads/${placement.branch}`))) {
				// Landed by an approval the desk did not live to record: record it, commit nothing again.
				commit = await git.resolveCommit(`refs/heads/${placement.branch}`);
			} else if (placement.isolation !== 'worktree' && (await landedBefore('HEAD'))) {
				commit = await git.resolveCommit('HEAD');
			} else if (placement.isolation === 'worktree') {
				const ref = `refs/heads/${placement.branch}`;
				const tip = await git.resolveCommit(ref);
				const tree = tip === run.commit ? chosen.tags['desk.tree']! : await git.applyToTree(tip, diff);
				if (!tree) {
					throw new DeskError('run.landConflict', `The change no longer applies to ${placement.branch}.`, {
						run: run.object_id,
					});
				}
				commit = await git.commitTree(tree, [tip], message, identity);
				await git.updateRef(ref, commit, tip, `agent desk: land run ${run.object_id}`);
			} else {
				const branchRef = await git.currentBranch();
				const head = await git.resolveCommit('HEAD');
				const tree = await git.applyToTree(head, diff);
				if (!tree) {
					throw new DeskError(
						'run.landConflict',
						`The change no longer applies to ${branchRef ?? 'HEAD'} at ${head.slice(0, 12)}: the files it touches changed since. Retry the run.`,
						{ run: run.object_id, head },
					);
				}
				commit = await git.commitTree(tree, [head], message, identity);
				await git.updateRef(branchRef ?? 'HEAD', commit, head, `agent desk: land run ${run.object_id}`);
				// The commit is made: what follows only tidies the checkout, after the Decision is stored.
				const landed = commit;
				afterLand = async () => {
					const last = patchsets[patchsets.length - 1];
					if (last && last.object_id !== chosen.object_id) {
						// The checkout holds the last attempt's files; the landed one is an earlier attempt:
						// each file still as the agent left it gets the landed version, nothing else is touched.
						await this.putBack(
							git,
							last.tags['desk.tree']!,
							chosen.tags['desk.tree']!,
							patchsets.flatMap((p) => p.touched.map((t) => t.path)),
						);
					}
					await git.syncIndexPaths(landed, [...new Set(patchsets.flatMap((p) => p.touched.map((t) => t.path)))]);
				};
			}
			const asset = this.ports.project.main_asset;
			if (asset) {
				library.recordRunCommit(asset, commit);
			}
			if (intent) {
				setIntentCommit(intent, commit);
			}
		} else {
			const changesHash = chosen.tags['desk.target_changes']!;
			const changes = readTargetChanges(this.ports.blobs.get(changesHash), changesHash);
			const files = changes.files.map((f) => ({
				path: f.path,
				...(f.after ? { bytes: this.ports.blobs.get(f.after), executable: f.executable } : {}),
			}));
			const cut = await library.landRunChanges(
				placement.target_asset!,
				placement.target_version!,
				files,
				`run ${run.object_id}: ${subject}`.slice(0, 200),
			);
			version = cut.version.version;
			// The snapshot's equivalent of the landed commit: the new version, named by its manifest's
			// sha256. It is kept in tags, since result_commit_sha names a git commit everywhere it is read.
			manifest = cut.version.manifest;
		}
		setApplyStatus(chosen, 'applied');
		this.reject(patchsets.filter((p) => p !== chosen));
		const decision = forRequest(
			newDecision(by, run, 'commit', {
				chosen,
				...(commit ? { resultCommit: commit } : {}),
				...(rationale ? { rationale } : {}),
			}),
			request,
		);
		if (version !== undefined) {
			decision.tags = {
				...decision.tags,
				'desk.version': String(version),
				'desk.asset': placement.target_asset!,
				...(manifest ? { 'desk.manifest': manifest } : {}),
			};
		}
		if (task.status === 'running') {
			setTaskStatus(task, 'done');
		}
		this.closeGate(run);
		const objects: Array<Decision | PatchSet | Task | Intent | Run> = [decision, ...patchsets, task, run];
		if (intent && intent.statuses[intent.statuses.length - 1]?.status === 'active') {
			setIntentStatus(intent, 'completed', commit ? `landed as ${commit.slice(0, 12)}` : `landed as v${version}`);
		}
		if (intent) {
			objects.push(intent);
		}
		ai.put(objects);
		tellBoard(this.ports, run.object_id, (board) =>
			board.landed(run.object_id, {
				subject,
				...(commit ? { commit } : {}),
				...(version !== undefined ? { version } : {}),
				touched: chosen.touched.map((t) => t.path),
			}),
		);
		try {
			await afterLand?.();
		} catch (error) {
			this.ports.logger.warn(
				`run ${run.object_id}: landed as ${commit}, but the checkout's index could not be brought up to date (${(error as Error).message}); \`git status\` may show the change as staged in reverse until \`git reset -q\``,
			);
		}
		await this.cleanUp(placement);
		return { decision, ...(commit ? { commit } : {}), ...(version !== undefined ? { version } : {}) };
	}

	/** The Decision is made: a run that waited at the gate is Completed (glossary: AI objects); a failed one stays failed. */
	private closeGate(run: Run): void {
		if (isAtGate(run)) {
			setRunStatus(run, 'completed');
			run.tags = { ...run.tags, [gateTag]: 'decided' };
		}
	}

	private reject(patchsets: PatchSet[]): void {
		for (const patch of patchsets) {
			if (patch.apply_status === 'proposed') {
				setApplyStatus(patch, 'rejected');
			}
		}
	}

	/** See putBackSharedCheckout (checkoutFiles.ts): the run's latest PatchSet says what the agent left. */
	private restoreShared(
		placement: RunPlacement,
		patchsets: PatchSet[],
	): Promise<{ restored: string[]; left: string[] }> {
		return putBackSharedCheckout(this.ports, placement, patchsets[patchsets.length - 1]);
	}

	private putBack(
		git: SafeGit,
		leftTree: string,
		targetTree: string,
		paths: readonly string[],
		installed: readonly string[] = [],
	): Promise<{ restored: string[]; left: string[] }> {
		return putBackFiles(git, this.ports.project.path, this.ports.logger, { leftTree, targetTree, paths, installed });
	}

	/**
	 * The run's own folder goes once it is decided; a worktree is removed from git's list too. Best
	 * effort, after the Decision is stored: a folder that cannot be removed is logged, never a reason
	 * for the decision to fail.
	 */
	private async cleanUp(placement: RunPlacement): Promise<void> {
		// Read-only reference copies (and folders an agent made read-only) need their write bit back first.
		makeWritable(placement.run_folder);
		// Through folder descriptors: a folder inside that was swapped for a link loses the link, never
		// what it points to (a recursive rm by path would follow a swap between its lstat and readdir).
		if (
			!removeTreeInFolder(path.dirname(placement.run_folder), path.basename(placement.run_folder)) &&
			fs.existsSync(placement.run_folder)
		) {
			this.ports.logger.warn(`the run folder ${placement.run_folder} could not be removed`);
		}
		if (placement.isolation === 'worktree') {
			await SafeGit.open(this.ports.project.path, await this.ports.library.gitLocation(this.ports.project.path))
				.then((git) => git.removeWorktree(placement.work_folder))
				.catch((error: unknown) =>
					this.ports.logger.warn(
						`the run's worktree could not be removed from git's list: ${(error as Error).message}`,
					),
				);
		}
	}

	/** The agent authored the change on the person's behalf; the person commits it (see SafeGit.commitPerson). */
	private async identity(git: SafeGit, agent: string, given?: PersonName): Promise<CommitIdentity> {
		const person = await git.commitPerson(given);
		return { author: { name: `${agent} via Agent Desk`, email: person.email }, committer: person };
	}

	/** The first line of the run's ticket (its task's title when it has none): a landing's subject. */
	private subjectOf(run: Run): string {
		const title = this.ports.ai.require<Task>(run.task, 'task').title;
		return (this.launchRecord(run)?.ticket ?? title).trim().split('\n')[0]!.trim() || title;
	}

	launchRecord(run: Run): LaunchRecord | undefined {
		const launch = this.executor.launchOf(run.object_id);
		const byLaunch = launch ? this.ports.control.launchRecord(launch) : undefined;
		if (byLaunch) {
			return byLaunch;
		}
		return this.ports.control.launchRecordOfTask(run.task);
	}
}
