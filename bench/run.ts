/** `npm run bench`: every benchmark, each printing its numbers beside a baseline from the same run. */
import { benchPersistence, formatPersistence } from './persistence.bench';

async function main(): Promise<void> {
	const sizes = process.argv.includes('--quick') ? [1, 10] : [1, 100];
	console.log(formatPersistence(await benchPersistence(sizes)));
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
