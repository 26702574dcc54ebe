import type { AssetRecord } from '../assets/types';
import type { Logger } from '../core/logger';
import { LibrarySearch, type IndexedDocument, type SearchDocument } from '../search/librarySearch';
import type { SuggestIndexFile } from './ports';
import type { SuggestIndexProgress } from './types';

/**
 * Format of the persisted index; a file of another format is rebuilt, never guessed at.
 * 1: minisearch's own JSON. 2: one line per document (its key, and its terms with their frequency
 * in each field), so it is loaded and saved a document at a time.
 */
export const suggestIndexFormat = 2;

/** How long the index works before it lets the event loop run other requests (it always stops between assets). */
const sliceMs = 10;
/** Progress is reported at most this often while the index builds (and always when it completes). */
const progressEveryMs = 1_000;

type DocumentOf = (asset: AssetRecord) => Promise<SearchDocument>;

interface Wanted {
	members: readonly AssetRecord[];
	keys: ReadonlyMap<string, string>;
	documentOf: DocumentOf;
}

/** One line of the saved file. */
interface SavedDocument {
	key: string;
	id: string;
	name: string;
	lengths: number[];
	/** The document's terms, separated by spaces (a term never holds one). */
	terms: string;
	tf: number[];
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A saved document as the index may take it in: the file is in the repository's `.desk/`, where
 * anything that writes the checkout can write, so a line of the right JSON but the wrong shape
 * (a missing field, counts that do not fit the terms, a term twice) counts as damage, like a torn line.
 */
function checkSavedDocument(value: unknown): SavedDocument {
	const doc = value as Partial<SavedDocument> | null;
	const count = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
	if (
		typeof doc !== 'object' ||
		doc === null ||
		typeof doc.key !== 'string' ||
		typeof doc.id !== 'string' ||
		typeof doc.name !== 'string' ||
		typeof doc.terms !== 'string'
	) {
		throw new Error('a document without its key, id, name or terms');
	}
	const terms = doc.terms === '' ? [] : doc.terms.split(' ');
	if (!Array.isArray(doc.lengths) || doc.lengths.length !== 3 || !doc.lengths.every(count)) {
		throw new Error(`document ${doc.id} has no three field lengths`);
	}
	if (!Array.isArray(doc.tf) || doc.tf.length !== terms.length * 3 || !doc.tf.every(count)) {
		throw new Error(`document ${doc.id} has frequencies that do not fit its ${terms.length} terms`);
	}
	if (new Set(terms).size !== terms.length || terms.some((t) => t === '')) {
		throw new Error(`document ${doc.id} lists a term twice or an empty one`);
	}
	return doc as SavedDocument;
}

/**
 * A project's suggestion index (glossary: Suggestion): BM25 over its members, kept in memory and in
 * `<repo>/.desk/suggest-index.json`. It is brought up to date incrementally: a member whose key
 * (name, about, kind, retired, and what Go would freeze of it: see Library.matchKeys) changed since
 * it was indexed is indexed again, a member that left is dropped, and nothing else is read.
 *
 * The work happens in the background, never inside a request: `refresh` drops the members that left
 * and returns; the saved file is loaded, then the members that changed are read and indexed one at a
 * time, with the event loop let go between them, so the server keeps answering and a suggestion can
 * be answered from what is indexed so far (`progress` says how much). Saving, a while after the last
 * change, also writes a document at a time.
 */
export class SuggestIndex {
	private readonly search = new LibrarySearch();
	/** The key each indexed document was indexed at. */
	private readonly keys = new Map<string, string>();
	private wanted: Wanted | undefined;
	private loaded = false;
	private building = false;
	private closed = false;
	private waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
	/** Documents (re)indexed or dropped, ever: `refresh` reports the difference. */
	private changes = 0;
	private dirty = false;
	private saveTimer: NodeJS.Timeout | undefined;
	private saving: Promise<void> | undefined;
	private lastProgress = 0;
	/** Called at most once a second while the index builds, and when it completes after doing work. */
	onProgress: ((progress: SuggestIndexProgress) => void) | undefined;

	private constructor(
		private readonly file: SuggestIndexFile,
		private readonly logger: Logger,
	) {}

	/** The index saved in `file`, loaded in the background by the first refresh (nothing is read here). */
	static open(file: SuggestIndexFile, logger: Logger): SuggestIndex {
		return new SuggestIndex(file, logger);
	}

	get index(): LibrarySearch {
		return this.search;
	}

