import type { AgentEvent } from '../events';
import {
	contentBlocksText,
	definedFields,
	isRecord,
	MalformedLine,
	noOutputSummary,
	OpenToolCalls,
	optionalNumber,
	optionalRecord,
	optionalString,
	optionalStringArray,
	recordType,
	requiredNumber,
	requiredRecord,
	requiredRecordArray,
	requiredString,
	shorten,
	summarizeOutput,
	tokenReport,
	unknownType,
	type JsonLinesHandler,
	type JsonRecord,
} from './shared';

type ItemPhase = 'started' | 'updated' | 'completed';

/**
 * Codex's `codex exec --json`:
 * - `thread.started` → session; `turn.completed` → the turn's usage (Codex's input_tokens already
 *   include the cached ones, its output_tokens the reasoning ones); `turn.failed` → result ok false
 *   (with the usage newer versions give it); a `turn.progress` usage is the running turn's so far,
 *   replaced by its `turn.completed`.
 * - items: `command_execution` is the tool "shell", `file_change` "apply_patch" (it writes the
 *   changed paths, each once), `mcp_tool_call` "mcp__<server>__<tool>", `web_search` "web_search",
 *   `collab_tool_call` its tool (spawn_agent, send_input, wait, close_agent); an item seen only
 *   completed gets both its events then. `agent_message` → message, `todo_list` → plan,
 *   `reasoning` and `plan` are skipped.
 * - A top-level `error` is not the end: Codex prints "Reconnecting... 1/5" as an error and then
 *   goes on. It fails the run only if no turn completed after it.
 * At end(): calls left open finish as errors; a turn started and never ended makes the usage
 * incomplete; without a failure a completed turn makes the result ok with the last agent message as
 * its text and the turns counted.
 */
export class CodexJson implements JsonLinesHandler {
	private readonly openCalls = new OpenToolCalls();
	/** The paths each open call said it writes when it started: its end reports only others. */
	private readonly writesAtStart = new Map<string, string[]>();
	private turnsStarted = 0;
	private turnsCompleted = 0;
	private turnOpen = false;
	private failed = false;
	/** The last top-level error not followed by a completed turn. */
	private pendingError: string | undefined;
	private lastAgentMessage: string | undefined;
	private lastPlan: string | undefined;

	record(record: JsonRecord): AgentEvent[] {
		const type = recordType(record);
		switch (type) {
			case 'thread.started':
				return [{ kind: 'session', provider: 'openai', session_id: requiredString(record, 'thread_id') }];
			case 'turn.started':
				this.turnsStarted++;
				this.turnOpen = true;
				return [];
			case 'turn.progress': {
				const usage = optionalRecord(record, 'usage');
				return usage !== undefined ? [this.turnUsage(usage)] : [];
			}
			case 'turn.completed':
				return [this.turnCompleted(record)];
			case 'turn.failed':
				return this.turnFailed(record);
			case 'error':
				// Lenient on purpose: a failure is kept even when its message is missing.
				this.pendingError = optionalString(record, 'message') ?? 'error';
				return [];
			case 'item.started':
				return this.item(requiredRecord(record, 'item'), 'started');
			case 'item.updated':
				return this.item(requiredRecord(record, 'item'), 'updated');
			case 'item.completed':
				return this.item(requiredRecord(record, 'item'), 'completed');
			case 'item.plan.delta':
			case 'request_user_input':
				// A plan's text as it streams, and a question exec cannot ask anyone: nothing to record.
				return [];
			default:
				throw unknownType(type);
		}
	}

	end(): AgentEvent[] {
		const events = this.openCalls.closeUnfinished();
		if (this.turnOpen) {
			events.push({
				kind: 'usage_incomplete',
				reason: `Codex's turn ${this.turnsStarted} never reported its usage (turn.completed or turn.failed)`,
			});
		}
		if (this.failed) {
			return events;
		}
		if (this.pendingError !== undefined) {
			events.push({ kind: 'result', ok: false, text: this.pendingError });
		} else if (this.turnsCompleted > 0) {
			events.push(definedFields({ kind: 'result', ok: true, text: this.lastAgentMessage, turns: this.turnsCompleted }));
		}
		return events;
	}

