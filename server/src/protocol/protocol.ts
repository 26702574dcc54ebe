/**
 * The desk's JSON-RPC protocol: every custom method, declared once with its name as a literal type,
 * shared by the server (which checks params against the schema and must register a handler for
 * each; test/protocol/server.test.ts asks the real server process) and the client (which sends them
 * with these types). Methods are `desk/<area>/<verb>`; notifications from the server are
 * `desk/<area>/didChange`, sent through the server's typed `notify` and taken by the client's
 * `DeskNotificationHandlers` table. test/unit/protocol/errorCodes.test.ts holds this file's words to
 * the code: each error code named here is declared, each declared code is raised, each notification
 * has a client handler.
 *
 * Failures: params that do not match the schema get JSON-RPC InvalidParams (-32602) with `data` =
 * {@link DeskErrorJson} naming the field (`desk.badParams`, `desk.relativePath`, `desk.badText`); an
 * unknown method MethodNotFound (-32601); a refusal of the desk itself gets RequestFailed (-32803)
 * with `data` = {@link DeskErrorJson} (a stable `code` such as `asset.notFound`, and the facts). Every
 * request before `initialize` is refused with `desk.notReady`, a second `initialize` with
 * `desk.alreadyInitialized`. No error echoes more than a few hundred characters of the input.
 *
 * Over stdio, a frame whose header is broken (no, a non-numeric, a negative, a huge or a second
 * `Content-Length`; a body cut short by the end of input) ends the server: it logs the reason, sends
 * {@link ProtocolError} and exits with {@link protocolErrorExitCode}, so its client starts a fresh one.
 * A body that is not UTF-8 or not JSON is answered with ParseError (-32700) and the server goes on.
 */
import type {
	AssetRecord,
	AssetSummary,
	AssetVersion,
	AtGo,
	BranchRewrite,
	GitVersion,
	ProjectRecord,
	RetireProposal,
	SnapshotResult,
	SnapshotVersion,
	UsedIn,
	VersionDiff,
	VersionFile,
} from '../assets/types';
import type { HistoryImportResult, HistoryRefusal, ModelUsage, TokenCounts, TokenUsage } from '../ai/types';
import type { DeskErrorJson } from '../core/errors';
import type {
	AgentCheck,
	AgentFix,
	AgentMessageData,
	CarriedBy,
	DecideResult,
	EndingResult,
	IntentView,
	ResumeResult,
	RunDetail,
	RunsOverview,
	RunSummary,
	UsageRollup,
} from '../runs/types';
import type { AttachmentRow, IngestReport } from '../attachments/types';
import type {
	BoardMessage,
	BranchResult,
	CatchUpSection,
	LineageRoot,
	LineageTree,
	MemorizeResult,
	MemoryView,
} from '../lineage/types';
import type {
	LaunchCard,
	LaunchRecord,
	PlugRole,
	Suggestion,
	SuggestIndexProgress,
	SuggestResult,
} from '../launch/types';
import { logLevels, type LogLevel } from '../core/logger';
import { maxNoteTextBytes, maxSettingsBytes, maxTicketBytes } from '../core/inputLimits';
import {
	array,
	boolean,
	described,
	integer,
	json,
	object,
	oneOf,
	optional,
	string,
	type Infer,
	type Schema,
} from './schema';

export type { BoardMessage, BranchResult, CatchUpSection, LineageRoot, LineageTree, MemorizeResult, MemoryView };
export type { HistoryImportResult, HistoryRefusal, ModelUsage, TokenCounts, TokenUsage };
export type {
	AgentCheck,
	AgentFix,
	AgentMessageData,
	CarriedBy,
	IntentView,
	RunDetail,
	RunsOverview,
	RunSummary,
	UsageRollup,
	LaunchCard,
	LaunchRecord,
	PlugRole,
	Suggestion,
	SuggestIndexProgress,
	SuggestResult,
	DecideResult,
	ResumeResult,
	EndingResult,
	AttachmentRow,
	IngestReport,
};
export type {
	AssetRecord,
	AssetSummary,
	AssetVersion,
	AtGo,
	BranchRewrite,
	DeskErrorJson,
	GitVersion,
	LogLevel,
	ProjectRecord,
	RetireProposal,
	SnapshotResult,
	SnapshotVersion,
	UsedIn,
	VersionDiff,
	VersionFile,
};

/** JSON-RPC error code of a refusal by the desk (LSP's RequestFailed); `data` is a DeskErrorJson. */
export const deskErrorCode = -32803;

/** Exit code of a server that met a broken frame on its input (EX_DATAERR): its client starts a new one. */
export const protocolErrorExitCode = 65;

/** A request: its method name as a literal type (`'desk/assets/list'`, not `string`), its params' schema, its result. */
export interface RequestDefinition<P, R, M extends string = string> {
	readonly method: M;
	readonly params: Schema<P>;
	/** Phantom: carries the result type to the client's `sendRequest`. */
	readonly result?: R;
}

/** A notification from the server: its method name as a literal type and (phantom) its params. */
export interface NotificationDefinition<P, M extends string = string> {
	readonly method: M;
	/** Phantom: carries the params type to the server's `notify` and the client's handler. */
	readonly params?: P;
}

/** Every method is `desk/<area>/<verb>`; the compiler refuses another shape. */
type DeskMethod = `desk/${string}/${string}`;

function request<R>() {
	return <const M extends DeskMethod, P>(method: M, params: Schema<P>): RequestDefinition<P, R, M> => ({
		method,
		params,
	});
}

function notification<P>() {
	return <const M extends DeskMethod>(method: M): NotificationDefinition<P, M> => ({ method });
}

export type ParamsOf<D> = D extends RequestDefinition<infer P, unknown> ? P : never;
export type ResultOf<D> = D extends RequestDefinition<unknown, infer R> ? R : never;
/** The params a notification carries. */
export type NotificationParamsOf<D> = D extends NotificationDefinition<infer P> ? P : never;
/** The method name of a request or notification, as its literal type. */
export type MethodOf<D> = D extends { readonly method: infer M extends string } ? M : never;

/** Sent as `initializationOptions` when the client starts the server. */
export const initializationOptions = object({
	/** Folder of the asset library. */
	libraryDir: string({ minLength: 1, maxLength: 4096, absolute: true }),
	logLevel: optional(oneOf(logLevels)),
});
export type InitializationOptions = Infer<typeof initializationOptions>;

