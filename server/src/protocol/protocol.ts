/**
 * The desk's JSON-RPC protocol: every custom method, declared once, shared by the server (which
 * checks params against the schema and must register a handler for each; a test enforces it) and
 * the client (which sends them with these types). Methods are `desk/<area>/<verb>`; notifications
 * from the server are `desk/<area>/didChange`.
 *
 * Failures: params that do not match the schema get JSON-RPC InvalidParams (-32602); an unknown
 * method MethodNotFound (-32601); a refusal of the desk itself gets RequestFailed (-32803) with
 * `data` = {@link DeskErrorJson} (a stable `code` such as `asset.notFound`, and the facts).
 */
import type { AssetRecord, AssetSummary, AssetVersion, GitVersion, ProjectRecord } from '../assets/types';
import type { DeskErrorJson } from '../core/errors';
import type { LogLevel } from '../core/logger';
import { array, boolean, object, optional, string, type Infer, type Schema } from './schema';

export type { AssetRecord, AssetSummary, AssetVersion, DeskErrorJson, GitVersion, LogLevel, ProjectRecord };

/** JSON-RPC error code of a refusal by the desk (LSP's RequestFailed); `data` is a DeskErrorJson. */
export const deskErrorCode = -32803;

export interface RequestDefinition<P, R> {
	readonly method: string;
	readonly params: Schema<P>;
	/** Phantom: carries the result type to the client's `sendRequest`. */
	readonly result?: R;
}

export interface NotificationDefinition<P> {
	readonly method: string;
	readonly params?: P;
}

function request<R>() {
	return <P>(method: string, params: Schema<P>): RequestDefinition<P, R> => ({ method, params });
}

function notification<P>(method: string): NotificationDefinition<P> {
	return { method };
}

export type ParamsOf<D> = D extends RequestDefinition<infer P, unknown> ? P : never;
export type ResultOf<D> = D extends RequestDefinition<unknown, infer R> ? R : never;

/** Sent as `initializationOptions` when the client starts the server. */
export const initializationOptions = object({
	/** Folder of the asset library. */
	libraryDir: string({ minLength: 1, maxLength: 4096 }),
	logLevel: optional(string({ pattern: /^(error|warn|info|debug)$/ })),
});
export type InitializationOptions = Infer<typeof initializationOptions>;

const folderPath = string({ minLength: 1, maxLength: 4096 });
const assetId = string({ minLength: 1, maxLength: 64 });

export type FolderOutcome =
	| { name: string; path: string; outcome: 'adopted'; project: ProjectRecord; asset: AssetRecord; created: boolean }
	| { name: string; path: string; outcome: 'notARepository' }
	| { name: string; path: string; outcome: 'failed'; error: DeskErrorJson };

/**
 * Client → server, once the workspace is trusted: desk boot for the window's folders. Each folder in
 * a git repository becomes (or finds) its project, whose repository is adopted as a git asset and
 * made the project's main asset when it has none (seed 000 §02). Per-folder failures are reported
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
export const ListAssets = request<{ assets: AssetSummary[] }>()('desk/assets/list', object({ project: optional(string({ maxLength: 1024 })) }));

/**
 * Client → server: an asset's versions, oldest first (git: first-parent commits of its branch with
 * head observations; snapshot: manifests). Fails with `asset.badId`, `asset.notFound` or `git.unreadable`.
 */
export const ListVersions = request<{ asset: AssetRecord; versions: AssetVersion[] }>()('desk/assets/versions', object({ id: assetId }));

export interface ServerStatus {
	state: 'ready' | 'error';
	/** The library folder in use. */
	libraryDir: string;
	/** Why the desk is not ready, when it is not. */
	error?: DeskErrorJson;
	serverVersion: string;
	pid: number;
}

/** Client → server: the server's state, its library folder and process id. Never fails. */
export const GetStatus = request<ServerStatus>()('desk/server/status', object({}));

/** Server → client: the library changed (an asset was adopted or imported); views refresh. */
export const AssetsDidChange = notification<{ reason: string }>('desk/assets/didChange');

/** Every request the server must handle. */
export const deskRequests = { OpenWorkspace, ListAssets, ListVersions, GetStatus } as const;
export const deskNotifications = { AssetsDidChange } as const;