	/** The usage of the turn running now (each turn's replaces what its progress said). */
	private turnUsage(usage: JsonRecord): AgentEvent {
		const cacheWrite = optionalNumber(usage, 'cache_write_input_tokens');
		return definedFields({
			kind: 'usage',
			...tokenReport({
				input_tokens: requiredNumber(usage, 'input_tokens'),
				output_tokens: requiredNumber(usage, 'output_tokens'),
				cache_read_tokens: optionalNumber(usage, 'cached_input_tokens'),
				// Older versions do not have it; newer ones print 0 where the model wrote no cache.
				cache_creation_tokens: cacheWrite,
				reasoning_tokens: optionalNumber(usage, 'reasoning_output_tokens'),
			}),
			message_id: `turn-${Math.max(this.turnsStarted, 1)}`,
		});
	}

	private turnCompleted(record: JsonRecord): AgentEvent {
		const event = this.turnUsage(requiredRecord(record, 'usage'));
		this.turnsCompleted++;
		this.turnOpen = false;
		this.pendingError = undefined;
		return event;
	}

	private turnFailed(record: JsonRecord): AgentEvent[] {
		// Lenient like 'error': the failure counts even when its message is missing or odd.
		const error = record['error'];
		const message = isRecord(error) && typeof error['message'] === 'string' ? error['message'] : undefined;
		const usage = optionalRecord(record, 'usage');
		const events = usage !== undefined ? [this.turnUsage(usage)] : [];
		this.turnOpen = false;
		if (this.failed) {
			return events;
		}
		this.failed = true;
		return [...events, { kind: 'result', ok: false, text: message ?? this.pendingError ?? 'turn failed' }];
	}

	private item(item: JsonRecord, phase: ItemPhase): AgentEvent[] {
		const id = requiredString(item, 'id');
		const type = requiredString(item, 'type');
		switch (type) {
			case 'command_execution':
				return this.toolItem(id, phase, 'shell', { command: requiredString(item, 'command') }, [], () =>
					commandOutcome(item),
				);
			case 'file_change': {
				const changes = requiredRecordArray(item, 'changes').map((change) => ({
					path: requiredString(change, 'path'),
					kind: optionalString(change, 'kind') ?? 'update',
				}));
				const written = [...new Set(changes.map((change) => change.path))];
				return this.toolItem(id, phase, 'apply_patch', { changes }, written, () => ({
					status: statusIsSuccess(item) ? 'ok' : 'error',
					summary: shorten(changes.map((change) => `${change.kind} ${change.path}`).join(', ')) || noOutputSummary,
				}));
			}
			case 'mcp_tool_call': {
				const tool = `mcp__${requiredString(item, 'server')}__${requiredString(item, 'tool')}`;
				return this.toolItem(id, phase, tool, item['arguments'] ?? {}, [], () => mcpOutcome(item));
			}
			case 'web_search': {
				const query = optionalString(item, 'query') ?? '';
				return this.toolItem(id, phase, 'web_search', { query }, [], () => ({
					status: 'ok',
					summary: shorten(query) || noOutputSummary,
				}));
			}
			case 'collab_tool_call': {
				const tool = requiredString(item, 'tool');
				const prompt = optionalString(item, 'prompt');
				const receivers = optionalStringArray(item, 'receiver_thread_ids');
				const args = {
					...(prompt !== undefined ? { prompt } : {}),
					...(receivers !== undefined ? { receiver_thread_ids: receivers } : {}),
				};
				return this.toolItem(id, phase, tool, args, [], () => ({
					status: optionalString(item, 'status') === 'failed' ? 'error' : 'ok',
					summary: shorten(prompt ?? '') || noOutputSummary,
				}));
			}
			case 'agent_message': {
				if (phase !== 'completed') {
					return [];
				}
				const text = requiredString(item, 'text');
				this.lastAgentMessage = text;
				return [{ kind: 'message', text }];
			}
			case 'todo_list': {
				const steps = requiredRecordArray(item, 'items').map((step) => requiredString(step, 'text'));
				const key = JSON.stringify(steps);
				if (key === this.lastPlan) {
					return [];
				}
				this.lastPlan = key;
				return [{ kind: 'plan', steps }];
			}
			case 'reasoning':
			case 'plan':
			case 'error':
				// Reasoning summaries are not addressed to the person; an error item is a warning the run survived.
				return [];
			default:
				throw new MalformedLine(`unknown item type '${type}'`);
		}
	}

