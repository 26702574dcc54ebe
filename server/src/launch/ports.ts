import type { AiObject } from '../ai/types';
import type { ClientRequest } from '../store/clientRequests';
import type { WriteTransaction } from '../store/durableDatabase';

/**
 * What a project's launch card and launches need from the project database: the draft card
 * (`launch_card`), the launch records (`launch_records`), the launches whose "used in" the library
 * has yet to record (`launch_uses_pending`), the AI objects a Go makes, and the answers to clients'
 * request ids. The card and the records are kept as the JSON text launch/ writes and reads back
 * through the one reader of each format (storedFormats.ts). The SQL adapter is
 * `store/sqlLaunchStore.ts`.
 */
export interface LaunchStore {
	/** The draft card's stored text; undefined when the project has none (a new card, or one launched). */
	cardText(): string | undefined;
	/** Every launch record's stored text, oldest first. */
	recordTexts(): string[];
	/** The stored text of one launch record. */
	recordText(launchId: string): string | undefined;
	/** Launches whose plugs the library has not recorded yet ("used in"), oldest first. */
	pendingUses(): string[];
	/** The library has the launch's plugs now. */
	usesRecorded(launchId: string): void;
	/** Runs `body` as one durable transaction: all of its writes land, or none. */
	write<T>(body: (writes: LaunchWrites) => T): T;
	/**
	 * Runs `work` once for `request`: a stored answer is returned at once (`replayed`), a repeat
	 * while the first is working waits for it (see store/clientRequests).
	 */
	answerOnce<T>(request: ClientRequest | undefined, work: () => Promise<T>): Promise<{ result: T; replayed: boolean }>;
}

export interface LaunchWrites {
	/** The draft card's stored text, read inside the transaction. */
	cardText(): string | undefined;
	saveCard(text: string, at: string): void;
	/** The card starts afresh (after a Go). */
	clearCard(): void;
	/** A launch record, and its "used in" marked pending. */
	insertLaunch(launch: { launch_id: string; created_at: string }, text: string): void;
	putAiObjects(objects: readonly AiObject[]): void;
	/** Abandons the transaction when the request was answered meanwhile (by another process). */
	throwIfAnswered(request: ClientRequest | undefined): void;
	/** Records the answer to the client's request id with the effect it describes (nothing when there is no request). */
	answer(request: ClientRequest | undefined, result: unknown, at: string): void;
	/** Another store's writes in this same transaction (the run's claim of the checkout, at Go). */
	alongside(write: (tx: WriteTransaction) => void): void;
}

/**
 * Where a project's suggestion index is saved (`<repo>/.desk/suggest-index.json`): a cache, so a file
 * that cannot be read costs a rebuild. The adapter is `store/suggestIndexFile.ts`.
 */
export interface SuggestIndexFile {
	/** What messages call it (its path). */
	readonly name: string;
	/** Its text; undefined when there is no file. Throws when it cannot be read. */
	read(): Promise<string | undefined>;
	/** Writes it whole and durably. */
	write(text: string): void;
	/** Writes it durably from chunks; `abandon` is asked between them and drops the write when true. */
	writeFrom(chunks: AsyncIterable<string>, abandon: () => boolean): Promise<void>;
}
