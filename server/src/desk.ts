import * as fs from 'node:fs';
import * as path from 'node:path';
import { Library, type FolderAdoption, type WorkspaceFolder } from './assets/library';
import type { Environment } from './assets/ports';
import type { AssetRecord, ProjectRecord } from './assets/types';
import { DeskError, describeError, isDeskError } from './core/errors';
import type { Logger } from './core/logger';
import { seal, verifyChecksum, verifyIntegrity } from './ai/model';
import { judgeImport } from './ai/importRules';
import type { HistoryImportResult, PatchSet, Run } from './ai/types';
import { applyFilePatch, parseUnifiedDiff } from './runs/unifiedDiff';
import { readTargetChanges } from './runs/targetChangesRecord';
import { anchorBlob, exportHistory, historyRef, readHistory, type ExportResult } from './git/historyRef';
import { HeadWatcher } from './git/headWatcher';
import type { GitDirLocation } from './git/gitDir';
import { checkRefName } from './git/refName';
import { ProjectLaunches } from './launch/projectLaunches';
import { RunGate } from './runs/gate';
import type { CatchUpInput, DeskToolsHost, DeskToolsRequest, RunBoardHooks } from './runs/ports';
import { AttachmentStore } from './attachments/attachmentStore';
import { inProgress, RunExecutor } from './runs/runner';
import type { CarrierRequest, StartedCarrier } from './runs/carrier';
import type { CarriedBy } from './runs/types';
import { isAtGate } from './runs/runViews';
import { outboxTask } from './runs/taskOutbox';
import { branchRunSettings, type RunSettings } from './runs/settings';
import { SuggestIndex } from './launch/suggestIndex';
import type { LaunchRecord, SuggestIndexProgress } from './launch/types';
import { AiStore } from './store/aiStore';
import { RepositoryReader } from './git/repositoryReader';
import { BlobStore } from './store/blobStore';
import { recordAnswer, type ClientRequest, type RequestLedger } from './store/clientRequests';
import { DurableDatabase, type WriteTransaction } from './store/durableDatabase';
import { RetireProposals } from './store/retireProposals';
import { readDamage, type RecoverChoice, type RecoverHint, type RecoverResult } from './store/damage';
import { nodeEnvironment } from './store/nodeEnvironment';
import { libraryMigrations, librarySchema, projectMigrations, projectSchema } from './store/schemas';
import { NodeSnapshotFiles } from './store/snapshotFiles';
import { SqlLibraryStore } from './store/sqlLibraryStore';
import { SqlAttachmentRows } from './store/sqlAttachmentRows';
import { SqlLaunchStore } from './store/sqlLaunchStore';
import { NodeSuggestIndexFile } from './store/suggestIndexFile';
import { SqlRunControl } from './store/sqlRunControl';
import { faultsFrom, testFaultsVariable, type Faults } from './core/faults';
import { LineageService } from './lineage/lineage';
import { noMemoryStatus, type MemoryStatus } from './lineage/ports';
import { SqlLineage } from './store/sqlLineage';
import { BoardService } from './lineage/board';
import type { ReportNotice } from './lineage/boardPorts';
import { SqlBoardStore } from './store/sqlBoard';
import { ProjectMemory } from './store/memoryFiles';
import { SqlMemory } from './store/sqlMemory';
import { targetTip, walkFirstParents } from './git/targetWalk';
import { prepareCatchUp } from './lineage/catchUp';
import { memoryIndexSection } from './lineage/memory';
import { defaultLineageLimits, type LineageNode, type MemoryFile, type MemoryView } from './lineage/types';
import { SqlCatchUp } from './store/sqlCatchUp';
import { OutsideChangeWatcher } from './store/outsideChanges';

export interface DeskOptions {
	/** Folder of the library: its database, blobs, working folders and mounts. */
	libraryDir: string;
	logger: Logger;
	/** How long to wait for another process that holds the library. */
	lockTimeoutMs?: number;
	env?: Environment;
	/** Kill points for crash tests; by default the ones `DESK_TEST_FAULTS` names (none in production). */
	faults?: Faults;
}

/** Where the desk keeps a project's own data inside its repository. */
export const projectDataFolder = '.desk';

/** The reason an Assets view is told to look again after another process wrote the library. */
export const libraryChangedOutside = 'another process changed the library';

const libraryRecoverHint: RecoverHint = { command: 'desk store recover --library', choices: ['restore', 'empty'] };

function projectRecoverHint(top: string): RecoverHint {
	return { command: `desk store recover --repo ${JSON.stringify(top)}`, choices: ['restore', 'empty', 'rebuild'] };
}

/** What recovering a damaged store did; `rebuilt` when a project database was rebuilt from its history ref. */
export interface StoreRecovery extends RecoverResult {
	store: 'library' | 'project';
	rebuilt?: { added: number; refused: Array<{ path: string; reason: string }> };
	/** Attachment files the new database has no row for: kept, never swept (they are older than it). */
	attachmentsKept?: number;
}

/**
 * The desk: one library store, the project stores of the open repositories, and the domain services
 * over them. The JSON-RPC server and the `desk` command line are two thin faces of this one object.
 */
