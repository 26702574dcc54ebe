/**
 * Project memory's file store with real processes (glossary: Project memory): two writers at once
 * lose nothing; a writer killed with SIGKILL before or after the rename leaves a valid old or new
 * file, and after a restart each request is applied exactly once; a writer killed at random points
 * never leaves a torn file nor loses an acknowledged memory.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { uuidv7 } from '../../../server/src/ai/ids';
import { isDeskError } from '../../../server/src/core/errors';
import { silentLogger } from '../../../server/src/core/logger';
import { parseMemoryFile } from '../../../server/src/lineage/memory';
import type { MemoryFile } from '../../../server/src/lineage/types';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { ProjectMemory } from '../../../server/src/store/memoryFiles';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { SqlMemory } from '../../../server/src/store/sqlMemory';
import { onLines } from '../../helpers/lines';
import { tempDir } from '../../helpers/temp';
import { rememberBatch } from './memoryBatches';

const writer = path.join(__dirname, 'memoryWriter.js');

function repoFolder(): string {
	const top = tempDir();
	fs.mkdirSync(path.join(top, '.desk'), { recursive: true });
	return top;
}

/** Runs the writer to its end (or its death at a kill point); the acks it printed and how it ended. */
function runWriter(
	top: string,
	name: string,
	start: number,
	count: number,
	fault?: string,
): Promise<{ acked: number[]; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
	const child = spawn(process.execPath, [writer, top, name, String(start), String(count)], {
		stdio: ['ignore', 'pipe', 'pipe'],
		env: { ...process.env, DESK_TEST_FAULTS: fault ?? '' },
	});
	const acked: number[] = [];
	let stderr = '';
	child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
	onLines(child.stdout, (line) => {
		const match = /^ack (\d+)$/.exec(line);
		if (match) {
			acked.push(Number(match[1]));
		}
	});
	return new Promise((resolve) => child.on('close', (code, signal) => resolve({ acked, code, signal, stderr })));
}

