/**
 * Names and types of attachments (glossary: Attachment): the name a file is attached under is a label, shown in
 * views, terminals and a download's name, so it is kept printable; the type recorded is only a claim,
 * looked at again against the stored bytes before anything is shown.
 */

/** The longest name kept, in UTF-8 bytes; a longer one keeps its end (the file name and extension). */
export const maxNameBytes = 255;

/**
 * CleanName: slash-separated, no empty, `.` or `..` components, no control or format characters
 * (a right-to-left override makes `exe.txt` read as `txt.exe`), valid UTF-8, at most
 * {@link maxNameBytes} bytes keeping the end. A name with nothing left is `attachment`.
 */
export function cleanName(name: string): string {
	// Lone surrogates are not valid UTF-8: they become U+FFFD, as decoding would make them.
	return cleanComponents(Buffer.from(name, 'utf8').toString('utf8').replace(/\\/g, '/').split('/'));
}

/**
 * CleanName of a path already split into its components, each taken as it is: an outbox path whose
 * component is a name escaped from bytes that are not UTF-8 (`\x80`) keeps its backslashes.
 */
export function cleanComponents(components: readonly string[]): string {
	let cleaned = components
		.map((c) => c.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '').trim())
		.filter((c) => c !== '' && c !== '.' && c !== '..')
		.join('/');
	if (cleaned === '') {
		return 'attachment';
	}
	const bytes = Buffer.from(cleaned, 'utf8');
	if (bytes.length > maxNameBytes) {
		// Keep the end; step forward to a character boundary so no character is cut in half.
		let start = bytes.length - maxNameBytes;
		while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) {
			start += 1;
		}
		// What is left may begin with a piece of a component: cleaned again, it cannot be `..` or empty.
		cleaned = bytes
			.subarray(start)
			.toString('utf8')
			.split('/')
			.map((c) => c.trim())
			.filter((c) => c !== '' && c !== '.' && c !== '..')
			.join('/');
	}
	return cleaned || 'attachment';
}

/** The last component of a name: what a download is saved as. */
export function baseName(name: string): string {
	const parts = name.split('/');
	return parts[parts.length - 1] || name;
}

/** A byte count for a person: 0 B, 999 B, 1.0 KiB, 32.0 MiB, 1.0 GiB. */
export function humanBytes(n: number): string {
	if (n < 1024) {
		return `${n} B`;
	}
	const units = ['KiB', 'MiB', 'GiB', 'TiB'];
	let value = n / 1024;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit += 1;
	}
	return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * A byte count exactly, for a limit and what went over it (a rounded 32.0 MiB reads the same one
 * byte either side): `33,554,433 bytes`; a whole number of KiB, MiB or GiB also in that unit,
 * `33,554,432 bytes (32 MiB)`.
 */
export function exactBytes(n: number): string {
	const count = `${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} byte${n === 1 ? '' : 's'}`;
	for (const [unit, size] of [
		['GiB', 1024 ** 3],
		['MiB', 1024 ** 2],
		['KiB', 1024],
	] as const) {
		if (n >= size && n % size === 0) {
			return `${count} (${n / size} ${unit})`;
		}
	}
	return count;
}

const byExtension: Record<string, string> = {
	png: 'image/png',
	jpg: 'image/jpeg',
	jpeg: 'image/jpeg',
	gif: 'image/gif',
	webp: 'image/webp',
	bmp: 'image/bmp',
	ico: 'image/x-icon',
	svg: 'image/svg+xml',
	pdf: 'application/pdf',
	html: 'text/html',
	htm: 'text/html',
	md: 'text/markdown',
	markdown: 'text/markdown',
	csv: 'text/csv',
	tsv: 'text/tab-separated-values',
	json: 'application/json',
	jsonl: 'application/x-ndjson',
	txt: 'text/plain',
	log: 'text/plain',
	xml: 'application/xml',
	yaml: 'application/yaml',
	yml: 'application/yaml',
	zip: 'application/zip',
	gz: 'application/gzip',
	tar: 'application/x-tar',
};

