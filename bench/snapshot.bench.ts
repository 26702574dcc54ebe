/**
 * Snapshot cost against git on the same folder (issue 3): a generated folder of ~10,000 files and
 * ~150 MB. Measures the first snapshot, a second with no changes and one with 10 files changed,
 * beside `cp -r` of the folder, `git add -A && git commit` into a fresh repository, `git status
 * --porcelain` on the unchanged folder, and add+commit of the 10 changed files.
 * Targets: first snapshot ≤ 1× git add+commit; unchanged ≤ 3× git status; 10 changed ≤ 3× git add+commit of them.
 * The unchanged case and git status are each the median of three runs.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../server/src/core/logger';
import { Desk } from '../server/src/desk';
import { benchGitEnv } from './benchRepo';

export interface SnapshotBenchResult {
	files: number;
	megabytes: number;
	firstMs: number;
	unchangedMs: number;
	tenChangedMs: number;
	cpMs: number;
	gitAddCommitMs: number;
	gitStatusMs: number;
	gitTenChangedMs: number;
}

function time(body: () => void): number {
	const started = process.hrtime.bigint();
	body();
	return Number(process.hrtime.bigint() - started) / 1e6;
}

async function timeAsync(body: () => Promise<unknown>): Promise<number> {
	const started = process.hrtime.bigint();
	await body();
	return Number(process.hrtime.bigint() - started) / 1e6;
}

function median(values: number[]): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)]!;
}

/** ~10,000 files in nested folders, sizes spread so that the total is about `megabytes`. */
function generate(folder: string, files: number, megabytes: number): string[] {
	const average = Math.floor((megabytes * 1024 * 1024) / files);
	const paths: string[] = [];
	// Mostly incompressible bytes (as source trees with assets are); a shared pool keeps generation fast.
	const pool = randomBytes(average * 4);
	for (let i = 0; i < files; i++) {
		const rel = path.join(`dir${i % 50}`, `sub${i % 7}`, `file${i}.dat`);
		fs.mkdirSync(path.join(folder, path.dirname(rel)), { recursive: true });
		const size = Math.max(16, Math.floor(average * (0.25 + ((i * 7919) % 1000) / 666)));
		const start = (i * 131) % (pool.length - size);
		fs.writeFileSync(
			path.join(folder, rel),
			Buffer.concat([Buffer.from(`${i}\n`), pool.subarray(start, start + size)]),
		);
		paths.push(rel);
	}
	return paths;
}

export async function benchSnapshot(files = 10_000, megabytes = 150): Promise<SnapshotBenchResult> {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-snap-'));
	try {
		const folder = path.join(root, 'work');
		const desk = await Desk.open({ libraryDir: path.join(root, 'library'), logger: silentLogger });
		try {
			const { asset } = await desk.library.newAsset({ name: 'bench', dir: folder, madeBy: 'user' });
			const paths = generate(folder, files, megabytes);
			execFileSync('sync');
			const firstMs = await timeAsync(() => desk.library.snapshot(asset.id, { madeBy: 'user' }));
			// The median of three, as the baseline below is: the check a person repeats.
			const unchangedRuns: number[] = [];
			for (let i = 0; i < 3; i++) {
				unchangedRuns.push(await timeAsync(() => desk.library.snapshot(asset.id, { madeBy: 'user' })));
			}
			const unchangedMs = median(unchangedRuns);
			const changed = paths.filter((_, i) => i % 1000 === 0).slice(0, 10);
			// Changed files must differ in size or mtime beyond the racy window to be seen by git too.
			const later = new Date(Date.now() + 5_000);
			for (const rel of changed) {
				fs.appendFileSync(path.join(folder, rel), 'changed\n');
				fs.utimesSync(path.join(folder, rel), later, later);
			}
			const tenChangedMs = await timeAsync(() => desk.library.snapshot(asset.id, { madeBy: 'user' }));

			// Baselines on a copy of the same folder as it was before the change.
			for (const rel of changed) {
				fs.writeFileSync(path.join(folder, rel), fs.readFileSync(path.join(folder, rel)).subarray(0, -8));
			}
			const copy = path.join(root, 'copy');
			const cpMs = time(() => execFileSync('cp', ['-r', folder, copy]));
			const repo = path.join(root, 'repo');
			execFileSync('cp', ['-r', folder, repo]);
			const git = (...args: string[]) =>
				execFileSync('git', args, {
					cwd: repo,
					stdio: 'ignore',
					env: benchGitEnv,
				});
			git('init', '-q');
			execFileSync('sync');
			const gitAddCommitMs = time(() => {
				git('add', '-A');
				git('commit', '-q', '-m', 'first');
			});
			git('status', '--porcelain'); // Let git refresh its index once, as a person's status would have.
			const gitStatusMs = median([0, 1, 2].map(() => time(() => git('status', '--porcelain'))));
			for (const rel of changed) {
				fs.appendFileSync(path.join(repo, rel), 'changed\n');
			}
			const gitTenChangedMs = time(() => {
				git('add', '-A');
				git('commit', '-q', '-m', 'ten');
			});
			return {
				files,
				megabytes,
				firstMs,
				unchangedMs,
				tenChangedMs,
				cpMs,
				gitAddCommitMs,
				gitStatusMs,
				gitTenChangedMs,
			};
		} finally {
			desk.close();
		}
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
}

export function formatSnapshot(r: SnapshotBenchResult): string {
	const ms = (n: number) => `${n.toFixed(0)} ms`.padStart(9);
	const ratio = (a: number, b: number, target: number) =>
		`${(a / b).toFixed(2)}× (target ≤ ${target}×: ${a / b <= target ? 'met' : 'NOT met'})`;
	return [
		`snapshot: ${r.files} files, ${r.megabytes} MB`,
		`  first snapshot       ${ms(r.firstMs)}   vs git add+commit ${ms(r.gitAddCommitMs)}   ${ratio(r.firstMs, r.gitAddCommitMs, 1)}   (cp -r ${ms(r.cpMs)}: ${(r.firstMs / r.cpMs).toFixed(2)}×)`,
		`  unchanged snapshot   ${ms(r.unchangedMs)}   vs git status     ${ms(r.gitStatusMs)}   ${ratio(r.unchangedMs, r.gitStatusMs, 3)}`,
		`  10 files changed     ${ms(r.tenChangedMs)}   vs git add+commit ${ms(r.gitTenChangedMs)}   ${ratio(r.tenChangedMs, r.gitTenChangedMs, 3)}`,
	].join('\n');
}
