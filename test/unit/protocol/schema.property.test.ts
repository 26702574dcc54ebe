/**
 * The params schema checker against generated schemas: for a random schema (strings with bounds,
 * patterns and absolute paths, integers with bounds, booleans, closed string sets, arrays, objects
 * with required and optional fields, JSON), every value built to fit it passes and comes out equal;
 * a value with one thing wrong is refused, naming the field where it is wrong (and the kind of
 * refusal for a relative path or a lone surrogate). The schema's JSON Schema (what an MCP tool
 * publishes) agrees, read by the MCP SDK's own validator: it takes every value built to fit and
 * refuses every value with one thing wrong, but for what JSON Schema cannot say (a lone surrogate, a
 * relative path, a JSON value nested too deep). fast-check prints the seed and the smallest failing
 * schema and value when a property fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from '@modelcontextprotocol/client/validators/ajv';
import fc from 'fast-check';
import {
	array,
	boolean,
	integer,
	json,
	object,
	oneOf,
	optional,
	string,
	isWellFormedText,
	type Checked,
	type Schema,
	type Shape,
} from '../../../server/src/protocol/schema';

/** A schema as data, so fast-check can build, print and shrink it. */
type Spec =
	| { kind: 'string'; minLength: number; maxLength: number; pattern: boolean; absolute: boolean }
	| { kind: 'integer'; min: number; max: number }
	| { kind: 'boolean' }
	| { kind: 'oneOf'; values: [string, ...string[]] }
	| { kind: 'json' }
	| { kind: 'array'; item: Spec; maxItems: number }
	| { kind: 'object'; fields: Array<{ key: string; optional: boolean; spec: Spec }> };

/** What a value with one thing wrong must be refused for. */
interface Wrong {
	value: unknown;
	/** The path of the field the refusal names, below `params`. */
	field: string;
	kind?: 'relativePath' | 'badText';
}

const where = 'params';
/** Strings for patterned fields: lowercase letters only. */
const patternSource = '^[a-z]*$';

const leafSpec: fc.Arbitrary<Spec> = fc.oneof(
	fc
		.record({ minLength: fc.nat(3), extra: fc.nat(12), pattern: fc.boolean(), absolute: fc.boolean() })
		.map(({ minLength, extra, pattern, absolute }) => ({
			kind: 'string' as const,
			minLength,
			maxLength: minLength + extra + (absolute ? 1 : 0),
			pattern: pattern && !absolute,
			absolute,
		})),
	fc
		.tuple(fc.integer({ min: -1000, max: 1000 }), fc.nat(1000))
		.map(([min, span]) => ({ kind: 'integer' as const, min, max: min + span })),
	fc.constant({ kind: 'boolean' as const }),
	fc
		.uniqueArray(fc.constantFrom('error', 'warn', 'info', 'commit', 'abandon', 'target', 'reference', ''), {
			minLength: 1,
			maxLength: 4,
		})
		.map((values) => ({ kind: 'oneOf' as const, values: values as [string, ...string[]] })),
	fc.constant({ kind: 'json' as const }),
);

const specArbitrary: fc.Arbitrary<Spec> = fc.letrec<{ spec: Spec }>((tie) => ({
	spec: fc.oneof(
		{ depthSize: 'small', withCrossShrink: true },
		leafSpec,
		fc
			.record({ item: tie('spec'), maxItems: fc.integer({ min: 1, max: 4 }) })
			.map(({ item, maxItems }) => ({ kind: 'array' as const, item, maxItems })),
		fc
			.uniqueArray(
				fc.record({
					key: fc.constantFrom('id', 'name', 'path', 'project', 'items', 'a', 'b', 'note'),
					optional: fc.boolean(),
					spec: tie('spec'),
				}),
				{ selector: (field) => field.key, maxLength: 4 },
			)
			.map((fields) => ({ kind: 'object' as const, fields })),
	),
})).spec;

function schemaOf(spec: Spec): Schema<unknown> {
	switch (spec.kind) {
		case 'string':
			return string({
				minLength: spec.minLength,
				maxLength: spec.maxLength,
				absolute: spec.absolute,
				...(spec.pattern ? { pattern: new RegExp(patternSource) } : {}),
			});
		case 'integer':
			return integer({ min: spec.min, max: spec.max });
		case 'boolean':
			return boolean();
		case 'oneOf':
			return oneOf(spec.values);
		case 'json':
			return json({ maxDepth: 4 });
		case 'array':
			return array(schemaOf(spec.item), { maxItems: spec.maxItems });
		case 'object': {
			const shape: Shape = {};
			for (const field of spec.fields) {
				shape[field.key] = field.optional ? optional(schemaOf(field.spec)) : schemaOf(field.spec);
			}
			return object(shape) as Schema<unknown>;
		}
	}
}

