import { DeskError } from '../core/errors';
import type { ModelUsage, TokenCounts, TokenUsage, ToolInvocation } from './types';

/**
 * Arithmetic on token usage (glossary: Provenance): counts checked and their total computed, so that
 * a total never disagrees with its parts; sums over models and over the nodes of a run.
 */

/** The counts an agent may leave out, in the order they are shown. */
export const optionalCountNames = [
	'cache_read_tokens',
	'cache_creation_tokens',
	'reasoning_tokens',
	'other_tokens',
] as const;

/** What counts are made from: every figure but the total, which is computed. */
export type CountsInput = Omit<TokenCounts, 'total_tokens'>;

/** Amounts of money are summed to a billionth of a dollar: no 0.30000000000000004 in a bill. */
function roundUsd(amount: number): number {
	return Math.round(amount * 1e9) / 1e9;
}

function checkCount(name: string, value: number): void {
	if (!Number.isSafeInteger(value) || value < 0) {
		throw new DeskError('ai.badObject', `${name} is a count of tokens, not ${value}.`, { [name]: value });
	}
}

/** The counts checked (whole numbers, cost not negative), the total computed, parts not reported left out. */
export function tokenCounts(input: CountsInput): TokenCounts {
	checkCount('input_tokens', input.input_tokens);
	checkCount('output_tokens', input.output_tokens);
	const counts: TokenCounts = {
		input_tokens: input.input_tokens,
		output_tokens: input.output_tokens,
		total_tokens: input.input_tokens + input.output_tokens + (input.other_tokens ?? 0),
	};
	if (input.cost_usd !== undefined) {
		if (!Number.isFinite(input.cost_usd) || input.cost_usd < 0) {
			throw new DeskError('ai.badObject', `cost_usd must be a non-negative amount, not ${input.cost_usd}.`, {
				cost_usd: input.cost_usd,
			});
		}
		counts.cost_usd = roundUsd(input.cost_usd);
	}
	for (const name of optionalCountNames) {
		const value = input[name];
		if (value !== undefined) {
			checkCount(name, value);
			counts[name] = value;
		}
	}
	if (input.cost_estimated && counts.cost_usd !== undefined) {
		counts.cost_estimated = true;
	}
	return counts;
}

/**
 * The sum of `parts`. A part the agent did not report is in the sum when any part has it; the cost
 * is the sum of the costs known (which parts have none the models say), estimated when any was.
 */
export function addCounts(parts: readonly TokenCounts[]): TokenCounts {
	const sum = (pick: (part: TokenCounts) => number | undefined): number | undefined =>
		parts.some((part) => pick(part) !== undefined)
			? parts.reduce((total, part) => total + (pick(part) ?? 0), 0)
			: undefined;
	const input: CountsInput = {
		input_tokens: sum((p) => p.input_tokens) ?? 0,
		output_tokens: sum((p) => p.output_tokens) ?? 0,
	};
	const cost = sum((p) => p.cost_usd);
	if (cost !== undefined) {
		input.cost_usd = cost;
	}
	for (const name of optionalCountNames) {
		const value = sum((p) => p[name]);
		if (value !== undefined) {
			input[name] = value;
		}
	}
	if (parts.some((part) => part.cost_estimated)) {
		input.cost_estimated = true;
	}
	return tokenCounts(input);
}

/** Only the counts of a usage (no models, turns, or flags of the whole). */
export function countsOf(usage: TokenCounts): TokenCounts {
	return tokenCounts(usage);
}

/** Whether two reports say the same: the seed's three counts and the cost. */
export function sameCounts(a: TokenCounts, b: TokenCounts): boolean {
	return (
		a.input_tokens === b.input_tokens &&
		a.output_tokens === b.output_tokens &&
		a.total_tokens === b.total_tokens &&
		(a.cost_usd === undefined || b.cost_usd === undefined || Math.abs(a.cost_usd - b.cost_usd) < 1e-6)
	);
}

