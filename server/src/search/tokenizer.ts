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

/**
 * A ticket's words (glossary: Suggestion): code is dropped first, since it names code, not topics. Code
 * is what CommonMark makes code of: fenced code blocks and, within each paragraph left, code spans.
 */
export function ticketTerms(ticket: string): string[] {
	return [...new Set(terms(ticketProse(ticket)))];
}

/** An opening code fence: up to three spaces, then three or more backticks or tildes, then the info string. */
const openingFence = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** A closing code fence: up to three spaces, a fence, nothing after it but spaces and tabs. */
const closingFence = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const blankLine = /^[ \t]*$/;

/**
 * The ticket without its fenced code blocks (CommonMark 4.5), as paragraphs (text between blank lines
 * and fences) with their code spans dropped. A fence is a line of at most three spaces' indent and
 * three or more backticks or tildes (a backtick fence's info string holds no backtick); it closes at
 * a line of the same character at least as long with nothing but spaces after it, or else at the
 * end of the ticket. The fences' lines and everything between them are dropped. Containers (lists,
 * quotes) are not read: a fence is found by its own indent.
 */
function ticketProse(ticket: string): string {
	const paragraphs: string[] = [];
	let paragraph: string[] = [];
	const endParagraph = () => {
		if (paragraph.length > 0) {
			paragraphs.push(withoutCodeSpans(paragraph.join('\n')));
			paragraph = [];
		}
	};
	let fence: string | undefined;
	for (const line of ticket.split(/\r\n|\r|\n/)) {
		if (fence !== undefined) {
			const closing = closingFence.exec(line)?.[1];
			if (closing !== undefined && closing[0] === fence[0] && closing.length >= fence.length) {
				fence = undefined;
			}
			continue;
		}
		const opening = openingFence.exec(line);
		if (opening && !(opening[1]![0] === '`' && opening[2]!.includes('`'))) {
			endParagraph();
			fence = opening[1]!;
		} else if (blankLine.test(line)) {
			endParagraph();
		} else {
			paragraph.push(line);
		}
	}
	endParagraph();
	return paragraphs.join('\n');
}

const backtick = 0x60;
const backslash = 0x5c;

/**
 * A paragraph without its code spans (CommonMark 6.1): a backtick string (a maximal run of n
 * backticks) opens a span that the next backtick string of exactly n closes, line endings included;
 * an opener with no such closer is literal text. Outside spans a backslash escapes the punctuation
 * after it (an escaped backtick opens nothing); inside a span a backslash is literal. Each span
 * becomes a space, so the words on either side stay apart.
 */
function withoutCodeSpans(text: string): string {
	if (!text.includes('`')) {
		return text;
	}
	// Every backtick string: its start and length, and the next string of the same length (-1: none).
	const starts: number[] = [];
	const lengths: number[] = [];
	for (let at = text.indexOf('`'); at !== -1;) {
		let end = at + 1;
		while (end < text.length && text.charCodeAt(end) === backtick) {
			end++;
		}
		starts.push(at);
		lengths.push(end - at);
		at = text.indexOf('`', end);
	}
	const nextSame = new Int32Array(starts.length);
	const ofLength = new Map<number, number[]>();
	for (let run = starts.length - 1; run >= 0; run--) {
		const list = ofLength.get(lengths[run]!);
		nextSame[run] = list ? list[list.length - 1]! : -1;
		if (list) {
			list.push(run);
		} else {
			ofLength.set(lengths[run]!, [run]);
		}
	}
	// The first string of `length` after string `run`, for an opener an escape made shorter than its
	// string (the lists run from the last string to the first).
	const closerOf = (run: number, length: number): number => {
		const list = ofLength.get(length) ?? [];
		let low = 0;
		let high = list.length;
		while (low < high) {
			const mid = (low + high) >>> 1;
			if (list[mid]! > run) {
				low = mid + 1;
			} else {
				high = mid;
			}
		}
		return low > 0 ? list[low - 1]! : -1;
	};
	const kept: string[] = [];
	let from = 0;
	for (let run = 0; run < starts.length;) {
		let start = starts[run]!;
		let length = lengths[run]!;
		// Backslashes just before a string are outside any span (a span ends at a backtick). An odd
		// number of them escapes its first backtick: the string opens one shorter, or not at all.
		let backslashes = 0;
		while (start - backslashes > 0 && text.charCodeAt(start - backslashes - 1) === backslash) {
			backslashes++;
		}
		if (backslashes % 2 === 1) {
			start++;
			length--;
		}
		const closer = length === 0 ? -1 : backslashes % 2 === 1 ? closerOf(run, length) : nextSame[run]!;
		if (closer === -1) {
			run++;
		} else {
			kept.push(text.slice(from, start));
			from = starts[closer]! + length;
			run = closer + 1;
		}
	}
	kept.push(text.slice(from));
	return kept.join(' ');
}
