/**
 * Project memory's operations (glossary: Project memory): remember and forget (the person, or a
 * conversation they drive: never a branch), a root's memory as the Memory view shows it, Commit
 * Memory, and memorize a landing through the summary agent. Every change goes through the root's
 * queue and lands in `.desk-memory/<root>.json` with its receipt (store/memoryFiles.ts).
 */
import { sha256Hex, canonicalJson } from '../ai/canonical';
import { uuidv7 } from '../ai/ids';
import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import {
	actorByLabel,
	evidencePathProblem,
	memoryLimits,
	normalizeAutomatedText,
	type MemoryBatch,
} from '../lineage/memory';
import { mainRoot, type Memory, type MemoryRequestReceipt } from '../lineage/types';
import { CommitMemory, ForgetMemory, MemorizeLanding, RememberMemory, ShowMemory } from '../protocol/protocol';
import { newToolInvocation } from '../ai/model';
import type { Intent, PatchSet, Run, Task, TokenUsage } from '../ai/types';
import { summaryAgentTool } from '../ai/tokenUsage';
import { describeError, isDeskError } from '../core/errors';
import { isAlive } from '../core/processes';
import { memoKey, memorizeInput, memorizePrompt, opsFromAnswer } from '../lineage/memorize';
import { applyMemoryBatch } from '../lineage/memory';
import type { MemorizeResult } from '../lineage/types';
import { parseRunSettings, type RunSettings } from '../runs/settings';
import { askSummaryAgent, type SummaryAnswer } from '../runs/summaryAgent';
import { SafeGit } from '../runs/safeGit';
import { answerOnce, markReplayed, type ClientRequest } from '../store/clientRequests';
import type { ProjectMemory } from '../store/memoryFiles';
import { actorRefOf, type Actor } from './actor';
import { projectOfCall } from './assets';
import { projectTop } from './attachments';
import { operation, type RunningCall } from './operation';

/** The project a call acts on (an agent's is its run's) and its memory. */
async function memoryOfCall(
	call: RunningCall,
	named: string | undefined,
): Promise<{ top: string; memory: ProjectMemory }> {
	const project = projectOfCall(call, named);
	if (project === undefined) {
		throw new DeskError('desk.badParams', 'params.project: the project is required', { field: 'params.project' });
	}
	const top = projectTop(call.desk, project);
	return { top, memory: await call.desk.memory(top) };
}

/** `root` as a listed root of the project (`lineage.unknownRoot` otherwise). */
function listedRoot(memory: ProjectMemory, root: string): string {
	if (!memory.sql.isListedRoot(root)) {
		throw new DeskError(
			'lineage.unknownRoot',
			`${JSON.stringify(root)} is not a listed root of this project; the roots are ${memory.sql.listedRoots().join(', ')}.`,
			{ root },
		);
	}
	return root;
}

/**
 * Only @ultimate changes memory: the person, or an agent of a conversation they drive. A branch's
 * agent is refused (`memory.notRoot`): its work reaches memory through its landing, reviewed.
 */
async function assertUltimate(call: RunningCall, top: string): Promise<void> {
	const actor = call.actor;
	if (actor.kind === 'agent' && (await call.desk.isBranchTask(top, actor.task))) {
		throw new DeskError(
			'memory.notRoot',
			'A branch may not change project memory: only the person and the conversations they drive may. Report what should be remembered to the starter instead.',
			{ task: actor.task, run: actor.run },
		);
	}
}

/**
 * Applies `ops` as the call's request: its receipt key `<op>:<request id>` (a call without an id
 * runs once as it comes), the hash of its params and who asked go into the file with the change.
 */