export class Desk {
	private readonly projectDatabases = new Map<string, DurableDatabase>();
	private readonly headWatchers = new Map<string, HeadWatcher>();
	/** Suggestion indexes of the open projects, kept between requests so updates stay incremental. */
	private readonly suggestIndexes = new Map<string, SuggestIndex>();
	/** Each project's members as last read, with the library's data version then: suggestions ask for them on every keystroke. */
	private readonly memberLists = new Map<string, { version: number; members: readonly AssetRecord[] }>();
	/** Told when the library changed behind the caller's back (a checkout's HEAD moved). */
	onLibraryChanged: ((reason: string) => void) | undefined;
	/** Told when a run's objects changed, and when a run reached the gate or failed. */
	onRunChanged: ((top: string, runId: string) => void) | undefined;
	onRunFinished: ((top: string, runId: string, status: 'gate' | 'failed') => void) | undefined;
	onAttachmentsChanged: ((top: string, taskId: string) => void) | undefined;
	/** Told when a project's lineage changed behind an operation's back (a queued branch started). */
	onLineageChanged: ((top: string, node?: string) => void) | undefined;
	/**
	 * Told of each active report delivered to a starter's board (never a note), once per report in
	 * this process: after this process delivered it, or when it sees one another process delivered
	 * (the `desk` command line landed a branch), or one left unanswered when the project opened here.
	 */
	onBoardReport: ((top: string, report: ReportNotice) => void) | undefined;
	/** Told when another process wrote a project's database (its runs, lineage or boards may have changed). */
	onProjectChangedOutside: ((top: string) => void) | undefined;
	/** The reports told through {@link onBoardReport} by this process, per project. */
	private readonly toldReports = new Map<string, Set<string>>();
	private readonly outsideWatchers = new Map<string, OutsideChangeWatcher>();
	private libraryWatcher: OutsideChangeWatcher | undefined;
	/** Told when a root's memory file changed: a batch applied here, or the file changed on disk (a `git pull`). */
	onMemoryChanged: ((top: string, root: string) => void) | undefined;
	private readonly memories = new Map<string, ProjectMemory>();
	/**
	 * Hosts the desk tools for an agent of a run of `project` (glossary: Desk tools); set by the face
	 * that opened the desk (the server, the command line), which knows the operations. Unset: runs
	 * go without them.
	 */
	deskTools: ((project: string, request: DeskToolsRequest) => Promise<DeskToolsHost> | undefined) | undefined;
	/**
	 * Resumes the memorizes landings of a project owe (glossary: Project memory), when this process
	 * first opens the project's runs; set by a face that stays (the server), which knows the
	 * operations. Unset (the command line): they wait for the next server.
	 */
	resumeMemorizes: ((top: string) => void) | undefined;
	/** Told as a project's suggestion index builds in the background (at most once a second) and when it is complete. */
	onSuggestIndexProgress: ((top: string, progress: SuggestIndexProgress) => void) | undefined;
	private readonly runners = new Map<string, { executor: RunExecutor; gate: RunGate }>();
	private readonly boards = new Map<string, BoardService<WriteTransaction>>();
	private readonly attachmentStores = new Map<string, AttachmentStore>();
	private readonly lineages = new Map<string, LineageService>();
	/**
	 * Whether this process starts queued branches when one of its runs frees the checkout: a desk
	 * that stays (the server) does; a command line that ends after its own run does not, lest a
	 * branch it started die with it (the `desk lineage` commands do, and wait for what they start).
	 */
	carriesQueuedBranches = false;
	/**
	 * A project's memory files as the Roots view counts them (glossary: Project memory); set by the
	 * memory part of the desk. Unset, every root says it has no memory file.
	 */
	memoryStatus: ((top: string) => MemoryStatus) | undefined = (top) => {
		const db = this.projectDatabases.get(top);
		return db ? { of: (root) => this.memoryIn(top, db).status(root) } : noMemoryStatus;
	};
	/**
	 * Starts the carrier (glossary: Carrier) of a run this desk starts, a process of its own that
	 * outlives this one, logging to `logFile`; set by a face whose process may end under a running
	 * agent (the window's server, which a reload ends; a carrier, for the branches its agent starts).
	 * Unset (the command line, which waits for the runs it starts): runs are carried out here.
	 */
	runCarrier: ((request: CarrierRequest, logFile: string) => Promise<StartedCarrier>) | undefined;
	/** What this process is to the runs it carries out itself, recorded on each (glossary: Carrier). */
	carriedBy: CarriedBy = 'command line';
	/** Per project, the runs another process carries that this desk follows: their changes and ends are told here. */
	private readonly followed = new Map<string, Set<string>>();
	/** Each project's outside version at its last look at the runs it follows. */
	private readonly followedVersions = new Map<string, number>();
	private followTimer: NodeJS.Timeout | undefined;
	private readonly looking = new Set<string>();
	/** Runs executing in this process, so close() can wait for them to stop. */
	private readonly executing = new Set<Promise<unknown>>();
	private readonly executingRuns = new Map<string, Promise<unknown>>();
	/** Where a crash test stops this process (glossary: Lineage): nowhere unless a test asked. */
	faults: Faults = faultsFrom(process.env[testFaultsVariable], () => process.kill(process.pid, 'SIGKILL'));

	private constructor(
		readonly libraryDir: string,
		readonly library: Library,
		readonly blobs: BlobStore,
		private readonly libraryDb: DurableDatabase,
		private readonly snapshots: NodeSnapshotFiles,
		private readonly git: RepositoryReader,
		private readonly logger: Logger,
	) {}

	static async open(options: DeskOptions): Promise<Desk> {
		const libraryDir = path.resolve(options.libraryDir);
		try {
			fs.mkdirSync(libraryDir, { recursive: true });
		} catch (error) {
			const errno = (error as NodeJS.ErrnoException).code;
			if (errno === 'EEXIST' || errno === 'ENOTDIR') {
				throw new DeskError(
					'store.notAFolder',
					`The library folder ${libraryDir} is not a folder (a file is in its place or on its path).`,
					{ path: libraryDir },
				);
			}
			throw new DeskError('store.io', `The library folder ${libraryDir} cannot be made: ${(error as Error).message}`, {
				path: libraryDir,
				errno,
			});
		}
		const db = await DurableDatabase.open({
			file: path.join(libraryDir, 'library.db'),
			schema: librarySchema,
			migrations: libraryMigrations,
			logger: options.logger,
			lockTimeoutMs: options.lockTimeoutMs ?? 10_000,
			recover: libraryRecoverHint,
		});
		try {
			const blobs = new BlobStore(path.join(libraryDir, 'blobs'), { logger: options.logger });
			const snapshots = new NodeSnapshotFiles(libraryDir, blobs);
			snapshots.onMountRebuilt = (mount, difference) =>
				options.logger.warn(`mount ${mount} was changed (${difference}); laid out again from its version`);
			snapshots.onMountReused = (mount, { files, read }) =>
				options.logger.debug(`mount ${mount} reused: ${files} files, ${read} read to tell they are unchanged`);
			const store = new SqlLibraryStore(db);
			const gitReader = new RepositoryReader({
				historyCacheDir: path.join(libraryDir, 'cache', 'git-history'),
				// Every read of a repository goes to the git folder recorded when it was adopted.
				gitDirPolicy: (top) => ({ recorded: store.adoptedGitDir(top) }),
			});
			const library = new Library(store, gitReader, snapshots, options.env ?? nodeEnvironment, options.logger);
			const desk = new Desk(libraryDir, library, blobs, db, snapshots, gitReader, options.logger);
			if (options.faults) {
				desk.faults = options.faults;
			}
			return desk;
		} catch (error) {
			db.close();
			throw error;
		}
	}

	/**
	 * The person's choice for a library marked damaged (`restore` the kept copy or start `empty`; a
	 * library has nothing to rebuild from). Runs without an open desk, since a damaged library cannot
	 * open one. Fails with `store.notDamaged` or `store.cannotRecover`.
	 */
	static async recoverLibrary(libraryDir: string, choice: RecoverChoice, logger: Logger): Promise<StoreRecovery> {
		const file = path.join(path.resolve(libraryDir), 'library.db');
		if (choice === 'rebuild') {
			throw new DeskError(
				'store.cannotRecover',
				`The library ${file} cannot be rebuilt (its records are nowhere else); choose restore or empty.`,
				{ file, choice },
			);
		}
		const result = await DurableDatabase.recover(
			{ file, schema: librarySchema, migrations: libraryMigrations, logger },
			choice,
		);
		logger.warn(`${file}: recovered by choice (${choice}); the damaged copy stays at ${result.keptAs ?? '(none)'}`);
		return { store: 'library', ...result };
	}

	/**
	 * The person's choice for the project database of the repository at `top`, marked damaged:
	 * `restore`, `empty`, or `rebuild` (empty, then the AI objects of refs/desk/history imported;
	 * launch cards, suggestion state and attachment records are not in the history and start empty,
	 * while the attachment files stay on disk, never swept). Fails with `store.notDamaged` or
	 * `store.cannotRecover`.
	 */
	async recoverProject(top: string, choice: RecoverChoice): Promise<StoreRecovery> {
		const file = path.join(top, projectDataFolder, 'project.db');
		if (this.projectDatabases.has(top) && !readDamage(file)) {
			throw new DeskError('store.notDamaged', `${file} is not marked damaged; there is nothing to recover.`, { file });
		}
		const result = await DurableDatabase.recover(
			{ file, schema: projectSchema, migrations: projectMigrations, logger: this.logger },
			choice === 'rebuild' ? 'empty' : choice,
		);
		this.forgetProject(top);
		const recovery: StoreRecovery = { store: 'project', ...result, choice };
		if (choice === 'rebuild') {
			const imported = await this.importHistory(top);
			recovery.rebuilt = { added: imported.added, refused: imported.refused };
		}
		const store = await this.attachments(top);
		recovery.attachmentsKept = store.unrecordedFiles();
		this.logger.warn(
			`${file}: recovered by choice (${choice}); the damaged copy stays at ${result.keptAs ?? '(none)'}`,
		);
		return recovery;
	}

