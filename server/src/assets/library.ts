import { DeskError } from '../core/errors';
import { maxNoteTextBytes } from '../core/inputLimits';
import { validateChecks } from './checks';

export { validateChecks };
import type { Logger } from '../core/logger';
import type { GitDirLocation } from '../git/gitDir';
import { diffManifests } from './manifest';
import type { ClientRequestKey, CommitHistory, Environment, GitReader, LibraryStore, LibraryWrites, SnapshotFiles } from './ports';
import { parseSkillFile } from './skill';
import { LibrarySearch, suggestAssetCap, suggestFileCap, suggestFilesPerAsset, type SearchDocument, type SearchHit } from '../search/librarySearch';
import type {
	BranchRewrite,
	AssetCheck,
	AssetRecord,
	AssetSummary,
	AssetVersion,
	AtGo,
	GitVersion,
	HeadObservation,
	MadeBy,
	Manifest,
	ProjectRecord,
	SnapshotVersion,
	UsedIn,
	VersionDiff,
	VersionFile,
} from './types';

/** `a-` and 16 hex digits (seed 000 §01). */
export const assetIdPattern = /^a-[0-9a-f]{16}$/;

export interface ImportDirRequest {
	dir: string;
	/** The project it joins; none leaves it in the library only. */
	project?: string;
	main: boolean;
	/** Who adopts it, for a folder's first version (a git asset's versions are commits). */
	madeBy?: MadeBy;
	/** The person allows a git folder outside what the desk adopts by itself (see git/gitDir.ts). */
	allowGitDir?: boolean;
}

/** At most this many tags per asset (§08). */
export const maxTags = 16;
/** `key` or `key:value`, lowercase letters, digits and hyphens (§08). */
export const tagPattern = /^[a-z0-9-]+(:[a-z0-9-]+)?$/;

export interface ImportResult {
	asset: AssetRecord;
	/** False when the library had the record already (the same checkout and remote). */
	created: boolean;
	/** The project it joined, when one was named. */
	project?: ProjectRecord;
}

export interface WorkspaceFolder {
	name: string;
	path: string;
}

export type FolderAdoption =
	| { folder: WorkspaceFolder; outcome: 'adopted'; project: ProjectRecord; asset: AssetRecord; created: boolean }
	| { folder: WorkspaceFolder; outcome: 'notARepository' }
	| { folder: WorkspaceFolder; outcome: 'failed'; error: DeskError };

/**
 * The asset library's rules (seed 000 §01, §02, §04): adopting repositories, projects and their main
 * assets, and git versions. Pure domain logic over the ports in ./ports.
 */
export class Library {
	/** Told when a git asset's branch was found rewritten (numbers after the fork changed). */
	onHistoryRewritten: ((rewrite: BranchRewrite) => void) | undefined;

	constructor(
		private readonly store: LibraryStore,
		private readonly git: GitReader,
		private readonly snapshots: SnapshotFiles,
		private readonly env: Environment,
		private readonly logger: Logger,
	) {}

	/**
	 * asset_import with dir: the top of a git repository becomes a git asset (AdoptRepo, created_by
	 * `adopted`). The project is created when it does not exist; `main` makes the asset its main asset.
	 */
	async importDir(request: ImportDirRequest): Promise<ImportResult> {
		const info = await this.env.inspectPath(request.dir);
		if (info.kind !== 'directory' || info.real === undefined) {
			throw new DeskError('import.notADirectory', `${request.dir} is not a folder.`, { dir: request.dir, found: info.kind });
		}
		const top = await this.git.findTop(info.real);
		if (top !== info.real) {
			// Not a repository's top: the folder becomes a snapshot asset (§02).
			const { asset, created } = await this.adoptFolder(info.real, request.madeBy ?? 'conductor');
			return { asset, created, project: this.joinProject(asset, request.project, request.main, '') };
		}
		const { asset, created } = await this.adoptRepo(top, 'adopted', { allowGitDir: request.allowGitDir });
		return { asset, created, project: this.joinProject(asset, request.project, request.main, top) };
	}

	/** asset_import with asset: a library asset joins the project by reference, never as a copy. */
	importAsset(request: { id: string; project?: string; main: boolean }): ImportResult {
		const asset = this.getAsset(request.id);
		return { asset, created: false, project: this.joinProject(asset, request.project, request.main, '') };
	}

	/**
	 * asset_import with new (Library.NewBy, §03): an empty working folder (`dir` if given, which must
	 * not exist or be empty) and at once version 1, with the note "created" and no files.
	 */
	async newAsset(request: { name: string; dir?: string; project?: string; main?: boolean; madeBy: MadeBy; clientRequest?: ClientRequestKey }): Promise<ImportResult> {
		const name = checkName(request.name);
		const id = this.env.newAssetId();
		const folder = this.snapshots.prepareFolder(id, request.dir);
		const empty = this.snapshots.putManifest({ format: 1, files: [] });
		const now = this.now();
		const asset: AssetRecord = { ...blankAsset(id, name, now, request.madeBy), engine: 'snapshot', working_dir: folder, picked_version: 1 };
		// The asset, its first version, its project and the answer to the client's request: one write.
		const result = this.store.batch((writes) => {
			// An empty folder may already be an asset's (made a moment ago, here or in another window).
			const owner = writes.listAssets().find((a) => a.engine === 'snapshot' && a.working_dir === folder);
			if (owner) {
				throw new DeskError('asset.folderNotEmpty', `${folder} is the folder of ${owner.name} (${owner.id}) already; a new asset needs a folder of its own.`, { folder, asset: owner.id });
			}
			writes.insertAsset(asset);
			writes.insertSnapshotVersion(id, { version: 1, manifest: empty, file_count: 0, bytes: 0, note: 'created', made_at: now, made_by: request.madeBy });
			const result: ImportResult = { asset, created: true, project: this.joinProjectIn(writes, asset, request.project, request.main ?? false, '') };
			writes.answer(request.clientRequest, result, now);
			return result;
		});
		this.logger.info(`asset created: ${id} ${name} ${folder}`);
		return result;
	}