function submitAs(
	memory: ProjectMemory,
	call: RunningCall,
	change: { op: 'remember' | 'forget'; root: string; at: string; params: object; ops: MemoryBatch['ops'] },
): { result: MemoryRequestReceipt['result']; replayed: boolean } {
	const request: ClientRequest | undefined = call.request;
	const applied = memory.submit({
		root: change.root,
		request: `${change.op}:${request?.id ?? uuidv7()}`,
		op: change.op,
		at: change.at,
		by: actorByLabel(actorRefOf(call.actor)).slice(0, 300),
		request_hash: request?.hash ?? sha256Hex(`memory.${change.op}\n${canonicalJson(change.params)}`),
		ops: change.ops,
	});
	if (applied.replayed && request) {
		markReplayed(request);
	}
	return applied;
}

export const rememberMemory = operation({
	name: 'memory.remember',
	summary:
		"Remember a fact in a root's project memory (.desk-memory/<root>.json): only the person and the conversations they drive.",
	params: RememberMemory.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: false,
	surfaces: {
		rpc: RememberMemory,
		cli: 'memory remember',
		mcp: {
			tool: 'remember',
			title: 'Remember a fact in project memory',
			description:
				'Add one memory to the project\'s memory (`.desk-memory/<root>.json`, reviewed and committed by the person like any file), for later runs and branches to start with: a fact that will stay true (how to build, a convention, a decision and why). `text` at most 1000 characters (its first sentence is what later prompts show), `title` at most 80 (default: the first sentence), `root` default main, `evidence` up to 16 repository-relative paths the memory rests on (a later change to them marks it "may be stale"). Control and bidi characters are refused. Only the conversation the person drives may remember: a branch is refused. Returns the new memory\'s id.',
			boundByRun: ['project'],
		},
	},
	async run(call, params) {
		const { top, memory } = await memoryOfCall(call, params.project);
		const root = listedRoot(memory, params.root ?? mainRoot);
		await assertUltimate(call, top);
		const evidence: NonNullable<Memory['evidence']> = [];
		if (params.evidence && params.evidence.length > 0) {
			for (const rel of params.evidence) {
				const problem = evidencePathProblem(rel);
				if (problem) {
					throw new DeskError('memory.badBatch', `The memory was refused: ${problem}. The file is unchanged.`, {
						field: 'params.evidence',
						problem,
					});
				}
			}
			const unique = [...new Set(params.evidence)];
			const blobs = memory.headBlobs(unique);
			for (const rel of unique) {
				const blob = blobs.get(rel);
				evidence.push(blob === undefined ? { path: rel } : { path: rel, blob });
			}
		}
		const at = new Date().toISOString();
		const record: Memory = {
			title: params.title ?? titleFrom(params.text),
			text: params.text,
			created_at: at,
			updated_at: at,
			created_by: actorRefOf(call.actor),
			source: call.actor.kind === 'agent' ? { kind: 'remember', run: call.actor.run } : { kind: 'remember' },
			...(evidence.length > 0 ? { evidence } : {}),
		};
		const id = uuidv7();
		const applied = submitAs(memory, call, {
			op: 'remember',
			root,
			at,
			params,
			ops: [{ op: 'add', id, memory: record }],
		});
		return { added: applied.result.added?.[0] ?? id, replayed: applied.replayed };
	},
});

/** A title from a memory's text when the person gave none: its first sentence, cut to the limit. */
function titleFrom(text: string): string {
	const line = normalizeAutomatedText(text, 100_000);
	const end = /[.!?](?=\s|$)/u.exec(line);
	return normalizeAutomatedText(end ? line.slice(0, end.index) : line, memoryLimits.title) || 'Memory';
}

export const forgetMemory = operation({
	name: 'memory.forget',
	summary: "Forget one memory of a root's project memory.",
	params: ForgetMemory.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: ForgetMemory, cli: 'memory forget' },
	async run(call, params) {
		const { top, memory } = await memoryOfCall(call, params.project);
		await assertUltimate(call, top);
		const applied = submitAs(memory, call, {
			op: 'forget',
			root: params.root,
			at: new Date().toISOString(),
			params,
			ops: [{ op: 'remove', id: params.memory }],
		});
		return { removed: applied.result.removed?.[0] ?? params.memory, replayed: applied.replayed };
	},
});

