import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { it } from 'node:test';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { onLines } from '../../helpers/lines';
import { tempDir } from '../../helpers/temp';
import { crashMigrations } from './crashSchema';

interface WriterRun {
	acked: number[];
	done: Promise<{ signal: NodeJS.Signals | null }>;
	kill(): void;
}

function startWriter(file: string, count: number, name: string): WriterRun {
	const child = spawn(process.execPath, [path.join(__dirname, 'sharedWriter.js'), file, String(count), name], {
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	const acked: number[] = [];
	onLines(child.stdout, (line) => {
		if (line.startsWith('ack ')) {
			acked.push(Number(line.slice(4)));
		}
	});
	const done = new Promise<{ signal: NodeJS.Signals | null }>((resolve, reject) => {
		child.on('error', reject);
		child.on('exit', (code, signal) =>
			signal || code === 0 ? resolve({ signal }) : reject(new Error(`${name} exited with ${code}`)),
		);
	});
	return { acked, done, kill: () => child.kill('SIGKILL') };
}

it('several processes writing one database at once take turns: no update lost, even when one is killed mid-write', async (t) => {
	const file = path.join(tempDir(), 'shared.db');
	(
		await DurableDatabase.open({ file, schema: 'crash-test', migrations: crashMigrations, logger: silentLogger })
	).close();
	const perWriter = 150;
	const victim = startWriter(file, 100_000, 'victim');
	const deadline = Date.now() + 10_000;
	while (victim.acked.length < 5 && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
	const writers = ['alpha', 'beta', 'gamma'].map((name) => startWriter(file, perWriter, name));
	// Killed while the others write: maybe holding the lock, maybe mid-append, maybe mid-checkpoint.
	await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 600));
	victim.kill();
	await Promise.all([...writers.map((w) => w.done), victim.done]);

	const db = await DurableDatabase.open({
		file,
		schema: 'crash-test',
		migrations: crashMigrations,
		logger: silentLogger,
	});
	try {
		const rows = db.all<{ n: number; payload: string }>('SELECT n, payload FROM rows ORDER BY n');
		const counter = db.get<{ value: number }>('SELECT value FROM counter WHERE id = 1')!.value;
		const acked = [...writers, victim].flatMap((w) => w.acked);
		t.diagnostic(
			`${acked.length} acknowledged writes from 4 processes, ${victim.acked.length} of them by the one killed`,
		);
		assert.equal(counter, rows.length);
		assert.deepEqual(
			rows.map((r) => r.n),
			Array.from({ length: rows.length }, (_, i) => i + 1),
			'every number once: no update was lost or doubled',
		);
		for (const w of writers) {
			assert.equal(w.acked.length, perWriter);
		}
		assert.equal(new Set(acked).size, acked.length, 'no two writers were told the same number');
		for (const n of acked) {
			assert.ok(n <= rows.length, `acknowledged ${n} is missing`);
		}
		assert.ok(
			rows.length === acked.length || rows.length === acked.length + 1,
			`${rows.length} rows for ${acked.length} acks`,
		);
		assert.ok(victim.acked.length > 0, 'the killed writer wrote before it died');
	} finally {
		db.close();
	}
});