/** Paths on the person's disk are absolute: a relative one would resolve against the server's working folder. */
const folderPath = string({ minLength: 1, maxLength: 4096, absolute: true });
/**
 * A client's id for one action that creates something (Go, a new asset, a link, a note, an
 * attachment, a snapshot): the client sends a fresh one per action and the same one when it retries;
 * a repeat returns the first answer and changes nothing, the same id with other params fails with
 * `request.idReused`.
 */
const requestId = optional(string({ minLength: 8, maxLength: 128, pattern: /^[A-Za-z0-9._:-]+$/ }));
const assetId = string({ minLength: 1, maxLength: 64 });
/** An asset's id, as every method checks it (for an operation's params of its own). */
export const assetIdSchema = assetId;
/**
 * A path a desk tool call names (glossary: Desk tools): absolute, or relative to the calling agent's
 * work folder (through `desk mcp`, to the folder it was started in); its operation resolves it and
 * refuses one outside the run's folders. Over JSON-RPC the same params take absolute paths only.
 */
export const toolPath = described(
	string({ minLength: 1, maxLength: 4096 }),
	'A file or folder path: absolute, or relative to your working folder. Inside a run, only paths inside your work folder or outbox, with no link anywhere on the way, never inside the hidden `.desk` (your outbox excepted); the folders your sandbox shows read-only (`.git`, `.vscode`, `.claude`, `.agents` of a shared checkout) are read, never written.',
);
const versionNumber = integer({ min: 1 });

export type FolderOutcome =
	| { name: string; path: string; outcome: 'adopted'; project: ProjectRecord; asset: AssetRecord; created: boolean }
	| { name: string; path: string; outcome: 'notARepository' }
	| { name: string; path: string; outcome: 'failed'; error: DeskErrorJson };

/**
 * Client → server, once the workspace is trusted: desk boot for the window's folders. Each folder in
 * a git repository becomes (or finds) its project, whose repository is adopted as a git asset and
 * made the project's main asset when it has none (glossary: Adopt). A repository no project has yet
 * goes to the project made without one that it is meant for (the folder's name, or its main asset
 * is that repository), else to a new project named after the folder. Per-folder failures are reported
 * in the result, not thrown.
 */
export const OpenWorkspace = request<{ folders: FolderOutcome[] }>()(
	'desk/workspace/open',
	object({ folders: array(object({ name: string({ maxLength: 1024 }), path: folderPath }), { maxItems: 256 }) }),
);

/**
 * Client → server: assets with what the Assets view shows (projects, version count, file count).
 * With `project`, only that project's assets; fails with `project.notFound`.
 */
export const ListAssets = request<{ assets: AssetSummary[] }>()(
	'desk/assets/list',
	object({ project: optional(string({ maxLength: 1024 })) }),
);

/**
 * Client → server: an asset's versions, oldest first (git: first-parent commits of its branch with
 * head observations; snapshot: manifests): all of them, or those numbered `from` to `to` (inclusive,
 * clipped to what exists; a view pages a long history), with `total`, how many there are in all.
 * Fails with `asset.badId`, `asset.notFound`, `git.unreadable` or `git.corrupt`.
 */
export const ListVersions = request<{ asset: AssetRecord; versions: AssetVersion[]; total: number }>()(
	'desk/assets/versions',
	object({ id: assetId, from: optional(versionNumber), to: optional(versionNumber) }),
);

export interface ServerStatus {
	state: 'ready' | 'error';
	/** The library folder in use. */
	libraryDir: string;
	/** Why the desk is not ready, when it is not. */
	error?: DeskErrorJson;
	serverVersion: string;
	pid: number;
}

/** Client → server: the server's state, its library folder and process id. Fails only before `initialize` (`desk.notReady`). */
export const GetStatus = request<ServerStatus>()('desk/server/status', object({}));

const projectName = string({ minLength: 1, maxLength: 1024 });

/** What recovering a damaged store did (`desk store recover` prints the same). */
export interface StoreRecoveryJson {
	store: 'library' | 'project';
	/** The database file. */
	file: string;
	choice: 'restore' | 'empty' | 'rebuild';
	/** The damaged copy, left where it is. */
	keptAs?: string;
	/** What was found when it was set aside. */
	problem: string;
	/** `rebuild`: the objects imported from refs/desk/history, and those refused by name. */
	rebuilt?: { added: number; refused: Array<{ path: string; reason: string }> };
	/** Attachment files no record of the new database names: kept on disk, never swept. */
	attachmentsKept?: number;
}

/**
 * Client → server: the person's choice for a store the desk set aside as damaged (an error
 * `store.corrupt` whose data has `damaged: true`, the kept copy as `keptAs` and the `choices`).
 * Until this is called every use of that store fails; nothing is ever opened empty in its place.
 * `store: 'library'` takes `restore` (the kept copy back as it is; refused with `store.cannotRecover`
 * when SQLite cannot read it) or `empty` (a new library; the kept copy stays), then opens the library,
 * so `desk/server/status` says ready. `store: 'project'` with `repo` (the project's repository top)
 * also takes `rebuild`: empty, then the AI objects of refs/desk/history imported; attachment files
 * stay on disk. Fails with `store.notDamaged` (nothing to recover), `store.cannotRecover`,
 * `project.notFound`.
 */
export const RecoverStore = request<StoreRecoveryJson>()(
	'desk/store/recover',
	object({
		store: oneOf(['library', 'project']),
		repo: optional(folderPath),
		choice: oneOf(['restore', 'empty', 'rebuild']),
	}),
);

export interface ImportResultJson {
	asset: AssetRecord;
	created: boolean;
	project?: ProjectRecord;
	/** A folder adopted now: what it held that its first version does not store (links, special files, …), as a snapshot reports it. */
	skipped?: Array<{ path: string; reason: string }>;
}

/**
 * Client → server: asset_import (glossary: Adopt). Exactly one of `dir` (adopt a folder: a repository's top
 * becomes a git asset, any other folder a snapshot asset), `newName` (a new empty snapshot asset,
 * in `dir` when given; with `skillDescription` a skill whose version 1 is its SKILL.md), or `assetId` (a library asset joins `project` by reference).
 * With `main`, a repository (by `dir` or `assetId`) made main gives a project without a repository
 * that one. Fails with `import.badArgs`, `import.notADirectory`, `asset.folderNotEmpty`, `asset.badName`,
 * `asset.badSkill`, `asset.notFound`; `project.repositoryTaken` for a repository another project has;
 * `git.foreignGitDir` (data: `gitDir`, where the git folder really is) for a repository whose git
 * folder is outside what the desk adopts by itself, unless `allowGitDir` (the person said yes);
 * `git.gitDirChanged` when its `.git` names another folder than the one adopted.
 */
