import * as os from 'node:os';
import {
	actor,
	addPatchSet,
	addStep,
	addFramesMade,
	addFramesRead,
	cutGraphemes,
	failRun,
	newContextPipeline,
	newContextSnapshot,
	newPlan,
	newPlanStep,
	newRevision,
	newProvenance,
	pushFrame,
	setIntentContent,
	setIntentPlan,
	movePlanStep,
	setIntentStatus,
	setRunStatus,
	setFwindow,
	stepStatus,
	setTaskStatus,
} from '../ai/model';
import type {
	ContextItem,
	ContextPipeline,
	ContextSnapshot,
	Intent,
	PatchSet,
	Plan,
	PlanStep,
	Provenance,
	Run,
	Task,
	TokenUsage,
} from '../ai/types';
import { DeskError } from '../core/errors';
import type { AssetPlug, LaunchRecord } from '../launch/types';
import type { CatchUpSection } from '../lineage/types';
import type { WriteTransaction } from '../store/durableDatabase';
import { AgentRecorder } from './agentRecorder';
import { invokeAgent, type AgentOutcome } from './agentProcess';
import { objectSink } from './artifacts';
import { assertCheckoutFree, checkoutBusy, claimCheckout, claimDecision } from './checkoutClaims';
import { applyCheckpoint } from './checkpoints';
import { evidenceLog, runChecks } from './checks';
import { closeRunPlans } from './endings';
import { putBackLeftover, recoverInterrupted, type RecoveryResult } from './crashRecovery';
import { keepWhatWasLeft, makePatchSet } from './patchSets';
import { placementJson, readPlacement, type RunPlacement } from './placement';
import { defaultPrices, modelOfArgs } from './prices';
import type { RunBoardHooks, RunnerPorts } from './ports';
import { composePrompt, planSteps, type PromptReference, type PromptSkill } from './prompt';
import { endedRunnerToken, isRunnerAlive, runnerToken, signalRunAgent } from './runnerProcess';
import { gateTag, isAtGate } from './runViews';
import { carriedByTag } from './types';
import { chooseAgent, type AgentSettings, type RunSettings } from './settings';
import {
	gitBlobId,
	installSkills,
	mountReferences,
	placeRun,
	removeInstalled,
	type RunReference,
	type RunSkill,
} from './workFolder';

const system = actor('system', 'agent-desk');

/** A run this process is carrying out: a cancel asked for, and how to stop what runs for it now. */
interface Execution {
	readonly runId: string;
	cancelled?: string;
	/** Stops the agent or the check running now. */
	stopAgent?: (reason: string) => void;
	/** Where the run works, once it was placed. */
	placement?: RunPlacement;
	/**
	 * The run stops because the process carrying it does (the window's desk shutting down): its
	 * files are put back in the shared checkout, as crash recovery does, since no one follows it on.
	 */
	putBack?: boolean;
}

/** What a run started with (Intent, Plan, Task): its objects, where it works, and what the prompts are made of. */
interface StartedRun {
	record: LaunchRecord;
	settings: RunSettings;
	agent: AgentSettings;
	run: Run;
	task: Task;
	intent: Intent;
	plan: Plan;
	pipeline: ContextPipeline;
	/** What the run's prompts were given, pinned (glossary: AI objects); a branch's catch-ups are added before each input. */
	snapshot: ContextSnapshot;
	provenance: Provenance;
	placement: RunPlacement;
	references: RunReference[];
	skills: RunSkill[];
	outbox: string;
}

/** What the nodes have done so far. */
interface NodeProgress {
	/** The usage of the nodes so far (undefined before the first): each node's is added to it. */
	usage: TokenUsage | undefined;
	/** The steps the plan node wrote, and the plan revision they are. */
	steps?: string[];
	revision?: Plan;
	nodeMetrics: unknown[];
	lastPatch?: PatchSet;
	/** The id of the first frame the node running now made: its step made every frame from there on. */
	nodeFramesFrom: number;
}

type CheckFailure = Parameters<typeof composePrompt>[0]['failure'];

/**
 * Carries out runs (glossary: AI objects): prepares where the agent works, composes each node's prompt,
 * runs the agent (sandboxed when bubblewrap works here), turns what it prints into AI objects,
 * makes a PatchSet of each attempt, runs the checks as Evidence, and stops at the gate.
 */
export class RunExecutor {
	private readonly live = new Map<string, { cancel: (reason: string) => void }>();
	/** Runs this process is handing to a carrier of their own (glossary: Carrier): they count as carried here until it took them. */
	private readonly handingOver = new Set<string>();
	private readonly liveHere = (runId: string): boolean => this.live.has(runId) || this.handingOver.has(runId);
	/** While runs are live here: looks for cancels another process wrote for them (see {@link takeCancelRequests}). */
	private cancelWatch: NodeJS.Timeout | undefined;
	/** The settings each live run was started with: a branch it starts is configured from them (glossary: Lineage). */
	private readonly liveSettings = new Map<string, RunSettings>();

