import { DeskError, isDeskError } from '../core/errors';
import { validateChecks } from '../assets/checks';
import { agentOutputFormats, type AgentOutputFormat } from '../agents/events';
import type { AssetCheck } from '../assets/types';
import { defaultLineageLimits, type LineageLimits } from '../lineage/types';
import { defaultSkillsDelivery, skillsDeliveries, type SkillsDelivery } from './instructions';
import type { ModelPrice } from './prices';

/**
 * An agent is a configured command (setting `desk.agents`). The prompt reaches it on standard input,
 * or in place of `{prompt}` when an argument holds that placeholder.
 */
export interface AgentSettings {
	name: string;
	command: string;
	args: string[];
	/** Names of environment variables passed through to the agent (nothing else of the desk's environment is). */
	env: string[];
	/** Of those, the ones that are secrets: scrubbed from what the run stores. */
	secretEnv: string[];
	format: AgentOutputFormat;
	/**
	 * How instructions plugs reach it (instructions.ts): installed as `.claude/skills/<name>/SKILL.md`
	 * (Claude Code), inlined in the prompt, or not given (`none`: the run records them as not given).
	 */
	skills: SkillsDelivery;
	/** May the agent reach the network inside the sandbox? */
	network: boolean;
	/**
	 * Files of the home folder the agent needs (its login and settings), copied into the run's own
	 * home folder: the agent can use and change them, and the changes are discarded with the run.
	 */
	homeFiles: string[];
	/** Folders or files shown read-only in the sandbox (`~` is the home folder). */
	readPaths: string[];
	/** Folders or files shown writable in the sandbox; what the agent writes there stays. Use sparingly. */
	writePaths: string[];
	/**
	 * The desk tools inside the run (glossary: Desk tools): 'auto' wires them into the agent's command
	 * line and environment as its kind expects (see mcpWiring.ts); 'off' gives it none.
	 */
	mcp: 'auto' | 'off';
}

export type RunIsolation = 'shared' | 'worktree';

export interface RunSettings {
	agents: AgentSettings[];
	/** Which agent a run uses; the first one when unset. */
	agent?: string;
	isolation: RunIsolation;
	/** Checks of the project, run after each attempt besides the target asset's own (glossary: Checks). */
	checks: AssetCheck[];
	/** Attempts of the work node when a check fails (1: no second attempt). */
	maxAttempts: number;
	/**
	 * The run's ContextPipeline keeps at most this many frames (the seed's `max_frames`; 0: all): past
	 * it the oldest frame that is not an IntentAnalysis or Checkpoint goes, and its id stays valid in
	 * the plan steps. Absent where settings were made in code before it existed: 0.
	 */
	maxFrames?: number;
	/** The sandbox: 'auto' uses bubblewrap when it works here; 'off' never does. */
	sandbox: 'auto' | 'off';
	/** How branches are carried out and bounded (glossary: Lineage); the client sends `agentDesk.lineage.*` here. */
	lineage: LineageSettings;
	/**
	 * Prices (US dollars per million tokens) by model, over the desk's table (prices.ts), to estimate
	 * the cost an agent does not report; absent: the table alone.
	 */
	prices?: Record<string, ModelPrice>;
}

/**
 * The lineage's settings (glossary: Lineage). `branch` overrides what a branch takes from its
 * starter's launch (agent, template, isolation, attempts); `limits` bound the grant chain;
 * `summaryAgent` names the agent of `agents` that memorizes landings (none: memory is left unchanged).
 */
export interface LineageSettings {
	branch: { agent?: string; template?: string[]; isolation?: RunIsolation; maxAttempts?: number };
	limits: LineageLimits;
	summaryAgent?: string;
	/** Memorize each landing of a branch as it lands (else only when asked). */
	memorizeOnLanding: boolean;
}

export const defaultLineageSettings: LineageSettings = {
	branch: {},
	limits: defaultLineageLimits,
	memorizeOnLanding: false,
};

export const defaultAgents: AgentSettings[] = [
	{
		name: 'claude',
		command: 'claude',
		args: ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits'],
		env: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX'],
		secretEnv: ['ANTHROPIC_API_KEY'],
		format: 'claude-stream-json',
		skills: 'claude',
		network: true,
		homeFiles: ['~/.claude.json', '~/.claude/.credentials.json', '~/.claude/settings.json'],
		readPaths: [],
		writePaths: [],
		mcp: 'auto',
	},
	{
		name: 'codex',
		command: 'codex',
		args: ['exec', '--json', '--skip-git-repo-check', '-'],
		env: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'CODEX_HOME'],
		secretEnv: ['OPENAI_API_KEY'],
		format: 'codex-json',
		skills: 'inline',
		network: true,
		homeFiles: ['~/.codex/auth.json', '~/.codex/config.toml'],
		readPaths: [],
		writePaths: [],
		mcp: 'auto',
	},
];

