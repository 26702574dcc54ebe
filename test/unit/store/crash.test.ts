import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { it } from 'node:test';
import { silentLogger } from '../../../server/src/core/logger';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { onLines } from '../../helpers/lines';
import { tempDir } from '../../helpers/temp';
import { crashMigrations } from './crashSchema';

const rounds = 25;
const timeBudgetMs = 40_000;

it('a writer killed with SIGKILL at random points loses no acknowledged change and leaves a readable database', async (t) => {
	const file = path.join(tempDir(), 'crash.db');
	const writer = path.join(__dirname, 'crashWriter.js');
	const started = Date.now();
	let next = 1;
	let totalAcked = 0;
	let round = 0;
	for (; round < rounds && Date.now() - started < timeBudgetMs; round++) {
		const acked = await runAndKill(writer, file, next, 30 + Math.floor(Math.random() * 250));
		totalAcked += acked.length;

		const db = await DurableDatabase.open({
			file,
			schema: 'crash-test',
			migrations: crashMigrations,
			logger: silentLogger,
			idleCheckpointMs: 60_000,
		});
		try {
			const integrity = db.all<{ integrity_check: string }>('PRAGMA integrity_check');
			assert.deepEqual(
				integrity.map((r) => r.integrity_check),
				['ok'],
			);
			const rows = db.all<{ n: number }>('SELECT n FROM rows ORDER BY n').map((r) => r.n);
			for (const n of acked) {
				assert.ok(rows.includes(n), `round ${round}: acknowledged row ${n} is missing`);
			}
			// Rows are gap-free and at most one (the write in flight at the kill) past the last ack.
			assert.deepEqual(
				rows,
				Array.from({ length: rows.length }, (_, i) => i + 1),
				`round ${round}: rows have a gap`,
			);
			const last = acked.length > 0 ? acked[acked.length - 1]! : next - 1;
			assert.ok(
				rows.length === last || rows.length === last + 1,
				`round ${round}: ${rows.length} rows after last ack ${last}`,
			);
			const counter = db.get<{ value: number }>('SELECT value FROM counter WHERE id = 1')!.value;
			assert.equal(counter, rows.length, 'both statements of each transaction landed together');
			next = rows.length + 1;
		} finally {
			db.close();
		}
	}
	t.diagnostic(`${totalAcked} acknowledged writes over ${round} kills`);
	assert.ok(totalAcked > 50, `the writer acknowledged only ${totalAcked} writes; the test proved little`);
});

function runAndKill(script: string, file: string, start: number, killAfterMs: number): Promise<number[]> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [script, file, String(start)], { stdio: ['ignore', 'pipe', 'inherit'] });
		const acked: number[] = [];
		let timer: NodeJS.Timeout | undefined;
		onLines(child.stdout, (line) => {
			if (line === 'open') {
				timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
			} else if (line.startsWith('ack ')) {
				acked.push(Number(line.slice(4)));
			}
		});
		child.on('error', reject);
		child.on('exit', (code, signal) => {
			clearTimeout(timer);
			if (signal !== 'SIGKILL') {
				reject(new Error(`writer exited by itself (code ${code}, signal ${signal})`));
			} else {
				resolve(acked);
			}
		});
	});
}
