import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import initSqlJs, { type Database, type SqlJsStatic } from 'sql.js';
import { DeskError } from '../core/errors';
import type { Logger } from '../core/logger';
import {
	baseSum,
	damagedError,
	defaultRecoverHint,
	describeSum,
	readDamage,
	readSidecar,
	recoverFiles,
	setAside,
	verifySidecar,
	writeSidecar,
	type BaseSum,
	type RecoverHint,
	type RecoverResult,
} from './damage';
import { removeStaleTempFiles, writeFileDurably } from './durableFile';
import {
	appendDurably,
	encodeRecord,
	journalMagic,
	recordsAfterDamage,
	scanJournal,
	type JournalRecord,
	type SqlValue,
} from './journal';
import { StoreLock } from './storeLock';

/**
 * A sql.js database that keeps RELIABILITY.md's promises and can be shared by several processes
 * (the desk servers of several VS Code windows, the `desk` command line):
 * - an acknowledged write is on disk before `write()` returns: its statements are appended to an
 *   fdatasync'ed journal before the in-memory transaction commits, so its cost does not grow with
 *   the database (a full `export()` costs ~3.5 ms per MB and blocks the process);
 * - writers take turns under a lock held for one write; before writing (and before reading) a
 *   process applies the records other processes appended, so no update is ever lost;
 * - full exports (checkpoints) run only outside transactions (sql.js silently rolls an open one
 *   back), when the process is idle or the journal is large, through temp file + fsync + rename +
 *   fsync of the folder; pragmas are applied again afterwards (export resets them);
 * - on load the base file is checked against the checksum its checkpoint recorded (`<db>.checked`;
 *   SQLite's integrity check when there is none) and the journal replayed; a damaged file is moved
 *   aside as `*.corrupt-<time>`, marked `<db>.damaged`, and every open fails until the person
 *   chooses (`damage.ts`): it is never replaced by an empty database.
 *
 * Statements must be deterministic (ids and times come from the caller, never from random() or
 * the clock in SQL): they are replayed by every process that opens the database.
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
	/** How long a write waits for another process's write to finish. */
	lockTimeoutMs?: number;
	/** A checkpoint runs after this long without writes. */
	idleCheckpointMs?: number;
	/** A checkpoint runs as soon as the journal is larger than this. */
	journalLimitBytes?: number;
	/** Path of sql-wasm.wasm; found beside the bundle or in node_modules by default. */
	wasmFile?: string;
	/** What a refusal of this store as damaged tells the person to run. */
	recover?: RecoverHint;
}

/** The statements of one write; reads see the transaction's own changes. */
export interface WriteTransaction {
	run(sql: string, params?: SqlValue[]): void;
	all<Row extends object>(sql: string, params?: SqlValue[]): Row[];
	get<Row extends object>(sql: string, params?: SqlValue[]): Row | undefined;
}

let sqlJs: Promise<SqlJsStatic> | undefined;

export function loadSqlJs(wasmFile?: string): Promise<SqlJsStatic> {
	if (!sqlJs) {
		// SQLite's wasm stays on V8's baseline compiler (Liftoff). Tiering up hot functions to TurboFan
		// runs in background threads: measured on 2 cores, a server that starts, opens its databases and
		// stops used 1.0 s of CPU with it and 0.6 s without; 2,000 inserts took 0.75-0.95 s of CPU with it
		// and 0.4 s without, and TurboFan's code only pays back past about 100,000 statements in a row.
		// Its compiles also made every process spawn of the next second (git, the agent) cost twice as much.
		// The flag is read when the module is compiled, which happens once, just below.
		v8.setFlagsFromString('--liftoff-only');
		sqlJs = initSqlJs({ locateFile: () => wasmFile ?? defaultWasmFile() });
	}
	return sqlJs;
}

function defaultWasmFile(): string {
	const beside = path.join(__dirname, 'sql-wasm.wasm');
	return fs.existsSync(beside) ? beside : require.resolve(['sql.js', 'dist', 'sql-wasm.wasm'].join('/'));
}

const pragmas = 'PRAGMA foreign_keys = ON;';

/** A statement whose whole effect is the rows it reports changed (`getRowsModified`); schema statements are not. */
const rowStatement = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** Which base file a process has loaded: another process's checkpoint replaces it. */
interface FileIdentity {
	ino: number;
	size: number;
	mtimeMs: number;
}

interface OpenJournal {
	fd: number;
	ino: number;
	/** Bytes of the journal applied (or written) by this process. */
	offset: number;
}