export const ImportAsset = request<ImportResultJson>()('desk/assets/import', importAssetParams(folderPath));

/** ImportAsset's params with its folder checked by `dir` ({@link toolPath} for the operation). */
export function importAssetParams(dir: Schema<string>) {
	return object({
		dir: optional(dir),
		newName: optional(string({ maxLength: 200 })),
		/** With `newName`: the new asset is a skill whose version 1 holds a SKILL.md with this description. */
		skillDescription: optional(string({ maxLength: 1024 })),
		assetId: optional(assetId),
		project: optional(projectName),
		main: optional(boolean()),
		allowGitDir: optional(boolean()),
		requestId,
	});
}

/**
 * Client → server: asset_snapshot (made_by user). Reports `desk/assets/snapshotProgress` while it
 * walks the folder. Fails with `asset.noFolder` for git, link and notes assets.
 */
export const SnapshotAsset = request<SnapshotResult>()(
	'desk/assets/snapshot',
	object({ id: assetId, note: optional(string({ maxLength: 500 })), requestId }),
);

/**
 * Client → server: asset_version. Writes each file `from` (a file on the person's disk) at `path` in
 * a snapshot asset's working folder, then cuts the next version, as `desk asset version --put`.
 * The request id covers the bytes put: the same id with other contents fails with
 * `request.idReused`. Fails with `asset.noFolder` (git, link and notes assets), `asset.badPath`,
 * `input.unreadable`, `input.notAFile`, `input.tooLarge`.
 */
export const PutVersion = request<SnapshotResult>()('desk/assets/putVersion', putVersionParams(folderPath));

/** PutVersion's params with each `from` checked by `from` ({@link toolPath} for the operation). */
export function putVersionParams(from: Schema<string>) {
	return object({
		id: assetId,
		files: array(object({ path: string({ minLength: 1, maxLength: 4096 }), from }), { maxItems: 256 }),
		note: optional(string({ maxLength: 500 })),
		requestId,
	});
}

/** Server → client: files walked so far by a running snapshot. */
export const SnapshotProgress = notification<{ id: string; files: number }>()('desk/assets/snapshotProgress');

/** Client → server: AtGo (glossary: AtGo), what a run would read now. Fails with `asset.noFiles` for links and notes. */
export const GetAtGo = request<AtGo>()('desk/assets/atGo', object({ id: assetId }));

/**
 * Client → server: the files of a version (default: what the asset is at), each with its kind (a
 * git version's symbolic links with their targets, and its submodules, too). Fails with `asset.noVersion`.
 */
export const ListFiles = request<{ version: number; files: VersionFile[] }>()(
	'desk/assets/files',
	object({ id: assetId, version: optional(versionNumber) }),
);

/**
 * Client → server: one folder of a version ('' is the top; default version as for ListFiles): the
 * names of its subfolders and its files. Views of versions read a folder at a time, never the whole
 * file list. Fails with `asset.fileNotFound` when the version has no such folder, `asset.noVersion`.
 */
export const ListFolder = request<{ version: number; folders: string[]; files: VersionFile[] }>()(
	'desk/assets/folder',
	object({ id: assetId, folder: string({ maxLength: 4096 }), version: optional(versionNumber) }),
);

/**
 * Client → server: one file of a version, base64: a symbolic link's target (never followed), a
 * submodule's commit id and a newline. Fails with `asset.fileNotFound`, `blob.corrupt`.
 */
export const ReadFile = request<{ base64: string; size: number }>()(
	'desk/assets/readFile',
	object({ id: assetId, path: string({ minLength: 1, maxLength: 4096 }), version: optional(versionNumber) }),
);

/** Client → server: the files added, removed and changed between two versions. */
export const DiffVersions = request<VersionDiff>()(
	'desk/assets/diff',
	object({ id: assetId, from: versionNumber, to: versionNumber }),
);

/** Client → server: asset_tags (glossary: Tags and about). Fails with `asset.badTag`. */
export const SetTags = request<AssetRecord>()(
	'desk/assets/setTags',
	object({ id: assetId, tags: array(string({ maxLength: 200 }), { maxItems: 64 }) }),
);

/**
 * Client → server: asset_describe (glossary: Tags and about). The editor's is the person's text: it
 * replaces any about and clears `about_model_written`.
 */
export const DescribeAsset = request<AssetRecord>()(
	'desk/assets/describe',
	object({ id: assetId, about: string({ maxLength: 2000 }) }),
);

/** One asset a library search found: its BM25 score and why it matched (glossary: Suggestion). */
export interface LibraryHit {
	id: string;
	name: string;
	/** Rounded to 2 decimals. */
	score: number;
	/** Up to 3 matching terms, highest weight first. */
	terms: string[];
	/** `matches “a”, “b”, “c”` */
	reason: string;
}

/**
 * Client → server: asset_search, BM25 over the assets' names, tags, about and text (glossary:
 * Suggestion); with `project`, only that project's assets. Retired assets are never found.
 */
export const SearchLibrary = request<{ hits: LibraryHit[] }>()(
	'desk/assets/search',
	object({
		query: string({ minLength: 1, maxLength: 4096 }),
		project: optional(projectName),
		limit: optional(integer({ min: 1, max: 200 })),
	}),
);

/**
 * Client → server: retire or unretire (glossary: Retired). Retiring answers the asset's open proposal
 * to retire it, if any, as accepted by the person, in the same transaction (`desk asset retire` too).
 */
export const SetRetired = request<AssetRecord>()('desk/assets/setRetired', object({ id: assetId, retired: boolean() }));

/** Client → server: the command checks (glossary: Checks). Fails with `asset.badChecks`, naming the problem. */
export const SetChecks = request<AssetRecord>()('desk/assets/setChecks', object({ id: assetId, checks: json() }));

/**
 * Client → server: asset_link, a link asset in `project` when given, made from the asset `from`
 * when named (its `derived_from`); the same name and URL in the same project again answers the
 * link made the first time. Fails with `asset.badUrl`, `asset.notFound`; `asset.nameTaken` (data:
 * `id` of the link there) when a link of that name there has another URL.
 */
