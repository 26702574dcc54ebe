import { DeskError } from '../core/errors';
import { maxNoteTextBytes } from '../core/inputLimits';
import type { GitDirLocation } from '../git/gitDir';
import type { LibraryContext } from './libraryContext';
import type { ClientRequestKey, FolderIdentity, LibraryReads, LibraryWrites } from './ports';
import { newSkillFile, parseSkillFile, skillFileProblem } from './skill';
import type { AssetRecord, MadeBy, Manifest, ProjectRecord } from './types';
import { versionOf } from './versions';

export interface ImportDirRequest {
	dir: string;
	/** The project it joins; none leaves it in the library only. */
	project?: string;
	main: boolean;
	/** Who adopts it, for a folder's first version (a git asset's versions are commits). */
	madeBy?: MadeBy;
	/** The person allows a git folder outside what the desk adopts by itself (see git/gitDir.ts). */
	allowGitDir?: boolean;
	/** Who is recorded as the new asset's `created_by` (the call's actor); default `adopted` for a repository, `madeBy` for a folder. */
	createdBy?: string;
	/** The folder must be this one when read (one its caller checked, an agent's): another in its place is refused. */
	folderIs?: FolderIdentity;
}

export interface ImportResult {
	asset: AssetRecord;
	/** False when the library had the record already (the same checkout and remote). */
	created: boolean;
	/** The project it joined, when one was named. */
	project?: ProjectRecord;
	/** A folder adopted now: what it held that its first version does not (links, special files, …), by name. */
	skipped?: Array<{ path: string; reason: string }>;
}

export interface WorkspaceFolder {
	name: string;
	path: string;
}

export type FolderAdoption =
	| { folder: WorkspaceFolder; outcome: 'adopted'; project: ProjectRecord; asset: AssetRecord; created: boolean }
	| { folder: WorkspaceFolder; outcome: 'notARepository' }
	| { folder: WorkspaceFolder; outcome: 'failed'; error: DeskError };

/** What asset_import with new is given: the name, the empty folder to make (`dir`), the project to join. */
export interface NewAssetRequest {
	name: string;
	dir?: string;
	project?: string;
	main?: boolean;
	madeBy: MadeBy;
	/** The asset's `created_by` (the call's actor); default `madeBy`. */
	createdBy?: string;
	clientRequest?: ClientRequestKey;
	/** A skill (glossary: Kind): version 1 holds a SKILL.md naming it with this description. */
	skillDescription?: string;
}

/** What asset_link is given: the link's name and URL, and the asset it was made from (`from`). */
export interface LinkRequest {
	name: string;
	url: string;
	madeBy: MadeBy;
	project?: string;
	from?: string;
	/** The asset's `created_by` (the call's actor); default `madeBy`. */
	createdBy?: string;
	clientRequest?: ClientRequestKey;
}

/** What a note is given: its name and text, the project it joins. */
export interface NoteRequest {
	name: string;
	text: string;
	madeBy: MadeBy;
	project?: string;
	/** The asset's `created_by` (the call's actor); default `madeBy`. */
	createdBy?: string;
	clientRequest?: ClientRequestKey;
}

/**
 * How assets come into the library (glossary: Asset, Adopt, Version): repositories and folders adopted, new
 * snapshot assets, links and notes, and the projects they join (created on first use, with a main asset).
 */
export class Adoption {
	constructor(private readonly ctx: LibraryContext) {}

	/**
	 * asset_import with dir: the top of a git repository becomes a git asset (AdoptRepo, created_by
	 * `adopted`). The project is created when it does not exist; `main` makes the asset its main asset.
	 */
	async importDir(request: ImportDirRequest): Promise<ImportResult> {
		const info = await this.ctx.env.inspectPath(request.dir);
		if (info.kind !== 'directory' || info.real === undefined) {
			throw new DeskError('import.notADirectory', `${request.dir} is not a folder.`, {
				dir: request.dir,
				found: info.kind,
			});
		}
		const top = await this.ctx.git.findTop(info.real);
		if (top !== info.real) {
			// Not a repository's top: the folder becomes a snapshot asset (glossary: Adopt).
			const { asset, created, skipped } = await this.adoptFolder(
				info.real,
				request.madeBy ?? 'conductor',
				request.createdBy,
				request.folderIs,
			);
			const project = this.joinProject(asset, request.project, request.main, '');
			return { asset, created, project, ...(skipped.length > 0 ? { skipped } : {}) };
		}
		const { asset, created } = await this.adoptRepo(top, request.createdBy ?? 'adopted', {
			allowGitDir: request.allowGitDir,
		});
		return { asset, created, project: this.joinProject(asset, request.project, request.main, top) };
	}

