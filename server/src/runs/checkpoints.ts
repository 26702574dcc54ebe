import { actor, addRun, newRun } from '../ai/model';
import type { Run, Task } from '../ai/types';
import { DeskError } from '../core/errors';
import type { LaunchRecord } from '../launch/types';
import type { WriteTransaction } from '../store/durableDatabase';
import { removeInFolder, writeInFolder } from '../store/folderFiles';
import { putBackFiles } from './checkoutFiles';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { followUpRun, resumesTag } from './runViews';
import { SafeGit } from './safeGit';
import { readTargetChanges } from './targetChangesRecord';
import type { ResumeResult } from './types';
import { memoryFolder } from './workFolder';

/**
 * Resume from Checkpoint (glossary: Checkpoint): a new Run of the checkpointed run's Task, tagged
 * with the run it resumes, claimed and stored in one transaction with the caller's answer. Refused
 * before anything is made when the run kept no checkpoint, was resumed already, its task ended, or
 * its change no longer applies where the new run would work.
 */
export async function resumeFromCheckpoint(
	ports: RunnerPorts,
	fromId: string,
	options: {
		/** The checkpointed run's placement: whether its checkpoint is a commit (git) or a changes blob. */
		placement: RunPlacement | undefined;
		/** The launch record the new run is configured from: the checkpointed run's. */
		record: LaunchRecord | undefined;
		isolation: 'shared' | 'worktree';
		check: (record: LaunchRecord) => void;
		claim: (tx: WriteTransaction, runId: string, record: LaunchRecord) => void;
		answer: (tx: WriteTransaction, result: ResumeResult) => void;
	},
): Promise<ResumeResult> {
	const { ai } = ports;
	const from = ai.require<Run>(fromId, 'run');
	const record = options.record;
	if (!record) {
		throw new DeskError('ai.notFound', `Run ${fromId} has no launch record to resume from.`, { id: fromId });
	}
	const checkpoint = ai.runDecision(fromId);
	if (checkpoint?.decision_type !== 'checkpoint' || !checkpoint.checkpoint_id) {
		throw new DeskError(
			'run.notCheckpointed',
			`Run ${fromId} kept no checkpoint (${checkpoint ? `its decision is ${checkpoint.decision_type}` : 'it has no decision'}).`,
			{ run: fromId },
		);
	}
	const resumed = followUpRun(ai, from, resumesTag);
	if (resumed) {
		throw new DeskError(
			'run.notCheckpointed',
			`Run ${fromId}'s checkpoint was resumed already (run ${resumed.object_id}).`,
			{
				run: fromId,
				resumed_by: resumed.object_id,
			},
		);
	}
	const task = ai.require<Task>(from.task, 'task');
	if (task.status !== 'running') {
		throw new DeskError('run.notCheckpointed', `Run ${fromId}'s task is ${task.status}: there is nothing to resume.`, {
			run: fromId,
			task: task.object_id,
		});
	}
	options.check(record);
	let head = from.commit;
	if (options.placement?.target !== 'snapshot') {
		const top = ports.project.path;
		const git = await SafeGit.open(top, await ports.library.gitLocation(top));
		head = await git.resolveCommit('HEAD');
		// Where the new run will start: the checkout as it is (shared), or the commit checked out (worktree).
		const base =
			options.isolation === 'shared'
				? await git.treeOfFolder(top, head, [memoryFolder])
				: await git.text(['rev-parse', `${head}^{tree}`]);
		await checkpointTree(git, checkpoint.checkpoint_id, base, fromId);
	}
	const next = newRun(actor('system', 'agent-desk'), task, head);
	next.tags = { ...next.tags, [resumesTag]: fromId };
	addRun(task, next);
	const result: ResumeResult = { run: next.object_id, task: task.object_id, checkpoint: checkpoint.checkpoint_id };
	ports.control.transaction((tx) => {
		ai.putIn(tx, [task, next]);
		options.claim(tx, next.object_id, record);
		options.answer(tx, result);
	});
	return result;
}

/**
 * A resumed run's work folder gets its checkpoint's change, after the folder is placed and its start
 * recorded, before the agent starts: its PatchSets hold the checkpoint's change and what it adds.
 * Nothing else is written, and a file changed meanwhile is never overwritten (run.checkpointConflict).
 */
export async function applyCheckpoint(ports: RunnerPorts, run: Run, placement: RunPlacement): Promise<void> {
	const fromId = run.tags[resumesTag];
	if (!fromId) {
		return;
	}
	const checkpoint = ports.ai.runDecision(fromId)?.checkpoint_id;
	if (!checkpoint) {
		throw new DeskError('run.notCheckpointed', `Run ${fromId} kept no checkpoint.`, { run: fromId });
	}
	if (placement.target === 'snapshot') {
		// The folder is the version the checkpointed run began as (the same launch record): its change applies as it is.
		for (const file of readTargetChanges(ports.blobs.get(checkpoint), checkpoint).files) {
			if (file.after) {
				writeInFolder(placement.work_folder, file.path, ports.blobs.get(file.after), {
					executable: file.executable,
					replaceLink: true,
				});
			} else {
				removeInFolder(placement.work_folder, file.path, { replaceLink: true });
			}
		}
		return;
	}
	const top = ports.project.path;
	const git = await SafeGit.open(top, await ports.library.gitLocation(top));
	const start = placement.start_tree!;
	const target = await checkpointTree(git, checkpoint, start, fromId);
	const paths = (await git.changes(start, target)).map((c) => c.path);
	const { left } = await putBackFiles(git, placement.work_folder, ports.logger, {
		leftTree: start,
		targetTree: target,
		paths,
		installed: [...placement.installed, memoryFolder],
	});
	if (left.length > 0) {
		throw new DeskError(
			'run.checkpointConflict',
			`These files changed while the checkpoint of run ${fromId} was applied, and were left as they are: ${left.join(', ')}.`,
			{ run: fromId, paths: left },
		);
	}
}

/** The tree `base` becomes with the checkpoint's change (the checkpoint commit against its parent) applied. */
async function checkpointTree(git: SafeGit, checkpoint: string, base: string, fromId: string): Promise<string> {
	const parent = await git.resolveCommit(`${checkpoint}^1`).catch(() => undefined);
	const tree = parent ? await git.applyToTree(base, await git.diff(parent, checkpoint)) : undefined;
	if (!tree) {
		throw new DeskError(
			'run.checkpointConflict',
			parent
				? `The checkpoint of run ${fromId} (${checkpoint.slice(0, 12)}) no longer applies: the files it changes changed since.`
				: `The checkpoint commit ${checkpoint.slice(0, 12)} of run ${fromId} is not in this repository.`,
			{ run: fromId, checkpoint },
		);
	}
	return tree;
}
