import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
	actor,
	addPatchSet,
	addStep,
	artifactFor,
	failRun,
	fromJson,
	newContextPipeline,
	newContextSnapshot,
	newEvidence,
	newPatchSet,
	newPlan,
	newPlanStep,
	newRevision,
	newProvenance,
	pushFrame,
	setIntentContent,
	setIntentPlan,
	setIntentStatus,
	setRunStatus,
	setFwindow,
	setStepStatus,
	stepStatus,
	setTaskStatus,
} from '../ai/model';
import type { ArtifactRef, ContextItem, ContextPipeline, Evidence, EvidenceKind, Intent, PatchSet, Plan, Provenance, Run, Task } from '../ai/types';
import { createOutputParser } from '../agents/adapters';
import { AttachmentStore } from '../attachments/attachmentStore';
import type { Library } from '../assets/library';
import type { AssetCheck, AssetRecord, ProjectRecord } from '../assets/types';
import { DeskError } from '../core/errors';
import { scrubText } from '../core/secrets';
import { removeTreeInFolder, writeInFolder } from '../store/folderFiles';
import type { Logger } from '../core/logger';
import type { LaunchRecord } from '../launch/types';
import type { AssetPlug } from '../launch/types';
import type { AiStore } from '../store/aiStore';
import type { BlobStore } from '../store/blobStore';
import type { DurableDatabase, WriteTransaction } from '../store/durableDatabase';
import { AgentRecorder, type NodeOutcome } from './agentRecorder';
import { boundedLines } from './boundedLines';
import { maxAgentLineBytes } from '../core/inputLimits';
import { gateTag, isAtGate } from './runViews';
import { composePrompt, globMatches, planSteps, type PromptReference, type PromptSkill } from './prompt';
import { expandHome, programFolders, resolveCommand, sandboxArgs, sandboxStatus, spawnSandboxed, type SandboxLayout } from './sandbox';
import { safePath } from './programs';
import { SafeGit } from './safeGit';
import { chooseAgent, type AgentSettings, type RunSettings } from './settings';
import { prepareTargetFolder, targetChanges, type TargetMarker } from './targetFolder';
import { isText } from '../attachments/names';
import { targetDiff } from './targetDiff';
import { isRunnerAlive, killGroup, runnerToken, stopStrayAgent } from './runnerProcess';

/** How a run is carried out, kept in run_control beside the Run. */
export interface RunPlacement {
	target: 'git' | 'snapshot';
	isolation: 'shared' | 'worktree' | 'folder';
	/** The folder the agent works in. */
	work_folder: string;
	/** The run's own folder in the library (worktree, target, materialised references). */
	run_folder: string;
	branch?: string;
	/** git: the tree the run started from (the shared checkout with its changes then, or the baseline). */
	start_tree?: string;
	/** snapshot: the target asset and the version the run began as. */
	target_asset?: string;
	target_version?: number;
	/** Paths the desk put into the work folder (installed skills), left out of the change and removed after. */
	installed: string[];
	/** The references' read-only folders: the only parts of the library the sandbox shows. */
	reference_folders: string[];
	agent: string;
	settings: RunSettings;
	isolated: boolean;
	isolation_note: string;
}

interface ControlRow {
	deciding: string | null;
	run_id: string;
	launch_id: string;
	runner_pid: number;
	runner_token: string;
	agent_pgid: number | null;
	cancel_reason: string | null;
	json: string;
}

export interface RunnerPorts {
	library: Library;
	attachments: AttachmentStore;
	blobs: BlobStore;
	ai: AiStore;
	db: DurableDatabase;
	project: ProjectRecord;
	libraryDir: string;
	logger: Logger;
	/** Told whenever the run's objects changed (the Runs view refreshes). */
	changed: (runId: string) => void;
	/** Told when a run reached the gate (completed with a change) or failed. */
	finished: (runId: string, status: 'gate' | 'failed') => void;
	/** Told when a task got attachments. */
	attachmentsChanged?: (taskId: string) => void;
}

/** The store name artifacts carry: the library's content-addressed blob store. */
export const artifactStore = 'desk-blobs';
/** The most of an agent node's output kept as its transcript. */
const maxTranscriptBytes = 64 * 1024 * 1024;
const system = actor('system', 'agent-desk');

/**
 * Carries out runs (seed 001 ③–⑧): prepares where the agent works, composes each node's prompt,
 * runs the agent (sandboxed when bubblewrap works here), turns what it prints into AI objects,
 * makes a PatchSet of each attempt, runs the checks as Evidence, and stops at the gate.
 */
export class RunExecutor {
	private readonly live = new Map<string, { cancel: (reason: string) => void }>();

	constructor(private readonly ports: RunnerPorts) {}

	/** Runs that are executing in this process now. */
	get liveRuns(): string[] {
		return [...this.live.keys()];
	}

	/**
	 * Fails every run left in progress by a process that is gone (the desk crashed or was killed):
	 * nothing of it is landed, its folder stays for a look, and a stray agent it started is stopped.
	 */
	async recoverInterrupted(): Promise<string[]> {
		const failed: string[] = [];
		for (const row of this.ports.db.all<ControlRow>('SELECT * FROM run_control')) {
			const run = this.ports.ai.get<Run>(row.run_id);
			if (!run || run.status === 'completed' || run.status === 'failed' || isAtGate(run)) {
				continue;
			}
			const mine = row.runner_pid === process.pid && row.runner_token === runnerToken;
			if ((mine && this.live.has(row.run_id)) || (!mine && isRunnerAlive(row.runner_pid, row.runner_token))) {
				continue;
			}
			if (row.agent_pgid !== null) {
				stopStrayAgent(row.agent_pgid, row.run_id);
			}
			// What the agent left is kept as a PatchSet, so Abandon can put the files back.
			const placement = this.placement(row.run_id);
			const partial = placement && run.status !== 'created' ? await this.makePatchSet(run, placement, '').catch(() => undefined) : undefined;
			if (partial) {
				partial.rationale = 'what the agent left when the desk stopped';
				addPatchSet(run, partial);
				this.ports.ai.put([partial]);
			}
			if (placement) {
				this.removeInstalled(placement);
			}
			// What the agent put in the outbox before the crash is attached, once (keyed by this run).
			try {
				this.ports.attachments.ingest(run.task, { runId: run.object_id, addedBy: 'run' });
			} catch (error) {
				this.ports.logger.warn(`run ${run.object_id}: the outbox could not be ingested: ${(error as Error).message}`);
			}
			const was = run.status;
			if (run.status === 'created') {
				setRunStatus(run, 'patching');
			}
			failRun(run, `the desk stopped while the run was ${was} (process ${row.runner_pid}); nothing was landed`);
			this.ports.ai.put([run]);
			failed.push(run.object_id);
			this.ports.logger.warn(`run ${run.object_id}: marked failed, its process ${row.runner_pid} is gone`);
		}
		return failed;
	}

