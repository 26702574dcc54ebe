import type { AgentEvent, TokenReport } from '../events';
import {
	contentBlocksText,
	definedFields,
	isEmptyReport,
	isRecord,
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
	tokenReport,
	toolCallPaths,
	unknownType,
	type JsonLinesHandler,
	type JsonRecord,
	type ToolPathRule,
} from './shared';

/**
 * Claude Code's `claude -p --output-format stream-json --verbose`, with or without
 * `--include-partial-messages`:
 * - `system/init` → session; other system lines (hooks, status, thinking tokens, a subagent's
 *   `task_*` progress) and `rate_limit_event` are skipped.
 * - `assistant` → a message per text block, tool_started per tool_use block, and the message's usage
 *   once per message id (Claude repeats a message's usage on each of its content-block lines), its
 *   output count only what was known when the line was printed. A line with `parent_tool_use_id`
 *   is a subagent's, started by that Task or Agent call: its calls name it as their parent, its
 *   usage is attributed to it, and its text is not the run's answer.
 * - `stream_event`s (partial messages) are skipped but for the usage of `message_delta`, the final
 *   count of the message `message_start` began, which replaces the one of its assistant lines.
 * - `user` tool_result blocks → tool_finished; a user's own text is not the agent's output.
 * - `result` → result with the run's totals (`usage`: the main agent's tokens only, and the whole
 *   cost) and the report per model (`modelUsage`: subagents and the helper model too). A result whose
 *   usage is all zero (an interrupted run, a resumed session's first turn) reports nothing.
 * At end(): calls left open finish as errors, and when usage was spent after the last result that
 * reported it (or no result came), the usage is incomplete.
 * Keys are read from the parsed object, never from the line's prefix: since 2.1.2xx the result line
 * does not begin with "type".
 */
