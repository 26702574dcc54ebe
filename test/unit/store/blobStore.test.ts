import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { packsToMerge } from '../../../server/src/store/blobPacks';
import { BlobStore } from '../../../server/src/store/blobStore';
import { flipBlobByte, flipByteOf } from '../../helpers/blobs';
import { tempDir } from '../../helpers/temp';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Files under the temp folder, at any depth. */
function tempFiles(dir: string): string[] {
	// A store makes its temp folder on its first write.
	if (!fs.existsSync(dir)) {
		return [];
	}
	return fs
		.readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((e) => e.isFile())
		.map((e) => e.name);
}

function packFiles(root: string): string[] {
	return fs
		.readdirSync(path.join(root, 'packs'))
		.filter((name) => name.endsWith('.pack'))
		.map((name) => path.join(root, 'packs', name));
}

function looseFiles(root: string): string[] {
	const top = path.join(root, 'sha256');
	return fs.existsSync(top)
		? fs.readdirSync(top).flatMap((d) => fs.readdirSync(path.join(top, d)).map((name) => path.join(top, d, name)))
		: [];
}

/** Blobs of random sizes from 0 to `max` bytes, with names spread over every index bucket. */
function randomBlobs(count: number, max: number): Buffer[] {
	return Array.from({ length: count }, (_, i) =>
		Buffer.concat([Buffer.from(`${i}:`), randomBytes(Math.floor(Math.random() * max))]),
	);
}

async function* chunks(parts: Buffer[]): AsyncGenerator<Buffer> {
	yield* parts;
}

