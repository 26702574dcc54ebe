import type { TokenReport } from '../agents/events';

/**
 * The price table the desk estimates a cost from when an agent gives none (Codex, Gemini CLI, an
 * interrupted Claude Code run): US dollars per million tokens, by model. The setting
 * `agentDesk.runs.prices` (`prices` of the run settings) adds models or replaces these; a cost
 * computed from it is marked estimated wherever it is shown.
 *
 * The defaults are the providers' list prices for standard requests (prompts up to 200k tokens, no
 * batch discount) as published when this table was last checked; prices change, so a bill that
 * matters should come from the setting. Cache writes are Anthropic's five-minute writes; OpenAI and
 * Google charge none, so there a write costs as input.
 */
export interface ModelPrice {
	/** Input tokens not read from the cache. */
	input: number;
	/** Output tokens, reasoning included (and what Gemini CLI counts as neither input nor output). */
	output: number;
	/** Input tokens read from the cache; as `input` when not given. */
	cacheRead?: number;
	/** Input tokens written to the cache; as `input` when not given. */
	cacheWrite?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

export const defaultPrices: PriceTable = {
	// Anthropic
	'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
	'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
	'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
	'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
	'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
	'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
	'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
	'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
	// OpenAI
	'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
	'gpt-5-codex': { input: 1.25, output: 10, cacheRead: 0.125 },
	'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
	'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
	'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
	'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
	o3: { input: 2, output: 8, cacheRead: 0.5 },
	'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
	'codex-mini-latest': { input: 1.5, output: 6, cacheRead: 0.375 },
	// Google
	'gemini-2.5-pro': { input: 1.25, output: 10, cacheRead: 0.31 },
	'gemini-2.5-flash': { input: 0.3, output: 2.5, cacheRead: 0.075 },
	'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cacheRead: 0.025 },
	'gemini-2.0-flash': { input: 0.1, output: 0.4, cacheRead: 0.025 },
};

/**
 * The name a model is listed under: without a provider's prefix (`anthropic/`, `models/`, Bedrock's
 * `us.anthropic.`), a version suffix (`-v1:0`), a context-window mark (`[1m]`) or a date
 * (`-20250514`, `@20250514`, `-2025-08-07`). A model of another version or size is another name:
 * the table never guesses one price for a family.
 */
export function priceName(model: string): string {
	return model
		.trim()
		.toLowerCase()
		.replace(/^.*\//, '')
		.replace(/^(?:[a-z]{2,4}\.)?(?:anthropic|openai|google)\./, '')
		.replace(/\[[^\]]*\]$/, '')
		.replace(/-v\d+(?::\d+)?$/, '')
		.replace(/(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$/, '');
}

/** The price of `model`: the table's entry of its exact name, else of its listed name (see {@link priceName}). */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
	const exact = Object.hasOwn(table, model) ? table[model] : undefined;
	const name = priceName(model);
	return exact ?? (Object.hasOwn(table, name) ? table[name] : undefined);
}

/**
 * What `tokens` cost at `price`: fresh input, cache reads and cache writes each at their price,
 * output (reasoning in it) and the tokens that are neither at the output's.
 */
export function costAt(price: ModelPrice, tokens: TokenReport): number {
	const cacheRead = tokens.cache_read_tokens ?? 0;
	const cacheWrite = tokens.cache_creation_tokens ?? 0;
	const fresh = Math.max(0, tokens.input_tokens - cacheRead - cacheWrite);
	const perMillion =
		fresh * price.input +
		cacheRead * (price.cacheRead ?? price.input) +
		cacheWrite * (price.cacheWrite ?? price.input) +
		(tokens.output_tokens + (tokens.other_tokens ?? 0)) * price.output;
	return perMillion / 1_000_000;
}

/** The model a command line asks for (`--model X`, `--model=X`, `-m X`, `-c model=X`), for a run whose agent never names it. */
export function modelOfArgs(args: readonly string[]): string | undefined {
	for (let i = 0; i < args.length; i++) {
		const arg = args[i]!;
		const next = args[i + 1];
		if ((arg === '--model' || arg === '-m') && next !== undefined && next !== '' && !next.startsWith('-')) {
			return next;
		}
		if (arg.startsWith('--model=')) {
			return arg.slice('--model='.length) || undefined;
		}
		if ((arg === '-c' || arg === '--config') && next !== undefined) {
			const setting = /^model\s*=\s*"?([^"]+)"?$/.exec(next.trim());
			if (setting) {
				return setting[1];
			}
		}
	}
	return undefined;
}
