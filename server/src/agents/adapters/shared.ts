import type { AgentEvent, AgentOutputParser, TokenReport } from '../events';

/**
 * What every JSON-lines adapter shares: reading a line into an object without ever throwing,
 * typed field readers, the short summary of a tool's output, and the bookkeeping of open tool calls.
 */

export type JsonRecord = Record<string, unknown>;

/** How much of a line an `unparsed` event keeps; the runner stores the whole output anyway. */
const unparsedLineLimit = 500;
/** How long a tool call's summary may be. */
export const summaryLimit = 200;

export function unparsed(line: string, reason: string): AgentEvent {
	return { kind: 'unparsed', line: line.length > unparsedLineLimit ? line.slice(0, unparsedLineLimit) : line, reason };
}

export function isRecord(value: unknown): value is JsonRecord {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A line that is valid JSON of a known type but not of the shape we read. Thrown only inside a
 * handler and turned into an `unparsed` event by {@link createJsonLinesParser}, so a handler can
 * read fields plainly and the parser still never throws.
 */
export class MalformedLine extends Error {
	constructor(readonly reason: string) {
		super(reason);
	}
}

// Field readers. `null` counts as absent: the CLIs print `"exit_code": null` and the like for "not yet".

function optionalField<T>(
	record: JsonRecord,
	key: string,
	is: (value: unknown) => value is T,
	what: string,
): T | undefined {
	const value = record[key];
	if (value === undefined || value === null) {
		return undefined;
	}
	if (!is(value)) {
		throw new MalformedLine(`'${key}' is not ${what}`);
	}
	return value;
}

function present<T>(value: T | undefined, key: string): T {
	if (value === undefined) {
		throw new MalformedLine(`'${key}' is missing`);
	}
	return value;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isArray = (value: unknown): value is unknown[] => Array.isArray(value);

export const optionalString = (record: JsonRecord, key: string): string | undefined =>
	optionalField(record, key, isString, 'a string');
export const requiredString = (record: JsonRecord, key: string): string => present(optionalString(record, key), key);
export const optionalNumber = (record: JsonRecord, key: string): number | undefined =>
	optionalField(record, key, isNumber, 'a number');
export const requiredNumber = (record: JsonRecord, key: string): number => present(optionalNumber(record, key), key);
export const optionalBoolean = (record: JsonRecord, key: string): boolean | undefined =>
	optionalField(record, key, isBoolean, 'a boolean');
export const optionalRecord = (record: JsonRecord, key: string): JsonRecord | undefined =>
	optionalField(record, key, isRecord, 'an object');
export const requiredRecord = (record: JsonRecord, key: string): JsonRecord =>
	present(optionalRecord(record, key), key);
export const requiredArray = (record: JsonRecord, key: string): unknown[] =>
	present(optionalField(record, key, isArray, 'an array'), key);

export function optionalStringArray(record: JsonRecord, key: string): string[] | undefined {
	const value = optionalField(record, key, isArray, 'an array');
	if (value !== undefined && !value.every(isString)) {
		throw new MalformedLine(`'${key}' is not an array of strings`);
	}
	return value as string[] | undefined;
}

/** The elements of an array field that must all be objects (content blocks, changes, …). */
export function requiredRecordArray(record: JsonRecord, key: string): JsonRecord[] {
	const value = requiredArray(record, key);
	if (!value.every(isRecord)) {
		throw new MalformedLine(`'${key}' holds something that is not an object`);
	}
	return value;
}

/** A one-line summary of a tool's output: its first non-blank line, at most {@link summaryLimit} characters. */
export function summarizeOutput(output: string, fallback: string): string {
	const firstLine = output.split('\n').find((line) => line.trim() !== '');
	return firstLine === undefined ? fallback : shorten(firstLine.trim());
}

/** The text cut to {@link summaryLimit} characters, an ellipsis marking the cut. */
export function shorten(text: string): string {
	return text.length > summaryLimit ? `${text.slice(0, summaryLimit - 1)}…` : text;
}

/** The summary of a call whose output says nothing. */
export const noOutputSummary = '(no output)';

/**
 * The readable text of content blocks as Anthropic's API and MCP servers return them: text as it
 * is, a tool reference by its tool's name, anything else (an image, a resource) as `[its type]` so
 * that its place shows without its bytes.
 */
export function contentBlocksText(blocks: JsonRecord[]): string {
	return blocks
		.map((block) => {
			const type = typeof block['type'] === 'string' ? block['type'] : 'unknown';
			if (type === 'text') {
				return requiredString(block, 'text');
			}
			if (type === 'tool_reference' && typeof block['tool_name'] === 'string') {
				return block['tool_name'];
			}
			return `[${type}]`;
		})
		.join('\n');
}

/** Where a tool's input names the files it reads or writes: the first of `fields` that holds a string. */
export interface ToolPathRule {
	access: 'read' | 'written';
	fields: readonly string[];
}

/** The files a tool call reads and writes, by the rules of its agent's tools (none for a tool not listed, a shell say). */
export function toolCallPaths(
	rules: ReadonlyMap<string, ToolPathRule>,
	tool: string,
	input: unknown,
): { paths_read: string[]; paths_written: string[] } {
	const paths = { paths_read: [] as string[], paths_written: [] as string[] };
	const rule = rules.get(tool);
	if (rule === undefined || !isRecord(input)) {
		return paths;
	}
	const path = rule.fields
		.map((field) => input[field])
		.find((value): value is string => typeof value === 'string' && value !== '');
	if (path !== undefined) {
		(rule.access === 'read' ? paths.paths_read : paths.paths_written).push(path);
	}
	return paths;
}

/**
 * The key of `perModel` (model name → its usage record) whose `measure` is the largest; the first
 * one on a tie or when none has it. Undefined when there is no model.
 */
export function modelWithMost(perModel: JsonRecord | undefined, measure: string): string | undefined {
	let best: { model: string; amount: number } | undefined;
	for (const [model, usage] of Object.entries(perModel ?? {})) {
		const amount = isRecord(usage) && typeof usage[measure] === 'number' ? usage[measure] : 0;
		if (best === undefined || amount > best.amount) {
			best = { model, amount };
		}
	}
	return best?.model;
}

/** A report of the counts given, the parts the agent left out (undefined) left out. */
export function tokenReport(counts: TokenReport): TokenReport {
	return Object.fromEntries(Object.entries(counts).filter(([, count]) => count !== undefined)) as TokenReport;
}

/**
 * A report that says nothing was spent: every count zero and no cost. Claude Code ends an
 * interrupted run, and a resumed session's first turn, with such a result: it is no report.
 */
export function isEmptyReport(report: TokenReport): boolean {
	return (
		report.input_tokens === 0 &&
		report.output_tokens === 0 &&
		(report.other_tokens ?? 0) === 0 &&
		(report.cost_usd ?? 0) === 0
	);
}

/** The event without its undefined fields, so that it carries only what the agent said. */
export function definedFields(event: AgentEvent): AgentEvent {
	return Object.fromEntries(Object.entries(event).filter(([, field]) => field !== undefined)) as AgentEvent;
}

/**
 * The tool calls started and not yet finished, in order, so that end() can report the ones a
 * killed or truncated run left open instead of leaving them dangling.
 */
export class OpenToolCalls {
	private readonly open = new Set<string>();

	started(callId: string): void {
		this.open.add(callId);
	}

	finished(callId: string): void {
		this.open.delete(callId);
	}

	isOpen(callId: string): boolean {
		return this.open.has(callId);
	}

	/** One `tool_finished` with status error for every call still open; empties the set. */
	closeUnfinished(): AgentEvent[] {
		const events: AgentEvent[] = [...this.open].map((callId) => ({
			kind: 'tool_finished',
			call_id: callId,
			status: 'error',
			summary: 'did not finish',
		}));
		this.open.clear();
		return events;
	}
}

/**
 * What a JSON-lines adapter supplies: the events of one parsed object (it may throw
 * {@link MalformedLine}, never anything else on purpose), and what to flush at the end.
 */
export interface JsonLinesHandler {
	record(record: JsonRecord): AgentEvent[];
	end(): AgentEvent[];
}

/**
 * The parser over a handler: a blank line is skipped, a line that is not a JSON object, or that the
 * handler finds malformed, becomes `unparsed`, and nothing a line contains can make push() throw.
 */
export function createJsonLinesParser(handler: JsonLinesHandler): AgentOutputParser {
	return {
		push(rawLine: string): AgentEvent[] {
			const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
			const trimmed = line.trim();
			if (trimmed === '') {
				return [];
			}
			let value: unknown;
			try {
				value = JSON.parse(trimmed);
			} catch (error) {
				const after = objectAfterNoise(trimmed);
				if (after) {
					// A warning printed without its newline, the JSON line right after it (Gemini CLI's "MCP
					// issues detected…"): the warning is kept as unparsed, the line is read.
					return [unparsed(after.noise, 'text printed before a JSON line'), ...recordOf(line, after.value)];
				}
				return [unparsed(line, `not JSON: ${error instanceof Error ? error.message : String(error)}`)];
			}
			if (!isRecord(value)) {
				return [unparsed(line, `not a JSON object but ${describeJsonValue(value)}`)];
			}
			return recordOf(line, value);
		},
		end(): AgentEvent[] {
			return handler.end();
		},
	};

	function recordOf(line: string, value: JsonRecord): AgentEvent[] {
		try {
			return handler.record(value);
		} catch (error) {
			if (error instanceof MalformedLine) {
				return [unparsed(line, error.reason)];
			}
			// A bug of ours, not the agent's: still reported with the line rather than lost or thrown.
			return [unparsed(line, `adapter failed: ${error instanceof Error ? error.message : String(error)}`)];
		}
	}
}

/** How many places a JSON object after a warning is looked for: a warning is short, a broken line may be long. */
const noiseCandidates = 8;

/**
 * A JSON object with a "type" that ends the line, after text that is not JSON (a line that begins
 * as JSON is a broken line, not a warning): where the object starts is tried at each of the first
 * `{`, so the first whole object wins.
 */
function objectAfterNoise(line: string): { noise: string; value: JsonRecord } | undefined {
	if (line.startsWith('{') || line.startsWith('[') || !line.endsWith('}')) {
		return undefined;
	}
	let tries = 0;
	for (let at = line.indexOf('{'); at > 0 && tries < noiseCandidates; at = line.indexOf('{', at + 1), tries++) {
		let value: unknown;
		try {
			value = JSON.parse(line.slice(at));
		} catch {
			continue;
		}
		if (isRecord(value) && typeof value['type'] === 'string') {
			return { noise: line.slice(0, at), value };
		}
	}
	return undefined;
}

function describeJsonValue(value: unknown): string {
	return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** The record's "type", or a MalformedLine saying that it has none. */
export function recordType(record: JsonRecord): string {
	const type = record['type'];
	if (typeof type !== 'string') {
		throw new MalformedLine(type === undefined ? "no 'type'" : "'type' is not a string");
	}
	return type;
}

export function unknownType(type: string): MalformedLine {
	return new MalformedLine(`unknown type '${type}'`);
}
