/**
 * Messages between the launch card webview and the extension host. The webview never talks to the
 * desk server: the host relays. The host sends nothing before the webview says `ready`.
 */
export interface CardPlugView {
	id: string;
	role: 'reference' | 'target' | 'instructions';
	name: string;
	/** What go would freeze: "v3", or "working changes → v4", or why it cannot tell. */
	atGo: string;
	workingChanges: boolean;
}

export interface SuggestionView {
	id: string;
	name: string;
	role: 'reference' | 'instructions';
	reason: string;
	score?: number;
	named: boolean;
}

export interface CardState {
	project: string;
	ticket: string;
	plugs: CardPlugView[];
	suggestions: SuggestionView[];
	/** Set while the suggestions come from a partial index: how many member assets were indexed, of how many. */
	indexing?: { indexed: number; total: number };
	/** A refusal or failure to show, in words. */
	error?: string;
	/** Who Go would start and where, from the run settings: "Go runs agent claude in the shared checkout". */
	runWith?: string;
	/** Set right after a Go. */
	launched?: { runId: string; plugs: number };
	busy: boolean;
}

export type WebviewToHost =
	| { type: 'ready' }
	| { type: 'setTicket'; ticket: string }
	| { type: 'keep'; id: string; role: 'reference' | 'instructions' }
	| { type: 'unplug'; id: string }
	| { type: 'go' };

export type HostToWebview = { type: 'state'; state: CardState };

export function isHostMessage(value: unknown): value is HostToWebview {
	return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'state';
}
