/** The asset library's operations (glossary: Asset). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { ImportResult, Library } from '../assets/library';
import type { FolderIdentity } from '../assets/ports';
import type { AssetRecord, AtGo, MadeBy } from '../assets/types';
import { DeskError, describeError, isDeskError } from '../core/errors';
import { integer, object } from '../protocol/schema';
import { maxBlobBytes } from '../core/inputLimits';
import {
	AddLink,
	AddNote,
	assetIdSchema,
	DescribeAsset,
	DiffVersions,
	GetAtGo,
	ImportAsset,
	ListAssets,
	ListFiles,
	ListFolder,
	ListVersions,
	ReadFile,
	SetChecks,
	SetRetired,
	SyncAsset,
	UsedInLaunches,
	importAssetParams,
	PutVersion,
	putVersionParams,
	SearchLibrary,
	SetTags,
	SnapshotAsset,
	toolPath,
} from '../protocol/protocol';
import { answerOnce, clientRequest, markReplayed, type ClientRequest } from '../store/clientRequests';
import { withFileAt, type OpenedFile } from '../store/confinedDir';
import { actorLabel, madeByOf, writesForModel, type Actor } from './actor';
import { operation, type Operation, type OperationCall, type RunningCall } from './operation';
import { folderInRun, placeInRun, withFileInRun, type RunPathUse } from './runPaths';

/**
 * The project an agent's call may touch: its run's. A person may name any project, or none (the
 * whole library); an agent naming another project is refused.
 */
export function projectOfCall(call: OperationCall, named: string | undefined): string | undefined {
	if (call.actor.kind !== 'agent') {
		return named;
	}
	if (named !== undefined && named !== call.actor.project) {
		throw new DeskError('operation.outsideRun', `A run may touch only its own project (${call.actor.project}).`, {
			project: named,
		});
	}
	return call.actor.project;
}

/** Refuses an agent's call on an asset that is not one of its run's project. */
export async function assertAssetOfCall(call: OperationCall, id: string): Promise<void> {
	const project = projectOfCall(call, undefined);
	if (project === undefined) {
		return;
	}
	const assets = await call.desk.library.listAssets(project);
	if (!assets.some((a) => a.id === id)) {
		throw new DeskError('operation.outsideRun', `Asset ${id} is not one of project ${project}'s assets.`, {
			id,
			project,
		});
	}
}

/**
 * The path a call names, as its operation uses it. At the command line (and through `desk mcp`) a
 * relative one is read against the folder it was started in; from the editor it must be absolute (a
 * relative one would resolve against the server's folder: `desk.relativePath`). An agent's is
 * resolved against its work folder and confined to its run's folders (runPaths.ts: inside its work
 * folder or outbox, not in a hidden folder, for `write` not in a read-only one, no link on the way:
 * `operation.outsideRun`). A path that does not exist yet (a new asset's folder) is judged by the
 * folders above it that do; one that does is returned with which folder it is, for the library to
 * refuse another in its place when it reads it (swapped for a link after the check).
 */
export async function folderOfCall(
	call: OperationCall,
	named: string,
	field: string,
	use: RunPathUse,
): Promise<{ path: string; folder?: FolderIdentity }> {
	if (call.actor.kind !== 'agent') {
		return { path: personPath(call, named, field) };
	}
	return folderInRun(placeInRun(call.actor, named, field, use));
}

function personPath(call: OperationCall, named: string, field: string): string {
	if (call.actor.kind === 'cli' && call.actor.cwd !== undefined) {
		return path.resolve(call.actor.cwd, named);
	}
	if (!path.isAbsolute(named)) {
		throw new DeskError(
			'desk.relativePath',
			`${field} must be an absolute path; a relative one would resolve against the server's working folder`,
			{ field },
		);
	}
	return named;
}

/**
 * The opener of the file a call names to read from: an agent's is confined to its run's folders and
 * opened from there one component at a time, never through a link nor a hard link (runPaths.ts), so
 * what is read is what was checked; a person's is opened by its path.
 */
export async function fileOfCall(
	call: OperationCall,
	named: string,
	field: string,
): Promise<{ path: string; open?: <T>(body: (file: OpenedFile) => T) => T }> {
	if (call.actor.kind !== 'agent') {
		return { path: personPath(call, named, field) };
	}
	const place = placeInRun(call.actor, named, field, 'read');
	return { path: place.path, open: (body) => withFileInRun(place, body) };
}