	constructor(private readonly ports: RunnerPorts) {}

	/** Runs that are executing in this process now. */
	get liveRuns(): string[] {
		return [...this.live.keys()];
	}

	/**
	 * `runId` (Created, claimed by this process) is being handed to a carrier process of its own: until
	 * the function returned is called (the carrier took its claim, or this process carries it after
	 * all) recovery and the checkout's claim count it as this process's, never as left by a dead one.
	 */
	handOver(runId: string): () => void {
		this.handingOver.add(runId);
		return () => this.handingOver.delete(runId);
	}

	/**
	 * A cancel another process wrote for a run carried here (Cancel in a window whose desk does not
	 * carry the run: the run's carrier, a reloaded window, the command line) reaches its agent or
	 * check now, not only at the run's next step. Looked for every second while runs are live here.
	 */
	takeCancelRequests(): void {
		for (const [runId, live] of this.live) {
			const reason = this.ports.control.row(runId)?.cancel_reason;
			if (reason !== null && reason !== undefined) {
				live.cancel(reason);
			}
		}
	}

	/**
	 * Stops every run carried here because this process stops (the window's desk shutting down): each
	 * fails with the reason, and its files are put back in the shared checkout (what the agent left
	 * stays a PatchSet), since nothing carries it on.
	 */
	stopCarrying(reason: string): void {
		for (const [runId, live] of [...this.live]) {
			this.putBackOnStop.add(runId);
			try {
				this.cancel(runId, reason);
			} catch {
				// At the gate or failed meanwhile.
				live.cancel(reason);
			}
		}
	}

	private readonly putBackOnStop = new Set<string>();

	/**
	 * Fails every run left in progress by a process that is gone (the desk crashed or was killed):
	 * nothing of it is landed, its folder stays for a look, and a stray agent it started is stopped.
	 */
	recoverInterrupted(): Promise<RecoveryResult> {
		return recoverInterrupted(this.ports, this.liveHere);
	}

	/**
	 * Executes a run made by Go (or by Retry) from the frozen launch record, to the gate. Resolves
	 * when the run waits at the gate (Validating, checks done) or has Failed; never rejects for the
	 * agent's or the checks' failures, which are the run's outcome.
	 */
	async execute(record: LaunchRecord, runId: string, settings: RunSettings): Promise<Run> {
		let run = this.ports.ai.require<Run>(runId, 'run');
		if (run.status !== 'created') {
			throw new DeskError('run.notRunning', `Run ${runId} is ${run.status}; only a new run is started.`, {
				run: runId,
				status: run.status,
			});
		}
		this.refuseTally(run.task);
		const execution = this.track(runId);
		this.liveSettings.set(runId, settings);
		try {
			const started = await this.start(execution, record, run, settings);
			const progress = await this.runNodes(execution, started);
			this.reachGate(started, progress);
		} catch (error) {
			run = await this.failStopped(execution, run, error);
		} finally {
			this.release(execution, run.task);
		}
		const final = this.ports.ai.require<Run>(runId, 'run');
		this.ports.changed(runId);
		tellBoard(this.ports, runId, (board) => board.runFinished(runId));
		this.ports.finished(runId, isAtGate(final) ? 'gate' : 'failed');
		// Last, so that a desk following the run from another process tells its end with its note and
		// attachments already there.
		this.ports.control.partOver(runId, {
			pid: process.pid,
			token: runnerToken,
			endedToken: endedRunnerToken(runnerToken),
		});
		// Its agent is done with the checkout: a branch waiting for it may start now.
		this.ports.checkoutFreed?.();
		return final;
	}

	/** The settings a run carried out here was started with; undefined once it stopped (or for another process's run). */
	settingsOf(runId: string): RunSettings | undefined {
		return this.liveSettings.get(runId);
	}

	/** A tally (glossary: Tally) runs no model turns: no run of its Task is started or claimed. */
	private refuseTally(task: string, tx?: WriteTransaction): void {
		if (this.ports.isTally?.(task, tx)) {
			throw new DeskError('lineage.tallyNoRuns', `Task ${task} is a tally: it records its branches and runs nothing.`, {
				task,
			});
		}
	}

	/** The run is live in this process from now: a cancel reaches it. */
	private track(runId: string): Execution {
		const execution: Execution = { runId };
		this.live.set(runId, {
			cancel: (reason) => {
				execution.cancelled ??= reason;
				execution.putBack ||= this.putBackOnStop.has(runId);
				execution.stopAgent?.(reason);
			},
		});
		if (!this.cancelWatch) {
			this.cancelWatch = setInterval(() => {
				try {
					this.takeCancelRequests();
				} catch (error) {
					this.ports.logger.warn(`looking for cancels of the runs carried here: ${(error as Error).message}`);
				}
			}, 1000);
			this.cancelWatch.unref();
		}
		return execution;
	}

