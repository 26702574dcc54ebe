/**
 * The lineage of a project (glossary: Lineage, Tally): its listed roots, forking a branch in one
 * durable transaction with its receipt, the grant chain and its limits, the branches waiting for the
 * shared checkout, and the tree the Runs view shows. The conversation the person drives (a run whose
 * task is no branch, or the person at the editor) is the ultimate one; a branch is a Task with a
 * `branch` row in `lineage_nodes`.
 */
import { canonicalJson, sha256Hex } from '../ai/canonical';
import { uuidv7 } from '../ai/ids';
import { actor, addRun, cutGraphemes, newIntent, newRun, newTask, setTaskStatus, taskTitleMax } from '../ai/model';
import type { ActorRef, Decision, Intent, Provenance, Run, Task, ToolInvocation } from '../ai/types';
import { summaryAgentUsages } from '../ai/tokenUsage';
import { DeskError } from '../core/errors';
import type { LaunchRecord } from '../launch/types';
import { depthOf, grantChain } from './grantChain';
import {
	noMemoryStatus,
	type LineageReads,
	type LineageStore,
	type LineageWrites,
	type MemoryStatus,
	type NodeRow,
	type RootRow,
} from './ports';
import {
	lineageKindTag,
	lineageRootTag,
	mainRoot,
	type BranchConfig,
	type BranchResult,
	type BranchState,
	type LineageLimits,
	type LineageNode,
	type LineageRoot,
	type LineageTree,
	type LineageTreeNode,
} from './types';

const system = actor('system', 'agent-desk');

/** Where the tags of a lineage Task are read too (the runs' views): declared with the records. */
export { lineageKindTag, lineageRootTag };

/** The scope of the person's receipts (a conversation's are its node's). */
export const personScope = 'person';

/** What a branch takes from the settings of the call that forks it (the runs' settings, read by the caller). */
export interface ForkSettings {
	/** `lineage.branch`: what overrides the starter's launch. */
	branch: { agent?: string; template?: string[]; isolation?: 'shared' | 'worktree'; maxAttempts?: number };
	limits: LineageLimits;
	/** The agents configured, and the one a run uses when none is named. */
	agents: readonly string[];
	defaultAgent: string;
	/** The agents given no desk tools (`mcp: "off"`): a branch they carry out, or start, has none. */
	agentsWithoutTools: readonly string[];
	/** The settings themselves, kept with the branch so a queued one starts with what its fork got (names, never secret values). */
	stored: unknown;
}

/** One fork: who asks, from what, with which receipt. */
export interface ForkRequest {
	project: string;
	prompt: string;
	/** The root to fork; default the starter's root, else `main`. */
	root?: string;
	/** The desk tools the branch is to get: at most its starter's (`lineage.toolsNotGranted`); default all of its starter's. */
	tools?: readonly string[];
	/** A run (Branch from Here, an agent's `branch` tool), or the person's direct request on a root. */
	starter: { run: string } | 'person';
	/** Who the new objects are made by (the person, or the agent's run as an MCP client). */
	by: ActorRef;
	/** The repository's head: where the branch's first run starts from. */
	head: string;
	settings: ForkSettings;
	/** The receipt: the caller's scope (its node, or `person`), its key and the hash of what it asked. */
	receipt: { scope: string; key: string; hash: string; tool: string; harnessCallId?: string };
	now: Date;
}

/** A branch waiting for the shared checkout, with what it needs to start. */
export interface QueuedBranch {
	node: string;
	run: string;
	record: LaunchRecord;
	config: BranchConfig;
	/** The settings its fork got (`ForkSettings.stored`). */
	settings: unknown;
}

/**
 * The receipt key of a call without a request id: the caller's node, the tool and its canonical
 * arguments, so a call repeated as is (a harness that dispatched it twice) forks once.
 */
export function receiptKey(scope: string, tool: string, args: unknown, requestId?: string): string {
	return requestId ?? sha256Hex(`${scope}\n${tool}\n${canonicalJson(args)}`);
}

export class LineageService {
	constructor(
		private readonly store: LineageStore,
		private readonly memory: MemoryStatus = noMemoryStatus,
	) {}

	/** Lists `main` (once; a repeat writes nothing): every project has it. */
	listMain(by: string, at: string): void {
		if (this.store.read((reads) => reads.root(mainRoot))) {
			return;
		}
		this.store.write((writes) =>
			writes.insertRoot({
				name: mainRoot,
				about: 'The main line of the project.',
				listed_at: at,
				listed_by: by,
				tally_task: null,
			}),
		);
	}