/**
 * For an agent, the folder of a snapshot asset it snapshots or puts files into, and each file put
 * there: inside its work folder or outbox, not in a hidden or read-only folder, no link on the way.
 * Returns which folder was checked, for the library to refuse another one in its place when it
 * opens the folder by its path (swapped for a link meanwhile).
 */
function assetFolderOfRun(
	call: OperationCall,
	asset: AssetRecord,
	files: readonly string[] = [],
): { folderIs?: FolderIdentity } {
	if (call.actor.kind !== 'agent' || asset.engine !== 'snapshot') {
		return {};
	}
	const { folder } = folderInRun(placeInRun(call.actor, asset.working_dir, 'id', 'write'));
	for (const file of files) {
		placeInRun(call.actor, path.join(asset.working_dir, file), 'files.path', 'write');
	}
	if (!folder) {
		// Made later, it could be made a link: a run snapshots and writes only a folder that is there.
		throw new DeskError('asset.noFolder', `The folder of asset ${asset.id} (${asset.working_dir}) is not there.`, {
			folder: asset.working_dir,
		});
	}
	return { folderIs: folder };
}

export const searchAssets = operation({
	name: 'asset.search',
	summary: 'Search the library for assets matching words, ranked by BM25, each with why it matched.',
	params: SearchLibrary.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: false,
	idempotent: true,
	surfaces: {
		rpc: SearchLibrary,
		cli: 'asset search',
		mcp: {
			tool: 'asset_search',
			title: 'Search assets',
			description:
				"Search the project's asset library (documents, skills, datasets, code, links) for words; returns assets ranked by BM25 with their id, name, score and the terms that matched. Retired assets are never returned.",
			boundByRun: ['project'],
		},
	},
	async run(call, { query, project, limit }) {
		const scope = projectOfCall(call, project);
		const library = call.desk.library;
		const allowed = scope === undefined ? undefined : new Set((await library.listAssets(scope)).map((a) => a.id));
		// Searched wider than the limit when scoped, so a project's assets are not crowded out by others.
		const hits = await library.search(query, allowed ? 1000 : (limit ?? 20));
		return { hits: hits.filter((h) => !allowed || allowed.has(h.id)).slice(0, limit ?? 20) };
	},
});

/**
 * An operation that changes one asset's record in place (tags, about, retired, checks): the asset
 * must be one of an agent's project, and the windows are told. Setting the same again changes nothing.
 */
function assetEdit<P extends { id: string }>(
	definition: Omit<Operation<P, AssetRecord>, 'run' | 'mutates' | 'idempotent' | 'destructive'> & {
		edit(library: Library, params: P, actor: Actor): AssetRecord;
	},
): Operation<P, AssetRecord> {
	const { edit, ...rest } = definition;
	return operation({
		...rest,
		mutates: true,
		idempotent: true,
		// It replaces what the record held (tags, about, checks), rather than adding to it.
		destructive: true,
		async run(call, params) {
			await assertAssetOfCall(call, params.id);
			// Setting the same again changes nothing, so the answer is recorded after the edit's own write:
			// a desk stopped between the two makes the same edit again on the repeat, which is no second effect.
			const { result, replayed } = await answerOnce(call.desk.libraryRequests, call.request, async () => {
				const asset = edit(call.desk.library, params, call.actor);
				call.desk.answerLibraryRequest(call.request, asset);
				return asset;
			});
			if (!replayed) {
				call.events.assetsChanged('asset changed');
			}
			return result;
		},
	});
}

export const setTags = assetEdit({
	name: 'asset.tags',
	summary: "Set an asset's tags (glossary: Tags and about).",
	params: SetTags.params,
	callers: ['editor', 'cli', 'agent'],
	surfaces: {
		rpc: SetTags,
		cli: 'asset tags',
		mcp: {
			tool: 'asset_tags',
			title: 'Set asset tags',
			description:
				'Replace the tags of an asset of this project: at most 16, each `key` or `key:value` of lowercase letters, digits and hyphens. Returns the asset.',
		},
	},
	edit: (library, { id, tags }) => library.setTags(id, tags),
});

