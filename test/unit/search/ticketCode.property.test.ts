/**
 * A ticket's words against a CommonMark parser (markdown-it in its `commonmark` preset): random
 * tickets of words, backticks, tildes, backslashes, spaces and line endings, whose words outside
 * code (text that is neither a fenced block nor a code span) must be the words `ticketTerms` finds.
 * Lines start with at most three spaces: indented code blocks are not read as code by the desk.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { terms, ticketTerms } from '../../../server/src/search/tokenizer';

interface MarkdownToken {
	type: string;
	content: string;
	children: MarkdownToken[] | null;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const MarkdownIt = require('markdown-it') as new (preset: string) => {
	parse(text: string, env: object): MarkdownToken[];
};
const commonmark = new MarkdownIt('commonmark');

/** The ticket's prose as CommonMark reads it: the text of its inline tokens, each code span a space. */
function proseOf(ticket: string): string {
	let prose = '';
	for (const block of commonmark.parse(ticket, {})) {
		for (const token of block.children ?? []) {
			if (token.type === 'text' || token.type === 'text_special') {
				prose += token.content;
			} else if (token.type === 'code_inline') {
				prose += ' ';
			} else if (token.type === 'softbreak' || token.type === 'hardbreak') {
				prose += '\n';
			}
		}
		prose += '\n';
	}
	return prose;
}

const piece = fc.oneof(
	fc.constantFrom('invoice', 'ledger', 'rounding', 'cursor', 'queue'),
	fc.constantFrom(' ', ' ', '\n', '\n\n', '\r\n', '\\'),
	fc.integer({ min: 1, max: 5 }).map((n) => '`'.repeat(n)),
	fc.integer({ min: 1, max: 5 }).map((n) => '~'.repeat(n)),
	fc.integer({ min: 0, max: 3 }).map((n) => `\n${' '.repeat(n)}${'`'.repeat(3)}`),
	fc.integer({ min: 0, max: 3 }).map((n) => `\n${' '.repeat(n)}${'~'.repeat(3 + (n % 2))}`),
);

/** A ticket of pieces, with no line led by four or more spaces (an indented code block). */
const ticket = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join('').replace(/(^|\n) {4,}/g, '$1   '));

it('drops what CommonMark makes code, and nothing else', () => {
	fc.assert(
		fc.property(ticket, (text) => {
			assert.deepEqual(ticketTerms(text), [...new Set(terms(proseOf(text)))], JSON.stringify(text));
		}),
		{ numRuns: 3_000 },
	);
});
