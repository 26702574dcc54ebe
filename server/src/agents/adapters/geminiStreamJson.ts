import type { AgentEvent, TokenReport } from '../events';
import {
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
	recordType,
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
 * Gemini CLI's `gemini --output-format stream-json`:
 * - `init` → session (its model is the one asked for: "auto" when Gemini CLI routes each request);
 *   `tool_use` → tool_started; `tool_result` → tool_finished.
 * - assistant `message` pieces (`delta: true`) are joined into one message per turn: the message
 *   is complete when something else happens (a tool call, the result, the end). The user's own
 *   messages are not the agent's output.
 * - `result` → result: the stats' totals and the report per model (`stats.models`: the models
 *   that answered), input_tokens already including the cached ones, and what the total counts as
 *   neither input nor output (thoughts, tool-use prompts) as other tokens; the model that used the
 *   most tokens, and the last assistant message as its text.
 * - `error` lines (warnings, or errors the result will report) and `retry`/`loop_detected` are skipped.
 * At end(): a streamed message is finished and calls left open finish as errors. Gemini CLI reports
 * its usage only in its result: an output cut before it has spent what is unknown.
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
		const perModel = stats !== undefined ? optionalRecord(stats, 'models') : undefined;
		const models = Object.entries(perModel ?? {}).flatMap(([model, value]) => {
			// A model's entry of another shape is left out rather than losing the whole result with it.
			if (!isRecord(value)) {
				return [];
			}
			const report = geminiReport(value);
			return report !== undefined && !isEmptyReport(report) ? [{ model, ...report }] : [];
		});
		const totals = stats !== undefined ? geminiReport(stats) : undefined;
		const events = this.finishMessage();
		events.push(
			definedFields({
				kind: 'result',
				ok,
				text: ok ? this.lastAssistantMessage : (errorMessage ?? this.lastError ?? this.lastAssistantMessage),
				usage: totals !== undefined && !isEmptyReport(totals) ? totals : undefined,
				models: models.length > 0 ? models : undefined,
				duration_ms: stats !== undefined ? optionalNumber(stats, 'duration_ms') : undefined,
				// The model that used the most tokens: Gemini CLI routes small requests to a lighter model.
				model: modelWithMost(perModel, 'total_tokens'),
			}),
		);
		return events;
	}
}

/**
 * Gemini CLI's stats (the run's, or one model's) as a report: `input_tokens` counts the cached ones
 * (`cached`), and what `total_tokens` counts besides input and output (thoughts, tool-use prompts)
 * is other. Undefined without input and output counts.
 */
function geminiReport(stats: JsonRecord): TokenReport | undefined {
	const input = optionalNumber(stats, 'input_tokens');
	const output = optionalNumber(stats, 'output_tokens');
	if (input === undefined && output === undefined) {
		return undefined;
	}
	const total = optionalNumber(stats, 'total_tokens');
	const other = total !== undefined ? total - (input ?? 0) - (output ?? 0) : undefined;
	return tokenReport({
		input_tokens: input ?? 0,
		output_tokens: output ?? 0,
		cache_read_tokens: optionalNumber(stats, 'cached'),
		other_tokens: other !== undefined && other > 0 ? other : undefined,
	});
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
