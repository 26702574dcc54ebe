import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { gitEnv } from './gitRepo';

/** Every object of a repository as git itself reads it: `git cat-file --batch-all-objects --batch`. */
export function allObjectsByGit(repo: string): Map<string, { type: string; data: Buffer }> {
	const out = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], {
		cwd: repo,
		env: gitEnv(repo),
		maxBuffer: 1024 * 1024 * 1024,
	});
	const objects = new Map<string, { type: string; data: Buffer }>();
	let at = 0;
	while (at < out.length) {
		const eol = out.indexOf(0x0a, at);
		const [oid, type, size] = out.toString('latin1', at, eol).split(' ');
		const start = eol + 1;
		objects.set(oid!, { type: type!, data: out.subarray(start, start + Number(size)) });
		at = start + Number(size) + 1;
	}
	return objects;
}

/** The type numbers of a pack's entries (6: ofs-delta, 7: ref-delta), read at the offsets `git show-index` lists. */
export function packEntryTypes(repo: string, objectFormat: 'sha1' | 'sha256' = 'sha1'): number[] {
	const dir = path.join(repo, '.git', 'objects', 'pack');
	const types: number[] = [];
	for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.idx'))) {
		const listing = execFileSync('git', ['show-index', `--object-format=${objectFormat}`], {
			cwd: repo,
			env: gitEnv(repo),
			input: fs.readFileSync(path.join(dir, name)),
			encoding: 'utf8',
		});
		const pack = fs.readFileSync(path.join(dir, `${name.slice(0, -4)}.pack`));
		for (const line of listing.trim().split('\n')) {
			types.push((pack[Number(line.split(' ')[0])]! >> 4) & 7);
		}
	}
	return types;
}

/** A git delta that copies the first `copy` bytes of its base and then inserts `insert`. */
export function makeDelta(baseSize: number, copy: number, insert: Buffer): Buffer {
	const varint = (n: number) => {
		const bytes: number[] = [];
		do {
			let byte = n & 0x7f;
			n = Math.floor(n / 128);
			if (n > 0) {
				byte |= 0x80;
			}
			bytes.push(byte);
		} while (n > 0);
		return bytes;
	};
	const parts: number[] = [...varint(baseSize), ...varint(copy + insert.length)];
	// Copy from offset 0 (no offset bytes), size in two bytes.
	parts.push(0x80 | 0x10 | 0x20, copy & 0xff, (copy >> 8) & 0xff);
	for (let at = 0; at < insert.length; at += 127) {
		const chunk = insert.subarray(at, at + 127);
		parts.push(chunk.length, ...chunk);
	}
	return Buffer.from(parts);
}

/**
 * Writes a pack of one ref-delta entry (and its version 2 index) into the repository: a base that
 * is not in the same pack (git refuses those) or a delta that names itself, as a hostile repository may hold.
 */
export function writeRefDeltaPack(repo: string, baseOid: string, resultOid: string, delta: Buffer): string {
	const header = Buffer.alloc(12);
	header.write('PACK', 0, 'latin1');
	header.writeUInt32BE(2, 4);
	header.writeUInt32BE(1, 8);
	const sizeBytes: number[] = [];
	let size = delta.length;
	let first = (7 << 4) | (size & 15);
	size = Math.floor(size / 16);
	if (size > 0) {
		first |= 0x80;
	}
	sizeBytes.push(first);
	while (size > 0) {
		let byte = size & 0x7f;
		size = Math.floor(size / 128);
		if (size > 0) {
			byte |= 0x80;
		}
		sizeBytes.push(byte);
	}
	const entry = Buffer.concat([Buffer.from(sizeBytes), Buffer.from(baseOid, 'hex'), deflateSync(delta)]);
	const body = Buffer.concat([header, entry]);
	const packChecksum = createHash('sha1').update(body).digest();
	const pack = Buffer.concat([body, packChecksum]);

	const fanout = Buffer.alloc(1024);
	const firstByte = Buffer.from(resultOid, 'hex')[0]!;
	for (let i = 0; i < 256; i++) {
		fanout.writeUInt32BE(i >= firstByte ? 1 : 0, i * 4);
	}
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(entry) >>> 0);
	const offset = Buffer.alloc(4);
	offset.writeUInt32BE(12);
	const idxBody = Buffer.concat([
		Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]),
		fanout,
		Buffer.from(resultOid, 'hex'),
		crc,
		offset,
		packChecksum,
	]);
	const idx = Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()]);
	const name = `pack-${packChecksum.toString('hex')}`;
	const dir = path.join(repo, '.git', 'objects', 'pack');
	fs.writeFileSync(path.join(dir, `${name}.pack`), pack);
	fs.writeFileSync(path.join(dir, `${name}.idx`), idx);
	return path.join(dir, `${name}.pack`);
}

/** The object id git gives `data` of `type`. */
export function objectId(type: string, data: Buffer, algorithm: 'sha1' | 'sha256' = 'sha1'): string {
	return createHash(algorithm).update(`${type} ${data.length}\0`).update(data).digest('hex');
}