	/** Adopts an existing folder as a snapshot asset whose first version is what the folder holds now. */
	async adoptFolder(folder: string, madeBy: MadeBy): Promise<{ asset: AssetRecord; created: boolean }> {
		const existing = this.store.listAssets().find((a) => a.engine === 'snapshot' && a.working_dir === folder);
		if (existing) {
			return { asset: existing, created: false };
		}
		const id = this.env.newAssetId();
		const scan = await this.snapshots.scan(id, folder, { store: true });
		if (scan.skipped.length > 0) {
			this.logger.warn(`adopting ${folder}: ${scan.skipped.length} entr${scan.skipped.length === 1 ? 'y' : 'ies'} not stored (${scan.skipped.slice(0, 3).map((s) => `${s.path}: ${s.reason}`).join('; ')})`);
		}
		const now = this.now();
		const skill = this.readSkill(scan.manifest);
		const asset: AssetRecord = { ...blankAsset(id, this.env.baseName(folder), now, madeBy), engine: 'snapshot', kind: skill ? 'skill' : '', working_dir: folder, picked_version: 1 };
		if (skill?.description) {
			asset.about = skill.description;
		}
		// Another import of the folder (a second window, the CLI) may have finished while this one
		// scanned: the folder is one asset, so that one is returned.
		const raced = this.store.batch((writes) => {
			const adopted = writes.listAssets().find((a) => a.engine === 'snapshot' && a.working_dir === folder);
			if (adopted) {
				return adopted;
			}
			writes.insertAsset(asset);
			writes.insertSnapshotVersion(id, versionOf(1, scan.manifestHash, scan.manifest, 'adopted', now, madeBy));
			return undefined;
		});
		if (raced) {
			return { asset: raced, created: false };
		}
		this.logger.info(`asset imported: ${id} ${asset.name} ${folder} (${madeBy})`);
		return { asset, created: true };
	}

	/** asset_snapshot: cuts the next version from the working folder when it changed (§03, §11). */
	async snapshot(
		id: string,
		options: { note?: string; madeBy: MadeBy; signal?: AbortSignal; onProgress?: (files: number) => void; clientRequest?: ClientRequestKey },
	): Promise<{ asset: AssetRecord; version: SnapshotVersion; created: boolean; skipped: Array<{ path: string; reason: string }>; lookalikes: string[][]; filesRead: number }> {
		const asset = this.writableFolderAsset(id);
		const scan = await this.snapshots.scan(asset.id, asset.working_dir, { store: true, signal: options.signal, onProgress: options.onProgress });
		const now = this.now();
		const result = this.store.batch((writes) => {
			const latest = writes.latestSnapshotVersion(asset.id);
			let cut: { version: SnapshotVersion; created: boolean };
			if (latest && latest.manifest === scan.manifestHash) {
				cut = { version: latest, created: false };
			} else {
				const version = versionOf((latest?.version ?? 0) + 1, scan.manifestHash, scan.manifest, options.note ?? '', now, options.madeBy);
				writes.insertSnapshotVersion(asset.id, version);
				writes.updateAsset(asset.id, { picked_version: version.version });
				cut = { version, created: true };
			}
			// The answer to the client's request is written with the version it names.
			writes.answer(options.clientRequest, { asset: writes.getAsset(asset.id), ...cut, skipped: scan.skipped, lookalikes: scan.lookalikes, filesRead: scan.filesRead }, now);
			return cut;
		});
		if (scan.skipped.length > 0) {
			this.logger.warn(`snapshot of ${asset.name}: ${scan.skipped.length} entr${scan.skipped.length === 1 ? 'y' : 'ies'} not stored (${scan.skipped.slice(0, 3).map((s) => `${s.path}: ${s.reason}`).join('; ')})`);
		}
		if (scan.lookalikes.length > 0) {
			this.logger.warn(`snapshot of ${asset.name}: names that differ only by case or normalisation, kept apart: ${scan.lookalikes.map((g) => g.join(' / ')).join('; ')}`);
		}
		return { asset: this.getAsset(asset.id), ...result, skipped: scan.skipped, lookalikes: scan.lookalikes, filesRead: scan.filesRead };
	}

	/**
	 * asset_version: writes files into a snapshot asset's working folder, then cuts the next version.
	 * Refuses a path outside the folder and an asset with no folder the desk may write (git, link, notes).
	 */
	async putFiles(id: string, files: Array<{ path: string; bytes: Uint8Array }>, options: { note?: string; madeBy: MadeBy; clientRequest?: ClientRequestKey }) {
		const asset = this.writableFolderAsset(id);
		for (const file of files) {
			this.snapshots.writeInFolder(asset.working_dir, file.path, file.bytes);
		}
		return this.snapshot(asset.id, options);
	}

	/**
	 * Lands a run on a snapshot target (§12): its changed files written into the asset's working
	 * folder and deleted ones removed, then the next version cut with made_by run. Refused when the
	 * asset moved on since the run began (another version, or working changes), so nothing made
	 * meanwhile is folded into the run's version.
	 */
	async landRunChanges(id: string, began: number, changes: ReadonlyArray<{ path: string; bytes?: Uint8Array; executable?: boolean }>, note: string) {
		const asset = this.writableFolderAsset(id);
		const atGo = await this.atGo(asset.id);
		if (atGo.engine !== 'snapshot' || atGo.version !== began || atGo.working_changes) {
			throw new DeskError(
				'run.targetMoved',
				`${asset.name} moved on since the run began at v${began} (${atGo.engine === 'snapshot' && atGo.working_changes ? 'its folder has working changes' : `it is at v${atGo.version} now`}); snapshot or revert that first, or retry the run.`,
				{ id: asset.id, began, now: atGo.version },
			);
		}
		for (const change of changes) {
			if (change.bytes === undefined) {
				this.snapshots.removeInFolder(asset.working_dir, change.path);
			} else {
				this.snapshots.writeInFolder(asset.working_dir, change.path, change.bytes, change.executable ?? false);
			}
		}
		return this.snapshot(asset.id, { note, madeBy: 'run' });
	}

	/** Records a commit a run made (on the checkout's branch or the run's own) as made_by run. */
	recordRunCommit(id: string, commit: string): void {
		this.store.batch((writes) => writes.recordHead(id, { commit, head_at: this.now(), made_by: 'run' }));
	}