export const importAsset = operation({
	name: 'asset.import',
	summary: 'Import a folder, a new empty asset or a library asset into a project (glossary: Adopt).',
	params: importAssetParams(toolPath),
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	// A new name makes another asset each time; a folder or an asset id again changes nothing.
	idempotent: false,
	surfaces: {
		rpc: ImportAsset,
		cli: 'asset import',
		mcp: {
			tool: 'asset_import',
			title: 'Import an asset',
			description:
				"Bring an asset into this project. Give exactly one of: `dir`, a folder inside your work folder or outbox, not a read-only or hidden one (`.git`, `.vscode`, `.claude`, `.agents`, `.desk`) and no link on the way (a git repository's top becomes a git asset, any other folder a snapshot asset whose version 1 is what it holds now; importing the same folder again returns the same asset); `newName`, a new empty snapshot asset (in `dir` when given, which must not exist or be empty; with `skillDescription`, a skill whose version 1 is a SKILL.md naming it and saying when to use it); or `assetId`, an asset of this project. `main` and `allowGitDir` are the person's to set: a run is refused them. Returns the asset, whether it was created, and the project.",
			boundByRun: ['project'],
		},
	},
	async run(call, params) {
		const { dir, newName, assetId, skillDescription } = params;
		if (skillDescription !== undefined && newName === undefined) {
			throw new DeskError('import.badArgs', 'A skill description goes with a new name.');
		}
		if (
			[dir !== undefined && newName === undefined, newName !== undefined, assetId !== undefined].filter(Boolean)
				.length !== 1
		) {
			throw new DeskError('import.badArgs', 'Import takes one of a folder, a new name, or an asset id.');
		}
		const project = projectOfCall(call, params.project);
		if (call.actor.kind === 'agent' && (params.main || params.allowGitDir)) {
			// Which asset is a project's main one, and a git folder outside the repository, are the person's word.
			throw new DeskError(
				'operation.notAllowed',
				'An agent inside a run may not set a main asset or allow a git folder elsewhere.',
				{
					operation: 'asset.import',
					caller: 'agent',
				},
			);
		}
		const checked = dir === undefined ? undefined : await folderOfCall(call, dir, 'dir', 'write');
		const folder = checked?.path;
		if (assetId !== undefined) {
			await assertAssetOfCall(call, assetId);
		}
		const { desk, request } = call;
		const { library } = desk;
		const madeBy = madeByOf(call.actor);
		const createdBy = actorLabel(call.actor);
		const main = params.main ?? false;
		const { result, replayed } = await answerOnce(desk.libraryRequests, request, async (): Promise<ImportResult> => {
			if (newName !== undefined) {
				return library.newAsset({
					name: newName,
					...(skillDescription !== undefined ? { skillDescription } : {}),
					dir: folder,
					project,
					main,
					madeBy,
					createdBy,
					...(request ? { clientRequest: request } : {}),
				});
			}
			const imported =
				assetId !== undefined
					? library.importAsset({ id: assetId, project: requireProject(project), main })
					: await library.importDir({
							dir: folder!,
							project,
							main,
							madeBy,
							createdBy,
							allowGitDir: params.allowGitDir ?? false,
							...(checked?.folder ? { folderIs: checked.folder } : {}),
						});
			// Adopting and joining again change nothing; the answer is recorded after them.
			desk.answerLibraryRequest(request, imported);
			return imported;
		});
		if (!replayed) {
			call.events.assetsChanged('asset imported');
		}
		return result;
	},
});

function requireProject(project: string | undefined): string {
	if (project === undefined) {
		throw new DeskError('import.badArgs', 'Adding a library asset needs the project it joins.');
	}
	return project;
}

export const snapshotAsset = operation({
	name: 'asset.snapshot',
	summary: 'Cut a new version of a snapshot asset from what its folder holds now (glossary: Version).',
	params: SnapshotAsset.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: true,
	surfaces: {
		rpc: SnapshotAsset,
		cli: 'asset snapshot',
		mcp: {
			tool: 'asset_snapshot',
			title: 'Snapshot an asset',
			description:
				"Record what the folder of a snapshot asset of this project holds now as its next version, with an optional note. The asset's folder must be inside your work folder or outbox, not in a folder your sandbox shows read-only or hides (`.git`, `.vscode`, `.claude`, `.agents`, `.desk`), with no link on the way. When nothing changed since the last version, no version is made and `created` is false. Git, link and notes assets have no folder to snapshot.",
		},
	},
	async run(call, { id, note }) {
		await assertAssetOfCall(call, id);
		const { desk, request } = call;
		const asset = desk.library.getAsset(id);
		const checked = assetFolderOfRun(call, asset);
		const { result, replayed } = await answerOnce(desk.libraryRequests, request, () =>
			desk.library.snapshot(id, {
				note,
				madeBy: madeByOf(call.actor),
				signal: call.signal,
				onProgress: (files) => call.events.snapshotProgress(id, files),
				...checked,
				...(request ? { clientRequest: request } : {}),
			}),
		);
		if (result.created && !replayed) {
			call.events.assetsChanged('snapshot');
		}
		return result;
	},
});

