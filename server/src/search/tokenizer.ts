import { stopWords } from './stopWords';

/**
 * The tokenizer of the library index and of tickets (glossary: Suggestion): lowercase words of letters and
 * digits (any script), at least four runes long, that are not stop words.
 */
export const minWordRunes = 4;

const wordPattern = /[\p{L}\p{N}]+/gu;

/** At least four runes: a rune is one or two UTF-16 units, so only 4 to 7 units need counting. */
function longEnough(word: string): boolean {
	if (word.length < minWordRunes) {
		return false;
	}
	if (word.length >= 2 * minWordRunes) {
		return true;
	}
	let runes = 0;
	for (let i = 0; i < word.length; i++) {
		const unit = word.charCodeAt(i);
		// A low surrogate completes the rune its high surrogate started.
		if (unit < 0xdc00 || unit > 0xdfff) {
			runes++;
		}
	}
	return runes >= minWordRunes;
}

function isTerm(word: string): boolean {
	return longEnough(word) && !stopWords.has(word);
}

export function terms(text: string): string[] {
	const out: string[] = [];
	for (const match of text.toLowerCase().matchAll(wordPattern)) {
		if (isTerm(match[0])) {
			out.push(match[0]);
		}
	}
	return out;
}

/** How often each term of `text` occurs: what the index keeps of a field, without the list of every word. */
export function termCounts(text: string): Map<string, number> {
	const counts = new Map<string, number>();
	const lower = text.toLowerCase();
	wordPattern.lastIndex = 0;
	for (let match = wordPattern.exec(lower); match !== null; match = wordPattern.exec(lower)) {
		const word = match[0];
		const seen = counts.get(word);
		if (seen !== undefined) {
			counts.set(word, seen + 1);
		} else if (isTerm(word)) {
			counts.set(word, 1);
		}
	}
	return counts;
}

/** A ticket's words: text inside code fences and backticks is dropped first (it names code, not topics). */
export function ticketTerms(ticket: string): string[] {
	const prose = ticket.replace(/```[\s\S]*?(```|$)/g, ' ').replace(/`[^`\n]*`/g, ' ');
	return [...new Set(terms(prose))];
}