	/** Drops what this process holds of a project's database, so the next use opens it again. */
	private forgetProject(top: string): void {
		const db = this.projectDatabases.get(top);
		this.projectDatabases.delete(top);
		this.attachmentStores.delete(top);
		this.runners.delete(top);
		this.lineages.delete(top);
		this.boards.delete(top);
		this.memories.get(top)?.close();
		this.memories.delete(top);
		try {
			db?.close();
		} catch (error) {
			this.logger.warn(`closing ${top}'s project database: ${describeError(error)}`);
		}
	}

	/**
	 * Desk boot for a window: adopts the repository of every workspace folder and opens each
	 * adopted project's own database under `<repo>/.desk/`.
	 */
	async openWorkspace(folders: readonly WorkspaceFolder[]): Promise<FolderAdoption[]> {
		const results = await this.library.openWorkspace(folders);
		this.watchLibraryOutside();
		for (const [index, result] of results.entries()) {
			if (result.outcome !== 'adopted') {
				continue;
			}
			await this.watchHead(result.asset.id, result.asset.working_dir);
			try {
				await this.openProjectDatabase(result.project.path, result.project.name);
				// Runs a dead process left in progress are failed now, before any view shows them.
				await this.runs(result.project.path);
				await this.lineage(result.project.path);
				// Branches a stopped desk left waiting for the checkout.
				await this.startQueuedBranches(result.project.path);
				// Memory batches a dead process queued are applied now; the folder is watched for a `git pull`.
				(await this.memory(result.project.path)).watch();
				await this.watchOutside(result.project.path);
			} catch (error) {
				if (!(error instanceof DeskError)) {
					throw error;
				}
				this.logger.error(`project ${result.project.name}: ${error.message}`);
				results[index] = { folder: result.folder, outcome: 'failed', error };
			}
		}
		return results;
	}

	/**
	 * Watches the project database of `top` for other processes' writes (a window's desk does; the
	 * command line does not stay): each tells the windows to look again and any report another
	 * process delivered. Reports already open when the project opens here are told now, so one
	 * delivered while no window was open is not missed.
	 */
	private async watchOutside(top: string): Promise<void> {
		if (this.outsideWatchers.has(top)) {
			return;
		}
		const watcher = new OutsideChangeWatcher(
			path.join(projectDataDir(top), 'project.db'),
			() => this.projectDatabases.get(top)?.outsideVersion(),
			() => {
				this.onProjectChangedOutside?.(top);
				void this.lookAtCarriedRuns(top, true);
				this.tellOpenReports(top).catch((error: unknown) =>
					this.logger.warn(`${top}: reading the reports another process delivered: ${describeError(error)}`),
				);
			},
			(error) => this.logger.warn(`${top}: not watching for other processes' changes: ${describeError(error)}`),
		);
		this.outsideWatchers.set(top, watcher);
		// Runs a window's desk handed to their carriers before a reload go on: this desk follows them.
		await this.lookAtCarriedRuns(top, true);
		await this.tellOpenReports(top).catch((error: unknown) =>
			this.logger.warn(`${top}: reading the open reports: ${describeError(error)}`),
		);
	}

	/**
	 * Watches the library database for other processes' writes (another window, the command line, a
	 * run's carrier whose agent imported, tagged or proposed through the desk tools): each tells the
	 * windows' Assets views to look again.
	 */
	private watchLibraryOutside(): void {
		if (this.libraryWatcher) {
			return;
		}
		this.libraryWatcher = new OutsideChangeWatcher(
			path.join(this.libraryDir, 'library.db'),
			() => this.libraryDb.outsideVersion(),
			() => this.onLibraryChanged?.(libraryChangedOutside),
			(error) => this.logger.warn(`not watching the library for other processes' changes: ${describeError(error)}`),
		);
	}

	/** Tells the windows each open report of `top` this process has not told yet. */
	private async tellOpenReports(top: string): Promise<void> {
		const board = await this.board(top);
		for (const notice of board.openReports()) {
			this.tellReport(top, notice);
		}
	}

	/** Tells the windows of a report, once per report in this process. */
	private tellReport(top: string, notice: ReportNotice): void {
		let told = this.toldReports.get(top);
		if (!told) {
			told = new Set();
			this.toldReports.set(top, told);
		}
		if (told.has(notice.report)) {
			return;
		}
		told.add(notice.report);
		this.onBoardReport?.(top, notice);
	}

	/**
	 * Records the head of a repository the desk has open whenever it moves (made_by outside), so
	 * versions show which commits were ever checked out.
	 */
	private async watchHead(assetId: string, top: string): Promise<void> {
		if (this.headWatchers.has(assetId)) {
			return;
		}
		let location: GitDirLocation;
		try {
			location = await this.library.gitLocation(top);
		} catch (error) {
			this.logger.warn(`not watching the head of ${top}: ${(error as Error).message}`);
			return;
		}
		if (this.headWatchers.has(assetId)) {
			return;
		}
		const watcher = new HeadWatcher(location, () => {
			this.library.observeHead(assetId, 'outside').then(
				(result) => {
					if (result.recorded) {
						this.logger.info(`${result.asset.name}: head moved to ${result.head?.slice(0, 12)} (observed, outside)`);
					}
					// A commit on the branch changes the version count even when the head was seen before.
					this.onLibraryChanged?.('head moved');
				},
				(error: unknown) => this.logger.warn(`could not read the head of ${top}: ${(error as Error).message}`),
			);
		});
		this.headWatchers.set(assetId, watcher);
	}

	/** Proposals to retire assets (glossary: Retired), in the library database. */
	get retireProposals(): RetireProposals {
		return new RetireProposals(this.libraryDb);
	}

	/** Where the answers to clients' request ids for the library's changes are kept (see store/clientRequests). */
	get libraryRequests(): RequestLedger {
		return this.libraryDb;
	}

	/** The same for a project's changes (Go, attachments). */
	async projectRequests(top: string): Promise<RequestLedger> {
		const name = this.library.listProjects().find((p) => p.path === top)?.name ?? path.basename(top);
		return this.openProjectDatabase(top, name);
	}

	/**
	 * Records the answer of a request whose effect is idempotent of itself (adopting a folder again
	 * finds the asset adopted), after the effect: a repeat then gets the first answer.
	 */
	answerLibraryRequest(request: ClientRequest | undefined, result: unknown): void {
		if (request) {
			this.libraryDb.write((tx) => recordAnswer(tx, request, result, new Date().toISOString()));
		}
	}

	/** The same for a project's change whose own writes are not one transaction with the answer (a decision). */
	async answerProjectRequest(top: string, request: ClientRequest | undefined, result: unknown): Promise<void> {
		if (request) {
			const name = this.library.listProjects().find((p) => p.path === top)?.name ?? path.basename(top);
			(await this.openProjectDatabase(top, name)).write((tx) =>
				recordAnswer(tx, request, result, new Date().toISOString()),
			);
		}
	}

	/**
	 * The project memory of the repository at `top` (glossary: Project memory): its
	 * `.desk-memory/<root>.json` files and the queue of batches. On first use in a process, temp
	 * files a killed write left are removed and batches a stopped process queued are applied.
	 */
	async memory(top: string): Promise<ProjectMemory> {
		const open = this.memories.get(top);
		if (open) {
			return open;
		}
		const project = this.projectAt(top);
		return this.memoryIn(top, await this.openProjectDatabase(top, project.name));
	}

