import * as path from 'node:path';
import { actor, cutGraphemes, newToolInvocation, pushFrame, setUsage } from '../ai/model';
import { addUsage } from '../ai/tokenUsage';
import type { ArtifactRef, ContextPipeline, Provenance, Run, TokenUsage, ToolInvocation } from '../ai/types';
import type { AgentEvent } from '../agents/events';
import { cappedText, cappedToolInput, maxMessageBytes, maxToolOutputBytes } from './artifacts';
import type { PriceTable } from './prices';
import type { AgentMessageData } from './types';
import { UsageAccount } from './usageAccount';

/** The kind of the ContextFrame an agent's message is recorded as (glossary: Conversation). */
export const agentMessageKind = { other: 'agent_message' } as const;
/** Characters of a message kept in its frame; the whole of a longer one is in the blob store. */
export const inlineMessageChars = 4000;
/** The pipeline is rewritten whole on each write: at most once this often while the agent prints. */
const pipelineWriteMs = 1000;

/** Where the recorder puts what it makes: AI objects, and blobs for long outputs. */
export interface RecorderSink {
	/** Stores `objects`; the views are told of `runId`'s change (else of the run an object names). */
	put(objects: Array<ToolInvocation | Provenance | ContextPipeline>, runId?: string): void;
	storeArtifact(bytes: Buffer, contentType: string): ArtifactRef;
	/** Removes the secrets the desk passed to the agent from text on its way into the store. */
	scrub(text: string): string;
}

export interface NodeOutcome {
	ok: boolean;
	/** The agent's last message or its final result text: the plan node's plan, the work node's rationale. */
	answer: string;
	planSteps?: string[];
	toolCalls: number;
	unparsed: number;
	error?: string;
}

/**
 * Turns one node's agent events into AI objects as they arrive (glossary: ToolInvocation,
 * Conversation): a ToolInvocation per tool call with its files read and written (a subagent's nested
 * under the call that started it) and its output capped, the Provenance's model and token usage (per
 * model, with the nodes before it), and in the run's ContextPipeline a tool_call frame for each call
 * and an agent_message frame for each message, in the order the agent printed them.
 */
export class AgentRecorder {
	private readonly open = new Map<string, ToolInvocation>();
	/** Every call of the node by the agent's id: a subagent's calls and usage hang under its starter's. */
	private readonly calls = new Map<string, ToolInvocation>();
	private readonly messages: string[] = [];
	private readonly account: UsageAccount;
	private result: Extract<AgentEvent, { kind: 'result' }> | undefined;
	/** The model the agent asked for or named first (Gemini CLI's "auto" is a request, not a model). */
	private sessionModel: string | undefined;
	private planSteps: string[] | undefined;
	private toolCalls = 0;
	private pipelineWrittenAt = 0;
	/** A write of the pipeline put off by {@link pipelineWriteMs}: frames are waiting for it. */
	private pipelineWrite: NodeJS.Timeout | undefined;
	private unparsed = 0;
	private readonly agent;
	private readonly node: string;
	private readonly attempt: number;

	constructor(
		private readonly run: Run,
		private readonly provenance: Provenance,
		private readonly pipeline: ContextPipeline,
		private readonly workFolder: string,
		private readonly sink: RecorderSink,
		agentName: string,
		/** Token usage of the nodes before this one, added to this node's. */
		private readonly usageBefore: TokenUsage | undefined,
		options: {
			/** Prices to estimate a cost the agent does not give (prices.ts). */
			prices: PriceTable;
			/** The model the agent's command line asks for, for an agent that never names one. */
			configuredModel?: string | undefined;
			/** The template's node the agent works on, and which attempt of it: its messages say so. */
			node?: string;
			attempt?: number;
		},
	) {
		this.agent = actor('agent', agentName);
		this.node = options.node ?? 'work';
		this.attempt = options.attempt ?? 1;
		this.account = new UsageAccount(options.prices);
		this.sessionModel = options.configuredModel;
	}

