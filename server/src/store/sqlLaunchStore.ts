import type { AiObject } from '../ai/types';
import type { LaunchStore, LaunchWrites } from '../launch/ports';
import type { AiStore } from './aiStore';
import { answerOnce, recordAnswer, throwIfAnswered, type ClientRequest } from './clientRequests';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';

/** A project's launch card, launch records and pending "used in" in the project database (project schema v3 and v7). */
export class SqlLaunchStore implements LaunchStore {
	constructor(
		private readonly db: DurableDatabase,
		private readonly ai: AiStore,
	) {}

	cardText(): string | undefined {
		return cardTextIn(this.db);
	}

	recordTexts(): string[] {
		return this.db.all<{ json: string }>('SELECT json FROM launch_records ORDER BY launch_id').map((r) => r.json);
	}

	recordText(launchId: string): string | undefined {
		return this.db.get<{ json: string }>('SELECT json FROM launch_records WHERE launch_id = ?', [launchId])?.json;
	}

	pendingUses(): string[] {
		return this.db
			.all<{ launch_id: string }>('SELECT launch_id FROM launch_uses_pending ORDER BY launch_id')
			.map((r) => r.launch_id);
	}

	usesRecorded(launchId: string): void {
		this.db.write((tx) => tx.run('DELETE FROM launch_uses_pending WHERE launch_id = ?', [launchId]));
	}

	write<T>(body: (writes: LaunchWrites) => T): T {
		return this.db.write((tx) => body(new SqlLaunchWrites(tx, this.ai)));
	}

	answerOnce<T>(request: ClientRequest | undefined, work: () => Promise<T>): Promise<{ result: T; replayed: boolean }> {
		return answerOnce(this.db, request, work);
	}
}

class SqlLaunchWrites implements LaunchWrites {
	constructor(
		private readonly tx: WriteTransaction,
		private readonly ai: AiStore,
	) {}

	cardText(): string | undefined {
		return cardTextIn(this.tx);
	}

	saveCard(text: string, at: string): void {
		this.tx.run(
			'INSERT INTO launch_card (id, json, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at',
			[text, at],
		);
	}

	clearCard(): void {
		this.tx.run('DELETE FROM launch_card WHERE id = 1');
	}

	insertLaunch(launch: { launch_id: string; created_at: string }, text: string): void {
		this.tx.run('INSERT INTO launch_records (launch_id, created_at, json) VALUES (?, ?, ?)', [
			launch.launch_id,
			launch.created_at,
			text,
		]);
		this.tx.run('INSERT INTO launch_uses_pending (launch_id) VALUES (?)', [launch.launch_id]);
	}

	putAiObjects(objects: readonly AiObject[]): void {
		this.ai.putIn(this.tx, objects);
	}

	throwIfAnswered(request: ClientRequest | undefined): void {
		throwIfAnswered(this.tx, request);
	}

	answer(request: ClientRequest | undefined, result: unknown, at: string): void {
		recordAnswer(this.tx, request, result, at);
	}

	alongside(write: (tx: WriteTransaction) => void): void {
		write(this.tx);
	}
}

function cardTextIn(reader: Pick<WriteTransaction, 'get'>): string | undefined {
	return reader.get<{ json: string }>('SELECT json FROM launch_card WHERE id = 1')?.json;
}