	/**
	 * asset_import with asset: a library asset joins the project by reference, never as a copy. A
	 * repository made main gives a project without one its repository, as importing its folder does.
	 */
	importAsset(request: { id: string; project?: string; main: boolean }): ImportResult {
		const asset = this.ctx.getAsset(request.id);
		const repository = asset.engine === 'git' ? asset.working_dir : '';
		return { asset, created: false, project: this.joinProject(asset, request.project, request.main, repository) };
	}

	/**
	 * asset_import with new (glossary: Version): an empty working folder (`dir` if given, which must
	 * not exist or be empty) and at once version 1, with the note "created" and no files; for a new
	 * skill, version 1 holds its SKILL.md (name and description), so the asset is a skill from its add.
	 */
	async newAsset(request: NewAssetRequest): Promise<ImportResult> {
		const name = checkName(request.name);
		let skillText: string | undefined;
		if (request.skillDescription !== undefined) {
			const problem = skillFileProblem(name, request.skillDescription);
			if (problem !== undefined) {
				throw new DeskError('asset.badSkill', problem, { name });
			}
			skillText = newSkillFile(name, request.skillDescription);
		}
		const id = this.ctx.env.newAssetId();
		const folder = this.ctx.snapshots.prepareFolder(id, request.dir);
		let manifest = this.ctx.snapshots.putManifest({ format: 1, files: [] });
		let fileCount = 0;
		let bytes = 0;
		if (skillText !== undefined) {
			this.ctx.snapshots.writeInFolder(folder, 'SKILL.md', Buffer.from(skillText));
			const scan = await this.ctx.snapshots.scan(id, folder, { store: true });
			manifest = scan.manifestHash;
			fileCount = scan.manifest.files.length;
			bytes = scan.manifest.files.reduce((n, f) => n + f.size, 0);
		}
		const now = this.ctx.now();
		const asset: AssetRecord = {
			...blankAsset(id, name, now, request.createdBy ?? request.madeBy),
			engine: 'snapshot',
			working_dir: folder,
			picked_version: 1,
			...(skillText !== undefined ? { kind: 'skill', about: request.skillDescription!.trim() } : {}),
		};
		// The asset, its first version, its project and the answer to the client's request: one write.
		const result = this.ctx.store.batch((writes) => {
			// An empty folder may already be an asset's (made a moment ago, here or in another window).
			const owner = writes.listAssets().find((a) => a.engine === 'snapshot' && a.working_dir === folder);
			if (owner) {
				throw new DeskError(
					'asset.folderNotEmpty',
					`${folder} is the folder of ${owner.name} (${owner.id}) already; a new asset needs a folder of its own.`,
					{ folder, asset: owner.id },
				);
			}
			writes.insertAsset(asset);
			writes.insertSnapshotVersion(id, {
				version: 1,
				manifest,
				file_count: fileCount,
				bytes,
				note: 'created',
				made_at: now,
				made_by: request.madeBy,
			});
			const result: ImportResult = {
				asset,
				created: true,
				project: this.joinProjectIn(writes, asset, request.project, request.main ?? false, ''),
			};
			writes.answer(request.clientRequest, result, now);
			return result;
		});
		this.ctx.logger.info(`asset created: ${id} ${name} ${folder}`);
		return result;
	}