	record(event: AgentEvent): void {
		this.account.record(event);
		switch (event.kind) {
			case 'session': {
				this.provenance.provider = event.provider;
				if (event.model) {
					this.sessionModel = event.model;
					this.provenance.model = event.model;
				}
				this.provenance.parameters = {
					...(this.provenance.parameters as object | undefined),
					...(event.session_id ? { session_id: event.session_id } : {}),
					...(event.version ? { agent_version: event.version } : {}),
					...(event.tools ? { tools: event.tools } : {}),
				};
				this.sink.put([this.provenance]);
				break;
			}
			case 'tool_started': {
				this.toolCalls += 1;
				const parent = event.parent_call_id !== undefined ? this.calls.get(event.parent_call_id) : undefined;
				const invocation = newToolInvocation(
					this.agent,
					this.run,
					event.tool,
					cappedToolInput(this.scrubValue(event.args)),
					{
						read: unique(event.paths_read.map((p) => this.relative(p))),
						written: unique(event.paths_written.map((p) => this.relative(p))),
						resultSummary: 'running',
						...(parent ? { parent } : {}),
					},
				);
				// The agent's own id of the call: a desk tool call it made through the desk names the same one.
				invocation.external_ids = { ...invocation.external_ids, tool_use_id: event.call_id };
				this.open.set(event.call_id, invocation);
				this.calls.set(event.call_id, invocation);
				pushFrame(
					this.pipeline,
					'tool_call',
					cutGraphemes(this.sink.scrub(`${event.tool} ${briefArgs(event.args)}`.trim()), 200),
					{
						data: {
							tool_invocation: invocation.object_id,
							run: this.run.object_id,
							node: this.node,
							attempt: this.attempt,
						},
					},
				);
				this.writePipeline([invocation]);
				break;
			}
			case 'tool_finished': {
				const invocation = this.open.get(event.call_id);
				if (!invocation) {
					return;
				}
				this.open.delete(event.call_id);
				invocation.status = event.status;
				invocation.result_summary = cutGraphemes(this.sink.scrub(event.summary), 500);
				if (event.paths_read?.length || event.paths_written?.length) {
					const footprint = invocation.io_footprint ?? { paths_read: [], paths_written: [] };
					// A path is a file the call read or wrote, named once however often the agent said so.
					footprint.paths_read = unique([
						...footprint.paths_read,
						...(event.paths_read ?? []).map((p) => this.relative(p)),
					]);
					footprint.paths_written = unique([
						...footprint.paths_written,
						...(event.paths_written ?? []).map((p) => this.relative(p)),
					]);
					invocation.io_footprint = footprint;
				}
				if (event.output !== undefined && event.output !== '') {
					// A runaway command's output is cut, and says so: the run is kept whatever it printed.
					const kept = cappedText(this.sink.scrub(event.output), maxToolOutputBytes, 'output');
					invocation.artifacts = [this.sink.storeArtifact(Buffer.from(kept.text, 'utf8'), 'text/plain; charset=utf-8')];
				}
				invocation.updated_at = new Date().toISOString();
				this.sink.put([invocation]);
				break;
			}
			case 'message':
				if (event.text.trim() !== '') {
					this.messages.push(event.text);
					this.recordMessage(event.text);
				}
				break;
			case 'usage':
				if (event.model && this.provenance.model === 'unknown') {
					this.provenance.model = event.model;
				}
				break;
			case 'result':
				this.result = event;
				break;
			case 'plan':
				this.planSteps = event.steps.map((step) => this.sink.scrub(step));
				break;
			case 'unparsed':
				this.unparsed += 1;
				break;
			default:
				break;
		}
	}

	/**
	 * An agent_message frame (glossary: Conversation): the message as the person reads it, scrubbed;
	 * one longer than {@link inlineMessageChars} keeps its beginning in the frame and the whole (up to
	 * {@link maxMessageBytes}, cut with a mark past it) in the blob store.
	 */
	private recordMessage(said: string): void {
		const text = this.sink.scrub(said);
		const inline = cutGraphemes(text, inlineMessageChars);
		const data: AgentMessageData = { run: this.run.object_id, node: this.node, attempt: this.attempt, text: inline };
		if (inline.length < text.length) {
			const kept = cappedText(text, maxMessageBytes, 'message');
			data.chars = text.length;
			data.artifact = this.sink.storeArtifact(Buffer.from(kept.text, 'utf8'), 'text/plain; charset=utf-8');
		}
		const firstLine = text.trim().split('\n', 1)[0]!;
		pushFrame(this.pipeline, agentMessageKind, cutGraphemes(firstLine, 200), { data });
		this.writePipeline();
	}

	/**
	 * The pipeline's new frames stored: at once when the last write is a second old, else a second
	 * after it, and always when the node ends; a long run does not write its frames again per line,
	 * and the last message before a long silence still shows while the agent works.
	 */
	private writePipeline(alongside: ToolInvocation[] = []): void {
		const wait = this.pipelineWrittenAt + pipelineWriteMs - Date.now();
		if (wait <= 0) {
			clearTimeout(this.pipelineWrite);
			this.pipelineWrite = undefined;
			this.pipelineWrittenAt = Date.now();
			this.sink.put([...alongside, this.pipeline], this.run.object_id);
			return;
		}
		if (alongside.length > 0) {
			this.sink.put(alongside);
		}
		if (!this.pipelineWrite) {
			this.pipelineWrite = setTimeout(() => {
				this.pipelineWrite = undefined;
				try {
					this.writePipeline();
				} catch {
					// The store refused the write (it is closing): the frames stay in the pipeline, which the
					// node's end writes, or fails the run saying why.
				}
			}, wait);
			this.pipelineWrite.unref();
		}
	}

