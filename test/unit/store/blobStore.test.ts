import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { BlobStore } from '../../../server/src/store/blobStore';
import { tempDir } from '../../helpers/temp';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Files under the temp folder, at any depth. */
function tempFiles(dir: string): string[] {
	return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
}

describe('BlobStore', () => {
	it('stores bytes under their sha256 and reads them back verified; storing twice is a no-op', () => {
		const store = new BlobStore(tempDir());
		const bytes = Buffer.from('hello blobs\n');
		const hash = store.put(bytes);
		assert.equal(hash, sha(bytes));
		assert.equal(store.put(bytes), hash);
		assert.deepEqual(store.get(hash), bytes);
		assert.equal(fs.statSync(store.pathOf(hash)).mode & 0o777, 0o444, 'blobs are read-only on disk');
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

	it('refuses a blob whose bytes were flipped, with an integrity error', () => {
		const store = new BlobStore(tempDir());
		const hash = store.put(Buffer.from('precious'));
		const file = store.pathOf(hash);
		fs.chmodSync(file, 0o644);
		fs.writeFileSync(file, 'precioua');
		assert.throws(() => store.get(hash), (e) => isDeskError(e, 'blob.corrupt') && e.data['hash'] === hash);
	});

	it('refuses a hash that is not 64 lowercase hex before touching the disk', () => {
		const store = new BlobStore(tempDir());
		for (const bad of ['', '../../etc/passwd', 'A'.repeat(64), 'a'.repeat(63), `${'a'.repeat(64)}/`, 'g'.repeat(64)]) {
			assert.throws(() => store.get(bad), (e) => isDeskError(e, 'blob.badHash'), bad);
		}
		assert.throws(() => store.get('0'.repeat(64)), (e) => isDeskError(e, 'blob.missing'));
	});

	it('refuses a blob over the limit, leaving nothing half-stored', async () => {
		const dir = tempDir();
		const store = new BlobStore(path.join(dir, 'store'), { maxBlobBytes: 1000 });
		assert.throws(() => store.put(Buffer.alloc(1001)), (e) => isDeskError(e, 'blob.tooLarge') && e.data['limit'] === 1000);
		const source = path.join(dir, 'over.bin');
		fs.writeFileSync(source, Buffer.alloc(5000, 1));
		await assert.rejects(store.putFile(source), (e) => isDeskError(e, 'blob.tooLarge'));
		assert.deepEqual(tempFiles(path.join(dir, 'store', 'tmp')), []);
		assert.equal(fs.existsSync(path.join(dir, 'store', 'sha256')), false);
		assert.equal(store.put(Buffer.alloc(1000)).length, 64, 'exactly the limit is accepted');
	});

	it('cleans temp files that a killed writer left, never a live one\'s, and refuses an unknown layout version', () => {
		const root = tempDir();
		new BlobStore(root);
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
		new BlobStore(root);
		assert.equal(fs.existsSync(stale), false);
		assert.equal(fs.existsSync(dead), false, 'a dead process\'s temps go');
		assert.equal(fs.existsSync(path.join(live, '.desk-tmp-y')), true, 'a live process\'s temps stay, however old');
		fs.writeFileSync(path.join(root, 'layout.json'), JSON.stringify({ layout: 99 }));
		assert.throws(() => new BlobStore(root), (e) => isDeskError(e, 'store.unknownSchema'));
	});
});