	/** Adopts an existing folder as a snapshot asset whose first version is what the folder holds now. */
	async adoptFolder(
		folder: string,
		madeBy: MadeBy,
		createdBy: string = madeBy,
		folderIs?: FolderIdentity,
	): Promise<{ asset: AssetRecord; created: boolean; skipped: Array<{ path: string; reason: string }> }> {
		const existing = this.ctx.store.listAssets().find((a) => a.engine === 'snapshot' && a.working_dir === folder);
		if (existing) {
			return { asset: existing, created: false, skipped: [] };
		}
		const id = this.ctx.env.newAssetId();
		const scan = await this.ctx.snapshots.scan(id, folder, { store: true, ...(folderIs ? { folderIs } : {}) });
		if (scan.skipped.length > 0) {
			this.ctx.logger.warn(
				`adopting ${folder}: ${scan.skipped.length} entr${scan.skipped.length === 1 ? 'y' : 'ies'} not stored (${scan.skipped
					.slice(0, 3)
					.map((s) => `${s.path}: ${s.reason}`)
					.join('; ')})`,
			);
		}
		const now = this.ctx.now();
		const skill = this.readSkill(scan.manifest);
		const asset: AssetRecord = {
			...blankAsset(id, this.ctx.env.baseName(folder), now, createdBy),
			engine: 'snapshot',
			kind: skill ? 'skill' : '',
			working_dir: folder,
			picked_version: 1,
		};
		if (skill?.description) {
			asset.about = skill.description;
		}
		// Another import of the folder (a second window, the CLI) may have finished while this one
		// scanned: the folder is one asset, so that one is returned.
		const raced = this.ctx.store.batch((writes) => {
			const adopted = writes.listAssets().find((a) => a.engine === 'snapshot' && a.working_dir === folder);
			if (adopted) {
				return adopted;
			}
			writes.insertAsset(asset);
			writes.insertSnapshotVersion(id, versionOf(1, scan.manifestHash, scan.manifest, 'adopted', now, madeBy));
			return undefined;
		});
		if (raced) {
			return { asset: raced, created: false, skipped: [] };
		}
		this.ctx.logger.info(`asset imported: ${id} ${asset.name} ${folder} (${madeBy})`);
		return { asset, created: true, skipped: scan.skipped };
	}

	/** asset_link: a link asset (engine none) with a URL. */
	addLink(request: LinkRequest): AssetRecord {
		const name = checkName(request.name);
		let url: URL;
		try {
			url = new URL(request.url);
		} catch {
			throw new DeskError('asset.badUrl', `${JSON.stringify(request.url)} is not a URL.`, { url: request.url });
		}
		if (!['http:', 'https:', 'file:', 'mailto:'].includes(url.protocol)) {
			throw new DeskError('asset.badUrl', `A link is http, https, file or mailto; not ${url.protocol}`, {
				url: request.url,
			});
		}
		// derived_from (glossary: Tags and about): the asset the link was made from, at its picked version then.
		const source = request.from === undefined ? undefined : this.ctx.getAsset(request.from);
		const asset: AssetRecord = {
			...blankAsset(this.ctx.env.newAssetId(), name, this.ctx.now(), request.createdBy ?? request.madeBy),
			engine: 'none',
			kind: 'link',
			url: url.toString(),
			derived_from: source?.id ?? '',
			derived_from_version: source?.picked_version ?? 0,
		};
		return this.insertJoined(asset, request.project, request.clientRequest);
	}

	/** A notes asset (engine none) holding text. */
	addNote(request: NoteRequest): AssetRecord {
		const name = checkName(request.name);
		if (request.text.length > maxNoteTextBytes) {
			throw new DeskError('asset.badName', `A note holds at most 256 KiB of text.`, { length: request.text.length });
		}
		const asset: AssetRecord = {
			...blankAsset(this.ctx.env.newAssetId(), name, this.ctx.now(), request.createdBy ?? request.madeBy),
			engine: 'none',
			kind: 'notes',
			notes: request.text,
		};
		return this.insertJoined(asset, request.project, request.clientRequest);
	}

	/**
	 * A new link or note, its project membership and the answer to the client's request, in one
	 * write; or, when the same one is there already, that one (glossary: Asset, a link or a note made
	 * twice), nothing written but the answer.
	 */
	private insertJoined(
		asset: AssetRecord,
		project: string | undefined,
		clientRequest: ClientRequestKey | undefined,
	): AssetRecord {
		return this.ctx.store.batch((writes) => {
			// Looked for inside the write: the same request from another window may have made it a moment ago.
			const made = sameLinkOrNote(writes, asset, project) ?? asset;
			if (made === asset) {
				writes.insertAsset(asset);
				this.joinProjectIn(writes, asset, project, false, '');
			}
			writes.answer(clientRequest, made, asset.created_at);
			return made;
		});
	}

