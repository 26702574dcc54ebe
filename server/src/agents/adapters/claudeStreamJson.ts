import type { AgentEvent } from '../events';
import {
	contentBlocksText,
	definedFields,
	modelWithMost,
	noOutputSummary,
	OpenToolCalls,
	optionalBoolean,
	optionalNumber,
	optionalRecord,
	optionalString,
	optionalStringArray,
	recordType,
	requiredRecord,
	requiredRecordArray,
	requiredString,
	summarizeOutput,
	toolCallPaths,
	unknownType,
	type JsonLinesHandler,
	type JsonRecord,
	type ToolPathRule,
} from './shared';

/**
 * Claude Code's `claude -p --output-format stream-json --verbose`, with or without
 * `--include-partial-messages`:
 * - `system/init` → session; other system lines (hooks, status, thinking tokens), `rate_limit_event`
 *   and the partial-message `stream_event`s are skipped: the whole `assistant` message follows them.
 * - `assistant` → a message per text block, tool_started per tool_use block, and the message's usage
 *   once per message id (Claude repeats a message's usage on each of its content-block lines).
 * - `user` tool_result blocks → tool_finished; a user's own text is not the agent's output.
 * - `result` → result with the run's totals and cost.
 * Keys are read from the parsed object, never from the line's prefix: since 2.1.2xx the result line
 * does not begin with "type".
 */
export class ClaudeStreamJson implements JsonLinesHandler {
	private readonly openCalls = new OpenToolCalls();
	private readonly messagesCounted = new Set<string>();

	record(record: JsonRecord): AgentEvent[] {
		const type = recordType(record);
		switch (type) {
			case 'system':
				return optionalString(record, 'subtype') === 'init' ? [this.session(record)] : [];
			case 'assistant':
				return this.assistant(record);
			case 'user':
				return this.user(record);
			case 'result':
				return [this.result(record)];
			case 'stream_event':
			case 'rate_limit_event':
				return [];
			default:
				throw unknownType(type);
		}
	}

	end(): AgentEvent[] {
		return this.openCalls.closeUnfinished();
	}

	private session(record: JsonRecord): AgentEvent {
		return definedFields({
			kind: 'session',
			provider: 'anthropic',
			model: optionalString(record, 'model'),
			session_id: optionalString(record, 'session_id'),
			tools: optionalStringArray(record, 'tools'),
			cwd: optionalString(record, 'cwd'),
			version: optionalString(record, 'claude_code_version'),
		});
	}

	private assistant(record: JsonRecord): AgentEvent[] {
		const message = requiredRecord(record, 'message');
		const events: AgentEvent[] = [];
		for (const block of requiredRecordArray(message, 'content')) {
			const type = requiredString(block, 'type');
			if (type === 'text') {
				const text = requiredString(block, 'text');
				if (text.trim() !== '') {
					events.push({ kind: 'message', text });
				}
			} else if (type === 'tool_use') {
				const tool = requiredString(block, 'name');
				const args = block['input'] ?? {};
				events.push({
					kind: 'tool_started',
					call_id: requiredString(block, 'id'),
					tool,
					args,
					...toolCallPaths(claudeToolPaths, tool, args),
				});
			}
			// Thinking blocks (often empty, with a signature) and other kinds are not output to keep.
		}
		const usage = this.usageOnce(message);
		// State changes only once the whole line has been read: a malformed line leaves none behind.
		for (const event of events) {
			if (event.kind === 'tool_started') {
				this.openCalls.started(event.call_id);
			}
		}
		if (usage !== undefined) {
			const messageId = optionalString(message, 'id');
			if (messageId !== undefined) {
				this.messagesCounted.add(messageId);
			}
			events.push(usage);
		}
		return events;
	}

