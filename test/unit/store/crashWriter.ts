/**
 * A writer for the crash test: appends numbered rows to a database as fast as it can and prints
 * `ack N` after each write returned (that is, after it was acknowledged as durable). The parent
 * kills it with SIGKILL at a random moment. Small journal limits make checkpoints (full exports)
 * frequent, so kills land in them too.
 */
import * as fs from 'node:fs';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { crashMigrations } from './crashSchema';

async function main(): Promise<void> {
	const [file, startArg] = process.argv.slice(2);
	const db = await DurableDatabase.open({
		file: file!,
		schema: 'crash-test',
		migrations: crashMigrations,
		logger: silentLogger,
		journalLimitBytes: 8 * 1024,
		idleCheckpointMs: 1,
		lockTimeoutMs: 5_000,
	});
	fs.writeSync(1, 'open\n');
	for (let n = Number(startArg); ; n++) {
		db.write((tx) => {
			tx.run('INSERT INTO rows (n, payload) VALUES (?, ?)', [n, `row ${n} `.repeat(20)]);
			tx.run('UPDATE counter SET value = ? WHERE id = 1', [n]);
		});
		fs.writeSync(1, `ack ${n}\n`);
		if (n % 7 === 0) {
			// Give the idle checkpoint its chance to run between writes.
			await new Promise((resolve) => setImmediate(resolve));
		}
	}
}

void main();