	/** Throws when the run was cancelled, here or by another process through run_control. */
	private checkCancel(execution: Execution): void {
		execution.cancelled ??= this.ports.control.row(execution.runId)?.cancel_reason ?? undefined;
		if (execution.cancelled !== undefined) {
			throw new DeskError('run.notRunning', `cancelled: ${execution.cancelled}`, { run: execution.runId });
		}
	}

	/** Intent, Plan, Task: the claim, the Intent active, the desk's plan, the Task running, the work folder, references and skills. */
	private async start(
		execution: Execution,
		record: LaunchRecord,
		run: Run,
		settings: RunSettings,
	): Promise<StartedRun> {
		const { ai } = this.ports;
		const runId = execution.runId;
		const task = ai.require<Task>(run.task, 'task');
		const intent = ai.require<Intent>(record.intent, 'intent');
		const agent = chooseAgent(settings);
		// Go claimed the checkout in its own transaction; a Retry claims it here. Either way the
		// check and the claim are one write, so two runs never both pass.
		this.ports.control.transaction((tx) => this.claimIn(tx, settings, record, runId));
		// A later run of the intent (a retry) carries on its pipeline and its plan's revision chain.
		const latest = intent.plan ? ai.get<Plan>(intent.plan) : undefined;
		const carried = ai.pipeline(latest?.pipeline);
		// Intent active with the analysis, and the pipeline seeded with it.
		const pipeline = carried ?? newContextPipeline(system, { maxFrames: settings.maxFrames ?? 0 });
		const analysis = intentAnalysis(record);
		if (!carried) {
			pushFrame(pipeline, 'intent_analysis', cutGraphemes(analysis.split('\n')[0]!, 200), {
				data: {
					ticket: record.ticket,
					plugs: record.plugs.map((p) => ({ id: p.id, name: p.name, role: p.role, version: p.version })),
				},
			});
		}
		if (intent.statuses[intent.statuses.length - 1]?.status === 'draft') {
			setIntentContent(intent, analysis);
			setIntentStatus(intent, 'active');
		}
		// The plan: one step per node until the plan node writes the real steps.
		const plan = latest ? newRevision(latest, system) : newPlan(system, { pipeline, fwindow: [0, 1] });
		if (latest) {
			setFwindow(plan, [0, pipeline.next_frame_id]);
		}
		for (const node of record.template.nodes) {
			addStep(plan, newPlanStep(`${node}`));
		}
		setIntentPlan(intent, plan);
		run.plan = plan.object_id;
		// Task running.
		if (task.status === 'draft') {
			setTaskStatus(task, 'running');
		}
		const placement = await placeRun(this.ports, run, record, settings, agent);
		execution.placement = placement;
		this.ports.control.savePlacement(runId, placementJson(placement));
		await applyCheckpoint(this.ports, run, placement);
		const references = await mountReferences(this.ports, record, placement);
		const skills = await installSkills(this.ports, record, placement, agent);
		this.ports.control.savePlacement(runId, placementJson(placement));
		const outbox = this.ports.attachments.prepareOutbox(task.object_id);
		const items = await contextItems(record, references, skills, this.ports.keepContext);
		const snapshot = newContextSnapshot(system, 'explicit', items, {
			summary: `${record.plugs.length} plug${record.plugs.length === 1 ? '' : 's'} at go`,
		});
		run.snapshot = snapshot.object_id;
		run.environment = { os: os.platform(), arch: os.arch(), cwd: placement.work_folder };
		run.tags = {
			...run.tags,
			'desk.agent': agent.name,
			// Whether its agent was given the desk tools: a branch of it gets none if not (glossary: Lineage).
			'desk.mcp': agent.mcp,
			// How its agent received the instructions plugs (instructions.ts), shown on the run page.
			'desk.skills': agent.skills,
			'desk.isolation': placement.isolation,
			'desk.sandbox': placement.isolation_note,
			// Whether a window reload stops it: the run page says so while it works.
			[carriedByTag]: this.ports.carriedBy ?? 'command line',
		};
		const provenance = newProvenance(system, run, agent.name, 'unknown');
		provenance.parameters = { agent: agent.name, command: agent.command, format: agent.format };
		ai.put([intent, plan, task, pipeline, snapshot, run, provenance]);
		this.ports.changed(runId);
		return {
			record,
			settings,
			agent,
			run,
			task,
			intent,
			plan,
			pipeline,
			snapshot,
			provenance,
			placement,
			references,
			skills,
			outbox,
		};
	}