	/**
	 * Executes a run made by Go (or by Retry) from the frozen launch record, to the gate. Resolves
	 * when the run waits at the gate (Validating, checks done) or has Failed; never rejects for the
	 * agent's or the checks' failures, which are the run's outcome.
	 */
	async execute(record: LaunchRecord, runId: string, settings: RunSettings): Promise<Run> {
		const { ai } = this.ports;
		let run = ai.require<Run>(runId, 'run');
		if (run.status !== 'created') {
			throw new DeskError('run.notRunning', `Run ${runId} is ${run.status}; only a new run is started.`, { run: runId, status: run.status });
		}
		let cancelled: string | undefined;
		let stopAgent: ((reason: string) => void) | undefined;
		this.live.set(runId, {
			cancel: (reason) => {
				cancelled ??= reason;
				stopAgent?.(reason);
			},
		});
		const checkCancel = (): void => {
			cancelled ??= this.control(runId)?.cancel_reason ?? undefined;
			if (cancelled !== undefined) {
				throw new DeskError('run.notRunning', `cancelled: ${cancelled}`, { run: runId });
			}
		};
		let placement: RunPlacement | undefined;
		try {
			const task = ai.require<Task>(run.task, 'task');
			const intent = ai.require<Intent>(record.intent, 'intent');
			const agent = chooseAgent(settings);
			// Go claimed the checkout in its own transaction; a Retry claims it here. Either way the
			// check and the claim are one write, so two runs never both pass.
			this.ports.db.write((tx) => this.claimIn(tx, settings, record, runId));
			// ② Intent active with the analysis, and the pipeline seeded with it.
			const pipeline = newContextPipeline(system);
			const analysis = intentAnalysis(record);
			pushFrame(pipeline, 'intent_analysis', analysis.split('\n')[0]!.slice(0, 200), { data: { ticket: record.ticket, plugs: record.plugs.map((p) => ({ id: p.id, name: p.name, role: p.role, version: p.version })) } });
			if (intent.statuses[intent.statuses.length - 1]?.status === 'draft') {
				setIntentContent(intent, analysis);
				setIntentStatus(intent, 'active');
			}
			// ③ The plan: one step per node until the plan node writes the real steps.
			const plan = newPlan(system, { pipeline, fwindow: [0, 1] });
			for (const node of record.template.nodes) {
				addStep(plan, newPlanStep(`${node}`));
			}
			setIntentPlan(intent, plan);
			run.plan = plan.object_id;
			// ④ Task running.
			if (task.status === 'draft') {
				setTaskStatus(task, 'running');
			}
			placement = await this.place(run, record, settings, agent);
			this.saveControl(runId, placement);
			const references = await this.references(record, placement);
			const skills = await this.skills(record, placement, agent);
			this.saveControl(runId, placement);
			const outbox = this.ports.attachments.prepareOutbox(task.object_id);
			const snapshot = newContextSnapshot(system, 'explicit', contextItems(record, references, skills), { summary: `${record.plugs.length} plug${record.plugs.length === 1 ? '' : 's'} at go` });
			run.snapshot = snapshot.object_id;
			run.environment = { os: os.platform(), arch: os.arch(), cwd: placement.work_folder };
			run.tags = { ...run.tags, 'desk.agent': agent.name, 'desk.isolation': placement.isolation, 'desk.sandbox': placement.isolation_note };
			const provenance = newProvenance(system, run, agent.name, 'unknown');
			provenance.parameters = { agent: agent.name, command: agent.command, format: agent.format };
			ai.put([intent, plan, task, pipeline, snapshot, run, provenance]);
			this.ports.changed(runId);

			let usage: { input: number; output: number; cost?: number } = { input: 0, output: 0 };
			let steps: string[] | undefined;
			let revision: Plan | undefined;
			const nodeMetrics: unknown[] = [];
			let lastPatch: PatchSet | undefined;
			const workNodes = record.template.nodes.filter((n) => n !== 'plan');
			for (const [index, node] of record.template.nodes.entries()) {
				checkCancel();
				const step = plan.steps[index];
				const isLastWork = node === workNodes[workNodes.length - 1];
				// Patching is the agent at work, making changes or tool calls (seed 001): from the first node on.
				if (run.status === 'created') {
					setRunStatus(run, 'patching');
				}
				if (step) {
					setStepStatus(step, 'progressing');
				}
				if (revision && node !== 'plan') {
					for (const planned of revision.steps.filter((p) => stepStatus(p) === 'pending')) {
						setStepStatus(planned, 'progressing');
					}
				}
				ai.put([run, plan, ...(revision ? [revision] : [])]);
				this.ports.changed(runId);
				let failure: Parameters<typeof composePrompt>[0]['failure'];
				for (let attempt = 1; ; attempt += 1) {
					const prompt = composePrompt({
						node,
						ticket: record.ticket,
						workFolder: placement.work_folder,
						target: placement.target === 'git' ? { kind: 'git', baseline: run.commit, ...(placement.branch ? { branch: placement.branch } : {}) } : { kind: 'snapshot', name: record.plugs.find((p) => p.role === 'target')!.name, version: placement.target_version! },
						references: references.filter((r) => reaches(r.plugNodes, node, record)).map((r) => r.prompt),
						skills: skills.filter((s) => reaches(s.plugNodes, node, record)).map((s) => s.prompt),
						outbox,
						...(steps ? { plan: steps } : {}),
						...(failure ? { failure } : {}),
					});
					// A cancel that came while the checks ran must not start another agent.
					checkCancel();
					const recorder = new AgentRecorder(run, provenance, pipeline, placement.work_folder, this.sink(agent), agent.name, usage);
					const started = Date.now();
					const outcome = await this.invokeAgent(run, task, node, prompt, agent, placement, outbox, recorder, (stop) => (stopAgent = stop));
					stopAgent = undefined;
					usage = outcome.usage;
					nodeMetrics.push({ node, attempt, exit_code: outcome.exitCode, duration_ms: Date.now() - started, tool_calls: outcome.toolCalls, unparsed_lines: outcome.unparsed, transcript: outcome.transcript });
					run.metrics = { nodes: nodeMetrics };
					checkCancel();
					if (!outcome.ok) {
						throw new DeskError('run.spawnFailed', `${node}: ${outcome.error ?? 'the agent failed'}`, { node });
					}
					if (node === 'plan') {
						steps = outcome.planSteps ?? planSteps(outcome.answer);
						const summaryFrame = pushFrame(pipeline, 'step_summary', `plan: ${steps.length} step${steps.length === 1 ? '' : 's'}`, { data: { steps } });
						step?.oframes.push(summaryFrame);
						if (step) {
							setStepStatus(step, 'completed');
						}
						// The agent's plan is a revision of the desk's (one step a node): the plan the run executes.
						revision = newRevision(plan, actor('agent', agent.name));
						setFwindow(revision, [0, pipeline.next_frame_id]);
						for (const description of steps) {
							addStep(revision, newPlanStep(description));
						}
						setIntentPlan(intent, revision);
						run.plan = revision.object_id;
						ai.put([plan, revision, intent, pipeline, run]);
						break;
					}
					// ⑦ The attempt's change as a PatchSet.
					const patch = await this.makePatchSet(run, placement, outcome.answer);
					const frame = pushFrame(pipeline, 'step_summary', `${node}${attempt > 1 ? ` (attempt ${attempt})` : ''}: ${firstLine(outcome.answer) || 'done'}`.slice(0, 200), { data: { node, attempt } });
					step?.oframes.push(frame);
					if (patch) {
						lastPatch = patch;
						pushFrame(pipeline, 'code_change', `${patch.touched.length} file${patch.touched.length === 1 ? '' : 's'} changed`, { data: { patchset: patch.object_id, touched: patch.touched.map((t) => t.path) } });
						addPatchSet(run, patch);
					}
					ai.put([...(patch ? [patch] : []), pipeline, run, plan]);
					this.ports.changed(runId);
					if (!isLastWork || !patch) {
						break;
					}
					// ⑧ Evidence: the target's checks and the project's, against this PatchSet.
					setRunStatus(run, 'validating');
					ai.put([run]);
					this.ports.changed(runId);
					const evidence = await this.runChecks(run, patch, placement, record, settings, agent, checkCancel, (stop) => (stopAgent = stop));
					stopAgent = undefined;
					const failing = evidence.filter((e) => e.exit_code !== 0);
					if (failing.length === 0 || attempt >= settings.maxAttempts) {
						break;
					}
					failure = { attempt, checks: failing.map((e) => ({ id: e.tags['desk.check'] ?? e.tool, exitCode: e.exit_code, log: this.evidenceLog(e) })) };
					pushFrame(pipeline, 'error_recovery', `checks failed: ${failing.map((e) => e.tags['desk.check'] ?? e.tool).join(', ')}; attempt ${attempt + 1}`, { data: { evidence: failing.map((e) => e.object_id) } });
					setRunStatus(run, 'patching');
					ai.put([run, pipeline]);
					this.ports.changed(runId);
				}
				if (step && node !== 'plan') {
					setStepStatus(step, 'completed');
				}
				if (revision && node === workNodes[workNodes.length - 1]) {
					for (const planned of revision.steps.filter((p) => stepStatus(p) === 'progressing')) {
						setStepStatus(planned, 'completed');
					}
				}
			}
			this.removeInstalled(placement);
			if (!lastPatch) {
				throw new DeskError('run.noPatch', 'the agent finished without changing any file', { run: runId });
			}
			if ((run.status as Run['status']) === 'patching') {
				setRunStatus(run, 'validating');
			}
			// At the gate: validated, waiting for the person's Decision, with which the run completes.
			run.tags = { ...run.tags, [gateTag]: 'waiting' };
			run.updated_at = new Date().toISOString();
			ai.put([run, plan, ...(revision ? [revision] : [])]);
			this.ports.logger.info(`run ${runId}: at the gate with ${run.patchsets.length} PatchSet(s), waiting for a decision`);
		} catch (error) {
			if (placement) {
				this.removeInstalled(placement);
			}
			run = ai.get<Run>(runId) ?? run;
			const reason = cancelled !== undefined ? `cancelled: ${cancelled}` : error instanceof DeskError ? error.message : `internal error: ${(error as Error).message}`;
			if (!(error instanceof DeskError)) {
				this.ports.logger.error(`run ${runId}: ${(error as Error).stack ?? error}`);
			}
			if (run.status !== 'completed' && run.status !== 'failed') {
				// What the agent left is kept as a PatchSet too, so the person sees it at the gate and
				// Abandon can put the files back.
				const partial = placement && run.status !== 'created' ? await this.makePatchSet(run, placement, '').catch(() => undefined) : undefined;
				if (partial && !ai.runPatchSets(run).some((p) => p.tags['desk.tree'] === partial.tags['desk.tree'] && p.tags['desk.target_changes'] === partial.tags['desk.target_changes'])) {
					partial.rationale = `what the agent left when the run stopped (${reason})`;
					addPatchSet(run, partial);
					ai.put([partial]);
				}
				if (run.status === 'created') {
					// Failed is reached from Patching or Validating (seed 001): the attempt began, then failed.
					setRunStatus(run, 'patching');
				}
				failRun(run, reason);
				ai.put([run]);
			}
			this.ports.logger.warn(`run ${runId}: failed — ${reason}`);
		} finally {
			this.live.delete(runId);
			try {
				this.ports.attachments.closeOutbox(run.task);
			} catch {
				// A busy or odd outbox stays; the next attempt tries again.
			}
			this.ports.db.write((tx) => tx.run('UPDATE run_control SET agent_pgid = NULL, updated_at = ? WHERE run_id = ?', [new Date().toISOString(), runId]));
		}
		const final = ai.require<Run>(runId, 'run');
		this.ports.changed(runId);
		this.ports.finished(runId, isAtGate(final) ? 'gate' : 'failed');
		return final;
	}

