/**
 * What an attachment preview shows, as plain functions of its bytes (no VS Code here, so tests can
 * call them anywhere): its kind, a CSV/TSV reader, image dimensions, and the pages of the preview
 * webviews. Every name and cell is escaped; no page has a script but the PDF's, which runs only the
 * extension's own files (its page script and the pdf.js it ships).
 */
import { baseName, humanBytes, sourceLanguages } from '../../server/src/attachments/names';
import { escapeHtml } from './common/html';
import { visibleLines } from './common/markdownText';

/** How the Attachments view and the previews group types. */
export type AttachmentKind = 'image' | 'text' | 'code' | 'markdown' | 'table' | 'json' | 'pdf' | 'html' | 'other';

function extension(name: string): string {
	const base = baseName(name);
	const dot = base.lastIndexOf('.');
	return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** The kind of a media type (the recorded one for icons, the checked one for previews) for a file named `name`. */
export function attachmentKind(mediaType: string, name: string): AttachmentKind {
	switch (mediaType) {
		case 'text/html':
			return 'html';
		case 'text/markdown':
			return 'markdown';
		case 'text/csv':
		case 'text/tab-separated-values':
			return 'table';
		case 'application/json':
		case 'application/x-ndjson':
			return 'json';
		case 'application/pdf':
			return 'pdf';
		case 'application/xml':
		case 'application/yaml':
			return 'code';
	}
	if (mediaType.startsWith('image/')) {
		return 'image';
	}
	if (mediaType.startsWith('text/')) {
		return sourceLanguages[extension(name)] ? 'code' : 'text';
	}
	return 'other';
}

/** Types whose source can also be shown rendered (in a frame without scripts or network). */
export function renderable(mediaType: string): boolean {
	return mediaType === 'text/html' || mediaType === 'image/svg+xml';
}

/** The VS Code language to show a text attachment in, when its type or name says one. */
export function languageFor(mediaType: string, name: string): string | undefined {
	const byType: Record<string, string> = {
		'text/html': 'html',
		'image/svg+xml': 'xml',
		'application/xml': 'xml',
		'application/yaml': 'yaml',
		'application/json': 'json',
		'application/x-ndjson': 'jsonl',
		'text/markdown': 'markdown',
	};
	return byType[mediaType] ?? sourceLanguages[extension(name)];
}

/** A name fit for a file the desk writes itself: the base name with only safe characters, ending in `.ext`. */
export function safeFileName(name: string, ext: string): string {
	let base = baseName(name).replace(/[^\p{L}\p{N} ._-]/gu, '_').replace(/^[.\s]+/, '').slice(-120);
	if (!base.toLowerCase().endsWith(`.${ext}`)) {
		base = `${base || 'attachment'}.${ext}`;
	}
	return base;
}

export interface DelimitedTable {
	/** The rows read, at most the cap; the first is the header. */
	rows: string[][];
	/** Every row in the file, including those past the cap. */
	total: number;
	/** A quoted field ran to the end of the file. */
	unterminated: boolean;
}

/**
 * Reads CSV (RFC 4180: quoted fields may hold the delimiter, quotes doubled, and line breaks) or TSV;
 * CRLF, LF and CR end rows; a byte order mark is dropped. Rows past `maxRows` are counted, not kept.
 */
export function parseDelimited(text: string, delimiter: string, maxRows: number): DelimitedTable {
	const rows: string[][] = [];
	let total = 0;
	let row: string[] = [];
	let field = '';
	let quoted = false;
	let started = false;
	const endField = () => {
		row.push(field);
		field = '';
		started = false;
	};
	const endRow = () => {
		endField();
		if (total < maxRows) {
			rows.push(row);
		}
		total += 1;
		row = [];
	};
	let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
	while (i < text.length) {
		if (quoted) {
			const quote = text.indexOf('"', i);
			if (quote < 0) {
				field += text.slice(i);
				i = text.length;
				break;
			}
			field += text.slice(i, quote);
			if (text[quote + 1] === '"') {
				field += '"';
				i = quote + 2;
			} else {
				quoted = false;
				i = quote + 1;
			}
			continue;
		}
		const c = text[i]!;
		if (c === '"' && !started) {
			quoted = true;
			started = true;
			i += 1;
		} else if (c === delimiter) {
			endField();
			i += 1;
		} else if (c === '\n' || c === '\r') {
			endRow();
			i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
		} else {
			// Up to the next character that means something, in one slice.
			let end = i + 1;
			while (end < text.length) {
				const d = text[end]!;
				if (d === delimiter || d === '\n' || d === '\r' || d === '"') {
					break;
				}
				end += 1;
			}
			field += text.slice(i, end);
			started = true;
			i = end;
		}
	}
	const unterminated = quoted;
	if (started || field !== '' || row.length > 0) {
		endRow();
	}
	return { rows, total, unterminated };
}

/** Width and height from an image's header (PNG, GIF, BMP, JPEG, WebP), when it says them. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const has = (n: number) => bytes.length >= n;
	if (has(24) && bytes[0] === 0x89 && bytes[1] === 0x50) {
		return { width: view.getUint32(16), height: view.getUint32(20) };
	}
	if (has(10) && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) {
		return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
	}
	if (has(26) && bytes[0] === 0x42 && bytes[1] === 0x4d) {
		return { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
	}
	if (has(30) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) {
		const chunk = String.fromCharCode(bytes[12]!, bytes[13]!, bytes[14]!, bytes[15]!);
		if (chunk === 'VP8X') {
			return { width: 1 + (bytes[24]! | (bytes[25]! << 8) | (bytes[26]! << 16)), height: 1 + (bytes[27]! | (bytes[28]! << 8) | (bytes[29]! << 16)) };
		}
		if (chunk === 'VP8 ') {
			return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
		}
		if (chunk === 'VP8L') {
			const b = view.getUint32(21, true);
			return { width: (b & 0x3fff) + 1, height: ((b >> 14) & 0x3fff) + 1 };
		}
		return undefined;
	}
	if (has(4) && bytes[0] === 0xff && bytes[1] === 0xd8) {
		// JPEG: walk the segments to a start of frame.
		let at = 2;
		while (at + 9 < bytes.length) {
			if (bytes[at] !== 0xff) {
				return undefined;
			}
			const marker = bytes[at + 1]!;
			if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
				return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
			}
			at += 2 + view.getUint16(at + 2);
		}
	}
	return undefined;
}

/** What every preview page says about the file: its name, size and type, and the commands it links. */
export interface PageHeader {
	/** The cleaned name, shown escaped. */
	name: string;
	facts: string[];
	/** Pre-built links (command: URIs the page allows); their text is escaped by the caller. */
	links?: string[];
	note?: string;
}

const pageStyle = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); margin: 0; padding: 0 20px 20px; line-height: 1.45; }
body > header { position: sticky; top: 0; z-index: 2; display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 14px; padding: 12px 0 10px; margin-bottom: 14px; background: var(--vscode-editor-background); border-bottom: 1px solid var(--vscode-panel-border); }
body > header > h1 { font-size: 1.25em; font-weight: 600; margin: 0; word-break: break-all; }
body > header > .desk-facts { color: var(--vscode-descriptionForeground); }
body > header > .desk-links { margin-left: auto; display: flex; gap: 8px; }
body > header > .desk-note { flex-basis: 100%; color: var(--vscode-descriptionForeground); }
.desk-button { display: inline-block; padding: 3px 12px; border-radius: 2px; text-decoration: none; background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: 1px solid var(--vscode-button-border, transparent); }
.desk-button.desk-primary { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.desk-button:hover { background: var(--vscode-button-secondaryHoverBackground); } .desk-button.desk-primary:hover { background: var(--vscode-button-hoverBackground); }
.desk-button:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
.desk-muted { color: var(--vscode-descriptionForeground); }
`;

/**
 * One of the page's own buttons (a link styled as a button). The page's own elements carry classes
 * that start with `desk-`, and its rules go by them and by `body > header`; Markdown content, whose
 * classes the sanitiser strips, can never look like them.
 */
export function pageButton(href: string, label: string, primary = false): string {
	return `<a class="desk-button${primary ? ' desk-primary' : ''}" href="${escapeHtml(href)}">${escapeHtml(label)}</a>`;
}

function header(h: PageHeader): string {
	const links = h.links?.length ? `<span class="desk-links">${h.links.join('')}</span>` : '';
	const note = h.note ? `<span class="desk-note">${escapeHtml(visibleLines(h.note))}</span>` : '';
	return `<header><h1>${escapeHtml(h.name)}</h1><span class="desk-facts">${escapeHtml(h.facts.join(' · '))}</span>${links}${note}</header>`;
}

/**
 * A whole page. `csp` is the policy's source lists beyond `default-src 'none'`; a page whose style
 * needs no 'unsafe-inline' gets it through `nonce` only.
 */
function page(options: { title: string; csp: string; nonce?: string; style: string; body: string }): string {
	const nonceAttr = options.nonce ? ` nonce="${options.nonce}"` : '';
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; ${options.csp}">
<title>${escapeHtml(options.title)}</title>
<style${nonceAttr}>${pageStyle}${options.style}</style></head><body>${options.body}</body></html>`;
}

