import { randomBytes } from 'node:crypto';

/**
 * UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then randomness, so ids sort by creation
 * time. Within one millisecond a 12-bit counter in rand_a keeps ids from one process increasing.
 */
let lastMs = -1;
let counter = 0;

export function uuidv7(now: number = Date.now()): string {
	let ms = now;
	if (ms <= lastMs) {
		ms = lastMs;
		counter++;
		if (counter > 0xfff) {
			// 4096 ids in one millisecond: borrow the next millisecond rather than break the order.
			ms = lastMs + 1;
			counter = 0;
		}
	} else {
		counter = randomBytes(2).readUInt16BE(0) & 0x7ff;
	}
	lastMs = ms;
	const bytes = randomBytes(16);
	bytes.writeUIntBE(ms, 0, 6);
	bytes[6] = 0x70 | ((counter >> 8) & 0x0f);
	bytes[7] = counter & 0xff;
	bytes[8] = 0x80 | (bytes[8]! & 0x3f);
	const hex = bytes.toString('hex');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The creation time an id carries. */
export function uuidv7Time(id: string): number {
	return Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
