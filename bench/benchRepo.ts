import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

/** git for the benchmarks: the machine's and the user's config ignored, a fixed identity. */
export const benchGitEnv: NodeJS.ProcessEnv = {
	...process.env,
	GIT_CONFIG_NOSYSTEM: '1',
	GIT_CONFIG_GLOBAL: '/dev/null',
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
