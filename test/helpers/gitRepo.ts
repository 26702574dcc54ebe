import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Real git repositories for tests, made with the git binary in an environment that ignores the
 * machine's and the user's config, so that tests behave the same everywhere.
 */
export function gitEnv(home: string): NodeJS.ProcessEnv {
	return {
		...process.env,
		HOME: home,
		GIT_CONFIG_NOSYSTEM: '1',
		GIT_CONFIG_GLOBAL: '/dev/null',
		GIT_AUTHOR_NAME: 'Test Author',
		GIT_AUTHOR_EMAIL: 'author@example.com',
		GIT_COMMITTER_NAME: 'Test Committer',
		GIT_COMMITTER_EMAIL: 'committer@example.com',
	};
}

export function git(cwd: string, ...args: string[]): string {
	return execFileSync('git', args, {
		cwd,
		env: gitEnv(cwd),
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'pipe'],
	}).trim();
}

export interface RepoOptions {
	branch?: string;
	commits?: number;
	/** Seconds since the epoch of the first commit; each next one is a minute later. */
	startTime?: number;
}

/** Makes a repository at `dir` with `commits` commits on `branch`, one file each. */
export function makeRepo(dir: string, options: RepoOptions = {}): string {
	const branch = options.branch ?? 'main';
	fs.mkdirSync(dir, { recursive: true });
	git(dir, 'init', '-q', '-b', branch);
	for (let i = 1; i <= (options.commits ?? 3); i++) {
		commitFile(dir, `file${i}.txt`, `content ${i}\n`, `commit ${i}`, (options.startTime ?? 1_700_000_000) + i * 60);
	}
	return fs.realpathSync(dir);
}

export function commitFile(dir: string, file: string, content: string, message: string, time?: number): string {
	fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
	fs.writeFileSync(path.join(dir, file), content);
	git(dir, 'add', '--', file);
	const env = time === undefined ? {} : { GIT_AUTHOR_DATE: `@${time} +0100`, GIT_COMMITTER_DATE: `@${time} +0100` };
	execFileSync('git', ['commit', '-q', '-m', message], { cwd: dir, env: { ...gitEnv(dir), ...env }, stdio: 'ignore' });
	return git(dir, 'rev-parse', 'HEAD');
}

/** Commits everything in the work tree (links as links) and returns the new commit. */
export function commitAll(dir: string, message: string): string {
	git(dir, 'add', '-A');
	git(dir, 'commit', '-q', '-m', message);
	return git(dir, 'rev-parse', 'HEAD');
}

/**
 * Commits a gitlink at `file`: what a submodule is in its superproject's tree (mode 160000, the
 * commit it is at), without cloning anything. Returns the new commit.
 */
export function commitSubmodule(dir: string, file: string, commit: string, message: string): string {
	git(dir, 'update-index', '--add', '--cacheinfo', `160000,${commit},${file}`);
	git(dir, 'commit', '-q', '-m', message);
	return git(dir, 'rev-parse', 'HEAD');
}
