/**
 * The Inflater answers only a stream that inflated whole to exactly the size asked (or, for a prefix,
 * the start of it zlib made); anything else is undefined, so the pack reader asks inflateSync, which
 * says what is wrong. Streams of many sizes and kinds, cut, lengthened, damaged and mis-sized.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { Inflater } from '../../../server/src/git/inflater';

const content = fc.oneof(
	fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
	fc.string({ unit: 'grapheme', maxLength: 4000 }).map((s) => Buffer.from(s)),
	fc.integer({ min: 1, max: 200_000 }).map((n) => Buffer.from('a commit message line\n'.repeat(n / 20 + 1))),
);

describe('Inflater', () => {
	const inflater = new Inflater();

	it('reuses one zlib state on this Node (the fast path is the one taken)', () => {
		assert.equal(inflater.reusesState, true);
	});

	it('inflates whole streams exactly, trailing bytes allowed, and refuses cut, mis-sized and damaged ones', () => {
		fc.assert(
			fc.property(content, fc.uint8Array({ maxLength: 64 }), fc.nat(), (data, trailing, cutSeed) => {
				const stream = zlib.deflateSync(data);
				const withTrailing = Buffer.concat([stream, Buffer.from(trailing)]);
				assert.ok(inflater.inflate(withTrailing, data.length)?.equals(data), 'whole stream');
				assert.ok(inflater.inflateTransient(withTrailing, data.length)?.equals(data), 'whole stream, transient');
				const cut = stream.subarray(0, cutSeed % stream.length);
				assert.equal(inflater.inflate(cut, data.length), undefined, 'a stream cut short');
				assert.equal(inflater.inflate(stream, data.length + 1), undefined, 'a stream shorter than declared');
				if (data.length > 0) {
					assert.equal(inflater.inflate(stream, data.length - 1), undefined, 'a stream longer than declared');
				}
				const damaged = Buffer.from(stream);
				damaged[damaged.length - 1 - (cutSeed % 4)]! ^= 0x55; // its checksum
				assert.equal(inflater.inflate(damaged, data.length), undefined, 'a stream whose checksum is wrong');
				// And it still works after each refusal.
				assert.ok(inflater.inflate(stream, data.length)?.equals(data), 'whole stream after refusals');
			}),
			{ numRuns: 150 },
		);
	});

	it('inflates a prefix that satisfies the question, or the whole object when it ends first', () => {
		fc.assert(
			fc.property(content, fc.nat(300_000), (data, wanted) => {
				const stream = zlib.deflateSync(data);
				const prefix = inflater.inflatePrefix(stream, data.length, (_made, length) => length >= wanted);
				assert.ok(prefix, 'an answer');
				assert.ok(prefix.equals(data.subarray(0, prefix.length)), 'the start of the object');
				assert.ok(prefix.length === data.length || prefix.length >= wanted, 'enough, or all of it');
				assert.equal(
					inflater.inflatePrefix(stream.subarray(0, stream.length >> 1), data.length, () => false),
					undefined,
				);
			}),
			{ numRuns: 150 },
		);
	});

	it('without the reused state, answers nothing (the caller inflates with inflateSync)', () => {
		const plain = new Inflater(false);
		assert.equal(plain.reusesState, false);
		assert.equal(plain.inflate(zlib.deflateSync(Buffer.from('x')), 1), undefined);
		assert.equal(
			plain.inflatePrefix(zlib.deflateSync(Buffer.from('x')), 1, () => true),
			undefined,
		);
	});
});
