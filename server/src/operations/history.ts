/**
 * Run history (glossary: Run history): a project's AI objects carried to and from a ref of its
 * repository (`refs/desk/history` unless named), so a clone brings its runs along.
 */
import { ExportHistory, ImportHistory } from '../protocol/protocol';
import { operation } from './operation';
import { topOfPlace } from './runs';

export const importHistory = operation({
	name: 'history.import',
	summary:
		"Bring a history ref's AI objects into the project: new objects and later states of stored ones; every other object is refused and named with its reason.",
	params: ImportHistory.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: ImportHistory, cli: 'history import' },
	async run(call, { ref, ...place }) {
		// A write: a fresh clone's history may make the project database.
		const result = await call.desk.importHistory(await topOfPlace(call.desk, place), ref);
		if (result.added > 0 && place.project !== undefined) {
			call.events.runsChanged(place.project);
		}
		return result;
	},
});

export const exportHistory = operation({
	name: 'history.export',
	summary: "Write the project's AI objects, sealed, to a history ref of its repository.",
	params: ExportHistory.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: ExportHistory, cli: 'history export' },
	async run(call, { ref, ...place }) {
		return call.desk.exportHistory(await topOfPlace(call.desk, place), ref);
	},
});

/** The history's operations, in the table's order. */
export const historyOperations = [importHistory, exportHistory];