export const AddLink = request<AssetRecord>()(
	'desk/assets/addLink',
	object({
		name: string({ maxLength: 200 }),
		url: string({ maxLength: 8192 }),
		project: optional(projectName),
		from: optional(assetId),
		requestId,
	}),
);

/**
 * Client → server: a notes asset in `project` when given; the same name and text there again answers
 * the note made the first time. Fails with `asset.nameTaken` (data: `id` of the note there) when a
 * note of that name there has another text.
 */
export const AddNote = request<AssetRecord>()(
	'desk/assets/addNote',
	object({
		name: string({ maxLength: 200 }),
		text: string({ maxLength: maxNoteTextBytes }),
		project: optional(projectName),
		requestId,
	}),
);

/** Client → server: records a git asset's head with made_by sync (glossary: Version). */
export const SyncAsset = request<{ asset: AssetRecord; head?: string; recorded: boolean }>()(
	'desk/assets/sync',
	object({ id: assetId }),
);

/** Client → server: the launches that plugged an asset (glossary: Used in). */
export const UsedInLaunches = request<{ usedIn: UsedIn[] }>()('desk/assets/usedIn', object({ id: assetId }));

/** Server → client: a git asset's branch was rewritten; the versions from `firstChanged` on name other commits now. */
export const HistoryRewritten = notification<BranchRewrite>()('desk/assets/historyRewritten');

/** Server → client: the library changed (an asset was adopted, imported, snapshotted or edited); views refresh. */
export const AssetsDidChange = notification<{ reason: string }>()('desk/assets/didChange');

const runId = string({ minLength: 1, maxLength: 64 });
const gitRef = string({ minLength: 1, maxLength: 256, pattern: /^refs\/[A-Za-z0-9._/-]+$/ });

/**
 * Where a call on a project's runs and history acts: the project named, or the repository at `repo`
 * (absolute; a clone whose history was brought in need not be a project of the library). Exactly one
 * is given, else `desk.badParams`; `import.notRepoTop` when `repo` is in no git repository.
 */
const projectOrRepo = {
	project: optional(projectName),
	repo: optional(folderPath),
};

/**
 * Client → server: the project's intents, their plans and tasks, each task's runs; runs that never
 * started (glossary: Agent check) only with `all`, else counted in `hidden_runs`. Fails with
 * `project.notFound` (a repository the desk keeps no records of: the read creates nothing there).
 */
export const ListRuns = request<RunsOverview>()(
	'desk/runs/list',
	object({ ...projectOrRepo, all: optional(boolean()) }),
);

/** Client → server: everything a run recorded. Fails with `ai.notFound` for an id that names no run of the project. */
export const ShowRun = request<RunDetail>()('desk/runs/show', object({ ...projectOrRepo, id: runId }));

/**
 * Client → server: reads a history ref (default refs/desk/history) into the project, taking only new
 * objects and later states of stored ones; twice adds nothing. Every other object is refused by
 * itself, named with a reason code and a message, and nothing of it is stored.
 */
export const ImportHistory = request<HistoryImportResult>()(
	'desk/runs/importHistory',
	object({ ...projectOrRepo, ref: optional(gitRef) }),
);

/**
 * Client → server: writes the project's AI objects, sealed, to a history ref (one commit when
 * something changed); `anchored` counts the blobs their context snapshots name that are anchored
 * under `refs/desk/blobs/` (an anchor that went is put back).
 */
export const ExportHistory = request<{ commit?: string; objects: number; anchored: number }>()(
	'desk/runs/exportHistory',
	object({ ...projectOrRepo, ref: optional(gitRef) }),
);

export interface PatchSetFilesJson {
	/** Where the after side comes from: the commit the decision made, or the PatchSet's stored diff applied to its baseline. */
	source: 'commit' | 'artifact';
	/** Each touched file's text before and after, base64; null where the file does not exist on that side. */
	files: Array<{ path: string; before: string | null; after: string | null }>;
}

/**
 * Client → server: the files a PatchSet changes, before and after, for VS Code's diff editor.
 * Fails with `ai.notFound` for an id that names no PatchSet of the project; `ai.badObject` when it has neither a result
 * commit nor a stored diff, or the diff does not apply; `git.missingObject` when a tree the run wrote (or an object under
 * it) is no longer in the repository (a gc pruned it): the file is not shown as absent then.
 */
export const PatchSetFiles = request<PatchSetFilesJson>()(
	'desk/runs/patchSetFiles',
	object({ project: projectName, patchset: runId }),
);

/** A text a run stored, as {@link ReadRunText} reads it. */
export interface RunText {
	/** The text (UTF-8; a byte sequence that is not is shown as U+FFFD): whole, or its first `max_bytes`. */
	text: string;
	/** Bytes of the whole stored text. */
	bytes: number;
	/** `text` is only the beginning: `max_bytes` ended before the stored text did. */
	partial: boolean;
	content_type?: string;
}

/**
 * Client → server: a text a run stored in the blob store (glossary: Conversation): a tool call's
 * output, a check's log, a long message of the agent's, a node's raw transcript; whole, or its first
 * `max_bytes` (the run page's previews). Only an artifact the run's own records name is read: any
 * other hash fails with `ai.notFound`, as does an id that names no run of the project; `blob.missing`
 * when its bytes are not in this library (a run brought in with the history of another machine),
 * `blob.corrupt` when they are damaged.
 */
export const ReadRunText = request<RunText>()(
	'desk/runs/readText',
	object({
		project: projectName,
		run: runId,
		hash: string({ minLength: 64, maxLength: 64, pattern: /^[0-9a-f]{64}$/ }),
		max_bytes: optional(integer({ min: 1, max: 64 * 1024 * 1024 })),
	}),
);

export interface CardView {
	card: LaunchCard;
	/** Each plug with its asset's name and what AtGo would freeze now ("working changes" included). */
	plugs: Array<{ id: string; role: PlugRole; name: string; nodes: string[]; at_go: AtGo | { error: string } }>;
}

/** Client → server: the project's launch card (the draft survives a reload) with AtGo for each plug. */
export const GetCard = request<CardView>()('desk/card/get', object({ project: projectName }));

/** Client → server: saves the ticket being written. */
export const SetTicket = request<CardView>()(
	'desk/card/setTicket',
	object({ project: projectName, ticket: string({ maxLength: maxTicketBytes }) }),
);

