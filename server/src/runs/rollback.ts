import { actor, addRun, newDecision, newRun, setRunStatus } from '../ai/model';
import type { Decision, PatchSet, Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import { entryAt, putBackFiles } from './checkoutFiles';
import { forRequest, madeFor, type DecideRequest, type PersonName } from './decisionRequests';
import type { RunnerPorts } from './ports';
import { followUpRun, rollsBackTag } from './runViews';
import { SafeGit } from './safeGit';
import { readTargetChanges } from './targetChangesRecord';
import type { DecideResult } from './types';
import { memoryFolder } from './workFolder';

/**
 * Rollback (glossary: Rollback): reverts what a landed run landed, as a Run of its own — a system run
 * of the same Task completed by a `rollback` Decision — since the landed run has its one Decision.
 * On git a revert commit of the landing commit on the branch it landed on; on a snapshot target the
 * version the run began from, restored as the asset's next version. Nothing of the person's is
 * overwritten: a checkout with changes in the files the revert writes is refused before anything.
 */
export async function rollBack(
	ports: RunnerPorts,
	landed: Run,
	request: DecideRequest,
	context: { subject: string },
): Promise<DecideResult> {
	const { ai } = ports;
	const landedId = landed.object_id;
	const earlier = followUpRun(ai, landed, rollsBackTag);
	const earlierDecision = earlier ? ai.runDecision(earlier.object_id) : undefined;
	if (earlier && earlierDecision) {
		if (request.request && madeFor(earlierDecision, request.request)) {
			return resultOf(earlier, earlierDecision);
		}
		throw new DeskError('run.notLanded', `Run ${landedId} was rolled back already (run ${earlier.object_id}).`, {
			run: landedId,
			rollback_run: earlier.object_id,
		});
	}
	const landing = ai.runDecision(landedId);
	const chosen = landing?.chosen_patchset_id ? ai.get<PatchSet>(landing.chosen_patchset_id) : undefined;
	if (!landing || landing.decision_type !== 'commit' || !chosen) {
		throw new DeskError(
			'run.notLanded',
			`Run ${landedId} has not landed (${landing ? `its decision is ${landing.decision_type}` : 'it has no decision'}): only a landed run is rolled back.`,
			{ run: landedId },
		);
	}
	const task = ai.require<Task>(landed.task, 'task');
	const rationale = request.rationale?.trim() || undefined;
	const reverted = landing.tags['desk.version']
		? await revertVersion(ports, landed, landing, chosen, context.subject)
		: await revertCommit(ports, landed, landing, context.subject, request.identity);
	const next = reverted.run;
	next.tags = { ...next.tags, [rollsBackTag]: landedId };
	addRun(task, next);
	// The revert is made: the run went through nothing but this, and its Decision completes it.
	for (const status of ['patching', 'validating', 'completed'] as const) {
		setRunStatus(next, status);
	}
	const decision = forRequest(
		newDecision(request.by, next, 'rollback', {
			...(reverted.commit ? { resultCommit: reverted.commit } : {}),
			...(rationale ? { rationale } : {}),
		}),
		request,
	);
	decision.tags = { ...decision.tags, [rollsBackTag]: landedId, 'desk.reverted_patchset': chosen.object_id };
	if (reverted.version !== undefined) {
		decision.tags['desk.version'] = String(reverted.version);
		decision.tags['desk.asset'] = landing.tags['desk.asset']!;
	}
	ai.put([next, decision, task]);
	await reverted.afterRecord?.();
	return resultOf(next, decision);
}

/** A run id (UUID v7) as a trailer or a note names it. */
const uuidPattern = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

function resultOf(run: Run, decision: Decision): DecideResult {
	const version = decision.tags['desk.version'];
	return {
		decision,
		rollback_run: run.object_id,
		...(decision.result_commit_sha ? { commit: decision.result_commit_sha } : {}),
		...(version !== undefined ? { version: Number(version) } : {}),
	};
}

interface Reverted {
	run: Run;
	commit?: string;
	version?: number;
	/** What tidies the checkout once the Decision is stored. */
	afterRecord?: () => Promise<void>;
}

/** The version the landed run began from, its files restored as the target asset's next version. */
async function revertVersion(
	ports: RunnerPorts,
	landed: Run,
	landing: Decision,
	chosen: PatchSet,
	subject: string,
): Promise<Reverted> {
	const asset = landing.tags['desk.asset']!;
	const landedVersion = Number(landing.tags['desk.version']);
	const hash = chosen.tags['desk.target_changes']!;
	const changes = readTargetChanges(ports.blobs.get(hash), hash);
	const began = changes.version !== undefined ? await ports.library.files(asset, changes.version) : undefined;
	const executable = new Map(began?.files.map((f) => [f.path, f.executable]) ?? []);
	const files = changes.files.map((f) => ({
		path: f.path,
		...(f.before ? { bytes: ports.blobs.get(f.before), executable: executable.get(f.path) ?? f.executable } : {}),
	}));
	const task = ports.ai.require<Task>(landed.task, 'task');
	const run = newRun(actor('system', 'agent-desk'), task, landed.commit);
	const restored =
		changes.version !== undefined
			? await restoredBefore(ports, asset, { landed: landedVersion, began: changes.version }, landed.object_id)
			: undefined;
	if (restored) {
		// Restored by a rollback the desk did not live to record: recorded now, nothing cut again.
		run.object_id = restored.run;
		return { run, version: restored.version };
	}
	// landRunChanges refuses (run.targetMoved) when the asset moved on from the landed version.
	const cut = await ports.library.landRunChanges(
		asset,
		landedVersion,
		files,
		restoreNote(run.object_id, landed.object_id, subject),
	);
	ports.faults?.point('rollback.afterVersion.beforeDecision');
	return { run, version: cut.version.version };
}

/** The note of the version a rollback restores: the rollback run's id first, as a revert commit's trailer names it. */
function restoreNote(rollbackId: string, landedId: string, subject: string): string {
	return `run ${rollbackId}: rollback of run ${landedId}: ${subject}`.slice(0, 200);
}

/**
 * The rollback run's id and the version when the version right after the landed one is the restore a
 * rollback of `landedId` cut: made by a run, its note naming both runs, its files those of the version
 * the landed run began from. Only right after: landRunChanges refuses an asset that moved on.
 */
async function restoredBefore(
	ports: RunnerPorts,
	asset: string,
	versions: { landed: number; began: number },
	landedId: string,
): Promise<{ run: string; version: number } | undefined> {
	const snapshotVersion = async (n: number) => {
		const found = (await ports.library.versionPage(asset, { from: n, to: n })).versions[0];
		return found?.engine === 'snapshot' && found.version === n ? found : undefined;
	};
	const after = await snapshotVersion(versions.landed + 1);
	if (after?.made_by !== 'run' || after.manifest !== (await snapshotVersion(versions.began))?.manifest) {
		return undefined;
	}
	const [, run, rolledBack] = new RegExp(`^run (${uuidPattern}): rollback of run (\\S+): `).exec(after.note) ?? [];
	return run && rolledBack === landedId ? { run, version: after.version } : undefined;
}

/**
 * A revert commit of the landing commit, on the branch it landed on: the checked-out branch when it
 * holds the commit (the checkout's files follow, each only while it is as the branch had it), else
 * the run's own `desk/run-<id>` branch when no worktree has it checked out.
 */
async function revertCommit(
	ports: RunnerPorts,
	landed: Run,
	landing: Decision,
	subject: string,
	given: PersonName | undefined,
): Promise<Reverted> {
	const top = ports.project.path;
	const git = await SafeGit.open(top, await ports.library.gitLocation(top));
	const landedCommit = landing.result_commit_sha!;
	const parent = (await git.run(['rev-parse', '--verify', '-q', `${landedCommit}^1`], { okCodes: [0, 1] }))
		.toString('utf8')
		.trim();
	if (!parent) {
		throw new DeskError('run.notLanded', `The landing commit ${landedCommit} is not in this repository.`, {
			run: landed.object_id,
			commit: landedCommit,
		});
	}
	const where = await landedBranch(git, landed.object_id, landedCommit);
	const tip = await git.resolveCommit(where.ref);
	const task = ports.ai.require<Task>(landed.task, 'task');
	const madeBy = await revertedBefore(git, tip, landedCommit, landed.object_id);
	if (madeBy) {
		// Reverted by a rollback the desk did not live to record: recorded now, nothing committed again.
		const before = await git.resolveCommit(`${tip}^1`);
		const run = newRun(actor('system', 'agent-desk'), task, before);
		run.object_id = madeBy;
		const paths = (await git.changes(before, tip)).map((c) => c.path);
		return {
			run,
			commit: tip,
			afterRecord: where.checkout ? followCheckout(ports, git, before, tip, paths) : undefined,
		};
	}
	const tree = await git.applyToTree(tip, await git.diff(landedCommit, parent));
	const branchName = where.ref.replace(/^refs\/heads\//, '');
	if (!tree) {
		throw new DeskError(
			'run.landConflict',
			`The revert of ${landedCommit.slice(0, 12)} no longer applies to ${branchName}: the files it touched changed since.`,
			{ run: landed.object_id, commit: landedCommit },
		);
	}
	const paths = (await git.changes(tip, tree)).map((c) => c.path);
	if (where.checkout) {
		await assertCheckoutClean(git, top, tip, paths, landed.object_id);
	}
	const run = newRun(actor('system', 'agent-desk'), task, tip);
	const person = await git.commitPerson(given);
	const message = `Revert “${subject}”\n\nThis reverts commit ${landedCommit}, which run ${landed.object_id} landed.\n\nDesk-Run: ${run.object_id}\n`;
	const commit = await git.commitTree(tree, [tip], message, { author: person, committer: person });
	// Only if the branch is still where it was read: a commit made meanwhile is never lost.
	await git.updateRef(where.ref, commit, tip, `agent desk: roll back run ${landed.object_id}`);
	ports.faults?.point('rollback.afterCommit.beforeDecision');
	const asset = ports.project.main_asset;
	if (asset) {
		ports.library.recordRunCommit(asset, commit);
	}
	return { run, commit, afterRecord: where.checkout ? followCheckout(ports, git, tip, commit, paths) : undefined };
}

/** The rollback run's id when `tip` is the revert of `landedCommit` a rollback made (its message and trailer). */
async function revertedBefore(
	git: SafeGit,
	tip: string,
	landedCommit: string,
	landedId: string,
): Promise<string | undefined> {
	const message = await git.text(['log', '-1', '--format=%B', tip]);
	return message.includes(`\nThis reverts commit ${landedCommit}, which run ${landedId} landed.\n`)
		? new RegExp(`^Desk-Run: (${uuidPattern})$`, 'm').exec(message)?.[1]
		: undefined;
}

/** The checkout's files of `paths` follow the branch from `from` to `to`, each only while it is as `from` had it. */
function followCheckout(ports: RunnerPorts, git: SafeGit, from: string, to: string, paths: string[]) {
	const top = ports.project.path;
	return async () => {
		try {
			const { left } = await putBackFiles(git, top, ports.logger, {
				leftTree: from,
				targetTree: to,
				paths,
				installed: [memoryFolder],
			});
			await git.syncIndexPaths(to, paths);
			if (left.length > 0) {
				ports.logger.warn(`rollback ${to}: left as they are in the checkout: ${left.join(', ')}`);
			}
		} catch (error) {
			ports.logger.warn(
				`rolled back as ${to}, but the checkout could not be brought up to date (${(error as Error).message})`,
			);
		}
	};
}

async function landedBranch(
	git: SafeGit,
	runId: string,
	landedCommit: string,
): Promise<{ ref: string; checkout: boolean }> {
	const holds = async (ref: string) =>
		(await git.run(['merge-base', landedCommit, ref], { okCodes: [0, 1] })).toString('utf8').trim() === landedCommit;
	const current = await git.currentBranch();
	if (current && (await holds(current))) {
		return { ref: current, checkout: true };
	}
	const own = `refs/heads/desk/run-${runId}`;
	const exists = (await git.run(['rev-parse', '--verify', '-q', own], { okCodes: [0, 1] })).length > 0;
	if (exists && (await holds(own))) {
		const worktrees = (await git.run(['worktree', 'list', '--porcelain'])).toString('utf8');
		if (worktrees.split('\n').includes(`branch ${own}`)) {
			throw new DeskError(
				'run.checkoutDirty',
				`desk/run-${runId} is checked out in a worktree; roll it back there with git revert ${landedCommit.slice(0, 12)}.`,
				{ run: runId, branch: `desk/run-${runId}` },
			);
		}
		return { ref: own, checkout: false };
	}
	throw new DeskError(
		'run.notLanded',
		`The landing commit ${landedCommit.slice(0, 12)} is on neither the checked-out branch${current ? ` (${current.replace(/^refs\/heads\//, '')})` : ''} nor desk/run-${runId}: check out the branch it landed on first.`,
		{ run: runId, commit: landedCommit },
	);
}

/** Refuses (run.checkoutDirty, naming them) when a file the revert writes differs in the checkout or the index from the branch's tip. */
async function assertCheckoutClean(
	git: SafeGit,
	top: string,
	tip: string,
	paths: readonly string[],
	runId: string,
): Promise<void> {
	if (paths.length === 0) {
		return;
	}
	const folder = await git.treeOfFolder(top, tip, [memoryFolder]);
	const reader = await git.pinned();
	const changed = new Set<string>();
	for (const rel of paths) {
		const [atTip, inFolder] = [await entryAt(reader, tip, rel), await entryAt(reader, folder, rel)];
		if (atTip?.oid !== inFolder?.oid || atTip?.mode !== inFolder?.mode) {
			changed.add(rel);
		}
	}
	const staged = (await git.run(['diff-index', '--cached', '-z', '--name-only', '--no-renames', tip, '--', ...paths]))
		.toString('utf8')
		.split('\0')
		.filter(Boolean);
	for (const rel of staged) {
		changed.add(rel);
	}
	if (changed.size > 0) {
		const list = [...changed].sort();
		throw new DeskError(
			'run.checkoutDirty',
			`The checkout has changes in files the rollback would write (${list.join(', ')}): commit or put them away first; nothing was changed.`,
			{ run: runId, paths: list },
		);
	}
}
