import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agentCliOf, type AgentCli } from '../agents/agentClis';
import { DeskError } from '../core/errors';
import { baseChildEnv, findProgram } from './programs';
import { contains, copiedIntoRunHome, coversHome, expandHome, insideHome } from './sandbox';
import { chooseAgent, type AgentSettings, type RunSettings } from './settings';
import type { AgentCheck, AgentFix } from './types';

/**
 * The agent check (glossary: Agent check): whether an agent can start, told before Go. It costs a
 * file lookup on the PATH, one `--version` of a program the desk knows, and reading the sign-in
 * files that program keeps: no model, no network, no tokens. A sign-in the desk cannot see (a
 * keychain, a cloud's default credentials, any program it does not know) is `unknown`, never a guess.
 * An answer is kept a few seconds, so a card that asks on each change starts no process each time.
 */

/** How long an answer is kept; a person who just signed in asks again with `fresh`. */
export const agentCheckTtlMs = 15_000;
/** A `--version` that takes longer than this is not waited for: the version stays unknown. */
const versionTimeoutMs = 5_000;
/** A sign-in file larger than this is no sign-in file of theirs. */
const maxLoginFileBytes = 1024 * 1024;

export interface AgentCheckOptions {
	/** Look again even when an answer is kept. */
	fresh?: boolean;
	/** The environment, home folder and platform the agent would start with (tests give their own). */
	env?: NodeJS.ProcessEnv;
	home?: string;
	platform?: NodeJS.Platform;
	now?: () => number;
	/**
	 * Whether a run would start the agent in the sandbox, where its home holds only its `homeFiles`
	 * (and the folders of its `readPaths` and `writePaths`): a sign-in file outside them is not seen there.
	 */
	sandboxed?: boolean;
}

const kept = new Map<string, { at: number; answer: Promise<AgentCheck> }>();

/** The check of `agent`, from the answer kept when it is recent enough and nothing it read changed. */
export function checkAgent(agent: AgentSettings, options: AgentCheckOptions = {}): Promise<AgentCheck> {
	const env = options.env ?? process.env;
	const home = options.home ?? os.homedir();
	const now = options.now ?? Date.now;
	const sandboxed = options.sandboxed ?? false;
	const key = JSON.stringify([agent, home, env.PATH, sandboxed, ...keyEnvOf(agent).map((name) => isSet(env[name]))]);
	const previous = kept.get(key);
	if (!options.fresh && previous && now() - previous.at < agentCheckTtlMs) {
		return previous.answer;
	}
	const answer = lookAt(agent, env, home, options.platform ?? process.platform, now, sandboxed);
	kept.set(key, { at: now(), answer });
	// A failure is not kept; a kept answer that is too old goes with the next check.
	answer.catch(() => kept.delete(key));
	for (const [other, entry] of kept) {
		if (now() - entry.at >= agentCheckTtlMs) {
			kept.delete(other);
		}
	}
	return answer;
}

/** The agents a check is asked for: the one named, else every one (`all`), else the one Go would start. */
export function agentsToCheck(settings: RunSettings, which: { agent?: string; all?: boolean }): AgentSettings[] {
	if (which.agent !== undefined) {
		const agent = settings.agents.find((a) => a.name === which.agent);
		if (!agent) {
			throw new DeskError(
				'run.unknownAgent',
				`No agent is named ${JSON.stringify(which.agent)}; the settings have ${settings.agents.map((a) => a.name).join(', ') || 'none'}.`,
				{ agent: which.agent },
			);
		}
		return [agent];
	}
	return which.all ? settings.agents : [chooseAgent(settings)];
}

/**
 * Go, Retry and Resume refuse an agent whose program is not there (`run.agentMissing`) before they
 * make anything: a run that cannot start is never made (glossary: Agent check).
 */
