import * as vscode from 'vscode';
import { ListFolder, ReadFile, type VersionFile } from '../../../server/src/protocol/protocol';
import { DeskRequestError, type DeskClient } from '../common/deskClient';

/**
 * `desk-asset://<asset id>/<path>?{"version":N}`: the files of an asset version, read-only, in editor
 * tabs and diff editors. Versions never change, so what was read once is kept. The version rides in
 * the query, not the path: VS Code's multi-file diff calls a pair whose paths differ a rename, and
 * the same file at two versions is the same path. The query is JSON because the label formatter in
 * package.json reads `${query.version}` only from JSON.
 */
export const assetScheme = 'desk-asset';

export function assetFileUri(assetId: string, version: number, filePath: string): vscode.Uri {
	return vscode.Uri.from({
		scheme: assetScheme,
		authority: assetId,
		path: `/${filePath}`,
		query: JSON.stringify({ version }),
	});
}

interface Parsed {
	id: string;
	version: number;
	path: string;
}

function parse(uri: vscode.Uri): Parsed {
	let version: unknown;
	try {
		version = (JSON.parse(uri.query) as { version?: unknown }).version;
	} catch {
		version = undefined;
	}
	const path = uri.path.replace(/^\/+|\/+$/g, '');
	if (
		!/^a-[0-9a-f]{16}$/.test(uri.authority) ||
		typeof version !== 'number' ||
		!Number.isSafeInteger(version) ||
		version < 1
	) {
		throw vscode.FileSystemError.FileNotFound(uri);
	}
	return { id: uri.authority, version, path };
}

export class AssetFileSystemProvider implements vscode.FileSystemProvider {
	private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
	readonly onDidChangeFile = this.emitter.event;
	/** Folders read, by `<id>/v<version>/<folder>`: versions never change, and a tab, a diff and a tree ask for the same few. */
	private readonly folders = new Map<string, { id: string; version: number; listing: Promise<Folder | undefined> }>();

	constructor(private readonly desk: DeskClient) {}

	watch(): vscode.Disposable {
		return new vscode.Disposable(() => undefined);
	}

	async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
		const { id, version, path } = parse(uri);
		const directory = {
			type: vscode.FileType.Directory,
			ctime: 0,
			mtime: 0,
			size: 0,
			permissions: vscode.FilePermission.Readonly,
		};
		if (path === '') {
			return directory;
		}
		const slash = path.lastIndexOf('/');
		const parent = await this.folder(id, version, slash < 0 ? '' : path.slice(0, slash));
		const name = path.slice(slash + 1);
		const file = parent?.files.find((f) => f.path === path);
		if (file) {
			return {
				type: fileType(file),
				ctime: 0,
				// Not a time: a number of the content's hash, so that a version renumbered by a branch
				// rewrite stats differently, and an open editor reloads it (VS Code keeps the bytes it has
				// when a file's mtime and size are what they were, and a git file's size is not known here).
				mtime: contentStamp(file.hash),
				// What reading it gives: a link's target, a submodule's commit id and a newline.
				size:
					file.kind === 'symlink'
						? Buffer.byteLength(file.target ?? '')
						: file.kind === 'submodule'
							? file.hash.length + 1
							: Math.max(file.size, 0),
				permissions: vscode.FilePermission.Readonly,
			};
		}
		if (parent?.folders.includes(name)) {
			return directory;
		}
		throw vscode.FileSystemError.FileNotFound(uri);
	}

	async readDirectory(uri: vscode.Uri): Promise<Array<[string, vscode.FileType]>> {
		const { id, version, path } = parse(uri);
		const folder = await this.folder(id, version, path);
		if (!folder) {
			throw vscode.FileSystemError.FileNotFound(uri);
		}
		return [
			...folder.folders.map((name): [string, vscode.FileType] => [name, vscode.FileType.Directory]),
			...folder.files.map((f): [string, vscode.FileType] => [f.path.slice(f.path.lastIndexOf('/') + 1), fileType(f)]),
		];
	}

	async readFile(uri: vscode.Uri): Promise<Uint8Array> {
		const { id, version, path } = parse(uri);
		try {
			const { base64 } = await this.desk.request(ReadFile, { id, path, version });
			return Buffer.from(base64, 'base64');
		} catch (error) {
			throw vscode.FileSystemError.FileNotFound(`${uri.toString()}: ${(error as Error).message}`);
		}
	}

	createDirectory(): void {
		throw vscode.FileSystemError.NoPermissions('Asset versions are read-only');
	}
	writeFile(): void {
		throw vscode.FileSystemError.NoPermissions('Asset versions are read-only');
	}
	delete(): void {
		throw vscode.FileSystemError.NoPermissions('Asset versions are read-only');
	}
	rename(): void {
		throw vscode.FileSystemError.NoPermissions('Asset versions are read-only');
	}

	/**
	 * A rewrite of the branch a git asset follows gave the versions from `firstChanged` on other
	 * commits (glossary: Version): what was read of them is forgotten, and the editors showing one
	 * of them read it again (a read-only document is never dirty, so VS Code reloads it on the change).
	 */
	forgetVersionsFrom(id: string, firstChanged: number): void {
		const renumbered = (version: number) => version >= firstChanged;
		for (const [key, kept] of [...this.folders]) {
			if (kept.id === id && renumbered(kept.version)) {
				this.folders.delete(key);
			}
		}
		const changed = vscode.workspace.textDocuments
			.map((document) => document.uri)
			.filter((uri) => {
				if (uri.scheme !== assetScheme || uri.authority !== id) {
					return false;
				}
				try {
					return renumbered(parse(uri).version);
				} catch {
					return false;
				}
			});
		if (changed.length > 0) {
			this.emitter.fire(changed.map((uri) => ({ type: vscode.FileChangeType.Changed, uri })));
		}
	}

	/** One folder of a version, or undefined when the version has no such folder. */
	private folder(id: string, version: number, folder: string): Promise<Folder | undefined> {
		const key = `${id}/v${version}/${folder}`;
		let listing = this.folders.get(key)?.listing;
		if (!listing) {
			listing = this.desk.request(ListFolder, { id, version, folder }).then(
				(r) => ({ folders: r.folders, files: r.files }),
				(error: unknown) => {
					this.folders.delete(key);
					if (error instanceof DeskRequestError && error.deskError?.code === 'asset.fileNotFound') {
						return undefined;
					}
					throw error;
				},
			);
			// Bounded: a long session of browsing versions keeps the folders of the last few hundred.
			if (this.folders.size >= 512) {
				this.folders.delete(this.folders.keys().next().value!);
			}
			this.folders.set(key, { id, version, listing });
		}
		return listing;
	}
}

/** The first 48 bits of a hex hash, as a number (0 for anything else). */
function contentStamp(hash: string): number {
	const stamp = Number.parseInt(hash.slice(0, 12), 16);
	return Number.isSafeInteger(stamp) ? stamp : 0;
}

/**
 * A link is a file whose content is its target (read, never followed: the editor shows the target
 * as text), marked a link; a submodule is a file holding the commit it records.
 */
function fileType(file: VersionFile): vscode.FileType {
	return file.kind === 'symlink' ? vscode.FileType.File | vscode.FileType.SymbolicLink : vscode.FileType.File;
}

interface Folder {
	folders: string[];
	files: VersionFile[];
}
