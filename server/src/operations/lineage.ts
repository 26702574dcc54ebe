/**
 * The lineage (glossary: Lineage, Tally): the roots a branch may fork, forking a branch (from a run,
 * by the person on a root, by an agent through its `branch` tool) and the tree of them. A fork's
 * receipt is the lineage's own (`call_receipts`: the caller's node and key), written in the fork's
 * transaction; a branch starts after it when the checkout allows, else it waits in the queue.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeskError } from '../core/errors';
import { readGitFile } from '../git/gitFiles';
import type { Desk } from '../desk';
import { personScope, receiptKey, type ForkSettings } from '../lineage/lineage';
import {
	AddLineageRoot,
	BranchFromRun,
	LineageTreeRequest,
	ListLineageRoots,
	PromptLineage,
} from '../protocol/protocol';
import { array, object, optional, string } from '../protocol/schema';
import { chooseAgent, parseRunSettings, type RunSettings } from '../runs/settings';
import { answerOnce, recordAnswer } from '../store/clientRequests';
import { actorLabel, actorRefOf, type Actor } from './actor';
import { operation, type RunningCall } from './operation';
import { projectTop } from './runs';

export const listRoots = operation({
	name: 'lineage.roots',
	summary: "List the project's lineage roots (main always), each with its tally, branches and memory.",
	params: ListLineageRoots.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListLineageRoots, cli: 'lineage roots' },
	async run(call, { project }) {
		const lineage = await call.desk.lineage(projectTop(call.desk, project));
		return { roots: lineage.roots() };
	},
});

export const addRoot = operation({
	name: 'lineage.addRoot',
	summary: 'List a new lineage root branches may fork.',
	params: AddLineageRoot.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: AddLineageRoot, cli: 'lineage add-root' },
	async run(call, { project, name, about }) {
		const { desk, request } = call;
		const top = projectTop(desk, project);
		const lineage = await desk.lineage(top);
		const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, () => {
			const at = new Date().toISOString();
			return Promise.resolve(
				lineage.addRoot(name, about?.trim() ?? '', actorLabel(call.actor), at, (writes, root) =>
					writes.alongside((tx) => recordAnswer(tx, request, root, at)),
				),
			);
		});
		if (!replayed) {
			call.events.lineageChanged(project);
		}
		return result;
	},
});

export const lineageTree = operation({
	name: 'lineage.tree',
	summary: 'Show the lineage: roots, their tallies and branches nested under their starters, with state and cost.',
	params: LineageTreeRequest.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: LineageTreeRequest, cli: 'lineage tree' },
	async run(call, { project }) {
		return (await call.desk.lineage(projectTop(call.desk, project))).tree();
	},
});

/**
 * The repository a branch forks, as the caller named it: an absolute path that is, once its links
 * are resolved, the project's top or one of the worktrees git registered in the project's own git
 * folder (`.git/worktrees/<name>/gitdir`). Nothing under the named path is read: an agent can put a
 * FIFO, a huge file or a made-up `.git` file there. Every other path is `lineage.badRepo`, with one
 * reason whether or not it exists, so a refusal tells nothing of the host's folders.
 */
export function checkRepo(top: string, repo: string): void {
	const refuse = (why: string) =>
		new DeskError('lineage.badRepo', `${repo} is not this project's repository: ${why}.`, {
			repo: repo.slice(0, 1024),
		});
	if (!path.isAbsolute(repo)) {
		throw refuse('the path is not absolute');
	}
	const realOf = (file: string): string | undefined => {
		try {
			return fs.realpathSync(file);
		} catch {
			return undefined;
		}
	};
	const real = realOf(repo);
	const realTop = realOf(top);
	if (real !== undefined && real === realTop) {
		return;
	}
	const worktrees = path.join(top, '.git', 'worktrees');
	let names: string[] = [];
	try {
		names = fs.readdirSync(worktrees).slice(0, 1000);
	} catch {
		// No worktrees registered.
	}
	for (const name of names) {
		const gitdir = readGitFile(path.join(worktrees, name, 'gitdir'), { maxBytes: 4096 })
			?.toString('utf8')
			.trim();
		if (real !== undefined && gitdir && path.isAbsolute(gitdir) && realOf(path.dirname(gitdir)) === real) {
			return;
		}
	}
	throw refuse('it is neither the project nor one of its worktrees');
}

/** What a fork takes of the runs' settings: the branch overrides, the limits, the agents, and the settings to keep. */
export function forkSettings(settings: RunSettings): ForkSettings {
	return {
		branch: settings.lineage.branch,
		limits: settings.lineage.limits,
		agents: settings.agents.map((a) => a.name),
		defaultAgent: chooseAgent(settings).name,
		agentsWithoutTools: settings.agents.filter((a) => a.mcp === 'off').map((a) => a.name),
		stored: settings,
	};
}

/** The scope of a caller's receipts: its run's Task for an agent, the person otherwise. */
function scopeOf(actor: Actor): string {
	return actor.kind === 'agent' ? actor.task : personScope;
}