/** The policy of a page with no scripts, no network, our own style by its nonce and images only from data: URIs. */
const strictCsp = (nonce: string) => `style-src 'nonce-${nonce}'; img-src data:;`;

/** An image from its bytes (a data: URI), at its size or fitted, tiny ones magnified with crisp pixels. */
export function imagePage(options: { header: PageHeader; mediaType: string; base64: string; size?: { width: number; height: number }; nonce: string }): string {
	const { size } = options;
	// Small images are shown larger (whole multiples keep pixels square); large ones fit the width.
	const scale = size && size.width > 0 && size.height > 0 ? Math.max(1, Math.min(16, Math.floor(256 / Math.max(size.width, size.height)))) : 1;
	const sized = size && scale > 1 ? `img.preview { width: ${size.width * scale}px; height: ${size.height * scale}px; image-rendering: pixelated; }` : '';
	const caption = size ? `${size.width} × ${size.height} px${scale > 1 ? `, shown at ${scale * 100} %` : ''}` : '';
	return page({
		title: options.header.name,
		csp: strictCsp(options.nonce),
		nonce: options.nonce,
		style: `
.stage { display: inline-block; padding: 12px; border: 1px solid var(--vscode-panel-border); border-radius: 4px;
  background-color: #ffffff; background-image: linear-gradient(45deg, #e6e6e6 25%, transparent 25%), linear-gradient(-45deg, #e6e6e6 25%, transparent 25%), linear-gradient(45deg, transparent 75%, #e6e6e6 75%), linear-gradient(-45deg, transparent 75%, #e6e6e6 75%);
  background-size: 16px 16px; background-position: 0 0, 0 8px, 8px -8px, -8px 0; max-width: calc(100% - 26px); }
img.preview { display: block; max-width: 100%; height: auto; }
${sized}
figure { margin: 0; } figcaption { margin-top: 8px; }`,
		body: `${header(options.header)}<figure><div class="stage"><img class="preview" alt="${escapeHtml(options.header.name)}" src="data:${escapeHtml(options.mediaType)};base64,${options.base64}"></div>${caption ? `<figcaption class="desk-muted">${escapeHtml(caption)}</figcaption>` : ''}</figure>`,
	});
}

