import assert from 'node:assert/strict';

// A CommonMark renderer with autolinks on: what a VS Code tooltip would make of the text.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const MarkdownIt = require('markdown-it') as new (options: object) => { render(text: string): string };
const markdown = new MarkdownIt({ html: false, linkify: true });

/** The HTML a Markdown tooltip renders to. */
export function renderMarkdown(text: string): string {
	return markdown.render(text);
}

/**
 * Fails when a tooltip's Markdown would render a link, an image, a heading or a second table, draw an
 * icon other than the desk's own (`ownIcons`, each written at the start of a line), or hold a bidi override.
 */
export function assertInertMarkdown(text: string, ownIcons: readonly string[] = []): void {
	const html = markdown.render(text);
	assert.doesNotMatch(html, /<(a|img|h\d)\b/, html);
	assert.ok((html.match(/<table>/g) ?? []).length <= 1, html);
	const withoutOwn = ownIcons.reduce((t, icon) => t.split(`\n$(${icon}) `).join('\n'), text);
	assert.doesNotMatch(withoutOwn, /(^|[^\\])\$\(/, text);
	assert.doesNotMatch(text, /[\u202a-\u202e\u2066-\u2069]/, text);
}