	/** The Run: each node of the template in turn, the plan node's steps becoming the plan the run executes. */
	private async runNodes(execution: Execution, started: StartedRun): Promise<NodeProgress> {
		const { record, run, plan, pipeline } = started;
		const progress: NodeProgress = { usage: undefined, nodeMetrics: [], nodeFramesFrom: 0 };
		const workNodes = record.template.nodes.filter((n) => n !== 'plan');
		for (const [index, node] of record.template.nodes.entries()) {
			this.checkCancel(execution);
			const step = plan.steps[index];
			const isLastWork = node === workNodes[workNodes.length - 1];
			// Patching is the agent at work, making changes or tool calls (glossary: AI objects): from the first node on.
			if (run.status === 'created') {
				setRunStatus(run, 'patching');
			}
			// A node's prompt is made of the frames the pipeline holds now: what its steps read.
			const read = pipeline.frames.map((f) => f.frame_id);
			progress.nodeFramesFrom = pipeline.next_frame_id;
			if (step) {
				movePlanStep(plan, step, 'progressing');
				addFramesRead(plan, step, read);
			}
			const planned = progress.revision && node !== 'plan' ? progress.revision : undefined;
			if (planned) {
				for (const agentStep of planned.steps.filter((p) => stepStatus(p) === 'pending')) {
					movePlanStep(planned, agentStep, 'progressing');
					addFramesRead(planned, agentStep, read);
				}
			}
			this.ports.ai.put([run, plan, ...(progress.revision ? [progress.revision] : [])]);
			this.ports.changed(run.object_id);
			await this.runNode(execution, started, progress, node, step, isLastWork);
			// Every frame pushed while the node ran is the node's (its tool calls, summaries, changes), evicted or not.
			const from = progress.nodeFramesFrom;
			if (step) {
				addFramesMade(plan, step, pipeline, from);
				if (stepStatus(step) === 'progressing') {
					movePlanStep(plan, step, 'completed');
				}
			}
			if (planned) {
				for (const agentStep of planned.steps.filter((p) => stepStatus(p) === 'progressing')) {
					addFramesMade(planned, agentStep, pipeline, from);
					if (node === workNodes[workNodes.length - 1]) {
						movePlanStep(planned, agentStep, 'completed');
					}
				}
			}
		}
		return progress;
	}

	/**
	 * One node: the agent with the node's prompt; on a work node its change as a PatchSet and, on
	 * the last one, the checks, the node going round again with the failures while attempts are left.
	 */
	private async runNode(
		execution: Execution,
		started: StartedRun,
		progress: NodeProgress,
		node: string,
		step: PlanStep | undefined,
		isLastWork: boolean,
	): Promise<void> {
		const { ai } = this.ports;
		const { run, plan, pipeline, placement, settings } = started;
		const runId = run.object_id;
		let failure: CheckFailure;
		for (let attempt = 1; ; attempt += 1) {
			const caughtUp = await this.catchUp(started, node, attempt);
			const prompt = this.promptFor(started, progress, node, failure, caughtUp);
			// A cancel that came while the checks ran must not start another agent.
			this.checkCancel(execution);
			const outcome = await this.agentAttempt(execution, started, progress, node, attempt, prompt);
			this.checkCancel(execution);
			if (!outcome.ok) {
				throw new DeskError('run.spawnFailed', `${node}: ${outcome.error ?? 'the agent failed'}`, { node });
			}
			if (node === 'plan') {
				this.adoptAgentPlan(started, progress, step, outcome);
				tellBoard(this.ports, runId, (board) =>
					board.nodeEnded({ run: runId, node, attempt, ticket: started.record.ticket, steps: progress.steps ?? [] }),
				);
				return;
			}
			// The attempt's change as a PatchSet.
			const patch = await makePatchSet(this.ports, run, placement, outcome.answer);
			pushFrame(
				pipeline,
				'step_summary',
				cutGraphemes(
					`${node}${attempt > 1 ? ` (attempt ${attempt})` : ''}: ${firstLine(outcome.answer) || 'done'}`,
					200,
				),
				{ data: { node, attempt, run: runId } },
			);
			if (step) {
				addFramesMade(plan, step, pipeline, progress.nodeFramesFrom);
			}
			if (patch) {
				progress.lastPatch = patch;
				pushFrame(
					pipeline,
					'code_change',
					`${patch.touched.length} file${patch.touched.length === 1 ? '' : 's'} changed`,
					{
						data: { patchset: patch.object_id, touched: patch.touched.map((t) => t.path), run: runId, node, attempt },
					},
				);
				addPatchSet(run, patch);
			}
			ai.put([...(patch ? [patch] : []), pipeline, run, plan]);
			this.ports.changed(runId);
			tellBoard(this.ports, runId, (board) =>
				board.nodeEnded({
					run: runId,
					node,
					attempt,
					ticket: started.record.ticket,
					...(progress.steps ? { steps: progress.steps } : {}),
					summary: firstLine(outcome.answer),
				}),
			);
			if (!isLastWork || !patch) {
				return;
			}
			// Evidence: the target's checks and the project's, against this PatchSet.
			setRunStatus(run, 'validating');
			ai.put([run]);
			this.ports.changed(runId);
			const evidence = await runChecks(
				this.ports,
				run,
				patch,
				placement,
				started.record,
				settings,
				started.agent,
				() => this.checkCancel(execution),
				(stop) => (execution.stopAgent = stop),
			);
			execution.stopAgent = undefined;
			const failing = evidence.filter((e) => e.exit_code !== 0);
			if (failing.length === 0 || attempt >= settings.maxAttempts) {
				return;
			}
			failure = {
				attempt,
				checks: failing.map((e) => ({
					id: e.tags['desk.check'] ?? e.tool,
					exitCode: e.exit_code,
					log: evidenceLog(this.ports.blobs, e),
				})),
			};
			const recovery = pushFrame(
				pipeline,
				'error_recovery',
				`checks failed: ${failing.map((e) => e.tags['desk.check'] ?? e.tool).join(', ')}; attempt ${attempt + 1}`,
				{ data: { evidence: failing.map((e) => e.object_id), run: runId, node, attempt } },
			);
			// The next attempt's prompt carries the failures: the step reads this frame too.
			if (step) {
				addFramesMade(plan, step, pipeline, progress.nodeFramesFrom);
				addFramesRead(plan, step, [recovery]);
			}
			setRunStatus(run, 'patching');
			ai.put([run, pipeline, plan]);
			this.ports.changed(runId);
		}
	}