export const showMemory = operation({
	name: 'memory.show',
	summary:
		"Show a root's project memory: its memories newest first, whether the file is committed, and which cite files that changed since.",
	params: ShowMemory.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ShowMemory, cli: 'memory show' },
	async run(call, params) {
		const { memory } = await memoryOfCall(call, params.project);
		const view = memory.view(params.root);
		if (!view.exists && !memory.sql.isListedRoot(params.root)) {
			listedRoot(memory, params.root);
		}
		return view;
	},
});

export const commitMemory = operation({
	name: 'memory.commit',
	summary: "Commit a root's memory file alone, with the trailer Desk-Memory: <root> (the repository's hooks off).",
	params: CommitMemory.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: CommitMemory, cli: 'memory commit' },
	async run(call, params) {
		const { top, memory } = await memoryOfCall(call, params.project);
		// The same request id again answers the first commit: from its recorded answer, or, when the
		// desk stopped between the commit and that record, from the commit's Desk-Request trailer.
		const { result } = await answerOnce(await call.desk.projectRequests(top), call.request, async () => {
			const made = await commitMemoryFile(call.desk, top, memory, params.root, call.actor, call.request?.id);
			call.desk.faults.point('memory.afterCommit.beforeAnswer');
			await call.desk.answerProjectRequest(top, call.request, made);
			return made;
		});
		return result;
	},
});

/** How far back from HEAD an earlier commit of the same request is looked for (the person may have committed since). */
const requestCommitLookback = 64;

/**
 * Commits `.desk-memory/<root>.json` as it is in the working tree, and nothing else, on the checked
 * out branch: a tree made from HEAD's with only that path changed (in a temporary index, the blob
 * written from the bytes the desk read, so git opens no file and runs no filter), `commit-tree` and
 * `update-ref` from HEAD (a HEAD that moved meanwhile refuses it), then the index entry of that path
 * set to the commit's so `git status` shows it clean. Other staged or unstaged changes stay as they
 * were. A file staged with other content than HEAD's and the file's is refused (`run.landConflict`).
 * The commit of a client's request carries its id (`Desk-Request: <id>`), so a repeat the desk did
 * not live to answer is answered with that commit, not refused as having nothing to commit.
 */
async function commitMemoryFile(
	desk: Desk,
	top: string,
	memory: ProjectMemory,
	root: string,
	actor: Actor,
	requestId: string | undefined,
): Promise<{ commit: string }> {
	const rel = memory.relativePath(root);
	const git = await SafeGit.open(top, await desk.library.gitLocation(top));
	const head = (await git.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { okCodes: [0, 1] }))
		.toString('utf8')
		.trim();
	const earlier = head !== '' && requestId !== undefined ? await committedFor(git, root, requestId) : undefined;
	if (earlier) {
		return { commit: earlier };
	}
	const text = memory.readText(root);
	if (text !== undefined) {
		// A damaged file is never committed as the root's memory.
		memory.read(root);
	}
	const bytes = text === undefined ? undefined : Buffer.from(text, 'utf8');
	const headTree = head === '' ? undefined : await git.text(['rev-parse', `${head}^{tree}`]);
	const tree = await git.treeWithFile(head === '' ? undefined : head, rel, bytes);
	if (tree === headTree || (head === '' && bytes === undefined)) {
		throw new DeskError('memory.nothingToCommit', `${rel} is as HEAD has it: there is nothing to commit.`, {
			root,
			path: rel,
		});
	}
	const staged = (await git.run(['ls-files', '-z', '-s', '--', rel])).toString('utf8').split('\0')[0] ?? '';
	if (staged !== '') {
		const stagedOid = staged.split(' ')[1];
		const headOid =
			head === ''
				? undefined
				: (await git.run(['rev-parse', '-q', '--verify', `${head}:${rel}`], { okCodes: [0, 1] }))
						.toString('utf8')
						.trim();
		const newOid =
			bytes === undefined ? undefined : await git.text(['hash-object', '--no-filters', '--stdin'], { input: bytes });
		if (stagedOid !== headOid && stagedOid !== newOid) {
			throw new DeskError(
				'run.landConflict',
				`${rel} has other changes staged in the index; unstage them (or commit them yourself) and commit memory again.`,
				{ root, path: rel },
			);
		}
	}
	const person =
		(await git.personIdentity()) ??
		(actor.kind === 'agent'
			? { name: 'Agent Desk', email: 'agent-desk@localhost' }
			: { name: actor.person.name, email: actor.person.email ?? 'agent-desk@localhost' });
	const message = `Memory of ${root}\n\nDesk-Memory: ${root}\n${requestId !== undefined ? `Desk-Request: ${requestId}\n` : ''}`;
	const commit = await git.commitTree(tree, head === '' ? [] : [head], message, { author: person, committer: person });
	const branch = await git.currentBranch();
	await git.updateRef(
		branch ?? 'HEAD',
		commit,
		head === '' ? '0'.repeat(commit.length) : head,
		`desk: commit memory of ${root}`,
	);
	await git.syncIndexPaths(commit, [rel]);
	return { commit };
}

