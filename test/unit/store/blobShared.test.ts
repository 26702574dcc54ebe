import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { PackReader } from '../../../server/src/store/blobPack';
import { BlobStore } from '../../../server/src/store/blobStore';
import { onLines } from '../../helpers/lines';
import { tempDir } from '../../helpers/temp';

const worker = path.join(__dirname, 'blobWorker.js');
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface Child {
	lines: string[];
	done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	kill(): void;
}

function run(args: string[], onLine?: (line: string) => void): Child {
	const child = spawn(process.execPath, [worker, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
	const lines: string[] = [];
	onLines(child.stdout, (line) => {
		lines.push(line);
		onLine?.(line);
	});
	const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
		child.on('error', reject);
		child.on('exit', (code, signal) => resolve({ code, signal }));
	});
	return { lines, done, kill: () => child.kill('SIGKILL') };
}

const acks = (child: Child) => child.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));

/**
 * What a store must look like after any crash or race: every pack opens and each of its blobs hashes
 * to its name, every loose file hashes to its name, and every acknowledged blob reads back.
 */
function assertWhole(root: string, acknowledged: Iterable<string>): { packs: number; blobs: number } {
	const packDir = path.join(root, 'packs');
	let blobs = 0;
	const packs = fs.readdirSync(packDir);
	for (const name of packs) {
		assert.match(name, /^pack-[0-9a-z]+-[0-9a-f]{16}\.pack$/, 'nothing but whole packs in packs/');
		const pack = PackReader.open(path.join(packDir, name));
		for (const entry of pack.entries()) {
			assert.equal(sha(pack.read(entry.offset, entry.size)), entry.name, `${name}: ${entry.name}`);
			blobs++;
		}
		pack.close();
	}
	const top = path.join(root, 'sha256');
	for (const folder of fs.existsSync(top) ? fs.readdirSync(top) : []) {
		for (const name of fs.readdirSync(path.join(top, folder))) {
			assert.equal(sha(fs.readFileSync(path.join(top, folder, name))), name, 'a loose blob is whole');
			blobs++;
		}
	}
	const store = new BlobStore(root);
	for (const hash of acknowledged) {
		assert.ok(store.has(hash), `acknowledged ${hash} is missing`);
		store.get(hash);
	}
	store.close();
	return { packs: packs.length, blobs };
}

