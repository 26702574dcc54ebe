import type { AssetRecord } from '../assets/types';
import type { LibrarySearch } from '../search/librarySearch';
import type { Suggestion } from './types';

/** The numbers of suggestions (glossary: Suggestion). */
export const minSuggestScore = 0.2;
export const maxSuggested = 3;

export interface SuggestInput {
	ticket: string;
	/** Every asset of the library, for names in the ticket. */
	library: readonly AssetRecord[];
	/** The project's member assets. */
	members: readonly AssetRecord[];
	mainAssetId: string;
	/** Assets plugged into the card already. */
	plugged: ReadonlySet<string>;
	/** BM25 over the members (name, about, text at the version go would freeze; skills by description), up to date. */
	index: LibrarySearch;
}

const namedIdPattern = /\b(a-[0-9a-f]{16})(?: v(\d+))?\b/g;
const tokenSeparators = /[\s`'"()<>,;]+/;

/**
 * Whether the ticket could name an asset at all (an id, or an absolute path): when it cannot, the
 * caller need not list the whole library for it.
 */
export function mayNameAssets(ticket: string): boolean {
	return /\ba-[0-9a-f]{16}\b/.test(ticket) || /(?:^|[\s`'"()<>,;])\//.test(ticket);
}

/**
 * Launch-card suggestions (glossary: Suggestion). Assets the ticket names (an id, with an optional " vN",
 * or an absolute path at or under an asset's folder) come first, uncapped, "named in the ticket",
 * except retired ones and those plugged already. Then word matches from the project's members, never its main asset, retired or plugged ones:
 * BM25 over the members, a term found in every member skipped, listed at a summed weight of at
 * least 0.2, the reason naming the three heaviest terms, ties by name, at most three.
 */
export async function suggestAssets(input: SuggestInput): Promise<Suggestion[]> {
	const byId = new Map(input.library.map((a) => [a.id, a]));
	const named: Suggestion[] = [];
	const namedIds = new Set<string>();
	const name = (asset: AssetRecord, version?: number) => {
		// Retired assets are out of suggestions, and a plugged one is on the card already: neither is offered to keep.
		if (namedIds.has(asset.id) || asset.retired || input.plugged.has(asset.id)) {
			return;
		}
		namedIds.add(asset.id);
		named.push({
			asset_id: asset.id,
			name: asset.name,
			role: asset.kind === 'skill' ? 'instructions' : 'reference',
			reason: `named in the ticket${version !== undefined ? ` at v${version}` : ''}`,
			...(version !== undefined ? { version } : {}),
			named: true,
		});
	};
	for (const match of input.ticket.matchAll(namedIdPattern)) {
		const asset = byId.get(match[1]!);
		if (asset) {
			name(asset, match[2] === undefined ? undefined : Number(match[2]));
		}
	}
	// An absolute path names the asset whose folder holds it (the deepest such folder). A retired
	// asset is out of the library's lists: the path names the asset around its folder, if any.
	const folders = input.library
		.filter((a) => a.working_dir !== '' && !a.retired)
		.sort((a, b) => b.working_dir.length - a.working_dir.length);
	for (const token of input.ticket.split(tokenSeparators)) {
		const candidate = token.replace(/[.:!?]+$/, '');
		if (!candidate.startsWith('/')) {
			continue;
		}
		const asset = folders.find((a) => candidate === a.working_dir || candidate.startsWith(`${a.working_dir}/`));
		if (asset) {
			name(asset);
		}
	}

	const excluded = new Set<string>([
		input.mainAssetId,
		...input.plugged,
		...namedIds,
		...input.members.filter((m) => m.retired).map((m) => m.id),
	]);
	const hits = input.index.search(input.ticket, {
		skip: excluded,
		minScore: minSuggestScore,
		limit: maxSuggested,
		skipCommonTerms: true,
		corpusSize: input.members.length,
	});
	const members = new Map(input.members.map((m) => [m.id, m]));
	const matched = hits.map((hit): Suggestion => {
		const asset = members.get(hit.id)!;
		return {
			asset_id: asset.id,
			name: asset.name,
			role: asset.kind === 'skill' ? 'instructions' : 'reference',
			reason: hit.reason,
			score: hit.score,
			named: false,
		};
	});
	return [...named, ...matched];
}