	/** The listed roots, `main` first, each with its tally, its branches and its memory file's state. */
	roots(): LineageRoot[] {
		return this.store.read((reads) => {
			const states = branchStates(reads);
			return sortRoots(reads.roots()).map((row) => this.rootView(reads, row, states));
		});
	}

	/**
	 * New Lineage Root: lists `name` (`lineage.rootExists` when it is listed). `alongside` writes in
	 * the same transaction (the answer of the client's request id).
	 */
	addRoot(
		name: string,
		about: string,
		by: string,
		at: string,
		alongside?: (writes: LineageWrites, root: LineageRoot) => void,
	): LineageRoot {
		return this.store.write((writes) => {
			if (!writes.insertRoot({ name, about, listed_at: at, listed_by: by, tally_task: null })) {
				throw new DeskError('lineage.rootExists', `The root ${name} is listed already.`, { root: name });
			}
			const root = this.rootView(writes, writes.root(name)!, new Map());
			alongside?.(writes, root);
			return root;
		});
	}

	/** The lineage row of a Task: its tally or branch node; undefined for any other Task. */
	nodeOf(task: string): LineageNode | undefined {
		const row = this.store.read((reads) => reads.node(task));
		return row ? nodeView(row) : undefined;
	}

	/** Whether a Task is a branch: a conversation of a branch is no ultimate one (it may not remember, say). */
	isBranchTask(task: string): boolean {
		return this.nodeOf(task)?.kind === 'branch';
	}

	/** Whether a Task is a tally, which runs no model turns. */
	isTallyTask(task: string): boolean {
		return this.nodeOf(task)?.kind === 'tally';
	}

	/**
	 * Forks a branch, all in one transaction: the receipt (a repeat answers the first fork,
	 * `replayed`), the grant chain's limits, the root's tally (made when the root is empty), the
	 * branch's Intent, Task, Run and launch record, its node (queued: started by {@link startQueued}
	 * once the checkout allows), its board's `board.started.by` and reply-enabled input, the tally's
	 * intent entry, the input's delivery and the receipt.
	 */
	fork(request: ForkRequest): BranchResult {
		return this.store.write((writes) => this.forkIn(writes, request));
	}

