/**
 * Canonical JSON against its model, plain JSON: generated JSON values come back equal after a round
 * trip, an object's key order never changes the bytes, every object comes out with its keys sorted,
 * and two values give the same bytes exactly when they are equal. fast-check prints the seed and the
 * smallest failing value when a property fails.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../../../server/src/ai/canonical';

/** What JSON itself makes of a value (`-0` becomes `0`): the model the canonical form must agree with. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** The same value with every object's keys in another order, chosen by `order` (a permutation seed per object). */
function reordered(value: unknown, order: () => number): unknown {
	if (Array.isArray(value)) {
		return value.map((item) => reordered(item, order));
	}
	if (value !== null && typeof value === 'object') {
		const entries = Object.entries(value);
		for (let i = entries.length - 1; i > 0; i--) {
			const j = order() % (i + 1);
			[entries[i], entries[j]] = [entries[j]!, entries[i]!];
		}
		const out: Record<string, unknown> = {};
		for (const [key, item] of entries) {
			Object.defineProperty(out, key, {
				value: reordered(item, order),
				enumerable: true,
				writable: true,
				configurable: true,
			});
		}
		return out;
	}
	return value;
}

/** An array index key (`0`, `17`): JavaScript lists these first, ascending by number, in every object. */
const isIndexKey = (key: string) => /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 2 ** 32 - 1;

/**
 * The model: keys sorted by UTF-16 code units, except that array index keys come first in numeric
 * order (an object built in sorted order is listed that way by JavaScript, and so by JSON.stringify);
 * undefined members left out, as JSON leaves them out.
 */
function model(value: unknown): string {
	if (Array.isArray(value)) {
		return `[${value.map((item) => (item === undefined ? 'null' : model(item))).join(',')}]`;
	}
	if (value !== null && typeof value === 'object') {
		const record = value as Record<string, unknown>;
		const keys = Object.keys(record).filter((key) => record[key] !== undefined);
		const indexes = keys.filter(isIndexKey).sort((a, b) => Number(a) - Number(b));
		const names = keys.filter((key) => !isIndexKey(key)).sort();
		return `{${[...indexes, ...names].map((key) => `${JSON.stringify(key)}:${model(record[key])}`).join(',')}}`;
	}
	return JSON.stringify(value);
}

const json = fc.jsonValue({ maxDepth: 4 });
const runs = { numRuns: 300, includeErrorInReport: true };

describe('canonical JSON (property)', () => {
	it('round trip: parsing the canonical bytes gives the value back', () => {
		fc.assert(
			fc.property(json, (value) => {
				assert.deepStrictEqual(JSON.parse(canonicalJson(value)), asJson(value));
			}),
			runs,
		);
	});

	it('key order never changes the bytes', () => {
		fc.assert(
			fc.property(json, fc.infiniteStream(fc.nat()), (value, order) => {
				const next = order[Symbol.iterator]();
				assert.equal(canonicalJson(reordered(value, () => next.next().value as number)), canonicalJson(value));
			}),
			runs,
		);
	});

	it('gives the bytes of the model, keys sorted at every level', () => {
		fc.assert(
			fc.property(json, (value) => {
				assert.equal(canonicalJson(value), model(value));
			}),
			runs,
		);
	});

	it('keeps every key, also those an object literal treats specially (__proto__, constructor, indexes)', () => {
		const key = fc.constantFrom('__proto__', 'constructor', 'toString', '0', '10', '2', '', 'a', 'B');
		const tricky = fc.letrec((tie) => ({
			value: fc.oneof(
				{ depthSize: 'small' },
				fc.jsonValue({ maxDepth: 0 }),
				fc.array(tie('value'), { maxLength: 3 }),
				fc.dictionary(key, tie('value'), { maxKeys: 4 }),
			),
		})).value;
		fc.assert(
			fc.property(tricky, (value) => {
				// Parsed from text, as the desk's objects are: "__proto__" is then a member like any other.
				const parsed = JSON.parse(JSON.stringify(value)) as unknown;
				assert.deepStrictEqual(JSON.parse(canonicalJson(parsed)), parsed);
				assert.equal(canonicalJson(parsed), model(parsed));
			}),
			runs,
		);
	});

	it('two values give the same bytes exactly when they are equal', () => {
		// Pairs drawn from a small set of leaves, so equal pairs that are different objects come up often.
		const small = fc.letrec((tie) => ({
			value: fc.oneof(
				{ depthSize: 'small', withCrossShrink: true },
				fc.constantFrom(0, 1, 'a', 'b', true, null),
				fc.array(tie('value'), { maxLength: 3 }),
				fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('value'), { maxKeys: 3 }),
			),
		})).value;
		fc.assert(
			fc.property(small, small, (a, b) => {
				assert.equal(canonicalJson(a) === canonicalJson(b), isDeepStrictEqual(asJson(a), asJson(b)));
			}),
			{ numRuns: 1000, includeErrorInReport: true },
		);
	});

	it('undefined members are left out, as JSON leaves them out', () => {
		fc.assert(
			fc.property(fc.dictionary(fc.string(), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined })), (value) => {
				assert.deepStrictEqual(JSON.parse(canonicalJson(value)), asJson(value));
			}),
			runs,
		);
	});
});