/** Models of the same name added up, in the order first seen. */
export function mergeModels(models: readonly ModelUsage[]): ModelUsage[] {
	const byName = new Map<string, ModelUsage[]>();
	for (const model of models) {
		byName.set(model.model, [...(byName.get(model.model) ?? []), model]);
	}
	return [...byName].map(([model, parts]) => ({ model, ...addCounts(parts) }));
}

/** Besides the counts, what a usage may say of the whole. */
export interface UsageFacts {
	turns?: number;
	duration_ms?: number;
	incomplete?: boolean;
	/** The agent's own totals: kept only when they disagree with the sum of the models. */
	agentTotals?: TokenCounts;
}

/** A usage whose counts are the sum of `models`. */
export function usageOfModels(models: readonly ModelUsage[], facts: UsageFacts = {}): TokenUsage {
	const merged = mergeModels(models);
	const usage: TokenUsage = { ...addCounts(merged) };
	if (merged.length > 0) {
		usage.models = merged;
	}
	if (facts.turns !== undefined) {
		checkCount('turns', facts.turns);
		usage.turns = facts.turns;
	}
	if (facts.duration_ms !== undefined) {
		if (!Number.isFinite(facts.duration_ms) || facts.duration_ms < 0) {
			throw new DeskError('ai.badObject', `duration_ms is a length of time, not ${facts.duration_ms}.`, {
				duration_ms: facts.duration_ms,
			});
		}
		usage.duration_ms = Math.round(facts.duration_ms);
	}
	if (facts.incomplete) {
		usage.incomplete = true;
	}
	if (facts.agentTotals && !sameCounts(facts.agentTotals, usage)) {
		usage.agent_totals = countsOf(facts.agentTotals);
	}
	return usage;
}

/** The models of a usage; one of no name for a usage recorded without them (before the desk kept them). */
function modelsOf(usage: TokenUsage): ModelUsage[] {
	return (
		usage.models ?? (usage.total_tokens > 0 || usage.cost_usd !== undefined ? [{ model: '', ...countsOf(usage) }] : [])
	);
}

/**
 * Two usages as one: the nodes of a run, or a run and its next node. Models of the same name add up,
 * as do turns and durations; incomplete when either is; the agents' own totals kept when they disagree.
 */
export function addUsage(a: TokenUsage | undefined, b: TokenUsage): TokenUsage {
	if (a === undefined) {
		return b;
	}
	const sumOf = (pick: (usage: TokenUsage) => number | undefined): number | undefined =>
		pick(a) === undefined && pick(b) === undefined ? undefined : (pick(a) ?? 0) + (pick(b) ?? 0);
	const models = mergeModels([...modelsOf(a), ...modelsOf(b)]);
	const facts: UsageFacts = {
		incomplete: a.incomplete === true || b.incomplete === true,
		agentTotals: addCounts([a.agent_totals ?? a, b.agent_totals ?? b]),
	};
	const turns = sumOf((u) => u.turns);
	const duration = sumOf((u) => u.duration_ms);
	if (turns !== undefined) {
		facts.turns = turns;
	}
	if (duration !== undefined) {
		facts.duration_ms = duration;
	}
	const usage = usageOfModels(models, facts);
	if (usage.models?.length === 1 && usage.models[0]!.model === '') {
		delete usage.models;
	}
	return usage;
}

/** The tool name of what a summary agent's answer cost (glossary: Project memory), recorded on the landed run it summed up. */
export const summaryAgentTool = 'summary_agent';

/**
 * What summary agents spent on a run's landing (its `summary_agent` tool invocations): paid beside
 * the run's own agent, so its Provenance never holds it, yet a subtree's total does.
 */
export function summaryAgentUsages(invocations: readonly ToolInvocation[]): TokenUsage[] {
	return invocations
		.filter((invocation) => invocation.tool_name === summaryAgentTool)
		.map((invocation) => (invocation.args as { usage?: TokenUsage } | null)?.usage)
		.filter((usage): usage is TokenUsage => usage !== undefined && typeof usage.total_tokens === 'number');
}