	private forkIn(writes: LineageWrites, request: ForkRequest): BranchResult {
		const { receipt, now } = request;
		const at = now.toISOString();
		const stored = writes.receipt(receipt.scope, receipt.key);
		if (stored) {
			if (stored.request_hash !== receipt.hash || stored.tool !== receipt.tool) {
				throw new DeskError(
					'lineage.receiptConflict',
					`The request ${receipt.key.slice(0, 80)} started a branch with other arguments before; a new branch needs a new request id.`,
					{ scope: receipt.scope, key: receipt.key.slice(0, 128) },
				);
			}
			const first = JSON.parse(stored.result) as BranchResult;
			return { ...first, queued: writes.node(first.node)?.queued === 1, replayed: true };
		}
		// Who starts it: a run (its Task, its node when it is a branch) or the person.
		let starterRun: Run | undefined;
		let starterTask: Task | undefined;
		let starterNode: NodeRow | undefined;
		if (request.starter !== 'person') {
			starterRun = writes.object<Run>(request.starter.run);
			if (writes.node(request.starter.run)?.kind === 'tally') {
				throw new DeskError(
					'lineage.tallyNoRuns',
					`${request.starter.run} is a tally: it has no runs and starts no branch.`,
					{ task: request.starter.run },
				);
			}
			if (starterRun?.object_type !== 'run') {
				throw new DeskError('ai.notFound', `No run ${request.starter.run} in this project.`, {
					id: request.starter.run,
					type: 'run',
				});
			}
			starterTask = writes.object<Task>(starterRun.task);
			if (starterTask?.object_type !== 'task') {
				throw new DeskError('ai.notFound', `No task ${starterRun.task} in this project.`, {
					id: starterRun.task,
					type: 'task',
				});
			}
			starterNode = writes.node(starterTask.object_id);
			if (starterNode?.kind === 'tally') {
				throw new DeskError(
					'lineage.tallyNoRuns',
					`Task ${starterTask.object_id} is a tally: it runs nothing and starts no branch.`,
					{
						task: starterTask.object_id,
					},
				);
			}
		}
		const rootName = request.root ?? starterNode?.root ?? mainRoot;
		const root = writes.root(rootName);
		if (!root) {
			throw new DeskError(
				'lineage.unknownRoot',
				`No root ${rootName} is listed; list it first (New Lineage Root…, desk lineage add-root ${rootName}).`,
				{ root: rootName },
			);
		}
		const limits = request.settings.limits;
		const taskId = uuidv7(now.getTime());
		const chain = grantChain({
			branch: taskId,
			fork: { root: rootName },
			starter: starterNode
				? { chain: JSON.parse(starterNode.grant_chain) as string[] }
				: starterRun
					? { ultimateRun: starterRun.object_id }
					: 'person',
		});
		const depth = depthOf(chain);
		if (depth > limits.maxDepth) {
			throw limit('maxDepth', limits.maxDepth, `a branch this deep (${depth}) is over the limit of ${limits.maxDepth}`);
		}
		const states = branchStates(writes);
		const byStarter = starterTask?.object_id ?? root.tally_task;
		const started = byStarter
			? writes.startedBy(byStarter).filter((n) => n.kind === 'branch' && (starterRun ? true : n.starter_run === null))
					.length
			: 0;
		if (started >= limits.maxBranchesPerNode) {
			throw limit(
				'maxBranchesPerNode',
				limits.maxBranchesPerNode,
				`${starterRun ? `the task of run ${starterRun.object_id}` : 'the person'} started ${started} branches already, the limit`,
			);
		}
		const live = [...states.values()].filter((state) => !endedStates.has(state)).length;
		if (live >= limits.maxLiveBranches) {
			throw limit(
				'maxLiveBranches',
				limits.maxLiveBranches,
				`${live} branches of the project are still working, the limit`,
			);
		}
		const starterTools = narrowed(
			starterNode ? branchConfigOf(starterNode.config).tools : undefined,
			starterRun && !hasDeskTools(starterRun, request.settings) ? [] : undefined,
		);
		if (request.tools && starterTools) {
			const more = request.tools.filter((tool) => !starterTools.includes(tool));
			if (more.length > 0) {
				throw new DeskError(
					'lineage.toolsNotGranted',
					`No branch started: its starter ${starterTools.length === 0 ? 'has no desk tools' : `has only ${starterTools.join(', ')}`}, and a branch gets no more than its starter (asked for ${more.join(', ')}).`,
					{ tools: more, granted: starterTools },
				);
			}
		}
		// The root's tally: made by its first branch, once (the root's row says whether one exists).
		let tally = root.tally_task;
		if (tally === null) {
			const tallyTask = newTask(system, `Tally of ${rootName}`, { now });
			tallyTask.tags = { ...tallyTask.tags, [lineageKindTag]: 'tally', [lineageRootTag]: rootName };
			setTaskStatus(tallyTask, 'running', now);
			writes.putObjects([tallyTask]);
			writes.insertNode({
				node_id: tallyTask.object_id,
				kind: 'tally',
				root: rootName,
				fork_of: null,
				starter_node: null,
				starter_run: null,
				grant_chain: JSON.stringify([`root:${rootName}`]),
				depth: 0,
				config: '{}',
				queued: 0,
				created_at: at,
			});
			if (!writes.setTally(rootName, tallyTask.object_id)) {
				throw new Error(`the root ${rootName} got a tally in the middle of a transaction`);
			}
			tally = tallyTask.object_id;
		}
		// The branch: its Intent (under the starter's), Task (under the starter's, or the tally for the person), Run.
		const starterRecord = starterRun ? writes.launchRecordOfRun(starterRun.object_id) : undefined;
		const config = branchConfig(request.settings, starterRun, starterRecord);
		const tools = narrowed(
			request.tools ? [...new Set(request.tools)] : starterTools,
			request.settings.agentsWithoutTools.includes(config.agent) ? [] : undefined,
		);
		if (tools) {
			config.tools = tools;
		}
		config.maxNotes = limits.maxNotesPerBranch;
		const starterIntent = starterTask?.intent ? writes.object<Intent>(starterTask.intent) : undefined;
		const intent = newIntent(request.by, request.prompt, {
			now,
			...(starterIntent?.object_type === 'intent' ? { parent: starterIntent } : {}),
		});
		const parentTask = starterTask ?? writes.object<Task>(tally)!;
		const task = newTask(request.by, titleOf(request.prompt), { intent, parent: parentTask, now });
		task.object_id = taskId;
		task.requester = starterRun ? { kind: 'agent', id: starterRun.object_id } : request.by;
		task.tags = { ...task.tags, [lineageKindTag]: 'branch', [lineageRootTag]: rootName };
		const run = newRun(system, task, request.head, { now });
		addRun(task, run, now);
		const record: LaunchRecord = {
			launch_id: uuidv7(now.getTime()),
			created_at: at,
			project: request.project,
			ticket: request.prompt,
			template: { name: 'branch', nodes: config.template },
			plugs: starterRecord?.plugs ?? [],
			intent: intent.object_id,
			task: task.object_id,
			run: run.object_id,
		};
		writes.putObjects([intent, task, run]);
		writes.insertLaunchRecord(record);
		writes.insertNode({
			node_id: task.object_id,
			kind: 'branch',
			root: rootName,
			fork_of: tally,
			starter_node: byStarter ?? tally,
			starter_run: starterRun?.object_id ?? null,
			grant_chain: JSON.stringify(chain),
			depth,
			config: JSON.stringify({ ...config, settings: request.settings.stored }),
			queued: 1,
			created_at: at,
		});
		// Its board: who started it, and its prompt as the reply-enabled input; the tally records the intent.
		const from = {
			...(starterTask ? { from_node: starterTask.object_id } : {}),
			...(starterRun ? { from_run: starterRun.object_id } : {}),
		};
		writes.board.insertMessage({
			id: uuidv7(now.getTime()),
			request_id: `started:${task.object_id}`,
			node: task.object_id,
			kind: 'board.started.by',
			...from,
			reply_enabled: false,
			passive: true,
			frozen: false,
			text: starterRun ? `Started by run ${starterRun.object_id}` : `Started by ${request.by.id}`,
			data: { by: request.by, root: rootName, grant_chain: chain },
			created_at: at,
		});
		const input = writes.board.insertMessage({
			id: uuidv7(now.getTime()),
			request_id: `dlv:${task.object_id}:in`,
			node: task.object_id,
			kind: 'input',
			...from,
			reply_enabled: true,
			passive: false,
			frozen: false,
			text: request.prompt,
			created_at: at,
		});
		writes.board.insertMessage({
			id: uuidv7(now.getTime()),
			request_id: `intent:${task.object_id}`,
			node: tally,
			kind: 'intent',
			from_node: task.object_id,
			reply_enabled: false,
			passive: true,
			frozen: false,
			text: request.prompt.slice(0, 4000),
			data: { branch: task.object_id, title: task.title },
			created_at: at,
		});
		writes.board.insertDelivery({
			delivery_id: `dlv:${task.object_id}`,
			phase: 'input',
			request_id: `dlv:${task.object_id}:in`,
			message_id: input.message.id,
			at,
		});
		const result: BranchResult = {
			node: task.object_id,
			run: run.object_id,
			intent: intent.object_id,
			root: rootName,
			tally,
			queued: true,
			grant_chain: chain,
			replayed: false,
		};
		writes.insertReceipt({
			scope: receipt.scope,
			request_key: receipt.key,
			tool: receipt.tool,
			request_hash: receipt.hash,
			harness_call_id: receipt.harnessCallId ?? null,
			run_id: starterRun?.object_id ?? null,
			result: JSON.stringify(result),
			at,
		});
		return result;
	}

