import type { AgentEvent } from '../events';
import {
	definedFields,
	MalformedLine,
	noOutputSummary,
	OpenToolCalls,
	optionalNumber,
	optionalString,
	optionalStringArray,
	recordType,
	requiredNumber,
	requiredString,
	shorten,
	summarizeOutput,
	unknownType,
	type JsonLinesHandler,
	type JsonRecord,
} from './shared';

/**
 * Our own JSON-lines format, for any agent or script that is not one of the CLIs we read
 * (documented for its writers in docs/agent-jsonl.md): one object per line, its "type" one of
 * session, message, tool, tool_result, usage, plan, result. Fields not listed are ignored, so a
 * writer may add its own. Since we define the format we check it strictly: a line that breaks a
 * rule is reported as `unparsed` with the rule, never guessed at.
 */
export class DeskJsonl implements JsonLinesHandler {
	private readonly openCalls = new OpenToolCalls();

	record(record: JsonRecord): AgentEvent[] {
		const type = recordType(record);
		switch (type) {
			case 'session':
				return [
					definedFields({
						kind: 'session',
						provider: requiredString(record, 'provider'),
						model: optionalString(record, 'model'),
					}),
				];
			case 'message':
				return [{ kind: 'message', text: requiredString(record, 'text') }];
			case 'tool':
				return [this.tool(record)];
			case 'tool_result':
				return [this.toolResult(record)];
			case 'usage':
				return [
					definedFields({
						kind: 'usage',
						input_tokens: tokenCount(record, 'input_tokens'),
						output_tokens: tokenCount(record, 'output_tokens'),
						cache_read_tokens: optionalTokenCount(record, 'cache_read_tokens'),
						cache_creation_tokens: optionalTokenCount(record, 'cache_creation_tokens'),
						reasoning_tokens: optionalTokenCount(record, 'reasoning_tokens'),
						cost_usd: cost(record),
						model: optionalString(record, 'model'),
					}),
				];
			case 'plan': {
				const steps = optionalStringArray(record, 'steps');
				if (steps === undefined) {
					throw new MalformedLine("'steps' is missing");
				}
				return [{ kind: 'plan', steps }];
			}
			case 'result':
				return [
					definedFields({ kind: 'result', ok: okOrError(record) === 'ok', text: optionalString(record, 'text') }),
				];
			default:
				throw unknownType(type);
		}
	}

	end(): AgentEvent[] {
		return this.openCalls.closeUnfinished();
	}

	private tool(record: JsonRecord): AgentEvent {
		const callId = requiredString(record, 'id');
		const event: AgentEvent = {
			kind: 'tool_started',
			call_id: callId,
			tool: requiredString(record, 'name'),
			// As the agent sent them (a null too); none at all is {}.
			args: record['args'] === undefined ? {} : record['args'],
			paths_read: optionalStringArray(record, 'read') ?? [],
			paths_written: optionalStringArray(record, 'written') ?? [],
		};
		if (this.openCalls.isOpen(callId)) {
			throw new MalformedLine(`tool '${callId}' is already running`);
		}
		this.openCalls.started(callId);
		return event;
	}

	private toolResult(record: JsonRecord): AgentEvent {
		const callId = requiredString(record, 'id');
		const status = okOrError(record);
		const summary = optionalString(record, 'summary');
		const output = optionalString(record, 'output');
		const event = definedFields({
			kind: 'tool_finished',
			call_id: callId,
			status,
			summary: summary !== undefined ? shorten(summary) : summarizeOutput(output ?? '', noOutputSummary),
			output,
			paths_read: optionalStringArray(record, 'read'),
			paths_written: optionalStringArray(record, 'written'),
		});
		if (!this.openCalls.isOpen(callId)) {
			throw new MalformedLine(`no running tool has id '${callId}'`);
		}
		this.openCalls.finished(callId);
		return event;
	}
}

function okOrError(record: JsonRecord): 'ok' | 'error' {
	const status = requiredString(record, 'status');
	if (status !== 'ok' && status !== 'error') {
		throw new MalformedLine(`'status' is '${status}', not 'ok' or 'error'`);
	}
	return status;
}

function tokenCount(record: JsonRecord, key: string): number {
	const count = requiredNumber(record, key);
	if (!Number.isInteger(count) || count < 0) {
		throw new MalformedLine(`'${key}' is not a whole number of tokens`);
	}
	return count;
}

function optionalTokenCount(record: JsonRecord, key: string): number | undefined {
	return record[key] === undefined || record[key] === null ? undefined : tokenCount(record, key);
}

function cost(record: JsonRecord): number | undefined {
	const usd = optionalNumber(record, 'cost_usd');
	if (usd !== undefined && usd < 0) {
		throw new MalformedLine("'cost_usd' is negative");
	}
	return usd;
}
