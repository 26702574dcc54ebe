import { DeskError } from '../core/errors';

/**
 * The first step of every reader of a stored JSON format of runs: the text must be a JSON object
 * (else `bad`), of `format` (a record without one is format 1, as written before formats had
 * versions; another is `store.unknownSchema`, with `facts` and the format found).
 */
export function readFormatted(text: string, format: number, what: string, facts: Record<string, unknown>, bad: (field: string, problem: string) => DeskError): Record<string, unknown> {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		throw bad('json', `is not JSON (${(error as Error).message})`);
	}
	if (value === null || typeof value !== 'object' || Array.isArray(value)) {
		throw bad('json', 'is not an object');
	}
	const record = value as Record<string, unknown>;
	const found = record.format ?? 1;
	if (found !== format) {
		throw new DeskError('store.unknownSchema', `${what} has format ${JSON.stringify(found)}; this desk reads format ${format}. Update the desk.`, { ...facts, format: found });
	}
	return record;
}
