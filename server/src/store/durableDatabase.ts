import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import { DeskError } from '../core/errors';
import type { Logger } from '../core/logger';
import { quarantine, removeStaleTempFiles, writeFileDurably } from './durableFile';
import { JournalWriter, scanJournal, type JournalRecord, type SqlValue } from './journal';
import { StoreLock } from './storeLock';

/**
 * A sql.js database that keeps RELIABILITY.md's promises:
 * - an acknowledged write is on disk before `write()` returns: its statements are appended to an
 *   fsynced journal before the in-memory transaction commits, so its cost does not grow with the
 *   database (a full `export()` costs ~3.5 ms per MB and blocks the process);
 * - full exports (checkpoints) run only outside transactions (sql.js silently rolls an open one
 *   back), when the desk is idle or the journal is large, through temp file + fsync + rename +
 *   fsync of the folder; pragmas are applied again afterwards (export resets them);
 * - on load the base file is integrity-checked and the journal replayed; a damaged file is moved
 *   aside as `*.corrupt-<time>` and reported, never replaced by an empty database in silence.
 */

export interface Migration {
	/** Schema version this migration brings the database to; versions start at 1 and have no gaps. */
	version: number;
	statements: string[];
}

export interface DurableDatabaseOptions {
	file: string;
	/** Name of the schema, stored in the database so that a library file is never opened as a project. */
	schema: string;
	migrations: readonly Migration[];
	logger: Logger;
	/** How long to wait for another process's lock on this database. */
	lockTimeoutMs?: number;
	/** A checkpoint runs after this long without writes. */
	idleCheckpointMs?: number;
	/** A checkpoint runs as soon as the journal is larger than this. */
	journalLimitBytes?: number;
	/** Path of sql-wasm.wasm; found beside the bundle or in node_modules by default. */
	wasmFile?: string;
}

/** The statements of one write; reads see the transaction's own changes. */
export interface WriteTransaction {
	run(sql: string, params?: SqlValue[]): void;
	all<Row extends object>(sql: string, params?: SqlValue[]): Row[];
	get<Row extends object>(sql: string, params?: SqlValue[]): Row | undefined;
}

let sqlJs: Promise<SqlJsStatic> | undefined;

export function loadSqlJs(wasmFile?: string): Promise<SqlJsStatic> {
	sqlJs ??= initSqlJs({ locateFile: () => wasmFile ?? defaultWasmFile() });
	return sqlJs;
}

function defaultWasmFile(): string {
	const beside = path.join(__dirname, 'sql-wasm.wasm');
	return fs.existsSync(beside) ? beside : require.resolve(['sql.js', 'dist', 'sql-wasm.wasm'].join('/'));
}

const pragmas = 'PRAGMA foreign_keys = ON;';

export class DurableDatabase {
	private inWrite = false;
	private closed = false;
	private idleTimer: NodeJS.Timeout | undefined;
	private lastSeq: number;
	private checkpointedSeq: number;

	private constructor(
		private readonly db: Database,
		private readonly journal: JournalWriter,
		private readonly lock: StoreLock,
		private readonly options: Required<Omit<DurableDatabaseOptions, 'wasmFile'>>,
		seq: number,
		checkpointedSeq: number,
	) {
		this.lastSeq = seq;
		this.checkpointedSeq = checkpointedSeq;
	}

	static async open(options: DurableDatabaseOptions): Promise<DurableDatabase> {
		const settings = {
			lockTimeoutMs: 10_000,
			idleCheckpointMs: 2_000,
			journalLimitBytes: 16 * 1024 * 1024,
			...options,
		};
		const SQL = await loadSqlJs(options.wasmFile);
		fs.mkdirSync(path.dirname(settings.file), { recursive: true });
		const lock = await StoreLock.acquire(`${settings.file}.lock`, settings.lockTimeoutMs);
		try {
			removeStaleTempFiles(path.dirname(settings.file));
			const db = openBase(SQL, settings.file, settings.schema, settings.logger);
			const baseSeq = readMetaNumber(db, 'journal_seq');
			const journalFile = `${settings.file}.journal`;
			const { seq, validBytes } = replayJournal(db, journalFile, baseSeq, settings.logger);
			const journal = JournalWriter.open(journalFile, validBytes);
			const database = new DurableDatabase(db, journal, lock, settings, seq, baseSeq);
			database.migrate();
			return database;
		} catch (error) {
			lock.release();
			throw error;
		}
	}

	/** Version of the schema the database is at. */
	get schemaVersion(): number {
		return readMetaNumber(this.db, 'schema_version');
	}

	get journalBytes(): number {
		return this.journal.bytes;
	}

