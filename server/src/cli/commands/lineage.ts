/**
 * `desk lineage …` (glossary: Lineage): the roots, forking a branch by the person's request or from
 * a run, and the tree. A branch started by the command is carried out in this process, so the command
 * waits for what it started (a Ctrl-C cancels it) before it ends.
 */
import { maxSettingsBytes } from '../../core/inputLimits';
import type { BranchResult, LineageRoot, LineageTree, LineageTreeNode } from '../../lineage/types';
import { addRoot, branchFromRun, lineageTree, listRoots, promptLineage } from '../../operations/lineage';
import { projectTop } from '../../operations/runs';
import { expectArgs, oneId, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { operationCommand } from '../operationCommand';
import { projectOfCommand } from '../projects';
import { terminalSafe as t } from '../terminal';
import { settingsOf } from './run';

/** The prompt: --prompt TEXT or --prompt-file F, exactly one. */
function promptOf({ values, command }: CommandContext): string {
	if ((values.prompt === undefined) === (values['prompt-file'] === undefined)) {
		throw new UsageError(`${command} takes --prompt TEXT or --prompt-file F`);
	}
	return values.prompt ?? readInputText(values['prompt-file']!, 'the prompt file', maxSettingsBytes);
}

/** The desk of a command that forks: it carries out the branches it starts, and those the queue starts after them. */
async function carrying(context: CommandContext): Promise<void> {
	(await context.open()).carriesQueuedBranches = true;
}

/** Waits for the runs the command started here (the branch, and any the queue started after it), cancelling them on Ctrl-C. */
async function carriedOut(context: CommandContext, project: string): Promise<void> {
	const desk = await context.open();
	const { executor } = await desk.runs(projectTop(desk, project));
	const onSignal = () => {
		for (const run of executor.liveRuns) {
			try {
				executor.cancel(run, 'interrupted from the command line');
			} catch {
				// It ended meanwhile.
			}
		}
	};
	process.once('SIGINT', onSignal);
	process.once('SIGTERM', onSignal);
	try {
		await desk.runsEnded();
	} finally {
		process.off('SIGINT', onSignal);
		process.off('SIGTERM', onSignal);
	}
}

const lineageRoots = operationCommand(listRoots, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		return { project: await projectOfCommand(context) };
	},
	text: ({ roots }) => roots.map(formatRoot).join('\n'),
});

const lineageAddRoot = operationCommand(addRoot, {
	async params(context) {
		return {
			project: await projectOfCommand(context),
			name: oneId(context.rest, context.command),
			...(context.values.about !== undefined ? { about: context.values.about } : {}),
		};
	},
	text: (root) => `listed ${formatRoot(root)}`,
});

const lineagePrompt = operationCommand(promptLineage, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		const root = context.values.root;
		if (root === undefined) {
			throw new UsageError(`${context.command} takes --root NAME`);
		}
		await carrying(context);
		return { project: await projectOfCommand(context), root, prompt: promptOf(context), settings: settingsOf(context) };
	},
	text: formatBranch,
	async follow(result, context) {
		if (result.replayed) {
			return undefined;
		}
		await carriedOut(context, await projectOfCommand(context));
		return undefined;
	},
});

const lineageBranch = operationCommand(branchFromRun, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		const starterRun = context.values['from-run'];
		const repo = context.values['repo-path'];
		if (starterRun === undefined || repo === undefined) {
			throw new UsageError(`${context.command} takes --from-run RUN and --repo-path ABSOLUTE-PATH`);
		}
		await carrying(context);
		return {
			project: await projectOfCommand(context),
			repo,
			prompt: promptOf(context),
			starterRun,
			...(context.values.root !== undefined ? { root: context.values.root } : {}),
			settings: settingsOf(context),
		};
	},
	text: formatBranch,
	async follow(result, context) {
		if (!result.replayed) {
			await carriedOut(context, await projectOfCommand(context));
		}
		return undefined;
	},
});

const lineageTreeCommand = operationCommand(lineageTree, {
	async params(context) {
		expectArgs(context.rest, 0, context.command);
		return { project: await projectOfCommand(context) };
	},
	text: formatTree,
});

export const lineageCommands: ReadonlyArray<[string, Command]> = [
	['lineage roots', lineageRoots],
	['lineage add-root', lineageAddRoot],
	['lineage prompt', lineagePrompt],
	['lineage branch', lineageBranch],
	['lineage tree', lineageTreeCommand],
];

function formatRoot(root: LineageRoot): string {
	const memory = root.memory.exists
		? `memory ${root.memory.memories}${root.memory.uncommitted ? ' (uncommitted)' : ''}`
		: 'no memory';
	return `${t(root.name)}  ${root.tally ? `tally ${t(root.tally)}` : 'empty'}  ${root.branches} branch${root.branches === 1 ? '' : 'es'} · ${root.live} live · ${root.landed} landed  ${memory}${root.about ? `  — ${t(root.about)}` : ''}`;
}

function formatBranch(result: BranchResult): string {
	return `${result.replayed ? 'already started' : 'started'} branch ${t(result.node)} (run ${t(result.run)}) of ${t(result.root)}, tally ${t(result.tally)}${result.queued ? ', waiting for the checkout' : ''}\n  grant chain: ${result.grant_chain.map(t).join(' → ')}`;
}

function formatTree(tree: LineageTree): string {
	const lines: string[] = [];
	const node = (branch: LineageTreeNode, depth: number) => {
		const state = branch.state === 'queued' ? 'waiting for the checkout' : branch.state;
		lines.push(
			`${'  '.repeat(depth)}${t(branch.node.node)}  ${state}  "${t(branch.title)}"  ${branch.subtree.tokens} tokens${branch.subtree.cost_usd ? ` $${branch.subtree.cost_usd.toFixed(2)}` : ''}  board ${branch.board.messages}`,
		);
		for (const child of branch.children) {
			node(child, depth + 1);
		}
	};
	for (const { root, branches } of tree.roots) {
		lines.push(formatRoot(root));
		for (const branch of branches) {
			node(branch, 1);
		}
	}
	return lines.join('\n');
}
