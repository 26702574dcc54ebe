import { termCounts, ticketTerms } from './tokenizer';

/** What an asset is matched on (glossary: Suggestion): its name, its about, and text of its files at the version go would freeze. */
export interface SearchDocument {
	id: string;
	name: string;
	about: string;
	text: string;
}

export interface SearchHit {
	id: string;
	name: string;
	/** Rounded to 2 decimals. */
	score: number;
	/** Up to 3 matching terms, highest weight first. */
	terms: string[];
	/** `matches “a”, “b”, “c”` */
	reason: string;
}

/** Caps on the text an asset is matched on (glossary: Suggestion). */
export const suggestFileCap = 64 * 1024;
export const suggestAssetCap = 256 * 1024;
export const suggestFilesPerAsset = 40;

/** The fields a document is matched on, in the order their weights are summed. */
export const searchFields = ['name', 'about', 'text'] as const;
const fieldCount = searchFields.length;

/** BM25+ parameters (minisearch's, which the index used before: k1 1.2, b 0.7, delta 0.5). */
export const bm25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/**
 * A document as the index holds it: its terms, how often each occurs in each field (`tf[3i]` name,
 * `tf[3i+1]` about, `tf[3i+2]` text for `terms[i]`), and the length of each field, counted as its
 * number of distinct terms. This is also what the suggestion index saves, so it is loaded back
 * without reading or tokenizing any text.
 */
export interface IndexedDocument {
	id: string;
	name: string;
	lengths: number[];
	terms: string[];
	tf: number[];
}

/**
 * The documents containing a term: `entries` holds, per document, its slot and the term's frequency
 * in each field packed into one number, `[slot, packed, slot, packed, …]` with the slots ascending.
 * One array of plain numbers per term keeps the index about as small as the documents' term lists.
 */
interface Postings {
	entries: number[];
	/** How many documents contain the term in their name, their about, their text. */
	dfName: number;
	dfAbout: number;
	dfText: number;
	/** The term's weight in each document of `entries`, valid while `generation` is the index's. */
	weights: Float64Array | undefined;
	generation: number;
}

/**
 * Term frequencies packed as `text + 2^24 · (about + 2^16 · name)`, exact in a double. A frequency
 * above its field's maximum counts as that maximum: far beyond what a name, an about, or a text
 * within the caps of a suggestion (glossary: Suggestion) (256 KiB, so at most about 52 000 occurrences) can hold.
 */
const textSpan = 2 ** 24;
const aboutSpan = 2 ** 16;
const maxFrequency = [2 ** 13 - 1, aboutSpan - 1, textSpan - 1];
const pack = (name: number, about: number, text: number) => text + textSpan * (about + aboutSpan * name);
const textOf = (packed: number) => packed % textSpan;
const aboutOf = (packed: number) => Math.floor(packed / textSpan) % aboutSpan;
const nameOf = (packed: number) => Math.floor(packed / textSpan / aboutSpan);

interface Slot {
	id: string;
	name: string;
	lengths: number[];
	terms: string[];
}

/** Tokenizes a document's fields ('s tokenizer; glossary: Suggestion) into what the index holds. */
export function analyzeDocument(document: SearchDocument): IndexedDocument {
	const terms: string[] = [];
	const tf: number[] = [];
	const position = new Map<string, number>();
	const lengths: number[] = [];
	searchFields.forEach((field, f) => {
		const counts = termCounts(document[field]);
		lengths.push(counts.size);
		for (const [term, count] of counts) {
			let i = position.get(term);
			if (i === undefined) {
				i = terms.length;
				position.set(term, i);
				terms.push(term);
				tf.push(0, 0, 0);
			}
			tf[i * fieldCount + f] = Math.min(count, maxFrequency[f]!);
		}
	});
	return { id: document.id, name: document.name, lengths, terms, tf };
}

/** The BM25+ weight of a term in one field of a document. Kept as one expression, so every caller computes the same bits. */
export function fieldWeight(
	tf: number,
	df: number,
	documents: number,
	fieldLength: number,
	averageFieldLength: number,
): number {
	const { k, b, d } = bm25;
	const idf = Math.log(1 + (documents - df + 0.5) / (df + 0.5));
	return idf * (d + (tf * (k + 1)) / (tf + k * (1 - b + (b * fieldLength) / averageFieldLength)));
}

/** Where `slot` is in `entries` (counted in documents), or `-(where it would go) - 1`. */
function slotIndex(entries: readonly number[], slot: number): number {
	let low = 0;
	let high = entries.length / 2 - 1;
	while (low <= high) {
		const mid = (low + high) >>> 1;
		const value = entries[mid * 2]!;
		if (value === slot) {
			return mid;
		}
		if (value < slot) {
			low = mid + 1;
		} else {
			high = mid - 1;
		}
	}
	return -(low + 1);
}

