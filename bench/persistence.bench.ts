/**
 * Persistence cost against database size. For a 1 MB and a 100 MB library database it measures:
 * - one small durable change (a one-row transaction, journaled and fdatasync'ed before it returns),
 *   p50/p95/max over many changes;
 * - one full export (checkpoint: sql.js export + temp file + fsync + rename + fsync of the folder);
 * - the baseline of the same run: appending the same number of bytes to a plain file with
 *   fdatasync, the floor any durable change on this disk pays.
 * Target (issue 2): the same small-change latency at both sizes, under 5 ms at p95.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../server/src/core/logger';
import { DurableDatabase, type Migration } from '../server/src/store/durableDatabase';

const migrations: Migration[] = [
	{
		version: 1,
		statements: [
			'CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB NOT NULL)',
			'CREATE TABLE small (id INTEGER PRIMARY KEY, value TEXT NOT NULL)',
		],
	},
];

const changes = 400;

export interface PersistenceResult {
	sizeMb: number;
	fileMb: number;
	small: Stats;
	baseline: Stats;
	exportMs: Stats;
}

interface Stats {
	p50: number;
	p95: number;
	max: number;
}

export async function benchPersistence(sizesMb: number[] = [1, 100]): Promise<PersistenceResult[]> {
	const results: PersistenceResult[] = [];
	for (const sizeMb of sizesMb) {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-'));
		try {
			results.push(await measure(dir, sizeMb));
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	}
	return results;
}

async function measure(dir: string, sizeMb: number): Promise<PersistenceResult> {
	const file = path.join(dir, 'library.db');
	const db = await DurableDatabase.open({
		file,
		schema: 'bench',
		migrations,
		logger: silentLogger,
		idleCheckpointMs: 3_600_000,
		journalLimitBytes: 1 << 30,
	});
	// Fill to size in 1 MB rows (zeroblob is deterministic, so the journal replays to the same bytes).
	for (let i = 0; i < sizeMb; i++) {
		db.write((tx) => tx.run('INSERT INTO filler (data) VALUES (zeroblob(1048576 - 64))'));
	}
	db.checkpoint();
	const fileMb = fs.statSync(file).size / (1024 * 1024);

	const smallTimes: number[] = [];
	for (let i = 0; i < changes; i++) {
		const started = process.hrtime.bigint();
		db.write((tx) => tx.run('INSERT INTO small (value) VALUES (?)', [`change ${i} of a small durable record`]));
		smallTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
	}

	const exportTimes: number[] = [];
	for (let i = 0; i < 5; i++) {
		db.write((tx) => tx.run('INSERT INTO small (value) VALUES (?)', ['before export']));
		const started = process.hrtime.bigint();
		db.checkpoint();
		exportTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
	}
	db.close();

	// Baseline: the same number of appends of a record-sized buffer, each made durable with fdatasync.
	const baselineFile = path.join(dir, 'baseline.log');
	const fd = fs.openSync(baselineFile, 'a');
	const record = Buffer.alloc(120, 'x');
	const baselineTimes: number[] = [];
	for (let i = 0; i < changes; i++) {
		const started = process.hrtime.bigint();
		fs.writeSync(fd, record);
		fs.fdatasyncSync(fd);
		baselineTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
	}
	fs.closeSync(fd);

	return { sizeMb, fileMb, small: stats(smallTimes), baseline: stats(baselineTimes), exportMs: stats(exportTimes) };
}

function stats(values: number[]): Stats {
	const sorted = [...values].sort((a, b) => a - b);
	const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
	return { p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1]! };
}

export function formatPersistence(results: PersistenceResult[]): string {
	const ms = (n: number) => n.toFixed(2).padStart(8);
	const lines = [
		'persistence: one small durable change vs database size (ms)',
		'  db size   small p50  small p95  small max  | fdatasync p95 (baseline)  ratio | full export p50  export/small',
	];
	for (const r of results) {
		lines.push(
			`  ${`${r.fileMb.toFixed(0)} MB`.padStart(7)} ${ms(r.small.p50)}   ${ms(r.small.p95)}   ${ms(r.small.max)}  | ${ms(r.baseline.p95)}                  ${(r.small.p95 / r.baseline.p95).toFixed(2).padStart(5)} | ${ms(r.exportMs.p50)}         ${(r.exportMs.p50 / r.small.p95).toFixed(0).padStart(6)}x`,
		);
	}
	const first = results[0];
	const last = results[results.length - 1];
	if (first && last && first !== last) {
		const growth = last.small.p95 / first.small.p95;
		lines.push(
			`  small-change p95 at ${last.fileMb.toFixed(0)} MB / at ${first.fileMb.toFixed(0)} MB: ${growth.toFixed(2)} (target ≈ 1); p95 under 5 ms at both: ${results.every((r) => r.small.p95 < 5) ? 'yes' : 'NO'}`,
		);
	}
	return lines.join('\n');
}