	/**
	 * Cancel Run: the agent's whole process group is stopped (TERM, then KILL after 3 s) and the run
	 * fails with the reason. A run carried out by another process (a second window, the command line)
	 * is asked through the project database and its agent's group signalled.
	 */
	cancel(runId: string, reason: string): { stopped: boolean } {
		const run = this.ports.ai.require<Run>(runId, 'run');
		if (run.status === 'completed' || run.status === 'failed' || isAtGate(run)) {
			throw new DeskError('run.notRunning', `Run ${runId} is ${isAtGate(run) ? 'at the gate' : run.status} already; there is nothing to cancel.`, { run: runId, status: run.status });
		}
		this.ports.db.write((tx) => tx.run('UPDATE run_control SET cancel_reason = ?, updated_at = ? WHERE run_id = ?', [reason, new Date().toISOString(), runId]));
		const live = this.live.get(runId);
		if (live) {
			live.cancel(reason);
			return { stopped: true };
		}
		const row = this.control(runId);
		if (row && row.runner_pid !== process.pid && isRunnerAlive(row.runner_pid, row.runner_token)) {
			if (row.agent_pgid !== null) {
				killGroup(row.agent_pgid, 'SIGTERM');
			}
			return { stopped: true };
		}
		// Nobody carries it out: a run that never started, or one whose process died.
		if (run.status === 'created') {
			setRunStatus(run, 'patching');
		}
		failRun(run, `cancelled: ${reason}`);
		this.ports.ai.put([run]);
		this.ports.changed(runId);
		return { stopped: false };
	}

