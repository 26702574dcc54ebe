/**
 * Blob store disk use and speed at library size (issue 11): a library measured at 1,000 assets and
 * 126,791 versions held 58 MB of blobs in 1,017 MB on disk, one file per blob. This writes the same
 * shape (126,791 small blobs totalling ~58 MB, sizes log-normal around a median of ~200 bytes, plus
 * a dozen large ones) in batches as snapshots make them (mostly a few blobs, sometimes hundreds),
 * into the store as it is (small blobs packed) and, as the baseline of the same run, into a store
 * that writes every blob as a file of its own (layout 1). It prints data bytes against bytes on
 * disk (st_blocks × 512 over the whole store; target ≤ 2×), write time, random-read latency of a
 * process that has read nothing yet, a cold open plus first read, and a has() of a missing blob.
 * The page cache is warm in both cases (the blobs were just written).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BlobStore, type BlobStoreOptions } from '../server/src/store/blobStore';

export interface BlobBenchVariant {
	diskBytes: number;
	files: number;
	writeMs: number;
	readP50Us: number;
	readP95Us: number;
	coldFirstReadMs: number;
	hasMissUs: number;
	packs: number;
}

export interface BlobBenchResult {
	smallBlobs: number;
	smallBytes: number;
	largeBlobs: number;
	largeBytes: number;
	batches: number;
	sizes: { p50: number; p95: number; max: number };
	packed: BlobBenchVariant;
	baseline: BlobBenchVariant;
}

/** A seeded generator, so both stores get the same blobs and runs compare. */
function generator(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const percentile = (values: number[], q: number) =>
	[...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

function workload(
	smallCount: number,
	smallMegabytes: number,
	largeCount: number,
): { blobs: Buffer[]; batches: number[] } {
	const random = generator(11);
	const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
	// Log-normal (sigma 1.3): many blobs of a few hundred bytes, a tail of tens of KiB.
	const raw = Array.from({ length: smallCount }, () => Math.exp(normal() * 1.3));
	const scale = (smallMegabytes * 1_000_000) / raw.reduce((a, b) => a + b, 0);
	const pool = Buffer.alloc(4 * 1024 * 1024);
	for (let i = 0; i < pool.length; i += 4) {
		pool.writeUInt32LE(Math.floor(random() * 4294967296), i);
	}
	const blobs: Buffer[] = [];
	for (const [i, r] of raw.entries()) {
		const size = Math.max(16, Math.min(64 * 1024 - 16, Math.round(r * scale)));
		const start = Math.floor(random() * (pool.length - size));
		// A unique first line makes every blob distinct.
		blobs.push(Buffer.concat([Buffer.from(`${i}\n`), pool.subarray(start, start + size)]).subarray(0, size));
	}
	for (let i = 0; i < largeCount; i++) {
		const size = 128 * 1024 + Math.floor(random() * 2 * 1024 * 1024);
		blobs.splice(
			Math.floor(random() * blobs.length),
			0,
			Buffer.concat([Buffer.from(`large ${i}\n`), Buffer.alloc(size, i)]),
		);
	}
	// Batch sizes as snapshots make them: most change a few files, some tens, a few hundreds.
	const batches: number[] = [];
	for (let left = blobs.length; left > 0;) {
		const p = random();
		const n = Math.min(
			left,
			p < 0.7
				? 1 + Math.floor(random() * 4)
				: p < 0.95
					? 5 + Math.floor(random() * 36)
					: 50 + Math.floor(random() * 350),
		);
		batches.push(n);
		left -= n;
	}
	return { blobs, batches };
}

/** st_blocks × 512 of every file and folder under `dir`, and the number of files. */
function diskUse(dir: string): { bytes: number; files: number } {
	let bytes = 0;
	let files = 0;
	const walk = (d: string) => {
		bytes += fs.lstatSync(d).blocks * 512;
		for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, entry.name);
			if (entry.isDirectory()) {
				walk(p);
			} else {
				bytes += fs.lstatSync(p).blocks * 512;
				files++;
			}
		}
	};
	walk(dir);
	return { bytes, files };
}

async function measure(
	root: string,
	options: BlobStoreOptions,
	blobs: Buffer[],
	batches: number[],
	hashes: string[],
): Promise<BlobBenchVariant> {
	const store = new BlobStore(root, options);
	let next = 0;
	const started = process.hrtime.bigint();
	for (const n of batches) {
		const batch = store.batch();
		for (let i = 0; i < n; i++) {
			batch.add(blobs[next]!, hashes[next]);
			next++;
		}
		await batch.commit();
	}
	const writeMs = Number(process.hrtime.bigint() - started) / 1e6;
	store.close();
	const { bytes, files } = diskUse(root);

	// A process that has read nothing yet opens the store and reads one blob.
	const random = generator(5);
	const pick = () => {
		for (;;) {
			const i = Math.floor(random() * blobs.length);
			if (blobs[i]!.length <= 64 * 1024) {
				return i;
			}
		}
	};
	const coldRuns: number[] = [];
	for (let i = 0; i < 20; i++) {
		const index = pick();
		const t0 = process.hrtime.bigint();
		const cold = new BlobStore(root, options);
		cold.get(hashes[index]!);
		coldRuns.push(Number(process.hrtime.bigint() - t0) / 1e6);
		cold.close();
	}
	// Random reads (each verified) by one process, from its first read on.
	const reader = new BlobStore(root, options);
	const reads: number[] = [];
	for (let i = 0; i < 5_000; i++) {
		const index = pick();
		const t0 = process.hrtime.bigint();
		const bytes = reader.get(hashes[index]!);
		reads.push(Number(process.hrtime.bigint() - t0) / 1e3);
		if (bytes.length !== blobs[index]!.length) {
			throw new Error('read back the wrong blob');
		}
	}
	// has() of blobs not stored, as a snapshot asks for each new file.
	const misses = Array.from({ length: 20_000 }, (_, i) => createHash('sha256').update(`missing ${i}`).digest('hex'));
	const t1 = process.hrtime.bigint();
	for (const hash of misses) {
		if (reader.has(hash)) {
			throw new Error('has() found a blob never stored');
		}
	}
	const hasMissUs = Number(process.hrtime.bigint() - t1) / 1e3 / misses.length;
	const packs = fs.readdirSync(path.join(root, 'packs')).length;
	reader.close();
	return {
		diskBytes: bytes,
		files,
		writeMs,
		readP50Us: percentile(reads, 0.5),
		readP95Us: percentile(reads, 0.95),
		coldFirstReadMs: percentile(coldRuns, 0.5),
		hasMissUs,
		packs,
	};
}