type Settings = Required<Omit<DurableDatabaseOptions, 'wasmFile'>>;

/** A base file as loaded: the database and the checksum of its bytes. */
interface LoadedBase {
	db: Database;
	sum: BaseSum;
}

export class DurableDatabase {
	private db!: Database;
	private base!: FileIdentity;
	/** Checksum of the base file this process loaded or wrote (what the next checkpoint replaces). */
	private baseSum!: BaseSum;
	private journal: OpenJournal | undefined;
	/** Last journal record applied in memory. */
	private lastSeq = 0;
	/** Last journal record contained in the base file this process loaded or wrote. */
	private baseSeq = 0;
	/** Last journal record another process wrote that this one applied (or took from its checkpoint). */
	private outsideSeq = 0;
	private inWrite = false;
	private closed = false;
	private idleTimer: NodeJS.Timeout | undefined;
	private readonly lock: StoreLock;
	private readonly journalFile: string;

	private constructor(
		private readonly SQL: SqlJsStatic,
		private readonly options: Settings,
	) {
		this.lock = new StoreLock(`${options.file}.lock`, options.lockTimeoutMs);
		this.journalFile = `${options.file}.journal`;
	}

	static async open(options: DurableDatabaseOptions): Promise<DurableDatabase> {
		const settings: Settings = {
			lockTimeoutMs: 10_000,
			idleCheckpointMs: 2_000,
			journalLimitBytes: 16 * 1024 * 1024,
			recover: defaultRecoverHint,
			...options,
		};
		const SQL = await loadSqlJs(options.wasmFile);
		fs.mkdirSync(path.dirname(settings.file), { recursive: true });
		const database = new DurableDatabase(SQL, settings);
		try {
			database.lock.withLock(() => {
				removeStaleTempFiles(path.dirname(settings.file));
				database.load();
				database.migrate();
				if (readMeta(database.db, 'tracking_since') === undefined) {
					// A database from before this was recorded: files older than now may be unknown to it.
					database.write((tx) =>
						tx.run("INSERT INTO desk_meta(key, value) VALUES ('tracking_since', ?) ON CONFLICT(key) DO NOTHING", [
							String(Date.now()),
						]),
					);
				}
			});
		} catch (error) {
			database.release();
			throw error;
		}
		return database;
	}

	/**
	 * Carries out the person's choice for a store marked damaged (`restore` the kept copy, or start
	 * `empty`), under the store's lock. Fails with `store.notDamaged`, or `store.cannotRecover` naming
	 * why (a kept copy SQLite cannot read, of another schema, or missing), changing nothing then.
	 * The caller opens the database afterwards.
	 */
	static async recover(options: DurableDatabaseOptions, choice: 'restore' | 'empty'): Promise<RecoverResult> {
		const SQL = await loadSqlJs(options.wasmFile);
		const lock = new StoreLock(`${options.file}.lock`, options.lockTimeoutMs ?? 10_000);
		return lock.withLock(() =>
			recoverFiles(
				options.file,
				choice,
				(bytes) => {
					const checked = checkBase(SQL, bytes, options.schema, false);
					if (typeof checked === 'string') {
						return checked;
					}
					checked.close();
					return undefined;
				},
				(bytes) => writeSidecar(options.file, [baseSum(bytes)]),
			),
		);
	}

	/**
	 * When this database started to record things: a file a row would name that is older than this
	 * may have been written before the database existed (it was started empty, or after damage), so
	 * its absence from the database says nothing. Milliseconds since the epoch.
	 */
	get trackingSince(): number {
		this.assertOpen();
		this.catchUp(false);
		return Number(readMeta(this.db, 'tracking_since') ?? Date.now());
	}

	/** Version of the schema the database is at. */
	get schemaVersion(): number {
		this.catchUp(false);
		return readMetaNumber(this.db, 'schema_version');
	}