	/**
	 * The run an agent is working on (or is about to) in the shared checkout now, if any: two runs
	 * editing one checkout at once would each take the other's edits for its own. (Worktree runs and
	 * snapshot targets have folders of their own; runs waiting at the gate have stopped editing.) A
	 * run claimed by a process that is gone does not count: that process's claim is stale.
	 */
	checkoutBusy(exceptRun?: string, query: Pick<WriteTransaction, 'all' | 'get'> = this.ports.db): string | undefined {
		for (const row of query.all<ControlRow>('SELECT * FROM run_control')) {
			if (row.run_id === exceptRun) {
				continue;
			}
			const json = query.get<{ json: string }>('SELECT json FROM ai_objects WHERE object_id = ?', [row.run_id])?.json;
			const run = json === undefined ? undefined : (fromJson(JSON.parse(json)) as Run);
			const placement = JSON.parse(row.json) as Partial<RunPlacement>;
			if (!run || run.status === 'completed' || run.status === 'failed' || isAtGate(run) || placement.isolation !== 'shared') {
				continue;
			}
			const mine = row.runner_pid === process.pid && row.runner_token === runnerToken;
			// A run of this process that is still Created was claimed by Go and is being started.
			if ((mine && (this.live.has(row.run_id) || run.status === 'created')) || (!mine && isRunnerAlive(row.runner_pid, row.runner_token))) {
				return row.run_id;
			}
		}
		return undefined;
	}

	/** Refuses a run on the shared checkout while another one is working there. */
	assertCheckoutFree(settings: RunSettings, record: { plugs: ReadonlyArray<Pick<AssetPlug, 'id' | 'role'>> }, exceptRun?: string, query?: Pick<WriteTransaction, 'all' | 'get'>): void {
		if (this.isolationOf(settings, record) !== 'shared') {
			return;
		}
		const busy = this.checkoutBusy(exceptRun, query);
		if (busy) {
			throw new DeskError('run.checkoutBusy', `Run ${busy} is working in this checkout now; wait for it, cancel it, or set agentDesk.runs.isolation to worktree so runs work side by side.`, { run: busy });
		}
	}

	/**
	 * Claims where `runId` will work, inside the caller's transaction (Go's, or the start of a
	 * Retry): refused while another live run works in the shared checkout, else the run's control
	 * row is written with this process as its runner and the isolation it will have, so from this
	 * transaction on every other process sees the checkout taken. The claim of a process that dies
	 * is stale (its pid and token no longer name a live process) and the next Go takes over.
	 */
	claimIn(tx: WriteTransaction, settings: RunSettings, record: { launch_id: string; plugs: ReadonlyArray<Pick<AssetPlug, 'id' | 'role'>> }, runId: string): void {
		this.assertCheckoutFree(settings, record, runId, tx);
		tx.run(
			'INSERT INTO run_control (run_id, launch_id, runner_pid, runner_token, agent_pgid, cancel_reason, json, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, ?, ?) ON CONFLICT (run_id) DO UPDATE SET runner_pid = excluded.runner_pid, runner_token = excluded.runner_token',
			[runId, record.launch_id, process.pid, runnerToken, JSON.stringify({ isolation: this.isolationOf(settings, record) }), new Date().toISOString()],
		);
	}

	/** Where a run of these settings and plugs works: the shared checkout, a worktree, or a snapshot target's folder. */
	private isolationOf(settings: RunSettings, record: { plugs: ReadonlyArray<Pick<AssetPlug, 'id' | 'role'>> }): RunPlacement['isolation'] {
		const target = record.plugs.find((p) => p.role === 'target');
		if (target && this.ports.library.getAsset(target.id).engine === 'snapshot') {
			return 'folder';
		}
		return settings.isolation === 'worktree' ? 'worktree' : 'shared';
	}

	/**
	 * Claims the making of a run's decision for this process, across processes: a second claim while
	 * the first holder lives is refused. The returned function gives the claim back.
	 */
	claimDecision(runId: string): () => void {
		const claim = `${process.pid}:${runnerToken}`;
		this.ports.db.write((tx) => {
			const row = tx.get<{ deciding: string | null }>('SELECT deciding FROM run_control WHERE run_id = ?', [runId]);
			if (row?.deciding) {
				const [pid, ...token] = row.deciding.split(':');
				if (isRunnerAlive(Number(pid), token.join(':'))) {
					throw new DeskError('run.notAwaitingDecision', `A decision on run ${runId} is being made already (process ${pid}).`, { run: runId });
				}
			}
			tx.run('UPDATE run_control SET deciding = ? WHERE run_id = ?', [claim, runId]);
		});
		return () => this.ports.db.write((tx) => tx.run('UPDATE run_control SET deciding = NULL WHERE run_id = ? AND deciding = ?', [runId, claim]));
	}

	placement(runId: string): RunPlacement | undefined {
		const row = this.control(runId);
		if (!row) {
			return undefined;
		}
		const placement = JSON.parse(row.json) as Partial<RunPlacement>;
		return placement.work_folder ? (placement as RunPlacement) : undefined;
	}

	launchOf(runId: string): string | undefined {
		return this.control(runId)?.launch_id;
	}

	// -----------------------------------------------------------------------------------------
	// Preparing the work folder