/** The commit among HEAD's recent first parents that committed `root`'s memory for request `requestId`, if any. */
async function committedFor(git: SafeGit, root: string, requestId: string): Promise<string | undefined> {
	const log = await git.text(['log', '--first-parent', `-n${requestCommitLookback}`, '--format=%H%x00%B%x01', 'HEAD']);
	for (const entry of log.split('\x01')) {
		const [commit, body] = entry.trim().split('\0');
		const trailers = new Set((body ?? '').split('\n').map((line) => line.trim()));
		if (commit && trailers.has(`Desk-Memory: ${root}`) && trailers.has(`Desk-Request: ${requestId}`)) {
			return commit;
		}
	}
	return undefined;
}

export const memorizeLanding = operation({
	name: 'memory.memorize',
	summary:
		"Memorize a landed run of a branch: the summary agent (lineage.summaryAgent) proposes memory changes, applied to the branch's root once.",
	params: MemorizeLanding.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: MemorizeLanding, cli: 'memory memorize' },
	async run(call, params) {
		const top = projectTop(call.desk, params.project);
		return memorizeRun(call.desk, top, params.run, parseRunSettings(params.settings));
	},
});

/** Why memory is left unchanged when no summary agent is set. */
export const noSummaryAgent =
	'no summary model is configured (agentDesk.lineage.summaryAgent): memory is left unchanged';

/**
 * Memorizes the landing of `runId` (a run of a branch whose decision committed) into its root's
 * memory, once: the request `land:<run>` is answered from the file's receipt when it is there. The
 * summary agent's answer is memoised by model and input (a second call asks nothing); a refused
 * answer is asked again once with the refusal; refused twice, memory is left as it was. The outcome
 * is recorded on the run as a `memorize` tool invocation, so the run says what became of it; each
 * answer the summary agent gave, with its tokens and cost, as a `summary_agent` tool invocation
 * written in the memo's own transaction (paid once, recorded once). A memorize the landing owes
 * (see {@link oweMemorize}) is claimed for this process while it runs and settled with its outcome.
 * Two calls for one run in this process run one after the other: the second finds the receipt.
 */
export async function memorizeRun(
	desk: Desk,
	top: string,
	runId: string,
	settings: RunSettings,
): Promise<MemorizeResult> {
	let flights = memorizing.get(desk);
	if (!flights) {
		flights = new Map();
		memorizing.set(desk, flights);
	}
	const key = `${top}\0${runId}`;
	const before = flights.get(key);
	const mine = (async () => {
		await before?.catch(() => undefined);
		return memorizeOnce(desk, top, runId, settings);
	})();
	flights.set(key, mine);
	try {
		return await mine;
	} finally {
		if (flights.get(key) === mine) {
			flights.delete(key);
		}
	}
}

/** The memorizes this process is carrying out, by desk, project and run. */
const memorizing = new WeakMap<Desk, Map<string, Promise<MemorizeResult>>>();