	/**
	 * Wants the index to hold `members` as their `keys` say. Members that left are dropped at once;
	 * the rest is loaded or indexed in the background. Resolves once the index is complete for the
	 * latest members asked for, with how many documents were (re)indexed or dropped meanwhile.
	 */
	refresh(members: readonly AssetRecord[], keys: ReadonlyMap<string, string>, documentOf: DocumentOf): Promise<number> {
		this.wanted = { members, keys, documentOf };
		const before = this.changes;
		this.dropLeft();
		if (this.loaded && this.next() === undefined) {
			this.completed(false);
			return Promise.resolve(this.changes - before);
		}
		const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
		if (!this.building) {
			this.building = true;
			void this.build();
		}
		return done.then(() => this.changes - before);
	}

	/**
	 * Brings the index up to date with `members` and waits for it. `keysOf` must be cheap (no file
	 * reads); `documentOf` reads the asset's text and runs only for members whose key changed.
	 * Returns how many were (re)indexed or dropped.
	 */
	async update(
		members: readonly AssetRecord[],
		keysOf: (assets: readonly AssetRecord[]) => Promise<Map<string, string>>,
		documentOf: DocumentOf,
	): Promise<number> {
		return this.refresh(members, await keysOf(members), documentOf);
	}

	/**
	 * How many of the members asked for last are indexed at their current key; those in `unsettled`
	 * (whose current key is still being taken) count as not indexed.
	 */
	progress(unsettled: ReadonlySet<string> = new Set()): SuggestIndexProgress {
		const wanted = this.wanted;
		if (!wanted) {
			return { indexed: 0, total: 0 };
		}
		let indexed = 0;
		for (const member of wanted.members) {
			if (
				!unsettled.has(member.id) &&
				this.search.has(member.id) &&
				this.keys.get(member.id) === (wanted.keys.get(member.id) ?? '')
			) {
				indexed++;
			}
		}
		return { indexed, total: wanted.members.length };
	}

	/** Writes a pending save now and stops the background work (at close). */
	flush(): void {
		this.closed = true;
		clearTimeout(this.saveTimer);
		this.saveTimer = undefined;
		if (this.dirty) {
			this.dirty = false;
			try {
				this.file.write([...this.lines()].join(''));
			} catch (error) {
				this.logger.warn(`could not save ${this.file.name}: ${(error as Error).message}`);
			}
		}
		const waiters = this.waiters;
		this.waiters = [];
		waiters.forEach((w) => w.reject(new Error('the suggestion index was closed')));
	}

	/** The next member to (re)index: the first, in member order, whose key is not the one it was indexed at. */
	private next(): AssetRecord | undefined {
		const wanted = this.wanted!;
		return wanted.members.find((m) => !this.search.has(m.id) || this.keys.get(m.id) !== (wanted.keys.get(m.id) ?? ''));
	}

	private dropLeft(): void {
		const present = new Set(this.wanted!.members.map((m) => m.id));
		for (const id of this.search.ids()) {
			if (!present.has(id)) {
				this.search.remove(id);
				this.keys.delete(id);
				this.changed();
			}
		}
	}

	private changed(): void {
		this.changes++;
		this.dirty = true;
	}

	private async build(): Promise<void> {
		try {
			if (!this.loaded) {
				await this.load();
				this.loaded = true;
				this.dropLeft();
			}
			for (let member = this.next(); member !== undefined && !this.closed; member = this.next()) {
				const { keys, documentOf } = this.wanted!;
				const key = keys.get(member.id) ?? '';
				let document: SearchDocument;
				try {
					document = await documentOf(member);
				} catch (error) {
					if (this.closed) {
						break; // The desk closed under the read.
					}
					// Indexed by name and about only, until its key changes again.
					this.logger.warn(`could not read ${member.name} (${member.id}) for suggestions: ${(error as Error).message}`);
					document = { id: member.id, name: member.name, about: member.about, text: '' };
				}
				// It may have left while it was read; if its key moved meanwhile, the next round reads it again.
				if (this.wanted!.members.some((m) => m.id === member!.id)) {
					this.search.put(document);
					this.keys.set(member.id, key);
					this.changed();
					this.reportProgress(false);
				}
				await yieldToEventLoop();
			}
		} catch (error) {
			this.building = false;
			const waiters = this.waiters;
			this.waiters = [];
			waiters.forEach((w) => w.reject(error));
			return;
		}
		// Nothing awaits between the last check and here, so a refresh that came meanwhile either saw
		// `building` and waits below, or comes after and finds the index complete.
		this.building = false;
		this.completed(true);
	}