	/**
	 * Runs `body` as one transaction and makes it durable before returning. If `body` throws, or the
	 * journal cannot be written, nothing changes and the error propagates.
	 */
	write<T>(body: (tx: WriteTransaction) => T): T {
		this.assertOpen();
		if (this.inWrite) {
			throw new Error('DurableDatabase.write is not reentrant');
		}
		this.inWrite = true;
		const statements: JournalRecord['statements'] = [];
		this.db.exec('BEGIN IMMEDIATE');
		try {
			const tx: WriteTransaction = {
				run: (sql, params = []) => {
					this.db.run(sql, params);
					statements.push([sql, params]);
				},
				all: <Row extends object>(sql: string, params?: SqlValue[]) => this.all<Row>(sql, params),
				get: <Row extends object>(sql: string, params?: SqlValue[]) => this.get<Row>(sql, params),
			};
			const result = body(tx);
			if (statements.length > 0) {
				this.journal.append({ seq: this.lastSeq + 1, statements });
				this.lastSeq++;
			}
			this.db.exec('COMMIT');
			this.scheduleCheckpoint();
			return result;
		} catch (error) {
			try {
				this.db.exec('ROLLBACK');
			} catch {
				// SQLite already rolled back (a constraint with ON CONFLICT ROLLBACK, say).
			}
			throw error;
		} finally {
			this.inWrite = false;
		}
	}

	all<Row extends object>(sql: string, params: SqlValue[] = []): Row[] {
		this.assertOpen();
		const statement = this.db.prepare(sql);
		try {
			statement.bind(params);
			const rows: Row[] = [];
			while (statement.step()) {
				rows.push(statement.getAsObject() as Row);
			}
			return rows;
		} finally {
			statement.free();
		}
	}

	get<Row extends object>(sql: string, params: SqlValue[] = []): Row | undefined {
		return this.all<Row>(sql, params)[0];
	}

