/** What the MCP tests check a tool's input schema against: agents read only flat JSON Schemas. */

/** The places in a JSON Schema where it is not flat: a reference, a union, or a `type` that lists types. */
export function notFlat(schema: unknown, at = 'inputSchema'): string[] {
	if (schema === null || typeof schema !== 'object') {
		return [];
	}
	if (Array.isArray(schema)) {
		return schema.flatMap((item, index) => notFlat(item, `${at}[${index}]`));
	}
	const found: string[] = [];
	for (const [key, value] of Object.entries(schema)) {
		if (['$defs', 'definitions', '$ref', 'anyOf', 'oneOf', 'allOf'].includes(key)) {
			found.push(`${at}.${key}`);
		}
		if (key === 'type' && typeof value !== 'string') {
			found.push(`${at}.type is ${JSON.stringify(value)}`);
		}
		found.push(...notFlat(value, `${at}.${key}`));
	}
	return found;
}