	/** The prompt of a node's attempt: the ticket, the target, the plugs that reach the node, the plan, the last checks' failures. */
	private promptFor(
		started: StartedRun,
		progress: NodeProgress,
		node: string,
		failure: CheckFailure,
		caughtUp: CatchUpSection | undefined,
	): string {
		const { record, run, placement } = started;
		return composePrompt({
			node,
			ticket: record.ticket,
			workFolder: placement.work_folder,
			target:
				placement.target === 'git'
					? { kind: 'git', baseline: run.commit, ...(placement.branch ? { branch: placement.branch } : {}) }
					: {
							kind: 'snapshot',
							name: record.plugs.find((p) => p.role === 'target')!.name,
							version: placement.target_version!,
						},
			references: started.references.filter((r) => reaches(r.plugNodes, node, record)).map((r) => r.prompt),
			skills: started.skills.filter((s) => s.given && reaches(s.plugNodes, node, record)).map((s) => s.prompt),
			outbox: started.outbox,
			...(progress.steps ? { plan: progress.steps } : {}),
			...(failure ? { failure } : {}),
			...(caughtUp ? { catchUp: { tally: caughtUp.tally, memory: caughtUp.memory } } : {}),
		});
	}

	/**
	 * Before each input of a branch's run, its catch-up (glossary: Catch-up): the sections are pinned
	 * on the run's ContextSnapshot as snippets (the text as a git blob anchored as the other items'
	 * are, and whole in the preview, so the run page shows exactly what the agent was told) in the
	 * same transaction that saves the
	 * node's new baseline. A run that is no branch's gets none.
	 */
	private async catchUp(started: StartedRun, node: string, attempt: number): Promise<CatchUpSection | undefined> {
		const { tallyTokens, memoryTokens } = started.settings.lineage.limits;
		const input = await this.ports.catchUp?.(started.run.object_id, { tallyTokens, memoryTokens });
		if (!input) {
			return undefined;
		}
		const { snapshot } = started;
		const before = `before ${node}${attempt > 1 ? ` (attempt ${attempt})` : ''}`;
		for (const text of [input.section.memory, input.section.tally]) {
			if (text.trim() === '') {
				continue;
			}
			snapshot.items.push({
				kind: 'snippet',
				path: `catch-up ${before}: ${firstLine(text).replace(/^#+\s*/, '')}`,
				blob: await contextBlob(this.ports.keepContext, text),
				preview: text,
			});
		}
		snapshot.updated_at = new Date().toISOString();
		this.ports.control.transaction((tx) => {
			input.pin(tx);
			this.ports.ai.putIn(tx, [snapshot]);
		});
		this.ports.changed(started.run.object_id);
		return input.section;
	}

	/** The Run and its ToolInvocations: the agent run once on a node, what it printed recorded, its usage and metrics kept on the run. */
	private async agentAttempt(
		execution: Execution,
		started: StartedRun,
		progress: NodeProgress,
		node: string,
		attempt: number,
		prompt: string,
	): Promise<AgentOutcome> {
		const { run, task, agent, placement } = started;
		const recorder = new AgentRecorder(
			run,
			started.provenance,
			started.pipeline,
			placement.work_folder,
			objectSink(this.ports, agent),
			agent.name,
			progress.usage,
			{
				prices: { ...defaultPrices, ...started.settings.prices },
				configuredModel: modelOfArgs(agent.args),
				node,
				attempt,
			},
		);
		const begun = Date.now();
		const outcome = await invokeAgent(
			this.ports,
			run,
			task,
			node,
			prompt,
			agent,
			placement,
			started.outbox,
			recorder,
			(stop) => (execution.stopAgent = stop),
		);
		execution.stopAgent = undefined;
		progress.usage = outcome.usage;
		progress.nodeMetrics.push({
			node,
			attempt,
			exit_code: outcome.exitCode,
			duration_ms: Date.now() - begun,
			tool_calls: outcome.toolCalls,
			unparsed_lines: outcome.unparsed,
			transcript: outcome.transcript,
		});
		run.metrics = { nodes: progress.nodeMetrics };
		return outcome;
	}