	/** The project memory of `top` whose database `db` is open (made, drained and kept on first use). */
	private memoryIn(top: string, db: DurableDatabase): ProjectMemory {
		const open = this.memories.get(top);
		if (open) {
			return open;
		}
		const git = this.git;
		// HEAD as the desk's git reader resolves it (loose or packed refs, no git program).
		const head = () => git.repository(top).resolveRef('HEAD');
		const memory = new ProjectMemory(top, new SqlMemory(db), {
			locksFolder: path.join(projectDataDir(top), 'memory-locks'),
			logger: this.logger,
			faults: { point: (name) => this.faults.point(name) },
			changed: (root) => this.onMemoryChanged?.(top, root),
			git: {
				headFile(rel) {
					const commit = head();
					return commit === undefined ? undefined : git.repository(top).fileAt(commit, rel);
				},
				headBlobs(paths) {
					const commit = head();
					const blobs = new Map<string, string>();
					if (commit !== undefined) {
						const repo = git.repository(top);
						for (const rel of paths) {
							const entry = repo.entryAt(commit, rel);
							if (entry?.kind === 'blob') {
								blobs.set(rel, entry.oid);
							}
						}
					}
					return blobs;
				},
			},
		});
		this.memories.set(top, memory);
		memory.drainAll();
		return memory;
	}

	/** The AI objects of the project whose repository top is `top` (its database is opened on first use). */
	async projectAi(top: string): Promise<AiStore> {
		const name = this.library.listProjects().find((p) => p.path === top)?.name ?? path.basename(top);
		return new AiStore(await this.openProjectDatabase(top, name));
	}

	/**
	 * The lineage of the project whose repository top is `top` (glossary: Lineage): its roots, forks
	 * and tree. `main` is listed when it is first opened.
	 */
	async lineage(top: string): Promise<LineageService> {
		const open = this.lineages.get(top);
		if (open) {
			return open;
		}
		const name = this.library.listProjects().find((p) => p.path === top)?.name ?? path.basename(top);
		const db = await this.openProjectDatabase(top, name);
		const lineage = new LineageService(new SqlLineage(db, new AiStore(db)), {
			of: (root) => (this.memoryStatus?.(top) ?? noMemoryStatus).of(root),
		});
		lineage.listMain('agent-desk', new Date().toISOString());
		this.lineages.set(top, lineage);
		return lineage;
	}

	/** The lineage row of a Task (its tally or branch node); undefined for a Task that is neither. */
	async lineageNodeOf(top: string, task: string): Promise<LineageNode | undefined> {
		return (await this.lineage(top)).nodeOf(task);
	}

	/**
	 * Whether a Task is a branch. A conversation whose Task is no branch is the one the person drives
	 * (ultimate), as is the person themself.
	 */
	async isBranchTask(top: string, task: string): Promise<boolean> {
		return (await this.lineage(top)).isBranchTask(task);
	}

	/**
	 * Whether the run's agent is shown no `branch` tool: its Task is a branch as deep as its run's
	 * settings allow (`lineage.limits.maxDepth`), so a branch of it would be refused anyway.
	 */
	async branchToolWithheld(top: string, task: string, run: string): Promise<boolean> {
		const depth = (await this.lineage(top)).nodeOf(task)?.depth ?? 0;
		const settings = (await this.runs(top)).executor.settingsOf(run);
		return settings !== undefined && depth >= settings.lineage.limits.maxDepth;
	}

	/** The launch card and launches of the project whose repository top is `top`. */
	async launches(top: string): Promise<ProjectLaunches> {
		const project = this.projectAt(top);
		const db = await this.openProjectDatabase(top, project.name);
		let index = this.suggestIndexes.get(top);
		if (!index) {
			index = SuggestIndex.open(
				new NodeSuggestIndexFile(path.join(projectDataDir(top), 'suggest-index.json')),
				this.logger,
			);
			index.onProgress = (progress) => this.onSuggestIndexProgress?.(top, progress);
			this.suggestIndexes.set(top, index);
		}
		const launches = new ProjectLaunches(
			new SqlLaunchStore(db, new AiStore(db)),
			this.library,
			project,
			() => this.git.headCommit(top),
			index,
			() => this.projectMembers(project.name),
			this.logger,
		);
		// "Used in" of a Go whose process stopped before it recorded them.
		launches.recordPendingUses();
		return launches;
	}

	/** A project's member assets, read again only when the library changed (by this process or another). */
	private projectMembers(project: string): readonly AssetRecord[] {
		const version = this.libraryDb.dataVersion();
		const known = this.memberLists.get(project);
		if (known?.version === version) {
			return known.members;
		}
		const members = this.library.listProjectAssets(project);
		this.memberLists.set(project, { version, members });
		return members;
	}

	/** The project whose repository top is `top`; `project.notFound` when none has it. */
	projectAt(top: string): ProjectRecord {
		const project = this.library.listProjects().find((p) => p.path === top);
		if (!project) {
			throw new DeskError(
				'project.notFound',
				`No project has the repository ${top}; open it in VS Code or import it with --main first.`,
				{ dir: top },
			);
		}
		return project;
	}

	/**
	 * The runs of the project whose repository top is `top`: the executor that carries them out and
	 * the gate that decides them. On first use, runs left in progress by a process that is gone are
	 * marked failed.
	 */
	async runs(top: string): Promise<{ executor: RunExecutor; gate: RunGate }> {
		const open = this.runners.get(top);
		if (open) {
			return open;
		}
		const project = this.projectAt(top);
		const db = await this.openProjectDatabase(top, project.name);
		const lineageStore = new SqlLineage(db, new AiStore(db));
		const ports = {
			library: this.library,
			attachments: await this.attachments(top),
			attachmentsChanged: (taskId: string) => this.onAttachmentsChanged?.(top, taskId),
			blobs: this.blobs,
			ai: new AiStore(db),
			control: new SqlRunControl(db),
			project,
			libraryDir: this.libraryDir,
			logger: this.logger,
			faults: { point: (name: string) => this.faults.point(name) },
			carriedBy: this.carriedBy,
			changed: (runId: string) => this.onRunChanged?.(top, runId),
			finished: (runId: string, status: 'gate' | 'failed') => this.onRunFinished?.(top, runId, status),
			keepContext: async (content: Uint8Array) => {
				try {
					return await anchorBlob(this.git.repository(top), content);
				} catch (error) {
					this.logger.warn(`${top}: a context item was not kept in git: ${describeError(error)}`);
					return undefined;
				}
			},
			deskTools: (request: DeskToolsRequest) => this.deskTools?.(project.name, request),
			isTally: (task: string, tx?: WriteTransaction) =>
				(tx ? lineageStore.readIn(tx, (reads) => reads.node(task)) : lineageStore.read((reads) => reads.node(task)))
					?.kind === 'tally',
			checkoutFreed: () => {
				if (!this.carriesQueuedBranches) {
					return;
				}
				this.startQueuedBranches(top).catch((error: unknown) =>
					this.logger.error(`${top}: starting a queued branch: ${describeError(error)}`),
				);
			},
			board: boardHooks(await this.board(top)),
			catchUp: async (run: string, limits: { tallyTokens?: number; memoryTokens?: number }) => {
				try {
					return await this.catchUp(top, run, limits);
				} catch (error) {
					// Only a branch's inputs are caught up; any other run's prompt is as it was.
					if (isDeskError(error, 'lineage.notBranch')) {
						return undefined;
					}
					throw error;
				}
			},
		};
		const executor = new RunExecutor(ports);
		const runner = { executor, gate: new RunGate(ports, executor) };
		this.runners.set(top, runner);
		try {
			const recovered = await executor.recoverInterrupted();
			if (recovered.failed.length > 0) {
				this.logger.warn(
					`${top}: ${recovered.failed.length} run(s) left by a stopped desk marked failed` +
						(recovered.notKept.length > 0 ? `; what ${recovered.notKept.length} of them left could not be kept` : ''),
				);
			}
		} catch (error) {
			// Recovery is tried again on the next use rather than never.
			this.runners.delete(top);
			throw error;
		}
		try {
			// Then the lineage's: reports and landing notes a stopped desk did not live to deliver.
			const board = await this.board(top);
			// Reports carried by a continuation that never started are back before any is told.
			const released = board.releaseUnstarted();
			const recovered = board.recover();
			if (recovered.reports + recovered.landings > 0) {
				this.logger.info(
					`${top}: ${recovered.reports} branch report(s) and ${recovered.landings} landing note(s) a stopped desk left were delivered`,
				);
			}
			if (released > 0) {
				this.logger.warn(
					`${top}: ${released} report(s) carried by a continuation that never started are back on their board`,
				);
			}
		} catch (error) {
			this.logger.error(`${top}: the boards could not be recovered now: ${describeError(error)}`);
		}
		// Then the memorizes of landings a stopped desk did not finish, in the background.
		this.resumeMemorizes?.(top);
		return runner;
	}