	private completed(worked: boolean): void {
		const waiters = this.waiters;
		this.waiters = [];
		waiters.forEach((w) => w.resolve());
		if (worked) {
			this.reportProgress(true);
		}
		if (this.dirty && !this.closed) {
			this.scheduleSave();
		}
	}

	/**
	 * Tells `onProgress` how much is indexed: now when `complete` (the default, also for a caller whose
	 * answer said less than there is now), else at most once a second.
	 */
	reportProgress(complete = true): void {
		const now = Date.now();
		if (complete || now - this.lastProgress >= progressEveryMs) {
			this.lastProgress = now;
			this.onProgress?.(this.progress());
		}
	}

	/** Loads the saved documents of the members asked for, a slice at a time; a file of another format is left to be rebuilt. */
	private async load(): Promise<void> {
		let text: string;
		try {
			const read = await this.file.read();
			if (read === undefined) {
				return;
			}
			text = read;
		} catch (error) {
			this.logger.warn(`${this.file.name} could not be read (${(error as Error).message}): rebuilding it`);
			return;
		}
		const format = /^\{"format":(\d+)[,}]/.exec(text)?.[1];
		if (format !== String(suggestIndexFormat)) {
			this.logger.info(`${this.file.name} has format ${format ?? 'unknown'}, not ${suggestIndexFormat}: rebuilding it`);
			return;
		}
		const lines = text.split('\n');
		// The whole file's text is not needed past its lines: let it go while they are read.
		// eslint-disable-next-line no-useless-assignment
		text = '';
		let slice = Date.now();
		// Line 0 is the header, then a document a line (after the first, led by a comma) up to `]}`.
		for (let i = 1; i < lines.length && lines[i] !== ']}' && !this.closed; i++) {
			let saved: SavedDocument;
			try {
				saved = checkSavedDocument(JSON.parse(lines[i]!.startsWith(',') ? lines[i]!.slice(1) : lines[i]!));
			} catch (error) {
				this.logger.warn(
					`${this.file.name} is damaged at line ${i + 1} (${(error as Error).message}): the rest is rebuilt`,
				);
				return;
			}
			if (this.wanted!.members.some((m) => m.id === saved.id) && !this.search.has(saved.id)) {
				this.search.putIndexed({
					id: saved.id,
					name: saved.name,
					lengths: saved.lengths,
					terms: saved.terms === '' ? [] : saved.terms.split(' '),
					tf: saved.tf,
				});
				this.keys.set(saved.id, saved.key);
			}
			if (Date.now() - slice >= sliceMs) {
				await yieldToEventLoop();
				slice = Date.now();
			}
		}
	}

	/** Saving serialises the whole index: done once things are quiet, a document at a time, never in a request. */
	private scheduleSave(): void {
		clearTimeout(this.saveTimer);
		this.saveTimer = setTimeout(() => {
			this.saveTimer = undefined;
			if (this.saving) {
				// One save at a time; the one running now may miss the latest changes, so go again after it.
				void this.saving.then(() => this.dirty && !this.closed && this.scheduleSave());
				return;
			}
			this.dirty = false;
			this.saving = this.save().finally(() => (this.saving = undefined));
		}, 1_000);
		this.saveTimer.unref();
	}

	private async save(): Promise<void> {
		const lines = this.lines();
		async function* chunks(): AsyncGenerator<string> {
			let chunk = '';
			let slice = Date.now();
			for (const line of lines) {
				chunk += line;
				if (Date.now() - slice >= sliceMs) {
					yield chunk;
					chunk = '';
					await yieldToEventLoop();
					slice = Date.now();
				}
			}
			yield chunk;
		}
		try {
			// A cache: losing it costs a rebuild. Closing writes it whole, so a save still running then is dropped.
			await this.file.writeFrom(chunks(), () => this.closed);
		} catch (error) {
			this.dirty = true;
			this.logger.warn(`could not save ${this.file.name}: ${(error as Error).message}`);
		}
	}

	/** The file, a line at a time: the header, one line per document (each consistent on its own), the end. */
	private *lines(): Generator<string> {
		yield `{"format":${suggestIndexFormat},"documents":[`;
		let first = true;
		for (const id of this.search.ids()) {
			const document: IndexedDocument | undefined = this.search.indexed(id);
			if (!document) {
				continue; // Dropped while the file was written.
			}
			const saved: SavedDocument = {
				key: this.keys.get(id) ?? '',
				id,
				name: document.name,
				lengths: document.lengths,
				terms: document.terms.join(' '),
				tf: document.tf,
			};
			yield `\n${first ? '' : ','}${JSON.stringify(saved)}`;
			first = false;
		}
		yield '\n]}\n';
	}
}
