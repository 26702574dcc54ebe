import { DeskError } from '../core/errors';
import type { LibraryContext } from './libraryContext';

/** Snapshot versions laid out read-only on disk, for a run or a person to read (glossary: Mount). */
export class Mounts {
	constructor(private readonly ctx: LibraryContext) {}

	/** Lays version `n` of a snapshot asset out read-only under the library's mounts and returns its path (glossary: Mount). */
	mount(id: string, n: number): string {
		const asset = this.ctx.getAsset(id);
		if (asset.engine !== 'snapshot') {
			throw new DeskError(
				'asset.noFolder',
				`${asset.name} is a ${asset.engine === 'git' ? 'git' : 'link or notes'} asset; only snapshot versions are mounted.`,
				{ id },
			);
		}
		const version = this.ctx.snapshotVersionOf(asset, n);
		return this.ctx.snapshots.mount(asset.id, n, this.ctx.snapshots.readManifest(version.manifest));
	}
}
