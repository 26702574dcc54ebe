import type { DeskError } from './errors';

/** How a reader of one stored format names what it refuses. */
export interface StoredFormatErrors {
	/** The text is not JSON, or not a JSON object: `problem` reads "not JSON (…)" or "not a JSON object". */
	corrupt(problem: string): DeskError;
	/** The object is of a format this desk does not read (a newer desk wrote it). */
	unknownFormat(found: unknown): DeskError;
}

/**
 * The first step of every reader of a stored JSON format: the text must be a JSON object of format
 * `known`. A record without a `format` member was written before formats had numbers and is format 1.
 * The shape of the rest is the reader's to check.
 */
export function readStoredObject(text: string, known: number, errors: StoredFormatErrors): Record<string, unknown> {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		throw errors.corrupt(`not JSON (${(error as Error).message})`);
	}
	if (value === null || typeof value !== 'object' || Array.isArray(value)) {
		throw errors.corrupt('not a JSON object');
	}
	const record = value as Record<string, unknown>;
	const found = Object.hasOwn(record, 'format') ? record.format : 1;
	if (found !== known) {
		throw errors.unknownFormat(found);
	}
	return record;
}
