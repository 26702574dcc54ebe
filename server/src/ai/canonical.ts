import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level: the same object always gives the same bytes. */
export function canonicalJson(value: unknown): string {
	return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
	if (Array.isArray(value)) {
		return value.map(sortKeys);
	}
	if (value !== null && typeof value === 'object') {
		// A null prototype: a "__proto__" member is kept as a member, not taken for the object's prototype and lost.
		const out = Object.create(null) as Record<string, unknown>;
		for (const key of Object.keys(value).sort()) {
			const v = (value as Record<string, unknown>)[key];
			if (v !== undefined) {
				out[key] = sortKeys(v);
			}
		}
		return out;
	}
	return value;
}

export function sha256Hex(bytes: string | Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}
