/**
 * The sanitiser of rendered Markdown shown in the Markdown preview: an allow-list of elements and
 * attributes with checked values; everything else shown as text. Pure: no VS Code here.
 */
import { escapeHtml } from '../common/html';

/** Elements rendered Markdown may keep; any other tag is shown as text (so a script, a style, a form, a frame, a meta refresh, a base, an object, SVG or MathML never becomes an element). */
const allowedTags = new Set([
	'a',
	'abbr',
	'address',
	'aside',
	'b',
	'bdi',
	'bdo',
	'big',
	'blockquote',
	'br',
	'caption',
	'center',
	'cite',
	'code',
	'col',
	'colgroup',
	'dd',
	'del',
	'details',
	'dfn',
	'div',
	'dl',
	'dt',
	'em',
	'figcaption',
	'figure',
	'footer',
	'h1',
	'h2',
	'h3',
	'h4',
	'h5',
	'h6',
	'header',
	'hr',
	'i',
	'img',
	'ins',
	'kbd',
	'li',
	'mark',
	'nav',
	'ol',
	'p',
	'pre',
	'q',
	'rp',
	'rt',
	'ruby',
	's',
	'samp',
	'section',
	'small',
	'span',
	'strike',
	'strong',
	'sub',
	'summary',
	'sup',
	'table',
	'tbody',
	'td',
	'tfoot',
	'th',
	'thead',
	'time',
	'tr',
	'tt',
	'u',
	'ul',
	'var',
	'wbr',
]);
const voidTags = new Set(['br', 'col', 'hr', 'img', 'wbr']);

/** Attributes an element may keep, each with the test its value must pass (a boolean attribute's value is ''). */
type AttributeRule = (value: string, tag: string) => string | undefined;
const matching =
	(pattern: RegExp): AttributeRule =>
	(value) =>
		pattern.test(value) ? value : undefined;
const anyText: AttributeRule = (value) => value;
const number = matching(/^\d{1,4}$/);
const globalAttributes: Record<string, AttributeRule> = {
	title: anyText,
	lang: matching(/^[A-Za-z0-9-]{1,35}$/),
	dir: matching(/^(ltr|rtl|auto)$/i),
};
const tagAttributes: Record<string, Record<string, AttributeRule>> = {
	a: { href: safeHref },
	img: { src: safeImageSource, alt: anyText, width: matching(/^\d{1,5}%?$/), height: matching(/^\d{1,5}%?$/) },
	td: { colspan: number, rowspan: number, align: matching(/^(left|right|center|justify)$/i) },
	th: {
		colspan: number,
		rowspan: number,
		align: matching(/^(left|right|center|justify)$/i),
		scope: matching(/^(row|col|rowgroup|colgroup)$/i),
		abbr: anyText,
	},
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
	return url !== undefined && (/^https?:\/\//i.test(url) || /^mailto:/i.test(url) || url.startsWith('#'))
		? url
		: undefined;
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
	return value.replace(
		/&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,8})|(amp|lt|gt|quot|apos|nbsp));?/g,
		(whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
			if (name) {
				return whole.endsWith(';') || name === 'amp' || name === 'lt' || name === 'gt' || name === 'quot'
					? namedReferences[name]!
					: whole;
			}
			const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex!, 16);
			return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)
				? '\ufffd'
				: String.fromCodePoint(code);
		},
	);
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
		let rule: AttributeRule | undefined = Object.hasOwn(rules, name)
			? rules[name]
			: Object.hasOwn(globalAttributes, name)
				? globalAttributes[name]
				: undefined;
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
