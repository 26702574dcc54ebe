import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from './temp';

/**
 * Real git repositories for tests, made with the git binary in an environment that ignores the
 * machine's and the user's config, so that tests behave the same everywhere.
 */
export function gitEnv(home: string): NodeJS.ProcessEnv {
	return {
		...process.env,
		HOME: home,
		GIT_CONFIG_NOSYSTEM: '1',
		GIT_CONFIG_GLOBAL: testGlobalConfig(),
		GIT_AUTHOR_NAME: 'Test Author',
		GIT_AUTHOR_EMAIL: 'author@example.com',
		GIT_COMMITTER_NAME: 'Test Committer',
		GIT_COMMITTER_EMAIL: 'committer@example.com',
	};
}

let globalConfig: string | undefined;

/**
 * The global config of the tests' own git: nothing but `maintenance.auto = false`. Otherwise each
 * commit, merge and fetch starts `git maintenance run --auto`, a process of its own (the commonest
 * git process of some test files, and processes are dear on CI's machines), which may also repack
 * a repository under a test that reads its packs.
 */
function testGlobalConfig(): string {
	if (globalConfig === undefined) {
		const file = path.join(tempDir('desk-gitconfig-'), 'gitconfig');
		fs.writeFileSync(file, '[maintenance]\n\tauto = false\n');
		globalConfig = file;
	}
	return globalConfig;
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
	/**
	 * true: every commit rewrites one file, file.txt, instead of adding a file of its own, and the
	 * objects go into a pack: a long history whose trees stay small (thousands of commits each adding
	 * a file write trees of thousands of entries, a minute's work for 8,000).
	 */
	oneFile?: boolean;
}

/**
 * Makes a repository at `dir` with `commits` commits on `branch`, one file each: the commits that
 * `git add` and `git commit` one at a time would make (same ids, loose objects, an index and a work
 * tree that match), written by one `git fast-import` instead of three processes a commit. With
 * `oneFile`, each commit rewrites the same file and the objects are packed.
 */
export function makeRepo(dir: string, options: RepoOptions = {}): string {
	const branch = options.branch ?? 'main';
	const commits = options.commits ?? 3;
	fs.mkdirSync(dir, { recursive: true });
	git(dir, 'init', '-q', '-b', branch);
	if (commits > 0) {
		const env = gitEnv(dir);
		const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
		let stream = '';
		for (let i = 1; i <= commits; i++) {
			const when = `${(options.startTime ?? 1_700_000_000) + i * 60} +0100`;
			stream +=
				`commit refs/heads/${branch}\nmark :${i}\n` +
				`author ${env['GIT_AUTHOR_NAME']} <${env['GIT_AUTHOR_EMAIL']}> ${when}\n` +
				`committer ${env['GIT_COMMITTER_NAME']} <${env['GIT_COMMITTER_EMAIL']}> ${when}\n` +
				data(`commit ${i}\n`) +
				(i > 1 ? `from :${i - 1}\n` : '') +
				`M 100644 inline ${options.oneFile ? 'file.txt' : `file${i}.txt`}\n` +
				data(`content ${i}\n`);
		}
		// Below the unpack limit fast-import leaves loose objects, as commits made one by one do; a long
		// history of one file goes into a pack, as a clone's does (tens of thousands of loose objects
		// are seconds of file creation).
		const unpackLimit = options.oneFile ? 100 : 100_000;
		execFileSync('git', ['-c', `fastimport.unpackLimit=${unpackLimit}`, 'fast-import', '--quiet'], {
			cwd: dir,
			env,
			input: stream,
			stdio: ['pipe', 'ignore', 'pipe'],
		});
		git(dir, 'reset', '-q', '--hard');
	}
	return fs.realpathSync(dir);
}

/**
 * A repository as {@link makeRepo} makes it at `dir`, whose `origin` is a new bare repository at
 * `origin` holding its branch: a clone of a team's, to push and fetch through.
 */
export function makeRepoWithOrigin(dir: string, origin: string, options: RepoOptions = {}): string {
	const branch = options.branch ?? 'main';
	fs.mkdirSync(path.dirname(origin), { recursive: true });
	git(path.dirname(origin), 'init', '-q', '--bare', '-b', branch, origin);
	const repo = makeRepo(dir, options);
	git(repo, 'remote', 'add', 'origin', origin);
	git(repo, 'push', '-q', 'origin', `HEAD:refs/heads/${branch}`);
	return repo;
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
