import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { DeskError } from '../core/errors';
import { fsyncFolder, removeStaleTempFiles, tempPrefix, writeAll, writeFileDurably } from './durableFile';

/**
 * Content-addressed, immutable blob storage: `<root>/sha256/<first two hex>/<64 hex>`.
 * Blobs are written through a temp file in `<root>/tmp` (fsync, rename, fsync folder), so a blob
 * under its final name is always whole; every read is verified against its name.
 */
export const blobLayoutVersion = 1;
const hashPattern = /^[0-9a-f]{64}$/;

export interface BlobStoreOptions {
	/** Largest blob accepted, in bytes. */
	maxBlobBytes?: number;
}

export class BlobStore {
	private readonly maxBlobBytes: number;
	private readonly tempDir: string;

	constructor(readonly root: string, options: BlobStoreOptions = {}) {
		this.maxBlobBytes = options.maxBlobBytes ?? 2 * 1024 * 1024 * 1024;
		// Each process writes its temp files in a folder of its own, so that one process cleaning up
		// after killed writers never removes the temps of a live one's long snapshot.
		const tempRoot = path.join(root, 'tmp');
		fs.mkdirSync(tempRoot, { recursive: true });
		removeDeadWritersTemps(tempRoot);
		this.tempDir = path.join(tempRoot, `${process.pid}-${randomBytes(3).toString('hex')}`);
		fs.mkdirSync(this.tempDir, { recursive: true });
		const layoutFile = path.join(root, 'layout.json');
		if (!fs.existsSync(layoutFile)) {
			writeFileDurably(layoutFile, Buffer.from(JSON.stringify({ layout: blobLayoutVersion, hash: 'sha256' }) + '\n'));
		} else {
			let layout: unknown;
			try {
				layout = (JSON.parse(fs.readFileSync(layoutFile, 'utf8')) as { layout?: unknown }).layout;
			} catch (error) {
				throw new DeskError('store.corrupt', `${layoutFile} cannot be read: ${(error as Error).message}. The blobs beside it are untouched.`, { file: layoutFile });
			}
			if (layout !== blobLayoutVersion) {
				throw new DeskError('store.unknownSchema', `Blob store ${root} has layout ${String(layout)}; this Agent Desk knows ${blobLayoutVersion}.`, { root, layout });
			}
		}
	}

	static isHash(value: unknown): value is string {
		return typeof value === 'string' && hashPattern.test(value);
	}

	/** Stores `bytes` and returns their sha256. Storing the same bytes twice is a no-op. */
	put(bytes: Uint8Array): string {
		if (bytes.length > this.maxBlobBytes) {
			throw tooLarge(bytes.length, this.maxBlobBytes);
		}
		const hash = createHash('sha256').update(bytes).digest('hex');
		if (this.has(hash)) {
			return hash;
		}
		this.commitTemp(hash, (fd) => writeAll(fd, bytes));
		return hash;
	}

	/**
	 * Streams a file into the store without holding it in memory. The bytes hashed are the bytes
	 * written, so a file changing under us can only produce a blob that matches its own name.
	 */
	async putFile(source: string): Promise<{ hash: string; size: number }> {
		return this.putStream(fs.createReadStream(source, { highWaterMark: 1024 * 1024 }));
	}

	/** As putFile, from a stream already open (a descriptor the caller checked). */
	async putStream(input: AsyncIterable<Buffer> | NodeJS.ReadableStream): Promise<{ hash: string; size: number }> {
		const temp = this.tempPath();
		const hasher = createHash('sha256');
		let size = 0;
		const out = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
		try {
			for await (const chunk of input as AsyncIterable<Buffer>) {
				size += chunk.length;
				if (size > this.maxBlobBytes) {
					throw tooLarge(size, this.maxBlobBytes);
				}
				hasher.update(chunk);
				writeAll(out, chunk);
			}
			fs.fsyncSync(out);
		} catch (error) {
			fs.closeSync(out);
			fs.rmSync(temp, { force: true });
			throw error;
		}
		fs.closeSync(out);
		const hash = hasher.digest('hex');
		if (this.has(hash)) {
			fs.rmSync(temp, { force: true });
		} else {
			this.publish(temp, hash);
		}
		return { hash, size };
	}

	has(hash: string): boolean {
		return fs.existsSync(this.pathOf(hash));
	}