/** The most rows a table page shows; the rest are counted and the page says so. */
export const maxTableRows = 5000;
const maxTableColumns = 300;

/** CSV or TSV as a table: the first row as its header, row numbers, numbers right-aligned, every cell escaped. */
export function tablePage(options: { header: PageHeader; text: string; delimiter: string; nonce: string }): string {
	const table = parseDelimited(options.text, options.delimiter, maxTableRows + 1);
	const dataRows = Math.max(0, table.total - 1);
	const shown = Math.max(0, table.rows.length - 1);
	const widest = table.rows.reduce((n, r) => Math.max(n, r.length), 0);
	const columns = Math.min(widest, maxTableColumns);
	const notes: string[] = [];
	if (dataRows > shown) {
		notes.push(`Showing the first ${shown.toLocaleString('en-US')} of ${dataRows.toLocaleString('en-US')} rows; Save As… for all of them.`);
	}
	if (widest > columns) {
		notes.push(`Showing the first ${columns} of ${widest} columns.`);
	}
	if (table.unterminated) {
		notes.push('A quoted field is not closed: it runs to the end of the file.');
	}
	const cell = (tag: 'td' | 'th', value: string | undefined) => {
		const v = value ?? '';
		const numeric = tag === 'td' && /^\s*[-+]?(\d[\d,_]*)?(\.\d+)?([eE][-+]?\d+)?%?\s*$/.test(v) && /\d/.test(v);
		return `<${tag}${numeric ? ' class="n"' : ''}>${escapeHtml(v)}</${tag}>`;
	};
	const cells = (row: string[], tag: 'td' | 'th') => Array.from({ length: columns }, (_, i) => cell(tag, row[i])).join('');
	const [head, ...body] = table.rows;
	const bodyRows = body.slice(0, maxTableRows);
	const facts = [...options.header.facts, `${dataRows.toLocaleString('en-US')} row${dataRows === 1 ? '' : 's'} × ${widest} column${widest === 1 ? '' : 's'}`];
	const content = head
		? `<div class="scroll"><table><thead><tr><th class="rn">#</th>${cells(head, 'th')}</tr></thead><tbody>${bodyRows.map((r, i) => `<tr><td class="rn">${i + 1}</td>${cells(r, 'td')}</tr>`).join('')}</tbody></table></div>`
		: '<p class="desk-muted">The file is empty.</p>';
	return page({
		title: options.header.name,
		csp: strictCsp(options.nonce),
		nonce: options.nonce,
		style: `
.scroll { overflow: auto; }
table { border-collapse: collapse; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
th, td { padding: 3px 10px; border: 1px solid var(--vscode-editorWidget-border, var(--vscode-panel-border)); text-align: left; vertical-align: top; white-space: pre-wrap; max-width: 40em; }
thead th { position: sticky; top: 0; background: var(--vscode-editorWidget-background); font-weight: 600; }
tbody tr:nth-child(even) { background: var(--vscode-list-hoverBackground); }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.rn { color: var(--vscode-editorLineNumber-foreground); text-align: right; user-select: none; }`,
		body: `${header({ ...options.header, facts, note: [options.header.note, ...notes].filter(Boolean).join(' ') })}${content}`,
	});
}

/** Elements rendered Markdown may keep; any other tag is shown as text (so a script, a style, a form, a frame, a meta refresh, a base, an object, SVG or MathML never becomes an element). */
const allowedTags = new Set([
	'a', 'abbr', 'address', 'aside', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br', 'caption', 'center', 'cite', 'code', 'col', 'colgroup', 'dd', 'del', 'details', 'dfn', 'div', 'dl', 'dt', 'em',
	'figcaption', 'figure', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'i', 'img', 'ins', 'kbd', 'li', 'mark', 'nav', 'ol', 'p', 'pre', 'q', 'rp', 'rt', 'ruby', 's', 'samp',
	'section', 'small', 'span', 'strike', 'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'time', 'tr', 'tt', 'u', 'ul', 'var', 'wbr',
]);
const voidTags = new Set(['br', 'col', 'hr', 'img', 'wbr']);

