import * as path from 'node:path';
import { actor, cutGraphemes, newToolInvocation, pushFrame, setTokenUsage } from '../ai/model';
import type { ArtifactRef, ContextPipeline, Provenance, Run, ToolInvocation } from '../ai/types';
import type { AgentEvent } from '../agents/events';

/** Where the recorder puts what it makes: AI objects, and blobs for long outputs. */
export interface RecorderSink {
	put(objects: Array<ToolInvocation | Provenance | ContextPipeline>): void;
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
 * Turns one node's agent events into AI objects as they arrive (glossary: ToolInvocation): a ToolInvocation per
 * tool call with its files read and written, the Provenance's model and token usage, and a
 * tool_call frame in the run's ContextPipeline for each call.
 */
export class AgentRecorder {
	private readonly open = new Map<string, ToolInvocation>();
	private readonly messages: string[] = [];
	private summed = { input: 0, output: 0, cost: 0, hasCost: false };
	private result: Extract<AgentEvent, { kind: 'result' }> | undefined;
	private planSteps: string[] | undefined;
	private toolCalls = 0;
	private pipelineWrittenAt = 0;
	private unparsed = 0;
	private readonly agent;

	constructor(
		private readonly run: Run,
		private readonly provenance: Provenance,
		private readonly pipeline: ContextPipeline,
		private readonly workFolder: string,
		private readonly sink: RecorderSink,
		agentName: string,
		/** Token usage of the nodes before this one, added to this node's. */
		private readonly usageBefore: { input: number; output: number; cost?: number },
	) {
		this.agent = actor('agent', agentName);
	}

	record(event: AgentEvent): void {
		switch (event.kind) {
			case 'session': {
				this.provenance.provider = event.provider;
				if (event.model) {
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
				const invocation = newToolInvocation(this.agent, this.run, event.tool, this.scrubValue(event.args), {
					read: event.paths_read.map((p) => this.relative(p)),
					written: event.paths_written.map((p) => this.relative(p)),
					resultSummary: 'running',
				});
				this.open.set(event.call_id, invocation);
				pushFrame(
					this.pipeline,
					'tool_call',
					cutGraphemes(this.sink.scrub(`${event.tool} ${briefArgs(event.args)}`.trim()), 200),
					{ data: { tool_invocation: invocation.object_id } },
				);
				// The pipeline is rewritten whole on each write: at most once a second while calls come in,
				// and always when the node ends, so a long run does not write its frames again per call.
				const now = Date.now();
				if (now - this.pipelineWrittenAt >= 1000) {
					this.pipelineWrittenAt = now;
					this.sink.put([invocation, this.pipeline]);
				} else {
					this.sink.put([invocation]);
				}
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
					footprint.paths_read.push(...(event.paths_read ?? []).map((p) => this.relative(p)));
					footprint.paths_written.push(...(event.paths_written ?? []).map((p) => this.relative(p)));
					invocation.io_footprint = footprint;
				}
				if (event.output !== undefined && event.output !== '') {
					invocation.artifacts = [
						this.sink.storeArtifact(Buffer.from(this.sink.scrub(event.output), 'utf8'), 'text/plain; charset=utf-8'),
					];
				}
				invocation.updated_at = new Date().toISOString();
				this.sink.put([invocation]);
				break;
			}
			case 'message':
				if (event.text.trim() !== '') {
					this.messages.push(event.text);
				}
				break;
			case 'usage':
				this.summed.input += event.input_tokens;
				this.summed.output += event.output_tokens;
				if (event.cost_usd !== undefined) {
					this.summed.cost += event.cost_usd;
					this.summed.hasCost = true;
				}
				if (event.model && this.provenance.model === 'unknown') {
					this.provenance.model = event.model;
				}
				break;
			case 'result':
				this.result = event;
				if (event.model && this.provenance.model === 'unknown') {
					this.provenance.model = event.model;
				}
				break;
			case 'plan':
				this.planSteps = event.steps.map((step) => this.sink.scrub(step));
				break;
			case 'unparsed':
				this.unparsed += 1;
				break;
		}
	}

	/** Closes the node: calls never finished are errors, the token usage is written. */
	finish(exit: {
		code: number | null;
		signal: NodeJS.Signals | null;
	}): NodeOutcome & { usage: { input: number; output: number; cost?: number } } {
		for (const invocation of this.open.values()) {
			invocation.status = 'error';
			invocation.result_summary = 'did not finish: the agent stopped first';
			invocation.updated_at = new Date().toISOString();
			this.sink.put([invocation]);
		}
		this.open.clear();
		const input = this.result?.input_tokens ?? this.summed.input;
		const output = this.result?.output_tokens ?? this.summed.output;
		const cost = this.result?.cost_usd ?? (this.summed.hasCost ? this.summed.cost : undefined);
		const usage = {
			input: this.usageBefore.input + input,
			output: this.usageBefore.output + output,
			...(cost !== undefined || this.usageBefore.cost !== undefined
				? { cost: (this.usageBefore.cost ?? 0) + (cost ?? 0) }
				: {}),
		};
		setTokenUsage(this.provenance, usage.input, usage.output, usage.cost);
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
