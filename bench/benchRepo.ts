import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * git for the benchmarks: the machine's and the user's config ignored, a fixed identity, and no
 * automatic housekeeping. A `git commit` that leaves more than gc.auto (6,700) loose objects, as
 * the snapshot benchmark's first commit of 10,000 files does, starts `git maintenance run --auto`,
 * whose `git gc --auto` detaches and goes on packing in the background after the commit returned:
 * it competed with the measurements that followed and wrote new packs into `.git/objects/pack`
 * while the benchmark removed the folder (ENOTEMPTY from rmSync). gc.auto=0 and
 * maintenance.auto=false (as `-c` options, through GIT_CONFIG_COUNT) keep every git the
 * benchmarks run in the foreground.
 */
export const benchGitEnv: NodeJS.ProcessEnv = {
	...process.env,
	GIT_CONFIG_NOSYSTEM: '1',
	GIT_CONFIG_GLOBAL: '/dev/null',
	GIT_CONFIG_COUNT: '3',
	GIT_CONFIG_KEY_0: 'gc.auto',
	GIT_CONFIG_VALUE_0: '0',
	GIT_CONFIG_KEY_1: 'maintenance.auto',
	GIT_CONFIG_VALUE_1: 'false',
	GIT_CONFIG_KEY_2: 'gc.autoDetach',
	GIT_CONFIG_VALUE_2: 'false',
	GIT_AUTHOR_NAME: 'b',
	GIT_AUTHOR_EMAIL: 'b@example.com',
	GIT_COMMITTER_NAME: 'b',
	GIT_COMMITTER_EMAIL: 'b@example.com',
};

/** A small git repository for benchmarks that need a project's own repo. */
export function makeBenchRepo(dir: string): string {
	fs.mkdirSync(dir, { recursive: true });
	const env = benchGitEnv;
	execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir, env });
	fs.writeFileSync(`${dir}/README.md`, '# bench\n');
	execFileSync('git', ['add', '.'], { cwd: dir, env });
	execFileSync('git', ['commit', '-q', '-m', 'bench'], { cwd: dir, env });
	return fs.realpathSync(dir);
}