describe('BlobStore shared by processes', () => {
	it('a writer killed with SIGKILL at random points leaves no torn pack or blob and loses no acknowledged blob', async (t) => {
		const root = path.join(tempDir(), 'blobs');
		const acknowledged = new Set<string>();
		const started = Date.now();
		let kills = 0;
		let last = { packs: 0, blobs: 0 };
		for (let round = 0; round < 20 && Date.now() - started < 25_000; round++) {
			let timer: NodeJS.Timeout | undefined;
			// maxPacks 3: consolidations are frequent, so kills land in them too.
			const child = run(['write', root, `w${round}`, '0', '3'], (line) => {
				if (line === 'open') {
					timer = setTimeout(() => child.kill(), 30 + Math.random() * 300);
				}
			});
			const { signal } = await child.done;
			clearTimeout(timer);
			assert.equal(signal, 'SIGKILL', 'the writer ran until it was killed');
			for (const hash of acks(child)) {
				acknowledged.add(hash);
			}
			kills++;
			last = assertWhole(root, acknowledged);
		}
		const tmp = fs.readdirSync(path.join(root, 'tmp'));
		assert.ok(tmp.length <= 1, `temps of killed writers are removed by the next opener: ${tmp.join(', ')}`);
		t.diagnostic(
			`${acknowledged.size} acknowledged blobs over ${kills} kills; ${last.blobs} stored in ${last.packs} packs and loose files`,
		);
		assert.ok(acknowledged.size > 200, `only ${acknowledged.size} blobs were acknowledged; the test proved little`);
	});

	it('writers in several processes at once, consolidating as they go, lose nothing and damage nothing', async (t) => {
		const root = path.join(tempDir(), 'blobs');
		new BlobStore(root).close();
		const writers = ['alpha', 'beta', 'gamma'].map((name) => run(['write', root, name, '60', '3']));
		const results = await Promise.all(writers.map((w) => w.done));
		assert.deepEqual(
			results.map((r) => r.code),
			[0, 0, 0],
		);
		const acknowledged = new Set(writers.flatMap(acks));
		const { packs, blobs } = assertWhole(root, acknowledged);
		const store = new BlobStore(root);
		assert.deepEqual(
			store.list(),
			[...acknowledged].sort(),
			'every stored blob was acknowledged to someone, and the other way round',
		);
		t.diagnostic(`${acknowledged.size} blobs from 3 processes, ${blobs} copies in ${packs} packs and loose files`);
	});

	it('a reader in another process keeps reading every blob while packs are consolidated under it', async (t) => {
		const root = path.join(tempDir(), 'blobs');
		const store = new BlobStore(root, { maxPacks: 1000 });
		const hashes: string[] = [];
		for (let i = 0; i < 30; i++) {
			const batch = store.batch();
			for (let j = 0; j < 20; j++) {
				hashes.push(batch.add(randomBytes(50 + Math.floor(Math.random() * 2000))));
			}
			await batch.commit();
		}
		const list = path.join(root, '..', 'hashes.txt');
		fs.writeFileSync(list, hashes.join('\n'));
		const stop = path.join(root, '..', 'stop');
		let reading = 0;
		let started!: () => void;
		const bothReading = new Promise<void>((resolve) => (started = resolve));
		const onLine = (line: string) => line === 'reading' && ++reading === 2 && started();
		const readers = [run(['read', root, list, stop], onLine), run(['read', root, list, stop], onLine)];
		await bothReading;
		// A count, not a time: a busy machine makes the loop slower, never the test weaker.
		let consolidations = 0;
		const notBefore = Date.now() + 1000;
		while (consolidations < 25 || Date.now() < notBefore) {
			// New packs appear and are merged, old ones vanish, while the readers read.
			for (let i = 0; i < 3; i++) {
				store.put(randomBytes(100));
			}
			if (store.consolidate({ all: true })?.merged) {
				consolidations++;
			}
			await new Promise((resolve) => setTimeout(resolve, 5));
		}
		fs.writeFileSync(stop, '');
		await Promise.all(readers.map((r) => r.done));
		const failures = readers.flatMap((r) => r.lines.filter((l) => l.startsWith('fail ')));
		const reads = readers.map((r) => Number(r.lines.find((l) => l.startsWith('read '))?.slice(5)));
		t.diagnostic(`${reads.join(' + ')} reads during ${consolidations} consolidations`);
		assert.deepEqual(failures, []);
		assert.ok(
			reads.every((n) => n > 100),
			`the readers read only ${reads.join(', ')} blobs`,
		);
		assert.ok(consolidations > 20, `only ${consolidations} consolidations ran`);
	});

	it('has() and get() see a pack another process added, also one added within the same timestamp tick as the listing', async () => {
		const root = path.join(tempDir(), 'blobs');
		const packDir = path.join(root, 'packs');
		const store = new BlobStore(root);
		store.put(Buffer.from('first'));
		const other = async (bytes: Buffer) => {
			const child = run(['batch', root, bytes.toString('hex')]);
			assert.equal((await child.done).code, 0);
			return child.lines[0]!;
		};

		// A listing taken well after the folder last changed is trusted until the folder changes.
		await new Promise((resolve) => setTimeout(resolve, 250));
		assert.equal(store.has(sha(Buffer.from('not yet'))), false);
		const second = await other(Buffer.from('from another process'));
		assert.equal(store.has(second), true);
		assert.equal(store.get(second).toString(), 'from another process');
		await new Promise((resolve) => setTimeout(resolve, 250));
		assert.equal(store.has(sha(Buffer.from('not yet either'))), false);
		const fourth = await other(Buffer.from('read before it is looked for'));
		assert.equal(store.get(fourth).toString(), 'read before it is looked for', 'get() lists the packs again on a miss');

		// A listing taken right after a change is not trusted: a pack added in the same tick leaves the
		// folder's mtime as it was (simulated by setting it back, to the nanosecond).
		store.put(Buffer.from('a change now'));
		assert.equal(store.has(sha(Buffer.from('still not'))), false);
		const listedAt = fs.statSync(packDir, { bigint: true }).mtimeNs;
		const third = await other(Buffer.from('in the same tick'));
		execFileSync('touch', [
			'-m',
			'-d',
			`@${listedAt / 1_000_000_000n}.${String(listedAt % 1_000_000_000n).padStart(9, '0')}`,
			packDir,
		]);
		assert.equal(fs.statSync(packDir, { bigint: true }).mtimeNs, listedAt);
		assert.equal(store.has(third), true);
	});
});
