/**
 * Real-size git (issue 11): does the desk read a repository the size of git.git at native speed
 * and in flat memory? On the repository of `gitLikeRepo.ts` (full: 24,000 first-parent commits,
 * 5,000 files, a pack over 400 MB; `--quick`: the same history with a ~120 MB pack), each desk
 * command runs as a cold process (`node --require out/bench/peakRss.js dist/desk.js --store LIB …
 * --json`) beside the native git command on the same repository in the same run; each is the best
 * of up to 3 runs (fewer when one run already took over 30 s), the page cache warm for both (git
 * and the first desk run read the pack before the runs that count).
 *
 * - `asset import --dir REPO --project p --main`, once (it adopts the repository): time and peak.
 * - `asset versions ID` vs `git log --first-parent --reverse --format='%H %cI'`: target ≤ 2×.
 *   Then, three times, one new commit (commit-tree + update-ref) and `asset versions ID` again:
 *   target ≤ 0.2× that git log; also shown less a bare `node -e 0` start.
 * - `asset show`, `asset files`, `asset cat ID Makefile`, `asset atgo`: target ≤ 0.25 s above a
 *   bare `node -e 0` start (measured in the same run); `asset files` also ≤ 3× `git ls-tree -r HEAD`.
 * - `asset diff ID A B`, A and B 4 versions apart (the last ones) vs `git diff --stat A B`: ≤ 3×.
 * - The peak RSS of every desk process: target < 250 MB.
 * - The desk server (`dist/server.js` over stdio, as the protocol tests start it), on its own
 *   library and its own copy of the repository: opens the repository as the workspace folder, then
 *   does what a window does (list assets, the main asset's versions, a version's files, three files
 *   read, two versions diffed); each request's time, and the server's peak RSS (VmHWM): < 250 MB.
 *   Then one new commit, and what the window asks after it (AtGo, the newest page of versions):
 *   target ≤ 0.2× git log (the history extended, not walked); every version in one answer is shown
 *   beside them without a target (5 MB of JSON that no window asks for).
 *
 * Every desk command has a timeout (120 s; DESK_BENCH_TIMEOUT_S to change it): a command that
 * fails or times out is reported as such and the benchmark goes on.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
	DiffVersions,
	GetAtGo,
	ListAssets,
	ListFiles,
	ListFolder,
	ListVersions,
	OpenWorkspace,
	ReadFile,
	type ResultOf,
} from '../server/src/protocol/protocol';
import { startServer, type RunningServer } from '../test/helpers/serverProcess';
import { findProjectRoot } from '../test/helpers/temp';
import { benchGitEnv } from './benchRepo';
import { formatGitLikeRepo, fullSize, gitLikeRepo, linkedCopy, smallSize, type GitLikeRepo } from './gitLikeRepo';

/** One measured command: the best run, every run, its peak memory, or why it has no figure. */
export interface Measure {
	ms?: number;
	runs: number[];
	peakMb?: number;
	failure?: string;
}

export interface Row {
	label: string;
	desk: Measure;
	/** The native command it is compared with, and the target ratio. */
	baseline?: { label: string; measure: Measure; target: number };
	/** Target for the time above a bare `node -e 0` start, in ms. */
	aboveStartTarget?: number;
	/** Show the time above a bare start without a target. */
	showAboveStart?: boolean;
	note?: string;
}

export interface ServerRow {
	label: string;
	ms?: number;
	failure?: string;
	note?: string;
	/** A figure the request should stay under, with what it is (0.2× a git command of the same run). */
	target?: { label: string; ms: number | undefined };
}

export interface RealSizeGitResult {
	variant: 'full' | 'quick';
	repo: GitLikeRepo;
	nodeStart: Measure;
	rows: Row[];
	server: ServerRow[];
	serverPeakMb?: number;
	serverFailure?: string;
	timeoutS: number;
}

const peakTargetMb = 250;

interface Run {
	ms: number;
	status: number | null;
	stdout: string;
	stderr: string;
	peakMb?: number;
	failure?: string;
}