	/**
	 * AdoptRepo: the git asset of a repository's top. Adopting the same checkout and remote again
	 * returns the record already there. The branch is origin/HEAD's, else main, else master, else the
	 * checked-out branch.
	 */
	async adoptRepo(
		top: string,
		createdBy: string,
		options: { trusted?: readonly string[]; allowGitDir?: boolean } = {},
	): Promise<{ asset: AssetRecord; created: boolean }> {
		// Where the git folder really is, before anything of it is read: refused when it is outside
		// what the desk adopts by itself and the person did not allow it, or moved since it was adopted.
		const { location, allowed } = await this.ctx.git.adoptGitDir(top, {
			recorded: this.ctx.store.adoptedGitDir(top),
			trusted: options.trusted ?? [top],
			allow: options.allowGitDir,
		});
		const gitDir = { gitDir: location.gitDir, allowed };
		const remote = await this.ctx.readGit(top, () => this.ctx.git.originUrl(top));
		const existing = this.ctx.store.findGitAsset(top, remote);
		if (existing) {
			this.ctx.store.batch((writes) => writes.setGitDir(existing.id, gitDir));
			return { asset: existing, created: false };
		}
		const branch = await this.ctx.readGit(top, () => this.ctx.git.defaultBranch(top));
		const asset: AssetRecord = {
			...blankAsset(this.ctx.env.newAssetId(), this.ctx.env.baseName(top), this.ctx.now(), createdBy),
			kind: 'code',
			working_dir: top,
			engine: 'git',
			remote,
			branch,
		};
		// Another writer may have adopted it between our read and this write; the store's unique
		// index on (working_dir, remote) makes the second insert fail, and then we return the first.
		return this.ctx.store.batch((writes) => {
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
		return (await this.ctx.git.adoptGitDir(top, { recorded: this.ctx.store.adoptedGitDir(top) })).location;
	}

	/**
	 * Desk boot for the window's workspace folders: a folder in a git repository is saved as the
	 * project of that repository (on first sight, the project made without a repository it was meant
	 * for, else a new one), and then registerRepoAssets adopts it.
	 */
	async openWorkspace(folders: readonly WorkspaceFolder[]): Promise<FolderAdoption[]> {
		const results: FolderAdoption[] = [];
		for (const folder of folders) {
			try {
				const info = await this.ctx.env.inspectPath(folder.path);
				const top = info.real === undefined ? undefined : await this.ctx.git.findTop(info.real);
				if (top === undefined) {
					results.push({ folder, outcome: 'notARepository' });
					continue;
				}
				// Looked up again inside the write: another window may have made the project since the read.
				const project =
					this.ctx.store.getProjectByPath(top) ??
					this.ctx.store.batch(
						(writes) => writes.getProjectByPath(top) ?? this.projectOfRepository(writes, folder.name, top),
					);
				// A linked worktree is adopted when its repository is in one of the folders opened with it.
				const trusted = (
					await Promise.all(folders.map(async (f) => (await this.ctx.env.inspectPath(f.path)).real))
				).filter((r): r is string => r !== undefined);
				const [adopted] = await this.registerRepoAssets([project], { trusted });
				if (adopted) {
					results.push({ folder, outcome: 'adopted', ...adopted });
				}
			} catch (error) {
				if (!(error instanceof DeskError)) {
					throw error;
				}
				this.ctx.logger.error(`could not adopt ${folder.path}: ${error.message}`);
				results.push({ folder, outcome: 'failed', error });
			}
		}
		return results;
	}

	/**
	 * registerRepoAssets (glossary: Adopt): adopts the repo of each given project that has a path. A new
	 * record gets created_by `desk boot: project <name>'s repo` and is logged once; the asset joins the
	 * project and becomes its main asset when it has none. The head is recorded as observed (outside).
	 */
	async registerRepoAssets(
		projects: readonly ProjectRecord[],
		options: { trusted?: readonly string[] } = {},
	): Promise<Array<{ project: ProjectRecord; asset: AssetRecord; created: boolean }>> {
		const adopted: Array<{ project: ProjectRecord; asset: AssetRecord; created: boolean }> = [];
		for (const project of projects) {
			if (project.path === '') {
				continue;
			}
			const top = await this.ctx.git.findTop(project.path);
			if (top === undefined) {
				this.ctx.logger.warn(
					`project ${project.name}: ${project.path} is not a git repository any more; nothing adopted`,
				);
				continue;
			}
			const by = `desk boot: project ${project.name}'s repo`;
			const { asset, created } = await this.adoptRepo(top, by, { trusted: [top, ...(options.trusted ?? [])] });
			if (created) {
				this.ctx.logger.info(`asset imported: ${asset.id} ${asset.name} ${asset.working_dir} (${by})`);
			}
			const head = await this.ctx.readGit(top, () => this.ctx.git.headCommit(top));
			const updated = this.ctx.store.batch((writes) => {
				writes.addProjectAsset(project.name, asset.id, this.ctx.now());
				const current = writes.getProject(project.name)!;
				if (current.main_asset === '') {
					writes.setMainAsset(project.name, asset.id);
				}
				if (head !== undefined) {
					writes.recordHead(asset.id, { commit: head, head_at: this.ctx.now(), made_by: 'outside' });
				}
				return writes.getProject(project.name)!;
			});
			adopted.push({ project: updated, asset, created });
		}
		return adopted;
	}

	private joinProject(
		asset: AssetRecord,
		projectName: string | undefined,
		main: boolean,
		path: string,
	): ProjectRecord | undefined {
		if (projectName === undefined) {
			return undefined;
		}
		return this.ctx.store.batch((writes) => this.joinProjectIn(writes, asset, projectName, main, path));
	}

	private joinProjectIn(
		writes: LibraryWrites,
		asset: AssetRecord,
		projectName: string | undefined,
		main: boolean,
		path: string,
	): ProjectRecord | undefined {
		if (projectName === undefined) {
			return undefined;
		}
		const existing = writes.getProject(projectName);
		// The repository made main is the project's when it has none yet (new, or made without one).
		const repository = main && (existing === undefined || existing.path === '') ? path : '';
		if (repository !== '') {
			this.refuseTakenRepository(writes, projectName, repository);
		}
		const project = existing ?? this.createProject(writes, projectName, repository);
		if (existing && repository !== '') {
			writes.setProjectPath(project.name, repository);
		}
		writes.addProjectAsset(project.name, asset.id, this.ctx.now());
		if (main) {
			writes.setMainAsset(project.name, asset.id);
		}
		return writes.getProject(project.name)!;
	}

	/**
	 * A repository made the main asset of a project without one (a new project, or one made without a
	 * repository) gives the project its repository: runs, the card and the editor find a project by
	 * it. A repository belongs to one project, so one another project has is refused. (A project that
	 * has a repository keeps it; Go checks that a git target is that repository.)
	 */
	private refuseTakenRepository(writes: LibraryWrites, project: string, top: string): void {
		const holder = writes.getProjectByPath(top);
		if (holder !== undefined) {
			throw new DeskError(
				'project.repositoryTaken',
				`The repository ${top} is project ${holder.name}'s; a repository belongs to one project.`,
				{ project, holder: holder.name, dir: top },
			);
		}
	}

	private readSkill(manifest: Manifest): { name: string; description: string } | undefined {
		const entry = manifest.files.find((f) => f.path === 'SKILL.md');
		return entry ? parseSkillFile(this.ctx.snapshots.readBlob(entry.hash).toString('utf8')) : undefined;
	}

	private createProject(writes: LibraryWrites, name: string, path: string): ProjectRecord {
		const project: ProjectRecord = { name, path, main_asset: '', created_at: this.ctx.now() };
		writes.insertProject(project);
		this.ctx.logger.info(`project created: ${name}${path ? ` ${path}` : ''}`);
		return project;
	}

	/**
	 * The project a repository opened in a window gets, when no project has it yet (glossary: Adopt):
	 * the project made earlier without a repository that the person meant (`desk asset import --dir
	 * FOLDER --project shop`, then the repository `shop` opened), given the repository with all it
	 * holds, its members and its main asset kept; else a new project named after the folder.
	 */
	private projectOfRepository(writes: LibraryWrites, folderName: string, top: string): ProjectRecord {
		const { meant, doubt } = projectMeantFor(writes, folderName, top);
		if (meant !== undefined) {
			writes.setProjectPath(meant.name, top);
			this.ctx.logger.info(`project ${meant.name}: made without a repository, given ${top}`);
			return writes.getProject(meant.name)!;
		}
		const name = this.freeProjectName(writes, folderName);
		if (doubt !== undefined) {
			// Which project the person meant is not clear: the repository gets a project of its own, as it always did.
			this.ctx.logger.warn(`${top}: given to no project made without a repository (${doubt}); it is project ${name}`);
		}
		return this.createProject(writes, name, top);
	}

	/** Two repositories in folders of the same name become `name` and `name-2`. */
	private freeProjectName(writes: LibraryWrites, wanted: string): string {
		let name = wanted;
		for (let n = 2; writes.getProject(name); n++) {
			name = `${wanted}-${n}`;
		}
		return name;
	}
}

/**
 * The project made without a repository that a repository opened in a folder named `folderName`
 * is (glossary: Adopt): the one whose main asset is that repository, or the one of the folder's
 * name whose main asset is no repository. None when there is no such project, or when it is not
 * clear which (`doubt` says why): two of them, or the project of that name has another repository
 * as its main asset.
 */
function projectMeantFor(
	reads: LibraryReads,
	folderName: string,
	top: string,
): { meant?: ProjectRecord; doubt?: string } {
	const repositoryOf = (project: ProjectRecord): string | undefined => {
		const main = project.main_asset === '' ? undefined : reads.getAsset(project.main_asset);
		return main?.engine === 'git' ? main.working_dir : undefined;
	};
	const withoutRepository = reads.listProjects().filter((p) => p.path === '');
	const meant = withoutRepository.filter((p) => {
		const repository = repositoryOf(p);
		return repository === top || (p.name === folderName && repository === undefined);
	});
	if (meant.length > 1) {
		return { doubt: `projects ${meant.map((p) => p.name).join(' and ')} could each be the one meant` };
	}
	const named = withoutRepository.find((p) => p.name === folderName);
	const namedRepository = named && repositoryOf(named);
	if (namedRepository !== undefined && namedRepository !== top) {
		return { doubt: `project ${folderName} has its name, but the repository ${namedRepository} as its main asset` };
	}
	return meant.length === 1 ? { meant: meant[0] } : {};
}

/**
 * The link or note a second identical request would make again (glossary: Asset): of the same kind,
 * name and URL or text, in the same project (or, for one made in no project, in none), not retired.
 * Another URL or text under the name of such a link or note is refused (`asset.nameTaken`): asked
 * for by name, the two could not be told apart.
 */
function sameLinkOrNote(
	reads: LibraryReads,
	wanted: AssetRecord,
	project: string | undefined,
): AssetRecord | undefined {
	let candidates: AssetRecord[];
	if (project === undefined) {
		const joined = new Set(reads.memberships().map((m) => m.asset_id));
		candidates = reads.listAssets().filter((a) => !joined.has(a.id));
	} else {
		candidates = reads.projectAssets(project);
	}
	const named = candidates.filter(
		(a) => !a.retired && a.engine === 'none' && a.kind === wanted.kind && a.name === wanted.name,
	);
	const same = named.find((a) => a.url === wanted.url && a.notes === wanted.notes);
	const other = named[0];
	if (same === undefined && other !== undefined) {
		const what = wanted.kind === 'link' ? 'a link' : 'a note';
		throw new DeskError(
			'asset.nameTaken',
			`${project === undefined ? 'Outside any project there is' : `Project ${project} has`} ${what} named ${JSON.stringify(wanted.name)} already (${other.id}) with another ${wanted.kind === 'link' ? 'URL' : 'text'}; give this one another name, or retire that one.`,
			{ id: other.id, name: wanted.name, kind: wanted.kind, ...(project === undefined ? {} : { project }) },
		);
	}
	return same;
}

/** An asset record with nothing said about it yet: no engine, no version picked, no folder, URL, tags or checks. */
export function blankAsset(id: string, name: string, createdAt: string, createdBy: string): AssetRecord {
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

function checkName(name: string): string {
	const trimmed = name.trim();
	if (trimmed === '' || trimmed.length > 200 || /[\u0000-\u001f\u007f]/.test(trimmed)) {
		throw new DeskError('asset.badName', `An asset name is 1 to 200 characters on one line.`, {
			name: name.slice(0, 200),
		});
	}
	return trimmed;
}