	/** AtGo (§01): what a run would read if go were pressed now. */
	async atGo(id: string, signal?: AbortSignal): Promise<AtGo> {
		const asset = this.getAsset(id);
		if (asset.engine === 'none') {
			throw new DeskError('asset.noFiles', `${asset.name} has no files to read.`, { id });
		}
		if (asset.engine === 'git') {
			const history = await this.gitHistory(asset, signal);
			if (history.tip === undefined) {
				throw new DeskError('asset.noVersion', `${asset.name} has no commits on ${asset.branch || 'HEAD'}.`, { id });
			}
			return { engine: 'git', version: history.count, commit: history.tip, branch: asset.branch };
		}
		const picked = this.store.snapshotVersion(asset.id, asset.picked_version);
		const latest = this.store.latestSnapshotVersion(asset.id);
		if (!picked || !latest) {
			throw new DeskError('asset.noVersion', `${asset.name} has no version ${asset.picked_version}.`, { id, version: asset.picked_version });
		}
		const scan = await this.snapshots.scan(asset.id, asset.working_dir, { store: false, signal });
		if (scan.manifestHash === picked.manifest) {
			return { engine: 'snapshot', version: picked.version, working_changes: false, manifest: picked.manifest };
		}
		const diff = diffManifests(this.snapshots.readManifest(picked.manifest), scan.manifest);
		return { engine: 'snapshot', version: latest.version + 1, working_changes: true, changed: diff.added.length + diff.removed.length + diff.modified.length };
	}

	/** Versions of any engine, oldest first. */
	async assetVersions(id: string, signal?: AbortSignal): Promise<AssetVersion[]> {
		return (await this.versionPage(id, {}, signal)).versions;
	}

	/**
	 * The versions numbered `range.from` to `range.to` (inclusive, clipped to what exists), oldest
	 * first, and how many there are in all: a page of a long history for a view.
	 */
	async versionPage(id: string, range: VersionRange, signal?: AbortSignal): Promise<{ versions: AssetVersion[]; total: number }> {
		const source = await this.versionSource(id, signal);
		const { from, to } = clip(range, source.total);
		return { versions: source.page(from, to), total: source.total };
	}

	/**
	 * Every version, oldest first, `pageSize` at a time, all from one reading of the history: a
	 * listing of tens of thousands of versions is written out page by page in flat memory.
	 */
	async *versionsInPages(id: string, pageSize: number, signal?: AbortSignal): AsyncGenerator<AssetVersion[]> {
		const source = await this.versionSource(id, signal);
		for (let from = 1; from <= source.total; from += pageSize) {
			yield source.page(from, Math.min(source.total, from + pageSize - 1));
		}
	}

	private async versionSource(id: string, signal?: AbortSignal): Promise<{ total: number; page: (from: number, to: number) => AssetVersion[] }> {
		const asset = this.getAsset(id);
		if (asset.engine === 'snapshot') {
			const all = this.store.snapshotVersions(asset.id);
			return { total: all.length, page: (from, to) => all.slice(from - 1, to).map((v): AssetVersion => ({ engine: 'snapshot', ...v })) };
		}
		if (asset.engine !== 'git') {
			return { total: 0, page: () => [] };
		}
		const history = await this.gitHistory(asset, signal);
		const observations = this.store.headObservations(asset.id);
		return { total: history.count, page: (from, to) => numberVersions(history, observations, from, to) };
	}

	/** The files of a version (default: the picked version of a snapshot asset, the tip of a git asset). */
	async files(id: string, version?: number): Promise<{ version: number; files: VersionFile[] }> {
		const asset = this.getAsset(id);
		if (asset.engine === 'none') {
			throw new DeskError('asset.noFiles', `${asset.name} has no files to read.`, { id });
		}
		if (asset.engine === 'snapshot') {
			const n = version ?? asset.picked_version;
			const manifest = this.snapshots.readManifest(this.snapshotVersionOf(asset, n).manifest);
			return { version: n, files: manifest.files.map((f) => ({ path: f.path, size: f.size, hash: f.hash, executable: f.executable })) };
		}
		const { n, commit } = await this.gitVersionOf(asset, version);
		const tree = await this.readGit(asset.working_dir, () => this.git.treeFiles(asset.working_dir, commit));
		return { version: n, files: tree.map((entry) => gitFile(entry)) };
	}

	/**
	 * One folder of a version ('' is the top): its subfolders' names and its files, so that a view
	 * of a version of tens of thousands of files reads only what is opened. `asset.fileNotFound`
	 * when the version has no such folder.
	 */
	async folder(id: string, folderPath: string, version?: number): Promise<{ version: number; folders: string[]; files: VersionFile[] }> {
		const asset = this.getAsset(id);
		if (asset.engine === 'none') {
			throw new DeskError('asset.noFiles', `${asset.name} has no files to read.`, { id });
		}
		const folder = folderPath.replace(/^\/+|\/+$/g, '');
		const notFound = () => new DeskError('asset.fileNotFound', `${folder || 'The top folder'} is not a folder of that version of ${asset.name}.`, { id, path: folder, version });
		if (asset.engine === 'git') {
			const { n, commit } = await this.gitVersionOf(asset, version);
			const listed = await this.readGit(asset.working_dir, () => this.git.listFolder(asset.working_dir, commit, folder));
			if (!listed) {
				throw notFound();
			}
			return { version: n, folders: listed.folders, files: listed.files.map((f) => gitFile(f)) };
		}
		const { version: n, files } = await this.files(id, version);
		const prefix = folder === '' ? '' : `${folder}/`;
		const folders = new Set<string>();
		const inFolder: VersionFile[] = [];
		for (const file of files) {
			if (!file.path.startsWith(prefix)) {
				continue;
			}
			const rest = file.path.slice(prefix.length);
			const slash = rest.indexOf('/');
			if (slash < 0) {
				inFolder.push(file);
			} else {
				folders.add(rest.slice(0, slash));
			}
		}
		if (folder !== '' && folders.size === 0 && inFolder.length === 0) {
			throw notFound();
		}
		return { version: n, folders: [...folders], files: inFolder };
	}

	/** The bytes of one file of a version. */
	async cat(id: string, filePath: string, version?: number): Promise<Uint8Array> {
		const asset = this.getAsset(id);
		const notFound = () => new DeskError('asset.fileNotFound', `${filePath} is not in that version of ${asset.name}.`, { id, path: filePath, version });
		if (asset.engine === 'git') {
			// One path down the trees, not the whole file list of the version.
			const { commit } = await this.gitVersionOf(asset, version);
			const bytes = await this.readGit(asset.working_dir, () => this.git.readFile(asset.working_dir, commit, filePath));
			if (!bytes) {
				throw notFound();
			}
			return bytes;
		}
		const file = (await this.files(id, version)).files.find((f) => f.path === filePath);
		if (!file) {
			throw notFound();
		}
		return this.snapshots.readBlob(file.hash);
	}

