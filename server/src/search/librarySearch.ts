import MiniSearch from 'minisearch';
import { terms, ticketTerms } from './tokenizer';

/** What an asset is matched on (§05): its name, its about, and text of its files at the version go would freeze. */
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

/** Caps on the text an asset is matched on (§05). */
export const suggestFileCap = 64 * 1024;
export const suggestAssetCap = 256 * 1024;
export const suggestFilesPerAsset = 40;

/**
 * BM25 over a set of assets with minisearch and the desk's tokenizer. A hit's score is the sum of
 * its terms' weights; the reason names the three that weigh most.
 */
const indexOptions = {
	fields: ['name', 'about', 'text'],
	storeFields: ['name'],
	tokenize: (text: string) => terms(text),
	processTerm: (term: string) => term,
	searchOptions: { prefix: false, fuzzy: false, combineWith: 'OR' as const },
};

export class LibrarySearch {
	private readonly index: MiniSearch<SearchDocument>;

	constructor(documents: SearchDocument[], index?: MiniSearch<SearchDocument>) {
		this.index = index ?? new MiniSearch<SearchDocument>(indexOptions);
		this.index.addAll(documents);
	}

	/** An index saved with toJSON(); minisearch checks its own serialisation version. */
	static fromJSON(json: string): LibrarySearch {
		return new LibrarySearch([], MiniSearch.loadJSON<SearchDocument>(json, indexOptions));
	}

	toJSON(): unknown {
		return this.index.toJSON();
	}

	/** Adds a document, or replaces the one with its id. */
	put(document: SearchDocument): void {
		if (this.index.has(document.id)) {
			this.index.replace(document);
		} else {
			this.index.add(document);
		}
	}

	remove(id: string): void {
		if (this.index.has(id)) {
			this.index.discard(id);
		}
	}

	get size(): number {
		return this.index.documentCount;
	}

	/**
	 * Ranks documents for the query's terms. `skip` leaves documents out (after weighting, so they
	 * still count in the corpus); `skipCommonTerms` drops a term found in every document when there
	 * are two or more (§05: it tells nothing apart).
	 */
	search(query: string, options: { minScore?: number; limit?: number; skip?: ReadonlySet<string>; skipCommonTerms?: boolean } = {}): SearchHit[] {
		const words = ticketTerms(query);
		const weights = new Map<string, Map<string, number>>();
		for (const word of words) {
			const results = this.index.search(word, { prefix: false, fuzzy: false });
			// A term found in every document tells nothing apart (§05); its results say so already.
			if (options.skipCommonTerms && this.index.documentCount >= 2 && results.length >= this.index.documentCount) {
				continue;
			}
			for (const result of results) {
				const id = String(result.id);
				if (options.skip?.has(id)) {
					continue;
				}
				const perTerm = weights.get(id) ?? new Map<string, number>();
				perTerm.set(word, result.score);
				weights.set(id, perTerm);
			}
		}
		const hits: SearchHit[] = [];
		for (const [id, perTerm] of weights) {
			const score = [...perTerm.values()].reduce((a, b) => a + b, 0);
			if (score < (options.minScore ?? 0)) {
				continue;
			}
			const top = [...perTerm.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([t]) => t);
			const name = String((this.index.getStoredFields(id) as { name?: string } | undefined)?.name ?? '');
			hits.push({ id, name, score: Math.round(score * 100) / 100, terms: top, reason: `matches ${top.map((t) => `“${t}”`).join(', ')}` });
		}
		hits.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
		return options.limit === undefined ? hits : hits.slice(0, options.limit);
	}
}