	/** The agent's plan is a revision of the desk's (one step a node): the plan the run executes from now. */
	private adoptAgentPlan(
		started: StartedRun,
		progress: NodeProgress,
		step: PlanStep | undefined,
		outcome: AgentOutcome,
	): void {
		const { plan, pipeline, intent } = started;
		const steps = outcome.planSteps ?? planSteps(outcome.answer);
		progress.steps = steps;
		pushFrame(pipeline, 'step_summary', `plan: ${steps.length} step${steps.length === 1 ? '' : 's'}`, {
			data: { steps, node: 'plan', run: started.run.object_id },
		});
		if (step) {
			addFramesMade(plan, step, pipeline, progress.nodeFramesFrom);
			movePlanStep(plan, step, 'completed');
		}
		const revision = newRevision(plan, actor('agent', started.agent.name));
		setFwindow(revision, [0, pipeline.next_frame_id]);
		for (const description of steps) {
			addStep(revision, newPlanStep(description));
		}
		// The Intent's plan is the latest revision; the Run keeps the plan it started on (revision → previous).
		setIntentPlan(intent, revision);
		progress.revision = revision;
		this.ports.ai.put([plan, revision, intent, pipeline]);
	}

	/** At the gate: validated, waiting for the person's Decision, with which the run completes. */
	private reachGate(started: StartedRun, progress: NodeProgress): void {
		const { run, plan, placement } = started;
		removeInstalled(this.ports, placement);
		if (!progress.lastPatch) {
			throw new DeskError('run.noPatch', 'the agent finished without changing any file', { run: run.object_id });
		}
		if ((run.status as Run['status']) === 'patching') {
			setRunStatus(run, 'validating');
		}
		run.tags = { ...run.tags, [gateTag]: 'waiting' };
		run.updated_at = new Date().toISOString();
		this.ports.ai.put([run, plan, ...(progress.revision ? [progress.revision] : [])]);
		this.ports.logger.info(
			`run ${run.object_id}: at the gate with ${run.patchsets.length} PatchSet(s), waiting for a decision`,
		);
	}

	/** The run stopped (cancelled, the agent failed, no change, an internal error): it fails, what the agent left kept. */
	private async failStopped(execution: Execution, started: Run, error: unknown): Promise<Run> {
		const { ai } = this.ports;
		const { runId, placement, cancelled } = execution;
		if (placement) {
			removeInstalled(this.ports, placement);
		}
		const run = ai.get<Run>(runId) ?? started;
		const reason =
			cancelled !== undefined
				? `cancelled: ${cancelled}`
				: error instanceof DeskError
					? error.message
					: `internal error: ${(error as Error).message}`;
		if (!(error instanceof DeskError)) {
			this.ports.logger.error(`run ${runId}: ${(error as Error).stack ?? error}`);
		}
		if (run.status !== 'completed' && run.status !== 'failed') {
			// What the agent left is kept as a PatchSet too, so the person sees it at the gate and
			// Abandon can put the files back.
			const left = placement && run.status !== 'created' ? await keepWhatWasLeft(this.ports, run, placement) : {};
			const partial = left.patch;
			if (
				partial &&
				!ai
					.runPatchSets(run)
					.some(
						(p) =>
							p.tags['desk.tree'] === partial.tags['desk.tree'] &&
							p.tags['desk.target_changes'] === partial.tags['desk.target_changes'],
					)
			) {
				partial.rationale = `what the agent left when the run stopped (${reason})`;
				addPatchSet(run, partial);
				ai.put([partial]);
			}
			if (run.status === 'created') {
				// Failed is reached from Patching or Validating (glossary: AI objects): the attempt began, then failed.
				setRunStatus(run, 'patching');
			}
			// Stopped with the process that carried it: nobody follows it on, so the checkout is as before Go.
			const putBack = execution.putBack && placement ? await putBackLeftover(this.ports, run, placement) : '';
			failRun(
				run,
				`${reason}${putBack}${left.notKept !== undefined ? `; what the agent left could not be kept (${left.notKept})` : ''}`,
			);
			ai.put([run, ...closeRunPlans(ai, run, reason)]);
		}
		this.ports.logger.warn(`run ${runId}: failed — ${reason}`);
		return run;
	}

