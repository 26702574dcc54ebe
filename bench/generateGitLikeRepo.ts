/**
 * `node out/bench/generateGitLikeRepo.js [--small] [--out=DIR]`: the git.git-shaped repository of
 * gitLikeRepo.ts, for a test or a look. Without --out it is generated into (or found in) the
 * benchmark's cache in the OS temp folder and its path printed; with --out it is generated there,
 * uncached. --small is the CI variant. Prints the repository's figures.
 */
import { formatGitLikeRepo, fullSize, generateGitLikeRepo, gitLikeRepo, smallSize } from './gitLikeRepo';

async function main(): Promise<void> {
	const params = process.argv.includes('--small') ? smallSize : fullSize;
	const out = process.argv.find((a) => a.startsWith('--out='))?.slice('--out='.length);
	if (out) {
		const figures = await generateGitLikeRepo(out, params, console.log);
		console.log(formatGitLikeRepo({ figures, reused: false }));
		console.log(out);
		return;
	}
	const repo = await gitLikeRepo(params, console.log);
	console.log(formatGitLikeRepo(repo));
	console.log(repo.dir);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
