/** Launch cards (glossary: Launch card, Suggestion, Plug): a ticket, a template and the assets plugged into it. */

export type PlugRole = 'reference' | 'target' | 'instructions';
export const plugRoles: readonly PlugRole[] = ['reference', 'target', 'instructions'];

/** AssetPlug (glossary: Plug). */
export interface AssetPlug {
	id: string;
	role: PlugRole;
	/** Nodes the plug reaches; empty means the template's reading nodes. */
	nodes: string[];
	/** References only: paths or globs to inline in full. */
	files: string[];
	/** References only: asset path → repo path, copied byte for byte into the run's worktree at go. */
	copy: Record<string, string>;
}

export interface LaunchTemplate {
	name: string;
	/** The nodes a run goes through, in order; all of them read plugs (plan, then work). */
	nodes: string[];
}

export const defaultTemplate: LaunchTemplate = { name: 'plan-work', nodes: ['plan', 'work'] };

export interface LaunchCard {
	project: string;
	ticket: string;
	template: LaunchTemplate;
	plugs: AssetPlug[];
}

/** A suggestion for the card (glossary: Suggestion): named assets first, then at most three word matches. */
export interface Suggestion {
	asset_id: string;
	name: string;
	/** Keeping it plugs it in this role: instructions for a skill, reference for the rest. */
	role: 'reference' | 'instructions';
	reason: string;
	/** Word matches: the summed BM25 weight of the matching terms, rounded to 2 decimals. */
	score?: number;
	/** Named with " vN". */
	version?: number;
	named: boolean;
}

/** How much of a project's suggestion index is ready: members indexed at their current version, of all members. */
export interface SuggestIndexProgress {
	indexed: number;
	total: number;
}

/** Suggestions with how much of the index they were ranked on (`indexed < total`: more may come). */
export interface SuggestResult {
	suggestions: Suggestion[];
	index: SuggestIndexProgress;
}

/** What a Go froze (LaunchAsset for every plug) and made. */
export interface LaunchRecord {
	launch_id: string;
	created_at: string;
	project: string;
	ticket: string;
	template: LaunchTemplate;
	plugs: Array<AssetPlug & { name: string; version: number }>;
	intent: string;
	task: string;
	run: string;
}