/** Source code and other text shown as text with syntax colouring; the language is VS Code's id. */
export const sourceLanguages: Record<string, string> = {
	ts: 'typescript',
	tsx: 'typescriptreact',
	js: 'javascript',
	mjs: 'javascript',
	cjs: 'javascript',
	jsx: 'javascriptreact',
	py: 'python',
	rs: 'rust',
	go: 'go',
	java: 'java',
	c: 'c',
	h: 'c',
	cpp: 'cpp',
	cc: 'cpp',
	hpp: 'cpp',
	cs: 'csharp',
	rb: 'ruby',
	php: 'php',
	sh: 'shellscript',
	bash: 'shellscript',
	sql: 'sql',
	css: 'css',
	scss: 'scss',
	toml: 'toml',
	ini: 'ini',
	diff: 'diff',
	patch: 'diff',
	swift: 'swift',
	kt: 'kotlin',
};

function extensionOf(name: string): string {
	const base = baseName(name);
	const dot = base.lastIndexOf('.');
	return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** TypeByName: the type a name claims, for a file whose bytes cannot be looked at. Only a label. */
export function typeByName(name: string): string {
	const ext = extensionOf(name);
	if (byExtension[ext]) {
		return byExtension[ext];
	}
	if (sourceLanguages[ext]) {
		return 'text/plain';
	}
	return 'application/octet-stream';
}

/** What the first bytes say a file is, when they say anything. */
function sniff(head: Uint8Array): string | undefined {
	const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
	if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) {
		return 'image/png';
	}
	if (starts(0xff, 0xd8, 0xff)) {
		return 'image/jpeg';
	}
	if (starts(0x47, 0x49, 0x46, 0x38)) {
		return 'image/gif';
	}
	if (
		starts(0x52, 0x49, 0x46, 0x46) &&
		head[8] === 0x57 &&
		head[9] === 0x45 &&
		head[10] === 0x42 &&
		head[11] === 0x50
	) {
		return 'image/webp';
	}
	if (starts(0x42, 0x4d)) {
		return 'image/bmp';
	}
	if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) {
		return 'application/pdf';
	}
	if (starts(0x50, 0x4b, 0x03, 0x04)) {
		return 'application/zip';
	}
	if (starts(0x1f, 0x8b)) {
		return 'application/gzip';
	}
	return undefined;
}

/** Text: valid UTF-8 (a character cut at the end of the head is allowed) with no NUL. */
export function isText(head: Uint8Array): boolean {
	if (head.includes(0)) {
		return false;
	}
	// Drop up to three trailing bytes of a character the head may have cut.
	for (let cut = 0; cut <= Math.min(3, head.length); cut += 1) {
		try {
			new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, head.length - cut));
			return true;
		} catch {
			// try a shorter head
		}
	}
	return false;
}

/** DetectType: the media type recorded for a file named `name` whose content starts with `head`. */
export function detectType(name: string, head: Uint8Array): string {
	const sniffed = sniff(head);
	if (sniffed) {
		return sniffed;
	}
	const claimed = typeByName(name);
	if (isText(head)) {
		// A text file is what its name says when that is a text type; otherwise plain text.
		return isTextType(claimed) ? claimed : 'text/plain';
	}
	return 'application/octet-stream';
}

function isTextType(type: string): boolean {
	return (
		type.startsWith('text/') ||
		type === 'application/json' ||
		type === 'application/x-ndjson' ||
		type === 'application/xml' ||
		type === 'application/yaml' ||
		type === 'image/svg+xml'
	);
}

/** Types a view offers to show before it reads a byte; {@link inlineType} has the last word. */
export function previewable(recorded: string): boolean {
	return recorded.startsWith('image/') || isTextType(recorded) || recorded === 'application/pdf';
}

/**
 * InlineType: the type to show an attachment as, and whether it may be shown at all, from its
 * recorded type and the bytes in the store now. An image or PDF is shown only when its bytes are
 * one; a text type only when they are text. HTML and SVG are text: shown as source, never run.
 */
export function inlineType(recorded: string, head: Uint8Array): { type: string; inline: boolean } {
	const sniffed = sniff(head);
	if (recorded.startsWith('image/') && recorded !== 'image/svg+xml') {
		return sniffed === recorded
			? { type: recorded, inline: true }
			: { type: 'application/octet-stream', inline: false };
	}
	if (recorded === 'application/pdf') {
		return sniffed === 'application/pdf'
			? { type: recorded, inline: true }
			: { type: 'application/octet-stream', inline: false };
	}
	if (isTextType(recorded)) {
		return !sniffed && isText(head)
			? { type: recorded, inline: true }
			: { type: 'application/octet-stream', inline: false };
	}
	return { type: 'application/octet-stream', inline: false };
}
