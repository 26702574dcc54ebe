import type { DecideResult, RunDetail } from '../../../server/src/protocol/protocol';

/*
 * What the gate's confirmations and reports say (glossary: Gate, Checkpoint), without VS Code: the
 * commands in gateCommands.ts show them; test/unit/client/gateWords.test.ts reads them.
 */

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The run's own branch in worktree mode, where its landing commits. */
export const runBranch = (runId: string) => `desk/run-${runId}`;

/** The checks of the run's last PatchSet that failed, by name, with their exit code and summary. */
export function failingChecks(detail: RunDetail): string[] {
	const last = detail.patchsets[detail.patchsets.length - 1];
	return detail.evidence
		.filter((e) => last && e.patchset_id === last.object_id && e.exit_code !== 0)
		.map((e) => {
			const summary = e.summary?.split('\n', 1)[0]?.trim();
			return `${e.tags['desk.check'] ?? e.tool} (exit ${e.exit_code ?? 'none'}${summary ? `: ${summary.slice(0, 120)}` : ''})`;
		});
}

export interface LandingQuestion {
	/** With a failing check: a warning, whose first button does not land. */
	warning: boolean;
	message: string;
	detail: string;
	/** The buttons, the default (first) one first; the dialog adds Cancel. */
	actions: string[];
	/** The button that lands. */
	land: string;
}

/**
 * The confirmation of Approve and Land: what the commit will be and where, the files, and — when a
 * check of the change failed — a warning naming the failing checks, whose default button reviews
 * them rather than lands (VS Code's modal always makes its first button the default and puts Cancel
 * last, so a safe first button is how Enter lands nothing).
 */
export function landingQuestion(detail: RunDetail, runId: string, checkedOutBranch: string): LandingQuestion {
	const last = detail.patchsets[detail.patchsets.length - 1]!;
	const files = last.touched
		.map((f) => `  ${f.change_type === 'added' ? 'A' : f.change_type === 'deleted' ? 'D' : 'M'} ${f.path}`)
		.slice(0, 12);
	const more = last.touched.length > files.length ? `\n  … and ${last.touched.length - files.length} more` : '';
	const count = plural(last.touched.length, 'file');
	const failing = failingChecks(detail);
	const title = detail.task.title;
	let what: string;
	if (last.tags['desk.target_asset']) {
		what = `Cut the target asset's next version (made by the run) from ${count}; the run began at v${last.tags['desk.target_version']}.`;
	} else if (detail.run.tags['desk.isolation'] === 'worktree') {
		what = `Commit ${count} on ${runBranch(runId)}, the run's own branch, as “${title}” with the trailer Desk-Run: ${runId}. ${checkedOutBranch} does not get it until you merge it (offered next).`;
	} else {
		what = `Commit ${count} on ${checkedOutBranch} as “${title}” with the trailer Desk-Run: ${runId}.`;
	}
	const body = `${what}\n\n${files.join('\n')}${more}`;
	if (failing.length === 0) {
		return { warning: false, message: `Land run ‘${title}’?`, detail: body, actions: ['Land'], land: 'Land' };
	}
	return {
		warning: true,
		message: `Land run ‘${title}’ with ${plural(failing.length, 'failing check')}?`,
		detail: `${failing.length === 1 ? 'This check' : 'These checks'} of the change failed:\n${failing.map((f) => `  ✕ ${f}`).join('\n')}\n\n${body}`,
		actions: ['Review Checks', 'Land Anyway'],
		land: 'Land Anyway',
	};
}

/** Where a Checkpoint keeps the run's change, in words (glossary: Checkpoint). */
function checkpointPlace(detail: RunDetail, runId: string): string {
	const last = detail.patchsets[detail.patchsets.length - 1];
	return last?.tags['desk.target_asset']
		? "in the desk's store, as the run's changes to its target asset"
		: `as a commit under refs/desk/checkpoints/${runId}, off every branch`;
}

/** The files a Checkpoint puts back in the shared checkout: those of the run's last PatchSet; none elsewhere. */
export function checkpointPutsBack(detail: RunDetail): number {
	const last = detail.patchsets[detail.patchsets.length - 1];
	return detail.run.tags['desk.isolation'] === 'shared' && last ? new Set(last.touched.map((f) => f.path)).size : 0;
}

/** The confirmation of Checkpoint: what it keeps, where, what it puts back, and how to go on from it. */
export function checkpointQuestion(detail: RunDetail, runId: string): { message: string; detail: string } {
	const last = detail.patchsets[detail.patchsets.length - 1];
	const files = last?.touched.map((f) => f.path) ?? [];
	const back = checkpointPutsBack(detail);
	return {
		message: `Keep run ‘${detail.task.title}’ as a checkpoint?`,
		detail: `Its change (${plural(files.length, 'file')}: ${files.slice(0, 6).join(', ')}${files.length > 6 ? ', …' : ''}) is kept ${checkpointPlace(detail, runId)}; nothing lands.${back ? ` The ${plural(back, 'file')} the agent changed in the checkout ${back === 1 ? 'is' : 'are'} put back as ${back === 1 ? 'it was' : 'they were'} when the run began (a file you edited since is left as it is).` : ''} Resume from Checkpoint starts a new run from it.`,
	};
}

/** What a Checkpoint kept and where, once it is made. */
export function checkpointKept(detail: RunDetail, result: DecideResult, runId: string): string {
	const last = detail.patchsets[detail.patchsets.length - 1];
	const files = last?.touched.map((f) => f.path) ?? [];
	const id = result.decision.checkpoint_id;
	const where = last?.tags['desk.target_asset']
		? `in the desk's store as the run's changes to its target asset${id ? ` (${id.slice(0, 12)})` : ''}`
		: `as commit ${id?.slice(0, 7) ?? '?'} under refs/desk/checkpoints/${runId}, off every branch`;
	const restored = result.restored?.length
		? ` ${plural(result.restored.length, 'file')} put back in the checkout.`
		: '';
	const left = result.left?.length ? ` Left as they are (changed since the run): ${result.left.join(', ')}.` : '';
	return `Agent Desk: kept ‘${detail.task.title}’ as a checkpoint: ${plural(files.length, 'file')} (${files.slice(0, 4).join(', ')}${files.length > 4 ? ', …' : ''}) ${where}.${restored}${left} Nothing landed.`;
}

/** The report of a landing on git, and what to do next: on the run's own branch, merge it or switch to it. */
export function landedWords(
	detail: RunDetail,
	commit: string,
	runId: string,
	checkedOutBranch: string,
): { message: string; merge?: { title: string; command: string }; switchTo?: { title: string; command: string } } {
	const title = detail.task.title;
	if (detail.run.tags['desk.isolation'] !== 'worktree') {
		return { message: `Agent Desk: landed ‘${title}’ as commit ${commit.slice(0, 7)} on ${checkedOutBranch}.` };
	}
	const branch = runBranch(runId);
	return {
		message: `Agent Desk: landed ‘${title}’ as commit ${commit.slice(0, 7)} on ${branch}, the run's own branch: ${checkedOutBranch} does not have it yet.`,
		merge: { title: `Merge into ${checkedOutBranch}`, command: `git merge --no-edit ${branch}` },
		switchTo: { title: 'Switch to Branch', command: `git switch ${branch}` },
	};
}
