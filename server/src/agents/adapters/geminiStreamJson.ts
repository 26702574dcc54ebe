import type { AgentEvent } from '../events';
import {
	definedFields,
	modelWithMost,
	noOutputSummary,
	OpenToolCalls,
	optionalBoolean,
	optionalNumber,
	optionalRecord,
	optionalString,
	recordType,
	requiredString,
	summarizeOutput,
	toolCallPaths,
	unknownType,
	type JsonLinesHandler,
	type JsonRecord,
	type ToolPathRule,
} from './shared';

/**
 * Gemini CLI's `gemini --output-format stream-json`:
 * - `init` → session; `tool_use` → tool_started; `tool_result` → tool_finished.
 * - assistant `message` pieces (`delta: true`) are joined into one message per turn: the message
 *   is complete when something else happens (a tool call, the result, the end). The user's own
 *   messages are not the agent's output.
 * - `result` → result: the stats' tokens (input_tokens already include the cached ones), the
 *   model that used the most tokens, and the last assistant message as its text.
 * - `error` lines (warnings, or errors the result will report) and `retry`/`loop_detected` are skipped.
 */
export class GeminiStreamJson implements JsonLinesHandler {
	private readonly openCalls = new OpenToolCalls();
	/** The pieces of the assistant message being streamed. */
	private pieces: string[] = [];
	private lastAssistantMessage: string | undefined;
	/** The last error line of severity "error", for a failed result that does not say why. */
	private lastError: string | undefined;

	record(record: JsonRecord): AgentEvent[] {
		const type = recordType(record);
		switch (type) {
			case 'init':
				return [
					definedFields({
						kind: 'session',
						provider: 'google',
						model: optionalString(record, 'model'),
						session_id: optionalString(record, 'session_id'),
					}),
				];
			case 'message':
				return this.message(record);
			case 'tool_use': {
				const tool = requiredString(record, 'tool_name');
				const callId = requiredString(record, 'tool_id');
				const args = optionalRecord(record, 'parameters') ?? {};
				const events = this.finishMessage();
				this.openCalls.started(callId);
				events.push({
					kind: 'tool_started',
					call_id: callId,
					tool,
					args,
					...toolCallPaths(geminiToolPaths, tool, args),
				});
				return events;
			}
			case 'tool_result':
				return this.toolResult(record);
			case 'error': {
				const message = optionalString(record, 'message');
				if (optionalString(record, 'severity') === 'error' && message !== undefined) {
					this.lastError = message;
				}
				return [];
			}
			case 'result':
				return this.result(record);
			case 'retry':
			case 'loop_detected':
				return [];
			default:
				throw unknownType(type);
		}
	}

	end(): AgentEvent[] {
		return [...this.finishMessage(), ...this.openCalls.closeUnfinished()];
	}

	private message(record: JsonRecord): AgentEvent[] {
		const role = requiredString(record, 'role');
		const content = requiredString(record, 'content');
		const delta = optionalBoolean(record, 'delta') ?? false;
		if (role !== 'assistant') {
			return this.finishMessage();
		}
		if (delta) {
			this.pieces.push(content);
			return [];
		}
		// A whole message: it ends the streamed one before it and stands alone.
		const events = this.finishMessage();
		this.pieces.push(content);
		return [...events, ...this.finishMessage()];
	}

	/** The streamed message, if any, as one event. */
	private finishMessage(): AgentEvent[] {
		const text = this.pieces.join('');
		this.pieces = [];
		if (text.trim() === '') {
			return [];
		}
		this.lastAssistantMessage = text;
		return [{ kind: 'message', text }];
	}

	private toolResult(record: JsonRecord): AgentEvent[] {
		const callId = requiredString(record, 'tool_id');
		const status = requiredString(record, 'status') === 'success' ? 'ok' : 'error';
		const error = optionalRecord(record, 'error');
		const output =
			optionalString(record, 'output') ?? (error !== undefined ? optionalString(error, 'message') : undefined) ?? '';
		const events = this.finishMessage();
		this.openCalls.finished(callId);
		events.push(
			definedFields({
				kind: 'tool_finished',
				call_id: callId,
				status,
				summary: summarizeOutput(output, status === 'ok' ? noOutputSummary : 'failed'),
				output: output === '' ? undefined : output,
			}),
		);
		return events;
	}

	private result(record: JsonRecord): AgentEvent[] {
		const ok = requiredString(record, 'status') === 'success';
		const error = optionalRecord(record, 'error');
		const errorMessage = error !== undefined ? optionalString(error, 'message') : undefined;
		const stats = optionalRecord(record, 'stats');
		const inputTokens = stats !== undefined ? optionalNumber(stats, 'input_tokens') : undefined;
		const outputTokens = stats !== undefined ? optionalNumber(stats, 'output_tokens') : undefined;
		const durationMs = stats !== undefined ? optionalNumber(stats, 'duration_ms') : undefined;
		// The model that used the most tokens: Gemini CLI routes small requests to a lighter model.
		const model = modelWithMost(stats !== undefined ? optionalRecord(stats, 'models') : undefined, 'total_tokens');
		const events = this.finishMessage();
		events.push(
			definedFields({
				kind: 'result',
				ok,
				text: ok ? this.lastAssistantMessage : (errorMessage ?? this.lastError ?? this.lastAssistantMessage),
				input_tokens: inputTokens,
				output_tokens: outputTokens,
				duration_ms: durationMs,
				model,
			}),
		);
		return events;
	}
}

/** Where the input of Gemini CLI's file tools names the file (a shell's files are not known). */
const geminiToolPaths: ReadonlyMap<string, ToolPathRule> = new Map<string, ToolPathRule>([
	['read_file', { access: 'read', fields: ['file_path', 'absolute_path', 'path'] }],
	['list_directory', { access: 'read', fields: ['dir_path', 'path'] }],
	['glob', { access: 'read', fields: ['dir_path', 'path'] }],
	['search_file_content', { access: 'read', fields: ['dir_path', 'path'] }],
	['grep_search', { access: 'read', fields: ['dir_path', 'path'] }],
	['write_file', { access: 'written', fields: ['file_path'] }],
	['replace', { access: 'written', fields: ['file_path'] }],
]);
