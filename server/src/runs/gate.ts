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
import type { ActorRef, Decision, DecisionType, Intent, PatchSet, Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import type { LaunchRecord } from '../launch/types';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { tellBoard, type RunExecutor } from './runner';
import { SafeGit, type CommitIdentity } from './safeGit';
import { ConfinedDir } from '../store/confinedDir';
import type { WriteTransaction } from '../store/durableDatabase';
import { linkInFolder, removeInFolder, removeTreeInFolder, writeInFolder } from '../store/folderFiles';
import { gateTag, isAtGate } from './runViews';
import { readTargetChanges } from './targetChangesRecord';
import type { DecideResult } from './types';
import { endTaskOutbox } from './taskOutbox';

export interface DecideRequest {
	decision: DecisionType;
	/** Who decides: the person (their git identity), recorded as the Decision's `created_by`. */
	by: ActorRef;
	/** The PatchSet to land (Commit) or keep (Checkpoint); the run's last one when not named. */
	patchset?: string;
	rationale?: string;
	/** Retry: refuses before anything is put back (the checkout is another run's now, say). */
	check?: () => void;
	/**
	 * Retry: claims where the new run will work, in the decision's own transaction, so a desk stopped
	 * before the run starts leaves a claimed run that the next desk fails, never one left Created.
	 */
	claim?: (tx: WriteTransaction, runId: string) => void;
	/**
	 * The client's request this decision answers (its id and params hash), kept on the Decision: a
	 * desk stopped after the Decision and before the answer was recorded answers the same request
	 * again from the Decision instead of refusing it as decided already.
	 */
	request?: { id: string; hash: string };
}

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
					setTaskStatus(task, 'failed');
				}
				this.closeGate(run);
				ai.put([decision, ...patchsets, task, run]);
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
					const identity = await this.identity(git, placement.agent);
					const commit = await git.commitTree(
						chosen.tags['desk.tree']!,
						[run.commit],
						`Checkpoint of ${task.title}\n\nDesk-Run: ${run.object_id}\n`,
						identity,
					);
					// An empty old value: the ref must not exist yet (a zero id would be sha1's length only).
					await git.updateRef(`refs/desk/checkpoints/${run.object_id}`, commit, '', 'agent desk: checkpoint');
					checkpointId = commit;
				} else {
					checkpointId = chosen.tags['desk.target_changes']!;
				}
				const decision = forRequest(
					newDecision(request.by, run, 'checkpoint', {
						chosen,
						checkpointId,
						...(rationale ? { rationale } : {}),
					}),
					request,
				);
				this.closeGate(run);
				ai.put([decision, run]);
				tellBoard(this.ports, runId, (board) => board.decided(runId));
				// The state is kept (the checkpoint commit, or every file's blob): the run's folder can go.
				await this.cleanUp(placement);
				return { decision };
			}
			case 'rollback':
				throw new DeskError(
					'run.notAwaitingDecision',
					'Rollback reverts a landed PatchSet; revert its commit with git, or restore an earlier version of the asset.',
					{ run: runId },
				);
		}
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
		const record = this.launchRecord(run);
		const subject = (record?.ticket ?? task.title).trim().split('\n')[0]!.trim() || task.title;
		let commit: string | undefined;
		let version: number | undefined;
		let afterLand: (() => Promise<void>) | undefined;
		if (placement.target === 'git') {
			const top = this.ports.project.path;
			const git = await SafeGit.open(top, await this.ports.library.gitLocation(top));
			const identity = await this.identity(git, placement.agent);
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
			decision.tags = { ...decision.tags, 'desk.version': String(version), 'desk.asset': placement.target_asset! };
		}
		if (task.status === 'running') {
			setTaskStatus(task, 'done');
		}
		this.closeGate(run);
		const objects: Array<Decision | PatchSet | Task | Intent | Run> = [decision, ...patchsets, task, run];
		if (intent && intent.statuses[intent.statuses.length - 1]?.status === 'active') {
			setIntentStatus(intent, 'completed', commit ? `landed as ${commit.slice(0, 12)}` : `landed as v${version}`);
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

	/**
	 * On the shared checkout an abandoned or retried run's edits are put back to how the files were
	 * when it began — each file only while it is still exactly as the agent left it, so nothing the
	 * person wrote meanwhile is lost.
	 */
	private async restoreShared(
		placement: RunPlacement,
		patchsets: PatchSet[],
	): Promise<{ restored: string[]; left: string[] }> {
		const last = patchsets[patchsets.length - 1];
		if (placement.isolation !== 'shared' || !last || last.apply_status === 'applied' || !last.tags['desk.tree']) {
			return { restored: [], left: [] };
		}
		const git = await SafeGit.open(
			this.ports.project.path,
			await this.ports.library.gitLocation(this.ports.project.path),
		);
		return this.putBack(
			git,
			last.tags['desk.tree'],
			placement.start_tree!,
			last.touched.map((t) => t.path),
			placement.installed,
		);
	}

	/**
	 * Puts each of `paths` in the checkout at its state in `targetTree`, when the checkout still has
	 * it exactly as in `leftTree` (what the agent left); the others are left and named. Nothing is
	 * written through a link: folders on the way are checked, files are replaced by rename, and a
	 * link the agent left in a file's place is replaced, never followed.
	 */
	private async putBack(
		git: SafeGit,
		leftTree: string,
		targetTree: string,
		paths: readonly string[],
		installed: readonly string[] = [],
	): Promise<{ restored: string[]; left: string[] }> {
		const top = this.ports.project.path;
		const now = await git.treeOfFolder(top, leftTree, installed);
		const restored: string[] = [];
		const left: string[] = [];
		// The reads below change no config: the keys are listed once, not before each ls-tree.
		const reader = await git.pinned();
		for (const rel of [...new Set(paths)]) {
			const agentLeft = await entryAt(reader, leftTree, rel);
			const current = await entryAt(reader, now, rel);
			if (agentLeft?.oid !== current?.oid || agentLeft?.mode !== current?.mode) {
				left.push(rel);
				continue;
			}
			const wanted = await entryAt(reader, targetTree, rel);
			try {
				if (wanted === undefined || wanted.type !== 'blob') {
					removeInFolder(top, rel, { replaceLink: true });
				} else if (wanted.mode === '120000') {
					// A link of the repository's own: put back as the link it was, pointing where it did,
					// made inside the folder reached through descriptors (never through a link on the way).
					linkInFolder(top, rel, await git.run(['cat-file', 'blob', wanted.oid]));
				} else {
					writeInFolder(top, rel, await git.run(['cat-file', 'blob', wanted.oid]), {
						executable: wanted.mode === '100755',
						replaceLink: true,
					});
				}
				restored.push(rel);
			} catch (error) {
				this.ports.logger.warn(`${rel} was not put back: ${(error as Error).message}`);
				left.push(rel);
			}
		}
		await git.run(['update-index', '-q', '--refresh'], { okCodes: [0, 1] }).catch(() => undefined);
		return { restored, left };
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

	private async identity(git: SafeGit, agent: string): Promise<CommitIdentity> {
		const personIdentity = (await git.personIdentity()) ?? { name: 'Agent Desk', email: 'agent-desk@localhost' };
		return { author: { name: `${agent} via Agent Desk`, email: personIdentity.email }, committer: personIdentity };
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

/** The entry at exactly `rel` in a tree (a file, a link, a folder or a submodule), or undefined. */
async function entryAt(
	git: SafeGit,
	treeish: string,
	rel: string,
): Promise<{ oid: string; mode: string; type: string } | undefined> {
	for (const record of (await git.run(['ls-tree', '-z', '--full-tree', treeish, '--', rel]))
		.toString('utf8')
		.split('\0')) {
		const tab = record.indexOf('\t');
		if (tab > 0 && record.slice(tab + 1) === rel) {
			const [mode, type, oid] = record.slice(0, tab).split(' ');
			return { oid: oid!, mode: mode!, type: type! };
		}
	}
	return undefined;
}

/**
 * Gives every folder under `folder` its write bit back, through folder descriptors (fchmod): a
 * folder the agent swapped for a link is never followed, so nothing outside changes mode.
 */
export function makeWritable(folder: string, dir?: ConfinedDir, depth = 0): void {
	let opened: ConfinedDir | undefined;
	try {
		opened = dir ?? ConfinedDir.open(folder);
		opened.chmod(0o755);
		for (const entry of opened.rawEntries()) {
			if (entry.kind === 'dir' && depth < 256) {
				let sub: ConfinedDir | undefined;
				try {
					try {
						sub = opened.child(entry.name);
					} catch (error) {
						// A folder the agent took its read bit from cannot be opened: its mode is set by
						// name after lstat says it is a folder (a swap in between is the one residual window).
						if ((error as DeskError).data?.errno !== 'EACCES' || !opened.chmodFolderByName(entry.name, 0o755)) {
							throw error;
						}
						sub = opened.child(entry.name);
					}
					if (sub) {
						makeWritable(folder, sub, depth + 1);
					}
				} catch {
					// A link or a folder gone: not followed; best effort.
				} finally {
					sub?.close();
				}
			}
		}
	} catch {
		// Best effort.
	} finally {
		if (!dir) {
			opened?.close();
		}
	}
}

/** The Decision keeps the request it answers (see {@link DecideRequest.request}). */
function forRequest(decision: Decision, request: DecideRequest): Decision {
	if (request.request) {
		decision.tags = { ...decision.tags, 'desk.request': request.request.id, 'desk.request_hash': request.request.hash };
	}
	return decision;
}

function madeFor(decision: Decision, request: { id: string; hash: string }): boolean {
	return decision.tags['desk.request'] === request.id && decision.tags['desk.request_hash'] === request.hash;
}
