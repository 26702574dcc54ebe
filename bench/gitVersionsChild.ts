/**
 * The listing process of the git versions benchmark: adopts the repository into a fresh library,
 * lists its versions, adds one commit with git plumbing, lists again, and prints the times and its
 * own peak memory as JSON.
 */
import { execFileSync } from 'node:child_process';
import { silentLogger } from '../server/src/core/logger';
import { Desk } from '../server/src/desk';

async function main(): Promise<void> {
	const [libraryDir, repo] = process.argv.slice(2) as [string, string];
	const desk = await Desk.open({ libraryDir, logger: silentLogger });
	const { asset } = await desk.library.adoptRepo(repo, 'adopted');
	let started = process.hrtime.bigint();
	const versions = await desk.library.versions(asset.id);
	const firstMs = Number(process.hrtime.bigint() - started) / 1e6;

	const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
	const tree = git('rev-parse', 'HEAD^{tree}');
	const commit = git('commit-tree', tree, '-p', 'HEAD', '-m', 'one more');
	git('update-ref', 'refs/heads/main', commit);

	started = process.hrtime.bigint();
	const after = await desk.library.versions(asset.id);
	const afterOneMs = Number(process.hrtime.bigint() - started) / 1e6;
	desk.close();
	const peakMb = process.resourceUsage().maxRSS / 1024;
	process.stdout.write(
		JSON.stringify({ firstMs, afterOneMs, peakMb, versions: versions.length, afterVersions: after.length }),
	);
}

void main();
