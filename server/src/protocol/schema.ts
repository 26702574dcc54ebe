/**
 * A small runtime schema for JSON-RPC params: each protocol method declares its params once as a
 * schema, the TypeScript type is inferred from it, and the server checks every incoming request
 * against it before any handler runs. Checks are shallow by construction (only declared fields are
 * visited), so oversized or deeply nested input costs nothing and reaches no handler. Each schema
 * also gives its JSON Schema (`json`), which the MCP tools publish as their input schema.
 */

/**
 * The JSON Schema of a {@link Schema}: flat by construction (no `$defs`, `$ref`, `anyOf`, `oneOf`,
 * `allOf`, and `type` always one name), since agents differ in what they read and Gemini CLI rejects
 * references and unions. What a checker refuses beyond it (a lone surrogate, a relative path) is said
 * in `description`.
 */
export type JsonSchema = {
	readonly type?: 'string' | 'integer' | 'boolean' | 'array' | 'object';
	readonly description?: string;
	readonly minLength?: number;
	readonly maxLength?: number;
	readonly pattern?: string;
	readonly enum?: readonly string[];
	readonly minimum?: number;
	readonly maximum?: number;
	readonly items?: JsonSchema;
	readonly maxItems?: number;
	readonly properties?: Readonly<Record<string, JsonSchema>>;
	readonly required?: readonly string[];
	readonly additionalProperties?: false;
};

export interface Schema<T> {
	readonly describe: string;
	/** This schema as JSON Schema (what an MCP tool's `inputSchema` is built from). */
	readonly json: JsonSchema;
	/** An object schema's fields, an array schema's item: what a fuzz of the protocol builds its input from. */
	readonly shape?: Shape;
	readonly item?: Schema<unknown>;
	/** Returns the checked value or a message saying what is wrong at `where` (the field it names). */
	check(value: unknown, where: string): Checked<T>;
}

/**
 * A refusal names the field (`params.folders[0].path`) and, where it is more than a wrong shape,
 * says what kind of refusal it is: `relativePath` (a path the server would resolve against its own
 * working folder) or `badText` (a string that does not survive UTF-8: a lone surrogate).
 */
export type Checked<T> =
	{ ok: true; value: T } | { ok: false; problem: string; field: string; kind?: 'relativePath' | 'badText' };

function refuse(
	where: string,
	problem: string,
	kind?: 'relativePath' | 'badText',
): { ok: false; problem: string; field: string; kind?: 'relativePath' | 'badText' } {
	return kind ? { ok: false, problem, field: where, kind } : { ok: false, problem, field: where };
}

/** A lone UTF-16 surrogate: it has no UTF-8 form, so a name holding one is stored altered and never found again. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when the text survives UTF-8 unchanged (no lone surrogate). */
export function isWellFormedText(text: string): boolean {
	return !loneSurrogate.test(text);
}

/** An absolute path, POSIX (`/x`) or Windows (`C:\\x`, `\\\\server\\share`); nothing the server would resolve against its own folder. */
export function isAbsolutePath(text: string): boolean {
	return text.startsWith('/') || /^[A-Za-z]:[\\/]/.test(text) || text.startsWith('\\\\');
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

const maxStringLength = 64 * 1024;

/**
 * A string of bounded length that survives UTF-8 (no lone surrogate); with `absolute`, a path that
 * is absolute (a relative one would resolve against the server's working folder, which is nobody's).
 */
export function string(
	options: { maxLength?: number; minLength?: number; pattern?: RegExp; absolute?: boolean } = {},
): Schema<string> {
	const maxLength = options.maxLength ?? maxStringLength;
	const minLength = options.minLength ?? 0;
	return {
		describe: options.absolute ? 'absolute path' : 'string',
		json: {
			type: 'string',
			...(minLength > 0 ? { minLength } : {}),
			maxLength,
			...(options.pattern ? { pattern: options.pattern.source } : {}),
			...(options.absolute ? { description: 'An absolute path.' } : {}),
		},
		check(value, where) {
			if (typeof value !== 'string') {
				return refuse(where, `${where} must be a string`);
			}
			if (value.length > maxLength || value.length < minLength) {
				return refuse(where, `${where} must be ${minLength} to ${maxLength} characters long`);
			}
			if (!isWellFormedText(value)) {
				return refuse(
					where,
					`${where} holds a lone UTF-16 surrogate, which has no UTF-8 form and would be stored altered`,
					'badText',
				);
			}
			if (options.pattern && !options.pattern.test(value)) {
				return refuse(where, `${where} must match ${options.pattern.source}`);
			}
			if (options.absolute && !isAbsolutePath(value)) {
				return refuse(
					where,
					`${where} must be an absolute path; a relative one would resolve against the server's working folder`,
					'relativePath',
				);
			}
			return { ok: true, value };
		},
	};
}

/**
 * One of the given strings, checked as {@link string} first (so a lone surrogate is `badText`): the
 * inferred type is the union of the values, so a handler takes it as the domain's type without a cast.
 */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T): Schema<T[number]> {
	const text = string();
	const members: ReadonlySet<string> = new Set(values);
	return {
		describe: text.describe,
		json: { type: 'string', enum: values },
		check(value, where) {
			const checked = text.check(value, where);
			if (!checked.ok) {
				return checked;
			}
			return members.has(checked.value)
				? { ok: true, value: checked.value as T[number] }
				: refuse(where, `${where} must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`);
		},
	};
}

