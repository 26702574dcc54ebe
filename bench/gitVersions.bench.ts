/**
 * Git versions of a large repository (issue 3): 20,000 first-parent commits with a merge every
 * 50, made with `git fast-import`. Measures the desk's first listing of the versions, the listing
 * after one new commit, and the listing process's peak memory, beside
 * `git log --first-parent --reverse --format='%H %cI'` on the same repository.
 * Targets: first listing ≤ 3× git log; after one new commit ≤ 0.2× git log; peak memory < 400 MB.
 * DESK_BENCH_PROFILE=DIR writes a CPU profile of the listing process there.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { benchGitEnv } from './benchRepo';

export interface GitVersionsResult {
	commits: number;
	firstMs: number;
	afterOneMs: number;
	gitLogMs: number;
	peakMb: number;
}

const gitEnv = benchGitEnv;

/** A fast-import stream: `commits` first-parent commits on main, every 50th a merge of a side commit. */
function fastImportStream(commits: number): string {
	const parts: string[] = [];
	let mark = 0;
	let previous = 0;
	const time = 1_700_000_000;
	for (let i = 1; i <= commits; i++) {
		const blob = ++mark;
		const content = `line ${i}\n`;
		parts.push(`blob\nmark :${blob}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
		let side = 0;
		if (i % 50 === 0) {
			side = ++mark;
			const message = `side ${i}\n`;
			parts.push(
				`commit refs/heads/side\nmark :${side}\ncommitter b <b@example.com> ${time + i * 60 - 30} +0000\ndata ${message.length}\n${message}${previous ? `from :${previous}\n` : ''}M 100644 :${blob} side/${i % 97}.txt\n\n`,
			);
		}
		const commit = ++mark;
		const message = side ? `merge ${i}\n` : `commit ${i}\n`;
		parts.push(
			`commit refs/heads/main\nmark :${commit}\ncommitter b <b@example.com> ${time + i * 60} +0000\ndata ${message.length}\n${message}${previous ? `from :${previous}\n` : ''}${side ? `merge :${side}\n` : ''}M 100644 :${blob} dir${i % 20}/file${i % 200}.txt\n\n`,
		);
		previous = commit;
	}
	return parts.join('');
}

function time(body: () => void): number {
	const started = process.hrtime.bigint();
	body();
	return Number(process.hrtime.bigint() - started) / 1e6;
}

export function benchGitVersions(commits = 20_000): GitVersionsResult {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-git-'));
	try {
		const repo = path.join(root, 'repo');
		fs.mkdirSync(repo);
		const git = (...args: string[]) =>
			execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
		git('init', '-q', '-b', 'main');
		execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, env: gitEnv, input: fastImportStream(commits) });
		git('checkout', '-q', 'main');
		const count = Number(git('rev-list', '--first-parent', '--count', 'main').trim());
		const logOnce = () => git('log', '--first-parent', '--reverse', '--format=%H %cI', 'main');
		logOnce(); // Warm the page cache, as the desk's run is after it.
		const gitLogMs = Math.min(time(logOnce), time(logOnce), time(logOnce));

		// The listing runs in a process of its own, as the desk server does, so its peak memory is its own.
		const child = spawnSync(
			process.execPath,
			[
				...(process.env['DESK_BENCH_PROFILE']
					? ['--cpu-prof', '--cpu-prof-dir', process.env['DESK_BENCH_PROFILE']]
					: []),
				path.join(__dirname, 'gitVersionsChild.js'),
				path.join(root, 'library'),
				repo,
			],
			{ encoding: 'utf8', env: gitEnv },
		);
		if (child.status !== 0) {
			throw new Error(`the listing process failed: ${child.stderr}`);
		}
		const measured = JSON.parse(child.stdout) as {
			firstMs: number;
			afterOneMs: number;
			peakMb: number;
			versions: number;
			afterVersions: number;
		};
		if (measured.versions !== count || measured.afterVersions !== count + 1) {
			throw new Error(
				`the desk listed ${measured.versions} then ${measured.afterVersions} versions; git counts ${count}`,
			);
		}
		return {
			commits: count,
			firstMs: measured.firstMs,
			afterOneMs: measured.afterOneMs,
			gitLogMs,
			peakMb: measured.peakMb,
		};
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
}

export function formatGitVersions(r: GitVersionsResult): string {
	const ms = (n: number) => `${n.toFixed(0)} ms`.padStart(8);
	const ratio = (a: number, b: number, target: number) =>
		`${(a / b).toFixed(2)}× (target ≤ ${target}×: ${a / b <= target ? 'met' : 'NOT met'})`;
	return [
		`git versions: ${r.commits} first-parent commits (a merge every 50)`,
		`  first listing          ${ms(r.firstMs)}   vs git log --first-parent ${ms(r.gitLogMs)}   ${ratio(r.firstMs, r.gitLogMs, 3)}`,
		`  after one new commit   ${ms(r.afterOneMs)}   vs git log --first-parent ${ms(r.gitLogMs)}   ${ratio(r.afterOneMs, r.gitLogMs, 0.2)}`,
		`  peak memory of the listing process: ${r.peakMb.toFixed(0)} MB (target < 400 MB: ${r.peakMb < 400 ? 'met' : 'NOT met'})`,
	].join('\n');
}