	/** Reads a blob and verifies it; flipped bytes are refused with `blob.corrupt`, never served. */
	get(hash: string): Buffer {
		const file = this.pathOf(hash);
		let bytes: Buffer;
		try {
			bytes = fs.readFileSync(file);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
				throw new DeskError('blob.missing', `Blob ${hash} is not in the store.`, { hash });
			}
			throw new DeskError('store.io', `Could not read blob ${hash}: ${(error as Error).message}`, { hash });
		}
		const actual = createHash('sha256').update(bytes).digest('hex');
		if (actual !== hash) {
			throw new DeskError('blob.corrupt', `Blob ${hash} is damaged: its bytes hash to ${actual}.`, { hash, actual, file });
		}
		return bytes;
	}

	/** Where a blob lives. Refuses anything but 64 lowercase hex before touching the disk. */
	pathOf(hash: string): string {
		if (!BlobStore.isHash(hash)) {
			throw new DeskError('blob.badHash', `Not a sha256 blob name: ${JSON.stringify(String(hash).slice(0, 80))}.`, { hash: String(hash).slice(0, 80) });
		}
		return path.join(this.root, 'sha256', hash.slice(0, 2), hash);
	}

	/**
	 * A batch of blobs made durable together: contents go to temp files at once, and commit()
	 * fsyncs them in parallel, renames them to their names and fsyncs their folders. One fsync
	 * after another per file would make a snapshot of thousands of files wait on the disk thousands
	 * of times; a blob under its final name is still always whole and durable.
	 */
	batch(): BlobBatch {
		return new BlobBatch(this, this.maxBlobBytes);
	}

	/** @internal */
	newTempFile(): { path: string; fd: number } {
		const temp = this.tempPath();
		return { path: temp, fd: fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600) };
	}

	/** @internal Renames a durable temp file to its blob name (no folder fsync). Returns the folder. */
	publishTemp(temp: string, hash: string): string {
		const target = this.pathOf(hash);
		const folder = path.dirname(target);
		fs.mkdirSync(folder, { recursive: true });
		fs.chmodSync(temp, 0o444);
		fs.renameSync(temp, target);
		return folder;
	}

	private tempPath(): string {
		return path.join(this.tempDir, `${tempPrefix}${randomBytes(8).toString('hex')}`);
	}

	private commitTemp(hash: string, fill: (fd: number) => void): void {
		const temp = this.tempPath();
		const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
		try {
			fill(fd);
			fs.fsyncSync(fd);
		} catch (error) {
			fs.closeSync(fd);
			fs.rmSync(temp, { force: true });
			throw new DeskError('store.io', `Could not store blob ${hash}: ${(error as Error).message}`, { hash }, { cause: error });
		}
		fs.closeSync(fd);
		this.publish(temp, hash);
	}

	private publish(temp: string, hash: string): void {
		fsyncFolder(this.publishTemp(temp, hash));
	}
}

export class BlobBatch {
	/** hash → temp file, written and closed (thousands of open files would exhaust descriptors). */
	private readonly pending = new Map<string, string>();

	constructor(private readonly store: BlobStore, private readonly maxBlobBytes: number) {}

	get size(): number {
		return this.pending.size;
	}

	/** Adds bytes (if the store and the batch do not have them yet) and returns their hash. */
	add(bytes: Uint8Array, knownHash?: string): string {
		if (bytes.length > this.maxBlobBytes) {
			throw tooLarge(bytes.length, this.maxBlobBytes);
		}
		const hash = knownHash ?? createHash('sha256').update(bytes).digest('hex');
		if (this.pending.has(hash) || this.store.has(hash)) {
			return hash;
		}
		const temp = this.store.newTempFile();
		try {
			writeAll(temp.fd, bytes);
		} catch (error) {
			fs.rmSync(temp.path, { force: true });
			throw new DeskError('store.io', `Could not store blob ${hash}: ${(error as Error).message}`, { hash }, { cause: error });
		} finally {
			fs.closeSync(temp.fd);
		}
		this.pending.set(hash, temp.path);
		return hash;
	}

	async commit(): Promise<void> {
		const entries = [...this.pending.entries()];
		try {
			await inParallel(entries, 16, ([, temp]) => fsyncFile(temp));
		} catch (error) {
			this.abort();
			throw new DeskError('store.io', `Could not make blobs durable: ${(error as Error).message}`, {}, { cause: error });
		}
		const folders = new Set<string>();
		for (const [hash, temp] of entries) {
			folders.add(this.store.publishTemp(temp, hash));
		}
		this.pending.clear();
		await inParallel([...folders], 16, async (folder) => fsyncFolder(folder));
	}

	/** Drops every blob of the batch that was not committed. */
	abort(): void {
		for (const temp of this.pending.values()) {
			fs.rmSync(temp, { force: true });
		}
		this.pending.clear();
	}
}

/** fsync through a fresh read-only descriptor; on Linux it flushes the file's data all the same. */
async function fsyncFile(file: string): Promise<void> {
	const handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
	try {
		await handle.sync();
	} finally {
		await handle.close();
	}
}

async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			await work(items[next++]!);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Removes temp folders of processes that are gone, and loose temp files of older layouts. */
function removeDeadWritersTemps(tempRoot: string): void {
	removeStaleTempFiles(tempRoot);
	for (const name of fs.readdirSync(tempRoot)) {
		const pid = Number.parseInt(name.split('-')[0] ?? '', 10);
		if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) {
			continue;
		}
		try {
			process.kill(pid, 0);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ESRCH') {
				fs.rmSync(path.join(tempRoot, name), { recursive: true, force: true });
			}
		}
	}
}

function tooLarge(size: number, limit: number): DeskError {
	return new DeskError('blob.tooLarge', `A blob of ${size} bytes is over the limit of ${limit} bytes.`, { size, limit });
}