	/**
	 * The boards of the project whose repository top is `top` (glossary: Lineage): branch reports,
	 * passive notes, answers, the tally's abstracts and landings.
	 */
	async board(top: string): Promise<BoardService<WriteTransaction>> {
		const open = this.boards.get(top);
		if (open) {
			return open;
		}
		const project = this.projectAt(top);
		const db = await this.openProjectDatabase(top, project.name);
		const board = new BoardService(new SqlBoardStore(db), new AiStore(db), {
			faults: this.faults,
			logger: this.logger,
			reported: (notice) => this.tellReport(top, notice),
		});
		this.boards.set(top, board);
		return board;
	}

	/**
	 * What the next input of run `run` of the project at `top` is told (glossary: Catch-up): the other
	 * branches of its root within `tallyTokens` and, on the branch's first input, its root's memory
	 * within `memoryTokens` (the defaults of the lineage's limits where absent); and `pin`, which saves
	 * the node's new baseline in the caller's transaction once the input uses it. The target is the
	 * branch the project's checkout is on, read from its ref files. `ai.notFound` when there is no such
	 * run, `lineage.notBranch` when its task is no branch.
	 */
	async catchUp(
		top: string,
		run: string,
		limits: { tallyTokens?: number; memoryTokens?: number } = {},
	): Promise<CatchUpInput> {
		const project = this.projectAt(top);
		const reads = new SqlCatchUp(await this.openProjectDatabase(top, project.name));
		const branch = reads.branchOfRun(run);
		const memoryTokens = limits.memoryTokens ?? defaultLineageLimits.memoryTokens;
		// Only a branch's first input is told its root's memory: the file is read only for that one.
		const memory = reads.started(branch.node) ? undefined : await this.memorySection(top, branch.root, memoryTokens);
		const repo = this.git.repository(top);
		const prepared = prepareCatchUp(
			{
				refs: { target: () => targetTip(repo) },
				walker: { walk: (tip, stop, limit) => walkFirstParents(repo, tip, stop, limit) },
				reads,
				memoryIndex: () => memory,
			},
			{
				node: branch.node,
				root: branch.root,
				tallyTokens: limits.tallyTokens ?? defaultLineageLimits.tallyTokens,
				memoryTokens,
			},
		);
		const save = prepared.save;
		return {
			section: prepared.section,
			pin: (tx) => {
				if (save) {
					reads.save(tx, branch.node, save.ref, save.saved, new Date().toISOString());
				}
			},
		};
	}

	/**
	 * The "Project memory" section of `root` for a branch's first input (glossary: Project memory):
	 * its index within `tokenBudget`, newest first, a memory whose cited file changed in HEAD marked
	 * "(may be stale)". Undefined when the root has no memory file. A damaged file is named instead:
	 * never read as an empty memory, and the branch still runs.
	 */
	private async memorySection(top: string, root: string, tokenBudget: number): Promise<string | undefined> {
		let view: MemoryView;
		try {
			view = await (await this.memory(top)).view(root);
		} catch (error) {
			if (isDeskError(error, 'memory.corrupt') || isDeskError(error, 'memory.unknownFormat')) {
				return `## Project memory (\`${root}\`)\n\nThe memory file .desk-memory/${root}.json cannot be read (${error.code}); it is not used until a person repairs it.`;
			}
			throw error;
		}
		if (!view.exists) {
			return undefined;
		}
		const stale = new Set(view.memories.filter((m) => m.evidence_changed.length > 0).map((m) => m.id));
		const file: MemoryFile = {
			format: 'agent-desk-memory/1',
			root,
			memories: Object.fromEntries(view.memories.map((m) => [m.id, m.memory])),
			requests: {},
		};
		return memoryIndexSection(file, { root, tokenBudget, stale: (id) => stale.has(id) });
	}

	/**
	 * The attachments of the project whose repository top is `top` (glossary: Attachment), in
	 * `<top>/.desk/attachments/`. The first use in a process sweeps files no row names that are
	 * older than ten minutes (an attach another process has stored but not recorded yet is younger)
	 * and newer than the database's tracking start (a database started after the files were written
	 * cannot vouch for their absence), and tidies the outboxes: a task's the project does not hold is
	 * removed, an ended task's emptied into the store and removed (glossary: Outbox).
	 */
	async attachments(top: string): Promise<AttachmentStore> {
		let store = this.attachmentStores.get(top);
		if (!store) {
			const name = this.library.listProjects().find((p) => p.path === top)?.name ?? path.basename(top);
			const db = await this.openProjectDatabase(top, name);
			store = new AttachmentStore(
				new SqlAttachmentRows(db),
				path.join(projectDataDir(top), 'attachments'),
				this.logger,
			);
			this.attachmentStores.set(top, store);
			try {
				store.sweep(10 * 60_000);
			} catch (error) {
				this.logger.warn(`attachments of ${name}: the sweep failed: ${(error as Error).message}`);
			}
			try {
				const ai = new AiStore(db);
				const source = { ai, control: new SqlRunControl(db), logger: this.logger };
				const tidy = store.tidyOutboxes((taskId) => outboxTask(source, taskId));
				if (tidy.removed.length + tidy.ended.length + tidy.kept.length + tidy.notVouched.length > 0) {
					this.logger.info(
						`attachments of ${name}: outboxes of ${tidy.removed.length} task(s) the project does not hold removed, of ${tidy.ended.length} ended task(s) emptied and removed, ${tidy.kept.length} kept for the next start; ${tidy.notVouched.length} of unknown tasks older than the database left alone`,
					);
				}
			} catch (error) {
				this.logger.warn(`attachments of ${name}: the outboxes could not be tidied: ${(error as Error).message}`);
			}
		}
		return store;
	}

