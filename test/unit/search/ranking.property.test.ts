/**
 * The index's ranking against a plain model: straightforward BM25 over the same documents with the
 * same rules (glossary: Suggestion), recomputed from scratch for every query. Random corpora (with documents added,
 * replaced and removed, and some reloaded from what the index saves) and random tickets; any
 * difference in the hits, their order, scores, terms or reasons fails, so a wrong optimisation does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LibrarySearch, type SearchDocument, type SearchHit } from '../../../server/src/search/librarySearch';
import { terms } from '../../../server/src/search/tokenizer';

/** Deterministic, so a failure names the seed that reproduces it. */
function randomFrom(seed: number) {
	let state = seed >>> 0 || 1;
	const next = () => {
		state ^= state << 13;
		state >>>= 0;
		state ^= state >>> 17;
		state ^= state << 5;
		state >>>= 0;
		return state / 4294967296;
	};
	return {
		next,
		int: (n: number) => Math.floor(next() * n),
		pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
	};
}

// Words that count, stop words, words under four runes, other scripts, runes outside the BMP, case.
const vocabulary = [
	'cache',
	'eviction',
	'queue',
	'invoice',
	'rounding',
	'cursor',
	'pagination',
	'deploy',
	'runbook',
	'tracing',
	'spans',
	'exporter',
	'Billing',
	'PAYMENTS',
	'refunds',
	'straße',
	'über',
	'日本語の',
	'𝒜𝒷𝒸𝒹',
	'ab𝒜𝒷',
	'zeppelin',
	'migrations',
	'schema',
	'kubernetes',
	'the',
	'about',
	'should',
	'ticket',
	'api',
	'fix',
	'db',
	'x1',
	'v2',
	'1234',
	'node20',
];
const names = ['alpha', 'bravo', 'charlie', 'Alpha', 'delta', 'écho'];

function words(random: ReturnType<typeof randomFrom>, count: number, skew: number): string {
	// Skewed, so some words are in every document and many in few.
	return Array.from({ length: count }, () => vocabulary[Math.floor(vocabulary.length * random.next() ** skew)]!).join(
		random.pick([' ', ', ', '\n', '-', '. ']),
	);
}

function randomDocument(random: ReturnType<typeof randomFrom>, id: string): SearchDocument {
	return {
		id,
		name: `${random.pick(names)}${random.next() < 0.3 ? ` ${random.pick(vocabulary)}` : ''}`,
		about: random.next() < 0.5 ? words(random, random.int(6), 1.5) : '',
		text: random.next() < 0.1 ? '' : words(random, random.int(60), 1 + random.next() * 2),
	};
}

function randomTicket(random: ReturnType<typeof randomFrom>): string {
	let ticket = words(random, 1 + random.int(12), 1 + random.next() * 2);
	if (random.next() < 0.3) {
		ticket += ` \`${random.pick(vocabulary)}\` and\n\`\`\`\n${random.pick(vocabulary)}\n\`\`\`\n${random.pick(vocabulary)}`;
	}
	return ticket;
}