/**
 * Client → server: suggestions for a ticket (default: the card's), named assets first (glossary: Suggestion). The
 * project's index is built in the background: the answer comes within about half a second, ranked on
 * the members indexed by then (named assets need no index), and `index` says how many of how many
 * those were; when `indexed < total`, {@link SuggestIndexDidChange} follows as the index grows and
 * when it is complete. Fails with `project.notFound`.
 */
export const SuggestAssets = request<SuggestResult>()(
	'desk/card/suggest',
	object({
		project: projectName,
		ticket: optional(string({ maxLength: maxTicketBytes })),
		/** True: the answer waits for the complete index (a script, which asks once). */
		complete: optional(boolean()),
	}),
);

/**
 * Server → client: a project's suggestion index grew (at most once a second while it builds), is
 * complete (`indexed === total`), or took in what a walk of the members' folders found (sent only
 * when it changed, and once when a card's first walks end); an open card asks again.
 */
export const SuggestIndexDidChange = notification<{ project: string } & SuggestIndexProgress>()('desk/card/didChange');

/**
 * Client → server: plugs an asset into the card (glossary: Plug). Each refusal names its rule: `launch.badRole`,
 * `launch.secondTarget`, `launch.badTarget`, `launch.foreignRepo`, `launch.referenceOnly`, `launch.notSkill`,
 * `launch.badNode`, `launch.badCopy`, `launch.alreadyPlugged`, `launch.retired`.
 */
export const PlugAsset = request<CardView>()(
	'desk/card/plug',
	object({
		project: projectName,
		id: assetId,
		role: oneOf(['reference', 'target', 'instructions']),
		nodes: optional(array(string({ maxLength: 64 }), { maxItems: 16 })),
		files: optional(array(string({ maxLength: 1024 }), { maxItems: 256 })),
		copy: optional(
			array(object({ from: string({ maxLength: 4096 }), to: string({ maxLength: 4096 }) }), { maxItems: 256 }),
		),
	}),
);

/** Client → server: takes a plug off the card. Fails with `launch.notPlugged`. */
export const UnplugAsset = request<CardView>()('desk/card/unplug', object({ project: projectName, id: assetId }));

/**
 * Run settings as the client's `desk.*` settings give them (agents, isolation, checks, maxAttempts,
 * maxFrames, sandbox, agent); checked by the server, which fails with `run.badSettings` or `run.unknownAgent`
 * naming the field. Absent: the defaults (Claude Code, then Codex; the shared checkout).
 */
const runSettings = optional(json({ maxBytes: maxSettingsBytes }));

/**
 * Client → server: Go. Freezes every plug at its AtGo version, records the launch, makes the Intent,
 * Task and Run, and starts carrying the run out with `settings` (unless `execute` is false); the
 * result comes back at once, progress as `desk/runs/didChange` and the end as `desk/runs/didFinish`.
 * Fails with `launch.emptyTicket`, `launch.foreignRepo` (the git target is not the checkout the run
 * writes, checked again before anything is written), `run.badSettings`, `run.unknownAgent`, `run.agentMissing` (the
 * agent's program is not installed: nothing is made), `run.checkoutBusy` (another
 * run's agent works in the shared checkout, in this process or another), `launch.cardChanged` (another
 * Go launched the card meanwhile), `request.idReused`. With `requestId`, a repeat returns the first
 * launch and starts nothing.
 */
export const LaunchGo = request<LaunchRecord>()(
	'desk/card/go',
	object({ project: projectName, settings: runSettings, execute: optional(boolean()), requestId }),
);

/**
 * Client → server: the agent check (glossary: Agent check) of the agent Go would start with
 * `settings`, of the agent named, or of every one (`all`): its program on the PATH, its version and
 * its sign-in, told before Go. Starts no agent and spends no tokens; an answer is kept a few seconds
 * unless `fresh`. Fails with `run.badSettings`, `run.unknownAgent`.
 */
export const CheckAgents = request<{ agents: AgentCheck[] }>()(
	'desk/agents/check',
	object({
		settings: runSettings,
		agent: optional(string({ minLength: 1, maxLength: 64 })),
		all: optional(boolean()),
		fresh: optional(boolean()),
	}),
);

/**
 * Client → server: Cancel Run. Stops the agent's whole process group and fails the run with the
 * reason; `stopped` is false when no process was carrying it out. Fails with `run.notRunning`.
 */
export const CancelRun = request<{ stopped: boolean }>()(
	'desk/runs/cancel',
	object({ project: projectName, run: runId, reason: optional(string({ maxLength: 2000 })) }),
);

/**
 * Client → server: the gate's decision on a completed or failed run (glossary: Gate): `commit` lands
 * the PatchSet (the run's last unless named), `retry` makes and starts a new Run of the same Task
 * with `settings`, `abandon` fails the Task and puts the shared checkout's files back, `checkpoint`
 * keeps the change aside and puts the shared checkout's files back (glossary: Checkpoint), and
 * `rollback` reverts a landed run's change in a run of its own (glossary: Rollback; `rollback_run`,
 * with `commit` or `version`). Fails with `run.notAwaitingDecision`, `run.noPatch`, `run.landConflict`
 * (also: the revert no longer applies), `run.targetMoved`, `run.notLanded` (rollback of a run that did
 * not land, or was rolled back), `run.checkoutDirty` (the checkout has changes in files the rollback
 * writes), `run.noIdentity` (a commit to make, and git has no identity here nor was `identity` given:
 * the editor asks the person once), `run.agentMissing` (retry with an agent not installed). With
 * `requestId`, a repeat returns the first answer and starts no second run.
 */
export const DecideRun = request<DecideResult>()(
	'desk/runs/decide',
	object({
		project: projectName,
		run: runId,
		decision: oneOf(['commit', 'retry', 'abandon', 'checkpoint', 'rollback']),
		patchset: optional(runId),
		rationale: optional(string({ maxLength: 64 * 1024 })),
		settings: runSettings,
		/** The person's name and email for the commit, used only where git has no identity of its own. */
		identity: optional(
			object({ name: string({ minLength: 1, maxLength: 200 }), email: string({ minLength: 1, maxLength: 320 }) }),
		),
		requestId,
	}),
);

/**
 * Client → server: Resume from Checkpoint (glossary: Checkpoint): a new run of a checkpointed run's
 * task, from the same launch record with `settings`, whose work folder gets the checkpoint's change
 * before its agent starts; the result comes back at once, the run's end as `desk/runs/didFinish`.
 * Fails with `run.notCheckpointed` (no checkpoint, resumed already, or the task ended),
 * `run.checkpointConflict` (the change no longer applies where the run would work),
 * `run.checkoutBusy`, `run.badSettings`, `ai.notFound`. With `requestId`, a repeat starts nothing.
 */