	/**
	 * Starts carrying out a run in the background (Go, Retry): handed to a carrier of its own when
	 * this desk has `runCarrier` (glossary: Carrier), else here. The promise it returns settles when
	 * this process's part is over: the carrier holds the run, or the run carried here is at the gate
	 * or failed. Failures are the run's own outcome, recorded on it.
	 */
	async startRun(
		top: string,
		record: LaunchRecord,
		runId: string,
		settings: RunSettings,
	): Promise<{ done: Promise<unknown> }> {
		if (!this.runCarrier) {
			return this.carryRun(top, record, runId, settings);
		}
		const { executor } = await this.runs(top);
		const ai = await this.projectAi(top);
		return { done: this.tracked(runId, this.handToCarrier(top, executor, ai, record, runId, settings)) };
	}

	/**
	 * Carries a run out in this process, whatever carries this desk's other runs: what `desk run go`
	 * does, and a carrier (glossary: Carrier) with the run it was handed. Settles as `startRun`.
	 */
	async carryRun(
		top: string,
		record: LaunchRecord,
		runId: string,
		settings: RunSettings,
	): Promise<{ done: Promise<unknown> }> {
		const { executor } = await this.runs(top);
		return { done: this.tracked(runId, executor.execute(record, runId, settings)) };
	}

	/** This process's part in a run, awaited by `runEnded`, `runsEnded` and `stopRuns`; its failures logged. */
	private tracked(runId: string, part: Promise<unknown>): Promise<unknown> {
		const done = part.catch((error: unknown) => this.logger.error(`run ${runId}: ${(error as Error).message}`));
		this.executing.add(done);
		this.executingRuns.set(runId, done);
		void done.finally(() => {
			this.executing.delete(done);
			this.executingRuns.delete(runId);
		});
		return done;
	}

	/**
	 * Hands a run to a carrier of its own (glossary: Carrier) and follows it from the store; settles
	 * once the carrier holds the run's claim. A carrier that cannot be started, or ends before it
	 * took the run, leaves it to this process, which carries it out itself (a reload or closing the
	 * window then stops it, and its files in the checkout are put back: the run page says so).
	 */
	private async handToCarrier(
		top: string,
		executor: RunExecutor,
		ai: AiStore,
		record: LaunchRecord,
		runId: string,
		settings: RunSettings,
	): Promise<unknown> {
		const handed = executor.handOver(runId);
		this.follow(top, runId);
		let carrier: StartedCarrier;
		try {
			carrier = await this.runCarrier!(
				{ top, run: runId, record, settings },
				path.join(this.libraryDir, 'runs', runId, 'carrier.log'),
			);
		} catch (error) {
			// Cancelled (or failed by another process) while its carrier started: nothing to carry.
			if (ai.get<Run>(runId)?.status !== 'created') {
				handed();
				this.logger.warn(`run ${runId}: ${describeError(error)}; the run is no longer to be started`);
				return undefined;
			}
			this.logger.warn(
				`run ${runId}: ${describeError(error)}; this window's desk carries it itself, so a reload or closing the window stops it`,
			);
			handed();
			return executor.execute(record, runId, settings);
		}
		handed();
		this.logger.info(`run ${runId}: carried out by its own process ${carrier.pid}`);
		void carrier.exited.then(() => this.lookAtCarriedRuns(top, false));
		return undefined;
	}

	/** Follows `runId`, which another process carries out: its changes and its end are told here, its carrier's death recovered. */
	private follow(top: string, runId: string): void {
		let runs = this.followed.get(top);
		if (!runs) {
			runs = new Set();
			this.followed.set(top, runs);
		}
		runs.add(runId);
		if (!this.followTimer) {
			// A carrier that dies writes nothing: only a look at its process finds it gone.
			this.followTimer = setInterval(() => {
				for (const followedTop of this.followed.keys()) {
					void this.lookAtCarriedRuns(followedTop, false);
				}
			}, 1000);
			this.followTimer.unref();
		}
	}

	/**
	 * Looks at the runs of `top` other processes carry out (glossary: Carrier): each change is told
	 * (`onRunChanged`), each end (`onRunFinished`; the checkout is free for a queued branch), and a
	 * run whose carrier is gone is recovered as a crash leaves it. `discover`: runs another process
	 * started are followed from now on (at the project's open: those a window before a reload handed
	 * over; on another process's write: another window's or the command line's).
	 */
	private async lookAtCarriedRuns(top: string, discover: boolean): Promise<void> {
		if (this.looking.has(top)) {
			return;
		}
		this.looking.add(top);
		try {
			const { executor } = await this.runs(top);
			const ai = await this.projectAi(top);
			if (discover) {
				for (const runId of executor.carriedElsewhere()) {
					this.follow(top, runId);
				}
			}
			const runs = this.followed.get(top);
			if (!runs || runs.size === 0) {
				return;
			}
			const version = this.projectDatabases.get(top)?.outsideVersion();
			const moved = version !== this.followedVersions.get(top);
			this.followedVersions.set(top, version ?? 0);
			if ([...runs].some((runId) => inProgress(ai.get<Run>(runId)) && !executor.isCarried(runId))) {
				// Its carrier died (killed, out of memory): failed as a crash leaves it, the checkout put back.
				const recovered = await executor.recoverInterrupted();
				if (recovered.failed.length > 0) {
					this.logger.warn(`${top}: ${recovered.failed.length} run(s) whose carrier stopped marked failed`);
				}
			}
			for (const runId of [...runs]) {
				const run = ai.get<Run>(runId);
				// At the gate or failed, but its carrier still telling the board and keeping the agent's
				// attachments: its end is told once that part is over too.
				if (inProgress(run) || (run && executor.isCarried(runId))) {
					if (moved) {
						this.onRunChanged?.(top, runId);
					}
					continue;
				}
				runs.delete(runId);
				if (!run) {
					continue;
				}
				this.onRunChanged?.(top, runId);
				// Its carrier attached what the agent left in the outbox as the attempt ended.
				this.onAttachmentsChanged?.(top, run.task);
				if (isAtGate(run) || run.status === 'failed') {
					this.onRunFinished?.(top, runId, isAtGate(run) ? 'gate' : 'failed');
				}
				if (this.carriesQueuedBranches) {
					// Its agent is done with the checkout: a branch waiting for it may start now.
					await this.startQueuedBranches(top);
				}
			}
		} catch (error) {
			this.logger.warn(`${top}: following the runs other processes carry: ${describeError(error)}`);
		} finally {
			this.looking.delete(top);
			if (this.followTimer && [...this.followed.values()].every((runs) => runs.size === 0)) {
				clearInterval(this.followTimer);
				this.followTimer = undefined;
			}
		}
	}

	/** The commit the repository at `top` has checked out: where a new branch's run starts from. */
	async headCommit(top: string): Promise<string> {
		const head = await this.git.headCommit(top);
		if (head === undefined) {
			throw new DeskError('git.unreadable', `${top} has no commit to start a run from.`, { dir: top });
		}
		return head;
	}

	private readonly queueTurns = new Map<string, Promise<void>>();

	/**
	 * Starts the branches of `top` waiting for the checkout, oldest first, as far as it allows: a
	 * worktree branch at once, a shared one when no agent works in the checkout. Each leaves the
	 * queue in the same transaction as its run's claim, so two processes never both start it. Called
	 * after a fork, when a run of this process frees the checkout, and when a window opens the project
	 * (branches a stopped desk left waiting). One pass at a time per project in this process.
	 */
	startQueuedBranches(top: string): Promise<void> {
		const turn = (this.queueTurns.get(top) ?? Promise.resolve()).then(() => this.startQueuedOnce(top));
		const settled = turn.catch(() => undefined);
		this.queueTurns.set(top, settled);
		void settled.finally(() => {
			if (this.queueTurns.get(top) === settled) {
				this.queueTurns.delete(top);
			}
		});
		return turn;
	}