/** Attributes an element may keep, each with the test its value must pass (a boolean attribute's value is ''). */
type AttributeRule = (value: string, tag: string) => string | undefined;
const matching = (pattern: RegExp): AttributeRule => (value) => (pattern.test(value) ? value : undefined);
const anyText: AttributeRule = (value) => value;
const number = matching(/^\d{1,4}$/);
const globalAttributes: Record<string, AttributeRule> = { title: anyText, lang: matching(/^[A-Za-z0-9-]{1,35}$/), dir: matching(/^(ltr|rtl|auto)$/i) };
const tagAttributes: Record<string, Record<string, AttributeRule>> = {
	a: { href: safeHref },
	img: { src: safeImageSource, alt: anyText, width: matching(/^\d{1,5}%?$/), height: matching(/^\d{1,5}%?$/) },
	td: { colspan: number, rowspan: number, align: matching(/^(left|right|center|justify)$/i) },
	th: { colspan: number, rowspan: number, align: matching(/^(left|right|center|justify)$/i), scope: matching(/^(row|col|rowgroup|colgroup)$/i), abbr: anyText },
	ol: { start: number, reversed: anyText, type: matching(/^[1aAiI]$/) },
	li: { value: number },
	col: { span: number },
	colgroup: { span: number },
	details: { open: anyText },
	time: { datetime: anyText },
};

/** A link the page keeps: http(s), mailto: and in-page fragments; everything else (command:, javascript:, data:, file:, relative paths) is dropped. */
function safeHref(value: string): string | undefined {
	const url = urlOf(value);
	return url !== undefined && (/^https?:\/\//i.test(url) || /^mailto:/i.test(url) || url.startsWith('#')) ? url : undefined;
}

/** An image source the page keeps: only the image's own bytes (data:image/…); the policy would refuse the rest anyway. */
function safeImageSource(value: string): string | undefined {
	const url = urlOf(value);
	return url !== undefined && /^data:image\/[a-z0-9.+-]+[;,]/i.test(url) ? url : undefined;
}

/** A URL as a browser reads an attribute's value: tabs and line breaks dropped, control characters and spaces trimmed; undefined if controls remain. */
function urlOf(value: string): string | undefined {
	const url = value.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
	return /[\u0000-\u001f\u007f]/.test(url) ? undefined : url;
}

/** The highlight.js classes VS Code's Markdown engine gives code (the code colours need them); no other class is kept. */
function highlightClasses(value: string): string | undefined {
	const kept = value.split(/[\t\n\f\r ]+/).filter((c) => /^hljs-[a-z0-9_-]+$/i.test(c) || /^[a-z]+_+$/.test(c));
	return kept.length ? kept.join(' ') : undefined;
}

const namedReferences: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** An attribute's value with its character references decoded (numeric ones and the few named ones above; any other stays as written, and is escaped again on output). */
function decodeReferences(value: string): string {
	return value.replace(/&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,8})|(amp|lt|gt|quot|apos|nbsp));?/g, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
		if (name) {
			return whole.endsWith(';') || name === 'amp' || name === 'lt' || name === 'gt' || name === 'quot' ? namedReferences[name]! : whole;
		}
		const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex!, 16);
		return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ? '\ufffd' : String.fromCodePoint(code);
	});
}

interface ParsedTag {
	attributes: Array<[name: string, value: string]>;
	/** Just past its `>`. */
	end: number;
}

/** The attributes of a tag from `at` (just past its name) to its `>`, as an HTML parser reads them; undefined when the input ends first. */
function parseTag(html: string, at: number): ParsedTag | undefined {
	const attributes: Array<[string, string]> = [];
	const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
	let i = at;
	for (;;) {
		while (space(html[i]) || html[i] === '/') {
			i += 1;
		}
		if (i >= html.length) {
			return undefined;
		}
		if (html[i] === '>') {
			return { attributes, end: i + 1 };
		}
		// An attribute name: up to a space, '/', '>' or '=' (an '=' may start it).
		const nameStart = i;
		i += 1;
		while (i < html.length && !space(html[i]) && html[i] !== '/' && html[i] !== '>' && html[i] !== '=') {
			i += 1;
		}
		const name = html.slice(nameStart, i).toLowerCase();
		let j = i;
		while (space(html[j])) {
			j += 1;
		}
		let value = '';
		if (html[j] === '=') {
			j += 1;
			while (space(html[j])) {
				j += 1;
			}
			const quote = html[j];
			if (quote === '"' || quote === "'") {
				const close = html.indexOf(quote, j + 1);
				if (close < 0) {
					return undefined;
				}
				value = html.slice(j + 1, close);
				i = close + 1;
			} else {
				const start = j;
				while (j < html.length && !space(html[j]) && html[j] !== '>') {
					j += 1;
				}
				value = html.slice(start, j);
				i = j;
			}
		}
		attributes.push([name, decodeReferences(value)]);
	}
}