	private async place(run: Run, record: LaunchRecord, settings: RunSettings, agent: AgentSettings): Promise<RunPlacement> {
		const runFolder = path.join(this.ports.libraryDir, 'runs', run.object_id);
		fs.mkdirSync(runFolder, { recursive: true });
		const sandbox = settings.sandbox === 'off' ? { available: false, reason: 'the sandbox is turned off in the settings' } : sandboxStatus();
		const isolationNote = sandbox.available ? `isolated (${sandbox.version ?? 'bubblewrap'})` : `not isolated: ${sandbox.reason}`;
		const base = { run_folder: runFolder, installed: [], reference_folders: [], agent: agent.name, settings, isolated: sandbox.available, isolation_note: isolationNote };
		const targetPlug = record.plugs.find((p) => p.role === 'target');
		const targetAsset = targetPlug ? this.ports.library.getAsset(targetPlug.id) : undefined;
		let placement: RunPlacement;
		if (targetAsset && targetPlug && targetAsset.engine === 'snapshot') {
			const folder = path.join(runFolder, 'target');
			const { files } = await this.ports.library.files(targetAsset.id, targetPlug.version);
			const marker: TargetMarker = { format: 1, asset_id: targetAsset.id, asset_name: targetAsset.name, version: targetPlug.version, files: files.map((f) => ({ path: f.path, hash: f.hash, size: f.size, executable: f.executable })) };
			prepareTargetFolder(folder, marker, (hash) => this.ports.blobs.get(hash), path.join(runFolder, 'target.json'));
			placement = { ...base, target: 'snapshot', isolation: 'folder', work_folder: folder, target_asset: targetAsset.id, target_version: targetPlug.version };
		} else {
			const top = this.ports.project.path;
			const git = await SafeGit.open(top, await this.ports.library.gitLocation(top));
			if (settings.isolation === 'worktree') {
				const folder = path.join(runFolder, 'worktree');
				const branch = `desk/run-${run.object_id}`;
				await git.addWorktree(folder, branch, run.commit);
				placement = { ...base, target: 'git', isolation: 'worktree', work_folder: folder, branch, start_tree: await git.text(['rev-parse', `${run.commit}^{tree}`]) };
			} else {
				// The shared checkout may hold changes of the person's already: the run's change is
				// what differs from the checkout as it was at the start.
				const branchRef = await git.currentBranch();
				placement = {
					...base,
					target: 'git',
					isolation: 'shared',
					work_folder: top,
					...(branchRef ? { branch: branchRef.replace(/^refs\/heads\//, '') } : {}),
					start_tree: await git.treeOfFolder(top, run.commit),
				};
			}
		}
		// copy plugs: reference files copied byte for byte into the work folder at go (§06).
		for (const plug of record.plugs) {
			for (const [from, to] of Object.entries(plug.copy)) {
				const bytes = await this.ports.library.cat(plug.id, from, plug.version);
				writeInside(placement.work_folder, to, bytes);
			}
		}
		return placement;
	}

	/** Each reference's files where the agent can read them (read-only), and its `files` inlined. */
	private async references(record: LaunchRecord, placement: RunPlacement): Promise<Array<{ plugNodes: string[]; prompt: PromptReference; asset: AssetRecord; blob: string }>> {
		const result = [];
		for (const plug of record.plugs.filter((p) => p.role === 'reference')) {
			const asset = this.ports.library.getAsset(plug.id);
			let mountPath: string;
			let blob = '';
			if (asset.engine === 'snapshot') {
				mountPath = this.ports.library.mount(asset.id, plug.version);
			} else if (asset.engine === 'git') {
				mountPath = path.join(placement.run_folder, 'references', `${safeName(asset.name)}-${safeName(asset.id)}-v${plug.version}`);
				if (!fs.existsSync(mountPath)) {
					const { files } = await this.ports.library.files(asset.id, plug.version);
					for (const file of files) {
						writeInside(mountPath, file.path, await this.ports.library.cat(asset.id, file.path, plug.version));
					}
					makeReadOnly(mountPath);
				}
			} else {
				// A link or notes asset: its text is the reference.
				mountPath = path.join(placement.run_folder, 'references', `${safeName(asset.name)}-${safeName(asset.id)}-v${plug.version}`);
				writeInside(mountPath, asset.kind === 'notes' ? 'NOTES.md' : 'LINK.txt', Buffer.from(asset.kind === 'notes' ? asset.notes : `${asset.url}\n${asset.about}\n`, 'utf8'));
				makeReadOnly(mountPath);
			}
			placement.reference_folders.push(mountPath);
			const inlined: PromptReference['inlined'] = [];
			const notInlined: PromptReference['notInlined'] = [];
			if (plug.files.length > 0) {
				const { files } = await this.ports.library.files(asset.id, plug.version);
				for (const pattern of plug.files) {
					const matched = files.filter((f) => globMatches(pattern, f.path));
					if (matched.length === 0) {
						notInlined.push({ path: pattern, reason: 'matches no file of this version' });
					}
					for (const file of matched) {
						const bytes = Buffer.from(await this.ports.library.cat(asset.id, file.path, plug.version));
						if (!isText(bytes)) {
							notInlined.push({ path: file.path, reason: `not text (${bytes.length} bytes); read it from the folder` });
						} else {
							inlined.push({ path: file.path, text: bytes.toString('utf8') });
						}
					}
				}
			}
			// The item's content id: the version's manifest (snapshot) or commit (git); the text itself otherwise.
			const version = asset.engine === 'none' ? undefined : (await this.ports.library.assetVersions(asset.id)).find((v) => v.version === plug.version);
			blob = version ? (version.engine === 'git' ? version.commit : version.manifest) : gitBlobId(Buffer.from(asset.kind === 'notes' ? asset.notes : asset.url, 'utf8'));
			result.push({ plugNodes: plug.nodes, prompt: { name: asset.name, version: plug.version, mountPath, inlined, notInlined }, asset, blob });
		}
		return result;
	}

	/** Instructions plugs: installed as Claude Code skills in the work folder, or inlined for other agents. */
	private async skills(record: LaunchRecord, placement: RunPlacement, agent: AgentSettings): Promise<Array<{ plugNodes: string[]; prompt: PromptSkill }>> {
		const result = [];
		for (const plug of record.plugs.filter((p) => p.role === 'instructions')) {
			const asset = this.ports.library.getAsset(plug.id);
			const { files } = await this.ports.library.files(asset.id, plug.version);
			const skillFile = files.find((f) => f.path === 'SKILL.md');
			const body = skillFile ? Buffer.from(await this.ports.library.cat(asset.id, 'SKILL.md', plug.version)).toString('utf8') : '';
			const front = /^---\n([\s\S]*?)\n---/.exec(body)?.[1] ?? '';
			const name = /^name:\s*(.+)$/m.exec(front)?.[1]?.trim() ?? asset.name;
			const description = /^description:\s*(.+)$/m.exec(front)?.[1]?.trim() ?? asset.about;
			const folderName = safeName(name);
			const installAt = `.claude/skills/${folderName}`;
			if (agent.skills === 'claude' && !fs.existsSync(path.join(placement.work_folder, ...installAt.split('/')))) {
				for (const file of files) {
					writeInside(placement.work_folder, `${installAt}/${file.path}`, await this.ports.library.cat(asset.id, file.path, plug.version));
				}
				placement.installed.push(installAt);
				result.push({ plugNodes: plug.nodes, prompt: { name, description, installedAt: installAt } });
			} else {
				result.push({ plugNodes: plug.nodes, prompt: { name, description, body: body.replace(/^---\n[\s\S]*?\n---\n?/, '') } });
			}
		}
		return result;
	}

	private removeInstalled(placement: RunPlacement): void {
		for (const rel of placement.installed) {
			// Through folder descriptors only: an agent may have made .claude a link to somewhere else,
			// even while this runs. The .claude/skills folders the desk made go too when empty now.
			if (!removeTreeInFolder(placement.work_folder, rel, rel.split('/').length - 1)) {
				this.ports.logger.warn(`the installed skill ${rel} was not removed: it is no longer the folder the desk made`);
			}
		}
	}

	// -----------------------------------------------------------------------------------------
	// The agent

	private async invokeAgent(
		run: Run,
		task: Task,
		node: string,
		prompt: string,
		agent: AgentSettings,
		placement: RunPlacement,
		outbox: string,
		recorder: AgentRecorder,
		onStop: (stop: (reason: string) => void) => void,
	): Promise<NodeOutcome & { usage: { input: number; output: number; cost?: number }; exitCode: number | null; transcript?: ArtifactRef }> {
		const env: Record<string, string> = {
			// Only the absolute folders of the PATH: a relative one (`.`, empty) would find a program
			// of the repository's in the work folder the agent starts in.
			PATH: safePath(),
			HOME: os.homedir(),
			LANG: process.env.LANG ?? 'C.UTF-8',
			TERM: 'dumb',
			NO_COLOR: '1',
			...AttachmentStore.env(task.object_id, outbox),
			DESK_RUN_ID: run.object_id,
			DESK_NODE: node,
		};
		for (const name of agent.env) {
			const value = process.env[name];
			if (value !== undefined) {
				env[name] = value;
			}
		}
		env.PATH = safePath(env.PATH);
		const program = resolveCommand(agent.command);
		if (!program) {
			const outcome = recorder.finish({ code: null, signal: null });
			return { ...outcome, ok: false, error: `the agent's program ${agent.command} was not found (is it installed and on the PATH? Only absolute paths and the PATH's absolute folders are searched)`, exitCode: null };
		}
		const usesPlaceholder = agent.args.some((a) => a.includes('{prompt}'));
		const args = agent.args.map((a) => a.split('{prompt}').join(prompt));
		const started = Date.now();
		const child = placement.isolated
			? // In the sandbox the program is started by its real path: only its own folder is shown.
				spawnSandboxed(sandboxArgs(this.layout(placement, outbox, agent), env, [fs.realpathSync(program), ...args]), {
					cwd: placement.work_folder,
					env: { PATH: env.PATH!, DESK_RUN_ID: run.object_id },
					stdin: 'pipe',
				})
			: spawn(program, args, { cwd: placement.work_folder, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
		if (!child.stdin || !child.stdout || !child.stderr) {
			throw new DeskError('run.spawnFailed', 'the agent was started without its pipes', { agent: agent.name });
		}
		const spawnError = new Promise<Error>((resolve) => child.on('error', resolve));
		if (child.pid !== undefined) {
			const pgid = child.pid;
			this.ports.db.write((tx) => tx.run('UPDATE run_control SET agent_pgid = ?, updated_at = ? WHERE run_id = ?', [pgid, new Date().toISOString(), run.object_id]));
			onStop(() => {
				killGroup(pgid, 'SIGTERM');
				setTimeout(() => killGroup(pgid, 'SIGKILL'), 3000).unref();
			});
		}
		child.stdin.on('error', () => undefined);
		child.stdin.end(usesPlaceholder ? '' : prompt);
		const parser = createOutputParser(agent.format);
		const transcript: Buffer[] = [];
		let stderrTail = '';
		child.stderr.on('data', (chunk: Buffer) => {
			keep(chunk);
			stderrTail = (stderrTail + chunk.toString('utf8')).slice(-2000);
		});
		// Each line the agent prints is capped: one endless line must not exhaust the desk's memory.
		const lines = boundedLines(child.stdout, {
			maxLineBytes: maxAgentLineBytes,
			onDropped: (bytes) => {
				this.ports.logger.warn(`run ${run.object_id}: the agent printed a line of ${bytes} bytes, over the limit of ${maxAgentLineBytes}; it was dropped`);
				keep(Buffer.from(`[desk: a line of ${bytes} bytes, over the limit of ${maxAgentLineBytes}, was dropped]\n`, 'utf8'));
			},
		});
		let kept = 0;
		const keep = (chunk: Buffer) => {
			// The stored transcript is capped: a noisy agent must not exhaust the desk's memory.
			if (kept < maxTranscriptBytes) {
				transcript.push(chunk.subarray(0, maxTranscriptBytes - kept));
				kept += chunk.length;
			}
		};
		const reading = (async () => {
			for await (const line of lines) {
				keep(Buffer.from(`${line}\n`, 'utf8'));
				for (const event of parser.push(line)) {
					recorder.record(event);
				}
			}
			for (const event of parser.end()) {
				recorder.record(event);
			}
		})();
		const exit = await Promise.race([
			new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal }))),
			spawnError.then((error) => ({ code: null, signal: null, error })),
		]);
		await reading.catch(() => undefined);
		// The agent is gone: its process group must not be signalled again (the number may be reused).
		this.ports.db.write((tx) => tx.run('UPDATE run_control SET agent_pgid = NULL WHERE run_id = ?', [run.object_id]));
		if (kept > maxTranscriptBytes) {
			transcript.push(Buffer.from(`\n[desk: the transcript was cut at ${maxTranscriptBytes} bytes of ${kept}]\n`));
		}
		this.ingestOutbox(run, task, agent);
		const sink = this.sink(agent);
		const stored = transcript.length > 0 ? sink.storeArtifact(Buffer.from(sink.scrub(Buffer.concat(transcript).toString('utf8')), 'utf8'), 'text/plain; charset=utf-8') : undefined;
		if ('error' in exit) {
			const outcome = recorder.finish({ code: null, signal: null });
			const missing = (exit.error as NodeJS.ErrnoException).code === 'ENOENT';
			return { ...outcome, ok: false, error: missing ? `the agent's program ${placement.isolated ? 'bwrap' : agent.command} was not found` : `the agent could not be started: ${exit.error.message}`, exitCode: null };
		}
		const outcome = recorder.finish(exit);
		this.ports.logger.info(`run ${run.object_id}: ${node} by ${agent.name} exited ${exit.code ?? exit.signal} after ${Date.now() - started} ms, ${outcome.toolCalls} tool call(s)`);
		if (!outcome.ok && stderrTail.trim() !== '' && exit.code !== 0) {
			outcome.error = `${outcome.error}; it said: ${sink.scrub(stderrTail.trim().split('\n').slice(-2).join(' ')).slice(0, 300)}`;
		}
		return { ...outcome, exitCode: exit.code, ...(stored ? { transcript: stored } : {}) };
	}

	/** The attempt is over: what the agent left in the outbox is attached to the task (seed 002 Ingest). */
	private ingestOutbox(run: Run, task: Task, agent: AgentSettings): void {
		try {
			const report = this.ports.attachments.ingest(task.object_id, { runId: run.object_id, secrets: secretsOf(agent), addedBy: `agent ${agent.name}` });
			if (report.added.length + report.refused.length + report.kept.length > 0) {
				this.ports.logger.info(`run ${run.object_id}: ${AttachmentStore.summary(task.object_id, report)}`);
				this.ports.attachmentsChanged?.(task.object_id);
			}
		} catch (error) {
			this.ports.logger.warn(`run ${run.object_id}: the outbox could not be ingested: ${(error as Error).message}`);
		}
	}

	private layout(placement: RunPlacement, outbox: string | undefined, agent: AgentSettings | undefined): SandboxLayout {
		const inside = (rel: string) => path.join(placement.work_folder, rel);
		const agentReads = agent ? [...programFolders(agent.command), ...agent.readPaths.map(expandHome)] : [];
		return {
			workFolder: placement.work_folder,
			// In the person's own checkout, what configures their tools stays read-only: git's
			// config and hooks, the editor's settings (agents and checks are set there), Claude's.
			readOnlyInside: placement.isolation === 'shared' ? ['.git', '.vscode', '.claude', '.agents'].map(inside) : [],
			hiddenInside: placement.isolation === 'shared' ? [inside('.desk')] : [],
			...(agent ? { home: this.agentHome(placement, agent) } : {}),
			writable: agent ? agent.writePaths.map(expandHome) : [],
			...(outbox ? { outbox } : {}),
			// A worktree's .git file points into the repository's .git: readable, never writable.
			readOnly: [...placement.reference_folders, ...agentReads, ...(placement.isolation === 'worktree' ? [path.join(this.ports.project.path, '.git')] : [])],
			network: agent?.network ?? false,
		};
	}

	/**
	 * The run's own home folder: the agent's `homeFiles` (its login and settings) copied in, so what
	 * the agent changes there — hooks, servers it would have the person run later — is discarded
	 * with the run instead of reaching the person's own configuration.
	 */
	private agentHome(placement: RunPlacement, agent: AgentSettings): string {
		const home = path.join(placement.run_folder, 'home');
		fs.mkdirSync(home, { recursive: true, mode: 0o700 });
		const personHome = os.homedir();
		for (const file of agent.homeFiles.map(expandHome)) {
			const rel = path.relative(personHome, file);
			if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
				continue;
			}
			try {
				const stat = fs.lstatSync(file);
				if (!stat.isFile()) {
					continue;
				}
				const target = path.join(home, rel);
				fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
				fs.copyFileSync(file, target);
				fs.chmodSync(target, 0o600);
			} catch {
				// Not there: the agent starts without it.
			}
		}
		return home;
	}