async function memorizeOnce(desk: Desk, top: string, runId: string, settings: RunSettings): Promise<MemorizeResult> {
	const ai = await desk.projectAi(top);
	const run = ai.get<Run>(runId);
	if (!run || run.object_type !== 'run') {
		throw new DeskError('ai.notFound', `No run ${runId} in this project.`, { run: runId });
	}
	const decision = ai.runDecision(runId);
	if (!decision || decision.decision_type !== 'commit' || !decision.result_commit_sha) {
		throw new DeskError('run.notLanded', `Run ${runId} has not landed: only a committed change is memorized.`, {
			run: runId,
			decision: decision?.decision_type ?? null,
		});
	}
	const node = await desk.lineageNodeOf(top, run.task);
	if (!node || node.kind !== 'branch') {
		throw new DeskError(
			'lineage.notBranch',
			`Run ${runId} is not a run of a branch: only a branch's landing is memorized.`,
			{
				run: runId,
			},
		);
	}
	const memory = await desk.memory(top);
	const claim = memory.sql.claimOwed(runId, process.pid, isAlive);
	if (claim && 'busy' in claim) {
		throw new DeskError(
			'memory.locked',
			`The landing of run ${runId} is being memorized by another desk process (${claim.busy}); try again once it is done.`,
			{ run: runId, pid: claim.busy },
		);
	}
	const record = (status: 'ok' | 'error', summary: string, args: Record<string, unknown>) => {
		const invocation = newToolInvocation({ kind: 'system', id: 'desk' }, run, 'memorize', args, {
			status,
			resultSummary: summary.slice(0, 500),
		});
		invocation.tags = { ...invocation.tags, 'desk.tool': 'memorize' };
		// The outcome and the end of what the landing owed, at once: a desk stopped before both resumes it.
		memory.sql.settleOwed(runId, process.pid, (tx) => ai.putIn(tx, [invocation]));
		desk.onRunChanged?.(top, runId);
	};
	const request = `land:${runId}`;
	const file = memory.read(node.root);
	const stored = file?.requests[request];
	if (stored) {
		const lists = resultLists(stored.result);
		if (claim) {
			// Applied by a desk that stopped before it recorded the outcome.
			record('ok', appliedText(node.root, lists), { replayed: true });
		}
		return { applied: lists, memo_hit: false, retried: false, replayed: true };
	}
	const name = settings.lineage.summaryAgent;
	const agent = name === undefined ? undefined : settings.agents.find((a) => a.name === name);
	if (!agent) {
		record('ok', `skipped: ${noSummaryAgent}`, {});
		return { skipped: noSummaryAgent, memo_hit: false, retried: false, replayed: false };
	}
	const task = ai.get<Task>(run.task);
	const intent = task?.intent ? ai.get<Intent>(task.intent) : undefined;
	const patchset = decision.chosen_patchset_id ? ai.get<PatchSet>(decision.chosen_patchset_id) : undefined;
	const input = memorizeInput(
		{
			ticket: intent?.prompt ?? task?.title ?? '',
			abstract: memory.sql.frozenAbstract(node.node) ?? '',
			touched: (patchset?.touched ?? []).map((t) => t.path),
			rationale: decision.rationale ?? '',
		},
		file,
	);
	let memoHit = false;
	let asked = 0;
	const paid: TokenUsage[] = [];
	const ask = async (refusal?: string): Promise<{ answer: SummaryAnswer; memo: string }> => {
		const full = refusal === undefined ? input : `${input}\n${refusal}`;
		// The model is the agent as configured: another command or model flag is another model.
		const memo = memoKey(
			canonicalJson({ name: agent.name, command: agent.command, args: agent.args, format: agent.format }),
			full,
		);
		const kept = memory.sql.memo(memo);
		if (kept) {
			memoHit = true;
			return { answer: JSON.parse(kept.answer) as SummaryAnswer, memo };
		}
		asked++;
		desk.faults.point('memorize.beforeAsk');
		let answer: SummaryAnswer;
		try {
			answer = await askSummaryAgent(agent, memorizePrompt(input, refusal), settings.sandbox);
		} catch (error) {
			const why = `the summary agent gave no answer (${(error as Error).message}); memory is left unchanged`;
			record('error', why, { model: agent.name, memo, asked });
			throw new DeskError('run.spawnFailed', why, { run: runId, agent: agent.name });
		}
		const usage = usageOf(answer);
		const spent = newToolInvocation(
			{ kind: 'agent', id: `summary:${agent.name}` },
			run,
			summaryAgentTool,
			{
				agent: agent.name,
				model: (answer.model ?? agent.name).slice(0, 200),
				memo,
				usage,
			},
			{
				resultSummary: `answered: ${usage.input_tokens} tokens in, ${usage.output_tokens} out${usage.cost_usd !== undefined ? `, $${usage.cost_usd}` : ''}`,
			},
		);
		spent.tags = { ...spent.tags, 'desk.tool': 'memorize' };
		memory.sql.saveMemo(memo, agent.name, sha256Hex(full), JSON.stringify(answer), new Date().toISOString(), (tx) =>
			ai.putIn(tx, [spent]),
		);
		paid.push(usage);
		desk.onRunChanged?.(top, runId);
		desk.faults.point('memorize.afterAnswer');
		return { answer, memo };
	};
	const at = new Date().toISOString();
	const batchOf = (answer: SummaryAnswer, memo: string) => {
		const source = {
			kind: 'landing' as const,
			run: runId,
			commit: decision.result_commit_sha,
			decision: decision.object_id,
			model: (answer.model ?? agent.name).slice(0, 200),
			memo,
		};
		const ops = opsFromAnswer(answer.text, file, {
			source,
			at,
			by: { kind: 'agent', id: `summary:${agent.name}` },
			newId: () => uuidv7(),
		});
		const batch: MemoryBatch = {
			root: node.root,
			request,
			op: 'memorize',
			at,
			by: `agent:summary:${agent.name}`,
			request_hash: memo,
			ops,
		};
		// The whole result is checked now, so a refusal is the agent's to correct, not the queue's.
		applyMemoryBatch(file, batch);
		return batch;
	};
	const usage = () => (paid.length > 0 ? { usage: sumUsage(paid) } : {});
	let batch: MemoryBatch;
	let retried = false;
	const first = await ask();
	try {
		batch = batchOf(first.answer, first.memo);
	} catch (error) {
		if (!isDeskError(error, 'memory.badBatch') && !isDeskError(error, 'memory.notFound')) {
			throw error;
		}
		retried = true;
		const second = await ask(error.message);
		try {
			batch = batchOf(second.answer, second.memo);
		} catch (again) {
			if (!isDeskError(again, 'memory.badBatch') && !isDeskError(again, 'memory.notFound')) {
				throw again;
			}
			const why = `the summary agent's batch was refused twice (${again.message}); memory is left unchanged`;
			record('error', why, { model: agent.name, memo: second.memo, asked });
			return { skipped: why, memo_hit: memoHit, retried, replayed: false, ...usage() };
		}
	}
	desk.faults.point('memorize.afterModel.beforeEnqueue');
	const applied = memory.submit(batch);
	desk.faults.point('memorize.afterApply');
	const lists = resultLists(applied.result);
	record('ok', appliedText(node.root, lists), {
		model: agent.name,
		memo: batch.request_hash,
		asked,
		memo_hit: memoHit,
		retried,
	});
	return { applied: lists, memo_hit: memoHit, retried, replayed: applied.replayed, ...usage() };
}