/** Any text that survives UTF-8 (surrogate pairs included), `length` measured in UTF-16 units as the checker measures it. */
function text(minLength: number, maxLength: number, pattern: boolean): fc.Arbitrary<string> {
	const unit = pattern
		? fc.constantFrom(...'abcxyz')
		: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.constantFrom('a', '/', ' ', 'é', '😀'));
	return fc
		.array(unit, { minLength, maxLength })
		.map((units) => units.join(''))
		.filter((s) => s.length >= minLength && s.length <= maxLength && isWellFormedText(s));
}

function fitting(spec: Spec): fc.Arbitrary<unknown> {
	switch (spec.kind) {
		case 'string':
			if (spec.absolute) {
				const roots = ['/', 'C:\\', 'd:/', '\\\\server\\'].filter((root) => root.length <= spec.maxLength);
				return fc
					.constantFrom(...roots)
					.chain((root) =>
						text(Math.max(0, spec.minLength - root.length), spec.maxLength - root.length, false).map(
							(rest) => root + rest,
						),
					);
			}
			return text(spec.minLength, spec.maxLength, spec.pattern);
		case 'integer':
			return fc.integer({ min: spec.min, max: spec.max });
		case 'boolean':
			return fc.boolean();
		case 'oneOf':
			return fc.constantFrom(...spec.values);
		case 'json':
			return fc.jsonValue({ maxDepth: 3 });
		case 'array':
			return fc.array(fitting(spec.item), { maxLength: spec.maxItems });
		case 'object': {
			const model: Record<string, fc.Arbitrary<unknown>> = {};
			for (const field of spec.fields) {
				model[field.key] = fitting(field.spec);
			}
			return fc.record(model, {
				requiredKeys: spec.fields.filter((field) => !field.optional).map((field) => field.key),
				noNullPrototype: true,
			});
		}
	}
}

/** A value of another JSON type than the spec takes. */
function otherType(spec: Spec): fc.Arbitrary<unknown> {
	const all = {
		string: fc.constant('text'),
		number: fc.constant(1.5),
		boolean: fc.constant(true),
		null: fc.constant(null),
		array: fc.constant([]),
		object: fc.constant({}),
	};
	const taken: Record<Spec['kind'], Array<keyof typeof all>> = {
		string: ['string'],
		oneOf: ['string'],
		integer: [],
		boolean: ['boolean'],
		json: Object.keys(all) as Array<keyof typeof all>,
		array: ['array'],
		object: ['object'],
	};
	return fc.oneof(
		...Object.entries(all)
			.filter(([type]) => !taken[spec.kind].includes(type as keyof typeof all))
			.map(([, value]) => value),
	);
}