	// -----------------------------------------------------------------------------------------
	// PatchSets and checks

	private async makePatchSet(run: Run, placement: RunPlacement, rationale: string): Promise<PatchSet | undefined> {
		const agent = actor('agent', placement.agent);
		if (placement.target === 'snapshot') {
			const skipped: Array<{ path: string; reason: string }> = [];
			const changes = targetChanges(placement.work_folder, placement.installed, path.join(placement.run_folder, 'target.json'), skipped);
			if (skipped.length > 0) {
				this.ports.logger.warn(`run ${run.object_id}: not taken from the target folder: ${skipped.slice(0, 5).map((s) => `${JSON.stringify(s.path)} (${s.reason})`).join('; ')}${skipped.length > 5 ? ` and ${skipped.length - 5} more` : ''}`);
			}
			if (changes.length === 0) {
				return undefined;
			}
			const before = (hash: string) => this.ports.blobs.get(hash);
			for (const change of changes) {
				if (change.after) {
					this.ports.blobs.put(change.after.bytes);
				}
			}
			const diff = targetDiff(changes, before);
			const record = changes.map((c) => ({ path: c.path, change_type: c.change_type, before: c.before?.hash, after: c.after?.hash, size: c.after?.size ?? c.before?.size ?? 0, executable: c.after?.executable ?? false }));
			const changesHash = this.ports.blobs.put(Buffer.from(JSON.stringify({ format: 1, asset: placement.target_asset, version: placement.target_version, files: record }), 'utf8'));
			const patch = newPatchSet(agent, run, { format: 'unified', artifact: this.storeArtifact(diff.text, 'text/x-diff'), ...(rationale ? { rationale } : {}) });
			patch.touched = changes.map((c) => ({ path: c.path, change_type: c.change_type, lines_added: diff.counts.get(c.path)?.[0] ?? 0, lines_deleted: diff.counts.get(c.path)?.[1] ?? 0 }));
			patch.tags = { ...patch.tags, 'desk.target_asset': placement.target_asset!, 'desk.target_version': String(placement.target_version), 'desk.target_changes': changesHash };
			return patch;
		}
		const git = (await SafeGit.open(this.ports.project.path, await this.ports.library.gitLocation(this.ports.project.path))).at(placement.work_folder);
		const tree = await git.treeOfFolder(placement.work_folder, run.commit, placement.installed);
		const from = placement.start_tree!;
		const changes = await git.changes(from, tree);
		if (changes.length === 0) {
			return undefined;
		}
		const diff = await git.diff(from, tree);
		const patch = newPatchSet(agent, run, { format: 'git_diff', artifact: this.storeArtifact(diff, 'text/x-diff'), ...(rationale ? { rationale } : {}) });
		patch.touched = changes.map((c) => ({ path: c.path, change_type: c.change_type, lines_added: c.lines_added ?? 0, lines_deleted: c.lines_deleted ?? 0 }));
		patch.tags = { ...patch.tags, 'desk.from_tree': from, 'desk.tree': tree };
		return patch;
	}

