import { stopWords } from './stopWords';

/**
 * The tokenizer of the library index and of tickets (seed 000 §05): lowercase words of letters and
 * digits (any script), at least four runes long, that are not stop words.
 */
export const minWordRunes = 4;

export function terms(text: string): string[] {
	const out: string[] = [];
	for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
		const word = match[0];
		if ([...word].length >= minWordRunes && !stopWords.has(word)) {
			out.push(word);
		}
	}
	return out;
}

/** A ticket's words: text inside code fences and backticks is dropped first (it names code, not topics). */
export function ticketTerms(ticket: string): string[] {
	const prose = ticket.replace(/```[\s\S]*?(```|$)/g, ' ').replace(/`[^`\n]*`/g, ' ');
	return [...new Set(terms(prose))];
}