/** The memory of `top` as a desk process opens it (which drains the queue and cleans temp files). */
async function openMemory(top: string): Promise<{ memory: ProjectMemory; close(): void; queued(): number }> {
	const db = await DurableDatabase.open({
		file: path.join(top, '.desk', 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
		idleCheckpointMs: 60_000,
		lockTimeoutMs: 10_000,
	});
	const memory = new ProjectMemory(top, new SqlMemory(db), {
		locksFolder: path.join(top, '.desk', 'memory-locks'),
		git: { headFile: () => undefined, headBlobs: () => new Map() },
		logger: silentLogger,
	});
	memory.drainAll();
	return {
		memory,
		queued: () => db.get<{ n: number }>('SELECT count(*) AS n FROM memory_queue')!.n,
		close() {
			memory.close();
			db.close();
		},
	};
}

function fileOf(top: string): MemoryFile | undefined {
	const file = path.join(top, '.desk-memory', 'main.json');
	return fs.existsSync(file) ? parseMemoryFile(fs.readFileSync(file, 'utf8'), 'main') : undefined;
}

/** The request keys of the memories in the file, by their titles (`Memory <key>`), each counted. */
function keysIn(file: MemoryFile | undefined): Map<string, number> {
	const keys = new Map<string, number>();
	for (const memory of Object.values(file?.memories ?? {})) {
		const key = memory.title.replace(/^Memory /, '');
		keys.set(key, (keys.get(key) ?? 0) + 1);
	}
	return keys;
}

function tempFiles(top: string): string[] {
	return fs.readdirSync(path.join(top, '.desk-memory')).filter((n) => n.startsWith('.desk-tmp-'));
}

describe('project memory files', () => {
	it('two processes remembering at once: every memory of both is there, once', async () => {
		const top = repoFolder();
		const [a, b] = await Promise.all([runWriter(top, 'a', 0, 25), runWriter(top, 'b', 0, 25)]);
		assert.equal(a.code, 0, a.stderr);
		assert.equal(b.code, 0, b.stderr);
		const keys = keysIn(fileOf(top));
		assert.equal(keys.size, 50);
		assert.ok([...keys.values()].every((n) => n === 1));
		assert.equal(Object.keys(fileOf(top)!.requests).length, 50);
		const opened = await openMemory(top);
		assert.equal(opened.queued(), 0);
		opened.close();
	});

	for (const [point, renamed] of [
		['memory.beforeRename', false],
		['memory.afterRename.beforeQueueDelete', true],
	] as const) {
		it(`a writer killed at ${point}: the file is the ${renamed ? 'new' : 'old'} one, and a restart applies the batch exactly once`, async () => {
			const top = repoFolder();
			const first = await runWriter(top, 'w', 0, 2);
			assert.equal(first.code, 0, first.stderr);
			const old = fs.readFileSync(path.join(top, '.desk-memory', 'main.json'), 'utf8');
			const killed = await runWriter(top, 'w', 2, 1, point);
			assert.equal(killed.signal, 'SIGKILL', `it died at ${point}: ${killed.stderr}`);
			assert.deepEqual(killed.acked, []);
			const left = fileOf(top);
			if (renamed) {
				assert.deepEqual([...keysIn(left).keys()].sort(), ['w-0', 'w-1', 'w-2']);
				assert.ok(left!.requests['remember:w-2']);
			} else {
				assert.equal(fs.readFileSync(path.join(top, '.desk-memory', 'main.json'), 'utf8'), old, 'the old file, whole');
				assert.equal(tempFiles(top).length, 1, "the killed write's temp file");
			}
			const opened = await openMemory(top);
			try {
				assert.equal(opened.queued(), 0, 'the queue is drained at start');
				assert.deepEqual(tempFiles(top), [], 'temp files removed');
				const after = fileOf(top);
				assert.deepEqual([...keysIn(after).entries()].sort(), [
					['w-0', 1],
					['w-1', 1],
					['w-2', 1],
				]);
				// The caller's retry of the same request finds its receipt.
				const retry = opened.memory.submit(rememberBatch('w-2', uuidv7()));
				assert.equal(retry.replayed, true);
				assert.equal(keysIn(fileOf(top)).size, 3);
			} finally {
				opened.close();
			}
		});
	}

	it('a root whose lock another live process holds past the wait is memory.locked; the batch stays queued and is applied once', async () => {
		const top = repoFolder();
		const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
		try {
			fs.mkdirSync(path.join(top, '.desk', 'memory-locks'), { recursive: true });
			fs.writeFileSync(path.join(top, '.desk', 'memory-locks', 'main.lock'), `${holder.pid} held-by-test\n`);
			const db = await DurableDatabase.open({
				file: path.join(top, '.desk', 'project.db'),
				schema: projectSchema,
				migrations: projectMigrations,
				logger: silentLogger,
				idleCheckpointMs: 60_000,
			});
			const memory = new ProjectMemory(top, new SqlMemory(db), {
				locksFolder: path.join(top, '.desk', 'memory-locks'),
				git: { headFile: () => undefined, headBlobs: () => new Map() },
				logger: silentLogger,
				lockTimeoutMs: 300,
			});
			try {
				assert.throws(
					() => memory.submit(rememberBatch('locked-1', uuidv7())),
					(error: unknown) => isDeskError(error, 'memory.locked') && error.data.queued === true,
				);
				assert.equal(fileOf(top), undefined, 'nothing written');
				// Queued, it is applied by the next drain once the lock is free.
				assert.equal(memory.pending('main'), 1);
				holder.kill('SIGKILL');
				await new Promise((resolve) => holder.on('exit', resolve));
				memory.drainAll();
				assert.deepEqual([...keysIn(fileOf(top)).keys()], ['locked-1']);
			} finally {
				memory.close();
				db.close();
			}
		} finally {
			holder.kill('SIGKILL');
		}
	});

	it('a writer killed at random points never leaves a torn file nor loses an acknowledged memory', async (t) => {
		const top = repoFolder();
		const started = Date.now();
		let next = 0;
		let round = 0;
		// A root holds 200 memories at most: the writer stops there.
		for (; round < 12 && next < 200 && Date.now() - started < 40_000; round++) {
			const child = spawn(process.execPath, [writer, top, 'r', String(next), String(200 - next)], {
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			// Listened to from the start: a writer that ends before the kill must not leave the wait hanging.
			const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
				child.on('close', (code, signal) => resolve({ code, signal })),
			);
			let stderr = '';
			child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
			const acked: number[] = [];
			onLines(child.stdout!, (line) => {
				const match = /^ack (\d+)$/.exec(line);
				if (match) {
					acked.push(Number(match[1]));
				}
			});
			await new Promise((resolve) => setTimeout(resolve, 400 + Math.floor(Math.random() * 800)));
			child.kill('SIGKILL');
			const ended = await closed;
			assert.ok(ended.signal === 'SIGKILL' || ended.code === 0, `round ${round}: the writer failed: ${stderr}`);
			// At every instant the file is a whole document, old or new.
			const killedAt = fileOf(top);
			const opened = await openMemory(top);
			try {
				assert.equal(opened.queued(), 0);
				const keys = keysIn(fileOf(top));
				for (const n of acked) {
					assert.equal(keys.get(`r-${n}`), 1, `round ${round}: acknowledged r-${n}`);
				}
				assert.ok(
					[...keys.values()].every((c) => c === 1),
					`round ${round}: a memory twice`,
				);
				assert.ok(keys.size >= keysIn(killedAt).size);
				// One request at a time: the memories are r-0 … r-(n-1), the next key is unused.
				assert.deepEqual([...keys.keys()].sort(), Array.from({ length: keys.size }, (_, i) => `r-${i}`).sort());
				next = keys.size;
			} finally {
				opened.close();
			}
		}
		t.diagnostic(`${keysIn(fileOf(top)).size} memories over ${round} kills`);
	});
});