export const defaultRunSettings: RunSettings = {
	agents: defaultAgents,
	isolation: 'shared',
	checks: [],
	maxAttempts: 2,
	maxFrames: 0,
	sandbox: 'auto',
	lineage: defaultLineageSettings,
};

/**
 * Run settings from what a client or the command line sent: every field checked, defaults filled,
 * a clear error naming the field that is wrong.
 */
export function parseRunSettings(value: unknown): RunSettings {
	if (value === undefined || value === null) {
		return defaultRunSettings;
	}
	const input = record(value, 'settings');
	const agents =
		input.agents === undefined
			? defaultAgents
			: array(input.agents, 'agents').map((a, i) => parseAgent(a, `agents[${i}]`));
	const names = new Set<string>();
	for (const agent of agents) {
		if (names.has(agent.name)) {
			throw bad(`agents: two agents are named ${JSON.stringify(agent.name)}.`, 'agents');
		}
		names.add(agent.name);
	}
	const isolation = input.isolation ?? 'shared';
	if (isolation !== 'shared' && isolation !== 'worktree') {
		throw bad(`isolation is "shared" or "worktree", not ${JSON.stringify(isolation)}.`, 'isolation');
	}
	const maxAttempts = input.maxAttempts ?? defaultRunSettings.maxAttempts;
	if (typeof maxAttempts !== 'number' || !Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 10) {
		throw bad(`maxAttempts is a whole number from 1 to 10, not ${JSON.stringify(maxAttempts)}.`, 'maxAttempts');
	}
	const maxFrames = wholeNumber(input.maxFrames ?? defaultRunSettings.maxFrames, 'maxFrames', 0, maxFramesLimit);
	const sandbox = input.sandbox ?? 'auto';
	if (sandbox !== 'auto' && sandbox !== 'off') {
		throw bad(`sandbox is "auto" or "off", not ${JSON.stringify(sandbox)}.`, 'sandbox');
	}
	const agent = input.agent === undefined || input.agent === '' ? undefined : string(input.agent, 'agent');
	if (agent !== undefined && !names.has(agent)) {
		throw new DeskError(
			'run.unknownAgent',
			`No agent is named ${JSON.stringify(agent)}; desk.agents has ${[...names].join(', ') || 'none'}.`,
			{ agent },
		);
	}
	const checks = input.checks === undefined ? [] : parseChecks(input.checks);
	const lineage = input.lineage === undefined ? defaultLineageSettings : parseLineage(input.lineage, names);
	const prices = input.prices === undefined ? undefined : parsePrices(input.prices);
	return {
		agents,
		...(agent ? { agent } : {}),
		isolation,
		checks,
		maxAttempts,
		maxFrames,
		sandbox,
		lineage,
		...(prices && Object.keys(prices).length > 0 ? { prices } : {}),
	};
}

/**
 * The settings a branch's runs are carried out with: those its fork got, with the agent, the
 * isolation and the attempts its configuration froze.
 */
export function branchRunSettings(
	stored: unknown,
	config: { agent: string; isolation: RunIsolation; maxAttempts?: number },
): RunSettings {
	const settings = parseRunSettings(stored);
	return {
		...settings,
		agent: config.agent,
		isolation: config.isolation,
		maxAttempts: config.maxAttempts ?? settings.maxAttempts,
	};
}

/** The most frames a pipeline may be set to keep; 0 (all) is the default. */
export const maxFramesLimit = 100_000;

/** Bounds of each limit: a setting outside them is refused rather than quietly clamped. */
const limitBounds: Record<keyof LineageLimits, [number, number]> = {
	maxDepth: [1, 8],
	maxBranchesPerNode: [1, 50],
	maxLiveBranches: [1, 50],
	tallyTokens: [100, 20_000],
	memoryTokens: [100, 20_000],
	maxNotesPerBranch: [1, 1000],
};

/** A template's node: a lowercase word (`plan`, `work`). */
const nodeNamePattern = /^[a-z][a-z0-9-]{0,31}$/;

