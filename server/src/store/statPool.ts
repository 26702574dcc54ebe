import * as fs from 'node:fs';
import * as os from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * lstat of many files at once, split over worker threads that each call lstatSync in a loop. An
 * unchanged snapshot of 10,000 files is mostly lstat calls; one after another on the main thread
 * they cost ~4 µs each, and libuv's asynchronous lstat costs more per call than it saves.
 * The workers are made on first use, kept, and never keep the process alive. Snapshots pass
 * `/proc/self/fd/<folder fd>/<name>` paths (ConfinedDir.statPath): the threads share the process's
 * descriptor table, so each lstat is confined to the folder the walk opened.
 */
export interface FileStat {
	/** -1: gone; -2: not a regular file any more. */
	size: number;
	mtimeMs: number;
	ctimeMs: number;
	ino: number;
	mode: number;
}

const fields = 5;

const workerSource = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', ({ id, paths }) => {
	const out = new Float64Array(paths.length * ${fields});
	for (let i = 0; i < paths.length; i++) {
		const st = fs.lstatSync(paths[i], { throwIfNoEntry: false });
		const at = i * ${fields};
		if (!st) { out[at] = -1; continue; }
		out[at] = st.isFile() ? st.size : -2;
		out[at + 1] = st.mtimeMs;
		out[at + 2] = st.ctimeMs;
		out[at + 3] = st.ino;
		out[at + 4] = st.mode;
	}
	parentPort.postMessage({ id, out }, [out.buffer]);
});
`;

/** Below this many files the threads cost more than they save. */
const parallelFrom = 2_000;

export class StatPool {
	private workers: Worker[] = [];
	private nextId = 1;
	private readonly pending = new Map<number, (out: Float64Array) => void>();

	async lstatAll(paths: readonly string[]): Promise<FileStat[]> {
		if (paths.length < parallelFrom) {
			return decode(statSync(paths), paths.length);
		}
		const workers = this.ensureWorkers();
		const chunk = Math.ceil(paths.length / workers.length);
		const parts = await Promise.all(
			workers.map((worker, w) => {
				const slice = paths.slice(w * chunk, (w + 1) * chunk);
				const id = this.nextId++;
				return new Promise<Float64Array>((resolve) => {
					this.pending.set(id, resolve);
					worker.postMessage({ id, paths: slice });
				});
			}),
		);
		const all = new Float64Array(paths.length * fields);
		let offset = 0;
		for (const part of parts) {
			all.set(part, offset);
			offset += part.length;
		}
		return decode(all, paths.length);
	}

	close(): void {
		for (const worker of this.workers) {
			void worker.terminate();
		}
		this.workers = [];
	}

	private ensureWorkers(): Worker[] {
		if (this.workers.length === 0) {
			const count = Math.max(2, Math.min(4, os.availableParallelism()));
			for (let i = 0; i < count; i++) {
				const worker = new Worker(workerSource, { eval: true });
				worker.unref();
				worker.on('message', ({ id, out }: { id: number; out: Float64Array }) => {
					this.pending.get(id)?.(out);
					this.pending.delete(id);
				});
				this.workers.push(worker);
			}
		}
		return this.workers;
	}
}

function statSync(paths: readonly string[]): Float64Array {
	const out = new Float64Array(paths.length * fields);
	for (let i = 0; i < paths.length; i++) {
		const st = fs.lstatSync(paths[i]!, { throwIfNoEntry: false });
		const at = i * fields;
		if (!st) {
			out[at] = -1;
			continue;
		}
		out[at] = st.isFile() ? st.size : -2;
		out[at + 1] = st.mtimeMs;
		out[at + 2] = st.ctimeMs;
		out[at + 3] = st.ino;
		out[at + 4] = st.mode;
	}
	return out;
}

function decode(values: Float64Array, count: number): FileStat[] {
	const stats: FileStat[] = new Array(count);
	for (let i = 0; i < count; i++) {
		const at = i * fields;
		stats[i] = {
			size: values[at]!,
			mtimeMs: values[at + 1]!,
			ctimeMs: values[at + 2]!,
			ino: values[at + 3]!,
			mode: values[at + 4]!,
		};
	}
	return stats;
}