function appliedText(root: string, lists: ReturnType<typeof resultLists>): string {
	return `memory of ${root}: ${lists.added.length} added, ${lists.updated.length} updated, ${lists.removed.length} removed`;
}

/** What one answer of the summary agent cost, as the run's Provenance records its agent's. */
function usageOf(answer: SummaryAnswer): TokenUsage {
	const count = (n: number) => (Number.isSafeInteger(n) && n >= 0 ? n : 0);
	const input = count(answer.input_tokens);
	const output = count(answer.output_tokens);
	const cost = answer.cost_usd !== undefined && Number.isFinite(answer.cost_usd) && answer.cost_usd >= 0;
	return {
		input_tokens: input,
		output_tokens: output,
		total_tokens: input + output,
		...(cost ? { cost_usd: answer.cost_usd } : {}),
	};
}

function sumUsage(usages: readonly TokenUsage[]): TokenUsage {
	const costs = usages.filter((u) => u.cost_usd !== undefined);
	return {
		input_tokens: usages.reduce((n, u) => n + u.input_tokens, 0),
		output_tokens: usages.reduce((n, u) => n + u.output_tokens, 0),
		total_tokens: usages.reduce((n, u) => n + u.total_tokens, 0),
		...(costs.length > 0 ? { cost_usd: Math.round(costs.reduce((n, u) => n + u.cost_usd!, 0) * 1e6) / 1e6 } : {}),
	};
}

