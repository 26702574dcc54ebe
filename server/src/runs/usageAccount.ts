import type { AgentEvent, TokenReport } from '../agents/events';
import { tokenCounts, usageOfModels } from '../ai/tokenUsage';
import type { ModelUsage, TokenCounts, TokenUsage } from '../ai/types';
import { costAt, priceOf, type PriceTable } from './prices';

type Result = Extract<AgentEvent, { kind: 'result' }>;

/** Tokens one model call or turn spent, as its latest `usage` event said. */
interface Spent {
	model?: string;
	report: TokenReport;
	parentCall?: string;
	partial: boolean;
}

/**
 * What one agent process spent (glossary: Provenance), from its events: the agent's own final report
 * per model when it gives one (Claude Code's `modelUsage`, Gemini CLI's `stats.models`), else the
 * sum of its reports per call or turn; whether its output ended before that report (without a
 * result, or with a `usage_incomplete` of its adapter: a format with neither, plain text, reports
 * no usage, so its usage is unknown); and what the
 * subagent each Task call started spent. A cost the agent does not give is estimated from the price
 * table, and marked so.
 */
export class UsageAccount {
	private readonly spent = new Map<string, Spent>();
	private unnamed = 0;
	/** The last result that reported usage: with a model report, or the agent's own totals. */
	private report: Result | undefined;
	private turns: number | undefined;
	private durationMs: number | undefined;
	private incomplete = false;
	/** An output without a result ended before the agent's verdict, so before its last usage too. */
	private resulted = false;
	/** Each call of a subagent: the call that started it. */
	private readonly parentOf = new Map<string, string>();

	constructor(private readonly prices: PriceTable) {}

	record(event: AgentEvent): void {
		switch (event.kind) {
			case 'usage': {
				const { kind: _kind, model, message_id: messageId, parent_call_id: parentCall, partial, ...report } = event;
				// A later report of the same message (its final count) replaces the earlier one.
				this.spent.set(messageId ?? `#${this.unnamed++}`, {
					...(model !== undefined ? { model } : {}),
					report,
					...(parentCall !== undefined ? { parentCall } : {}),
					partial: partial === true,
				});
				break;
			}
			case 'result':
				this.resulted = true;
				if (event.usage !== undefined || event.models !== undefined) {
					this.report = event;
				}
				this.turns = event.turns ?? this.turns;
				this.durationMs = event.duration_ms ?? this.durationMs;
				break;
			case 'usage_incomplete':
				this.incomplete = true;
				break;
			case 'tool_started':
				if (event.parent_call_id !== undefined) {
					this.parentOf.set(event.call_id, event.parent_call_id);
				}
				break;
			default:
				break;
		}
	}

	/** The process's usage; `model` names what the agent spent without naming the model. */
	usage(model: string): TokenUsage {
		const report = this.report;
		let models: ModelUsage[];
		let agentTotals: TokenCounts | undefined;
		if (report?.models !== undefined) {
			models = report.models.map(({ model: name, ...tokens }) => this.modelUsage(name, tokens));
			agentTotals = report.usage !== undefined ? this.counts(report.usage, undefined) : undefined;
		} else if (report?.usage !== undefined) {
			models = [this.modelUsage(report.model ?? model, report.usage)];
		} else {
			models = [...this.spent.values()].map((spent) => this.modelUsage(spent.model ?? model, spent.report));
		}
		return usageOfModels(models, {
			...(this.turns !== undefined ? { turns: this.turns } : {}),
			...(this.durationMs !== undefined ? { duration_ms: this.durationMs } : {}),
			incomplete: this.incomplete || !this.resulted,
			...(agentTotals !== undefined ? { agentTotals } : {}),
		});
	}

	/**
	 * What each subagent spent, by the call that started it, its own subagents' included: the sum of
	 * its model calls as they were printed, at least that much when their output counts were partial.
	 */
	subagentUsage(model: string): Map<string, TokenUsage> {
		const byCall = new Map<string, Spent[]>();
		for (const spent of this.spent.values()) {
			const seen = new Set<string>();
			// A nested subagent's tokens count for every call above it too.
			for (let call = spent.parentCall; call !== undefined && !seen.has(call); call = this.parentOf.get(call)) {
				seen.add(call);
				byCall.set(call, [...(byCall.get(call) ?? []), spent]);
			}
		}
		return new Map(
			[...byCall].map(([call, spent]) => [
				call,
				usageOfModels(
					spent.map((s) => this.modelUsage(s.model ?? model, s.report)),
					{ incomplete: spent.some((s) => s.partial) },
				),
			]),
		);
	}

	private modelUsage(model: string, tokens: TokenReport): ModelUsage {
		return { model, ...this.counts(tokens, model) };
	}

	/** The counts, with the agent's cost, else one estimated from the price of `model` when the table has it. */
	private counts(tokens: TokenReport, model: string | undefined): TokenCounts {
		if (tokens.cost_usd !== undefined || model === undefined) {
			return tokenCounts(tokens);
		}
		const price = priceOf(this.prices, model);
		return price === undefined
			? tokenCounts(tokens)
			: tokenCounts({ ...tokens, cost_usd: costAt(price, tokens), cost_estimated: true });
	}
}
