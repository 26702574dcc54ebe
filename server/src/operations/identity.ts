import { execFile } from 'node:child_process';
import * as os from 'node:os';
import type { PersonIdentity } from './actor';

/**
 * The person at this machine: `user.name` and `user.email` of their own git configuration (global,
 * never a repository's, which its author controls), else their account name. Read once a process.
 */
export function personIdentity(): Promise<PersonIdentity> {
	identity ??= Promise.all([globalGitConfig('user.name'), globalGitConfig('user.email')]).then(([name, email]) => ({
		name: name || accountName(),
		...(email ? { email } : {}),
	}));
	return identity;
}

let identity: Promise<PersonIdentity> | undefined;

function globalGitConfig(key: string): Promise<string> {
	return new Promise((resolve) => {
		execFile(
			'git',
			['config', '--global', '--get', key],
			{ cwd: os.homedir(), timeout: 5000, maxBuffer: 64 * 1024, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
			(error, stdout) => resolve(error ? '' : stdout.trim().slice(0, 200)),
		);
	});
}

function accountName(): string {
	try {
		return os.userInfo().username || 'unknown person';
	} catch {
		return 'unknown person';
	}
}
