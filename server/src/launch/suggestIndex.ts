import * as fs from 'node:fs';
import type { AssetRecord } from '../assets/types';
import type { Logger } from '../core/logger';
import { LibrarySearch, type SearchDocument } from '../search/librarySearch';
import { writeFileDurably } from '../store/durableFile';

/** Format of the persisted index; a file of another format is rebuilt, never guessed at. */
export const suggestIndexFormat = 1;

/**
 * A project's suggestion index (§05): BM25 over its members, kept in memory and in
 * `<repo>/.desk/suggest-index.json`. It is brought up to date incrementally: a member whose key
 * (name, about, kind, retired, and the version its text comes from) changed since it was indexed is
 * indexed again, a member that left is dropped, and nothing else is read.
 */
export class SuggestIndex {
	private search: LibrarySearch;
	private readonly keys = new Map<string, string>();
	private saveTimer: NodeJS.Timeout | undefined;

	private constructor(
		private readonly file: string,
		private readonly logger: Logger,
		search: LibrarySearch,
		keys: Record<string, string>,
	) {
		this.search = search;
		for (const [id, key] of Object.entries(keys)) {
			this.keys.set(id, key);
		}
	}

	static open(file: string, logger: Logger): SuggestIndex {
		try {
			const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { format?: unknown; keys?: Record<string, string>; index?: unknown };
			if (saved.format === suggestIndexFormat && saved.keys && saved.index) {
				return new SuggestIndex(file, logger, LibrarySearch.fromJSON(JSON.stringify(saved.index)), saved.keys);
			}
			logger.info(`${file} has format ${String(saved.format)}, not ${suggestIndexFormat}: rebuilding it`);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
				logger.warn(`${file} could not be read (${(error as Error).message}): rebuilding it`);
			}
		}
		return new SuggestIndex(file, logger, new LibrarySearch([]), {});
	}

	/**
	 * Indexes what changed among `members`. `keysOf` must be cheap (no file reads); `documentOf` reads
	 * the asset's text and runs only for members whose key changed. Returns how many were (re)indexed.
	 */
	async update(members: readonly AssetRecord[], keysOf: (assets: readonly AssetRecord[]) => Promise<Map<string, string>>, documentOf: (asset: AssetRecord) => Promise<SearchDocument>): Promise<number> {
		let changed = 0;
		const present = new Set<string>();
		const keys = await keysOf(members);
		for (const member of members) {
			present.add(member.id);
			const key = keys.get(member.id) ?? '';
			if (this.keys.get(member.id) === key) {
				continue;
			}
			this.search.put(await documentOf(member));
			this.keys.set(member.id, key);
			changed++;
		}
		for (const id of [...this.keys.keys()]) {
			if (!present.has(id)) {
				this.search.remove(id);
				this.keys.delete(id);
				changed++;
			}
		}
		if (changed > 0) {
			this.scheduleSave();
		}
		return changed;
	}

	/** Writes a pending save now (at close). */
	flush(): void {
		if (this.saveTimer) {
			clearTimeout(this.saveTimer);
			this.saveTimer = undefined;
			this.save();
		}
	}

	/** Saving serialises the whole index: done once things are quiet, not in the request that changed it. */
	private scheduleSave(): void {
		clearTimeout(this.saveTimer);
		this.saveTimer = setTimeout(() => {
			this.saveTimer = undefined;
			this.save();
		}, 1_000);
		this.saveTimer.unref();
	}

	get index(): LibrarySearch {
		return this.search;
	}

	private save(): void {
		try {
			// A cache: losing it costs a rebuild, so it is written whole by rename but not waited on further.
			writeFileDurably(this.file, Buffer.from(JSON.stringify({ format: suggestIndexFormat, keys: Object.fromEntries(this.keys), index: this.search.toJSON() })));
		} catch (error) {
			this.logger.warn(`could not save ${this.file}: ${(error as Error).message}`);
		}
	}
}