export const putVersion = operation({
	name: 'asset.version',
	// The files put overwrite the asset folder's files of the same names (the earlier versions keep theirs).
	destructive: true,
	summary: "Put files into a snapshot asset's folder and cut its next version (glossary: Version).",
	params: putVersionParams(toolPath),
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: true,
	surfaces: {
		rpc: PutVersion,
		cli: 'asset version',
		mcp: {
			tool: 'asset_version',
			title: 'Put files into a new asset version',
			description:
				"Write files into a snapshot asset of this project and record its next version: each entry copies the file `from` (inside your work folder or outbox, not in the hidden `.desk` but your outbox; refused: a link anywhere on its path, a hard link, a folder) to `path` (relative, inside the asset). The asset's folder, and each file put there, must be inside your work folder or outbox and not in a read-only or hidden folder (`.git`, `.vscode`, `.claude`, `.agents`, `.desk`). With an optional note. Returns the version (`created` is false when the files were already so). Git, link and notes assets are refused.",
		},
	},
	async run(call, { id, files, note }) {
		if (files.length === 0) {
			throw new DeskError('desk.badParams', 'params.files: at least one file to put', { field: 'params.files' });
		}
		await assertAssetOfCall(call, id);
		const checked = assetFolderOfRun(
			call,
			call.desk.library.getAsset(id),
			files.map((f) => f.path),
		);
		const put: Array<{ path: string; bytes: Buffer }> = [];
		for (const [index, file] of files.entries()) {
			const from = await fileOfCall(call, file.from, `files[${index}].from`);
			put.push({ path: file.path, bytes: readNamedFile(from) });
		}
		const { desk } = call;
		// The request names the bytes put, not only their paths: the same id with other contents is refused.
		const request =
			call.request &&
			clientRequest(call.request.method, call.request.id, {
				id,
				note,
				files: put.map((f) => ({ path: f.path, sha256: createHash('sha256').update(f.bytes).digest('hex') })),
			});
		const { result, replayed } = await answerOnce(desk.libraryRequests, request, () =>
			desk.library.putFiles(id, put, {
				note,
				madeBy: madeByOf(call.actor),
				...checked,
				...(request ? { clientRequest: request } : {}),
			}),
		);
		if (replayed && call.request) {
			markReplayed(call.request);
		}
		if (result.created && !replayed) {
			call.events.assetsChanged('version');
		}
		return result;
	},
});

/**
 * The bytes of the regular file a call named (a person's: links followed; an agent's: opened from its
 * run's folder, no link), at most a blob's limit: `input.unreadable`, `input.notAFile`, `input.tooLarge`.
 */
function readNamedFile(named: { path: string; open?: <T>(body: (file: OpenedFile) => T) => T }): Buffer {
	const file = named.path;
	const unreadable = (error: Error) =>
		new DeskError('input.unreadable', `Could not read ${file}: ${error.message}`, {
			file,
			errno: (error as NodeJS.ErrnoException).code,
		});
	const read = (opened: OpenedFile): Buffer => {
		if (!opened.stat.isFile()) {
			throw new DeskError('input.notAFile', `${file} is not a regular file.`, { file });
		}
		const bytes = opened.stat.size > maxBlobBytes ? undefined : opened.read(maxBlobBytes);
		if (!bytes || bytes.more) {
			throw new DeskError('input.tooLarge', `${file} is over the limit of a file put into an asset.`, {
				file,
				size: opened.stat.size,
				limit: maxBlobBytes,
			});
		}
		return bytes.bytes;
	};
	if (named.open) {
		try {
			return named.open(read);
		} catch (error) {
			if (isDeskError(error, 'attachment.notRegular')) {
				throw new DeskError('input.notAFile', `${file} is not a regular file.`, { file });
			}
			if (isDeskError(error, 'attachment.unavailable') || isDeskError(error, 'store.io')) {
				throw unreadable(error);
			}
			throw error;
		}
	}
	let real: string;
	try {
		real = fs.realpathSync(file);
	} catch (error) {
		throw unreadable(error as Error);
	}
	return withFileAt(real, read, unreadable);
}

