import type { AttachmentStore } from '../attachments/attachmentStore';
import type { Library } from '../assets/library';
import type { ProjectRecord } from '../assets/types';
import type { Faults } from '../core/faults';
import type { Logger } from '../core/logger';
import type { AiStore } from '../store/aiStore';
import type { BlobStore } from '../store/blobStore';
import type { ActorRef, Run } from '../ai/types';
import type { LaunchRecord } from '../launch/types';
import type { CatchUpSection } from '../lineage/types';
import type { WriteTransaction } from '../store/durableDatabase';
import type { LandingFacts, NodeProgressNote } from '../lineage/board';
import type { CarriedBy } from './types';

/** What carrying out and deciding runs needs from the rest of the desk (built by the composition root). */
export interface RunnerPorts {
	library: Library;
	attachments: AttachmentStore;
	blobs: BlobStore;
	ai: AiStore;
	/** The project's run_control rows. */
	control: RunControlStore;
	project: ProjectRecord;
	libraryDir: string;
	logger: Logger;
	/** Which process this is to the runs it carries out (glossary: Carrier), recorded on each; default the command line. */
	carriedBy?: CarriedBy;
	/** Kill points of crash tests (core/faults.ts); none in production. */
	faults?: Faults;
	/** Told whenever the run's objects changed (the Runs view refreshes). */
	changed: (runId: string) => void;
	/** Told when a run reached the gate (completed with a change) or failed. */
	finished: (runId: string, status: 'gate' | 'failed') => void;
	/**
	 * Keeps what a ContextSnapshot item holds as a git blob of the project's repository, anchored
	 * under `refs/desk/blobs/` (glossary: Run history), and gives its id; undefined when it cannot be
	 * kept there (the desk then names the content by its id alone).
	 */
	keepContext?: (content: Uint8Array) => Promise<string | undefined>;
	/** Told when a task got attachments. */
	attachmentsChanged?: (taskId: string) => void;
	/**
	 * Hosts the desk tools for one agent process of a run (glossary: Desk tools): its socket, served by
	 * this process for the agent as actor. Undefined, or returning undefined, when this desk has none
	 * (its proxy bundle is not there): the run goes on without them.
	 */
	deskTools?: (request: DeskToolsRequest) => Promise<DeskToolsHost> | undefined;
	/** Whether a Task is a tally (glossary: Tally), whose runs are refused; none when the desk has no lineage. */
	isTally?: (task: string, tx?: WriteTransaction) => boolean;
	/** Told when a run of this process stopped working in its folder: a branch waiting for the checkout may start. */
	checkoutFreed?: () => void;
	/**
	 * Catch-up before an input of a run (glossary: Catch-up): for a branch's run, what its next prompt
	 * is told of the other branches of its root and of its root's memory, within the budgets given
	 * (the defaults where absent). Undefined for a run that is no branch's.
	 */
	catchUp?: (run: string, limits: { tallyTokens?: number; memoryTokens?: number }) => Promise<CatchUpInput | undefined>;
	/**
	 * The lineage's boards (glossary: Lineage): told what a run did, whichever process carries it out
	 * or decides it, so a branch's starter hears of it (a report, a passive note, an abstract on the
	 * tally, a landing). Undefined where there is no lineage.
	 */
	board?: RunBoardHooks;
}

/** What the boards are told by the runner and the gate; each is a no-op for a run that is no branch's. */
export interface RunBoardHooks {
	/** A node of the run ended (the branch's liquid abstract). */
	nodeEnded(progress: NodeProgressNote): void;
	/** The run reached the gate or failed. */
	runFinished(runId: string): void;
	/** The gate stored the landing Decision of the run. */
	landed(runId: string, facts: LandingFacts): void;
	/** The gate stored another Decision of the run (abandon, retry, checkpoint). */
	decided(runId: string): void;
}

/** A catch-up composed for one input: its sections, and what the input's use of it must save. */
export interface CatchUpInput {
	readonly section: CatchUpSection;
	/** Saves the node's new baseline inside the transaction that pins the sections on the run's ContextSnapshot. */
	pin(tx: WriteTransaction): void;
}