	/** Closes the node: calls never finished are errors, the token usage is written. */
	finish(exit: { code: number | null; signal: NodeJS.Signals | null }): NodeOutcome & { usage: TokenUsage } {
		clearTimeout(this.pipelineWrite);
		this.pipelineWrite = undefined;
		for (const invocation of this.open.values()) {
			invocation.status = 'error';
			invocation.result_summary = 'did not finish: the agent stopped first';
			invocation.updated_at = new Date().toISOString();
			this.sink.put([invocation]);
		}
		this.open.clear();
		const unnamed = this.sessionModel ?? this.result?.model ?? 'unknown';
		const node = this.account.usage(unnamed);
		const usage = addUsage(this.usageBefore, node);
		this.provenance.model = answeringModel(this.sessionModel, node, this.provenance.model);
		if (this.sessionModel !== undefined && this.sessionModel !== this.provenance.model) {
			// The model asked for ("auto") is kept beside the one that answered.
			this.provenance.parameters = {
				...(this.provenance.parameters as object | undefined),
				requested_model: this.sessionModel,
			};
		}
		setUsage(this.provenance, usage);
		for (const [callId, spent] of this.account.subagentUsage(unnamed)) {
			const invocation = this.calls.get(callId);
			if (invocation) {
				invocation.token_usage = spent;
				invocation.updated_at = new Date().toISOString();
				this.sink.put([invocation]);
			}
		}
		this.sink.put([this.provenance, this.pipeline]);
		const answer = this.sink.scrub(
			this.result?.text?.trim() ? this.result.text : (this.messages[this.messages.length - 1] ?? ''),
		);
		const exited = exit.code === 0;
		const reported = this.result ? this.result.ok : true;
		const ok = exited && reported;
		const error = ok
			? undefined
			: !exited
				? `the agent ${exit.signal ? `was stopped by ${exit.signal}` : `exited with ${exit.code}`}${answer ? `: ${cutGraphemes(answer.split('\n')[0]!, 200)}` : ''}`
				: `the agent reported an error${answer ? `: ${cutGraphemes(answer.split('\n')[0]!, 200)}` : ''}`;
		return {
			ok,
			answer,
			...(this.planSteps ? { planSteps: this.planSteps } : {}),
			toolCalls: this.toolCalls,
			unparsed: this.unparsed,
			...(error ? { error } : {}),
			usage,
		};
	}

	/** A path the agent named, relative to the work folder when it is inside it. */
	private relative(p: string): string {
		if (!path.isAbsolute(p)) {
			return p;
		}
		const rel = path.relative(this.workFolder, p);
		return rel.startsWith('..') ? p : rel.split(path.sep).join('/');
	}

	private scrubValue(value: unknown): unknown {
		// A call without arguments records {}; a null the agent sent stays null.
		const sent = value === undefined ? {} : value;
		const text = JSON.stringify(sent);
		const scrubbed = this.sink.scrub(text);
		return scrubbed === text ? sent : (JSON.parse(scrubbed) as unknown);
	}
}

function unique(paths: string[]): string[] {
	return [...new Set(paths)];
}

/**
 * The model that answered: the session's when the agent's report names it (a helper model or a
 * subagent's beside it does not make it another), else the one that spent the most (Gemini CLI's
 * "auto" names no model), else what was known.
 */
function answeringModel(session: string | undefined, usage: TokenUsage, known: string): string {
	const models = usage.models ?? [];
	if (session !== undefined && (models.length === 0 || models.some((m) => m.model === session))) {
		return session;
	}
	const busiest = [...models].sort(
		(a, b) => (b.cost_usd ?? 0) - (a.cost_usd ?? 0) || b.total_tokens - a.total_tokens,
	)[0];
	return busiest?.model ?? session ?? known;
}

function briefArgs(args: unknown): string {
	if (typeof args !== 'object' || args === null) {
		return '';
	}
	const record = args as Record<string, unknown>;
	for (const key of ['command', 'file_path', 'path', 'pattern', 'url', 'query']) {
		const value = record[key];
		if (typeof value === 'string') {
			return value.split('\n')[0]!;
		}
		if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
			return value.join(' ');
		}
	}
	return '';
}