export const describeAsset = assetEdit({
	name: 'asset.describe',
	summary: "Set an asset's about text (glossary: Tags and about).",
	params: DescribeAsset.params,
	callers: ['editor', 'cli', 'agent'],
	surfaces: {
		rpc: DescribeAsset,
		cli: 'asset describe',
		mcp: {
			tool: 'asset_describe',
			title: 'Describe an asset',
			description:
				"Set the `about` text of an asset of this project: what it is and when to use it, one line of at most 500 characters. Search matches it. Yours is marked as written by a model (`about_model_written`); it replaces an empty about or another model's, never one a person wrote (refused with `asset.aboutByPerson`). Returns the asset.",
		},
	},
	// Marked as a model's when a model calls it; a person's about is not a model's to replace (metadata.ts).
	edit: (library, { id, about }, actor) => library.describe(id, about, writesForModel(actor)),
});

export const addLink = operation({
	name: 'asset.link',
	summary: 'Add a link asset: a name and a URL, made from an asset when named (glossary: Tags and about).',
	params: AddLink.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	// The same link (name, URL, project) asked for again is the first one (adoption.ts).
	idempotent: true,
	surfaces: {
		rpc: AddLink,
		cli: 'asset link',
		mcp: {
			tool: 'asset_link',
			title: 'Add a link asset',
			description:
				'Add a link asset (an http, https, file or mailto URL with a name) to this project, for a source worth keeping. `from` names the asset of this project the link was found in (recorded as where it was derived from). Returns the new asset; a link of the same name and URL the project has already is returned instead of a second one, and a link of the same name with another URL is refused (asset.nameTaken: choose another name).',
			boundByRun: ['project'],
		},
	},
	async run(call, params) {
		const project = projectOfCall(call, params.project);
		if (params.from !== undefined) {
			await assertAssetOfCall(call, params.from);
		}
		return newAssetOnce(call, (made) =>
			call.desk.library.addLink({ name: params.name, url: params.url, project, from: params.from, ...made }),
		);
	},
});

/**
 * A new asset made once for the call's request, recorded as made by its actor; the windows are told
 * unless the answer is a repeat's.
 */
async function newAssetOnce(
	call: RunningCall,
	make: (made: { madeBy: MadeBy; createdBy: string; clientRequest?: ClientRequest }) => AssetRecord,
): Promise<AssetRecord> {
	const { desk, request } = call;
	const { result, replayed } = await answerOnce(desk.libraryRequests, request, async () =>
		make({
			madeBy: madeByOf(call.actor),
			createdBy: actorLabel(call.actor),
			...(request ? { clientRequest: request } : {}),
		}),
	);
	if (!replayed) {
		call.events.assetsChanged('asset changed');
	}
	return result;
}

export const listAssets = operation({
	name: 'asset.list',
	summary: "List the library's assets, or one project's, with what the Assets view shows of each.",
	params: ListAssets.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListAssets, cli: 'assets list' },
	async run(call, { project }) {
		return { assets: await call.desk.library.listAssets(project) };
	},
});

const assetIdParams = object({ id: assetIdSchema });

export const showAsset = operation({
	name: 'asset.show',
	summary: 'Show an asset: its summary, what a run would read now (AtGo) and the launches it was used in.',
	params: assetIdParams,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { cli: 'asset show' },
	async run(call, { id }) {
		const { library } = call.desk;
		const asset = await library.assetSummary(id);
		let atGo: AtGo | { error: string };
		try {
			atGo = await library.atGo(id, call.signal);
		} catch (error) {
			atGo = { error: describeError(error) };
		}
		return { ...asset, at_go: atGo, used_in: library.usedIn(id) };
	},
});

export const listVersions = operation({
	name: 'asset.versions',
	summary: "List an asset's versions, oldest first: all of them or those numbered from..to, with how many there are.",
	params: ListVersions.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListVersions, cli: 'asset versions' },
	async run(call, { id, from, to }) {
		const { library } = call.desk;
		return { asset: library.getAsset(id), ...(await library.versionPage(id, { from, to }, call.signal)) };
	},
});