/** What the desk tools of an agent process are bound to: its run, task and folders, and where each call is told. */
export interface DeskToolsRequest {
	readonly run: string;
	readonly task: string;
	/** The agent's name (its settings'). */
	readonly agent: string;
	/** The only folders the agent's paths may name, as the desk sees them. */
	readonly workFolder: string;
	readonly outbox: string;
	/** Folders inside the work folder the sandbox shows read-only and hidden (`SandboxLayout`'s): the desk tools keep to them too. */
	readonly readOnlyInside: readonly string[];
	readonly hiddenInside: readonly string[];
	/** The agent's secret values (its settings' secret environment): scrubbed from what its calls bring in, as from its outbox. */
	readonly secrets: readonly string[];
	/** Each call, once answered (before the answer goes out): the run records it as a ToolInvocation. */
	called(call: DeskToolCall): void;
}

/** One desk tool call of the agent, as the run records it. */
export interface DeskToolCall {
	/** The MCP tool's name (`asset_search`). */
	readonly tool: string;
	readonly args: unknown;
	/** The agent's own id of the call, when its harness sent one. */
	readonly harnessCallId?: string;
	readonly ok: boolean;
	/** One line: what it answered, or the refusal's code and message. */
	readonly summary: string;
	/** The agent as the call's actor (an AI object's `created_by`). */
	readonly createdBy: ActorRef;
}

/** The desk tools hosted for one agent process; closed (socket and folder removed) when it ended. */
export interface DeskToolsHost {
	/** The IPC folder (mode 0700, under a short temporary folder) holding the socket `desk.sock`. */
	readonly ipcDir: string;
	/** The per-run token every request must carry; secret (never in argv or a file). */
	readonly token: string;
	/** The bundles the agent starts: the stdio MCP proxy and the shell fallback. */
	readonly proxy: string;
	readonly toolCli: string;
	close(): Promise<void>;
}

/** A run's row of run_control: who carries it out, its agent's process group, a cancel asked for, a decision being made. */
export interface RunControlRow {
	deciding: string | null;
	run_id: string;
	launch_id: string;
	runner_pid: number;
	runner_token: string;
	agent_pgid: number | null;
	cancel_reason: string | null;
	/** Where the run works (`RunPlacement`), or only its isolation while it is claimed and not yet placed. */
	json: string;
}

/**
 * The run control of a project: one row a run, shared by every process that carries runs out or
 * decides them (a desk server per window, the command line). Methods that take `tx` run inside a
 * transaction of the caller's (Go's, a Retry's decision), else in one of their own.
 */
export interface RunControlStore {
	rows(tx?: WriteTransaction): RunControlRow[];
	row(runId: string): RunControlRow | undefined;
	/** The Run as stored, read in the same transaction as the rows. */
	storedRun(runId: string, tx?: WriteTransaction): Run | undefined;
	/** Writes the claim: this process (pid and token) runs it; a row already there keeps its other fields. */
	claim(
		tx: WriteTransaction,
		runId: string,
		launchId: string,
		runner: { pid: number; token: string },
		json: string,
	): void;
	savePlacement(runId: string, json: string): void;
	setAgentGroup(runId: string, pgid: number): void;
	/** The agent is gone: its process group must not be signalled again (the number may be reused). */
	agentGone(runId: string): void;
	/** The run is over in this process. */
	executionEnded(runId: string): void;
	/**
	 * This process's part in the run is over, its board told and its attachments kept: its claim is
	 * marked so (`endedRunnerToken`), and a desk following the run from another process tells its end.
	 */
	partOver(runId: string, runner: { pid: number; token: string; endedToken: string }): void;
	requestCancel(runId: string, reason: string): void;
	/** Sets `claim` as the run's decision maker in one write, after `check` saw the holder there was (and did not throw). */
	claimDecision(runId: string, claim: string, check: (holder: string | null) => void): void;
	releaseDecision(runId: string, claim: string): void;
	/** The launch record Go froze for `launchId`. */
	launchRecord(launchId: string): LaunchRecord | undefined;
	/**
	 * The launch record of `task` (a run from before runs named their launch). A record that cannot be
	 * read does not hide the one asked for; when none of those read is the task's, the first refusal is thrown.
	 */
	launchRecordOfTask(task: string): LaunchRecord | undefined;
	/** Runs `body` as one durable transaction of the project database. */
	transaction<T>(body: (tx: WriteTransaction) => T): T;
}
