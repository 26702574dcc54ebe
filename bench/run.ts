/**
 * `npm run bench`: every benchmark, each printing its numbers beside a baseline from the same run.
 * A benchmark that fails prints why and the others still run; the exit code is then 1.
 */
import { benchAssetsList, formatAssetsList } from './assetsList.bench';
import { benchBlobStore, formatBlobStore } from './blobStore.bench';
import { benchGitVersions, formatGitVersions } from './gitVersions.bench';
import { benchPersistence, formatPersistence } from './persistence.bench';
import { benchRealSizeGit, formatRealSizeGit } from './realSizeGit.bench';
import { benchSnapshot, formatSnapshot } from './snapshot.bench';
import { benchSuggest, formatSuggest } from './suggest.bench';

async function main(): Promise<void> {
	const quick = process.argv.includes('--quick');
	const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
	const benchmarks: Array<[string, () => Promise<string>]> = [
		['persistence', async () => formatPersistence(await benchPersistence(quick ? [1, 10] : [1, 100]))],
		['snapshot', async () => formatSnapshot(await benchSnapshot(quick ? 1_000 : 10_000, quick ? 15 : 150))],
		['git', async () => formatGitVersions(benchGitVersions(quick ? 2_000 : 20_000))],
		['suggest', async () => formatSuggest(await benchSuggest(quick ? 20 : 200))],
		['realgit', async () => formatRealSizeGit(await benchRealSizeGit({ quick, log: (line) => console.log(line) }))],
		['list', async () => formatAssetsList(await benchAssetsList(quick ? 200 : 1000, quick ? 25_000 : 126_791))],
		['blobs', async () => formatBlobStore(await (quick ? benchBlobStore(12_679, 5.8, 3) : benchBlobStore()))],
	];
	const known = benchmarks.map(([name]) => name);
	if (only && !known.includes(only)) {
		console.error(`unknown benchmark ${only}; one of ${known.join(', ')}`);
		process.exitCode = 64;
		return;
	}
	for (const [name, run] of benchmarks) {
		if (only && only !== name) {
			continue;
		}
		try {
			console.log(await run());
		} catch (error) {
			console.log(`${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
			process.exitCode = 1;
		}
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