	/** The run is no longer carried out here: its outbox closed, its agent's group forgotten. */
	private release(execution: Execution, taskId: string): void {
		this.live.delete(execution.runId);
		this.liveSettings.delete(execution.runId);
		this.putBackOnStop.delete(execution.runId);
		if (this.live.size === 0) {
			clearInterval(this.cancelWatch);
			this.cancelWatch = undefined;
		}
		try {
			this.ports.attachments.closeOutbox(taskId);
		} catch {
			// A busy or odd outbox stays; the next attempt tries again.
		}
		this.ports.control.executionEnded(execution.runId);
	}

	/**
	 * Cancel Run: the agent's whole process group is stopped (TERM, then KILL after 3 s) and the run
	 * fails with the reason. A run carried out by another process (a second window, the command line)
	 * is asked through the project database and its agent's group signalled.
	 */
	cancel(runId: string, reason: string): { stopped: boolean } {
		const run = this.ports.ai.require<Run>(runId, 'run');
		if (run.status === 'completed' || run.status === 'failed' || isAtGate(run)) {
			throw new DeskError(
				'run.notRunning',
				`Run ${runId} is ${isAtGate(run) ? 'at the gate' : run.status} already; there is nothing to cancel.`,
				{ run: runId, status: run.status },
			);
		}
		this.ports.control.requestCancel(runId, reason);
		const live = this.live.get(runId);
		if (live) {
			live.cancel(reason);
			return { stopped: true };
		}
		const row = this.ports.control.row(runId);
		if (this.handingOver.has(runId)) {
			// Its carrier is taking it: the request written above stops it at its first step.
			return { stopped: true };
		}
		if (row && row.runner_pid !== process.pid && isRunnerAlive(row.runner_pid, row.runner_token)) {
			// The carrying process reads the request within a second; its agent is told at once.
			if (row.agent_pgid !== null) {
				signalRunAgent(row.agent_pgid, runId, 'SIGTERM');
			}
			return { stopped: true };
		}
		// Nobody carries it out: a run that never started, or one whose process died.
		if (run.status === 'created') {
			setRunStatus(run, 'patching');
		}
		failRun(run, `cancelled: ${reason}`);
		this.ports.ai.put([run, ...closeRunPlans(this.ports.ai, run, `cancelled: ${reason}`)]);
		this.ports.changed(runId);
		tellBoard(this.ports, runId, (board) => board.runFinished(runId));
		return { stopped: false };
	}

	/**
	 * The runs in progress that another live process carries out (their carrier, another window's
	 * desk, the command line; glossary: Carrier): a desk follows them from the store. Rows whose
	 * process is gone are left out before their runs are read.
	 */
	carriedElsewhere(): string[] {
		return this.ports.control
			.rows()
			.filter(
				(row) =>
					!(row.runner_pid === process.pid && row.runner_token === runnerToken) &&
					isRunnerAlive(row.runner_pid, row.runner_token) &&
					inProgress(this.ports.control.storedRun(row.run_id)),
			)
			.map((row) => row.run_id);
	}

	/** Whether `runId`'s claim names this process: a carrier answers its desk once it holds it (glossary: Carrier). */
	claimedHere(runId: string): boolean {
		const row = this.ports.control.row(runId);
		return (
			row !== undefined &&
			row.runner_pid === process.pid &&
			(row.runner_token === runnerToken || row.runner_token === endedRunnerToken(runnerToken))
		);
	}

	/** Whether a live process carries `runId` out: this one (or its hand-over to a carrier), or the one its row names. */
	isCarried(runId: string): boolean {
		if (this.liveHere(runId)) {
			return true;
		}
		const row = this.ports.control.row(runId);
		return (
			row !== undefined &&
			!(row.runner_pid === process.pid && row.runner_token === runnerToken) &&
			isRunnerAlive(row.runner_pid, row.runner_token)
		);
	}

	/** See `checkoutBusy` in checkoutClaims.ts. */
	checkoutBusy(exceptRun?: string, query?: WriteTransaction): string | undefined {
		return checkoutBusy(this.ports, this.liveHere, exceptRun, query);
	}

	/** Refuses a run on the shared checkout while another one is working there. */
	assertCheckoutFree(
		settings: RunSettings,
		record: { plugs: ReadonlyArray<Pick<AssetPlug, 'id' | 'role'>> },
		exceptRun?: string,
		query?: WriteTransaction,
	): void {
		assertCheckoutFree(this.ports, this.liveHere, settings, record, exceptRun, query);
	}

	/** Claims where `runId` will work, inside the caller's transaction (see `claimCheckout`). */
	claimIn(
		tx: WriteTransaction,
		settings: RunSettings,
		record: { launch_id: string; plugs: ReadonlyArray<Pick<AssetPlug, 'id' | 'role'>> },
		runId: string,
	): void {
		const task = this.ports.control.storedRun(runId, tx)?.task;
		if (task !== undefined) {
			this.refuseTally(task, tx);
		}
		claimCheckout(this.ports, this.liveHere, tx, settings, record, runId);
	}

