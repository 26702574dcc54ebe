import type { LibraryContext } from './libraryContext';
import { parseSkillFile } from './skill';
import type { AssetRecord, AtGo } from './types';
import type { Versions } from './versions';
import {
	LibrarySearch,
	suggestAssetCap,
	suggestFileCap,
	suggestFilesPerAsset,
	type SearchDocument,
	type SearchHit,
} from '../search/librarySearch';

/**
 * The text an asset is matched on (glossary: Suggestion) and the library search over it: names, abouts, the text of
 * files at the version go would freeze, a skill's SKILL.md description.
 */
export class SearchText {
	constructor(
		private readonly ctx: LibraryContext,
		private readonly versions: Versions,
	) {}

	/**
	 * asset_search (glossary: Suggestion): BM25 over the whole library (retired assets left out), each asset matched on
	 * its name, its about and the text of its files at the version go would freeze.
	 */
	async search(query: string, limit = 20): Promise<SearchHit[]> {
		const documents: SearchDocument[] = [];
		for (const asset of this.ctx.store.listAssets()) {
			if (!asset.retired) {
				documents.push(await this.matchDocument(asset));
			}
		}
		return new LibrarySearch(documents).search(query, { limit });
	}

	/**
	 * What an asset is matched on (glossary: Suggestion): its name, its about and its text files at the version go
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
		const manifests = this.ctx.store.pickedManifests();
		const keys = new Map<string, string>();
		for (const asset of assets) {
			let source: string;
			if (asset.engine === 'snapshot') {
				source = `${asset.picked_version}:${manifests.get(asset.id) ?? ''}`;
			} else if (asset.engine === 'git') {
				source = (await this.ctx.git.branchTip(asset.working_dir, asset.branch).catch(() => undefined)) ?? '';
			} else {
				source = `${asset.notes.length}:${asset.notes.slice(0, 64)}:${asset.notes.slice(-64)}`;
			}
			keys.set(asset.id, [asset.name, asset.about, asset.kind, asset.retired ? 'retired' : '', source].join('\u0000'));
		}
		return keys;
	}

	/** The SKILL.md front matter of an asset at the version go would freeze, when it is valid (glossary: Kind). */
	async skillOf(asset: AssetRecord): Promise<{ name: string; description: string } | undefined> {
		if (asset.engine === 'none') {
			return undefined;
		}
		try {
			const atGo = await this.versions.atGo(asset.id);
			const bytes =
				atGo.engine === 'snapshot' && atGo.working_changes
					? this.ctx.snapshots.readWorkingFile(asset.working_dir, 'SKILL.md', suggestFileCap)
					: await this.versions.cat(asset.id, 'SKILL.md', atGo.version);
			return bytes ? parseSkillFile(Buffer.from(bytes).toString('utf8')) : undefined;
		} catch {
			return undefined;
		}
	}

	/** The text of an asset's files that it is matched on, within the caps of a suggestion (glossary: Suggestion). */
	private async searchText(asset: AssetRecord, at: 'atGo' | 'version' = 'atGo'): Promise<string> {
		if (asset.engine === 'none') {
			return asset.notes.slice(0, suggestAssetCap);
		}
		let atGo: AtGo;
		try {
			if (at === 'version' && asset.engine === 'snapshot') {
				const version = this.ctx.snapshotVersionOf(asset, asset.picked_version);
				atGo = { engine: 'snapshot', version: version.version, working_changes: false, manifest: version.manifest };
			} else {
				atGo = await this.versions.atGo(asset.id);
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
			for (const file of await this.ctx.readGit(asset.working_dir, () =>
				this.ctx.git.treeFiles(asset.working_dir, atGo.commit),
			)) {
				if (total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
					break;
				}
				take(await this.ctx.git.readBlob(asset.working_dir, file.oid).catch(() => undefined));
			}
		} else if (atGo.working_changes) {
			const scan = await this.ctx.snapshots.scan(asset.id, asset.working_dir, { store: false });
			for (const file of scan.manifest.files) {
				if (total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
					break;
				}
				take(this.ctx.snapshots.readWorkingFile(asset.working_dir, file.path, suggestFileCap));
			}
		} else {
			for (const file of this.ctx.snapshots.readManifest(atGo.manifest).files) {
				if (total >= suggestAssetCap || texts.length >= suggestFilesPerAsset) {
					break;
				}
				take(this.ctx.snapshots.readBlob(file.hash));
			}
		}
		return texts.join('\n');
	}
}
