import * as fs from 'node:fs';
import type { BlobStore } from '../../server/src/store/blobStore';

/** Flips one bit of a stored blob where it lies (its pack or its own file), as a failing disk would. */
export function flipBlobByte(store: BlobStore, hash: string, at = 0): void {
	const location = store.locate(hash);
	if (!location) {
		throw new Error(`blob ${hash} is not stored`);
	}
	flipByteOf(location.file, location.offset + at);
}

/** Flips one bit of a file at `offset`, leaving its size and mode as they were. */
export function flipByteOf(file: string, offset: number): void {
	const mode = fs.statSync(file).mode & 0o777;
	fs.chmodSync(file, 0o644);
	const fd = fs.openSync(file, 'r+');
	try {
		const byte = Buffer.alloc(1);
		fs.readSync(fd, byte, 0, 1, offset);
		byte[0]! ^= 0x01;
		fs.writeSync(fd, byte, 0, 1, offset);
	} finally {
		fs.closeSync(fd);
	}
	fs.chmodSync(file, mode);
}