describe('BlobStore', () => {
	it('stores bytes under their sha256 and reads them back verified; storing twice is a no-op', () => {
		const root = tempDir();
		const store = new BlobStore(root);
		const bytes = Buffer.from('hello blobs\n');
		const hash = store.put(bytes);
		assert.equal(hash, sha(bytes));
		assert.equal(store.put(bytes), hash);
		assert.deepEqual(store.get(hash), bytes);
		assert.equal(packFiles(root).length, 1, 'stored once');
		const location = store.locate(hash)!;
		assert.ok(location.packed && location.file === packFiles(root)[0]);
		assert.equal(fs.statSync(location.file).mode & 0o777, 0o444, 'packs are read-only on disk');
	});

	it('keeps blobs up to the threshold in packs and larger ones in files of their own, and a fresh process reads them all', async () => {
		const dir = tempDir();
		const root = path.join(dir, 'store');
		const threshold = 2048;
		const store = new BlobStore(root, { packThresholdBytes: threshold });
		const small = [Buffer.alloc(0), Buffer.alloc(threshold, 3), ...randomBlobs(1500, threshold - 10)];
		const large = [
			Buffer.alloc(threshold + 1, 4),
			...randomBlobs(3, 50_000).map((b) => Buffer.concat([b, Buffer.alloc(threshold)])),
		];
		const batch = store.batch();
		for (const bytes of [...small, ...large, small[5]!, large[1]!]) {
			batch.add(bytes);
		}
		assert.equal(batch.size, small.length + large.length, 'a blob added twice is stored once');
		await batch.commit();
		const put = [store.put(Buffer.from('one small put')), store.put(Buffer.alloc(5000, 9))];
		const streamed = [
			(await store.putStream(chunks([Buffer.from('small, '), Buffer.from('in two chunks')]))).hash,
			(await store.putStream(chunks([Buffer.alloc(1500, 1), Buffer.alloc(1500, 2)]))).hash,
		];
		assert.equal(packFiles(root).length, 3, 'one pack for the batch and one per small put');
		assert.equal(looseFiles(root).length, large.length + 2);
		store.close();

		const cold = new BlobStore(root);
		for (const bytes of [
			...small,
			...large,
			Buffer.from('one small put'),
			Buffer.alloc(5000, 9),
			Buffer.from('small, in two chunks'),
			Buffer.concat([Buffer.alloc(1500, 1), Buffer.alloc(1500, 2)]),
		]) {
			const hash = sha(bytes);
			assert.ok(cold.has(hash));
			assert.deepEqual(cold.get(hash), bytes);
			assert.equal(
				cold.locate(hash)!.packed,
				bytes.length <= threshold,
				`a blob of ${bytes.length} bytes is ${bytes.length <= threshold ? '' : 'not '}packed`,
			);
		}
		assert.deepEqual(cold.list(), [...new Set([...small, ...large].map(sha).concat(put, streamed))].sort());
		assert.equal(cold.has(sha(Buffer.from('never stored'))), false);
		assert.deepEqual(tempFiles(path.join(root, 'tmp')), [], 'no temp file is left behind');
	});

	it('streams a file in and hashes exactly what it wrote', async () => {
		const dir = tempDir();
		const store = new BlobStore(path.join(dir, 'store'));
		const source = path.join(dir, 'big.bin');
		const content = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
		fs.writeFileSync(source, content);
		const { hash, size } = await store.putFile(source);
		assert.equal(size, content.length);
		assert.equal(hash, sha(content));
		assert.deepEqual(store.get(hash), content);
		assert.deepEqual(tempFiles(path.join(dir, 'store', 'tmp')), [], 'no temp file is left behind');
	});

	it('refuses a loose blob whose bytes were flipped, with an integrity error', () => {
		const store = new BlobStore(tempDir(), { packThresholdBytes: 4 });
		const hash = store.put(Buffer.from('precious'));
		assert.equal(store.locate(hash)!.packed, false);
		flipBlobByte(store, hash, 7);
		assert.throws(
			() => store.get(hash),
			(e) => isDeskError(e, 'blob.corrupt') && e.data['hash'] === hash,
		);
	});

	it('refuses a packed blob with a flipped byte, and still serves the other blobs of its pack', async () => {
		const root = tempDir();
		const store = new BlobStore(root);
		const blobs = randomBlobs(300, 3000);
		const batch = store.batch();
		const hashes = blobs.map((b) => batch.add(b));
		await batch.commit();
		const victim = hashes[150]!;
		const location = store.locate(victim)!;
		flipBlobByte(store, victim, Math.floor(location.size / 2));
		for (const reader of [store, new BlobStore(root)]) {
			assert.throws(
				() => reader.get(victim),
				(e) => isDeskError(e, 'blob.corrupt') && e.data['hash'] === victim && e.data['file'] === location.file,
			);
			for (const [i, hash] of hashes.entries()) {
				if (hash !== victim) {
					assert.deepEqual(reader.get(hash), blobs[i]);
				}
			}
		}
		// A consolidation never copies it on: the pack with the damaged blob stays as it is.
		store.put(Buffer.from('a second pack'));
		assert.throws(
			() => store.consolidate({ all: true }),
			(e) => isDeskError(e, 'blob.corrupt'),
		);
		assert.equal(packFiles(root).length, 2);
		assert.throws(
			() => store.get(victim),
			(e) => isDeskError(e, 'blob.corrupt'),
		);
	});

	it('refuses a truncated pack or a damaged index with store.corrupt naming the pack, never serving from it', async () => {
		const damages: Array<[string, (file: string, size: number, count: number) => void]> = [
			['cut by one byte', (file, size) => fs.truncateSync(file, size - 1)],
			[
				'cut inside its index entries',
				(file, size, count) => fs.truncateSync(file, size - 24 - Math.floor((count * 44) / 2)),
			],
			['cut inside its fanout table', (file, size, count) => fs.truncateSync(file, size - 24 - count * 44 - 1500)],
			['cut inside its data', (file) => fs.truncateSync(file, 1000)],
			['emptied', (file) => fs.truncateSync(file, 0)],
			['an index entry flipped', (file, size, count) => flipByteOf(file, size - 24 - Math.floor(count / 2) * 44 - 3)],
			['its fanout flipped', (file, size, count) => flipByteOf(file, size - 24 - count * 44 - 2048 + 4 * 0x80 + 3)],
			['its trailer flipped', (file, size) => flipByteOf(file, size - 20)],
		];
		for (const [what, damage] of damages) {
			const root = tempDir();
			const store = new BlobStore(root);
			const blobs = randomBlobs(200, 2000);
			const batch = store.batch();
			const hashes = blobs.map((b) => batch.add(b));
			await batch.commit();
			const elsewhere = store.put(Buffer.from('in another pack'));
			const file = store.locate(hashes[0]!)!.file;
			fs.chmodSync(file, 0o644);
			damage(file, fs.statSync(file).size, hashes.length);
			const reader = new BlobStore(root);
			let refused = 0;
			for (const hash of hashes) {
				try {
					reader.get(hash);
				} catch (error) {
					assert.ok(isDeskError(error, 'store.corrupt') && error.data['file'] === file, `${what}: ${String(error)}`);
					assert.equal(reader.has(hash), false, `${what}: has() does not count a blob it cannot serve`);
					refused++;
				}
			}
			// A damaged index entry refuses its bucket's blobs at least; a damaged frame, the whole pack.
			assert.ok(refused > 0, `${what}: nothing was refused`);
			assert.equal(reader.get(elsewhere).toString(), 'in another pack', `${what}: other packs are still served`);
			assert.equal(fs.existsSync(file), true, `${what}: the damaged pack is left in place`);
		}
	});

	it('refuses a hash that is not 64 lowercase hex before touching the disk', () => {
		const store = new BlobStore(tempDir());
		for (const bad of ['', '../../etc/passwd', 'A'.repeat(64), 'a'.repeat(63), `${'a'.repeat(64)}/`, 'g'.repeat(64)]) {
			assert.throws(
				() => store.get(bad),
				(e) => isDeskError(e, 'blob.badHash'),
				bad,
			);
			assert.throws(
				() => store.has(bad),
				(e) => isDeskError(e, 'blob.badHash'),
				bad,
			);
		}
		assert.throws(
			() => store.get('0'.repeat(64)),
			(e) => isDeskError(e, 'blob.missing'),
		);
	});

	it('refuses a blob over the limit, leaving nothing half-stored', async () => {
		const dir = tempDir();
		const store = new BlobStore(path.join(dir, 'store'), { maxBlobBytes: 1000 });
		assert.throws(
			() => store.put(Buffer.alloc(1001)),
			(e) => isDeskError(e, 'blob.tooLarge') && e.data['limit'] === 1000,
		);
		assert.throws(
			() => store.batch().add(Buffer.alloc(1001)),
			(e) => isDeskError(e, 'blob.tooLarge'),
		);
		const source = path.join(dir, 'over.bin');
		fs.writeFileSync(source, Buffer.alloc(5000, 1));
		await assert.rejects(store.putFile(source), (e) => isDeskError(e, 'blob.tooLarge'));
		assert.deepEqual(tempFiles(path.join(dir, 'store', 'tmp')), []);
		assert.equal(fs.existsSync(path.join(dir, 'store', 'sha256')), false);
		assert.deepEqual(packFiles(path.join(dir, 'store')), []);
		assert.equal(store.put(Buffer.alloc(1000)).length, 64, 'exactly the limit is accepted');
	});

	it('an aborted batch leaves nothing behind', async () => {
		const root = tempDir();
		const store = new BlobStore(root, { packThresholdBytes: 100 });
		const batch = store.batch();
		const hashes = [batch.add(Buffer.from('small')), batch.add(Buffer.alloc(500, 1))];
		batch.abort();
		assert.deepEqual(tempFiles(path.join(root, 'tmp')), []);
		assert.deepEqual([packFiles(root), looseFiles(root)], [[], []]);
		assert.ok(hashes.every((hash) => !store.has(hash)));
	});

	it("cleans temp files that a killed writer left when it first writes, never a live one's, and refuses an unknown layout version", () => {
		const root = tempDir();
		new BlobStore(root);
		assert.equal(fs.existsSync(path.join(root, 'tmp')), false, 'a store that only reads makes no temp folder');
		fs.mkdirSync(path.join(root, 'tmp'));
		const stale = path.join(root, 'tmp', '.desk-tmp-deadbeef');
		fs.writeFileSync(stale, 'half a blob');
		const old = new Date(Date.now() - 3600_000);
		fs.utimesSync(stale, old, old);
		const dead = path.join(root, 'tmp', '999999999-abcdef');
		fs.mkdirSync(dead);
		fs.writeFileSync(path.join(dead, '.desk-tmp-x'), 'from a killed process');
		const live = path.join(root, 'tmp', `${process.ppid}-abcdef`);
		fs.mkdirSync(live);
		fs.writeFileSync(path.join(live, '.desk-tmp-y'), 'a live process is writing this');
		fs.utimesSync(path.join(live, '.desk-tmp-y'), old, old);
		const writer = new BlobStore(root);
		assert.equal(fs.existsSync(stale), true, 'nothing is cleaned before the first write');
		writer.put(Buffer.from('a first write'));
		assert.equal(fs.existsSync(stale), false);
		assert.equal(fs.existsSync(dead), false, "a dead process's temps go");
		assert.equal(fs.existsSync(path.join(live, '.desk-tmp-y')), true, "a live process's temps stay, however old");
		for (const layout of [3, 99, 0, '2']) {
			fs.writeFileSync(path.join(root, 'layout.json'), JSON.stringify({ layout }));
			assert.throws(
				() => new BlobStore(root),
				(e) => isDeskError(e, 'store.unknownSchema'),
				`layout ${JSON.stringify(layout)}`,
			);
		}
	});

	it('reads a store of layout 1 and upgrades it in place losing nothing; packLoose then moves its small blobs into packs', () => {
		const root = tempDir();
		// Layout 1 as it was written: every blob a read-only file under sha256/<2 hex>/.
		fs.writeFileSync(path.join(root, 'layout.json'), JSON.stringify({ layout: 1, hash: 'sha256' }) + '\n');
		const small = randomBlobs(120, 4000);
		const large = [Buffer.alloc(70_000, 1), Buffer.alloc(100_000, 2)];
		for (const bytes of [...small, ...large]) {
			const file = path.join(root, 'sha256', sha(bytes).slice(0, 2), sha(bytes));
			fs.mkdirSync(path.dirname(file), { recursive: true });
			fs.writeFileSync(file, bytes, { mode: 0o444 });
		}
		const damaged = Buffer.from('a loose blob damaged on disk');
		const damagedFile = path.join(root, 'sha256', sha(damaged).slice(0, 2), sha(damaged));
		fs.mkdirSync(path.dirname(damagedFile), { recursive: true });
		fs.writeFileSync(damagedFile, 'a loose blob DAMAGED on disk');

		const store = new BlobStore(root);
		assert.equal(JSON.parse(fs.readFileSync(path.join(root, 'layout.json'), 'utf8')).layout, 2);
		for (const bytes of [...small, ...large]) {
			assert.deepEqual(store.get(sha(bytes)), bytes);
		}
		const added = store.put(Buffer.from('written after the upgrade'));
		assert.equal(store.locate(added)!.packed, true);

		assert.equal(store.looseToPack, true, 'the upgrade leaves small loose files to pack');
		const slice = store.packLoose({ maxFiles: 2 })!;
		assert.deepEqual([slice.done, slice.packed <= 2], [false, true], 'a slice stops after its files');
		assert.equal(new BlobStore(root).looseToPack, true, 'another process knows packing is not done');
		const rest = store.packLoose()!;
		assert.deepEqual(
			{ packed: slice.packed + rest.packed, corrupt: rest.corrupt, done: rest.done },
			{ packed: small.length, corrupt: [sha(damaged)], done: true },
		);
		assert.equal(store.looseToPack, false);
		assert.equal(new BlobStore(root).looseToPack, false, 'done, as the layout file says');
		assert.deepEqual(
			looseFiles(root).sort(),
			[...large.map(sha), sha(damaged)].map((h) => path.join(root, 'sha256', h.slice(0, 2), h)).sort(),
			'only large and damaged blobs stay loose',
		);
		const cold = new BlobStore(root);
		for (const bytes of [...small, ...large, Buffer.from('written after the upgrade')]) {
			assert.deepEqual(cold.get(sha(bytes)), bytes);
		}
		assert.throws(
			() => cold.get(sha(damaged)),
			(e) => isDeskError(e, 'blob.corrupt'),
		);
		assert.deepEqual(
			store.packLoose(),
			{ packed: 0, corrupt: [sha(damaged)], done: true },
			'a second run has nothing left to move',
		);
	});

	it('merges packs when there are more than maxPacks, after the write that made one too many; consolidate({ all }) leaves one', async () => {
		const root = tempDir();
		const store = new BlobStore(root, { maxPacks: 4 });
		const blobs = randomBlobs(40, 500);
		const hashes: string[] = [];
		for (const bytes of blobs) {
			hashes.push(store.put(bytes));
			assert.ok(
				packFiles(root).length <= 5,
				`${packFiles(root).length} packs right after a put: the merge waits for the write to return`,
			);
			await new Promise((resolve) => setImmediate(resolve));
			assert.ok(packFiles(root).length <= 4, `${packFiles(root).length} packs once the write returned`);
		}
		const reader = new BlobStore(root);
		for (const [i, hash] of hashes.entries()) {
			assert.deepEqual(reader.get(hash), blobs[i]);
		}
		const before = packFiles(root);
		assert.equal(store.consolidate({ all: true })?.blobs, blobs.length);
		assert.equal(packFiles(root).length, 1);
		assert.ok(
			before.every((file) => !fs.existsSync(file)),
			'the merged packs are removed',
		);
		for (const [i, hash] of hashes.entries()) {
			assert.deepEqual(reader.get(hash), blobs[i], 'a reader that knew the old packs still reads');
			assert.deepEqual(new BlobStore(root).get(hash), blobs[i]);
		}
		// Another process consolidating (it holds packs.lock): this one skips its turn.
		store.put(Buffer.from('one more pack'));
		fs.writeFileSync(path.join(root, 'packs.lock'), `${process.ppid} held\n`);
		assert.equal(store.consolidate({ all: true }), undefined);
		assert.equal(packFiles(root).length, 2);
	});

	it('packsToMerge leaves packs in a geometric progression, merging the smallest and at least two', () => {
		for (let round = 0; round < 500; round++) {
			const packs = Array.from({ length: 2 + Math.floor(Math.random() * 20) }, () => ({
				bytes: 1 + Math.floor(Math.random() ** 3 * 1e6),
			}));
			const merged = packsToMerge(packs);
			assert.ok(merged.length >= 2);
			const sorted = [...packs].sort((a, b) => a.bytes - b.bytes);
			assert.deepEqual(merged, sorted.slice(0, merged.length), 'a prefix of the smallest');
			const after = [merged.reduce((n, p) => n + p.bytes, 0), ...sorted.slice(merged.length).map((p) => p.bytes)].sort(
				(a, b) => a - b,
			);
			let below = 0;
			for (const [j, size] of after.entries()) {
				assert.ok(
					j === 0 || size >= 2 * below,
					`${JSON.stringify(packs.map((p) => p.bytes))} → ${JSON.stringify(after)}`,
				);
				below += size;
			}
		}
	});
});