	private async startQueuedOnce(top: string): Promise<void> {
		const lineage = await this.lineage(top);
		const { executor } = await this.runs(top);
		const ai = await this.projectAi(top);
		for (const branch of lineage.queued()) {
			const run = ai.get<Run>(branch.run);
			if (run?.status !== 'created') {
				// Cancelled while it waited: it leaves the queue without starting.
				lineage.unqueue(
					branch.node,
					() => undefined,
					() => false,
				);
				this.onLineageChanged?.(top, branch.node);
				continue;
			}
			let settings: RunSettings;
			try {
				settings = branchRunSettings(branch.settings, branch.config);
			} catch (error) {
				this.logger.error(
					`branch ${branch.node}: its settings cannot be read (${describeError(error)}); it stays queued`,
				);
				continue;
			}
			const started = lineage.unqueue(
				branch.node,
				(writes) => writes.alongside((tx) => executor.claimIn(tx, settings, branch.record, branch.run)),
				(error) => isDeskError(error, 'run.checkoutBusy'),
			);
			if (started) {
				await this.startRun(top, branch.record, branch.run, settings);
				this.onLineageChanged?.(top, branch.node);
			}
		}
	}

	/** Settles once no run is carried out in this process (the command line waits for the branches it started). */
	async runsEnded(): Promise<void> {
		for (;;) {
			const pending = [...this.executing, ...this.queueTurns.values()];
			if (pending.length === 0) {
				return;
			}
			await Promise.allSettled(pending);
		}
	}

	/**
	 * Settles when this process's execution of `runId` does (at once when it carries none out): the
	 * command line, which started the run in its own process, waits for it before it ends.
	 */
	async runEnded(runId: string): Promise<void> {
		await this.executingRuns.get(runId);
	}

	/**
	 * Stops the runs this process is carrying out itself (runs handed to their carriers go on) and
	 * waits (at most a few seconds) for them to stop: each fails with the reason, its files in the
	 * shared checkout put back.
	 */
	async stopRuns(reason: string): Promise<void> {
		for (const { executor } of this.runners.values()) {
			executor.stopCarrying(reason);
		}
		await Promise.race([
			Promise.allSettled([...this.executing]),
			new Promise((resolve) => setTimeout(resolve, 5000).unref()),
		]);
	}

	/** Writes the project's AI objects, sealed, to the history ref of its repository. */
	async exportHistory(top: string, ref = historyRef): Promise<ExportResult> {
		checkRefName(ref);
		const ai = await this.projectAi(top);
		const objects = ai.all().map((o) => (verifyChecksum(o) ? o : seal(o)));
		ai.put(objects);
		return exportHistory(this.git.repository(top), objects, ref);
	}

	/**
	 * Reads a history ref into the project's database, taking only what could have happened (new
	 * objects, later states of stored ones; ai/importRules.ts). Importing twice adds nothing; every
	 * other object is refused and named with its reason, and nothing of it is stored.
	 */
	async importHistory(top: string, ref = historyRef): Promise<HistoryImportResult> {
		checkRefName(ref);
		const ai = await this.projectAi(top);
		const read = await readHistory(this.git.repository(top), ref);
		const judged = ai.importObjects((stored) => judgeImport(read.objects, stored));
		const refused = [...read.refused, ...judged.refused];
		// A crafted ref can hold any number of refusals: the log names the first few, the result all.
		for (const r of refused.slice(0, 20)) {
			this.logger.warn(`history import of ${top} refused ${r.path} (${r.code}): ${r.reason}`);
		}
		if (refused.length > 20) {
			this.logger.warn(`history import of ${top} refused ${refused.length - 20} more objects`);
		}
		return { added: judged.added, unchanged: judged.unchanged.length, refused };
	}

	/**
	 * The files a PatchSet changes, before and after: from the commit its decision made when there is
	 * one, else its stored diff (a unified diff in the blob store, checked against its hash) applied
	 * to the baseline commit. Read by the desk's git reader; nothing the repository configures runs.
	 */
	async patchSetFiles(
		top: string,
		patchsetId: string,
	): Promise<{
		source: 'commit' | 'artifact';
		files: Array<{ path: string; before: Uint8Array | null; after: Uint8Array | null }>;
	}> {
		const ai = await this.projectAi(top);
		const patchset = ai.require<PatchSet>(patchsetId, 'patchset');
		const read = async (commit: string, filepath: string): Promise<Uint8Array | null> => {
			if (filepath === '') {
				return null;
			}
			try {
				return (await this.git.readFile(top, commit, filepath)) ?? null;
			} catch (error) {
				// A tree the runner wrote but no commit holds may have been pruned by gc since. The file
				// is not known to be absent then: showing it so would be a wrong diff.
				if (isDeskError(error, 'git.missingObject')) {
					throw new DeskError(
						'git.missingObject',
						`${filepath} of PatchSet ${patchsetId} cannot be shown: ${commit} or an object under it is no longer in the repository (git gc prunes trees no commit holds).`,
						{ ...error.data, patchset: patchsetId, tree: commit, path: filepath },
						{ cause: error },
					);
				}
				throw error;
			}
		};
		const targetChanges = patchset.tags['desk.target_changes'];
		if (targetChanges) {
			// A snapshot target's change: every file before and after is in the blob store.
			const changes = readTargetChanges(this.blobs.get(targetChanges), targetChanges);
			return {
				source: 'artifact',
				files: changes.files.map((f) => ({
					path: f.path,
					before: f.before ? this.blobs.get(f.before) : null,
					after: f.after ? this.blobs.get(f.after) : null,
				})),
			};
		}
		const fromTree = patchset.tags['desk.from_tree'];
		const toTree = patchset.tags['desk.tree'];
		const decision = ai.runDecision(patchset.run);
		if (fromTree && toTree && !(decision?.chosen_patchset_id === patchset.object_id && decision.result_commit_sha)) {
			// A run's attempt: the trees of the work folder before and after are in the repository.
			const files = [];
			for (const touched of patchset.touched) {
				files.push({
					path: touched.path,
					before: await read(fromTree, touched.path),
					after: await read(toTree, touched.path),
				});
			}
			return { source: 'artifact', files };
		}
		const result = decision?.chosen_patchset_id === patchset.object_id ? decision.result_commit_sha : undefined;
		if (result && result !== patchset.commit) {
			const files = [];
			for (const touched of patchset.touched) {
				files.push({
					path: touched.path,
					before: await read(patchset.commit, touched.path),
					after: await read(result, touched.path),
				});
			}
			return { source: 'commit', files };
		}
		const diff = this.storedDiff(patchset, 'neither a commit nor a stored diff');
		const files = [];
		for (const filePatch of parseUnifiedDiff(diff.toString('utf8'))) {
			const before = await read(patchset.commit, filePatch.from);
			const after =
				filePatch.to === ''
					? null
					: Buffer.from(applyFilePatch(before === null ? '' : Buffer.from(before).toString('utf8'), filePatch), 'utf8');
			files.push({ path: filePatch.to || filePatch.from, before, after });
		}
		return { source: 'artifact', files };
	}

