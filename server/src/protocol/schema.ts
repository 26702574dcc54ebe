/**
 * A small runtime schema for JSON-RPC params: each protocol method declares its params once as a
 * schema, the TypeScript type is inferred from it, and the server checks every incoming request
 * against it before any handler runs. Checks are shallow by construction (only declared fields are
 * visited), so oversized or deeply nested input costs nothing and reaches no handler.
 */

export interface Schema<T> {
	readonly describe: string;
	/** Returns the checked value or a message saying what is wrong at `where`. */
	check(value: unknown, where: string): { ok: true; value: T } | { ok: false; problem: string };
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

const maxStringLength = 64 * 1024;

export function string(options: { maxLength?: number; minLength?: number; pattern?: RegExp } = {}): Schema<string> {
	const maxLength = options.maxLength ?? maxStringLength;
	const minLength = options.minLength ?? 0;
	return {
		describe: 'string',
		check(value, where) {
			if (typeof value !== 'string') {
				return { ok: false, problem: `${where} must be a string` };
			}
			if (value.length > maxLength || value.length < minLength) {
				return { ok: false, problem: `${where} must be ${minLength} to ${maxLength} characters long` };
			}
			if (options.pattern && !options.pattern.test(value)) {
				return { ok: false, problem: `${where} must match ${options.pattern.source}` };
			}
			return { ok: true, value };
		},
	};
}

export function integer(options: { min?: number; max?: number } = {}): Schema<number> {
	const min = options.min ?? Number.MIN_SAFE_INTEGER;
	const max = options.max ?? Number.MAX_SAFE_INTEGER;
	return {
		describe: 'integer',
		check: (value, where) =>
			Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
				? { ok: true, value: value as number }
				: { ok: false, problem: `${where} must be a whole number from ${min} to ${max}` },
	};
}

/** Any JSON value, checked later by the domain (checks files, for one). Only its size is bounded here. */
export function json(options: { maxBytes?: number } = {}): Schema<unknown> {
	const maxBytes = options.maxBytes ?? 64 * 1024;
	return {
		describe: 'json',
		check(value, where) {
			let text: string;
			try {
				text = JSON.stringify(value) ?? '';
			} catch {
				return { ok: false, problem: `${where} is not JSON` };
			}
			return text.length > maxBytes ? { ok: false, problem: `${where} is over ${maxBytes} bytes` } : { ok: true, value };
		},
	};
}

export function boolean(): Schema<boolean> {
	return {
		describe: 'boolean',
		check: (value, where) => (typeof value === 'boolean' ? { ok: true, value } : { ok: false, problem: `${where} must be true or false` }),
	};
}

export function array<T>(item: Schema<T>, options: { maxItems?: number } = {}): Schema<T[]> {
	const maxItems = options.maxItems ?? 1000;
	return {
		describe: `${item.describe}[]`,
		check(value, where) {
			if (!Array.isArray(value)) {
				return { ok: false, problem: `${where} must be an array` };
			}
			if (value.length > maxItems) {
				return { ok: false, problem: `${where} has ${value.length} items; at most ${maxItems} are accepted` };
			}
			const out: T[] = [];
			for (const [index, element] of value.entries()) {
				const result = item.check(element, `${where}[${index}]`);
				if (!result.ok) {
					return result;
				}
				out.push(result.value);
			}
			return { ok: true, value: out };
		},
	};
}

type Shape = Record<string, Schema<unknown> | Optional<unknown>>;

export interface Optional<T> {
	readonly optional: Schema<T>;
}

export function optional<T>(schema: Schema<T>): Optional<T> {
	return { optional: schema };
}

type RequiredKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? never : K }[keyof S];
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends Optional<unknown> ? K : never }[keyof S];

export type ObjectOf<S extends Shape> = { [K in RequiredKeys<S>]: S[K] extends Schema<infer T> ? T : never } & {
	[K in OptionalKeys<S>]?: S[K] extends Optional<infer T> ? T : never;
};

/** An object with exactly these fields: unknown fields are refused, so a typo never passes silently. */
export function object<S extends Shape>(shape: S): Schema<ObjectOf<S>> {
	return {
		describe: 'object',
		check(value, where) {
			if (value === null || typeof value !== 'object' || Array.isArray(value)) {
				return { ok: false, problem: `${where} must be an object` };
			}
			const input = value as Record<string, unknown>;
			for (const key of Object.keys(input)) {
				if (!Object.prototype.hasOwnProperty.call(shape, key)) {
					return { ok: false, problem: `${where} has an unknown field ${JSON.stringify(key.slice(0, 60))}` };
				}
			}
			// A null-prototype result: a "__proto__" key can never reach a prototype.
			const out = Object.create(null) as Record<string, unknown>;
			for (const [key, field] of Object.entries(shape)) {
				const has = Object.prototype.hasOwnProperty.call(input, key) && input[key] !== undefined;
				if ('optional' in field) {
					if (!has) {
						continue;
					}
					const result = field.optional.check(input[key], `${where}.${key}`);
					if (!result.ok) {
						return result;
					}
					out[key] = result.value;
				} else {
					if (!has) {
						return { ok: false, problem: `${where}.${key} is missing` };
					}
					const result = field.check(input[key], `${where}.${key}`);
					if (!result.ok) {
						return result;
					}
					out[key] = result.value;
				}
			}
			return { ok: true, value: { ...out } as ObjectOf<S> };
		},
	};
}