	/** Branches waiting for the shared checkout, oldest first. */
	queued(): QueuedBranch[] {
		return this.store.read((reads) =>
			reads
				.nodes()
				.filter((n) => n.kind === 'branch' && n.queued === 1)
				.flatMap((n) => {
					const task = reads.object<Task>(n.node_id);
					const runId = task?.runs[task.runs.length - 1];
					const record = runId ? reads.launchRecordOfRun(runId) : undefined;
					if (!runId || !record) {
						return [];
					}
					const { settings, ...config } = JSON.parse(n.config) as BranchConfig & { settings?: unknown };
					return [{ node: n.node_id, run: runId, record, config, settings }];
				}),
		);
	}

	/**
	 * Takes a queued branch out of the queue in the transaction of `claim` (its run's claim on where
	 * it works): false when another process took it first, or when `claim` refuses (the checkout is
	 * busy: the branch stays queued).
	 */
	unqueue(node: string, claim: (writes: LineageWrites) => void, busy: (error: unknown) => boolean): boolean {
		try {
			return this.store.write((writes) => {
				if (!writes.unqueue(node)) {
					return false;
				}
				claim(writes);
				return true;
			});
		} catch (error) {
			if (busy(error)) {
				return false;
			}
			throw error;
		}
	}

	/** Roots, their tallies and branches nested under their starters, with state, board counts and each subtree's tokens and cost. */
	tree(): LineageTree {
		return this.store.read((reads) => {
			const states = branchStates(reads);
			const branches = reads.nodes().filter((n) => n.kind === 'branch');
			const byStarterNode = new Map<string, NodeRow[]>();
			const by_starter_run: Record<string, string[]> = {};
			for (const branch of branches) {
				if (branch.starter_node) {
					byStarterNode.set(branch.starter_node, [...(byStarterNode.get(branch.starter_node) ?? []), branch]);
				}
				if (branch.starter_run) {
					(by_starter_run[branch.starter_run] ??= []).push(branch.node_id);
				}
			}
			const branchIds = new Set(branches.map((b) => b.node_id));
			const view = (row: NodeRow): LineageTreeNode => {
				const task = reads.object<Task>(row.node_id);
				const runs = (task?.runs ?? [])
					.map((id) => reads.object<Run>(id))
					.filter((r): r is Run => r?.object_type === 'run');
				const children = (byStarterNode.get(row.node_id) ?? []).map(view);
				let tokens = 0;
				let cost = 0;
				for (const run of runs) {
					// The run's agent, and the summary agents that memorized its landing.
					const usage = reads.byRun<Provenance>(run.object_id, 'provenance').at(-1)?.token_usage;
					const summaries = summaryAgentUsages(reads.byRun<ToolInvocation>(run.object_id, 'tool_invocation'));
					for (const spent of usage ? [usage, ...summaries] : summaries) {
						tokens += spent.total_tokens;
						cost += spent.cost_usd ?? 0;
					}
				}
				for (const child of children) {
					tokens += child.subtree.tokens;
					cost += child.subtree.cost_usd;
				}
				const abstract = reads.abstractOf(row.node_id);
				return {
					node: nodeView(row),
					title: task?.title ?? row.node_id,
					state: states.get(row.node_id) ?? 'queued',
					runs: runs.map((r) => ({ id: r.object_id, status: r.status })),
					board: reads.boardCounts(row.node_id),
					subtree: {
						tokens,
						cost_usd: Math.round(cost * 1e6) / 1e6,
						branches: 1 + children.reduce((sum, c) => sum + c.subtree.branches, 0),
					},
					...(abstract !== undefined ? { abstract } : {}),
					children,
				};
			};
			return {
				roots: sortRoots(reads.roots()).map((row) => ({
					root: this.rootView(reads, row, states),
					...(row.tally_task ? { tally: row.tally_task } : {}),
					// A root's top branches: those whose starter is no branch (the person, or a conversation they drive).
					branches: branches
						.filter((b) => b.root === row.name && !(b.starter_node && branchIds.has(b.starter_node)))
						.map(view),
				})),
				by_starter_run,
			};
		});
	}

