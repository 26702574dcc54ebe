import type { Logger } from '../core/logger';
import type { SearchHit } from '../search/librarySearch';
import {
	Adoption,
	type ImportDirRequest,
	type LinkRequest,
	type NewAssetRequest,
	type NoteRequest,
	type WorkspaceFolder,
} from './adoption';
import { LibraryContext } from './libraryContext';
import { AssetMetadata, type LaunchedPlug } from './metadata';
import { Mounts } from './mounts';
import type { ClientRequestKey, Environment, FolderIdentity, GitReader, LibraryStore, SnapshotFiles } from './ports';
import { SearchText, type FolderWalk } from './searchText';
import type { AssetRecord, BranchRewrite, MadeBy, ProjectRecord } from './types';
import { Versions, type SnapshotOptions, type VersionRange } from './versions';

export type { FolderAdoption, ImportDirRequest, ImportResult, WorkspaceFolder } from './adoption';

/**
 * The asset library (glossary: Asset): one object over the ports in ./ports, for the composition root, the
 * RPC handlers, the CLI, runs and launches. It holds no rules of its own; each call goes to the part
 * whose file says what it does:
 * - `adoption.ts`: repositories and folders adopted, new assets, links and notes, projects;
 * - `versions.ts`: snapshot and git versions, AtGo, the files, bytes and diffs of a version, heads;
 * - `metadata.ts`: tags, about, checks, retired, "used in", and the summaries the Assets view lists;
 * - `searchText.ts`: what an asset is matched on, and the library search;
 * - `mounts.ts`: snapshot versions laid out read-only;
 * - `libraryContext.ts`: the ports and the lookups they all share (an asset by id, …).
 */
export class Library {
	private readonly context: LibraryContext;
	private readonly adoption: Adoption;
	/** The versions part (named so because `versions()` is one of its methods here). */
	private readonly history: Versions;
	private readonly metadata: AssetMetadata;
	private readonly searchText: SearchText;
	private readonly mounts: Mounts;

	constructor(store: LibraryStore, git: GitReader, snapshots: SnapshotFiles, env: Environment, logger: Logger) {
		this.context = new LibraryContext(store, git, snapshots, env, logger);
		this.adoption = new Adoption(this.context);
		this.history = new Versions(this.context);
		this.metadata = new AssetMetadata(this.context, this.history);
		this.searchText = new SearchText(this.context, this.history);
		this.mounts = new Mounts(this.context);
	}

	/** Told when a git asset's branch was found rewritten (numbers after the fork changed). */
	get onHistoryRewritten(): ((rewrite: BranchRewrite) => void) | undefined {
		return this.history.onHistoryRewritten;
	}

	set onHistoryRewritten(listener: ((rewrite: BranchRewrite) => void) | undefined) {
		this.history.onHistoryRewritten = listener;
	}

	// Adoption (adoption.ts).
	importDir(request: ImportDirRequest) {
		return this.adoption.importDir(request);
	}
	importAsset(request: { id: string; project?: string; main: boolean }) {
		return this.adoption.importAsset(request);
	}
	newAsset(request: NewAssetRequest) {
		return this.adoption.newAsset(request);
	}
	adoptFolder(folder: string, madeBy: MadeBy, createdBy?: string) {
		return this.adoption.adoptFolder(folder, madeBy, createdBy);
	}
	adoptRepo(top: string, createdBy: string, options: { trusted?: readonly string[]; allowGitDir?: boolean } = {}) {
		return this.adoption.adoptRepo(top, createdBy, options);
	}
	gitLocation(top: string) {
		return this.adoption.gitLocation(top);
	}
	openWorkspace(folders: readonly WorkspaceFolder[]) {
		return this.adoption.openWorkspace(folders);
	}
	registerRepoAssets(projects: readonly ProjectRecord[], options: { trusted?: readonly string[] } = {}) {
		return this.adoption.registerRepoAssets(projects, options);
	}
	addLink(request: LinkRequest) {
		return this.adoption.addLink(request);
	}
	addNote(request: NoteRequest) {
		return this.adoption.addNote(request);
	}

