/**
 * A forking process for the tally race: opens the project database in the folder named, waits until
 * the file `go` appears beside it (so two processes start together), then forks one branch of each
 * root named, as fast as it can, and prints each answer as a JSON line.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forkSettings, openLineage, personFork } from './lineageFixture';

async function main(): Promise<void> {
	const [folder, tag, ...roots] = process.argv.slice(2);
	const { db, lineage } = await openLineage(folder!);
	fs.writeSync(1, 'open\n');
	while (!fs.existsSync(path.join(folder!, 'go'))) {
		await new Promise((resolve) => setTimeout(resolve, 1));
	}
	const settings = forkSettings({ maxLiveBranches: 50, maxBranchesPerNode: 50 });
	for (const root of roots) {
		const result = lineage.fork(personFork(`${tag}-${root}`, { root, settings }));
		fs.writeSync(1, `${JSON.stringify(result)}\n`);
	}
	db.close();
}

void main();