export const ResumeRun = request<ResumeResult>()(
	'desk/runs/resume',
	object({ project: projectName, run: runId, settings: runSettings, requestId }),
);

/**
 * Client → server: Cancel Task (glossary: Ending). A run of the task still working is cancelled
 * first; each run left undecided (at the gate or failed) is abandoned, its shared-checkout files put
 * back as Abandon does; the task ends Cancelled, its plan's open steps failed or skipped, and its
 * intent Cancelled once none of the intent's tasks can run again. Fails with `ai.notFound`,
 * `ai.illegalTransition` (the task ended already), `run.notAwaitingDecision` (a decision on one of its
 * runs is being made).
 */
export const CancelTask = request<EndingResult>()(
	'desk/tasks/cancel',
	object({ project: projectName, task: runId, reason: optional(string({ maxLength: 2000 })) }),
);

/**
 * Client → server: Cancel Intent (glossary: Ending): Cancel Task for each of its tasks that can still
 * run, then the intent Cancelled. Fails with `ai.notFound`, `ai.illegalTransition` (it completed or
 * was cancelled already).
 */
export const CancelIntent = request<EndingResult>()(
	'desk/intents/cancel',
	object({ project: projectName, intent: runId, reason: optional(string({ maxLength: 2000 })) }),
);

/**
 * Client → server: Follow Up (glossary: Follow-up): a refinement of a finished intent (`from` names
 * the intent or one of its runs): a new Intent whose `parent` is it, with its Task and Run, launched
 * from the original's launch record with `ticket` (the target at its version now) and started with
 * `settings` as Go starts a run. Fails with `ai.notFound` (no such intent or run, or no launch record),
 * `ai.illegalTransition` (the intent is still draft or active), `launch.emptyTicket`,
 * `run.checkoutBusy`, `run.badSettings`, `request.idReused`.
 */
export const FollowUp = request<LaunchRecord>()(
	'desk/intents/followUp',
	object({
		project: projectName,
		from: runId,
		ticket: string({ minLength: 1, maxLength: maxTicketBytes }),
		settings: runSettings,
		requestId,
	}),
);

/** Server → client: the project's AI objects changed (`run` when one run's did); the Runs view refreshes. */
export const RunsDidChange = notification<{ project: string; run?: string }>()('desk/runs/didChange');

export interface RunFinishedParams {
	project: string;
	run: string;
	/** `gate`: validated, waiting for the person's decision (the run completes with it); `failed`: it stopped. */
	status: 'gate' | 'failed';
	/** The task's title. */
	title: string;
	error?: string;
	/** It failed before its agent did anything (glossary: Agent check): the fix is the agent's, not a Retry. */
	never_started?: boolean;
	/** The agent it ran with (its name in the run settings). */
	agent?: string;
	/** Files the last PatchSet touches, and the checks of it that passed and failed. */
	touched: number;
	checks: { passed: number; failed: number };
}

/** Server → client: a run reached the gate (completed) or failed; the client offers the review. */
export const RunDidFinish = notification<RunFinishedParams>()('desk/runs/didFinish');

const taskId = string({ minLength: 1, maxLength: 128 });
const attachmentRef = string({ minLength: 1, maxLength: 1024 });
/** A project's name, a task's id and an attachment's ref as the methods check them (for an operation's params of its own). */
export const projectNameSchema = projectName;
export const taskIdSchema = taskId;
export const attachmentRefSchema = attachmentRef;

export interface TaskAttachmentsView {
	task_id: string;
	/** The task's title, '' when the task is not in this project's records. */
	title: string;
	count: number;
	bytes: number;
	/** Oldest first; each with its run (Reveal in Run) and `unavailable` when the bytes are not here. */
	files: AttachmentRow[];
}

/** Client → server: the tasks with attachments (newest first) and each one's files (glossary: Attachment). */
export const ListAttachments = request<{ tasks: TaskAttachmentsView[] }>()(
	'desk/attachments/list',
	object({ project: projectName }),
);

export interface AttachmentContent {
	row: AttachmentRow;
	/** The type to show it as and whether it may be shown, from the stored bytes (a recorded type is only a claim). */
	inline_type: string;
	inline: boolean;
	/**
	 * The stored bytes, base64: all of them, or the `max_bytes` from `offset`; checked against the
	 * recorded size, and the recorded digest when they are all of them (a reader of parts checks the digest over the whole).
	 */
	base64: string;
	/** The bytes end before the file does. */
	truncated: boolean;
}

/**
 * Client → server: an attachment's stored bytes, by full id, unique id prefix (six characters or more)
 * or exact name; all of them, or `max_bytes` from `offset` (a preview reads a large file in pieces,
 * and decides from the first whether to read on). Fails with `attachment.notFound`, `attachment.ambiguous`, `attachment.unavailable`
 * (bytes not in the store), `attachment.changed` (the store's file is not what was recorded),
 * `attachment.notRegular`.
 */