function parseLineage(value: unknown, agents: ReadonlySet<string>): LineageSettings {
	const input = record(value, 'lineage');
	const branchInput = record(input.branch ?? {}, 'lineage.branch');
	const branch: LineageSettings['branch'] = {};
	if (branchInput.agent !== undefined && branchInput.agent !== '') {
		const agent = string(branchInput.agent, 'lineage.branch.agent');
		if (!agents.has(agent)) {
			throw bad(
				`lineage.branch.agent names no agent of agents (${[...agents].join(', ') || 'none'}): ${JSON.stringify(agent)}.`,
				'lineage.branch.agent',
			);
		}
		branch.agent = agent;
	}
	if (branchInput.template !== undefined) {
		const template = strings(branchInput.template, 'lineage.branch.template');
		if (template.length === 0 || template.length > 8) {
			throw bad('lineage.branch.template is a list of 1 to 8 nodes.', 'lineage.branch.template');
		}
		for (const [i, node] of template.entries()) {
			if (!nodeNamePattern.test(node) || template.indexOf(node) !== i) {
				throw bad(
					`lineage.branch.template[${i}] is a lowercase node name, once (plan, work), not ${JSON.stringify(node)}.`,
					`lineage.branch.template[${i}]`,
				);
			}
		}
		branch.template = template;
	}
	if (branchInput.isolation !== undefined) {
		if (branchInput.isolation !== 'shared' && branchInput.isolation !== 'worktree') {
			throw bad(
				`lineage.branch.isolation is "shared" or "worktree", not ${JSON.stringify(branchInput.isolation)}.`,
				'lineage.branch.isolation',
			);
		}
		branch.isolation = branchInput.isolation;
	}
	if (branchInput.maxAttempts !== undefined) {
		branch.maxAttempts = wholeNumber(branchInput.maxAttempts, 'lineage.branch.maxAttempts', 1, 10);
	}
	const limitsInput = record(input.limits ?? {}, 'lineage.limits');
	const limits = { ...defaultLineageLimits };
	for (const key of Object.keys(limitsInput)) {
		if (!(key in limitBounds)) {
			throw bad(`lineage.limits has no limit ${JSON.stringify(key)}.`, `lineage.limits.${key}`);
		}
		const [min, max] = limitBounds[key as keyof LineageLimits];
		limits[key as keyof LineageLimits] = wholeNumber(limitsInput[key], `lineage.limits.${key}`, min, max);
	}
	let summaryAgent: string | undefined;
	if (input.summaryAgent !== undefined && input.summaryAgent !== '') {
		summaryAgent = string(input.summaryAgent, 'lineage.summaryAgent');
		if (!agents.has(summaryAgent)) {
			throw bad(
				`lineage.summaryAgent names no agent of agents (${[...agents].join(', ') || 'none'}): ${JSON.stringify(summaryAgent)}.`,
				'lineage.summaryAgent',
			);
		}
	}
	const memorizeOnLanding = boolean(input.memorizeOnLanding ?? false, 'lineage.memorizeOnLanding');
	return { branch, limits, ...(summaryAgent ? { summaryAgent } : {}), memorizeOnLanding };
}

/** The most models the prices setting may name: a table, not a catalogue. */
const maxPricedModels = 500;
/** No model costs more than this per million tokens: a larger figure is a mistake of units. */
const maxPricePerMillion = 10_000;

/** `prices`: per model, `input` and `output` (and optionally `cacheRead`, `cacheWrite`) in US dollars per million tokens. */
function parsePrices(value: unknown): Record<string, ModelPrice> {
	const input = record(value, 'prices');
	const models = Object.keys(input);
	if (models.length > maxPricedModels) {
		throw bad(`prices names ${models.length} models; at most ${maxPricedModels}.`, 'prices');
	}
	const prices: Record<string, ModelPrice> = {};
	for (const model of models) {
		const where = `prices.${model}`;
		if (model.trim() === '' || model.length > 200) {
			throw bad(`prices has a model name of ${model.length} characters; 1 to 200.`, 'prices');
		}
		const entry = record(input[model], where);
		for (const key of Object.keys(entry)) {
			if (!['input', 'output', 'cacheRead', 'cacheWrite'].includes(key)) {
				throw bad(
					`${where} has no field ${JSON.stringify(key)} (input, output, cacheRead, cacheWrite).`,
					`${where}.${key}`,
				);
			}
		}
		const amount = (key: keyof ModelPrice, required: boolean): number | undefined => {
			const v = entry[key];
			if (v === undefined && !required) {
				return undefined;
			}
			if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > maxPricePerMillion) {
				throw bad(
					`${where}.${key} is US dollars per million tokens, from 0 to ${maxPricePerMillion}, not ${JSON.stringify(v)}.`,
					`${where}.${key}`,
				);
			}
			return v;
		};
		const cacheRead = amount('cacheRead', false);
		const cacheWrite = amount('cacheWrite', false);
		prices[model] = {
			input: amount('input', true)!,
			output: amount('output', true)!,
			...(cacheRead !== undefined ? { cacheRead } : {}),
			...(cacheWrite !== undefined ? { cacheWrite } : {}),
		};
	}
	return prices;
}

