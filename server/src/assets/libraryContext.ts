import { DeskError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { Environment, GitReader, LibraryStore, SnapshotFiles } from './ports';
import type { AssetRecord, SnapshotVersion } from './types';

/** `a-` and 16 hex digits (glossary: Asset). */
export const assetIdPattern = /^a-[0-9a-f]{16}$/;

/**
 * What every part of the library works through: its ports (./ports) and the lookups they all make
 * (an asset by id, a snapshot version, the time, a git read whose failure is named).
 */
export class LibraryContext {
	constructor(
		readonly store: LibraryStore,
		readonly git: GitReader,
		readonly snapshots: SnapshotFiles,
		readonly env: Environment,
		readonly logger: Logger,
	) {}

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

	snapshotVersionOf(asset: AssetRecord, n: number): SnapshotVersion {
		const version = this.store.snapshotVersion(asset.id, n);
		if (!version) {
			throw new DeskError('asset.noVersion', `${asset.name} has no version ${n}.`, { id: asset.id, version: n });
		}
		return version;
	}

	async readGit<T>(top: string, read: () => Promise<T>): Promise<T> {
		try {
			return await read();
		} catch (error) {
			if (error instanceof DeskError) {
				throw error;
			}
			throw new DeskError(
				'git.unreadable',
				`Could not read the git repository ${top}: ${(error as Error).message}`,
				{ dir: top },
				{ cause: error },
			);
		}
	}

	now(): string {
		return this.env.now().toISOString();
	}
}