	/** Claims the making of a run's decision for this process, across processes; the function returned gives it back. */
	claimDecision(runId: string): () => void {
		return claimDecision(this.ports, runId);
	}

	placement(runId: string): RunPlacement | undefined {
		const row = this.ports.control.row(runId);
		return row ? readPlacement(row.json, runId).placement : undefined;
	}

	launchOf(runId: string): string | undefined {
		return this.ports.control.row(runId)?.launch_id;
	}
}

/** A run an agent may still be working on: neither decided, failed, nor waiting at the gate. */
export function inProgress(run: Run | undefined): boolean {
	return run !== undefined && run.status !== 'completed' && run.status !== 'failed' && !isAtGate(run);
}

function intentAnalysis(record: LaunchRecord): string {
	const first = record.ticket.trim().split('\n')[0]!.trim();
	const roles = (role: string) => record.plugs.filter((p) => p.role === role).map((p) => `${p.name} v${p.version}`);
	const target = roles('target')[0] ?? 'the project repository';
	const lines = [`Goal: ${first}`, `Target: ${target}`];
	if (roles('reference').length > 0) {
		lines.push(`References: ${roles('reference').join(', ')}`);
	}
	if (roles('instructions').length > 0) {
		lines.push(`Instructions: ${roles('instructions').join(', ')}`);
	}
	lines.push(`Nodes: ${record.template.nodes.join(' → ')}`);
	return lines.join('\n');
}

/**
 * What the run's prompts were given, as ContextSnapshot items. Every item with content (a file
 * inlined in the prompt, a note, a link) names it by git blob id, the content kept in the project's
 * repository and anchored (`keep`), so a clone that imports the run history can read it. A folder
 * reference has no one blob: its version's id (commit or manifest) is in the preview.
 */
async function contextItems(
	record: LaunchRecord,
	references: Array<{ prompt: PromptReference; asset: RunReference['asset']; blob: string }>,
	skills: Array<{ prompt: PromptSkill; given: boolean }>,
	keep: RunnerPorts['keepContext'],
): Promise<ContextItem[]> {
	const blobOf = (text: string) => contextBlob(keep, text);
	const items: ContextItem[] = [];
	for (const reference of references) {
		const { asset, prompt } = reference;
		const about = `${prompt.name} v${prompt.version} (reference`;
		if (asset.kind === 'notes' || asset.kind === 'link') {
			// The text mounted for the agent (workFolder.ts's NOTES.md or LINK.txt).
			const text = asset.kind === 'notes' ? asset.notes : `${asset.url}\n${asset.about}\n`;
			items.push({
				kind: asset.kind === 'notes' ? 'snippet' : 'url',
				path: prompt.mountPath,
				blob: await blobOf(text),
				preview: `${about}) ${cutGraphemes(text, 160)}`,
			});
		} else {
			items.push({ kind: 'file', path: prompt.mountPath, preview: `${about}, ${reference.blob})` });
		}
		for (const file of prompt.inlined) {
			items.push({
				kind: 'file',
				path: `${prompt.mountPath}/${file.path}`,
				blob: await blobOf(file.text),
				preview: cutGraphemes(file.text, 200),
			});
		}
	}
	for (const skill of skills) {
		items.push({
			kind: 'snippet',
			path: skill.prompt.installedAt ?? `skill ${skill.prompt.name}`,
			preview: cutGraphemes(
				`${skill.given ? '' : '(not given: the agent takes no instructions) '}${skill.prompt.name}: ${skill.prompt.description}`,
				200,
			),
		});
	}
	const target = record.plugs.find((p) => p.role === 'target');
	if (target) {
		items.push({ kind: 'file', path: `${target.name} v${target.version}`, preview: 'target' });
	}
	return items;
}

/**
 * The git blob id a ContextSnapshot item names its text by: kept in the project's repository and
 * anchored (`keep`, glossary: Run history), so a clone that imports the run history can read it.
 */
async function contextBlob(keep: RunnerPorts['keepContext'], text: string): Promise<string> {
	const bytes = Buffer.from(text, 'utf8');
	return (await keep?.(bytes)) ?? gitBlobId(bytes);
}

function reaches(plugNodes: readonly string[], node: string, record: LaunchRecord): boolean {
	return plugNodes.length === 0 ? record.template.nodes.includes(node) : plugNodes.includes(node);
}

/**
 * Tells the boards what a run did: what they make of it is the lineage's, and a failure there is
 * logged, never the run's (its objects are stored; recovery at the next start tells the board again).
 */
export function tellBoard(ports: RunnerPorts, runId: string, tell: (board: RunBoardHooks) => void): void {
	if (!ports.board) {
		return;
	}
	try {
		tell(ports.board);
	} catch (error) {
		ports.logger.warn(`run ${runId}: the board was not told: ${(error as Error).message}`);
	}
}

function firstLine(text: string): string {
	return text.trim().split('\n')[0]?.trim() ?? '';
}