/**
 * Records, before the landing's Decision is made, that the landing of `runId` owes a memorize with
 * these settings (their summary agent and sandbox are all it keeps), claimed by this process: a desk
 * stopped anywhere after the Decision resumes it on its next start ({@link resumeOwedMemorizes}).
 */
export async function oweMemorize(desk: Desk, top: string, runId: string, settings: RunSettings): Promise<void> {
	const name = settings.lineage.summaryAgent;
	const agent = name === undefined ? undefined : settings.agents.find((a) => a.name === name);
	const kept = {
		agents: agent ? [agent] : [],
		sandbox: settings.sandbox,
		lineage: { ...(agent ? { summaryAgent: agent.name } : {}), memorizeOnLanding: true },
	};
	(await desk.memory(top)).sql.oweMemorize(runId, agent?.name ?? '', kept, process.pid, new Date().toISOString());
}

/** The landing of `runId` was not decided after all: it owes nothing. */
export async function owedNothing(desk: Desk, top: string, runId: string): Promise<void> {
	(await desk.memory(top)).sql.settleOwed(runId, process.pid);
}

/**
 * Resumes the memorizes the landings of the project at `top` owe (glossary: Project memory): those a
 * stopped desk did not finish, one after the other. A desk that stays (the server) calls it once, when
 * it first opens the project's runs. A landing that was never decided (the desk stopped before its
 * Decision) owes nothing; one that another live process carries out is left to it. `warn` is told
 * of each that could not be resumed.
 */
export async function resumeOwedMemorizes(desk: Desk, top: string, warn: (message: string) => void): Promise<void> {
	const memory = await desk.memory(top);
	const ai = await desk.projectAi(top);
	for (const runId of memory.sql.owedRuns()) {
		const claim = memory.sql.claimOwed(runId, process.pid, isAlive);
		if (!claim || 'busy' in claim || claim.from === process.pid) {
			continue;
		}
		const decision = ai.runDecision(runId);
		if (decision?.decision_type !== 'commit' || !decision.result_commit_sha) {
			memory.sql.settleOwed(runId, process.pid);
			continue;
		}
		let settings: RunSettings;
		try {
			settings = parseRunSettings(claim.owed.settings);
		} catch (error) {
			memory.sql.settleOwed(runId, process.pid);
			warn(
				`the memorize the landing of run ${runId} owed is dropped: its settings cannot be read (${describeError(error)})`,
			);
			continue;
		}
		try {
			await memorizeRun(desk, top, runId, settings);
		} catch (error) {
			warn(`the memorize the landing of run ${runId} owed was not finished: ${describeError(error)}`);
		}
	}
}

function resultLists(result: MemoryRequestReceipt['result']): {
	added: string[];
	updated: string[];
	removed: string[];
} {
	return { added: result.added ?? [], updated: result.updated ?? [], removed: result.removed ?? [] };
}

export const memoryOperations = [rememberMemory, forgetMemory, showMemory, commitMemory, memorizeLanding];
