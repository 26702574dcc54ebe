/**
 * The agent programs the desk knows by name (glossary: Agent check): how each prints its version,
 * how a person signs in to it, how it is installed, and where it keeps its sign-in. Facts only; what
 * the check reads of them is runs/agentCheck.ts's. Any other command is an agent too, of which the
 * desk knows only whether its program is there.
 */

export type AgentCliName = 'claude' | 'codex' | 'gemini';

export interface AgentCli {
	name: AgentCliName;
	/** What a person calls it. */
	product: string;
	/** Arguments that print its version and exit without a model, a network call or a prompt. */
	versionArgs: string[];
	/** Arguments of its interactive sign-in, run in a terminal; `loginHint` says what to do there. */
	loginArgs: string[];
	loginHint?: string;
	/** The shell command that installs it. */
	install: string;
	/**
	 * Environment variables any of which signs it in (an API key, a cloud provider's switch), as the
	 * agent sees them: a variable counts only when the agent's `env` setting passes it through.
	 */
	keyEnv: string[];
	/**
	 * Files of its sign-in, by the folder they are in: `home` (`~`), or the folder an environment
	 * variable names when it is set (Claude Code's CLAUDE_CONFIG_DIR, Codex's CODEX_HOME), else `home`
	 * joined with `dir`. `signedIn` reads the parsed JSON.
	 */
	loginFiles: Array<{
		folderEnv?: string;
		dir: string;
		file: string;
		/** What the file says, when it holds a sign-in; undefined when it holds none. */
		signedIn(json: unknown): string | undefined;
	}>;
	/**
	 * True where a sign-in may live where the desk cannot read it (Claude Code keeps it in the macOS
	 * keychain, Gemini CLI may use Google Cloud's default credentials): without evidence the check
	 * answers "unknown" rather than "not signed in".
	 */
	mayHideSignIn(platform: string): boolean;
}

const field = (json: unknown, ...path: string[]): unknown =>
	path.reduce<unknown>(
		(value, key) =>
			typeof value === 'object' && value !== null && !Array.isArray(value)
				? (value as Record<string, unknown>)[key]
				: undefined,
		json,
	);
const isText = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

export const agentClis: readonly AgentCli[] = [
	{
		name: 'claude',
		product: 'Claude Code',
		versionArgs: ['--version'],
		// Every version has the prompt's /login; `claude auth login` came later.
		loginArgs: [],
		loginHint: 'type /login in it and follow the sign-in',
		install: 'npm install -g @anthropic-ai/claude-code',
		keyEnv: [
			'ANTHROPIC_API_KEY',
			'ANTHROPIC_AUTH_TOKEN',
			'CLAUDE_CODE_OAUTH_TOKEN',
			'CLAUDE_CODE_USE_BEDROCK',
			'CLAUDE_CODE_USE_VERTEX',
		],
		loginFiles: [
			{
				folderEnv: 'CLAUDE_CONFIG_DIR',
				dir: '.claude',
				file: '.credentials.json',
				signedIn: (json) =>
					isText(field(json, 'claudeAiOauth', 'accessToken')) || isText(field(json, 'claudeAiOauth', 'refreshToken'))
						? 'with a Claude account'
						: undefined,
			},
			{
				dir: '',
				file: '.claude.json',
				signedIn: (json) => (isText(field(json, 'primaryApiKey')) ? 'with an API key' : undefined),
			},
		],
		mayHideSignIn: (platform) => platform === 'darwin',
	},
	{
		name: 'codex',
		product: 'Codex',
		versionArgs: ['--version'],
		loginArgs: ['login'],
		install: 'npm install -g @openai/codex',
		keyEnv: ['OPENAI_API_KEY'],
		loginFiles: [
			{
				folderEnv: 'CODEX_HOME',
				dir: '.codex',
				file: 'auth.json',
				signedIn: (json) =>
					isText(field(json, 'OPENAI_API_KEY'))
						? 'with an API key'
						: isText(field(json, 'tokens', 'refresh_token')) || isText(field(json, 'tokens', 'access_token'))
							? 'with a ChatGPT account'
							: undefined,
			},
		],
		mayHideSignIn: () => false,
	},
	{
		name: 'gemini',
		product: 'Gemini CLI',
		versionArgs: ['--version'],
		loginArgs: [],
		loginHint: 'choose how to sign in when it asks',
		install: 'npm install -g @google/gemini-cli',
		keyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_GENAI_USE_GCA'],
		loginFiles: [
			{
				dir: '.gemini',
				file: 'oauth_creds.json',
				signedIn: (json) =>
					isText(field(json, 'refresh_token')) || isText(field(json, 'access_token'))
						? 'with a Google account'
						: undefined,
			},
		],
		mayHideSignIn: () => true,
	},
];

/** The known program a command names, by its file name (`claude`, `/opt/bin/codex`); undefined for any other. */
export function agentCliOf(command: string): AgentCli | undefined {
	const name = command
		.split(/[\\/]/)
		.pop()!
		.replace(/\.(cmd|exe)$/i, '');
	return agentClis.find((cli) => cli.name === name);
}