	private rootView(reads: LineageReads, row: RootRow, states: Map<string, BranchState>): LineageRoot {
		const branches = reads.nodes().filter((n) => n.kind === 'branch' && n.root === row.name);
		const stateOf = (n: NodeRow) => states.get(n.node_id) ?? branchState(reads, n);
		return {
			name: row.name,
			about: row.about,
			listed_at: row.listed_at,
			listed_by: row.listed_by,
			...(row.tally_task ? { tally: row.tally_task } : {}),
			branches: branches.length,
			live: branches.filter((n) => !endedStates.has(stateOf(n))).length,
			landed: branches.filter((n) => stateOf(n) === 'landed').length,
			memory: this.memory.of(row.name),
		};
	}
}

/** States in which a branch's work has ended: it counts no more against the live limit. */
const endedStates: ReadonlySet<BranchState> = new Set(['landed', 'abandoned', 'failed']);

/** `main` first, then by name. */
function sortRoots(rows: RootRow[]): RootRow[] {
	return [...rows].sort((a, b) => (a.name === mainRoot ? -1 : b.name === mainRoot ? 1 : a.name.localeCompare(b.name)));
}

function branchStates(reads: LineageReads): Map<string, BranchState> {
	return new Map(
		reads
			.nodes()
			.filter((n) => n.kind === 'branch')
			.map((n) => [n.node_id, branchState(reads, n)]),
	);
}

