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

/**
 * Whether the agent Go would start can start (glossary: Agent check), in words for the card: `ready`
 * (installed and signed in), `unknown` (installed; its sign-in the desk cannot tell), `signIn`
 * (installed, not signed in), `missing` (not installed: Go is refused), `checking` (not known yet).
 */
export interface AgentStatusView {
	state: 'ready' | 'unknown' | 'signIn' | 'missing' | 'checking';
	/** One line: "claude: Claude Code 2.1.3 (Claude Code) is not signed in". */
	text: string;
	/** What the check found, or why it cannot tell. */
	detail: string;
	/** The fixes, the main one first; the webview names one by its place in this list. */
	fixes: Array<{ title: string; hint?: string }>;
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
	/**
	 * Set right after a Go; `notStarted` once its run failed before its agent did anything (glossary:
	 * Agent check): why, for the card to offer Retry once the agent is ready.
	 */
	launched?: { runId: string; plugs: number; notStarted?: string };
	/** Whether the agent Go would start can start; absent where the desk does not look (an untrusted folder). */
	agent?: AgentStatusView;
	busy: boolean;
}

export type WebviewToHost =
	| { type: 'ready' }
	| { type: 'setTicket'; ticket: string }
	| { type: 'keep'; id: string; role: 'reference' | 'instructions' }
	| { type: 'unplug'; id: string }
	| { type: 'go' }
	/** The agent line's fix at `index` (a terminal with a command, or a setting), and its "Check Again". */
	| { type: 'fixAgent'; index: number }
	| { type: 'checkAgent' }
	/** Retry of the launched run that never started. */
	| { type: 'retryLaunched' };

export type HostToWebview = { type: 'state'; state: CardState };

export function isHostMessage(value: unknown): value is HostToWebview {
	return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'state';
}
