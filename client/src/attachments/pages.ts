/**
 * The pages of the preview webviews, as plain functions of what they show (no VS Code here, so tests
 * can call them anywhere): image, table, Markdown, rendered HTML/SVG, download and PDF pages, with the
 * header every page has. Every name and cell is escaped; no page has a script but the PDF's, which
 * runs only the extension's own files (its page script and the pdf.js it ships).
 */
import { humanBytes } from '../../../server/src/attachments/names';
import { escapeHtml } from '../common/html';
import { visibleLines } from '../common/markdownText';
import { parseDelimited } from './csv';
import { sanitiseMarkup } from './sanitiseMarkup';

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
export function imagePage(options: {
	header: PageHeader;
	mediaType: string;
	base64: string;
	size?: { width: number; height: number };
	nonce: string;
}): string {
	const { size } = options;
	// Small images are shown larger (whole multiples keep pixels square); large ones fit the width.
	const scale =
		size && size.width > 0 && size.height > 0
			? Math.max(1, Math.min(16, Math.floor(256 / Math.max(size.width, size.height))))
			: 1;
	const sized =
		size && scale > 1
			? `img.preview { width: ${size.width * scale}px; height: ${size.height * scale}px; image-rendering: pixelated; }`
			: '';
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
		notes.push(
			`Showing the first ${shown.toLocaleString('en-US')} of ${dataRows.toLocaleString('en-US')} rows; Save As… for all of them.`,
		);
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
	const cells = (row: string[], tag: 'td' | 'th') =>
		Array.from({ length: columns }, (_, i) => cell(tag, row[i])).join('');
	const [head, ...body] = table.rows;
	const bodyRows = body.slice(0, maxTableRows);
	const facts = [
		...options.header.facts,
		`${dataRows.toLocaleString('en-US')} row${dataRows === 1 ? '' : 's'} × ${widest} column${widest === 1 ? '' : 's'}`,
	];
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
export function renderedPage(options: {
	header: PageHeader;
	mediaType: 'text/html' | 'image/svg+xml';
	text: string;
	base64: string;
}): string {
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
export function pdfPage(options: {
	header: PageHeader;
	nonce: string;
	cspSource: string;
	script: string;
	pdfjs: string;
	worker: string;
}): string {
	const { nonce, cspSource } = options;
	const button = (id: string, label: string, extra = '') =>
		`<button type="button" class="desk-button" id="${id}"${extra}>${escapeHtml(label)}</button>`;
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
export function headerFacts(
	row: { size: number; media_type: string; source: string },
	checkedType: string,
	extra: string[] = [],
): string[] {
	const type = checkedType === row.media_type ? checkedType : `${checkedType} (recorded as ${row.media_type})`;
	return [
		humanBytes(row.size),
		type,
		...extra,
		`from ${row.source === 'hand' ? 'a hand attach' : row.source === 'remote' ? 'a remote run' : 'a run'}`,
	];
}