	/** What changed between two versions, by file. */
	async diff(id: string, from: number, to: number): Promise<VersionDiff> {
		const asset = this.getAsset(id);
		if (asset.engine === 'git') {
			// Trees compared by id: subtrees that did not change are never read.
			const a = await this.gitVersionOf(asset, from);
			const b = await this.gitVersionOf(asset, to);
			const changes = await this.readGit(asset.working_dir, () => this.git.diffCommits(asset.working_dir, a.commit, b.commit));
			const diff: VersionDiff = { from, to, added: [], removed: [], modified: [] };
			for (const change of changes) {
				if (change.before && change.after) {
					diff.modified.push({ before: gitFile(change.before), after: gitFile(change.after) });
				} else if (change.after) {
					diff.added.push(gitFile(change.after));
				} else if (change.before) {
					diff.removed.push(gitFile(change.before));
				}
			}
			return diff;
		}
		const a = await this.files(id, from);
		const b = await this.files(id, to);
		const toManifest = (files: VersionFile[]): Manifest => ({ format: 1, files: files.map((f) => ({ path: f.path, hash: f.hash, size: Math.max(f.size, 0), executable: f.executable })) });
		const diff = diffManifests(toManifest(a.files), toManifest(b.files));
		const byPath = (files: VersionFile[]) => new Map(files.map((f) => [f.path, f]));
		const before = byPath(a.files);
		const after = byPath(b.files);
		return {
			from,
			to,
			added: diff.added.map((f) => after.get(f.path)!),
			removed: diff.removed.map((f) => before.get(f.path)!),
			modified: diff.modified.map((m) => ({ before: before.get(m.before.path)!, after: after.get(m.after.path)! })),
		};
	}

	/** Lays version `n` of a snapshot asset out read-only under the library's mounts and returns its path (§11). */
	mount(id: string, n: number): string {
		const asset = this.getAsset(id);
		if (asset.engine !== 'snapshot') {
			throw new DeskError('asset.noFolder', `${asset.name} is a ${asset.engine === 'git' ? 'git' : 'link or notes'} asset; only snapshot versions are mounted.`, { id });
		}
		const version = this.snapshotVersionOf(asset, n);
		return this.snapshots.mount(asset.id, n, this.snapshots.readManifest(version.manifest));
	}

	/** asset_tags (§08): replaces the tags; at most 16, each `key` or `key:value` of lowercase letters, digits and hyphens. */
	setTags(id: string, tags: string[]): AssetRecord {
		const asset = this.getAsset(id);
		const unique = [...new Set(tags)];
		const bad = unique.filter((t) => !tagPattern.test(t));
		if (bad.length > 0) {
			throw new DeskError('asset.badTag', `Not a tag: ${bad.map((t) => JSON.stringify(t)).join(', ')}. A tag is key or key:value in lowercase letters, digits and hyphens.`, { tags: bad });
		}
		if (unique.length > maxTags) {
			throw new DeskError('asset.badTag', `${unique.length} tags; an asset has at most ${maxTags}.`, { count: unique.length, limit: maxTags });
		}
		this.store.batch((writes) => writes.updateAsset(asset.id, { tags: unique }));
		return this.getAsset(asset.id);
	}

	/** asset_describe (§08): the one-line about. */
	describe(id: string, about: string, modelWritten = false): AssetRecord {
		const asset = this.getAsset(id);
		const line = about.replace(/\s+/g, ' ').trim();
		if (line.length > 500) {
			throw new DeskError('asset.badName', `An about is one line of at most 500 characters (this one has ${line.length}).`, { length: line.length });
		}
		this.store.batch((writes) => writes.updateAsset(asset.id, { about: line, about_model_written: modelWritten }));
		return this.getAsset(asset.id);
	}

	/** asset_link: a link asset (engine none) with a URL. */
	addLink(request: { name: string; url: string; madeBy: MadeBy; project?: string; from?: string; clientRequest?: ClientRequestKey }): AssetRecord {
		const name = checkName(request.name);
		let url: URL;
		try {
			url = new URL(request.url);
		} catch {
			throw new DeskError('asset.badUrl', `${JSON.stringify(request.url)} is not a URL.`, { url: request.url });
		}
		if (!['http:', 'https:', 'file:', 'mailto:'].includes(url.protocol)) {
			throw new DeskError('asset.badUrl', `A link is http, https, file or mailto; not ${url.protocol}`, { url: request.url });
		}
		// derived_from (§08): the asset the link was made from, at its picked version then.
		const source = request.from === undefined ? undefined : this.getAsset(request.from);
		const asset: AssetRecord = {
			...blankAsset(this.env.newAssetId(), name, this.now(), request.madeBy),
			engine: 'none',
			kind: 'link',
			url: url.toString(),
			derived_from: source?.id ?? '',
			derived_from_version: source?.picked_version ?? 0,
		};
		this.insertJoined(asset, request.project, request.clientRequest);
		return asset;
	}

	/** A notes asset (engine none) holding text. */
	addNote(request: { name: string; text: string; madeBy: MadeBy; project?: string; clientRequest?: ClientRequestKey }): AssetRecord {
		const name = checkName(request.name);
		if (request.text.length > maxNoteTextBytes) {
			throw new DeskError('asset.badName', `A note holds at most 256 KiB of text.`, { length: request.text.length });
		}
		const asset: AssetRecord = { ...blankAsset(this.env.newAssetId(), name, this.now(), request.madeBy), engine: 'none', kind: 'notes', notes: request.text };
		this.insertJoined(asset, request.project, request.clientRequest);
		return asset;
	}

	/** A new asset, its project membership and the answer to the client's request, in one write. */
	private insertJoined(asset: AssetRecord, project: string | undefined, clientRequest: ClientRequestKey | undefined): void {
		this.store.batch((writes) => {
			writes.insertAsset(asset);
			this.joinProjectIn(writes, asset, project, false, '');
			writes.answer(clientRequest, asset, asset.created_at);
		});
	}