/** The attributes an element keeps, rebuilt and escaped; a `text-align` style (how Markdown tables align columns) becomes `align`. */
function keptAttributes(tag: string, attributes: Array<[string, string]>): string {
	const kept = new Map<string, string>();
	const rules = tagAttributes[tag] ?? {};
	for (const [name, value] of attributes) {
		if (kept.has(name)) {
			continue; // The first of repeated attributes is the one a browser uses.
		}
		let rule: AttributeRule | undefined = Object.hasOwn(rules, name) ? rules[name] : Object.hasOwn(globalAttributes, name) ? globalAttributes[name] : undefined;
		if (name === 'class' && tag === 'span') {
			rule = highlightClasses;
		}
		if (name === 'style' && (tag === 'td' || tag === 'th')) {
			const align = /^\s*text-align\s*:\s*(left|right|center)\s*;?\s*$/i.exec(value)?.[1];
			if (align && !attributes.some(([n]) => n === 'align')) {
				kept.set('align', align.toLowerCase());
			}
			continue;
		}
		const result = rule?.(value, tag);
		if (result !== undefined) {
			kept.set(name, result);
		}
	}
	return [...kept].map(([name, value]) => (value === '' ? ` ${name}` : ` ${name}="${escapeHtml(value)}"`)).join('');
}

/**
 * Rendered Markdown (VS Code's engine keeps raw HTML) made safe to show inside the page: only the
 * elements above, only the attributes above with checked values — no `class` (but highlight.js's on
 * code), `id`, `style` or event handler, links only to http(s), mailto: and `#fragments` (no
 * `command:`), images only from data:image/… — every other tag shown as text, comments and
 * declarations dropped, and every element closed inside the content, so nothing of it can pose as
 * the page's own header or buttons or reach past the article.
 */
export function sanitiseMarkup(html: string): string {
	const out: string[] = [];
	const open: string[] = [];
	let i = 0;
	while (i < html.length) {
		const lt = html.indexOf('<', i);
		if (lt < 0) {
			out.push(html.slice(i));
			break;
		}
		out.push(html.slice(i, lt));
		i = lt;
		if (html.startsWith('<!--', i)) {
			const end = html.indexOf('-->', i + 4);
			i = end < 0 ? html.length : end + 3;
			continue;
		}
		const tag = /^<(\/?)([A-Za-z][A-Za-z0-9-]*)/.exec(html.slice(i, i + 80));
		if (!tag) {
			if (html[i + 1] === '!' || html[i + 1] === '?') {
				// A declaration or processing instruction: dropped.
				const end = html.indexOf('>', i);
				i = end < 0 ? html.length : end + 1;
			} else {
				out.push('&lt;');
				i += 1;
			}
			continue;
		}
		const parsed = parseTag(html, i + tag[0].length);
		if (!parsed) {
			out.push(escapeHtml(html.slice(i)));
			break;
		}
		const name = tag[2]!.toLowerCase();
		if (!allowedTags.has(name)) {
			out.push(escapeHtml(html.slice(i, parsed.end)));
		} else if (tag[1]) {
			// An end tag closes what the content opened, never more.
			const at = open.lastIndexOf(name);
			while (at >= 0 && open.length > at) {
				out.push(`</${open.pop()!}>`);
			}
		} else {
			out.push(`<${name}${keptAttributes(name, parsed.attributes)}>`);
			if (!voidTags.has(name)) {
				open.push(name);
			}
		}
		i = parsed.end;
	}
	while (open.length > 0) {
		out.push(`</${open.pop()!}>`);
	}
	return out.join('');
}

/** The scheme of a reference that has one (`http`, `file`, …), lower case; '' for a relative one; undefined for one that leaves the document's host (`//host/…`). */
function referenceScheme(value: string): string | undefined {
	const v = value.trim();
	if (v.startsWith('//') || v.startsWith('\\\\')) {
		return undefined;
	}
	return /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase() ?? '';
}

/** A reference an editor's language service would resolve without the network: relative, or a file: URI. */
function isLocalReference(value: string): boolean {
	const scheme = referenceScheme(value);
	return scheme === '' || scheme === 'file';
}

/** The string values of every top-level `key` of valid JSON (all of them: a repeated key counts each time); a value that is not a string is left out. */
function topLevelStrings(source: string, key: string): string[] {
	const values: string[] = [];
	const stack: string[] = [];
	const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
	const stringEnd = (at: number) => {
		let j = at + 1;
		while (source[j] !== '"') {
			j += source[j] === '\\' ? 2 : 1;
		}
		return j + 1;
	};
	let i = 0;
	while (i < source.length) {
		const c = source[i]!;
		if (c === '"') {
			const end = stringEnd(i);
			if (stack.length === 1 && stack[0] === '{') {
				let j = end;
				while (space(source[j])) {
					j += 1;
				}
				if (source[j] === ':' && JSON.parse(source.slice(i, end)) === key) {
					j += 1;
					while (space(source[j])) {
						j += 1;
					}
					if (source[j] === '"') {
						const valueEnd = stringEnd(j);
						values.push(JSON.parse(source.slice(j, valueEnd)) as string);
						i = valueEnd;
						continue;
					}
				}
			}
			i = end;
		} else if (c === '{' || c === '[') {
			stack.push(c);
			i += 1;
		} else if (c === '}' || c === ']') {
			stack.pop();
			i += 1;
		} else {
			i += 1;
		}
	}
	return values;
}

