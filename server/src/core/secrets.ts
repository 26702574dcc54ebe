/**
 * Credentials the desk passes to an agent are removed from what it stores: transcripts, tool
 * outputs, attached files. A secret is looked for as it is and in the forms it is commonly
 * printed in: base64 (at each of the three byte offsets, so a secret inside a longer base64 text is
 * found too), URL-encoded and JSON-escaped.
 */
export const secretMark = '[secret removed]';

/** Shorter values are too likely to occur by chance to be removed wherever they appear. */
const minSecretLength = 8;

export function secretForms(secret: string): string[] {
	if (secret.length < minSecretLength) {
		return [];
	}
	const forms = new Set<string>([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
	const bytes = Buffer.from(secret, 'utf8');
	for (let offset = 0; offset < 3; offset += 1) {
		// With `offset` bytes before it, base64 characters [start, end) hold only the secret's bits.
		const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
		const start = Math.ceil((offset * 8) / 6);
		const end = Math.floor(((offset + bytes.length) * 8) / 6);
		const core = encoded.slice(start, end);
		if (core.length >= minSecretLength) {
			forms.add(core);
		}
	}
	forms.add(bytes.toString('base64'));
	forms.add(bytes.toString('base64').replace(/=+$/, ''));
	// Longest first, so a form that contains another is replaced whole.
	return [...forms].sort((a, b) => b.length - a.length);
}

export function scrubText(text: string, secrets: readonly string[]): string {
	let result = text;
	for (const secret of secrets) {
		for (const form of secretForms(secret)) {
			result = result.split(form).join(secretMark);
		}
	}
	return result;
}

/** The same for bytes: binary content is searched byte for byte, never decoded and re-encoded. */
export function scrubBytes(bytes: Buffer, secrets: readonly string[]): Buffer {
	let result = bytes;
	const mark = Buffer.from(secretMark, 'utf8');
	for (const secret of secrets) {
		for (const form of secretForms(secret)) {
			const needle = Buffer.from(form, 'utf8');
			let at = result.indexOf(needle);
			if (at < 0) {
				continue;
			}
			const parts: Buffer[] = [];
			let from = 0;
			while (at >= 0) {
				parts.push(result.subarray(from, at), mark);
				from = at + needle.length;
				at = result.indexOf(needle, from);
			}
			parts.push(result.subarray(from));
			result = Buffer.concat(parts);
		}
	}
	return result;
}
