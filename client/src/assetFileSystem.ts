import * as vscode from 'vscode';
import { ListFiles, ReadFile, type VersionFile } from '../../server/src/protocol/protocol';
import type { DeskClient } from './deskClient';

/**
 * `desk-asset:/<asset id>/v<version>/<path>`: the files of an asset version, read-only, in editor
 * tabs and diff editors. Versions never change, so what was read once is kept.
 */
export const assetScheme = 'desk-asset';

export function assetFileUri(assetId: string, version: number, filePath: string, label?: string): vscode.Uri {
	return vscode.Uri.from({ scheme: assetScheme, path: `/${assetId}/v${version}/${filePath}`, ...(label ? { query: `label=${encodeURIComponent(label)}` } : {}) });
}

interface Parsed {
	id: string;
	version: number;
	path: string;
}

function parse(uri: vscode.Uri): Parsed {
	const match = /^\/(a-[0-9a-f]{16})\/v(\d+)(?:\/(.*))?$/.exec(uri.path);
	if (!match) {
		throw vscode.FileSystemError.FileNotFound(uri);
	}
	return { id: match[1]!, version: Number(match[2]), path: match[3] ?? '' };
}

export class AssetFileSystemProvider implements vscode.FileSystemProvider {
	private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
	readonly onDidChangeFile = this.emitter.event;
	private readonly listings = new Map<string, Promise<VersionFile[]>>();

	constructor(private readonly desk: DeskClient) {}

	watch(): vscode.Disposable {
		return new vscode.Disposable(() => undefined);
	}

	async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
		const { id, version, path } = parse(uri);
		const files = await this.list(id, version);
		const file = files.find((f) => f.path === path);
		if (file) {
			return { type: vscode.FileType.File, ctime: 0, mtime: 0, size: Math.max(file.size, 0), permissions: vscode.FilePermission.Readonly };
		}
		if (path === '' || files.some((f) => f.path.startsWith(`${path}/`))) {
			return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0, permissions: vscode.FilePermission.Readonly };
		}
		throw vscode.FileSystemError.FileNotFound(uri);
	}

	async readDirectory(uri: vscode.Uri): Promise<Array<[string, vscode.FileType]>> {
		const { id, version, path } = parse(uri);
		const prefix = path === '' ? '' : `${path}/`;
		const entries = new Map<string, vscode.FileType>();
		for (const file of await this.list(id, version)) {
			if (!file.path.startsWith(prefix)) {
				continue;
			}
			const rest = file.path.slice(prefix.length);
			const slash = rest.indexOf('/');
			entries.set(slash < 0 ? rest : rest.slice(0, slash), slash < 0 ? vscode.FileType.File : vscode.FileType.Directory);
		}
		return [...entries];
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

	private list(id: string, version: number): Promise<VersionFile[]> {
		const key = `${id}/${version}`;
		let listing = this.listings.get(key);
		if (!listing) {
			listing = this.desk.request(ListFiles, { id, version }).then((r) => r.files);
			listing.catch(() => this.listings.delete(key));
			this.listings.set(key, listing);
		}
		return listing;
	}
}