/**
 * Where a branch stands, from its last run and that run's decision: queued while it waits for the
 * checkout, landed or abandoned by the decision, failed when its last run failed, at the gate while
 * its run waits for one (the runs' gate tag: validating and `desk.gate` waiting), else running.
 */
export function branchState(reads: LineageReads, row: NodeRow): BranchState {
	const task = reads.object<Task>(row.node_id);
	const last = task?.runs.length ? reads.object<Run>(task.runs[task.runs.length - 1]!) : undefined;
	if (last?.status === 'failed') {
		// Cancelled while it waited, too: it is out of the queue in all but the flag.
		return 'failed';
	}
	if (row.queued === 1 || !last || last.object_type !== 'run') {
		return 'queued';
	}
	if (last.status === 'completed') {
		const decision = reads.byRun<Decision>(last.object_id, 'decision').at(-1);
		return decision?.decision_type === 'commit' ? 'landed' : 'abandoned';
	}
	if (last.status === 'validating' && last.tags['desk.gate'] === 'waiting') {
		return 'gate';
	}
	return 'running';
}

/**
 * A node's stored configuration as the wire has it: without the run settings its fork got, which are
 * kept beside it only to start a queued branch with them.
 */
export function branchConfigOf(json: string): BranchConfig {
	const { settings: _settings, ...config } = JSON.parse(json) as BranchConfig & { settings?: unknown };
	return config;
}

/** A `lineage_nodes` row as the wire has it (the settings kept to start a queued branch left out): the one reader of it. */
export function nodeView(row: NodeRow): LineageNode {
	const config = branchConfigOf(row.config);
	return {
		node: row.node_id,
		kind: row.kind,
		root: row.root,
		...(row.fork_of ? { fork_of: row.fork_of } : {}),
		...(row.starter_node ? { starter_node: row.starter_node } : {}),
		...(row.starter_run ? { starter_run: row.starter_run } : {}),
		grant_chain: JSON.parse(row.grant_chain) as string[],
		depth: row.depth,
		config,
		queued: row.queued === 1,
		created_at: row.created_at,
	};
}

/**
 * How the branch is carried out, later wins: the defaults (the runs' agent, `["work"]`, the shared
 * checkout), the starter's launch (its agent, its template; its plugs at the versions its Go froze
 * go into the branch's launch record), the branch settings.
 */
export function branchConfig(
	settings: ForkSettings,
	starterRun: Run | undefined,
	starterRecord: LaunchRecord | undefined,
): BranchConfig {
	const starterAgent = starterRun?.tags['desk.agent'];
	const agent =
		settings.branch.agent ??
		(starterAgent && settings.agents.includes(starterAgent) ? starterAgent : settings.defaultAgent);
	return {
		agent,
		template: settings.branch.template ?? starterRecord?.template.nodes ?? ['work'],
		isolation: settings.branch.isolation ?? 'shared',
		...(settings.branch.maxAttempts !== undefined ? { maxAttempts: settings.branch.maxAttempts } : {}),
		...(starterRecord ? { fromLaunch: starterRecord.launch_id } : {}),
	};
}

/**
 * Whether the starter run's agent was given the desk tools: its run says so (`desk.mcp`); a run from
 * before it did is looked up in the settings by its agent.
 */
function hasDeskTools(run: Run, settings: ForkSettings): boolean {
	const recorded = run.tags['desk.mcp'];
	if (recorded !== undefined) {
		return recorded !== 'off';
	}
	const agent = run.tags['desk.agent'];
	return agent === undefined || !settings.agentsWithoutTools.includes(agent);
}

/** Desk tools both allow, each undefined meaning every tool: a branch's are a subset of its starter's (glossary: Lineage). */
function narrowed(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
	if (a === undefined) {
		return b === undefined ? undefined : [...b];
	}
	return b === undefined ? [...a] : a.filter((tool) => b.includes(tool));
}

/** A task's title from a prompt: its first line, cut to 99 characters. */
function titleOf(prompt: string): string {
	const first = prompt.trim().split('\n', 1)[0]!.trim();
	// Cut on a grapheme boundary (never half an emoji), within the seed's title length with the ellipsis.
	const whole = cutGraphemes(first, taskTitleMax);
	return (whole.length < first.length ? `${cutGraphemes(first, taskTitleMax - 1)}…` : first) || 'Branch';
}

function limit(name: keyof LineageLimits, value: number, why: string): DeskError {
	return new DeskError('lineage.limit', `No branch started: ${why} (${name} ${value}).`, { limit: name, value });
}