/**
 * BM25 over a set of assets with the desk's tokenizer (glossary: Suggestion): an inverted index from each term to the
 * documents holding it and its frequency in their name, about and text. A term's weight in a
 * document is the sum over the fields holding it of
 * `idf(field) · (d + tf·(k+1) / (tf + k·(1 − b + b·length/average length)))`, with
 * `idf = ln(1 + (N − df + 0.5) / (df + 0.5))`, `df` the documents holding the term in that field,
 * `N` all documents, and a field's length its number of distinct terms. A hit's score is the sum of
 * its terms' weights in ticket order; the reason names the three that weigh most.
 *
 * A search is one pass over the ticket's terms: each term's weights are computed once per state of
 * the index (any change invalidates them all, since N and the average lengths move) and summed into
 * one array of scores; only the hits that are returned get their terms ranked for the reason.
 */
export class LibrarySearch {
	private readonly postings = new Map<string, Postings>();
	private readonly slots: Array<Slot | undefined> = [];
	private readonly freeSlots: number[] = [];
	private readonly slotOf = new Map<string, number>();
	private readonly totalLength = new Array<number>(fieldCount).fill(0);
	private generation = 0;

	constructor(documents: readonly SearchDocument[] = []) {
		for (const document of documents) {
			this.put(document);
		}
	}

	/** Adds a document, or replaces the one with its id. */
	put(document: SearchDocument): void {
		this.putIndexed(analyzeDocument(document));
	}

	/** Adds a document analysed already (loaded from a saved index), or replaces the one with its id. */
	putIndexed(document: IndexedDocument): void {
		this.remove(document.id);
		const slot = this.freeSlots.pop() ?? this.slots.length;
		this.slots[slot] = {
			id: document.id,
			name: document.name,
			lengths: document.lengths.slice(0, fieldCount),
			terms: document.terms,
		};
		this.slotOf.set(document.id, slot);
		for (let f = 0; f < fieldCount; f++) {
			this.totalLength[f]! += document.lengths[f] ?? 0;
		}
		document.terms.forEach((term, i) => {
			const name = Math.min(document.tf[i * fieldCount]!, maxFrequency[0]!);
			const about = Math.min(document.tf[i * fieldCount + 1]!, maxFrequency[1]!);
			const text = Math.min(document.tf[i * fieldCount + 2]!, maxFrequency[2]!);
			const packed = pack(name, about, text);
			let postings = this.postings.get(term);
			if (!postings) {
				// Made at its size: most terms are in one document, and an empty array would grow to sixteen slots.
				postings = { entries: [slot, packed], dfName: 0, dfAbout: 0, dfText: 0, weights: undefined, generation: -1 };
				this.postings.set(term, postings);
			} else if (postings.entries[postings.entries.length - 2]! < slot) {
				postings.entries.push(slot, packed);
			} else {
				// A slot freed by a removal is reused: keep the slots in order.
				const at = -(slotIndex(postings.entries, slot) + 1);
				postings.entries.splice(at * 2, 0, slot, packed);
			}
			postings.dfName += name > 0 ? 1 : 0;
			postings.dfAbout += about > 0 ? 1 : 0;
			postings.dfText += text > 0 ? 1 : 0;
		});
		this.generation++;
	}

	remove(id: string): void {
		const slot = this.slotOf.get(id);
		if (slot === undefined) {
			return;
		}
		const { lengths, terms } = this.slots[slot]!;
		for (const term of terms) {
			const postings = this.postings.get(term)!;
			const at = slotIndex(postings.entries, slot);
			const packed = postings.entries[at * 2 + 1]!;
			postings.dfName -= nameOf(packed) > 0 ? 1 : 0;
			postings.dfAbout -= aboutOf(packed) > 0 ? 1 : 0;
			postings.dfText -= textOf(packed) > 0 ? 1 : 0;
			if (postings.entries.length === 2) {
				this.postings.delete(term);
			} else {
				postings.entries.splice(at * 2, 2);
			}
		}
		for (let f = 0; f < fieldCount; f++) {
			this.totalLength[f]! -= lengths[f] ?? 0;
		}
		this.slots[slot] = undefined;
		this.freeSlots.push(slot);
		this.slotOf.delete(id);
		this.generation++;
	}

	has(id: string): boolean {
		return this.slotOf.has(id);
	}

	get size(): number {
		return this.slotOf.size;
	}

	/** The ids of the documents held. */
	ids(): string[] {
		return [...this.slotOf.keys()];
	}