/** Straightforward BM25 (BM25+, k1 1.2, b 0.7, delta 0.5) over the documents as they are, nothing kept between queries. */
function plainSearch(
	documents: readonly SearchDocument[],
	query: string,
	options: { minScore?: number; limit?: number; skip?: ReadonlySet<string>; skipCommonTerms?: boolean },
): SearchHit[] {
	const fields = ['name', 'about', 'text'] as const;
	const tokenized = documents.map((d) => fields.map((f) => terms(d[f])));
	const n = documents.length;
	// A field's length is its number of distinct terms.
	const averageLength = fields.map((_, f) => tokenized.reduce((sum, t) => sum + new Set(t[f]).size, 0) / n);
	const prose = query.replace(/```[\s\S]*?(```|$)/g, ' ').replace(/`[^`\n]*`/g, ' ');
	const queryTerms = [...new Set(terms(prose))];
	const perDocument = documents.map(() => [] as Array<[string, number]>);
	for (const term of queryTerms) {
		const holders = tokenized.filter((t) => t.some((field) => field.includes(term))).length;
		if (holders === 0 || (options.skipCommonTerms && n >= 2 && holders >= n)) {
			continue;
		}
		documents.forEach((_, d) => {
			let weight = 0;
			let found = false;
			fields.forEach((_, f) => {
				const tf = tokenized[d]![f]!.filter((t) => t === term).length;
				if (tf === 0) {
					return;
				}
				found = true;
				const df = tokenized.filter((t) => t[f]!.includes(term)).length;
				const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
				const length = new Set(tokenized[d]![f]).size;
				weight += idf * (0.5 + (tf * (1.2 + 1)) / (tf + 1.2 * (1 - 0.7 + (0.7 * length) / averageLength[f]!)));
			});
			if (found) {
				perDocument[d]!.push([term, weight]);
			}
		});
	}
	const hits: SearchHit[] = [];
	documents.forEach((document, d) => {
		const matched = perDocument[d]!;
		if (matched.length === 0 || options.skip?.has(document.id)) {
			return;
		}
		const score = matched.reduce((sum, [, w]) => sum + w, 0);
		if (score < (options.minScore ?? 0)) {
			return;
		}
		const top = [...matched]
			.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
			.slice(0, 3)
			.map(([t]) => t);
		hits.push({
			id: document.id,
			name: document.name,
			score: Math.round(score * 100) / 100,
			terms: top,
			reason: `matches ${top.map((t) => `“${t}”`).join(', ')}`,
		});
	});
	hits.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
	return options.limit === undefined ? hits : hits.slice(0, options.limit);
}

describe('the ranking, against a plain BM25 model', () => {
	it('gives the same hits, order, scores, terms and reasons on random corpora and tickets, as documents come, change and go', () => {
		let compared = 0;
		let withHits = 0;
		for (let seed = 1; seed <= 150; seed++) {
			const random = randomFrom(seed);
			const live = new Map<string, SearchDocument>();
			const index = new LibrarySearch();
			let nextId = 0;
			for (let step = 0; step < 4; step++) {
				// A round of changes: new documents, replaced ones, removed ones.
				const changes = 1 + random.int(8);
				for (let c = 0; c < changes; c++) {
					const roll = random.next();
					if (roll < 0.55 || live.size === 0) {
						const id = `d${(nextId++).toString().padStart(3, '0')}`;
						const document = randomDocument(random, id);
						live.set(id, document);
						index.put(document);
					} else if (roll < 0.8) {
						const id = random.pick([...live.keys()]);
						const document = randomDocument(random, id);
						live.set(id, document);
						index.put(document);
					} else {
						const id = random.pick([...live.keys()]);
						live.delete(id);
						index.remove(id);
					}
				}
				// Some documents go through what the suggestion index saves and loads.
				for (const id of [...live.keys()].filter(() => random.next() < 0.2)) {
					const saved = JSON.parse(JSON.stringify(index.indexed(id))) as Parameters<LibrarySearch['putIndexed']>[0];
					index.remove(id);
					index.putIndexed(saved);
				}
				assert.equal(index.size, live.size, `seed ${seed}: size`);
				const documents = [...live.values()];
				for (let q = 0; q < 6; q++) {
					const ticket = randomTicket(random);
					const skip = new Set([...live.keys()].filter(() => random.next() < 0.15));
					const options = {
						skip,
						skipCommonTerms: random.next() < 0.7,
						...(random.next() < 0.6 ? { minScore: random.pick([0.2, 0.5, 1, 2]) } : {}),
						...(random.next() < 0.6 ? { limit: random.pick([1, 3, 20]) } : {}),
					};
					const expected = plainSearch(documents, ticket, options);
					assert.deepEqual(
						index.search(ticket, options),
						expected,
						`seed ${seed}, step ${step}: ${JSON.stringify(ticket)} ${JSON.stringify({ ...options, skip: [...skip] })}`,
					);
					compared++;
					withHits += expected.length > 0 ? 1 : 0;
				}
			}
		}
		// The comparison means something only if many queries had hits.
		assert.ok(withHits > compared / 2, `${withHits} of ${compared} queries had hits`);
	});

	it('answers the same after a change as an index built afresh from the same documents', () => {
		const random = randomFrom(99);
		const documents = Array.from({ length: 40 }, (_, i) => randomDocument(random, `d${i}`));
		const grown = new LibrarySearch(documents.slice(0, 30));
		for (const document of documents.slice(30)) {
			grown.put(document);
		}
		grown.remove('d3');
		grown.put({ ...documents[3]!, text: 'zeppelin cache' });
		const fresh = new LibrarySearch([
			...documents.filter((d) => d.id !== 'd3'),
			{ ...documents[3]!, text: 'zeppelin cache' },
		]);
		for (let q = 0; q < 50; q++) {
			const ticket = randomTicket(random);
			assert.deepEqual(
				grown.search(ticket, { skipCommonTerms: true }),
				fresh.search(ticket, { skipCommonTerms: true }),
				ticket,
			);
		}
	});
});