/** Extensions and languages VS Code reads as JSON (its language service then follows a `$schema`). */
const jsonLanguages = new Set(['json', 'jsonc', 'jsonl', 'json5', 'snippets']);
const jsonExtensions = new Set(['json', 'jsonc', 'jsonl', 'json5', 'ndjson', 'geojson', 'jsonld', 'webmanifest', 'har', 'topojson', 'code-workspace', 'code-snippets', 'babelrc', 'eslintrc', 'jshintrc', 'jscsrc', 'swcrc']);

/**
 * What in a text attachment an editor's language service would fetch from the network when the
 * text is opened with its language: a JSON `"$schema"` that is not a local/file reference, an XML
 * document's external DTD (a DOCTYPE or ENTITY with PUBLIC, or SYSTEM naming a remote URI), an XML
 * schema location or xml-model on another host. Undefined when there is none. `language` is the one
 * the desk would set, `name` the file's name (VS Code also goes by its extension).
 */
export function externalReference(text: string, language: string | undefined, name: string): string | undefined {
	const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	const ext = extension(name);
	const jsonish = (language !== undefined && jsonLanguages.has(language)) || jsonExtensions.has(ext);
	const documents = language === 'jsonl' || ext === 'jsonl' || ext === 'ndjson' ? source.split(/\r?\n/).filter((line) => line.trim() !== '') : [source];
	let parsedAll = true;
	for (const document of documents) {
		try {
			JSON.parse(document);
		} catch {
			parsedAll = false;
			continue;
		}
		const schema = topLevelStrings(document, '$schema').find((value) => !isLocalReference(value));
		if (schema !== undefined) {
			return `a JSON schema at ${schema}`;
		}
	}
	if (jsonish && !parsedAll && /\$schema|\\u0024/i.test(source)) {
		// Not JSON as written (comments, a slip): a lenient reader could still find a "$schema" in it.
		return 'a "$schema" the desk cannot read exactly (the JSON does not parse)';
	}
	if (language === 'html' || language === 'markdown') {
		return undefined;
	}
	for (const match of source.matchAll(/<!(DOCTYPE|ENTITY)\b[^>[]*?\b(PUBLIC|SYSTEM)\b\s*(?:(["'])([^"']*)\3)?/gi)) {
		if (match[2]!.toUpperCase() === 'PUBLIC' || !isLocalReference(match[4] ?? '//')) {
			return `an external ${match[1]!.toUpperCase() === 'DOCTYPE' ? 'DTD' : 'entity'} (${match[2]!.toUpperCase()}${match[4] ? ` ${match[4]}` : ''})`;
		}
	}
	for (const match of source.matchAll(/\b(?:noNamespaceSchemaLocation|schemaLocation)\s*=\s*(["'])([^"']*)\1/gi)) {
		const remote = match[2]!.split(/\s+/).find((part) => part !== '' && !isLocalReference(part) && referenceScheme(part) !== 'urn');
		// schemaLocation pairs a namespace (often an http URI, never fetched) with a location: any remote part counts.
		if (remote !== undefined) {
			return `an XML schema at ${remote}`;
		}
	}
	const model = /<\?xml-model\b[^>]*\bhref\s*=\s*(["'])([^"']*)\1/i.exec(source);
	if (model && !isLocalReference(model[2]!)) {
		return `an XML model at ${model[2]!}`;
	}
	return undefined;
}

/** Colours of the code blocks VS Code's Markdown engine marks up with highlight.js classes, after the Dark+ and Light+ themes. */
const codeColours = `
.hljs-keyword, .hljs-literal, .hljs-symbol, .hljs-name, .hljs-tag, .hljs-selector-tag { color: #569cd6; }
.hljs-built_in, .hljs-type, .hljs-title.class_ { color: #4ec9b0; }
.hljs-string, .hljs-regexp, .hljs-template-tag { color: #ce9178; }
.hljs-number { color: #b5cea8; }
.hljs-comment, .hljs-quote { color: #6a9955; font-style: italic; }
.hljs-title, .hljs-title.function_, .hljs-section { color: #dcdcaa; }
.hljs-attr, .hljs-attribute, .hljs-variable, .hljs-params, .hljs-property { color: #9cdcfe; }
.hljs-meta { color: #9b9b9b; }
.hljs-addition { color: #b5cea8; } .hljs-deletion { color: #f48771; }
body.vscode-light .hljs-keyword, body.vscode-light .hljs-literal, body.vscode-light .hljs-symbol, body.vscode-light .hljs-name, body.vscode-light .hljs-tag, body.vscode-light .hljs-selector-tag { color: #0000ff; }
body.vscode-light .hljs-built_in, body.vscode-light .hljs-type, body.vscode-light .hljs-title.class_ { color: #267f99; }
body.vscode-light .hljs-string, body.vscode-light .hljs-regexp, body.vscode-light .hljs-template-tag { color: #a31515; }
body.vscode-light .hljs-number { color: #098658; }
body.vscode-light .hljs-comment, body.vscode-light .hljs-quote { color: #008000; }
body.vscode-light .hljs-title, body.vscode-light .hljs-title.function_, body.vscode-light .hljs-section { color: #795e26; }
body.vscode-light .hljs-attr, body.vscode-light .hljs-attribute, body.vscode-light .hljs-variable, body.vscode-light .hljs-params, body.vscode-light .hljs-property { color: #001080; }
body.vscode-light .hljs-addition { color: #098658; } body.vscode-light .hljs-deletion { color: #a31515; }`;

/** Markdown as VS Code's Markdown engine rendered it, in the editor's colours; no scripts, no network, images only data:. */
export function markdownPage(options: { header: PageHeader; html: string; nonce: string }): string {
	return page({
		title: options.header.name,
		csp: strictCsp(options.nonce),
		nonce: options.nonce,
		style: `
.markdown { max-width: 880px; font-size: 14px; line-height: 1.6; }
.markdown h1, .markdown h2 { border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 0.3em; }
.markdown h1 { font-size: 2em; } .markdown h2 { font-size: 1.5em; } .markdown h3 { font-size: 1.25em; }
.markdown a { color: var(--vscode-textLink-foreground); } .markdown a:not([href]) { color: inherit; }
.markdown code { font-family: var(--vscode-editor-font-family); font-size: 0.95em; background: var(--vscode-textCodeBlock-background); padding: 1px 4px; border-radius: 3px; }
.markdown pre { background: var(--vscode-textCodeBlock-background); padding: 10px 14px; border-radius: 4px; overflow: auto; }
.markdown pre code { padding: 0; background: none; }
.markdown blockquote { margin: 0; padding: 2px 14px; border-left: 4px solid var(--vscode-textBlockQuote-border); background: var(--vscode-textBlockQuote-background); }
.markdown table { border-collapse: collapse; } .markdown th, .markdown td { border: 1px solid var(--vscode-panel-border); padding: 4px 10px; }
.markdown img { max-width: 100%; }
.markdown hr { border: 0; border-top: 1px solid var(--vscode-panel-border); }
${codeColours}`,
		body: `${header(options.header)}<article class="markdown">${sanitiseMarkup(options.html)}</article>`,
	});
}

/**
 * HTML or SVG rendered in a frame with `sandbox=""` (no scripts, no forms, no navigation of the page,
 * an origin of its own) under a policy that allows no script and no network: images only from data:
 * URIs, inline styles (the document's own). SVG is shown as an image, which never runs its scripts.
 */
export function renderedPage(options: { header: PageHeader; mediaType: 'text/html' | 'image/svg+xml'; text: string; base64: string }): string {
	const content =
		options.mediaType === 'image/svg+xml'
			? `<div class="stage"><img alt="${escapeHtml(options.header.name)}" src="data:image/svg+xml;base64,${options.base64}"></div>`
			: `<iframe sandbox="" title="${escapeHtml(options.header.name)}" srcdoc="${escapeHtml(options.text)}"></iframe>`;
	return page({
		title: options.header.name,
		// 'unsafe-inline' styles: the frame's document inherits this policy and keeps its own style. No nonce: it would turn that off.
		csp: "style-src 'unsafe-inline'; img-src data:; frame-src 'none';",
		style: `
body { display: flex; flex-direction: column; height: 100vh; box-sizing: border-box; padding-bottom: 12px; }
iframe { flex: 1; width: 100%; border: 1px solid var(--vscode-panel-border); border-radius: 4px; background: #ffffff; color-scheme: light; }
.stage { padding: 12px; background: #ffffff; border-radius: 4px; border: 1px solid var(--vscode-panel-border); }
.stage img { max-width: 100%; }`,
		body: `${header(options.header)}${content}`,
	});
}

/** A file that is not previewed: what it is, why, and Save As… (and any further paragraphs, e.g. about a viewer). */
export function downloadPage(options: { header: PageHeader; reason: string; more?: string[]; nonce: string }): string {
	return page({
		title: options.header.name,
		csp: strictCsp(options.nonce),
		nonce: options.nonce,
		style: '.desk-reason { max-width: 720px; }',
		body: `${header(options.header)}${[options.reason, ...(options.more ?? [])].map((p) => `<p class="desk-reason">${escapeHtml(p)}</p>`).join('')}`,
	});
}

/**
 * A PDF drawn by the pdf.js the extension ships (dist/pdfjs), page by page on canvases, by the page
 * script `script` (dist/pdfViewer/pdfViewer.js) that gets the bytes from the host by message. The only scripts
 * are those two files (by their origin `cspSource`) and the page's nonce; pdf.js's worker from there
 * or from the blob: it wraps it in; images from data: and blob: URIs; no connection, no frame, no form.
 */
export function pdfPage(options: { header: PageHeader; nonce: string; cspSource: string; script: string; pdfjs: string; worker: string }): string {
	const { nonce, cspSource } = options;
	const button = (id: string, label: string, extra = '') => `<button type="button" class="desk-button" id="${id}"${extra}>${escapeHtml(label)}</button>`;
	const controls = `<span class="desk-links">${button('fit-width', 'Fit Width', ' aria-pressed="true"')}${button('actual-size', '100 %', ' aria-pressed="false"')}<button type="button" class="desk-button desk-primary" data-save-as="">Save As…</button></span>`;
	const facts = escapeHtml(options.header.facts.join(' · '));
	return page({
		title: options.header.name,
		csp: `script-src 'nonce-${nonce}' ${cspSource}; worker-src ${cspSource} blob:; img-src data: blob:; style-src 'nonce-${nonce}'; connect-src 'none'; frame-src 'none'; form-action 'none';`,
		nonce,
		style: `
body { display: flex; flex-direction: column; min-height: 100vh; box-sizing: border-box; padding-bottom: 0; }
body > header { margin-bottom: 0; }
button.desk-button { font: inherit; line-height: inherit; cursor: pointer; }
button.desk-button[aria-pressed="true"] { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
body > header > .desk-facts .desk-count { color: var(--vscode-foreground); }
#status { max-width: 720px; margin-top: 14px; padding: 12px 16px; border-left: 3px solid var(--vscode-inputValidation-errorBorder, #be1100); background: var(--vscode-inputValidation-errorBackground, transparent); }
#status p { margin: 8px 0 0; }
#pages { flex: 1; display: flex; flex-direction: column; align-items: center; gap: 18px; padding: 18px 24px 28px; margin: 0 -20px; background: var(--vscode-editorWidget-background, #252526); overflow-x: auto; }
#pages[hidden], button[hidden] { display: none; }
#pages figure { margin: 0; display: flex; flex-direction: column; align-items: center; gap: 6px; }
#pages canvas { display: block; background: #ffffff; box-shadow: 0 1px 4px rgba(0, 0, 0, 0.45); }
#pages figcaption { font-size: 0.9em; color: var(--vscode-descriptionForeground); }`,
		body: `<header><h1>${escapeHtml(options.header.name)}</h1><span class="desk-facts">${facts} · <span class="desk-count" id="page-count">Loading…</span></span>${controls}${options.header.note ? `<span class="desk-note">${escapeHtml(visibleLines(options.header.note))}</span>` : ''}</header>
<div id="status" role="alert" hidden></div>
<main id="pages" aria-label="Pages"></main>
<script nonce="${nonce}" src="${escapeHtml(options.script)}" data-pdfjs="${escapeHtml(options.pdfjs)}" data-worker="${escapeHtml(options.worker)}"></script>`,
	});
}

/** The facts every header shows: size, type as checked (and the recorded claim when it differs), where it came from. */
export function headerFacts(row: { size: number; media_type: string; source: string }, checkedType: string, extra: string[] = []): string[] {
	const type = checkedType === row.media_type ? checkedType : `${checkedType} (recorded as ${row.media_type})`;
	return [humanBytes(row.size), type, ...extra, `from ${row.source === 'hand' ? 'a hand attach' : row.source === 'remote' ? 'a remote run' : 'a run'}`];
}

/**
 * Valid JSON re-indented by two spaces, every string and number copied as written (parsing and
 * printing again would round numbers past 2^53). A parse failure comes back as its message.
 */
export function formatJson(text: string): { text: string } | { error: string } {
	const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	try {
		JSON.parse(source);
	} catch (error) {
		return { error: (error as Error).message };
	}
	const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
	const parts: string[] = [];
	let depth = 0;
	const newline = () => parts.push(`\n${'  '.repeat(depth)}`);
	let i = 0;
	while (i < source.length) {
		const c = source[i]!;
		if (space(c)) {
			i += 1;
		} else if (c === '"') {
			let j = i + 1;
			while (source[j] !== '"') {
				j += source[j] === '\\' ? 2 : 1;
			}
			parts.push(source.slice(i, j + 1));
			i = j + 1;
		} else if (c === '{' || c === '[') {
			let j = i + 1;
			while (space(source[j])) {
				j += 1;
			}
			if (source[j] === (c === '{' ? '}' : ']')) {
				parts.push(c, source[j]!);
				i = j + 1;
			} else {
				depth += 1;
				parts.push(c);
				newline();
				i += 1;
			}
		} else if (c === '}' || c === ']') {
			depth -= 1;
			newline();
			parts.push(c);
			i += 1;
		} else if (c === ',') {
			parts.push(',');
			newline();
			i += 1;
		} else if (c === ':') {
			parts.push(': ');
			i += 1;
		} else {
			let j = i + 1;
			while (j < source.length && !space(source[j]) && !',:]}'.includes(source[j]!)) {
				j += 1;
			}
			parts.push(source.slice(i, j));
			i = j;
		}
	}
	return { text: `${parts.join('')}\n` };
}