export function integer(options: { min?: number; max?: number } = {}): Schema<number> {
	const min = options.min ?? Number.MIN_SAFE_INTEGER;
	const max = options.max ?? Number.MAX_SAFE_INTEGER;
	return {
		describe: 'integer',
		json: {
			type: 'integer',
			...(options.min === undefined ? {} : { minimum: min }),
			...(options.max === undefined ? {} : { maximum: max }),
		},
		check: (value, where) =>
			Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
				? { ok: true, value: value as number }
				: refuse(where, `${where} must be a whole number from ${min} to ${max}`),
	};
}

/** Any JSON value, checked later by the domain (checks files, for one). Only its size is bounded here. */
export function json(options: { maxBytes?: number; maxDepth?: number } = {}): Schema<unknown> {
	const maxBytes = options.maxBytes ?? 64 * 1024;
	const maxDepth = options.maxDepth ?? 64;
	return {
		describe: 'json',
		// No `type`: any JSON value (a list of types would be a union, which some agents reject).
		json: { description: `Any JSON value, at most ${maxBytes} bytes.` },
		check(value, where) {
			// Measured without recursion before anything recursive (JSON.stringify, the domain's parsers) sees it.
			if (depthOver(value, maxDepth)) {
				return refuse(where, `${where} is nested deeper than ${maxDepth} levels`);
			}
			let text: string;
			try {
				text = JSON.stringify(value) ?? '';
			} catch {
				return refuse(where, `${where} is not JSON`);
			}
			return text.length > maxBytes ? refuse(where, `${where} is over ${maxBytes} bytes`) : { ok: true, value };
		},
	};
}

/** True when `value` has arrays or objects nested deeper than `maxDepth`; iterative, so any depth is safe to measure. */
function depthOver(value: unknown, maxDepth: number): boolean {
	const stack: Array<[unknown, number]> = [[value, 0]];
	while (stack.length > 0) {
		const [current, depth] = stack.pop()!;
		if (current === null || typeof current !== 'object') {
			continue;
		}
		if (depth >= maxDepth) {
			return true;
		}
		for (const child of Array.isArray(current) ? current : Object.values(current as Record<string, unknown>)) {
			stack.push([child, depth + 1]);
		}
	}
	return false;
}

export function boolean(): Schema<boolean> {
	return {
		describe: 'boolean',
		json: { type: 'boolean' },
		check: (value, where) =>
			typeof value === 'boolean' ? { ok: true, value } : refuse(where, `${where} must be true or false`),
	};
}

export function array<T>(item: Schema<T>, options: { maxItems?: number } = {}): Schema<T[]> {
	const maxItems = options.maxItems ?? 1000;
	return {
		describe: `${item.describe}[]`,
		item,
		json: { type: 'array', items: item.json, maxItems },
		check(value, where) {
			if (!Array.isArray(value)) {
				return refuse(where, `${where} must be an array`);
			}
			if (value.length > maxItems) {
				return refuse(where, `${where} has ${value.length} items; at most ${maxItems} are accepted`);
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

export type Shape = Record<string, Schema<unknown> | Optional<unknown>>;

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
	const properties: Record<string, JsonSchema> = {};
	const required: string[] = [];
	for (const [key, field] of Object.entries(shape)) {
		properties[key] = 'optional' in field ? field.optional.json : field.json;
		if (!('optional' in field)) {
			required.push(key);
		}
	}
	return {
		describe: 'object',
		shape,
		json: {
			type: 'object',
			properties,
			...(required.length > 0 ? { required } : {}),
			additionalProperties: false,
		},
		check(value, where) {
			if (value === null || typeof value !== 'object' || Array.isArray(value)) {
				return refuse(where, `${where} must be an object`);
			}
			const input = value as Record<string, unknown>;
			for (const key of Object.keys(input)) {
				if (!Object.prototype.hasOwnProperty.call(shape, key)) {
					return refuse(where, `${where} has an unknown field ${JSON.stringify(key.slice(0, 60))}`);
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
						return refuse(`${where}.${key}`, `${where}.${key} is missing`);
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

/**
 * `schema` with a description in its JSON Schema: what an agent reads about the field (the checks are
 * the schema's own).
 */
export function described<T>(schema: Schema<T>, description: string): Schema<T> {
	return { ...schema, json: { ...schema.json, description } };
}