export function requireAgentProgram(settings: RunSettings, pathValue: string | undefined = process.env.PATH): void {
	const agent = chooseAgent(settings);
	if (!findProgram(agent.command, pathValue)) {
		const cli = agentCliOf(agent.command);
		throw new DeskError(
			'run.agentMissing',
			`${cli ? cli.product : 'The agent'} (${agent.command}, agent ${agent.name}) is not installed: its program is not ${agent.command.includes('/') ? 'there' : "in the PATH's absolute folders"}.${cli ? ` Install it with \`${cli.install}\`,` : ''} or choose another agent (setting agentDesk.runs.agent, or agentDesk.agents).`,
			{ agent: agent.name, command: agent.command },
		);
	}
}

async function lookAt(
	agent: AgentSettings,
	env: NodeJS.ProcessEnv,
	home: string,
	platform: NodeJS.Platform,
	now: () => number,
	sandboxed: boolean,
): Promise<AgentCheck> {
	const cli = agentCliOf(agent.command);
	const program = findProgram(agent.command, env.PATH);
	const base = {
		agent: agent.name,
		command: agent.command,
		...(cli ? { product: cli.product } : {}),
		label: cli?.product ?? agent.command,
		checked_at: new Date(now()).toISOString(),
	};
	if (!program) {
		const fixes: AgentFix[] = [
			...(cli ? [{ kind: 'terminal' as const, title: `Install ${cli.product}`, command: cli.install }] : []),
			{ kind: 'setting', title: 'Choose Another Agent', setting: 'agentDesk.runs.agent' },
		];
		return {
			...base,
			login: 'unknown',
			login_detail: `${agent.command} is not installed`,
			fixes,
		};
	}
	const [version, { unseen, ...signIn }] = await Promise.all([
		cli ? versionOf(program, cli, home) : Promise.resolve(undefined),
		Promise.resolve(signInOf(agent, cli, env, home, platform, sandboxed)),
	]);
	const fixes: AgentFix[] =
		unseen === 'not listed'
			? [{ kind: 'setting', title: 'Add Its Sign-In File to homeFiles', setting: 'agentDesk.agents' }]
			: cli && signIn.login === 'not-signed-in' && unseen === undefined
				? [
						{
							kind: 'terminal',
							title: `Sign In to ${cli.product}`,
							command: [agent.command, ...cli.loginArgs].map(shellWord).join(' '),
							...(cli.loginHint ? { hint: cli.loginHint } : {}),
						},
					]
				: [];
	// Claude Code prints "2.1.3 (Claude Code)": its name is said once.
	const label = cli && version ? `${cli.product} ${version.replace(` (${cli.product})`, '')}` : base.label;
	return { ...base, label, program, ...(version ? { version } : {}), ...signIn, fixes };
}

/** The first line its `--version` prints, in the home folder (never the repository), with the run's base environment. */
function versionOf(program: string, cli: AgentCli, home: string): Promise<string | undefined> {
	return new Promise((resolve) => {
		const child = execFile(
			program,
			cli.versionArgs,
			{ cwd: home, env: baseChildEnv(), timeout: versionTimeoutMs, maxBuffer: 64 * 1024, windowsHide: true },
			(error, stdout) => {
				const line = error
					? undefined
					: String(stdout)
							.split('\n')
							.map((l) => l.trim())
							.find((l) => l !== '');
				resolve(line?.slice(0, 120));
			},
		);
		child.stdin?.end();
	});
}

function signInOf(
	agent: AgentSettings,
	cli: AgentCli | undefined,
	env: NodeJS.ProcessEnv,
	home: string,
	platform: NodeJS.Platform,
	sandboxed: boolean,
): Pick<AgentCheck, 'login' | 'login_detail'> & { unseen?: 'not listed' | 'a link' } {
	if (!cli) {
		return { login: 'unknown', login_detail: 'the desk cannot tell whether this program needs a sign-in' };
	}
	// A variable counts only when the run gets it: the agent's env setting passes it through.
	const key = cli.keyEnv.find((name) => agent.env.includes(name) && isSet(env[name]));
	if (key) {
		return { login: 'signed-in', login_detail: `by ${key}` };
	}
	const looked: string[] = [];
	let unseen: { how: string; shown: string; why: 'not listed' | 'a link' } | undefined;
	for (const login of cli.loginFiles) {
		const folderFromEnv = login.folderEnv ? env[login.folderEnv] : undefined;
		const file = path.join(isSet(folderFromEnv) ? folderFromEnv! : path.join(home, login.dir), login.file);
		const shown = file.startsWith(`${home}${path.sep}`) ? `~/${path.relative(home, file)}` : file;
		looked.push(shown);
		const how = readJson(file);
		const signedIn = how === undefined ? undefined : login.signedIn(how);
		const sandbox = signedIn && sandboxed ? inSandbox(file, agent, home) : 'seen';
		if (signedIn && sandbox !== 'seen') {
			unseen ??= { how: signedIn, shown, why: sandbox };
		} else if (signedIn) {
			return { login: 'signed-in', login_detail: `${signedIn} (${shown})` };
		}
	}
	if (unseen) {
		// Signed in here, but not in a run: the sandbox shows the agent a home of its own.
		const given = agent.homeFiles.length > 0 ? agent.homeFiles.join(', ') : 'none';
		const remedy =
			unseen.why === 'a link'
				? `the sandbox gives the agent a home holding copies of its homeFiles, and ${unseen.shown} is a link, which is not copied. Make it a file`
				: `the sandbox gives the agent a home holding only its homeFiles (${given}). Add ${unseen.shown} to the homeFiles of agent ${agent.name} (agentDesk.agents)`;
		return {
			login: 'not-signed-in',
			login_detail: `${unseen.how} (${unseen.shown}), but a run does not see that file: ${remedy}, or turn the sandbox off (agentDesk.runs.sandbox)`,
			unseen: unseen.why,
		};
	}
	const notPassed = cli.keyEnv.filter((name) => !agent.env.includes(name) && isSet(env[name]));
	const unpassed = notPassed.length
		? `; ${notPassed.join(', ')} ${notPassed.length === 1 ? 'is' : 'are'} set but not passed to the agent (its env setting)`
		: '';
	if (cli.mayHideSignIn(platform)) {
		return {
			login: 'unknown',
			login_detail: `no sign-in in ${looked.join(' or ')} nor ${cli.keyEnv[0]}, but ${cli.product} may keep one where the desk cannot read it${unpassed}`,
		};
	}
	return {
		login: 'not-signed-in',
		login_detail: `no sign-in in ${looked.join(' or ')}, and ${cli.keyEnv.join(', ')} ${cli.keyEnv.length === 1 ? 'is' : 'are'} not set${unpassed}`,
	};
}

/**
 * Whether the agent sees `file` in a sandboxed run, by the rules the run is laid out by (sandbox.ts):
 * inside a folder of its `readPaths` or `writePaths` (shown where it is, unless it would cover the
 * home folder), or one of its `homeFiles` copied into the run's home (a regular file only).
 */
function inSandbox(file: string, agent: AgentSettings, home: string): 'seen' | 'not listed' | 'a link' {
	const folders = expandHome([...agent.readPaths, ...agent.writePaths], home);
	if (folders.some((folder) => !coversHome(folder, home) && contains(folder, file))) {
		return 'seen';
	}
	if (!insideHome(file, home) || !expandHome(agent.homeFiles, home).includes(file)) {
		return 'not listed';
	}
	return copiedIntoRunHome(file, home) ? 'seen' : 'a link';
}

function keyEnvOf(agent: AgentSettings): string[] {
	const cli = agentCliOf(agent.command);
	return cli ? [...cli.keyEnv, ...cli.loginFiles.flatMap((f) => (f.folderEnv ? [f.folderEnv] : []))] : [];
}

/** A sign-in file's JSON; undefined when it is missing, not a regular file, too large or not JSON. */
function readJson(file: string): unknown {
	try {
		const stat = fs.statSync(file);
		if (!stat.isFile() || stat.size > maxLoginFileBytes) {
			return undefined;
		}
		return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
	} catch {
		return undefined;
	}
}

function isSet(value: string | undefined): boolean {
	return value !== undefined && value.trim() !== '';
}

/** A word for a POSIX shell: as it is when it holds nothing the shell reads, else single-quoted. */
function shellWord(word: string): string {
	return /^[A-Za-z0-9_./:@%+=-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
