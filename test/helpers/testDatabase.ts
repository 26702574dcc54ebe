import { silentLogger } from '../../server/src/core/logger';
import { DurableDatabase, type Migration } from '../../server/src/store/durableDatabase';

/**
 * Opens `file` as the DurableDatabase tests do: schema `test-schema` at `migrations`, quiet, no idle
 * checkpoint within a test's time, a short lock wait; `extra` overrides any of it.
 */
export function openTestDatabase(
	file: string,
	migrations: Migration[],
	extra: Partial<Parameters<typeof DurableDatabase.open>[0]> = {},
): Promise<DurableDatabase> {
	return DurableDatabase.open({
		file,
		schema: 'test-schema',
		migrations,
		logger: silentLogger,
		idleCheckpointMs: 60_000,
		lockTimeoutMs: 200,
		...extra,
	});
}

/** The `text` column of the test schema's `notes` table, in insertion order. */
export function noteTexts(db: DurableDatabase): string[] {
	return db.all<{ text: string }>('SELECT text FROM notes ORDER BY id').map((r) => r.text);
}