	/** Size of the journal this process has seen. */
	get journalBytes(): number {
		return this.journal?.offset ?? 0;
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
		return this.lock.withLock(() => {
			this.catchUp(true);
			const journal = this.journal!;
			const statements: JournalRecord['statements'] = [];
			this.inWrite = true;
			this.db.exec('BEGIN IMMEDIATE');
			try {
				const result = body({
					run: (sql, params = []) => {
						this.db.run(sql, params);
						// A row statement that changed no row (an upsert whose value is already there) is left
						// out of the journal: a transaction of nothing but those moves no version, so opening a
						// project from another process is not taken by every window for a change.
						if (!rowStatement.test(sql) || this.db.getRowsModified() > 0) {
							statements.push([sql, params]);
						}
					},
					all: <Row extends object>(sql: string, params?: SqlValue[]) => this.query<Row>(sql, params),
					get: <Row extends object>(sql: string, params?: SqlValue[]): Row | undefined =>
						this.query<Row>(sql, params).at(0),
				});
				if (statements.length > 0) {
					const bytes = encodeRecord({ seq: this.lastSeq + 1, statements });
					appendDurably(journal.fd, bytes, journal.offset);
					journal.offset += bytes.length;
					this.lastSeq++;
				}
				this.db.exec('COMMIT');
				if (statements.length > 0) {
					this.scheduleCheckpoint();
				}
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
		});
	}

	/**
	 * A number that moves whenever the data does, written by this process or another: the last
	 * journal record applied. Lets a caller keep what it read until the next change.
	 */
	dataVersion(): number {
		this.assertOpen();
		this.catchUp(false);
		return this.lastSeq;
	}

	/**
	 * Like {@link dataVersion}, but moved only by other processes' writes: what a watcher of the
	 * files compares to tell another process's change from this one's own.
	 */
	outsideVersion(): number {
		this.assertOpen();
		this.catchUp(false);
		return this.outsideSeq;
	}

	/** Reads with the changes of every process applied. */
	all<Row extends object>(sql: string, params: SqlValue[] = []): Row[] {
		this.assertOpen();
		this.catchUp(false);
		return this.query<Row>(sql, params);
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
		this.lock.withLock(() => {
			this.catchUp(true);
			if (this.lastSeq === this.baseSeq) {
				return;
			}
			// Bookkeeping for the base file only: readers skip journal records up to this seq.
			this.db.run(
				"INSERT INTO desk_meta(key, value) VALUES ('journal_seq', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
				[String(this.lastSeq)],
			);
			const bytes = this.db.export();
			this.db.exec(pragmas);
			// The checksum is recorded before the base it describes, beside the one it replaces, so a
			// crash between the two writes leaves a base the sidecar accepts; then the old one is dropped.
			const sum = baseSum(bytes);
			writeSidecar(this.options.file, [this.baseSum, sum]);
			writeFileDurably(this.options.file, bytes);
			writeSidecar(this.options.file, [sum], false);
			this.baseSum = sum;
			this.base = identity(this.options.file)!;
			this.baseSeq = this.lastSeq;
			// A crash here leaves a journal whose records the base already holds: replay skips them.
			writeFileDurably(this.journalFile, journalMagic);
			this.openJournal(journalMagic.length);
		});
	}

	/** Checkpoints and closes. Safe to call twice. */
	close(): void {
		if (this.closed) {
			return;
		}
		try {
			this.checkpoint();
		} finally {
			this.release();
		}
	}

	private release(): void {
		this.closed = true;
		this.clearIdleTimer();
		this.closeJournal();
		this.db?.close();
	}

	private query<Row extends object>(sql: string, params: SqlValue[] = []): Row[] {
		const statement = this.db.prepare(sql);
		try {
			statement.bind(params);
			const rows: Row[] = [];
			// Column names once per statement: getAsObject() asks SQLite for them again on every row.
			let names: string[] | undefined;
			while (statement.step()) {
				names ??= statement.getColumnNames();
				const values = statement.get();
				const row: Record<string, unknown> = {};
				for (let i = 0; i < names.length; i++) {
					row[names[i]!] = values[i];
				}
				rows.push(row as Row);
			}
			return rows;
		} finally {
			statement.free();
		}
	}

	/** (Re)reads the base file and replays the journal over it. Only under the lock: a checkpoint
	 * of another process between reading the base and opening the journal would pair a base with a
	 * journal that does not follow from it. */
	private load(): void {
		const { db, sum } = openBase(
			this.SQL,
			this.options.file,
			this.options.schema,
			this.options.logger,
			this.options.recover,
		);
		this.db?.close();
		this.db = db;
		this.baseSum = sum;
		this.base = identity(this.options.file)!;
		this.baseSeq = readMetaNumber(db, 'journal_seq');
		if (this.baseSeq > this.lastSeq) {
			// Another process's checkpoint holds writes this one had not applied.
			this.outsideSeq = this.baseSeq;
		}
		this.lastSeq = this.baseSeq;
		this.closeJournal();
		this.readJournal(true);
	}

	/** Applies what other processes wrote since this one last looked. */
	private catchUp(underLock: boolean): void {
		if (this.isStale()) {
			// Another process checkpointed: its base holds everything, and the journal we read is gone.
			this.lock.withLock(() => this.load());
			return;
		}
		this.readJournal(underLock);
	}

	private isStale(): boolean {
		const base = identity(this.options.file);
		if (base === undefined) {
			const damage = readDamage(this.options.file);
			if (damage) {
				throw damagedError(damage, this.options.recover);
			}
			throw new DeskError('store.corrupt', `${this.options.file} has disappeared while open.`, {
				file: this.options.file,
			});
		}
		if (base.ino !== this.base.ino || base.size !== this.base.size || base.mtimeMs !== this.base.mtimeMs) {
			return true;
		}
		if (this.journal === undefined) {
			return false;
		}
		const journal = identity(this.journalFile);
		return (
			journal === undefined ||
			journal.ino !== this.journal.ino ||
			fs.fstatSync(this.journal.fd).size < this.journal.offset
		);
	}

	private readJournal(underLock: boolean): void {
		if (this.journal === undefined) {
			if (!fs.existsSync(this.journalFile)) {
				if (!underLock) {
					return; // Nothing was written since the last checkpoint; a writer will create it.
				}
				writeFileDurably(this.journalFile, journalMagic);
			}
			if (!underLock) {
				// Opening a journal pairs it with the base we hold: only under the lock, where no
				// checkpoint can replace both in between.
				this.lock.withLock(() => this.load());
				return;
			}
			this.openJournal(0);
		}
		const journal = this.journal!;
		const size = fs.fstatSync(journal.fd).size;
		if (size === journal.offset) {
			return;
		}
		const start = journal.offset;
		const bytes = Buffer.alloc(size - start);
		fs.readSync(journal.fd, bytes, 0, bytes.length, start);
		const scan = scanJournal(bytes, start);
		for (const record of scan.records) {
			this.apply(record);
		}
		journal.offset = scan.validBytes;
		if (scan.damage === undefined || !underLock) {
			// Without the lock a torn tail may be a write in progress: read it next time.
			return;
		}
		// Holding the lock, nobody is appending: what follows the valid prefix was left by a writer
		// that died mid-append (never acknowledged), or is damage. Damage with acknowledged records
		// after it sets the store aside (nothing is dropped without the person's word); damage at the
		// end (a torn append, or the last record damaged) is kept aside, reported and cut off.
		const following = recordsAfterDamage(bytes, scan.validBytes - start);
		if (following > 0) {
			this.closeJournal();
			const error = setAside(
				this.options.file,
				`its journal is damaged at byte ${scan.validBytes} (${scan.damage}) and ${following} acknowledged record${following === 1 ? '' : 's'} follow the damage`,
				this.options.recover,
				new Date(),
				scan.validBytes,
			);
			this.options.logger.error(error.message);
			throw error;
		}
		if (scan.damage !== 'torn-tail') {
			const kept = `${this.journalFile}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
			fs.copyFileSync(this.journalFile, kept);
			this.options.logger.error(
				`${this.journalFile}: ${scan.damage} at byte ${scan.validBytes}; the journal was copied to ${kept} and applied up to that point`,
			);
		}
		if (scan.validBytes === 0) {
			fs.writeSync(journal.fd, journalMagic, 0, journalMagic.length, 0);
			journal.offset = journalMagic.length;
		}
		fs.ftruncateSync(journal.fd, journal.offset);
		fs.fsyncSync(journal.fd);
	}

	private apply(record: JournalRecord): void {
		if (record.seq <= this.lastSeq) {
			return; // Already in the base file.
		}
		if (record.seq !== this.lastSeq + 1) {
			throw new DeskError(
				'store.journalCorrupt',
				`${this.journalFile}: record ${record.seq} follows ${this.lastSeq}; a record is missing.`,
				{
					file: this.journalFile,
					seq: record.seq,
					expected: this.lastSeq + 1,
				},
			);
		}
		this.db.exec('BEGIN');
		try {
			for (const [sql, params] of record.statements) {
				this.db.run(sql, params);
			}
			this.db.exec('COMMIT');
		} catch (error) {
			this.db.exec('ROLLBACK');
			throw new DeskError(
				'store.journalCorrupt',
				`${this.journalFile}: record ${record.seq} does not apply: ${(error as Error).message}`,
				{
					file: this.journalFile,
					seq: record.seq,
				},
			);
		}
		// Only records read from the journal are applied here: this process's own writes never are.
		this.lastSeq = record.seq;
		this.outsideSeq = record.seq;
	}

	private openJournal(offset: number): void {
		this.closeJournal();
		const fd = fs.openSync(this.journalFile, fs.constants.O_RDWR | fs.constants.O_NOFOLLOW);
		this.journal = { fd, ino: fs.fstatSync(fd).ino, offset };
	}

	private closeJournal(): void {
		if (this.journal) {
			fs.closeSync(this.journal.fd);
			this.journal = undefined;
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
				tx.run(
					"INSERT INTO desk_meta(key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
					[String(migration.version)],
				);
			});
			this.options.logger.debug(`${path.basename(this.options.file)}: schema migrated to version ${migration.version}`);
		}
	}

	private scheduleCheckpoint(): void {
		this.clearIdleTimer();
		const delay = this.journalBytes > this.options.journalLimitBytes ? 0 : this.options.idleCheckpointMs;
		this.idleTimer = setTimeout(() => this.checkpointQuietly(), delay);
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

function identity(file: string): FileIdentity | undefined {
	try {
		const stat = fs.statSync(file);
		return { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
	} catch {
		return undefined;
	}
}

/**
 * The base file as a database: created when neither it nor a journal exists; checked otherwise.
 * A store marked damaged is refused before anything is read; damage found now is set aside and
 * marked (`damage.ts`).
 *
 * The check: a base whose size and CRC-32 are one `<db>.checked` accepts is the exact export a
 * checkpoint wrote, so only its schema name is read (every `desk` command opens the library); a base
 * that matches none was changed by something other than the desk and is damage, even when SQLite
 * would read it (a byte overwritten inside a record passes `PRAGMA integrity_check`). Without a
 * sidecar (a store from before it, or a lost file) SQLite's full check runs and its bytes are
 * recorded.
 */
function openBase(SQL: SqlJsStatic, file: string, schema: string, logger: Logger, hint: RecoverHint): LoadedBase {
	const damage = readDamage(file);
	if (damage) {
		throw damagedError(damage, hint);
	}
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
			const error = setAside(file, 'the file is missing but its journal is there', hint);
			logger.error(error.message);
			throw error;
		}
		// A new database gets its base file at once, so that a journal never exists without one.
		const db = new SQL.Database();
		db.run('CREATE TABLE desk_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)');
		db.run(
			"INSERT INTO desk_meta(key, value) VALUES ('schema', ?), ('schema_version', '0'), ('journal_seq', '0'), ('tracking_since', ?)",
			[schema, String(Date.now())],
		);
		const created = db.export();
		const sum = baseSum(created);
		writeSidecar(file, [sum]);
		writeFileDurably(file, created);
		db.exec(pragmas);
		return { db, sum };
	}
	const sum = baseSum(bytes);
	const verdict = verifySidecar(file, bytes);
	const checked =
		verdict === 'mismatch'
			? `its bytes are not those the desk last wrote (${describeSum(sum)}; the desk wrote ${readSidecar(file)!.accepted.map(describeSum).join(' or ')})`
			: checkBase(SQL, bytes, schema, verdict === 'match');
	if (typeof checked === 'string') {
		const error = setAside(file, checked, hint);
		logger.error(error.message);
		throw error;
	}
	checked.exec(pragmas);
	if (verdict !== 'match') {
		if (verdict === 'none') {
			logger.warn(
				`${file}: no checksum was recorded for it; SQLite's full check passed and its checksum is recorded now`,
			);
		}
		writeSidecar(file, [sum]);
	}
	return { db: checked, sum };
}

function checkBase(SQL: SqlJsStatic, bytes: Buffer, schema: string, knownGood: boolean): Database | string {
	if (bytes.length === 0) {
		// sql.js opens an empty file as an empty database; ours always hold a schema.
		return 'the file is empty';
	}
	let db: Database | undefined;
	try {
		db = new SQL.Database(bytes);
		const result = knownGood ? [{ values: [['ok']] }] : db.exec('PRAGMA integrity_check');
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

function readMetaNumber(db: Database, key: string): number {
	const value = readMeta(db, key);
	return value === undefined ? 0 : Number(value);
}

function readMeta(db: Database, key: string): string | undefined {
	const value = db.exec('SELECT value FROM desk_meta WHERE key = ?', [key])[0]?.values[0]?.[0];
	return value === undefined || value === null ? undefined : String(value);
}