export async function benchBlobStore(
	smallCount = 126_791,
	smallMegabytes = 58,
	largeCount = 12,
): Promise<BlobBenchResult> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-blobs-'));
	try {
		const { blobs, batches } = workload(smallCount, smallMegabytes, largeCount);
		const hashes = blobs.map((b) => createHash('sha256').update(b).digest('hex'));
		const small = blobs.filter((b) => b.length <= 64 * 1024);
		const large = blobs.filter((b) => b.length > 64 * 1024);
		const packed = await measure(path.join(dir, 'packed'), {}, blobs, batches, hashes);
		// Every blob a file of its own, as layout 1 wrote them (nothing is small enough for a pack).
		const baseline = await measure(path.join(dir, 'loose'), { packThresholdBytes: -1 }, blobs, batches, hashes);
		const sizes = small.map((b) => b.length);
		return {
			smallBlobs: small.length,
			smallBytes: sizes.reduce((a, b) => a + b, 0),
			largeBlobs: large.length,
			largeBytes: large.reduce((a, b) => a + b.length, 0),
			batches: batches.length,
			sizes: {
				p50: percentile(sizes, 0.5),
				p95: percentile(sizes, 0.95),
				max: sizes.reduce((a, b) => Math.max(a, b), 0),
			},
			packed,
			baseline,
		};
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

export function formatBlobStore(r: BlobBenchResult): string {
	const mb = (n: number) => `${(n / 1_000_000).toFixed(1)} MB`;
	const data = r.smallBytes + r.largeBytes;
	const ratio = (v: BlobBenchVariant) => v.diskBytes / data;
	const row = (label: string, packed: string, baseline: string, note = '') =>
		`  ${label.padEnd(24)}${packed.padEnd(30)}${baseline.padEnd(30)}${note}`;
	const p = r.packed;
	const b = r.baseline;
	return [
		`blobs: ${r.smallBlobs.toLocaleString('en')} small (${mb(r.smallBytes)}; p50 ${r.sizes.p50} B, p95 ${r.sizes.p95} B, max ${r.sizes.max} B) + ${r.largeBlobs} large (${mb(r.largeBytes)}), in ${r.batches.toLocaleString('en')} batches`,
		row('', 'packed (layout 2)', 'one file each (layout 1)', 'packed / baseline'),
		row(
			'on disk',
			`${mb(p.diskBytes)} = ${ratio(p).toFixed(2)}× data`,
			`${mb(b.diskBytes)} = ${ratio(b).toFixed(2)}× data`,
			`${(p.diskBytes / b.diskBytes).toFixed(3)}   target ≤ 2× data: ${ratio(p) <= 2 ? 'met' : 'NOT met'}`,
		),
		row('files', `${p.files.toLocaleString('en')} (${p.packs} packs)`, b.files.toLocaleString('en')),
		row(
			'write',
			`${(p.writeMs / 1000).toFixed(1)} s, ${(data / 1e6 / (p.writeMs / 1000)).toFixed(1)} MB/s`,
			`${(b.writeMs / 1000).toFixed(1)} s, ${(data / 1e6 / (b.writeMs / 1000)).toFixed(1)} MB/s`,
			`${(p.writeMs / b.writeMs).toFixed(2)}×`,
		),
		row(
			'random read p50 / p95',
			`${p.readP50Us.toFixed(0)} / ${p.readP95Us.toFixed(0)} µs`,
			`${b.readP50Us.toFixed(0)} / ${b.readP95Us.toFixed(0)} µs`,
			`${(p.readP50Us / b.readP50Us).toFixed(2)}× / ${(p.readP95Us / b.readP95Us).toFixed(2)}×`,
		),
		row(
			'cold open + first read',
			`${p.coldFirstReadMs.toFixed(2)} ms`,
			`${b.coldFirstReadMs.toFixed(2)} ms`,
			`${(p.coldFirstReadMs / b.coldFirstReadMs).toFixed(2)}×`,
		),
		row(
			'has() of a missing blob',
			`${p.hasMissUs.toFixed(1)} µs`,
			`${b.hasMissUs.toFixed(1)} µs`,
			`${(p.hasMissUs / b.hasMissUs).toFixed(2)}×`,
		),
	].join('\n');
}