export const ReadAttachment = request<AttachmentContent>()(
	'desk/attachments/read',
	object({
		project: projectName,
		task: taskId,
		ref: attachmentRef,
		offset: optional(integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
		max_bytes: optional(integer({ min: 1, max: 64 * 1024 * 1024 })),
	}),
);

/**
 * Client → server: Attach File to Task (by hand). Fails with `ai.notFound` (no task of that id in the
 * project), `attachment.tooLarge`, `attachment.quota` (naming the limit, sizes exact), `attachment.notRegular`
 * (a link, a folder), `attachment.unavailable`.
 */
export const AttachFile = request<AttachmentRow>()(
	'desk/attachments/add',
	object({ project: projectName, task: taskId, ...attachFileFields(folderPath) }),
);

/**
 * AttachFile's params for the operation `attach`: the path as {@link toolPath}, the project and
 * task optional (an agent's come from its run; anyone else names them).
 */
export const attachParams = object({
	project: optional(projectName),
	task: optional(taskId),
	...attachFileFields(toolPath),
});

function attachFileFields(file: Schema<string>) {
	return {
		path: file,
		name: optional(string({ maxLength: 4096 })),
		note: optional(string({ maxLength: 4096 })),
		requestId,
	};
}

/** Client → server: deletes an attachment (after the person confirmed); audited with who and `via`. */
export const DeleteAttachment = request<AttachmentRow>()(
	'desk/attachments/delete',
	object({ project: projectName, task: taskId, ref: attachmentRef, via: string({ minLength: 1, maxLength: 200 }) }),
);

/** Server → client: a task's attachments changed (an ingest, an attach, a delete). */
export const AttachmentsDidChange = notification<{ project: string; task: string }>()('desk/attachments/didChange');

/**
 * Client → server: the open proposals to retire an asset (glossary: Retired), oldest first; with
 * `project`, only those of that project's assets (fails with `project.notFound`). Agents make them
 * with the desk tool `propose_asset_retire` (which fails with `asset.retired` on an asset retired
 * already, and answers with the open proposal when its asset has one); the Assets view shows them
 * on their assets. Retiring an asset directly ({@link SetRetired}) answers its open proposal, so
 * an asset retired, and later unretired, shows none. Editor only.
 */
export const ListRetireProposals = request<{ proposals: RetireProposal[] }>()(
	'desk/proposals/list',
	object({ project: optional(projectName) }),
);

/**
 * Client → server: the person's answer to a proposal to retire an asset: `accept` retires the asset
 * (as {@link SetRetired} does) and closes the proposal in one transaction, `decline` closes it; either
 * is recorded with who answered and when, and told as {@link AssetsDidChange}. Fails with
 * `proposal.notFound`, or `proposal.notOpen` when it was answered already. Editor only.
 */
export const AnswerRetireProposal = request<RetireProposal>()(
	'desk/proposals/answer',
	object({ id: string({ minLength: 1, maxLength: 64 }), answer: oneOf(['accept', 'decline'] as const), requestId }),
);

// Lineage, boards and project memory (glossary: Lineage, Tally, Catch-up, Project memory).

const rootName = string({ minLength: 1, maxLength: 64, pattern: /^[a-z0-9][a-z0-9._-]{0,63}$/ });
const nodeId = string({ minLength: 1, maxLength: 64 });
const branchPrompt = string({ minLength: 1, maxLength: 64 * 1024 });
/** The desk tools a branch is to get (tool names, as `tools/list` gives them); unset: its starter's. */
const branchTools = optional(
	array(string({ minLength: 1, maxLength: 64, pattern: /^[a-z][a-z0-9_]{0,63}$/ }), { maxItems: 64 }),
);
const boardText = string({ minLength: 1, maxLength: 4000 });
/** Memory the person writes: refused over these limits (the summary model's text is cut to them instead). */
const memoryTitle = string({ minLength: 1, maxLength: 80 });
const memoryText = string({ minLength: 1, maxLength: 1000 });

/**
 * Client → server: the project's listed roots (`main` always), each with its tally, its branches
 * (all, live, landed) and its memory file's state. Fails with `project.notFound`.
 */
export const ListLineageRoots = request<{ roots: LineageRoot[] }>()(
	'desk/lineage/roots',
	object({ project: projectName }),
);

/**
 * Client → server: New Lineage Root: lists another root branches may fork. Fails with
 * `lineage.rootExists` (a name listed already); a name not matching {@link rootNamePattern} is
 * `desk.badParams`.
 */
export const AddLineageRoot = request<LineageRoot>()(
	'desk/lineage/addRoot',
	object({ project: projectName, name: rootName, about: optional(string({ maxLength: 2000 })), requestId }),
);

/**
 * Client → server: Branch from Here: starts a branch of the run `starterRun` (its Task becomes the
 * branch's `parent`, the run its `requester`) forked from `root` (default: the starter's root, else
 * `main`), configured from the starter's launch and `settings`; in the shared checkout it waits while
 * another run's agent works there (`queued`). `repo` is the project's repository top or one of its
 * worktrees. One transaction makes the tally (for an empty root), the branch's Intent, Task and Run,
 * its board's `board.started.by` and reply-enabled input, and the receipt: the same `requestId` again
 * answers the first branch (`replayed`). `tools` names the desk tools the branch's runs get; they
 * are at most its starter's (a run whose agent had none grants none), which is also the default.
 * Fails with `lineage.badRepo`, `lineage.unknownRoot`, `lineage.limit` (naming the limit),
 * `lineage.toolsNotGranted` (naming the tools the starter lacks), `lineage.receiptConflict`,
 * `lineage.tallyNoRuns` (a tally starts nothing), `ai.notFound`, `run.badSettings`, `request.idReused`.
 */
export const BranchFromRun = request<BranchResult>()(
	'desk/lineage/branch',
	object({
		project: projectName,
		repo: folderPath,
		prompt: branchPrompt,
		root: optional(rootName),
		starterRun: optional(runId),
		tools: branchTools,
		settings: runSettings,
		requestId,
	}),
);

/**
 * Client → server: the person's direct branch request on a root: the same fork as
 * {@link BranchFromRun} with the person as the starter. Fails as it does.
 */
export const PromptLineage = request<BranchResult>()(
	'desk/lineage/prompt',
	object({
		project: projectName,
		root: rootName,
		prompt: branchPrompt,
		tools: branchTools,
		settings: runSettings,
		requestId,
	}),
);

/** Client → server: the roots, their tallies and branches (nested, with state, board counts and each subtree's tokens and cost). */
export const LineageTreeRequest = request<LineageTree>()('desk/lineage/tree', object({ project: projectName }));

/**
 * Client → server: what the next input of a branch's run would be told: other branches of its root
 * (within the tally token budget) and its root's memory. Reads the target ref's tip without a git
 * program and walks commits only when it moved since the saved baseline. Fails with `ai.notFound`,
 * `lineage.notBranch`.
 */
export const LineageCatchUp = request<CatchUpSection>()(
	'desk/lineage/catchUp',
	object({ project: projectName, run: runId }),
);

/**
 * Client → server: Remember: adds a memory to `.desk-memory/<root>.json` (root default `main`) with
 * its receipt in the same file. Only the person and the conversations they drive may; a branch
 * cannot (`memory.notRoot`). Fails with `memory.badBatch` (the file is untouched), `memory.corrupt`
 * (the damaged file is kept aside and named), `memory.unknownFormat`, `memory.locked`,
 * `lineage.unknownRoot`.
 */
export const RememberMemory = request<{ added: string; replayed: boolean }>()(
	'desk/lineage/remember',
	object({
		project: projectName,
		root: optional(rootName),
		text: memoryText,
		title: optional(memoryTitle),
		evidence: optional(array(string({ minLength: 1, maxLength: 1024 }), { maxItems: 16 })),
		requestId,
	}),
);

/** Client → server: Forget: removes one memory, as {@link RememberMemory} adds one. Fails as it does, and with `memory.notFound`. */
export const ForgetMemory = request<{ removed: string; replayed: boolean }>()(
	'desk/lineage/forget',
	object({ project: projectName, root: rootName, memory: nodeId, requestId }),
);

/**
 * Client → server: a root's memory as the file holds it now, with "uncommitted" and "evidence
 * changed". Fails with `memory.corrupt`, `memory.unknownFormat`, `lineage.unknownRoot`.
 */
export const ShowMemory = request<MemoryView>()(
	'desk/lineage/memory',
	object({ project: projectName, root: rootName }),
);

/**
 * Client → server: memorize a landed run of a branch: the summary agent (the agent `settings` name as
 * the lineage's summary agent) is asked for memories of the landing; with none configured memory is left unchanged and
 * `skipped` says why. The model's answer is memoised, a refused batch asked again once. Fails with
 * `run.notLanded`, `ai.notFound`.
 */
export const MemorizeLanding = request<MemorizeResult>()(
	'desk/lineage/memorize',
	object({ project: projectName, run: runId, settings: runSettings, requestId }),
);

/**
 * Client → server: Commit Memory: commits `.desk-memory/<root>.json` alone, with the trailer
 * `Desk-Memory: <root>` (and `Desk-Request: <requestId>`, so a repeat the desk did not live to
 * answer is answered with that commit), the repository's hooks off. Fails with `memory.nothingToCommit`,
 * `memory.corrupt`, `run.landConflict` (the index holds other staged changes to that file).
 */
export const CommitMemory = request<{ commit: string }>()(
	'desk/lineage/commitMemory',
	object({ project: projectName, root: rootName, requestId }),
);

/** Client → server: a node's board, oldest first (after `since`, a message's `seq`). Fails with `ai.notFound`. */
export const ListBoard = request<{ messages: BoardMessage[] }>()(
	'desk/board/list',
	object({ project: projectName, node: nodeId, since: optional(integer({ min: 0 })) }),
);

/**
 * Client → server: Post Note: a one-way update from a branch's run to its starter, passive (it raises
 * no notification); `abstract` replaces the branch's liquid abstract on its tally. Fails with
 * `board.noStarter` (the run's task is no branch), `lineage.limit` (`maxNotesPerBranch`: the notes
 * the branch may post, frozen at its fork).
 */
export const PostToBoard = request<BoardMessage>()(
	'desk/board/post',
	object({
		project: projectName,
		run: runId,
		text: boardText,
		kind: optional(oneOf(['note', 'abstract'] as const)),
		requestId,
	}),
);

/**
 * Client → server: Answer Report: the starter's one answer to a branch's report, on the branch's
 * board, never itself reply-enabled. Fails with `board.notReplyEnabled` (not a report),
 * `board.alreadyAnswered`, `ai.notFound`.
 */
export const AnswerReport = request<BoardMessage>()(
	'desk/board/answer',
	object({ project: projectName, report: nodeId, text: boardText, requestId }),
);

/**
 * Client → server: Continue with Reports: a new run of the starter's task whose prompt carries the
 * reports (and answers) its board got since its last run, each once; not a resumed agent session.
 * Fails with `board.noReports`, `run.checkoutBusy`, `run.badSettings`, `ai.notFound`.
 */
export const ContinueWithReports = request<{ run: string; task: string; reports: number }>()(
	'desk/board/continue',
	object({ project: projectName, run: runId, settings: runSettings, requestId }),
);

/** Server → client: the project's lineage changed (a branch started, ended, a root was listed); the Runs view refreshes. */
export const LineageDidChange = notification<{ project: string; node?: string }>()('desk/lineage/didChange');

/**
 * Server → client: a branch reported to its starter (an active report: passive notes are never told).
 * The client raises one notification with Open Report, Answer… and Continue with Reports.
 */
export const BoardDidReport = notification<{
	project: string;
	/** The starter's node and run (no run: the person started it). */
	starter_node?: string;
	starter_run?: string;
	branch: string;
	report: string;
	title: string;
	outcome: string;
}>()('desk/board/didReport');

/** Server → client: a root's memory file changed (a remember, a memorize, a `git pull`); the Memory view refreshes. */
export const MemoryDidChange = notification<{ project: string; root: string }>()('desk/memory/didChange');

/** Server → client, just before the server exits on a broken frame: what was wrong, for the person. */
export const ProtocolError = notification<{ message: string; exitCode: number }>()('desk/server/protocolError');

/** Every request the server must handle. */
export const deskRequests = {
	OpenWorkspace,
	ListAssets,
	ListVersions,
	GetStatus,
	RecoverStore,
	ImportAsset,
	SnapshotAsset,
	PutVersion,
	GetAtGo,
	ListFiles,
	ListFolder,
	ReadFile,
	DiffVersions,
	SetTags,
	DescribeAsset,
	SearchLibrary,
	SetRetired,
	SetChecks,
	AddLink,
	AddNote,
	SyncAsset,
	UsedInLaunches,
	ListRuns,
	ShowRun,
	ImportHistory,
	ExportHistory,
	PatchSetFiles,
	ReadRunText,
	GetCard,
	SetTicket,
	SuggestAssets,
	PlugAsset,
	UnplugAsset,
	LaunchGo,
	CheckAgents,
	CancelRun,
	DecideRun,
	ResumeRun,
	CancelTask,
	CancelIntent,
	FollowUp,
	ListAttachments,
	ReadAttachment,
	AttachFile,
	DeleteAttachment,
	ListRetireProposals,
	AnswerRetireProposal,
	ListLineageRoots,
	AddLineageRoot,
	LineageTreeRequest,
	BranchFromRun,
	PromptLineage,
	ListBoard,
	PostToBoard,
	AnswerReport,
	ContinueWithReports,
	RememberMemory,
	ForgetMemory,
	ShowMemory,
	CommitMemory,
	LineageCatchUp,
	MemorizeLanding,
} as const;
export const deskNotifications = {
	ProtocolError,
	AssetsDidChange,
	SnapshotProgress,
	HistoryRewritten,
	RunsDidChange,
	RunDidFinish,
	AttachmentsDidChange,
	SuggestIndexDidChange,
	LineageDidChange,
	BoardDidReport,
	MemoryDidChange,
} as const;
