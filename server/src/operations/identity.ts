import { execFile, execFileSync } from 'node:child_process';
import * as os from 'node:os';
import type { PersonIdentity } from './actor';

/**
 * The person at this machine: `user.name` and `user.email` of their own git configuration (global,
 * never a repository's, which its author controls), else their account name. Read once a process.
 */
export function personIdentity(): Promise<PersonIdentity> {
	identity ??= new Promise((resolve) => {
		execFile('git', globalIdentityArgs, gitOptions, (error, stdout) => resolve(identityOf(error ? '' : stdout)));
	});
	return identity;
}

let identity: Promise<PersonIdentity> | undefined;

/**
 * The same identity, read only when a field is first asked for: a `desk` command that writes nothing
 * never starts git for it (a process start is a good part of what a short command costs).
 */
export function personIdentityWhenAsked(): PersonIdentity {
	let known: PersonIdentity | undefined;
	const read = (): PersonIdentity => {
		if (known === undefined) {
			let stdout = '';
			try {
				stdout = execFileSync('git', globalIdentityArgs, {
					...gitOptions,
					encoding: 'utf8',
					stdio: ['ignore', 'pipe', 'ignore'],
				});
			} catch {
				// No git, or neither key set (git exits 1): the account name.
			}
			known = identityOf(stdout);
		}
		return known;
	};
	return {
		get name() {
			return read().name;
		},
		get email() {
			return read().email;
		},
	};
}

/** Both keys in one git process: `user.name Jane Doe` and `user.email jane@example.com`, a line each. */
const globalIdentityArgs = ['config', '--global', '--get-regexp', '^user\\.(name|email)$'];

const gitOptions = {
	cwd: os.homedir(),
	timeout: 5000,
	maxBuffer: 64 * 1024,
	env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
};

function identityOf(output: string): PersonIdentity {
	const values = new Map<string, string>();
	for (const line of output.split('\n')) {
		const space = line.indexOf(' ');
		const key = (space < 0 ? line : line.slice(0, space)).toLowerCase();
		// The last value wins, as for git config --get.
		if (key === 'user.name' || key === 'user.email') {
			values.set(
				key,
				space < 0
					? ''
					: line
							.slice(space + 1)
							.trim()
							.slice(0, 200),
			);
		}
	}
	const email = values.get('user.email');
	return { name: values.get('user.name') || accountName(), ...(email ? { email } : {}) };
}

function accountName(): string {
	try {
		return os.userInfo().username || 'unknown person';
	} catch {
		return 'unknown person';
	}
}