function wholeNumber(value: unknown, where: string, min: number, max: number): number {
	if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
		throw bad(`${where} is a whole number from ${min} to ${max}, not ${JSON.stringify(value)}.`, where);
	}
	return value;
}

export function chooseAgent(settings: RunSettings): AgentSettings {
	const agent =
		settings.agent === undefined ? settings.agents[0] : settings.agents.find((a) => a.name === settings.agent);
	if (!agent) {
		throw new DeskError(
			'run.unknownAgent',
			settings.agent === undefined
				? 'No agent is configured: add one to desk.agents.'
				: `No agent is named ${settings.agent}.`,
			{ agent: settings.agent },
		);
	}
	return agent;
}

function parseAgent(value: unknown, where: string): AgentSettings {
	const input = record(value, where);
	const format = input.format ?? 'text';
	if (!agentOutputFormats.includes(format as AgentOutputFormat)) {
		throw bad(
			`${where}.format is one of ${agentOutputFormats.join(', ')}, not ${JSON.stringify(format)}.`,
			`${where}.format`,
		);
	}
	const skills = input.skills ?? defaultSkillsDelivery(format as string);
	if (!skillsDeliveries.includes(skills as SkillsDelivery)) {
		throw bad(`${where}.skills is "claude", "inline" or "none", not ${JSON.stringify(skills)}.`, `${where}.skills`);
	}
	const name = string(input.name, `${where}.name`);
	if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
		throw bad(
			`${where}.name is letters, digits, dot, dash or underscore, not ${JSON.stringify(name)}.`,
			`${where}.name`,
		);
	}
	const command = string(input.command, `${where}.command`);
	if (command.trim() === '') {
		throw bad(`${where}.command is empty.`, `${where}.command`);
	}
	const mcp = input.mcp ?? 'auto';
	if (mcp !== 'auto' && mcp !== 'off') {
		throw bad(`${where}.mcp is "auto" or "off", not ${JSON.stringify(mcp)}.`, `${where}.mcp`);
	}
	const env = strings(input.env ?? [], `${where}.env`);
	const secretEnv = strings(input.secretEnv ?? [], `${where}.secretEnv`);
	return {
		name,
		command,
		args: strings(input.args ?? [], `${where}.args`),
		env: [...new Set([...env, ...secretEnv])],
		secretEnv,
		format: format as AgentOutputFormat,
		skills: skills as SkillsDelivery,
		network: boolean(input.network ?? false, `${where}.network`),
		homeFiles: strings(input.homeFiles ?? [], `${where}.homeFiles`),
		readPaths: strings(input.readPaths ?? [], `${where}.readPaths`),
		writePaths: strings(input.writePaths ?? [], `${where}.writePaths`),
		mcp,
	};
}

/**
 * The project's checks, by the same rules as an asset's (glossary: Checks; id, executable, args, cwd inside the
 * target, timeout in seconds), refused as a setting naming the check and field that is wrong.
 */
function parseChecks(value: unknown): AssetCheck[] {
	try {
		return validateChecks(value);
	} catch (error) {
		if (!isDeskError(error, 'asset.badChecks')) {
			throw error;
		}
		const { index, field } = error.data as { index?: number; field?: string };
		const where = index === undefined ? 'checks' : `checks[${index}]${field ? `.${field}` : ''}`;
		throw bad(`${where}: ${(error.data as { problem: string }).problem}.`, where);
	}
}

function bad(message: string, field: string): DeskError {
	return new DeskError('run.badSettings', message, { field });
}
function record(value: unknown, where: string): Record<string, unknown> {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		throw bad(`${where} is an object.`, where);
	}
	return value as Record<string, unknown>;
}
function array(value: unknown, where: string): unknown[] {
	if (!Array.isArray(value)) {
		throw bad(`${where} is a list.`, where);
	}
	return value;
}
function string(value: unknown, where: string): string {
	if (typeof value !== 'string') {
		throw bad(`${where} is text, not ${JSON.stringify(value)}.`, where);
	}
	return value;
}
function strings(value: unknown, where: string): string[] {
	return array(value, where).map((v, i) => string(v, `${where}[${i}]`));
}
function boolean(value: unknown, where: string): boolean {
	if (typeof value !== 'boolean') {
		throw bad(`${where} is true or false, not ${JSON.stringify(value)}.`, where);
	}
	return value;
}