	/**
	 * The message's usage unless an earlier line of the same message was counted. The output tokens
	 * here are what was known when the line was printed, often too few; the result's totals replace them.
	 */
	private usageOnce(message: JsonRecord): AgentEvent | undefined {
		const usage = optionalRecord(message, 'usage');
		const messageId = optionalString(message, 'id');
		if (usage === undefined || (messageId !== undefined && this.messagesCounted.has(messageId))) {
			return undefined;
		}
		return definedFields({
			kind: 'usage',
			input_tokens: claudeInputTokens(usage),
			output_tokens: optionalNumber(usage, 'output_tokens') ?? 0,
			model: optionalString(message, 'model'),
		});
	}

	private user(record: JsonRecord): AgentEvent[] {
		const message = requiredRecord(record, 'message');
		if (typeof message['content'] === 'string') {
			return [];
		}
		const events: AgentEvent[] = [];
		for (const block of requiredRecordArray(message, 'content')) {
			if (block['type'] !== 'tool_result') {
				continue;
			}
			const callId = requiredString(block, 'tool_use_id');
			const status = optionalBoolean(block, 'is_error') === true ? 'error' : 'ok';
			const output = toolResultText(block);
			events.push(
				definedFields({
					kind: 'tool_finished',
					call_id: callId,
					status,
					summary: summarizeOutput(output, noOutputSummary),
					output: output === '' ? undefined : output,
				}),
			);
		}
		for (const event of events) {
			if (event.kind === 'tool_finished') {
				this.openCalls.finished(event.call_id);
			}
		}
		return events;
	}

	private result(record: JsonRecord): AgentEvent {
		const subtype = requiredString(record, 'subtype');
		const isError = optionalBoolean(record, 'is_error') ?? false;
		const usage = optionalRecord(record, 'usage');
		const errors = optionalStringArray(record, 'errors');
		return definedFields({
			kind: 'result',
			ok: subtype === 'success' && !isError,
			text:
				optionalString(record, 'result') ?? (errors !== undefined && errors.length > 0 ? errors.join('\n') : undefined),
			input_tokens: usage === undefined ? undefined : claudeInputTokens(usage),
			output_tokens: usage === undefined ? undefined : optionalNumber(usage, 'output_tokens'),
			cost_usd: optionalNumber(record, 'total_cost_usd'),
			turns: optionalNumber(record, 'num_turns'),
			duration_ms: optionalNumber(record, 'duration_ms'),
			// The model that cost the most, not simply the first key: Claude Code lists a helper model
			// (claude-haiku-…) first when it used one.
			model: modelWithMost(optionalRecord(record, 'modelUsage'), 'costUSD'),
		});
	}
}

/** Every input token the model read: fresh, written to the cache and read from it. */
function claudeInputTokens(usage: JsonRecord): number {
	return (
		(optionalNumber(usage, 'input_tokens') ?? 0) +
		(optionalNumber(usage, 'cache_creation_input_tokens') ?? 0) +
		(optionalNumber(usage, 'cache_read_input_tokens') ?? 0)
	);
}

/** A tool_result's content: a string, or blocks (text, tool references, images). */
function toolResultText(block: JsonRecord): string {
	const content = block['content'];
	if (content === undefined || content === null) {
		return '';
	}
	return typeof content === 'string' ? content : contentBlocksText(requiredRecordArray(block, 'content'));
}

/** Where the input of Claude Code's file tools names the file (a shell's files are not known). */
const claudeToolPaths: ReadonlyMap<string, ToolPathRule> = new Map<string, ToolPathRule>([
	['Read', { access: 'read', fields: ['file_path'] }],
	['NotebookRead', { access: 'read', fields: ['notebook_path'] }],
	['Glob', { access: 'read', fields: ['path'] }],
	['Grep', { access: 'read', fields: ['path'] }],
	['LS', { access: 'read', fields: ['path'] }],
	['Write', { access: 'written', fields: ['file_path'] }],
	['Edit', { access: 'written', fields: ['file_path'] }],
	['MultiEdit', { access: 'written', fields: ['file_path'] }],
	['NotebookEdit', { access: 'written', fields: ['notebook_path'] }],
]);