export const atGo = operation({
	name: 'asset.atGo',
	summary: 'Say what a run would read of an asset now (glossary: AtGo).',
	params: GetAtGo.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: GetAtGo, cli: 'asset atgo' },
	run: (call, { id }) => call.desk.library.atGo(id, call.signal),
});

export const listFiles = operation({
	name: 'asset.files',
	summary: "List the files of an asset's version (default: the version it is at).",
	params: ListFiles.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListFiles, cli: 'asset files' },
	run: async (call, { id, version }) => call.desk.library.files(id, version),
});

export const listFolder = operation({
	name: 'asset.folder',
	summary: "List one folder of an asset's version: its subfolders and files.",
	params: ListFolder.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListFolder },
	run: async (call, { id, folder, version }) => call.desk.library.folder(id, folder, version),
});

export const readFile = operation({
	name: 'asset.read',
	summary: "Read one file of an asset's version, base64.",
	params: ReadFile.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ReadFile, cli: 'asset cat' },
	async run(call, { id, path: file, version }) {
		const bytes = await call.desk.library.cat(id, file, version);
		return { base64: Buffer.from(bytes).toString('base64'), size: bytes.length };
	},
});

export const diffVersions = operation({
	name: 'asset.diff',
	summary: 'List the files added, removed and changed between two versions of an asset.',
	params: DiffVersions.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: DiffVersions, cli: 'asset diff' },
	run: (call, { id, from, to }) => call.desk.library.diff(id, from, to),
});

export const setRetired = assetEdit({
	name: 'asset.retire',
	summary: 'Retire an asset, or bring it back into the lists (glossary: Retired).',
	params: SetRetired.params,
	// An agent proposes a retirement (asset.proposeRetire); the person decides.
	callers: ['editor', 'cli'],
	surfaces: { rpc: SetRetired, cli: 'asset retire' },
	edit: (library, { id, retired }, actor) => library.setRetired(id, retired, actorLabel(actor)),
});

export const setChecks = assetEdit({
	name: 'asset.checks',
	summary: "Set an asset's command checks (glossary: Checks).",
	params: SetChecks.params,
	// Checks are commands the desk runs after a run: never an agent's to set.
	callers: ['editor', 'cli'],
	surfaces: { rpc: SetChecks, cli: 'asset checks' },
	edit: (library, { id, checks }) => library.setChecks(id, checks),
});

export const addNote = operation({
	name: 'asset.note',
	summary: 'Add a notes asset holding text, in a project when named.',
	params: AddNote.params,
	callers: ['editor', 'cli'],
	mutates: true,
	// The same note (name, text, project) asked for again is the first one (adoption.ts).
	idempotent: true,
	surfaces: { rpc: AddNote, cli: 'asset note' },
	run: (call, { name, text, project }) =>
		newAssetOnce(call, (made) => call.desk.library.addNote({ name, text, project, ...made })),
});

export const syncAsset = operation({
	name: 'asset.sync',
	summary: "Record a git asset's head now, made_by sync (glossary: Version).",
	params: SyncAsset.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: SyncAsset, cli: 'asset sync' },
	async run(call, { id }) {
		const result = await call.desk.library.sync(id);
		if (result.recorded) {
			call.events.assetsChanged('sync');
		}
		return result;
	},
});

export const usedIn = operation({
	name: 'asset.usedIn',
	summary: 'List the launches that plugged an asset (glossary: Used in).',
	params: UsedInLaunches.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: UsedInLaunches, cli: 'asset used-in' },
	run: async (call, { id }) => ({ usedIn: call.desk.library.usedIn(id) }),
});

export const mountVersion = operation({
	name: 'asset.mount',
	summary: "Lay a snapshot asset's version out read-only in a folder, and say where.",
	params: object({ id: assetIdSchema, version: integer({ min: 1 }) }),
	// A folder of the person's disk, made on their word.
	callers: ['cli'],
	mutates: true,
	idempotent: true,
	surfaces: { cli: 'asset mount' },
	run: async (call, { id, version }) => ({ path: call.desk.library.mount(id, version) }),
});

/** The asset library's operations, in the table's order. */
export const assetOperations = [
	listAssets,
	showAsset,
	searchAssets,
	importAsset,
	snapshotAsset,
	putVersion,
	listVersions,
	atGo,
	listFiles,
	listFolder,
	readFile,
	diffVersions,
	setTags,
	describeAsset,
	setRetired,
	setChecks,
	addLink,
	addNote,
	syncAsset,
	usedIn,
	mountVersion,
];