	/** Retire / unretire (§10): out of the lists and suggestions, never deleted. */
	setRetired(id: string, retired: boolean): AssetRecord {
		const asset = this.getAsset(id);
		this.store.batch((writes) => writes.updateAsset(asset.id, { retired }));
		return this.getAsset(asset.id);
	}

	/** asset checks (§09): stored and validated; runs enforce them. */
	setChecks(id: string, value: unknown): AssetRecord {
		const asset = this.getAsset(id);
		const checks = validateChecks(value);
		this.store.batch((writes) => writes.updateAsset(asset.id, { checks }));
		return this.getAsset(asset.id);
	}

	/** Records the plugs of a launch for "used in" (§13), all of them in one transaction. */
	recordLaunch(launchId: string, project: string, plugs: ReadonlyArray<{ id: string; role: string; version: number }>, at: string): void {
		this.store.batch((writes) => {
			for (const plug of plugs) {
				writes.insertLaunchPlug({ launch_id: launchId, project, asset_id: plug.id, role: plug.role, version: plug.version, launched_at: at });
			}
		});
	}

	/** "Used in" (§13): the launch records that plugged the asset, with role and frozen version. */
	usedIn(id: string): UsedIn[] {
		return this.store.usedIn(this.getAsset(id).id);
	}

	/**
	 * asset_search (§05): BM25 over the whole library (retired assets left out), each asset matched on
	 * its name, its about and the text of its files at the version go would freeze.
	 */
	async search(query: string, limit = 20): Promise<SearchHit[]> {
		const documents: SearchDocument[] = [];
		for (const asset of this.store.listAssets()) {
			if (!asset.retired) {
				documents.push(await this.matchDocument(asset));
			}
		}
		return new LibrarySearch(documents).search(query, { limit });
	}

	/**
	 * What an asset is matched on (§05): its name, its about and its text files at the version go
	 * would freeze; a skill only by its name and its SKILL.md description, never its body.
	 * `at: 'version'` reads a snapshot asset's picked version, not its working folder: the suggestion
	 * index follows versions (a Go snapshots working changes first anyway).
	 */
	async matchDocument(asset: AssetRecord, at: 'atGo' | 'version' = 'atGo'): Promise<SearchDocument> {
		if (asset.kind === 'skill') {
			const skill = await this.skillOf(asset);
			return { id: asset.id, name: asset.name, about: skill?.description ?? '', text: '' };
		}
		return { id: asset.id, name: asset.name, about: asset.about, text: await this.searchText(asset, at) };
	}

	/**
	 * Cheap keys of what matchDocument(asset, 'version') reads: a key changes when its asset gets a
	 * new version, is described, renamed or retired. One database read for all of them, no file read.
	 */
	async matchKeys(assets: readonly AssetRecord[]): Promise<Map<string, string>> {
		const manifests = this.store.pickedManifests();
		const keys = new Map<string, string>();
		for (const asset of assets) {
			let source = '';
			if (asset.engine === 'snapshot') {
				source = `${asset.picked_version}:${manifests.get(asset.id) ?? ''}`;
			} else if (asset.engine === 'git') {
				source = (await this.git.branchTip(asset.working_dir, asset.branch).catch(() => undefined)) ?? '';
			} else {
				source = `${asset.notes.length}:${asset.notes.slice(0, 64)}:${asset.notes.slice(-64)}`;
			}
			keys.set(asset.id, [asset.name, asset.about, asset.kind, asset.retired ? 'retired' : '', source].join('\u0000'));
		}
		return keys;
	}

	/** The SKILL.md front matter of an asset at the version go would freeze, when it is valid (§07). */
	async skillOf(asset: AssetRecord): Promise<{ name: string; description: string } | undefined> {
		if (asset.engine === 'none') {
			return undefined;
		}
		try {
			const atGo = await this.atGo(asset.id);
			const bytes =
				atGo.engine === 'snapshot' && atGo.working_changes
					? this.snapshots.readWorkingFile(asset.working_dir, 'SKILL.md', suggestFileCap)
					: await this.cat(asset.id, 'SKILL.md', atGo.version);
			return bytes ? parseSkillFile(Buffer.from(bytes).toString('utf8')) : undefined;
		} catch {
			return undefined;
		}
	}

	/** The text of an asset's files that it is matched on, within the caps of §05. */
	private async searchText(asset: AssetRecord, at: 'atGo' | 'version' = 'atGo'): Promise<string> {
		if (asset.engine === 'none') {
			return asset.notes.slice(0, suggestAssetCap);
		}
		let atGo: AtGo;
		try {
			if (at === 'version' && asset.engine === 'snapshot') {
				const version = this.snapshotVersionOf(asset, asset.picked_version);
				atGo = { engine: 'snapshot', version: version.version, working_changes: false, manifest: version.manifest };
			} else {
				atGo = await this.atGo(asset.id);
			}
		} catch {
			return '';
		}
		const texts: string[] = [];
		let total = 0;
		const take = (bytes: Uint8Array | undefined) => {
			if (!bytes || total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
				return;
			}
			const head = Buffer.from(bytes).subarray(0, Math.min(suggestFileCap, suggestAssetCap - total));
			if (head.subarray(0, 8000).includes(0)) {
				return; // Not text.
			}
			texts.push(head.toString('utf8'));
			total += head.length;
		};
		if (atGo.engine === 'git') {
			for (const file of await this.readGit(asset.working_dir, () => this.git.treeFiles(asset.working_dir, atGo.commit))) {
				if (total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
					break;
				}
				take(await this.git.readBlob(asset.working_dir, file.oid).catch(() => undefined));
			}
		} else if (atGo.working_changes) {
			const scan = await this.snapshots.scan(asset.id, asset.working_dir, { store: false });
			for (const file of scan.manifest.files) {
				if (total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
					break;
				}
				take(this.snapshots.readWorkingFile(asset.working_dir, file.path, suggestFileCap));
			}
		} else {
			for (const file of this.snapshots.readManifest(atGo.manifest).files) {
				if (total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
					break;
				}
				take(this.snapshots.readBlob(file.hash));
			}
		}
		return texts.join('\n');
	}

	/** Sync of a git asset: records the checkout's head with made_by sync (§04). */
	async sync(id: string): Promise<{ asset: AssetRecord; head?: string; recorded: boolean }> {
		return this.observeHead(id, 'sync');
	}