	/**
	 * A run's PatchSet as the unified diff it stored (glossary: PatchSet): a snapshot target's
	 * `target_diff`, a git target's diff of its trees. `patchsetId` names one of the run's; default
	 * its latest, the one the gate shows. Fails with `ai.notFound` for a run the project does not
	 * hold, `run.noPatch` for one without that PatchSet (none: the agent changed no file).
	 */
	async patchSetDiff(top: string, runId: string, patchsetId?: string): Promise<{ patchset: PatchSet; diff: Buffer }> {
		const ai = await this.projectAi(top);
		const patchsets = ai.runPatchSets(ai.require<Run>(runId, 'run'));
		const patchset = patchsetId === undefined ? patchsets.at(-1) : patchsets.find((p) => p.object_id === patchsetId);
		if (!patchset) {
			throw new DeskError(
				'run.noPatch',
				patchsetId === undefined
					? `Run ${runId} has no PatchSet: its agent changed no file.`
					: `PatchSet ${patchsetId} is not one of run ${runId}'s.`,
				{ run: runId, ...(patchsetId === undefined ? {} : { patchset: patchsetId }) },
			);
		}
		return { patchset, diff: this.storedDiff(patchset, 'no stored diff') };
	}

	/** The unified diff a PatchSet stored in the blob store, checked against its recorded hash. */
	private storedDiff(patchset: PatchSet, missing: string): Buffer {
		const artifact = patchset.artifact;
		if (!artifact?.hash || !this.blobs.has(artifact.hash)) {
			throw new DeskError('ai.badObject', `This PatchSet has ${missing} to show.`, {
				patchset: patchset.object_id,
			});
		}
		const diff = this.blobs.get(artifact.hash);
		if (!verifyIntegrity(artifact, diff)) {
			throw new DeskError(
				'blob.corrupt',
				`The diff of PatchSet ${patchset.object_id} does not match its recorded hash.`,
				{ patchset: patchset.object_id },
			);
		}
		return diff;
	}

	/**
	 * Moves the small loose blobs of a library upgraded from blob layout 1 into packs, a slice at a
	 * time a little after start and between requests (the desk server calls this; `desk store pack`
	 * does it at once), so a large old library shrinks on disk without holding the server up.
	 */
	packLooseBlobsWhenIdle(startAfterMs = 10_000, sliceFiles = 2_000): void {
		if (!this.blobs.looseToPack || this.packingTimer) {
			return;
		}
		const slice = () => {
			this.packingTimer = undefined;
			try {
				const result = this.blobs.packLoose({ maxFiles: sliceFiles });
				if (result && result.corrupt.length > 0) {
					this.logger.warn(
						`blobs not packed because their bytes do not match their names: ${result.corrupt.slice(0, 5).join(', ')}${result.corrupt.length > 5 ? ` and ${result.corrupt.length - 5} more` : ''}`,
					);
				}
				if (result?.done) {
					this.logger.info('the blob store is packed');
					return;
				}
			} catch (error) {
				this.logger.warn(`packing loose blobs stopped: ${describeError(error)}`);
				return;
			}
			// Another process holding the pack lock (undefined) or more to do: next slice a little later.
			this.packingTimer = setTimeout(slice, 200).unref();
		};
		this.packingTimer = setTimeout(slice, startAfterMs).unref();
	}

	private packingTimer: NodeJS.Timeout | undefined;

	close(): void {
		clearTimeout(this.packingTimer);
		this.packingTimer = undefined;
		clearInterval(this.followTimer);
		this.followTimer = undefined;
		this.followed.clear();
		this.libraryWatcher?.close();
		this.libraryWatcher = undefined;
		for (const watcher of [...this.headWatchers.values(), ...this.outsideWatchers.values()]) {
			watcher.close();
		}
		this.headWatchers.clear();
		this.outsideWatchers.clear();
		for (const memory of this.memories.values()) {
			memory.close();
		}
		this.memories.clear();
		for (const index of this.suggestIndexes.values()) {
			index.flush();
		}
		this.snapshots.close();
		this.git.close();
		this.blobs.close();
		for (const db of this.projectDatabases.values()) {
			db.close();
		}
		this.projectDatabases.clear();
		this.libraryDb.close();
	}

	private async openProjectDatabase(top: string, projectName: string): Promise<DurableDatabase> {
		const open = this.projectDatabases.get(top);
		if (open) {
			return open;
		}
		const folder = projectDataDir(top);
		const ignore = path.join(folder, '.gitignore');
		if (!fs.existsSync(ignore)) {
			// Everything in .desk/ is machine-local state; project memory lives in .desk-memory/ instead.
			fs.writeFileSync(ignore, '# Agent Desk: local state of this repository, never committed.\n*\n');
		}
		const db = await DurableDatabase.open({
			file: path.join(folder, 'project.db'),
			schema: projectSchema,
			migrations: projectMigrations,
			logger: this.logger,
			// Another window with this repository open holds it; say so soon rather than hang the boot.
			lockTimeoutMs: 2_000,
			recover: projectRecoverHint(top),
		});
		db.write((tx) => {
			tx.run(
				"INSERT INTO project_info (key, value) VALUES ('project', ?), ('library', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value <> excluded.value",
				[projectName, this.libraryDir],
			);
		});
		this.projectDatabases.set(top, db);
		return db;
	}
}

/** The runs' board hooks over a project's boards. */
function boardHooks(board: BoardService<WriteTransaction>): RunBoardHooks {
	return {
		nodeEnded: (progress) => board.nodeEnded(progress),
		runFinished: (runId) => board.runFinished(runId),
		landed: (runId, facts) => board.landed(runId, facts),
		decided: (runId) => board.decided(runId),
	};
}

/** What the desk keeps in a project's data folder by name: each must be what it says. No entry is ever a link. */
const dataEntries: ReadonlyArray<[string, 'file' | 'folder']> = [
	['.gitignore', 'file'],
	['project.db', 'file'],
	['suggest-index.json', 'file'],
	['attachments', 'folder'],
	['memory-locks', 'folder'],
];

/**
 * `<top>/.desk`, made when missing. A repository can commit a link or a file there (or under it):
 * followed, the desk would write its database and attachments wherever the link leads. Such an
 * entry is refused with `project.unsafeDataFolder` naming it; nothing is followed or removed.
 */
export function projectDataDir(top: string): string {
	const folder = path.join(top, projectDataFolder);
	const unsafe = (entry: string, found: string) =>
		new DeskError(
			'project.unsafeDataFolder',
			`${entry} is ${found}, not the desk's own ${entry === folder ? 'folder' : 'entry'}; the desk does not follow it. Remove it (the repository may have planted it) and try again.`,
			{
				path: entry,
				found,
			},
		);
	const kindOf = (stat: fs.Stats) =>
		stat.isSymbolicLink() ? 'a link' : stat.isDirectory() ? 'a folder' : stat.isFile() ? 'a file' : 'a special file';
	let stat: fs.Stats | undefined;
	try {
		stat = fs.lstatSync(folder);
	} catch {
		stat = undefined;
	}
	if (stat === undefined) {
		try {
			fs.mkdirSync(folder, { mode: 0o700 });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
				throw error;
			}
		}
		stat = fs.lstatSync(folder);
	}
	if (!stat.isDirectory()) {
		throw unsafe(folder, kindOf(stat));
	}
	// Every entry: the database's lock, journal and markers sit beside it under names of their own.
	for (const name of fs.readdirSync(folder)) {
		const entry = path.join(folder, name);
		let inner: fs.Stats;
		try {
			inner = fs.lstatSync(entry);
		} catch {
			continue;
		}
		const kind = dataEntries.find(([known]) => known === name)?.[1];
		if (
			inner.isSymbolicLink() ||
			(!inner.isFile() && !inner.isDirectory()) ||
			(kind === 'file' && !inner.isFile()) ||
			(kind === 'folder' && !inner.isDirectory())
		) {
			throw unsafe(entry, kindOf(inner));
		}
	}
	return folder;
}
