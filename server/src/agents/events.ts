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

export type AgentEvent =
	/** The agent said who it is: provider ("anthropic", "openai", …), model, session, tools. */
	| {
			kind: 'session';
			provider: string;
			model?: string;
			session_id?: string;
			tools?: string[];
			cwd?: string;
			version?: string;
	  }
	/** A tool call began. `call_id` pairs it with its `tool_finished`. */
	| {
			kind: 'tool_started';
			call_id: string;
			tool: string;
			args: unknown;
			paths_read: string[];
			paths_written: string[];
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
	/** Token usage of one turn or message, to be summed; `model` when the agent names it there. */
	| { kind: 'usage'; input_tokens: number; output_tokens: number; cost_usd?: number; model?: string }
	/**
	 * The run's end as the agent reported it. Totals here replace the summed `usage` events when
	 * present (Claude's result carries the whole run's usage and cost).
	 */
	| {
			kind: 'result';
			ok: boolean;
			text?: string;
			input_tokens?: number;
			output_tokens?: number;
			cost_usd?: number;
			turns?: number;
			duration_ms?: number;
			model?: string;
	  }
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