export async function benchRealSizeGit(options: {
	quick: boolean;
	log?: (line: string) => void;
}): Promise<RealSizeGitResult> {
	const log = options.log ?? (() => undefined);
	const timeoutS = Number(process.env['DESK_BENCH_TIMEOUT_S'] ?? 120);
	const params = options.quick ? smallSize : fullSize;
	log(`real-size git: preparing the ${options.quick ? 'small (--quick)' : 'full'} git.git-shaped repository…`);
	const repo = await gitLikeRepo(params, (line) => log(line));
	const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-realgit-')));
	let server: RunningServer | undefined;
	try {
		const projectRoot = findProjectRoot();
		const deskJs = path.join(projectRoot, 'dist', 'desk.js');
		const preload = path.join(projectRoot, 'out', 'bench', 'peakRss.js');
		const work = linkedCopy(repo.dir, path.join(root, 'repo'));
		const library = path.join(root, 'library');
		const rssFile = path.join(root, 'rss');

		const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Run => {
			fs.rmSync(rssFile, { force: true });
			const started = process.hrtime.bigint();
			const r = spawnSync(command, args, {
				cwd,
				env,
				encoding: 'utf8',
				maxBuffer: 1024 * 1024 * 1024,
				timeout: timeoutS * 1000,
				killSignal: 'SIGKILL',
			});
			const ms = Number(process.hrtime.bigint() - started) / 1e6;
			let peakMb: number | undefined;
			try {
				peakMb = Number(fs.readFileSync(rssFile, 'utf8')) / 1024;
			} catch {
				peakMb = undefined;
			}
			let failure: string | undefined;
			if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
				failure = `timed out after ${timeoutS} s`;
			} else if (r.error) {
				failure = r.error.message;
			} else if (r.status !== 0) {
				failure = `exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ').slice(0, 300)}`;
			}
			return { ms, status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', peakMb, failure };
		};
		const desk = (...args: string[]): Run =>
			run(process.execPath, ['--require', preload, deskJs, '--store', library, ...args, '--json'], work, {
				...process.env,
				DESK_BENCH_RSS_FILE: rssFile,
			});
		const git = (...args: string[]): Run => run('git', args, work, benchGitEnv);
		const gitOut = (...args: string[]): string =>
			execFileSync('git', args, { cwd: work, env: benchGitEnv, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }).trim();

		/** Best of up to three runs; one run only when it took over 30 s or failed. */
		const measure = (body: () => Run, check?: (r: Run) => string | undefined, times = 3): Measure & { last?: Run } => {
			const m: Measure & { last?: Run } = { runs: [] };
			for (let i = 0; i < times; i++) {
				const r = body();
				const failure = r.failure ?? check?.(r);
				if (r.peakMb !== undefined) {
					m.peakMb = Math.max(m.peakMb ?? 0, r.peakMb);
				}
				if (failure) {
					m.failure = failure;
					m.last = r;
					break;
				}
				m.runs.push(r.ms);
				m.ms = Math.min(m.ms ?? Infinity, r.ms);
				m.last = r;
				if (r.ms > 30_000) {
					break;
				}
			}
			if (m.failure && m.ms === undefined) {
				m.runs = [];
			}
			return m;
		};

		const nodeStart = measure(() => run(process.execPath, ['-e', '0'], work, process.env), undefined, 5);
		log(`  node -e 0: ${nodeStart.ms?.toFixed(0)} ms`);
		const rows: Row[] = [];

		// Adopt the repository (once).
		log('  desk asset import --main…');
		const imported = desk('asset', 'import', '--dir', work, '--project', 'p', '--main');
		let id: string | undefined;
		try {
			id = imported.failure ? undefined : (JSON.parse(imported.stdout) as { asset: { id: string } }).asset.id;
		} catch {
			id = undefined;
		}
		rows.push({
			label: 'asset import --main (once)',
			desk: {
				ms: imported.failure ? undefined : imported.ms,
				runs: imported.failure ? [] : [imported.ms],
				peakMb: imported.peakMb,
				failure: imported.failure ?? (id ? undefined : 'no asset id in its output'),
			},
			showAboveStart: true,
		});
		if (!id) {
			return { variant: options.quick ? 'quick' : 'full', repo, nodeStart, rows, server: [], timeoutS };
		}

		// Versions, then versions after one new commit.
		const count = Number(gitOut('rev-list', '--first-parent', '--count', 'HEAD'));
		const gitLog = measure(() => git('log', '--first-parent', '--reverse', '--format=%H %cI', 'HEAD'));
		const versionsCheck = (expected: number) => (r: Run) => {
			try {
				const n = (JSON.parse(r.stdout) as unknown[]).length;
				return n === expected ? undefined : `listed ${n} versions; git counts ${expected}`;
			} catch {
				return 'its output is not JSON';
			}
		};
		log('  desk asset versions…');
		// First with no history cached (the first listing of a repository in a library, a walk of every
		// commit), then as every later process finds it (the history kept in the library's cache).
		const historyCache = path.join(library, 'cache', 'git-history');
		const firstListing = measure(() => {
			fs.rmSync(historyCache, { recursive: true, force: true });
			return desk('asset', 'versions', id);
		}, versionsCheck(count));
		rows.push({
			label: `asset versions (${count.toLocaleString('en-US')}), first`,
			desk: firstListing,
			baseline: { label: 'git log --first-parent', measure: gitLog, target: 2 },
		});
		rows.push({
			label: `asset versions (${count.toLocaleString('en-US')}), cached`,
			desk: measure(() => desk('asset', 'versions', id), versionsCheck(count)),
			baseline: { label: 'git log --first-parent', measure: gitLog, target: 2 },
		});
		log('  desk asset versions after one new commit (3 rounds)…');
		let afterCount = count;
		const afterRuns = measure(
			() => {
				const tree = gitOut('rev-parse', 'HEAD^{tree}');
				const commit = gitOut('commit-tree', tree, '-p', 'HEAD', '-m', `one more (${afterCount + 1})`);
				gitOut('update-ref', 'refs/heads/main', commit);
				afterCount++;
				return desk('asset', 'versions', id);
			},
			(r) => versionsCheck(afterCount)(r),
		);
		rows.push({
			label: 'asset versions after 1 new commit',
			desk: afterRuns,
			baseline: { label: 'git log --first-parent', measure: gitLog, target: 0.2 },
			showAboveStart: true,
		});

		// show, files, cat, atgo.
		const tipFiles = gitOut('ls-tree', '-r', '--name-only', 'HEAD').split('\n').length;
		log('  desk asset show / files / cat / atgo…');
		rows.push({ label: 'asset show', desk: measure(() => desk('asset', 'show', id)), aboveStartTarget: 250 });
		const filesCheck = (r: Run) => {
			try {
				const n = (JSON.parse(r.stdout) as { files: unknown[] }).files.length;
				return n === tipFiles ? undefined : `listed ${n} files; git has ${tipFiles}`;
			} catch {
				return 'its output is not JSON';
			}
		};
		rows.push({
			label: `asset files (${tipFiles.toLocaleString('en-US')})`,
			desk: measure(() => desk('asset', 'files', id), filesCheck),
			baseline: { label: 'git ls-tree -r HEAD', measure: measure(() => git('ls-tree', '-r', 'HEAD')), target: 3 },
			aboveStartTarget: 250,
		});
		const catPath = repo.figures.catPath;
		const catSize = Number(gitOut('cat-file', '-s', `HEAD:${catPath}`));
		rows.push({
			label: `asset cat ${catPath}`,
			desk: measure(
				() => desk('asset', 'cat', id, catPath),
				(r) => {
					try {
						const size = (JSON.parse(r.stdout) as { size: number }).size;
						return size === catSize ? undefined : `read ${size} bytes; git has ${catSize}`;
					} catch {
						return 'its output is not JSON';
					}
				},
			),
			baseline: {
				label: `git cat-file -p HEAD:${catPath}`,
				measure: measure(() => git('cat-file', '-p', `HEAD:${catPath}`)),
				target: Infinity,
			},
			aboveStartTarget: 250,
		});
		rows.push({ label: 'asset atgo', desk: measure(() => desk('asset', 'atgo', id)), aboveStartTarget: 250 });

		// diff of two versions 4 apart: the last ones the generator made (the new commits above change nothing).
		const firstParents = gitOut('rev-list', '--first-parent', '--reverse', 'HEAD').split('\n');
		const b = count;
		const a = b - 4;
		log(`  desk asset diff v${a} v${b}…`);
		rows.push({
			label: `asset diff v${a} v${b}`,
			desk: measure(() => desk('asset', 'diff', id, String(a), String(b))),
			baseline: {
				label: 'git diff --stat A B',
				measure: measure(() => git('diff', '--stat', firstParents[a - 1]!, firstParents[b - 1]!)),
				target: 3,
			},
		});

		// The desk server, as a window uses it, on its own library and copy of the repository.
		log('  the desk server…');
		const serverRows: ServerRow[] = [];
		let serverPeakMb: number | undefined;
		let serverFailure: string | undefined;
		const serverRepo = linkedCopy(repo.dir, path.join(root, 'server-repo'));
		try {
			server = await startServer(path.join(root, 'server-library'), { logLevel: 'warn' });
			const pid = server.child.pid!;
			const connection = server.connection;
			let stuck = false;
			const request = async <R>(
				label: string,
				definition: { method: string; result?: R },
				params: unknown,
			): Promise<R | undefined> => {
				if (stuck) {
					serverRows.push({ label, failure: 'skipped: an earlier request timed out' });
					return undefined;
				}
				const started = process.hrtime.bigint();
				let timer: NodeJS.Timeout | undefined;
				try {
					const result = await Promise.race([
						connection.sendRequest(definition.method, params) as Promise<R>,
						new Promise<never>((_, reject) => {
							timer = setTimeout(() => reject(new Error(`timed out after ${timeoutS} s`)), timeoutS * 1000);
						}),
					]);
					serverRows.push({ label, ms: Number(process.hrtime.bigint() - started) / 1e6 });
					return result;
				} catch (error) {
					const message = (error as Error).message;
					stuck ||= message.startsWith('timed out');
					serverRows.push({ label, failure: message.slice(0, 300) });
					return undefined;
				} finally {
					clearTimeout(timer);
				}
			};
			const opened = await request('open workspace (adopts the repository)', OpenWorkspace, {
				folders: [{ name: 'repo', path: serverRepo }],
			});
			const folder = opened?.folders[0];
			const assetId = folder?.outcome === 'adopted' ? folder.asset.id : undefined;
			if (opened && !assetId) {
				serverRows[serverRows.length - 1]!.failure = `not adopted: ${JSON.stringify(folder).slice(0, 200)}`;
			}
			await request('list assets', ListAssets, {});
			if (assetId) {
				// As the Assets view does: the newest page of versions, then a version a folder at a time.
				const newest = await request<ResultOf<typeof ListVersions>>('list the newest 200 versions', ListVersions, {
					id: assetId,
					from: Math.max(1, count - 199),
				});
				const last = newest?.total ?? count;
				const top = await request<ResultOf<typeof ListFolder>>(`list the top folder of v${last}`, ListFolder, {
					id: assetId,
					version: last,
					folder: '',
				});
				const folder = top?.folders.includes('builtin') ? 'builtin' : top?.folders[0];
				if (folder !== undefined) {
					await request(`list the folder ${folder}/`, ListFolder, { id: assetId, version: last, folder });
				}
				const serverFiles = gitOut('-C', serverRepo, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n');
				const reads = [
					catPath,
					serverFiles.find((f) => f.startsWith('builtin/')) ?? serverFiles[1]!,
					serverFiles.find((f) => f.startsWith('Documentation/') && f.endsWith('.txt')) ?? serverFiles[2]!,
				];
				for (const file of reads) {
					await request(`read ${file}`, ReadFile, { id: assetId, path: file, version: last });
				}
				await request(`diff v${last - 4} v${last}`, DiffVersions, { id: assetId, from: last - 4, to: last });
				const listed = await request<ResultOf<typeof ListFiles>>(
					`list all files of v${last} (the CLI's view)`,
					ListFiles,
					{ id: assetId, version: last },
				);
				if (listed && listed.files.length !== serverFiles.length) {
					serverRows.find((r) => r.label.startsWith('list all files'))!.note =
						`${listed.files.length} files; git has ${serverFiles.length}`;
				}
				// One new commit, as a fetch or a commit in the window brings: the history is extended, not walked.
				const tree = gitOut('-C', serverRepo, 'rev-parse', 'HEAD^{tree}');
				const commit = gitOut('-C', serverRepo, 'commit-tree', tree, '-p', 'HEAD', '-m', 'one more in the window');
				gitOut('-C', serverRepo, 'update-ref', 'HEAD', commit);
				const atGo = await request<ResultOf<typeof GetAtGo>>('AtGo after one new commit', GetAtGo, { id: assetId });
				if (atGo && (atGo.engine !== 'git' || atGo.version !== last + 1)) {
					serverRows[serverRows.length - 1]!.note = `AtGo said v${atGo.version}, not v${last + 1}`;
				}
				serverRows[serverRows.length - 1]!.target = {
					label: '0.2× git log --first-parent',
					ms: gitLog.ms === undefined ? undefined : gitLog.ms * 0.2,
				};
				// What the Assets view asks next: the newest page, which now ends at the new commit.
				const page = await request<ResultOf<typeof ListVersions>>(
					'the newest 200 versions after one new commit',
					ListVersions,
					{ id: assetId, from: Math.max(1, last + 1 - 199) },
				);
				if (page && page.total !== last + 1) {
					serverRows[serverRows.length - 1]!.note = `${page.total} versions, not ${last + 1}`;
				}
				serverRows[serverRows.length - 1]!.target = {
					label: '0.2× git log --first-parent',
					ms: gitLog.ms === undefined ? undefined : gitLog.ms * 0.2,
				};
				// Every version in one answer (no window asks this: the view pages): the time is the
				// 5 MB of JSON made, sent and parsed, not the history, which the page above shows extended.
				await request('all versions after one new commit', ListVersions, { id: assetId });
				serverRows[serverRows.length - 1]!.note = 'one 5 MB answer; no target (the view asks 200 at a time)';
			}
			serverPeakMb = vmHwmMb(pid);
		} catch (error) {
			serverFailure = (error as Error).message.slice(0, 300);
		} finally {
			if (server) {
				serverPeakMb ??= vmHwmMb(server.child.pid!);
				await stopServer(server);
				server = undefined;
			}
		}
		return {
			variant: options.quick ? 'quick' : 'full',
			repo,
			nodeStart,
			rows,
			server: serverRows,
			serverPeakMb,
			serverFailure,
			timeoutS,
		};
	} finally {
		if (server) {
			await stopServer(server);
		}
		fs.rmSync(root, { recursive: true, force: true });
	}
}

/** The peak resident set of a running process, from /proc. */
function vmHwmMb(pid: number): number | undefined {
	try {
		const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
		return match ? Number(match[1]) / 1024 : undefined;
	} catch {
		return undefined;
	}
}

/** Stops the server; one still busy after a few seconds is killed, and waited for either way. */
async function stopServer(server: RunningServer): Promise<void> {
	const child = server.child;
	if (child.exitCode !== null || child.signalCode !== null) {
		return;
	}
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
	void server.stop().catch(() => child.kill('SIGKILL'));
	await exited;
	clearTimeout(killer);
}

export function formatRealSizeGit(r: RealSizeGitResult): string {
	const start = r.nodeStart.ms ?? 0;
	const ms = (n: number | undefined) => (n === undefined ? '-' : `${n.toFixed(0)} ms`).padStart(9);
	const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
	const lines = [
		`real-size git: a git.git-shaped repository (${r.variant === 'quick' ? 'small variant, --quick' : 'full size'}); each figure the best of up to 3 cold processes`,
		formatGitLikeRepo(r.repo),
	];
	lines.push(`  node -e 0 (bare start)                 ${ms(r.nodeStart.ms)}`);
	let total = 0;
	let passed = 0;
	const count = (ok: boolean) => {
		total++;
		passed += ok ? 1 : 0;
		return met(ok);
	};
	for (const row of r.rows) {
		const d = row.desk;
		const parts: string[] = [
			`  ${row.label.padEnd(38)} ${d.failure && d.ms === undefined ? `   FAILED: ${d.failure}` : ms(d.ms)}`,
		];
		if (d.failure && d.ms !== undefined) {
			parts.push(`(then FAILED: ${d.failure})`);
		}
		if (row.baseline) {
			const b = row.baseline;
			parts.push(
				`vs ${b.label} ${ms(b.measure.ms).trim()}${b.measure.failure ? ` (FAILED: ${b.measure.failure})` : ''}`,
			);
			if (Number.isFinite(b.target)) {
				if (d.ms !== undefined && b.measure.ms !== undefined) {
					const ratio = d.ms / b.measure.ms;
					parts.push(`${ratio.toFixed(2)}× (target ≤ ${b.target}×: ${count(ratio <= b.target)})`);
				} else {
					parts.push(`(target ≤ ${b.target}×: ${count(false)})`);
				}
			}
		}
		if (row.aboveStartTarget !== undefined || row.showAboveStart) {
			if (d.ms !== undefined) {
				const above = d.ms - start;
				parts.push(
					`${above.toFixed(0)} ms above node start${row.aboveStartTarget !== undefined ? ` (target ≤ ${row.aboveStartTarget} ms: ${count(above <= row.aboveStartTarget)})` : ''}`,
				);
			} else if (row.aboveStartTarget !== undefined) {
				parts.push(`(target ≤ ${row.aboveStartTarget} ms above node start: ${count(false)})`);
			}
		}
		parts.push(
			`peak ${d.peakMb === undefined ? 'unknown' : `${d.peakMb.toFixed(0)} MB`} (target < ${peakTargetMb} MB: ${count(d.peakMb !== undefined && d.peakMb < peakTargetMb)})`,
		);
		if (d.runs.length > 0) {
			parts.push(`[${d.runs.length} run${d.runs.length === 1 ? '' : 's'}]`);
		}
		if (row.note) {
			parts.push(row.note);
		}
		lines.push(parts.join('   '));
	}
	lines.push(`  desk server (dist/server.js over stdio; its own library and copy of the repository):`);
	if (r.serverFailure) {
		lines.push(`    FAILED: ${r.serverFailure}`);
	}
	for (const row of r.server) {
		const failure = row.failure ? `   ${row.failure.startsWith('skipped') ? '' : 'FAILED: '}${row.failure}` : '';
		let target = '';
		if (row.target?.ms !== undefined) {
			target = `   (target ≤ ${row.target.label} = ${row.target.ms.toFixed(0)} ms: ${count(row.ms !== undefined && row.ms <= row.target.ms)})`;
		}
		lines.push(
			`    ${row.label.padEnd(44)} ${row.ms !== undefined ? ms(row.ms) : ''}${target}${failure}${row.note ? `   ${row.note}` : ''}`,
		);
	}
	lines.push(
		`    peak RSS (VmHWM)                             ${r.serverPeakMb === undefined ? '  unknown' : `${r.serverPeakMb.toFixed(0)} MB`.padStart(9)}   (target < ${peakTargetMb} MB: ${count(r.serverPeakMb !== undefined && r.serverPeakMb < peakTargetMb)})`,
	);
	lines.push(`  targets met: ${passed} of ${total} (timeout ${r.timeoutS} s a command)`);
	return lines.join('\n');
}