	/**
	 * Records the checkout's head as observed now: made_by sync on Sync, outside at desk boot and when
	 * HEAD moves while the desk runs. Only a commit's first observation is kept.
	 */
	async observeHead(id: string, madeBy: 'sync' | 'outside' | 'run'): Promise<{ asset: AssetRecord; head?: string; recorded: boolean }> {
		const asset = this.getAsset(id);
		if (asset.engine !== 'git') {
			throw new DeskError('asset.noFolder', `${asset.name} is not a git asset; sync reads a repository's head.`, { id });
		}
		const head = await this.readGit(asset.working_dir, () => this.git.headCommit(asset.working_dir));
		if (head === undefined) {
			return { asset, recorded: false };
		}
		const recorded = this.store.batch((writes) => writes.recordHead(asset.id, { commit: head, head_at: this.now(), made_by: madeBy }));
		return { asset, head, recorded };
	}

	private joinProject(asset: AssetRecord, projectName: string | undefined, main: boolean, path: string): ProjectRecord | undefined {
		if (projectName === undefined) {
			return undefined;
		}
		return this.store.batch((writes) => this.joinProjectIn(writes, asset, projectName, main, path));
	}

	private joinProjectIn(writes: LibraryWrites, asset: AssetRecord, projectName: string | undefined, main: boolean, path: string): ProjectRecord | undefined {
		if (projectName === undefined) {
			return undefined;
		}
		const project = writes.getProject(projectName) ?? this.createProject(writes, projectName, main ? path : '');
		writes.addProjectAsset(project.name, asset.id, this.now());
		if (main) {
			writes.setMainAsset(project.name, asset.id);
		}
		return writes.getProject(project.name)!;
	}

	private writableFolderAsset(id: string): AssetRecord {
		const asset = this.getAsset(id);
		if (asset.engine !== 'snapshot') {
			throw new DeskError(
				'asset.noFolder',
				`${asset.name} has no folder the desk may write to (${asset.engine === 'git' ? 'a git asset: its versions are commits' : `a ${asset.kind || 'link or notes'} asset`}).`,
				{ id, engine: asset.engine },
			);
		}
		return asset;
	}

	private snapshotVersionOf(asset: AssetRecord, n: number): SnapshotVersion {
		const version = this.store.snapshotVersion(asset.id, n);
		if (!version) {
			throw new DeskError('asset.noVersion', `${asset.name} has no version ${n}.`, { id: asset.id, version: n });
		}
		return version;
	}

	private async gitVersionOf(asset: AssetRecord, n: number | undefined): Promise<{ n: number; commit: string }> {
		const history = await this.gitHistory(asset);
		const version = n ?? history.count;
		if (!Number.isInteger(version) || version < 1 || version > history.count) {
			throw new DeskError('asset.noVersion', `${asset.name} has no version ${n ?? 0}.`, { id: asset.id, version: n });
		}
		return { n: version, commit: history.oidAt(version - 1) };
	}

	/**
	 * The first-parent history of a git asset's branch, checked against the tip seen last time: a
	 * branch that moved forward just gains numbers; one whose old tip left the first-parent chain was
	 * rewritten, and the versions after the fork now name other commits. Observations stay with their
	 * commits (they are stored by commit), so they follow the rewrite.
	 */
	private async gitHistory(asset: AssetRecord, signal?: AbortSignal): Promise<CommitHistory> {
		const history = await this.readGit(asset.working_dir, () => this.git.firstParentHistory(asset.working_dir, asset.branch, signal));
		const tip = history.tip;
		if (tip === undefined) {
			return history;
		}
		const last = this.store.gitTip(asset.id);
		if (last && last.tip === tip && last.count === history.count) {
			return history;
		}
		if (last && !(last.count <= history.count && history.oidAt(last.count - 1) === last.tip)) {
			const old = await this.readGit(asset.working_dir, () => this.git.firstParentHistoryFrom(asset.working_dir, last.tip, signal));
			const common = old ? commonPrefix(old, history) : 0;
			const rewrite: BranchRewrite = {
				id: asset.id,
				name: asset.name,
				branch: asset.branch,
				firstChanged: common + 1,
				oldCount: last.count,
				newCount: history.count,
				oldTip: last.tip,
				newTip: tip,
			};
			this.logger.warn(
				`${asset.name}: ${asset.branch || 'HEAD'} was rewritten; versions from v${rewrite.firstChanged} on now name other commits (v${rewrite.firstChanged}–v${rewrite.oldCount} before, v${rewrite.firstChanged}–v${rewrite.newCount} now)`,
			);
			this.onHistoryRewritten?.(rewrite);
		}
		this.store.batch((writes) => writes.setGitTip(asset.id, tip, history.count, this.now()));
		return history;
	}

	private readSkill(manifest: Manifest): { name: string; description: string } | undefined {
		const entry = manifest.files.find((f) => f.path === 'SKILL.md');
		return entry ? parseSkillFile(this.snapshots.readBlob(entry.hash).toString('utf8')) : undefined;
	}

	/**
	 * AdoptRepo: the git asset of a repository's top. Adopting the same checkout and remote again
	 * returns the record already there. The branch is origin/HEAD's, else main, else master, else the
	 * checked-out branch.
	 */
	async adoptRepo(top: string, createdBy: string, options: { trusted?: readonly string[]; allowGitDir?: boolean } = {}): Promise<{ asset: AssetRecord; created: boolean }> {
		// Where the git folder really is, before anything of it is read: refused when it is outside
		// what the desk adopts by itself and the person did not allow it, or moved since it was adopted.
		const { location, allowed } = await this.git.adoptGitDir(top, { recorded: this.store.adoptedGitDir(top), trusted: options.trusted ?? [top], allow: options.allowGitDir });
		const gitDir = { gitDir: location.gitDir, allowed };
		const remote = await this.readGit(top, () => this.git.originUrl(top));
		const existing = this.store.findGitAsset(top, remote);
		if (existing) {
			this.store.batch((writes) => writes.setGitDir(existing.id, gitDir));
			return { asset: existing, created: false };
		}
		const branch = await this.readGit(top, () => this.git.defaultBranch(top));
		const asset: AssetRecord = { ...blankAsset(this.env.newAssetId(), this.env.baseName(top), this.now(), createdBy), kind: 'code', working_dir: top, engine: 'git', remote, branch };
		// Another writer may have adopted it between our read and this write; the store's unique
		// index on (working_dir, remote) makes the second insert fail, and then we return the first.
		return this.store.batch((writes) => {
			const raced = writes.findGitAsset(top, remote);
			if (raced) {
				return { asset: raced, created: false };
			}
			writes.insertAsset(asset);
			writes.setGitDir(asset.id, gitDir);
			return { asset, created: true };
		});
	}