	/** A document as the index holds it (for saving), or undefined. */
	indexed(id: string): IndexedDocument | undefined {
		const slot = this.slotOf.get(id);
		if (slot === undefined) {
			return undefined;
		}
		const { name, lengths, terms } = this.slots[slot]!;
		const tf: number[] = [];
		for (const term of terms) {
			const postings = this.postings.get(term)!;
			const packed = postings.entries[slotIndex(postings.entries, slot) * 2 + 1]!;
			tf.push(nameOf(packed), aboutOf(packed), textOf(packed));
		}
		return { id, name, lengths: [...lengths], terms: [...terms], tf };
	}

	/**
	 * Ranks documents for the query's terms. `skip` leaves documents out (after weighting, so they
	 * still count in the corpus); `skipCommonTerms` drops a term found in every document when there
	 * are two or more (: it tells nothing apart; glossary: Suggestion). Hits are sorted by rounded score, then name.
	 */
	search(
		query: string,
		options: {
			minScore?: number;
			limit?: number;
			skip?: ReadonlySet<string>;
			skipCommonTerms?: boolean;
			corpusSize?: number;
		} = {},
	): SearchHit[] {
		const documents = this.size;
		if (documents === 0) {
			return [];
		}
		const scores = new Float64Array(this.slots.length);
		const touched: number[] = [];
		const used: Postings[] = [];
		const usedTerms: string[] = [];
		for (const word of ticketTerms(query)) {
			const postings = this.postings.get(word);
			if (!postings) {
				continue;
			}
			// "Every document" is every member, also while the index holds only some of them (a
			// partial answer): `corpusSize` says how many there are.
			const corpus = Math.max(documents, options.corpusSize ?? 0);
			if (options.skipCommonTerms && corpus >= 2 && postings.entries.length / 2 >= corpus) {
				continue;
			}
			const weights = this.weightsOf(postings);
			const entries = postings.entries;
			for (let i = 0; i < entries.length; i += 2) {
				const slot = entries[i]!;
				// Every weight is positive, so a score of 0 is a document not seen yet.
				const score = scores[slot]!;
				if (score === 0) {
					touched.push(slot);
				}
				scores[slot] = score + weights[i / 2]!;
			}
			used.push(postings);
			usedTerms.push(word);
		}
		const minScore = options.minScore ?? 0;
		const candidates: Array<{ slot: number; score: number; name: string; id: string }> = [];
		for (const slot of touched) {
			const score = scores[slot]!;
			const { id, name } = this.slots[slot]!;
			if (score < minScore || options.skip?.has(id)) {
				continue;
			}
			candidates.push({ slot, score: Math.round(score * 100) / 100, name, id });
		}
		candidates.sort(
			(a, b) => b.score - a.score || a.name.localeCompare(b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
		);
		const listed = options.limit === undefined ? candidates : candidates.slice(0, options.limit);
		return listed.map(({ slot, score, name, id }) => {
			const matched: Array<[string, number]> = [];
			used.forEach((postings, t) => {
				const at = slotIndex(postings.entries, slot);
				if (at >= 0) {
					matched.push([usedTerms[t]!, postings.weights![at]!]);
				}
			});
			const top = matched
				.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
				.slice(0, 3)
				.map(([term]) => term);
			return { id, name, score, terms: top, reason: `matches ${top.map((t) => `“${t}”`).join(', ')}` };
		});
	}

	/** The term's weight in each document holding it, computed once per state of the index. */
	private weightsOf(postings: Postings): Float64Array {
		if (postings.weights && postings.generation === this.generation) {
			return postings.weights;
		}
		const documents = this.size;
		const average = this.totalLength.map((total) => total / documents);
		const entries = postings.entries;
		const weights = new Float64Array(entries.length / 2);
		for (let i = 0; i < entries.length; i += 2) {
			const lengths = this.slots[entries[i]!]!.lengths;
			const packed = entries[i + 1]!;
			// Summed in field order: name, about, text.
			const name = nameOf(packed);
			const about = aboutOf(packed);
			const text = textOf(packed);
			let weight = 0;
			if (name > 0) {
				weight += fieldWeight(name, postings.dfName, documents, lengths[0]!, average[0]!);
			}
			if (about > 0) {
				weight += fieldWeight(about, postings.dfAbout, documents, lengths[1]!, average[1]!);
			}
			if (text > 0) {
				weight += fieldWeight(text, postings.dfText, documents, lengths[2]!, average[2]!);
			}
			weights[i / 2] = weight;
		}
		postings.weights = weights;
		postings.generation = this.generation;
		return weights;
	}
}