	// Versions (versions.ts).
	snapshot(id: string, options: SnapshotOptions) {
		return this.history.snapshot(id, options);
	}
	putFiles(
		id: string,
		files: Array<{ path: string; bytes: Uint8Array }>,
		options: { note?: string; madeBy: MadeBy; clientRequest?: ClientRequestKey; folderIs?: FolderIdentity },
	) {
		return this.history.putFiles(id, files, options);
	}
	landRunChanges(
		id: string,
		began: number,
		changes: ReadonlyArray<{ path: string; bytes?: Uint8Array; executable?: boolean }>,
		note: string,
	) {
		return this.history.landRunChanges(id, began, changes, note);
	}
	recordRunCommit(id: string, commit: string): void {
		this.history.recordRunCommit(id, commit);
	}
	atGo(id: string, signal?: AbortSignal) {
		return this.history.atGo(id, signal);
	}
	assetVersions(id: string, signal?: AbortSignal) {
		return this.history.assetVersions(id, signal);
	}
	versionPage(id: string, range: VersionRange, signal?: AbortSignal) {
		return this.history.versionPage(id, range, signal);
	}
	versionsInPages(id: string, pageSize: number, signal?: AbortSignal) {
		return this.history.versionsInPages(id, pageSize, signal);
	}
	versions(id: string, signal?: AbortSignal) {
		return this.history.versions(id, signal);
	}
	files(id: string, version?: number) {
		return this.history.files(id, version);
	}
	folder(id: string, folderPath: string, version?: number) {
		return this.history.folder(id, folderPath, version);
	}
	cat(id: string, filePath: string, version?: number) {
		return this.history.cat(id, filePath, version);
	}
	diff(id: string, from: number, to: number) {
		return this.history.diff(id, from, to);
	}
	sync(id: string) {
		return this.history.sync(id);
	}
	observeHead(id: string, madeBy: 'sync' | 'outside' | 'run') {
		return this.history.observeHead(id, madeBy);
	}

	// Metadata and listings (metadata.ts).
	getAsset(id: string): AssetRecord {
		return this.context.getAsset(id);
	}
	setTags(id: string, tags: string[]) {
		return this.metadata.setTags(id, tags);
	}
	describe(id: string, about: string, modelWritten = false) {
		return this.metadata.describe(id, about, modelWritten);
	}
	setRetired(id: string, retired: boolean, by: string) {
		return this.metadata.setRetired(id, retired, by);
	}
	setChecks(id: string, value: unknown) {
		return this.metadata.setChecks(id, value);
	}
	recordLaunch(launchId: string, project: string, plugs: readonly LaunchedPlug[], at: string): void {
		this.metadata.recordLaunch(launchId, project, plugs, at);
	}
	usedIn(id: string) {
		return this.metadata.usedIn(id);
	}
	listProjects() {
		return this.metadata.listProjects();
	}
	allAssets() {
		return this.metadata.allAssets();
	}
	listProjectAssets(project: string) {
		return this.metadata.listProjectAssets(project);
	}
	listAssets(project?: string) {
		return this.metadata.listAssets(project);
	}
	assetSummary(id: string) {
		return this.metadata.assetSummary(id);
	}

	// Search text (searchText.ts).
	search(query: string, limit = 20): Promise<SearchHit[]> {
		return this.searchText.search(query, limit);
	}
	matchDocument(asset: AssetRecord) {
		return this.searchText.matchDocument(asset);
	}
	matchKeys(assets: readonly AssetRecord[], walk: FolderWalk = 'now') {
		return this.searchText.matchKeys(assets, walk);
	}
	skillOf(asset: AssetRecord) {
		return this.searchText.skillOf(asset);
	}

	// Mounts (mounts.ts).
	mount(id: string, n: number): string {
		return this.mounts.mount(id, n);
	}
}