/** Forks a branch for `call` and starts what the checkout allows; the answer says whether it still waits. */
async function forkFor(
	call: RunningCall,
	tool: string,
	top: string,
	params: { prompt: string; root?: string; starterRun?: string; tools?: readonly string[] },
	settings: RunSettings,
	args: object,
): Promise<ReturnType<Awaited<ReturnType<Desk['lineage']>>['fork']>> {
	const { desk } = call;
	const lineage = await desk.lineage(top);
	const head = await desk.headCommit(top);
	const scope = scopeOf(call.actor);
	// An agent's receipts are its Task's: a Retry of the starter that asks for the same branch (its
	// request_id, else the same arguments) gets the first one. The person's are keyed by the request id;
	// without one (a script calling `desk lineage prompt` twice), each call is a branch of its own.
	const key =
		call.actor.kind === 'agent'
			? receiptKey(scope, tool, args, call.toolRequestId)
			: receiptKey(scope, tool, args, call.requestId ?? call.request?.id ?? `once:${randomUUID()}`);
	const hash = receiptKey(scope, tool, args);
	desk.faults.point('branch.beforeCommit');
	const result = lineage.fork({
		project: desk.projectAt(top).name,
		prompt: params.prompt,
		...(params.root !== undefined ? { root: params.root } : {}),
		...(params.tools !== undefined ? { tools: params.tools } : {}),
		starter: params.starterRun !== undefined ? { run: params.starterRun } : 'person',
		by: actorRefOf(call.actor),
		head,
		settings: forkSettings(settings),
		receipt: { scope, key, hash, tool },
		now: new Date(),
	});
	desk.faults.point('branch.afterCommit');
	if (!result.replayed) {
		call.events.lineageChanged(desk.projectAt(top).name, result.node);
	}
	await desk.startQueuedBranches(top);
	return { ...result, queued: lineage.nodeOf(result.node)?.queued ?? result.queued };
}

export const branchFromRun = operation({
	name: 'lineage.branch',
	summary: 'Start a branch of a run (Branch from Here): a child task forked from a listed root.',
	params: BranchFromRun.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: BranchFromRun, cli: 'lineage branch' },
	async run(call, { project, repo, prompt, root, starterRun, tools, settings }) {
		const top = projectTop(call.desk, project);
		checkRepo(top, repo);
		const runSettings = parseRunSettings(settings);
		return forkFor(
			call,
			'branch',
			top,
			{
				prompt,
				...(root !== undefined ? { root } : {}),
				...(starterRun !== undefined ? { starterRun } : {}),
				...(tools !== undefined ? { tools } : {}),
			},
			runSettings,
			{
				repo,
				prompt,
				root: root ?? null,
				starterRun: starterRun ?? null,
				...(tools !== undefined ? { tools } : {}),
				settings: settings ?? null,
			},
		);
	},
});

export const promptLineage = operation({
	name: 'lineage.prompt',
	summary: "Start a branch of a root by the person's direct request.",
	params: PromptLineage.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: PromptLineage, cli: 'lineage prompt' },
	async run(call, { project, root, prompt, tools, settings }) {
		const top = projectTop(call.desk, project);
		return forkFor(
			call,
			'prompt',
			top,
			{ prompt, root, ...(tools !== undefined ? { tools } : {}) },
			parseRunSettings(settings),
			{ root, prompt, ...(tools !== undefined ? { tools } : {}), settings: settings ?? null },
		);
	},
});

/**
 * The `branch` desk tool: an agent inside a run starts a branch of its conversation. Its run's
 * settings (the ones it was started with) configure the branch; `repo` must be the project or one of
 * its worktrees.
 */
export const branchTool = operation({
	name: 'lineage.branchTool',
	summary: 'Start a branch of this conversation: a child task with its own run, forked from a listed root.',
	params: object({
		project: string({ minLength: 1, maxLength: 1024 }),
		repo: string({ minLength: 1, maxLength: 4096 }),
		prompt: string({ minLength: 1, maxLength: 64 * 1024 }),
		root: optional(string({ minLength: 1, maxLength: 64, pattern: /^[a-z0-9][a-z0-9._-]{0,63}$/ })),
		tools: optional(
			array(string({ minLength: 1, maxLength: 64, pattern: /^[a-z][a-z0-9_]{0,63}$/ }), { maxItems: 64 }),
		),
	}),
	callers: ['agent'],
	mutates: true,
	idempotent: true,
	surfaces: {
		mcp: {
			tool: 'branch',
			title: 'Branch',
			description:
				'Start a branch of this conversation: a child task with its own run, forked from a listed root (default: your root, else main), which reports back to you once when its work ends. `repo` is the absolute path of the project (your work folder) or one of its worktrees. In a shared checkout the branch waits until your agent exits. `tools` names the desk tools the branch gets (default: all of yours; asking for one you do not have is refused, lineage.toolsNotGranted). Limited in depth, branches per conversation and branches working at once (refused naming the limit). Repeating a call with the same request_id starts nothing twice.',
			boundByRun: ['project'],
		},
	},
	async run(call, { project, repo, prompt, root, tools }) {
		const { actor, desk } = call;
		if (actor.kind !== 'agent') {
			throw new DeskError('operation.notAllowed', 'Only an agent inside a run starts a branch through its tool.', {
				operation: 'lineage.branchTool',
			});
		}
		const top = projectTop(desk, project);
		checkRepo(top, repo);
		const settings = (await desk.runs(top)).executor.settingsOf(actor.run);
		if (!settings) {
			throw new DeskError('run.notRunning', `Run ${actor.run} is not carried out by this desk; it cannot branch.`, {
				run: actor.run,
			});
		}
		return forkFor(
			call,
			'branch',
			top,
			{
				prompt,
				...(root !== undefined ? { root } : {}),
				starterRun: actor.run,
				...(tools !== undefined ? { tools } : {}),
			},
			settings,
			{ repo, prompt, root: root ?? null, ...(tools !== undefined ? { tools } : {}) },
		);
	},
});

/** The lineage's operations, in the table's order. */
export const lineageOperations = [listRoots, addRoot, lineageTree, branchFromRun, promptLineage, branchTool];
