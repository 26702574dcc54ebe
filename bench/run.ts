/** `npm run bench`: every benchmark, each printing its numbers beside a baseline from the same run. */
import { benchAssetsList, formatAssetsList } from './assetsList.bench';
import { benchBlobStore, formatBlobStore } from './blobStore.bench';
import { benchGitVersions, formatGitVersions } from './gitVersions.bench';
import { benchPersistence, formatPersistence } from './persistence.bench';
import { benchSnapshot, formatSnapshot } from './snapshot.bench';
import { benchSuggest, formatSuggest } from './suggest.bench';

async function main(): Promise<void> {
	const quick = process.argv.includes('--quick');
	const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
	if (!only || only === 'persistence') {
		console.log(formatPersistence(await benchPersistence(quick ? [1, 10] : [1, 100])));
	}
	if (!only || only === 'snapshot') {
		console.log(formatSnapshot(await benchSnapshot(quick ? 1_000 : 10_000, quick ? 15 : 150)));
	}
	if (!only || only === 'git') {
		console.log(formatGitVersions(benchGitVersions(quick ? 2_000 : 20_000)));
	}
	if (!only || only === 'suggest') {
		console.log(formatSuggest(await benchSuggest(quick ? 20 : 200)));
	}
	if (!only || only === 'list') {
		console.log(formatAssetsList(await benchAssetsList(quick ? 200 : 1000, quick ? 25_000 : 126_791)));
	}
	if (!only || only === 'blobs') {
		console.log(formatBlobStore(await (quick ? benchBlobStore(12_679, 5.8, 3) : benchBlobStore())));
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