	/**
	 * Where the git folder of a repository the library adopted is, to run git on it explicitly
	 * (`--git-dir`): the recorded one, refused with `git.gitDirChanged` when `.git` names another now.
	 */
	async gitLocation(top: string): Promise<GitDirLocation> {
		return (await this.git.adoptGitDir(top, { recorded: this.store.adoptedGitDir(top) })).location;
	}

	/**
	 * Desk boot for the window's workspace folders: a folder in a git repository is saved as the
	 * project of that repository (created on first sight), and then registerRepoAssets adopts it.
	 */
	async openWorkspace(folders: readonly WorkspaceFolder[]): Promise<FolderAdoption[]> {
		const results: FolderAdoption[] = [];
		for (const folder of folders) {
			try {
				const info = await this.env.inspectPath(folder.path);
				const top = info.real === undefined ? undefined : await this.git.findTop(info.real);
				if (top === undefined) {
					results.push({ folder, outcome: 'notARepository' });
					continue;
				}
				// Looked up again inside the write: another window may have made the project since the read.
				const project =
					this.store.getProjectByPath(top) ?? this.store.batch((writes) => writes.getProjectByPath(top) ?? this.createProject(writes, this.freeProjectName(writes, folder.name), top));
				// A linked worktree is adopted when its repository is in one of the folders opened with it.
				const trusted = (await Promise.all(folders.map(async (f) => (await this.env.inspectPath(f.path)).real))).filter((r): r is string => r !== undefined);
				const [adopted] = await this.registerRepoAssets([project], { trusted });
				if (adopted) {
					results.push({ folder, outcome: 'adopted', ...adopted });
				}
			} catch (error) {
				if (!(error instanceof DeskError)) {
					throw error;
				}
				this.logger.error(`could not adopt ${folder.path}: ${error.message}`);
				results.push({ folder, outcome: 'failed', error });
			}
		}
		return results;
	}

	/**
	 * registerRepoAssets (seed 000 §02): adopts the repo of each given project that has a path. A new
	 * record gets created_by `desk boot: project <name>'s repo` and is logged once; the asset joins the
	 * project and becomes its main asset when it has none. The head is recorded as observed (outside).
	 */
	async registerRepoAssets(projects: readonly ProjectRecord[], options: { trusted?: readonly string[] } = {}): Promise<Array<{ project: ProjectRecord; asset: AssetRecord; created: boolean }>> {
		const adopted: Array<{ project: ProjectRecord; asset: AssetRecord; created: boolean }> = [];
		for (const project of projects) {
			if (project.path === '') {
				continue;
			}
			const top = await this.git.findTop(project.path);
			if (top === undefined) {
				this.logger.warn(`project ${project.name}: ${project.path} is not a git repository any more; nothing adopted`);
				continue;
			}
			const by = `desk boot: project ${project.name}'s repo`;
			const { asset, created } = await this.adoptRepo(top, by, { trusted: [top, ...(options.trusted ?? [])] });
			if (created) {
				this.logger.info(`asset imported: ${asset.id} ${asset.name} ${asset.working_dir} (${by})`);
			}
			const head = await this.readGit(top, () => this.git.headCommit(top));
			const updated = this.store.batch((writes) => {
				writes.addProjectAsset(project.name, asset.id, this.now());
				const current = writes.getProject(project.name)!;
				if (current.main_asset === '') {
					writes.setMainAsset(project.name, asset.id);
				}
				if (head !== undefined) {
					writes.recordHead(asset.id, { commit: head, head_at: this.now(), made_by: 'outside' });
				}
				return writes.getProject(project.name)!;
			});
			adopted.push({ project: updated, asset, created });
		}
		return adopted;
	}

	getAsset(id: string): AssetRecord {
		if (!assetIdPattern.test(id)) {
			throw new DeskError('asset.badId', `${JSON.stringify(id)} is not an asset id (a- and 16 hex digits).`, { id });
		}
		const asset = this.store.getAsset(id);
		if (!asset) {
			throw new DeskError('asset.notFound', `No asset ${id} in the library.`, { id });
		}
		return asset;
	}

	listProjects(): ProjectRecord[] {
		return this.store.listProjects();
	}

	allAssets(): AssetRecord[] {
		return this.store.listAssets();
	}

	/** A project's member assets, in the order they joined. */
	listProjectAssets(project: string): AssetRecord[] {
		return this.store.projectAssets(project);
	}

	/**
	 * Assets with what the Assets view shows of them; limited to one project's when `project` is given.
	 * A handful of reads however many assets there are: the view asks for this on every refresh.
	 */
	async listAssets(project?: string): Promise<AssetSummary[]> {
		const projects = this.store.listProjects();
		let assets: AssetRecord[];
		if (project !== undefined) {
			if (!projects.some((p) => p.name === project)) {
				throw new DeskError('project.notFound', `No project named ${JSON.stringify(project)}.`, { project });
			}
			assets = this.store.projectAssets(project);
		} else {
			assets = this.store.listAssets();
		}
		return this.summaries(assets, projects);
	}

	/** One asset with what the Assets view shows of it. */
	async assetSummary(id: string): Promise<AssetSummary> {
		const [summary] = await this.summaries([this.getAsset(id)], this.store.listProjects());
		return summary!;
	}