export class ClaudeStreamJson implements JsonLinesHandler {
	private readonly openCalls = new OpenToolCalls();
	private readonly messagesCounted = new Set<string>();
	/** The session's model: the main agent's, whose thinking the result's usage counts. */
	private sessionModel: string | undefined;
	/** The message partial messages are streaming: its id, model and usage at its start. */
	private streaming: { id: string; model?: string; usage: JsonRecord } | undefined;
	/** Something was printed that spends tokens, with no final report after it. */
	private unreported = false;

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
				return this.streamEvent(record);
			case 'rate_limit_event':
				return [];
			default:
				throw unknownType(type);
		}
	}

	end(): AgentEvent[] {
		const events = this.openCalls.closeUnfinished();
		if (this.unreported) {
			events.push({
				kind: 'usage_incomplete',
				reason: 'Claude Code printed no result reporting its usage after its last message (cut, killed or interrupted)',
			});
		}
		return events;
	}

	private session(record: JsonRecord): AgentEvent {
		const event = definedFields({
			kind: 'session',
			provider: 'anthropic',
			model: optionalString(record, 'model'),
			session_id: optionalString(record, 'session_id'),
			tools: optionalStringArray(record, 'tools'),
			cwd: optionalString(record, 'cwd'),
			version: optionalString(record, 'claude_code_version'),
		});
		this.sessionModel = optionalString(record, 'model') ?? this.sessionModel;
		this.unreported = true;
		return event;
	}

	private assistant(record: JsonRecord): AgentEvent[] {
		const message = requiredRecord(record, 'message');
		const parent = optionalString(record, 'parent_tool_use_id');
		const events: AgentEvent[] = [];
		for (const block of requiredRecordArray(message, 'content')) {
			const type = requiredString(block, 'type');
			if (type === 'text') {
				const text = requiredString(block, 'text');
				// A subagent's text is its report to the agent that started it, not the run's answer.
				if (text.trim() !== '' && parent === undefined) {
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
					...(parent !== undefined ? { parent_call_id: parent } : {}),
				});
			}
			// Thinking blocks (often empty, with a signature) and other kinds are not output to keep.
		}
		const usage = this.usageOnce(message, parent);
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
		this.unreported = true;
		return events;
	}

	/**
	 * The message's usage unless an earlier line of the same message was counted. The output tokens
	 * here are what was known when the line was printed, often too few: the result's report, or the
	 * message's `message_delta`, gives the final count.
	 */
	private usageOnce(message: JsonRecord, parent: string | undefined): AgentEvent | undefined {
		const usage = optionalRecord(message, 'usage');
		const messageId = optionalString(message, 'id');
		const model = optionalString(message, 'model');
		// An API error's banner is a message of the model "<synthetic>": no model call, no tokens.
		if (
			usage === undefined ||
			model === '<synthetic>' ||
			(messageId !== undefined && this.messagesCounted.has(messageId))
		) {
			return undefined;
		}
		return definedFields({
			kind: 'usage',
			...claudeReport(usage),
			model,
			message_id: messageId,
			parent_call_id: parent,
			partial: true,
		});
	}

	/** A partial message's start (its id and usage so far) and its final usage at `message_delta`. */
	private streamEvent(record: JsonRecord): AgentEvent[] {
		const event = optionalRecord(record, 'event');
		const type = event !== undefined ? optionalString(event, 'type') : undefined;
		if (event === undefined || type === undefined) {
			return [];
		}
		if (type === 'message_start') {
			const message = optionalRecord(event, 'message');
			const id = message !== undefined ? optionalString(message, 'id') : undefined;
			this.streaming =
				message !== undefined && id !== undefined
					? { id, model: optionalString(message, 'model'), usage: optionalRecord(message, 'usage') ?? {} }
					: undefined;
			return [];
		}
		const delta = type === 'message_delta' ? optionalRecord(event, 'usage') : undefined;
		if (delta === undefined || this.streaming === undefined || this.streaming.model === '<synthetic>') {
			return [];
		}
		// A delta may give only the output count: the input side is the one the message started with.
		const usage = claudeReport({ ...this.streaming.usage, ...delta });
		const parent = optionalString(record, 'parent_tool_use_id');
		this.messagesCounted.add(this.streaming.id);
		this.unreported = true;
		return [
			definedFields({
				kind: 'usage',
				...usage,
				model: this.streaming.model,
				message_id: this.streaming.id,
				parent_call_id: parent,
			}),
		];
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
		const cost = optionalNumber(record, 'total_cost_usd');
		const totals = usage !== undefined ? tokenReport({ ...claudeReport(usage), cost_usd: cost }) : undefined;
		const perModel = optionalRecord(record, 'modelUsage');
		const models = this.modelReports(perModel, totals?.reasoning_tokens);
		const reported = (totals !== undefined && !isEmptyReport(totals)) || models !== undefined;
		if (reported) {
			this.unreported = false;
		}
		return definedFields({
			kind: 'result',
			ok: subtype === 'success' && !isError,
			text:
				optionalString(record, 'result') ?? (errors !== undefined && errors.length > 0 ? errors.join('\n') : undefined),
			usage: totals !== undefined && !isEmptyReport(totals) ? totals : undefined,
			models,
			turns: optionalNumber(record, 'num_turns'),
			duration_ms: optionalNumber(record, 'duration_ms'),
			// The model that cost the most, not simply the first key: Claude Code lists a helper model
			// (claude-haiku-…) first when it used one.
			model: modelWithMost(perModel, 'costUSD'),
		});
	}

	/**
	 * `modelUsage`: each model's tokens and cost, the main agent's, its subagents' and the helper
	 * model's. Its counts have no thinking of their own: the result's (the main agent's) is the
	 * session model's. Undefined when no model spent anything.
	 */
	private modelReports(
		perModel: JsonRecord | undefined,
		mainReasoning: number | undefined,
	): Array<TokenReport & { model: string }> | undefined {
		const models: Array<TokenReport & { model: string }> = [];
		for (const [model, value] of Object.entries(perModel ?? {})) {
			// A model's entry of another shape is left out rather than losing the whole result with it.
			if (!isRecord(value)) {
				continue;
			}
			const fresh = optionalNumber(value, 'inputTokens') ?? 0;
			const cacheRead = optionalNumber(value, 'cacheReadInputTokens');
			const cacheCreation = optionalNumber(value, 'cacheCreationInputTokens');
			const report = tokenReport({
				input_tokens: fresh + (cacheRead ?? 0) + (cacheCreation ?? 0),
				output_tokens: optionalNumber(value, 'outputTokens') ?? 0,
				cache_read_tokens: cacheRead,
				cache_creation_tokens: cacheCreation,
				reasoning_tokens: model === this.sessionModel ? mainReasoning : undefined,
				cost_usd: optionalNumber(value, 'costUSD'),
			});
			if (!isEmptyReport(report)) {
				models.push({ model, ...report });
			}
		}
		return models.length > 0 ? models : undefined;
	}
}

/**
 * Anthropic's usage record as a report: input is every input token the model read (fresh, written
 * to the cache and read from it), thinking is part of the output.
 */
function claudeReport(usage: JsonRecord): TokenReport {
	const cacheCreation = optionalNumber(usage, 'cache_creation_input_tokens');
	const cacheRead = optionalNumber(usage, 'cache_read_input_tokens');
	const details = optionalRecord(usage, 'output_tokens_details');
	return tokenReport({
		input_tokens: (optionalNumber(usage, 'input_tokens') ?? 0) + (cacheCreation ?? 0) + (cacheRead ?? 0),
		output_tokens: optionalNumber(usage, 'output_tokens') ?? 0,
		cache_read_tokens: cacheRead,
		cache_creation_tokens: cacheCreation,
		reasoning_tokens: details !== undefined ? optionalNumber(details, 'thinking_tokens') : undefined,
	});
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
