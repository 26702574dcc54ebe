/**
 * A memory writer for the store tests: opens a project database and the memory of the repository
 * folder given, then remembers `count` memories (request ids `remember:<name>-<n>`, from `start`) one
 * batch each, printing `ack N` after each one returned. With `DESK_TEST_FAULTS` naming a kill point
 * (`memory.beforeRename`, `memory.afterRename.beforeQueueDelete`) it dies by SIGKILL there, as the
 * desk does.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { uuidv7 } from '../../../server/src/ai/ids';
import { faultsFrom, testFaultsVariable } from '../../../server/src/core/faults';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { ProjectMemory } from '../../../server/src/store/memoryFiles';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { SqlMemory } from '../../../server/src/store/sqlMemory';
import { rememberBatch } from './memoryBatches';

async function main(): Promise<void> {
	const [top, name, startArg, countArg] = process.argv.slice(2);
	const db = await DurableDatabase.open({
		file: path.join(top!, '.desk', 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
		idleCheckpointMs: 1,
		journalLimitBytes: 16 * 1024,
		lockTimeoutMs: 10_000,
	});
	const memory = new ProjectMemory(top!, new SqlMemory(db), {
		locksFolder: path.join(top!, '.desk', 'memory-locks'),
		git: { headFile: () => undefined, headBlobs: () => new Map() },
		logger: silentLogger,
		faults: faultsFrom(process.env[testFaultsVariable], () => process.kill(process.pid, 'SIGKILL')),
		lockTimeoutMs: 20_000,
	});
	memory.drainAll();
	fs.writeSync(1, 'open\n');
	const end = Number(startArg) + Number(countArg);
	for (let n = Number(startArg); n < end; n++) {
		memory.submit(rememberBatch(`${name}-${n}`, uuidv7()));
		fs.writeSync(1, `ack ${n}\n`);
		if (n % 5 === 0) {
			await new Promise((resolve) => setImmediate(resolve));
		}
	}
	memory.close();
	db.close();
}

void main();