	/** The target asset's checks (§09) and the project's, each an Evidence with its full log stored. */
	private async runChecks(run: Run, patch: PatchSet, placement: RunPlacement, record: LaunchRecord, settings: RunSettings, agent: AgentSettings, checkCancel: () => void, onStop: (stop: () => void) => void): Promise<Evidence[]> {
		const targetPlug = record.plugs.find((p) => p.role === 'target');
		const targetId = targetPlug?.id ?? this.ports.project.main_asset;
		const assetChecks = targetId ? (this.ports.library.getAsset(targetId).checks ?? []) : [];
		const evidence: Evidence[] = [];
		for (const check of [...assetChecks, ...settings.checks]) {
			checkCancel();
			const result = await this.runCheck(check, placement, onStop);
			checkCancel();
			const item = newEvidence(system, run, evidenceKind(check.id), check.executable, {
				patchset: patch,
				command: [check.executable, ...check.args].join(' '),
				exitCode: result.exitCode,
				summary: result.summary,
			});
			item.tags = { ...item.tags, 'desk.check': check.id, 'desk.duration_ms': String(result.durationMs) };
			item.report_artifacts = [this.storeArtifact(Buffer.from(this.sink(agent).scrub(result.log), 'utf8'), 'text/plain; charset=utf-8')];
			evidence.push(item);
			this.ports.ai.put([item]);
			this.ports.changed(run.object_id);
		}
		return evidence;
	}

