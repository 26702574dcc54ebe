/**
 * A process of the blob store tests that share one store between processes:
 * - `write <root> <name> <rounds> <maxPacks>`: `rounds` batches (0: until killed) of random small
 *   blobs, a large one now and then, and blobs every writer shares; a put() of a small blob between
 *   batches, an explicit consolidation now and then. Prints `open` once, `ack <hash>` for every
 *   blob it was told is stored, and `done`.
 * - `read <root> <hash list file> <ms>`: reads random blobs of the list for `ms`, half of the time
 *   through a store opened for that read (a cold process), and prints `read <n>` and one `fail <error>`
 *   per failed read.
 * - `batch <root> <hex of bytes>…`: stores the given blobs in one batch and prints their hashes.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { describeError } from '../../../server/src/core/errors';
import { BlobStore } from '../../../server/src/store/blobStore';

const say = (line: string) => fs.writeSync(1, `${line}\n`);

/** Bytes that every writer stores too, so they race on the same names. */
function sharedBlob(n: number): Buffer {
	return Buffer.from(`a blob every writer stores: ${n}\n`.repeat(1 + (n % 7)));
}

async function write(root: string, name: string, rounds: number, maxPacks: number): Promise<void> {
	const store = new BlobStore(root, { maxPacks, packThresholdBytes: 8 * 1024 });
	say('open');
	for (let round = 0; rounds === 0 || round < rounds; round++) {
		const batch = store.batch();
		const hashes: string[] = [];
		for (let i = 0, n = 1 + Math.floor(Math.random() * 40); i < n; i++) {
			hashes.push(
				batch.add(
					Buffer.concat([Buffer.from(`${name} ${round} ${i}\n`), randomBytes(Math.floor(Math.random() * 3000))]),
				),
			);
		}
		hashes.push(batch.add(sharedBlob(round % 50)));
		if (round % 5 === 0) {
			hashes.push(
				batch.add(
					Buffer.concat([
						Buffer.from(`${name} large ${round}\n`),
						randomBytes(9000 + Math.floor(Math.random() * 30_000)),
					]),
				),
			);
		}
		await batch.commit();
		for (const hash of hashes) {
			say(`ack ${hash}`);
		}
		say(`ack ${store.put(Buffer.from(`${name} put ${round} ${randomBytes(8).toString('hex')}`))}`);
		if (round % 7 === 3) {
			store.consolidate({ all: round % 14 === 3 });
		}
	}
	store.close();
	say('done');
}

/** Reads random blobs of `listFile` (half through a store opened anew) until the file `stopFile` exists. */
function read(root: string, listFile: string, stopFile: string): void {
	const hashes = fs.readFileSync(listFile, 'utf8').split('\n').filter(Boolean);
	const warm = new BlobStore(root);
	say('reading');
	let reads = 0;
	while (reads % 50 !== 0 || !fs.existsSync(stopFile)) {
		const hash = hashes[Math.floor(Math.random() * hashes.length)]!;
		const cold = reads % 2 === 1 ? new BlobStore(root) : undefined;
		try {
			const store = cold ?? warm;
			if (!store.has(hash)) {
				say(`fail has() says ${hash} is missing`);
			}
			store.get(hash);
			reads++;
		} catch (error) {
			say(`fail ${describeError(error)}`);
		} finally {
			cold?.close();
		}
	}
	say(`read ${reads}`);
}

async function main(): Promise<void> {
	const [mode, root, ...rest] = process.argv.slice(2);
	if (mode === 'write') {
		await write(root!, rest[0]!, Number(rest[1]), Number(rest[2]));
	} else if (mode === 'read') {
		read(root!, rest[0]!, rest[1]!);
	} else if (mode === 'batch') {
		const store = new BlobStore(root!);
		const batch = store.batch();
		const hashes = rest.map((hex) => batch.add(Buffer.from(hex, 'hex')));
		await batch.commit();
		say(hashes.join(' '));
	} else {
		throw new Error(`unknown mode ${mode}`);
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