	/**
	 * Writes the whole database to its file and empties the journal. Never inside a transaction:
	 * sql.js's export() would silently roll it back.
	 */
	checkpoint(): void {
		this.assertOpen();
		if (this.inWrite) {
			throw new Error('checkpoint() inside a write transaction would roll it back');
		}
		this.clearIdleTimer();
		if (this.lastSeq === this.checkpointedSeq && fs.existsSync(this.options.file)) {
			return;
		}
		// Bookkeeping for the base file only; replay skips records up to this seq.
		this.db.run("INSERT INTO desk_meta(key, value) VALUES ('journal_seq', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [String(this.lastSeq)]);
		const bytes = this.db.export();
		this.db.exec(pragmas);
		writeFileDurably(this.options.file, bytes);
		this.journal.reset();
		this.checkpointedSeq = this.lastSeq;
	}

	/** Checkpoints and releases the lock. Safe to call twice. */
	close(): void {
		if (this.closed) {
			return;
		}
		try {
			this.checkpoint();
		} finally {
			this.closed = true;
			this.clearIdleTimer();
			this.journal.close();
			this.db.close();
			this.lock.release();
		}
	}

	private migrate(): void {
		const current = this.schemaVersion;
		const latest = this.options.migrations.reduce((max, m) => Math.max(max, m.version), 0);
		if (current > latest) {
			throw new DeskError(
				'store.unknownSchema',
				`${this.options.file} has schema version ${current}, newer than this Agent Desk knows (${latest}). Update the extension.`,
				{ file: this.options.file, version: current, known: latest },
			);
		}
		for (const migration of [...this.options.migrations].sort((a, b) => a.version - b.version)) {
			if (migration.version <= current) {
				continue;
			}
			this.write((tx) => {
				for (const statement of migration.statements) {
					tx.run(statement);
				}
				tx.run("INSERT INTO desk_meta(key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [String(migration.version)]);
			});
			this.options.logger.debug(`${path.basename(this.options.file)}: schema migrated to version ${migration.version}`);
		}
	}

	private scheduleCheckpoint(): void {
		if (this.journal.bytes > this.options.journalLimitBytes) {
			this.clearIdleTimer();
			this.idleTimer = setTimeout(() => this.checkpointQuietly(), 0);
		} else {
			this.clearIdleTimer();
			this.idleTimer = setTimeout(() => this.checkpointQuietly(), this.options.idleCheckpointMs);
		}
		this.idleTimer.unref();
	}

	private checkpointQuietly(): void {
		this.idleTimer = undefined;
		if (this.closed || this.inWrite) {
			return;
		}
		try {
			this.checkpoint();
		} catch (error) {
			// The journal still holds every acknowledged change; the next checkpoint tries again.
			this.options.logger.warn(`checkpoint of ${this.options.file} failed: ${(error as Error).message}`);
		}
	}

	private clearIdleTimer(): void {
		if (this.idleTimer) {
			clearTimeout(this.idleTimer);
			this.idleTimer = undefined;
		}
	}

	private assertOpen(): void {
		if (this.closed) {
			throw new DeskError('store.closed', `${this.options.file} is closed.`, { file: this.options.file });
		}
	}
}

function openBase(SQL: SqlJsStatic, file: string, schema: string, logger: Logger): Database {
	let bytes: Buffer | undefined;
	try {
		bytes = fs.readFileSync(file);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
			throw new DeskError('store.io', `Could not read ${file}: ${(error as Error).message}`, { file });
		}
	}
	if (bytes === undefined) {
		if (fs.existsSync(`${file}.journal`)) {
			// A journal without its base: the base was lost, and the journal alone may be partial.
			const kept = quarantine(`${file}.journal`);
			throw new DeskError('store.corrupt', `${file} is missing but its journal is there; the journal was kept as ${kept}.`, { file, keptAs: kept });
		}
		// A new database gets its base file at once, so that a journal never exists without one.
		const db = new SQL.Database();
		db.run("CREATE TABLE desk_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
		db.run("INSERT INTO desk_meta(key, value) VALUES ('schema', ?), ('schema_version', '0'), ('journal_seq', '0')", [schema]);
		writeFileDurably(file, db.export());
		db.exec(pragmas);
		return db;
	}
	const problem = checkBase(SQL, bytes, schema);
	if (typeof problem === 'string') {
		const kept = quarantine(file);
		const keptJournal = fs.existsSync(`${file}.journal`) ? quarantine(`${file}.journal`) : undefined;
		logger.error(`${file} is damaged (${problem}); it was kept as ${kept}`);
		throw new DeskError('store.corrupt', `${file} is damaged (${problem}). It was kept as ${kept}; nothing was replaced.`, {
			file,
			keptAs: kept,
			...(keptJournal ? { journalKeptAs: keptJournal } : {}),
			problem,
		});
	}
	problem.exec(pragmas);
	return problem;
}

function checkBase(SQL: SqlJsStatic, bytes: Buffer, schema: string): Database | string {
	if (bytes.length === 0) {
		// sql.js opens an empty file as an empty database; ours always hold a schema.
		return 'the file is empty';
	}
	let db: Database | undefined;
	try {
		db = new SQL.Database(bytes);
		const result = db.exec('PRAGMA integrity_check');
		const verdict = result[0]?.values.map((row) => String(row[0])).join('; ');
		if (verdict !== 'ok') {
			db.close();
			return `integrity check: ${verdict ?? 'no answer'}`;
		}
		const kind = db.exec("SELECT value FROM desk_meta WHERE key = 'schema'")[0]?.values[0]?.[0];
		if (kind !== schema) {
			db.close();
			return `it is not a ${schema} database (schema ${String(kind)})`;
		}
		return db;
	} catch (error) {
		db?.close();
		return (error as Error).message;
	}
}

function replayJournal(db: Database, file: string, baseSeq: number, logger: Logger): { seq: number; validBytes: number } {
	let bytes: Buffer;
	try {
		bytes = fs.readFileSync(file);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
			return { seq: baseSeq, validBytes: 0 };
		}
		throw new DeskError('store.io', `Could not read ${file}: ${(error as Error).message}`, { file });
	}
	const scan = scanJournal(bytes);
	if (scan.damage !== undefined && scan.damage !== 'torn-tail') {
		// Records after the damage cannot be trusted to follow from what came before. Keep a copy,
		// apply the valid prefix, and say so loudly.
		const kept = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
		fs.copyFileSync(file, kept);
		logger.error(`${file}: ${scan.damage} at byte ${scan.validBytes}; the journal was copied to ${kept} and replayed up to that point`);
	} else if (scan.damage === 'torn-tail') {
		logger.debug(`${file}: dropped a torn record at byte ${scan.validBytes} (never acknowledged)`);
	}
	let seq = baseSeq;
	for (const record of scan.records) {
		if (record.seq <= baseSeq) {
			continue;
		}
		if (record.seq !== seq + 1) {
			throw new DeskError('store.journalCorrupt', `${file}: record ${record.seq} follows ${seq}; a record is missing.`, { file, seq: record.seq, expected: seq + 1 });
		}
		db.exec('BEGIN');
		try {
			for (const [sql, params] of record.statements) {
				db.run(sql, params);
			}
			db.exec('COMMIT');
		} catch (error) {
			db.exec('ROLLBACK');
			throw new DeskError('store.journalCorrupt', `${file}: record ${record.seq} does not apply: ${(error as Error).message}`, { file, seq: record.seq });
		}
		seq = record.seq;
	}
	return { seq, validBytes: scan.validBytes };
}

function readMetaNumber(db: Database, key: string): number {
	const value = db.exec('SELECT value FROM desk_meta WHERE key = ?', [key])[0]?.values[0]?.[0];
	return value === undefined ? 0 : Number(value);
}