/** Values of `spec` with exactly one thing wrong, at `path`, and the refusal they must get. */
function wrong(spec: Spec, path: string): fc.Arbitrary<Wrong> {
	const at = (value: fc.Arbitrary<unknown>, kind?: Wrong['kind']): fc.Arbitrary<Wrong> =>
		value.map((v) => (kind ? { value: v, field: path, kind } : { value: v, field: path }));
	const choices: Array<fc.Arbitrary<Wrong>> = spec.kind === 'json' ? [] : [at(otherType(spec))];
	switch (spec.kind) {
		case 'string':
			choices.push(
				at(text(spec.maxLength + 1, spec.maxLength + 4, spec.pattern).map((s) => (spec.absolute ? `/${s}` : s))),
			);
			if (spec.minLength > 0) {
				choices.push(at(text(0, spec.minLength - 1, spec.pattern).filter((s) => !spec.absolute || s.length === 0)));
			}
			{
				// A lone surrogate, which has no UTF-8 form, in a string that is otherwise right.
				const head = (spec.absolute ? '/' : '').padEnd(spec.minLength - 1, 'a');
				if (head.length + 1 <= spec.maxLength) {
					choices.push(
						at(
							fc.constantFrom('\ud800', '\udfff').map((lone) => head + lone),
							'badText',
						),
					);
				}
			}
			if (spec.pattern && spec.maxLength >= 1) {
				choices.push(
					at(
						text(Math.max(spec.minLength, 1), spec.maxLength, false).filter((s) => !new RegExp(patternSource).test(s)),
					),
				);
			}
			if (spec.absolute) {
				choices.push(at(text(Math.max(spec.minLength, 1), spec.maxLength, true), 'relativePath'));
			}
			break;
		case 'integer':
			choices.push(
				at(
					fc.oneof(
						fc.integer({ min: spec.max + 1, max: spec.max + 1000 }),
						fc.integer({ min: spec.min - 1000, max: spec.min - 1 }),
						fc.constantFrom(spec.min + 0.5, Number.NaN, Infinity, 2 ** 53),
					),
				),
			);
			break;
		case 'oneOf':
			choices.push(at(fc.constantFrom('nope', 'ERROR', 'info ', 'x').filter((value) => !spec.values.includes(value))));
			break;
		case 'json':
			// Nested deeper than the schema's four levels.
			choices.push(at(fitting(spec).map((value) => [[[[[value]]]]])));
			break;
		case 'array':
			choices.push(at(fc.array(fitting(spec.item), { minLength: spec.maxItems + 1, maxLength: spec.maxItems + 3 })));
			choices.push(
				fc.array(fitting(spec.item), { maxLength: spec.maxItems - 1 }).chain((items) =>
					fc.nat(items.length).chain((index) =>
						wrong(spec.item, `${path}[${index}]`).map((bad) => ({
							...bad,
							value: [...items.slice(0, index), bad.value, ...items.slice(index)],
						})),
					),
				),
			);
			break;
		case 'object': {
			choices.push(fitting(spec).map((value) => ({ value: { ...(value as object), unexpected: 1 }, field: path })));
			for (const field of spec.fields) {
				if (!field.optional) {
					choices.push(
						fitting(spec).map((value) => {
							const { [field.key]: _, ...rest } = value as Record<string, unknown>;
							return { value: rest, field: `${path}.${field.key}` };
						}),
					);
				}
				choices.push(
					fc
						.tuple(fitting(spec), wrong(field.spec, `${path}.${field.key}`))
						.map(([value, bad]) => ({ ...bad, value: { ...(value as object), [field.key]: bad.value } })),
				);
			}
			break;
		}
	}
	return fc.oneof(...choices);
}

const runs = { numRuns: 400, includeErrorInReport: true };

describe('the params schema checker (property)', () => {
	it('a value built to fit a schema passes and comes out equal', () => {
		fc.assert(
			fc.property(
				specArbitrary.chain((spec) => fc.tuple(fc.constant(spec), fitting(spec))),
				([spec, value]) => {
					const checked = schemaOf(spec).check(value, where);
					assert.ok(checked.ok, `refused: ${checked.ok ? '' : checked.problem}`);
					assert.deepStrictEqual(checked.value, value);
				},
			),
			runs,
		);
	});

	it('a value with one thing wrong is refused, naming the field', () => {
		fc.assert(
			fc.property(
				specArbitrary.chain((spec) => fc.tuple(fc.constant(spec), wrong(spec, where))),
				([spec, bad]) => {
					const checked: Checked<unknown> = schemaOf(spec).check(bad.value, where);
					assert.equal(checked.ok, false, 'passed');
					if (!checked.ok) {
						assert.equal(checked.field, bad.field, checked.problem);
						assert.equal(checked.kind, bad.kind, checked.problem);
						assert.ok(checked.problem.startsWith(bad.field), `the message names the field: ${checked.problem}`);
					}
				},
			),
			runs,
		);
	});

	// The checker counts a string's length in UTF-16 units, as JavaScript does; so is the validator told to.
	const validator = new Ajv({ unicode: false, strict: true, allErrors: false });

	it('the JSON Schema takes every value built to fit', () => {
		fc.assert(
			fc.property(
				specArbitrary.chain((spec) => fc.tuple(fc.constant(spec), fitting(spec))),
				([spec, value]) => {
					const validate = validator.compile(schemaOf(spec).json);
					assert.ok(validate(value), JSON.stringify(validate.errors));
				},
			),
			runs,
		);
	});

	it('the JSON Schema refuses a value with one thing wrong, but for what it cannot say', () => {
		fc.assert(
			fc.property(
				specArbitrary.chain((spec) => fc.tuple(fc.constant(spec), wrong(spec, where))),
				([spec, bad]) => {
					const schema = schemaOf(spec);
					const checked = schema.check(bad.value, where);
					if (bad.kind !== undefined || (!checked.ok && checked.problem.includes('nested deeper'))) {
						return;
					}
					assert.equal(validator.compile(schema.json)(bad.value), false, JSON.stringify(schema.json));
				},
			),
			runs,
		);
	});
});
