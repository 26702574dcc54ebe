/**
 * One of several writers of the shared-writers test: `count` read-modify-write transactions on one
 * database (read the counter in JavaScript, write it back plus one, add the row of that number),
 * printing `ack N` after each. A lost update would show as a duplicate or missing row.
 */
import * as fs from 'node:fs';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { crashMigrations } from './crashSchema';

async function main(): Promise<void> {
	const [file, countArg, name] = process.argv.slice(2);
	const db = await DurableDatabase.open({
		file: file!,
		schema: 'crash-test',
		migrations: crashMigrations,
		logger: silentLogger,
		journalLimitBytes: 16 * 1024,
		idleCheckpointMs: 5,
		lockTimeoutMs: 20_000,
	});
	for (let i = 0; i < Number(countArg); i++) {
		const n = db.write((tx) => {
			const value = tx.get<{ value: number }>('SELECT value FROM counter WHERE id = 1')!.value + 1;
			tx.run('UPDATE counter SET value = ? WHERE id = 1', [value]);
			tx.run('INSERT INTO rows (n, payload) VALUES (?, ?)', [value, `${name} ${i}`]);
			return value;
		});
		fs.writeSync(1, `ack ${n}\n`);
		if (i % 5 === 0) {
			await new Promise((resolve) => setTimeout(resolve, 1));
		}
	}
	db.close();
	fs.writeSync(1, 'done\n');
}

void main();
