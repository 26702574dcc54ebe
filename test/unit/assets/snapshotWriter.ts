/**
 * The snapshotting process of the snapshot crash test: changes files in a working folder and cuts
 * a version, again and again, printing `ack N <manifest>` after each acknowledged version.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../../server/src/core/logger';
import { Desk } from '../../../server/src/desk';

async function main(): Promise<void> {
	const [libraryDir, assetId, startArg] = process.argv.slice(2);
	const desk = await Desk.open({ libraryDir: libraryDir!, logger: silentLogger });
	const asset = desk.library.getAsset(assetId!);
	fs.writeSync(1, 'open\n');
	for (let round = Number(startArg); ; round++) {
		// A few new files of some size each round, and one file rewritten.
		for (let i = 0; i < 8; i++) {
			fs.writeFileSync(
				path.join(asset.working_dir, `r${round}-${i}.bin`),
				Buffer.alloc(20_000 + i * 1000, round % 251),
			);
		}
		fs.writeFileSync(path.join(asset.working_dir, 'counter.txt'), `round ${round}\n`);
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		fs.writeSync(1, `ack ${result.version.version} ${result.version.manifest}\n`);
	}
}

void main();
