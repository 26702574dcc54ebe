import { DeskError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { Environment, GitReader, LibraryStore, LibraryWrites } from './ports';
import type { AssetRecord, AssetSummary, GitVersion, HeadObservation, ProjectRecord } from './types';

/** `a-` and 16 hex digits (seed 000 §01). */
export const assetIdPattern = /^a-[0-9a-f]{16}$/;

export interface ImportDirRequest {
	dir: string;
	project: string;
	main: boolean;
}

export interface ImportResult {
	asset: AssetRecord;
	/** False when the library had the record already (the same checkout and remote). */
	created: boolean;
	project: ProjectRecord;
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
	constructor(
		private readonly store: LibraryStore,
		private readonly git: GitReader,
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
			throw new DeskError(
				'import.notRepoTop',
				top === undefined
					? `${request.dir} is not the top of a git repository, and folder assets (snapshot engine) are not available in this version yet.`
					: `${request.dir} is inside the git repository ${top} but not its top; adopt ${top} instead.`,
				{ dir: request.dir, ...(top ? { top } : {}) },
			);
		}
		const { asset, created } = await this.adoptRepo(top, 'adopted');
		const project = this.store.batch((writes) => {
			const project = writes.getProject(request.project) ?? this.createProject(writes, request.project, request.main ? top : '');
			writes.addProjectAsset(project.name, asset.id, this.now());
			if (request.main) {
				writes.setMainAsset(project.name, asset.id);
			}
			return writes.getProject(project.name)!;
		});
		return { asset, created, project };
	}

	/**
	 * AdoptRepo: the git asset of a repository's top. Adopting the same checkout and remote again
	 * returns the record already there. The branch is origin/HEAD's, else main, else master, else the
	 * checked-out branch.
	 */
	async adoptRepo(top: string, createdBy: string): Promise<{ asset: AssetRecord; created: boolean }> {
		const remote = await this.readGit(top, () => this.git.originUrl(top));
		const existing = this.store.findGitAsset(top, remote);
		if (existing) {
			return { asset: existing, created: false };
		}
		const branch = await this.readGit(top, () => this.git.defaultBranch(top));
		const asset: AssetRecord = {
			id: this.env.newAssetId(),
			name: this.env.baseName(top),
			kind: 'code',
			about: '',
			working_dir: top,
			engine: 'git',
			picked_version: 0,
			remote,
			branch,
			url: '',
			notes: '',
			tags: [],
			created_at: this.now(),
			created_by: createdBy,
		};
		// Another writer may have adopted it between our read and this write; the store's unique
		// index on (working_dir, remote) makes the second insert fail, and then we return the first.
		return this.store.batch((writes) => {
			const raced = writes.findGitAsset(top, remote);
			if (raced) {
				return { asset: raced, created: false };
			}
			writes.insertAsset(asset);
			return { asset, created: true };
		});
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
				const project =
					this.store.getProjectByPath(top) ?? this.store.batch((writes) => this.createProject(writes, this.freeProjectName(writes, folder.name), top));
				const [adopted] = await this.registerRepoAssets([project]);
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
	async registerRepoAssets(projects: readonly ProjectRecord[]): Promise<Array<{ project: ProjectRecord; asset: AssetRecord; created: boolean }>> {
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
			const { asset, created } = await this.adoptRepo(top, by);
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

	/** Assets with what the Assets view shows of them; limited to one project's when `project` is given. */
	async listAssets(project?: string): Promise<AssetSummary[]> {
		const projects = this.store.listProjects();
		let assets: AssetRecord[];
		if (project !== undefined) {
			const record = projects.find((p) => p.name === project);
			if (!record) {
				throw new DeskError('project.notFound', `No project named ${JSON.stringify(project)}.`, { project });
			}
			assets = this.store.projectAssetIds(project).map((id) => this.store.getAsset(id)).filter((a): a is AssetRecord => a !== undefined);
		} else {
			assets = this.store.listAssets();
		}
		const memberships = new Map<string, Array<{ name: string; main: boolean }>>();
		for (const p of projects) {
			for (const id of this.store.projectAssetIds(p.name)) {
				const list = memberships.get(id) ?? [];
				list.push({ name: p.name, main: p.main_asset === id });
				memberships.set(id, list);
			}
		}
		const summaries: AssetSummary[] = [];
		for (const asset of assets) {
			summaries.push({ ...asset, projects: memberships.get(asset.id) ?? [], ...(await this.versionFacts(asset)) });
		}
		return summaries;
	}

	/** Versions of an asset, oldest first (seed 000 §04 for git assets). */
	async versions(id: string, signal?: AbortSignal): Promise<GitVersion[]> {
		const asset = this.getAsset(id);
		if (asset.engine !== 'git') {
			return [];
		}
		const history = await this.readGit(asset.working_dir, () => this.git.firstParentHistory(asset.working_dir, asset.branch, signal));
		return numberVersions(history, this.store.headObservations(asset.id));
	}

	private async versionFacts(asset: AssetRecord): Promise<Pick<AssetSummary, 'version_count' | 'file_count' | 'problem'>> {
		if (asset.engine !== 'git') {
			return { version_count: 0, file_count: 0 };
		}
		try {
			const history = await this.git.firstParentHistory(asset.working_dir, asset.branch);
			const tip = history[history.length - 1];
			return { version_count: history.length, file_count: tip ? await this.git.fileCount(asset.working_dir, tip.oid) : 0 };
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

/**
 * Numbers first-parent commits (oldest is v1) and attaches head observations: head_at and made_by
 * from the first observation of a commit, `outside` for one never observed, and never_head for a
 * commit between the first and last observed heads that was never observed itself.
 */
export function numberVersions(history: ReadonlyArray<{ oid: string; committedAt: string; subject: string }>, observations: readonly HeadObservation[]): GitVersion[] {
	const byCommit = new Map(observations.map((o) => [o.commit, o]));
	let first = -1;
	let last = -1;
	history.forEach((commit, index) => {
		if (byCommit.has(commit.oid)) {
			first = first === -1 ? index : first;
			last = index;
		}
	});
	return history.map((commit, index) => {
		const seen = byCommit.get(commit.oid);
		const version: GitVersion = {
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
		return version;
	});
}