	private async summaries(assets: readonly AssetRecord[], projects: readonly ProjectRecord[]): Promise<AssetSummary[]> {
		const mainOf = new Map(projects.map((p) => [p.name, p.main_asset]));
		const memberships = new Map<string, Array<{ name: string; main: boolean }>>();
		for (const { project, asset_id } of this.store.memberships()) {
			const list = memberships.get(asset_id) ?? [];
			list.push({ name: project, main: mainOf.get(project) === asset_id });
			memberships.set(asset_id, list);
		}
		const snapshotFacts = assets.some((a) => a.engine === 'snapshot') ? this.store.snapshotFacts() : new Map<string, { versions: number; files: number }>();
		const summaries: AssetSummary[] = [];
		for (const asset of assets) {
			let facts: Pick<AssetSummary, 'version_count' | 'file_count' | 'problem'> = { version_count: 0, file_count: 0 };
			if (asset.engine === 'snapshot') {
				const known = snapshotFacts.get(asset.id);
				facts = { version_count: known?.versions ?? 0, file_count: known?.files ?? 0 };
			} else if (asset.engine === 'git') {
				facts = await this.gitFacts(asset);
			}
			summaries.push({ ...asset, projects: memberships.get(asset.id) ?? [], ...facts });
		}
		return summaries;
	}

	/** Versions of an asset, oldest first (seed 000 §04 for git assets). */
	async versions(id: string, signal?: AbortSignal): Promise<GitVersion[]> {
		const asset = this.getAsset(id);
		if (asset.engine !== 'git') {
			return [];
		}
		const history = await this.gitHistory(asset, signal);
		return numberVersions(history, this.store.headObservations(asset.id));
	}

	private async gitFacts(asset: AssetRecord): Promise<Pick<AssetSummary, 'version_count' | 'file_count' | 'problem'>> {
		try {
			const history = await this.gitHistory(asset);
			return { version_count: history.count, file_count: history.tip ? await this.git.fileCount(asset.working_dir, history.tip) : 0 };
		} catch (error) {
			return { version_count: 0, file_count: 0, problem: `could not read ${asset.working_dir}: ${(error as Error).message}` };
		}
	}

	private createProject(writes: LibraryWrites, name: string, path: string): ProjectRecord {
		const project: ProjectRecord = { name, path, main_asset: '', created_at: this.now() };
		writes.insertProject(project);
		this.logger.info(`project created: ${name}${path ? ` ${path}` : ''}`);
		return project;
	}

	/** Two repositories in folders of the same name become `name` and `name-2`. */
	private freeProjectName(writes: LibraryWrites, wanted: string): string {
		let name = wanted;
		for (let n = 2; writes.getProject(name); n++) {
			name = `${wanted}-${n}`;
		}
		return name;
	}

	private async readGit<T>(top: string, read: () => Promise<T>): Promise<T> {
		try {
			return await read();
		} catch (error) {
			if (error instanceof DeskError) {
				throw error;
			}
			throw new DeskError('git.unreadable', `Could not read the git repository ${top}: ${(error as Error).message}`, { dir: top }, { cause: error });
		}
	}

	private now(): string {
		return this.env.now().toISOString();
	}
}

/** Version numbers `from` to `to`, inclusive; missing or out-of-range ends are clipped to 1..total. */
export interface VersionRange {
	from?: number;
	to?: number;
}

function clip(range: VersionRange, total: number): { from: number; to: number } {
	return { from: Math.max(1, range.from ?? 1), to: Math.min(total, range.to ?? total) };
}

/**
 * Numbers first-parent commits (oldest is v1) and attaches head observations: head_at and made_by
 * from the first observation of a commit, `outside` for one never observed, and never_head for a
 * commit between the first and last observed heads that was never observed itself. Only versions
 * `from` to `to` are made (a page of a long history).
 */
export function numberVersions(history: CommitHistory, observations: readonly HeadObservation[], from = 1, to = history.count): Array<GitVersion & { engine: 'git' }> {
	const byCommit = new Map(observations.map((o) => [o.commit, o]));
	let first = -1;
	let last = -1;
	for (const observation of observations) {
		const index = history.indexOf(observation.commit);
		if (index >= 0) {
			first = first === -1 ? index : Math.min(first, index);
			last = Math.max(last, index);
		}
	}
	const versions: Array<GitVersion & { engine: 'git' }> = [];
	for (let index = from - 1; index < to; index++) {
		const commit = history.entry(index);
		const seen = byCommit.get(commit.oid);
		const version: GitVersion & { engine: 'git' } = {
			engine: 'git',
			version: index + 1,
			commit: commit.oid,
			made_at: commit.committedAt,
			made_by: seen?.made_by ?? 'outside',
			subject: commit.subject,
		};
		if (seen) {
			version.head_at = seen.head_at;
		} else if (index > first && index < last) {
			version.never_head = true;
		}
		versions.push(version);
	}
	return versions;
}

/** How many versions two histories share from the oldest on (they share a prefix or nothing, by hash). */
function commonPrefix(a: CommitHistory, b: CommitHistory): number {
	let low = 0;
	let high = Math.min(a.count, b.count);
	// A commit on both at the same number means everything older is the same too.
	while (low < high) {
		const mid = (low + high + 1) >>> 1;
		if (a.oidAt(mid - 1) === b.oidAt(mid - 1)) {
			low = mid;
		} else {
			high = mid - 1;
		}
	}
	return low;
}

function gitFile(entry: { path: string; oid: string; executable: boolean }): VersionFile {
	return { path: entry.path, hash: entry.oid, executable: entry.executable, size: -1 };
}

function blankAsset(id: string, name: string, createdAt: string, createdBy: string): AssetRecord {
	return {
		id,
		name,
		kind: '',
		about: '',
		working_dir: '',
		engine: 'none',
		picked_version: 0,
		remote: '',
		branch: '',
		url: '',
		notes: '',
		tags: [],
		created_at: createdAt,
		created_by: createdBy,
		about_model_written: false,
		derived_from: '',
		derived_from_version: 0,
		checks: [],
		retired: false,
	};
}

function versionOf(version: number, manifestHash: string, manifest: Manifest, note: string, madeAt: string, madeBy: MadeBy): SnapshotVersion {
	return {
		version,
		manifest: manifestHash,
		file_count: manifest.files.length,
		bytes: manifest.files.reduce((sum, f) => sum + f.size, 0),
		note,
		made_at: madeAt,
		made_by: madeBy,
	};
}

function checkName(name: string): string {
	const trimmed = name.trim();
	if (trimmed === '' || trimmed.length > 200 || /[\u0000-\u001f\u007f]/.test(trimmed)) {
		throw new DeskError('asset.badName', `An asset name is 1 to 200 characters on one line.`, { name: name.slice(0, 200) });
	}
	return trimmed;
}