	private async runCheck(check: AssetCheck, placement: RunPlacement, onStop: (stop: () => void) => void): Promise<{ exitCode: number; summary: string; log: string; durationMs: number }> {
		const cwd = path.join(placement.work_folder, check.cwd || '.');
		const env: Record<string, string> = { PATH: safePath(), HOME: os.homedir(), LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', CI: '1' };
		const command = [check.executable, ...check.args];
		const started = Date.now();
		let child;
		if (placement.isolated) {
			// Checks run what the agent wrote: the same sandbox, without the agent's login or the network.
			const layout = this.layout(placement, undefined, undefined);
			const args = sandboxArgs({ ...layout, readOnly: [...layout.readOnly, ...programFolders(check.executable)] }, env, command).map((a, i, all) => (all[i - 1] === '--chdir' ? cwd : a));
			child = spawnSandboxed(args, { cwd, env: { PATH: env.PATH! }, stdin: 'ignore' });
		} else {
			child = spawn(command[0]!, command.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
		}
		if (child.pid !== undefined) {
			const pgid = child.pid;
			onStop(() => killGroup(pgid, 'SIGKILL'));
		}
		const chunks: Buffer[] = [];
		let size = 0;
		const keep = (chunk: Buffer) => {
			if (size < 16 * 1024 * 1024) {
				chunks.push(chunk);
				size += chunk.length;
			}
		};
		child.stdout?.on('data', keep);
		child.stderr?.on('data', keep);
		let timedOut = false;
		const timer = setTimeout(() => {
			timedOut = true;
			if (child.pid !== undefined) {
				killGroup(child.pid, 'SIGKILL');
			}
		}, check.timeout * 1000);
		const exit = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
			child.on('error', (error) => resolve({ code: null, error }));
			child.on('close', (code) => resolve({ code }));
		});
		clearTimeout(timer);
		const log = Buffer.concat(chunks).toString('utf8');
		const durationMs = Date.now() - started;
		const seconds = (durationMs / 1000).toFixed(1);
		if (exit.error) {
			return { exitCode: 127, summary: `could not start ${check.executable}: ${exit.error.message}`, log: exit.error.message, durationMs };
		}
		if (timedOut) {
			return { exitCode: 124, summary: `timed out after ${check.timeout} s`, log, durationMs };
		}
		const code = exit.code ?? 1;
		const last = log.trim().split('\n').filter((l) => l.trim() !== '').pop() ?? '';
		return { exitCode: code, summary: code === 0 ? `passed in ${seconds} s` : `failed (exit ${code}) in ${seconds} s${last ? `: ${last.slice(0, 160)}` : ''}`, log, durationMs };
	}

	private evidenceLog(evidence: Evidence): string {
		const ref = evidence.report_artifacts[0];
		return ref?.hash && this.ports.blobs.has(ref.hash) ? this.ports.blobs.get(ref.hash).toString('utf8') : (evidence.summary ?? '');
	}

	// -----------------------------------------------------------------------------------------

	private storeArtifact(bytes: Buffer, contentType: string): ArtifactRef {
		const hash = this.ports.blobs.put(bytes);
		return artifactFor(bytes, artifactStore, hash, contentType);
	}

	private sink(agent: AgentSettings) {
		const secrets = secretsOf(agent);
		return {
			put: (objects: Parameters<AiStore['put']>[0]) => {
				this.ports.ai.put(objects);
				const run = objects.find((o) => 'run_id' in o) as { run_id: string } | undefined;
				if (run) {
					this.ports.changed(run.run_id);
				}
			},
			storeArtifact: (bytes: Buffer, contentType: string) => this.storeArtifact(bytes, contentType),
			scrub: (text: string) => scrubText(text, secrets),
		};
	}

	private control(runId: string): ControlRow | undefined {
		return this.ports.db.get<ControlRow>('SELECT * FROM run_control WHERE run_id = ?', [runId]);
	}

	private saveControl(runId: string, placement: RunPlacement): void {
		this.ports.db.write((tx) => tx.run('UPDATE run_control SET json = ?, updated_at = ? WHERE run_id = ?', [JSON.stringify(placement), new Date().toISOString(), runId]));
	}
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

function contextItems(record: LaunchRecord, references: Array<{ prompt: PromptReference; blob: string }>, skills: Array<{ prompt: PromptSkill }>): ContextItem[] {
	const items: ContextItem[] = [];
	for (const reference of references) {
		items.push({ kind: 'file', path: reference.prompt.mountPath, blob: reference.blob, preview: `${reference.prompt.name} v${reference.prompt.version} (reference)` });
		for (const file of reference.prompt.inlined) {
			items.push({ kind: 'file', path: `${reference.prompt.mountPath}/${file.path}`, blob: gitBlobId(Buffer.from(file.text, 'utf8')), preview: file.text.slice(0, 200) });
		}
	}
	for (const skill of skills) {
		items.push({ kind: 'snippet', path: skill.prompt.installedAt ?? `skill ${skill.prompt.name}`, preview: `${skill.prompt.name}: ${skill.prompt.description}`.slice(0, 200) });
	}
	const target = record.plugs.find((p) => p.role === 'target');
	if (target) {
		items.push({ kind: 'file', path: `${target.name} v${target.version}`, preview: 'target' });
	}
	return items;
}

function gitBlobId(bytes: Buffer): string {
	return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

function reaches(plugNodes: readonly string[], node: string, record: LaunchRecord): boolean {
	return plugNodes.length === 0 ? record.template.nodes.includes(node) : plugNodes.includes(node);
}

function evidenceKind(id: string): EvidenceKind {
	const lower = id.toLowerCase();
	if (/test/.test(lower)) {
		return 'test';
	}
	if (/lint|eslint|format|style/.test(lower)) {
		return 'lint';
	}
	if (/build|compile|tsc|typecheck/.test(lower)) {
		return 'build';
	}
	return { other: id };
}

/** The values of the secrets the desk passes to the agent, to be scrubbed from what is stored. */
function secretsOf(agent: AgentSettings): string[] {
	return agent.secretEnv.map((name) => process.env[name]).filter((v): v is string => v !== undefined);
}

/** A file written inside `folder` (made when missing) through checked folders, never through a link. */
function writeInside(folder: string, rel: string, bytes: Uint8Array): void {
	fs.mkdirSync(folder, { recursive: true });
	writeInFolder(folder, rel, bytes, { replaceLink: true });
}

function makeReadOnly(folder: string): void {
	for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
		const full = path.join(folder, entry.name);
		if (entry.isDirectory()) {
			makeReadOnly(full);
			fs.chmodSync(full, 0o555);
		} else if (entry.isFile()) {
			fs.chmodSync(full, 0o444);
		}
	}
	fs.chmodSync(folder, 0o555);
}

function safeName(name: string): string {
	return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '').slice(0, 64) || 'asset';
}

function firstLine(text: string): string {
	return text.trim().split('\n')[0]?.trim() ?? '';
}