	/**
	 * A tool item's events: tool_started when it starts (or when it completes unseen), tool_finished
	 * when it completes. `outcome` reads the completed item, before any state changes.
	 */
	private toolItem(
		id: string,
		phase: ItemPhase,
		tool: string,
		args: unknown,
		written: string[],
		outcome: () => Outcome,
	): AgentEvent[] {
		if (phase === 'updated') {
			return [];
		}
		const started: AgentEvent = {
			kind: 'tool_started',
			call_id: id,
			tool,
			args,
			paths_read: [],
			paths_written: written,
		};
		if (phase === 'started') {
			if (this.openCalls.isOpen(id)) {
				return [];
			}
			this.openCalls.started(id);
			this.writesAtStart.set(id, written);
			return [started];
		}
		const { status, summary, output } = outcome();
		const wasOpen = this.openCalls.isOpen(id);
		// Each path once: those its start named are not repeated at its end.
		const before = new Set(wasOpen ? (this.writesAtStart.get(id) ?? []) : written);
		const writtenLater = written.filter((path) => !before.has(path));
		const finished = definedFields({
			kind: 'tool_finished',
			call_id: id,
			status,
			summary,
			output: output === '' ? undefined : output,
			paths_written: writtenLater.length > 0 ? writtenLater : undefined,
		});
		this.openCalls.finished(id);
		this.writesAtStart.delete(id);
		return wasOpen ? [finished] : [started, finished];
	}
}

interface Outcome {
	status: 'ok' | 'error';
	summary: string;
	output?: string;
}

function statusIsSuccess(item: JsonRecord): boolean {
	const status = optionalString(item, 'status');
	return status === undefined || status === 'completed';
}

/** A command succeeded when it exited 0; without an exit code (declined, say) its status decides. */
function commandOutcome(item: JsonRecord): Outcome {
	const output = optionalString(item, 'aggregated_output') ?? '';
	const exitCode = optionalNumber(item, 'exit_code');
	const ok = exitCode !== undefined ? exitCode === 0 : optionalString(item, 'status') === 'completed';
	if (ok) {
		return { status: 'ok', summary: summarizeOutput(output, noOutputSummary), output };
	}
	const failure = exitCode !== undefined ? `exit code ${exitCode}` : (optionalString(item, 'status') ?? 'failed');
	const firstLine = summarizeOutput(output, '');
	return { status: 'error', summary: shorten(firstLine === '' ? failure : `${failure}: ${firstLine}`), output };
}

function mcpOutcome(item: JsonRecord): Outcome {
	const result = optionalRecord(item, 'result');
	const resultText =
		result !== undefined && Array.isArray(result['content'])
			? contentBlocksText(requiredRecordArray(result, 'content'))
			: '';
	const error = optionalRecord(item, 'error');
	const errorMessage = error !== undefined ? optionalString(error, 'message') : undefined;
	if (optionalString(item, 'status') === 'completed' && errorMessage === undefined) {
		return { status: 'ok', summary: summarizeOutput(resultText, noOutputSummary), output: resultText };
	}
	const output = errorMessage ?? resultText;
	return { status: 'error', summary: summarizeOutput(output, 'failed'), output };
}
