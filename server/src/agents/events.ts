/**
 * What an agent's output means, independent of which agent printed it. Adapters (one per output
 * format) turn lines into these events; the runner turns events into AI objects (glossary: AI objects):
 * ToolInvocation, Provenance with TokenUsage, the plan's steps and the PatchSet's rationale.
 */

export type AgentOutputFormat = 'claude-stream-json' | 'codex-json' | 'gemini-stream-json' | 'desk-jsonl' | 'text';
export const agentOutputFormats: readonly AgentOutputFormat[] = [
	'claude-stream-json',
	'codex-json',
	'gemini-stream-json',
	'desk-jsonl',
	'text',
];

/**
 * Tokens as an agent printed them, for one model call, a turn, a model or a whole run. Input counts
 * every token the model read (those read from or written to its prompt cache too), output every one
 * it wrote (its reasoning too); the parts are left out where the agent does not say.
 */
export interface TokenReport {
	input_tokens: number;
	output_tokens: number;
	cache_read_tokens?: number;
	cache_creation_tokens?: number;
	reasoning_tokens?: number;
	/** Counted by the agent as neither input nor output (Gemini CLI's thoughts and tool-use prompts). */
	other_tokens?: number;
	cost_usd?: number;
}

export type AgentEvent =
	/** The agent said who it is: provider ("anthropic", "openai", …), the model asked for, session, tools. */
	| {
			kind: 'session';
			provider: string;
			model?: string;
			session_id?: string;
			tools?: string[];
			cwd?: string;
			version?: string;
	  }
	/**
	 * A tool call began. `call_id` pairs it with its `tool_finished`; `parent_call_id` is the call
	 * (Claude Code's Task or Agent tool) that started the subagent making this one.
	 */
	| {
			kind: 'tool_started';
			call_id: string;
			tool: string;
			args: unknown;
			paths_read: string[];
			paths_written: string[];
			parent_call_id?: string;
	  }
	/** A tool call ended; `output` is the full result text when the agent printed it. */
	| {
			kind: 'tool_finished';
			call_id: string;
			status: 'ok' | 'error';
			summary: string;
			output?: string;
			paths_read?: string[];
			paths_written?: string[];
	  }
	/** Text the agent addressed to the person (an assistant message, a final answer). */
	| { kind: 'message'; text: string }
	/**
	 * Tokens one model call or turn spent, to be summed unless the agent's final report (a `result`
	 * with `usage` or `models`) says it all. A later usage of the same `message_id` replaces this one;
	 * `parent_call_id` is the call whose subagent spent it; `partial` marks an output count that was
	 * only what was known when the line was printed (at least that many).
	 */
	| ({
			kind: 'usage';
			model?: string;
			message_id?: string;
			parent_call_id?: string;
			partial?: true;
	  } & TokenReport)
	/**
	 * The run's end as the agent reported it. `usage` is its own total for the run and `models` its
	 * report per model; when it gives either, that is the run's usage rather than the sum of the
	 * `usage` events (Claude Code's per-model report counts its subagents and helper models too).
	 */
	| {
			kind: 'result';
			ok: boolean;
			text?: string;
			usage?: TokenReport;
			models?: Array<TokenReport & { model: string }>;
			turns?: number;
			duration_ms?: number;
			model?: string;
	  }
	/** The output ended before the agent's final report of its usage, or the format reports none: the usage counted is at least what was spent. */
	| { kind: 'usage_incomplete'; reason: string }
	/** Plan steps the agent stated explicitly (our own JSON lines can); otherwise the runner reads them from the final text. */
	| { kind: 'plan'; steps: string[] }
	/** A line that could not be understood: kept so nothing the agent printed is lost silently. */
	| { kind: 'unparsed'; line: string; reason: string };

/**
 * Reads one agent's output. Push whole lines (without the newline) as they arrive; end() when the
 * process has exited, to flush anything pending (a tool call never finished, say).
 */
export interface AgentOutputParser {
	push(line: string): AgentEvent[];
	end(): AgentEvent[];
}
