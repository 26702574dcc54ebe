import { DeskError } from '../core/errors';
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
 * Which walk of a snapshot asset's folder its match key comes from (see SearchText.matchKeys):
 * - `now`: a walk begun now;
 * - `last`: the last walk that ended, whatever its age (a walk still going, or one begun now, for a
 *   folder no walk has ended for yet);
 * - a number of milliseconds: a walk begun within that time (one still going included), else one begun now.
 */
export type FolderWalk = 'now' | 'last' | number;

/**
 * The text an asset is matched on (glossary: Suggestion) and the library search over it: names, abouts, the text of
 * files at the version go would freeze, a skill's SKILL.md description.
 */
export class SearchText {
	/**
	 * The walks of each snapshot asset's folder for its key (see matchKeys): the last that ended, with
	 * when it began and what it found, and one still going.
	 */
	private readonly folderChecks = new Map<
		string,
		{
			folder: string;
			ended?: { at: number; state: string };
			walking?: { at: number; state: Promise<string> };
		}
	>();

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
	 * would freeze (AtGo: a folder with working changes as go would snapshot it, a repository at its
	 * branch tip); a skill only by its name and its SKILL.md description there, never its body.
	 */
	async matchDocument(asset: AssetRecord): Promise<SearchDocument> {
		if (asset.kind === 'skill') {
			const skill = await this.skillOf(asset);
			return { id: asset.id, name: asset.name, about: skill?.description ?? '', text: '' };
		}
		return { id: asset.id, name: asset.name, about: asset.about, text: await this.searchText(asset) };
	}

	/**
	 * Keys of what matchDocument reads: a key changes when its asset is renamed, described, retired or
	 * given another kind, and when what go would freeze changes: a repository's branch tip, a notes
	 * asset's text, a snapshot asset's picked version or its folder. A folder is checked as AtGo
	 * checks it, by a walk against the snapshot engine's stat cache (a file is read only when its
	 * size, times or inode changed), and its key is the manifest of what the walk found: the picked
	 * version's when the folder has no working changes, the working state's when it has. `walk` says
	 * which walk (see FolderWalk).
	 */
	async matchKeys(assets: readonly AssetRecord[], walk: FolderWalk = 'now'): Promise<Map<string, string>> {
		const keys = new Map<string, string>();
		for (const asset of assets) {
			let source: string;
			if (asset.engine === 'snapshot') {
				const folder = this.folderState(asset, walk);
				source = `${asset.picked_version}:${await folder.state}`;
				if (folder.walked) {
					// A walk runs in synchronous stretches: requests get their turn between folders.
					await new Promise<void>((resolve) => setImmediate(resolve));
				}
			} else if (asset.engine === 'git') {
				source = (await this.ctx.git.branchTip(asset.working_dir, asset.branch).catch(() => undefined)) ?? '';
			} else {
				source = `${asset.notes.length}:${asset.notes.slice(0, 64)}:${asset.notes.slice(-64)}`;
			}
			keys.set(asset.id, [asset.name, asset.about, asset.kind, asset.retired ? 'retired' : '', source].join('\u0000'));
		}
		return keys;
	}

	/**
	 * The manifest hash of a snapshot asset's folder as the walk `walk` asks for finds it (or why it
	 * cannot be read), and whether that walk began now.
	 */
	private folderState(asset: AssetRecord, walk: FolderWalk): { state: Promise<string>; walked: boolean } {
		const now = Date.now();
		let checks = this.folderChecks.get(asset.id);
		if (checks?.folder !== asset.working_dir) {
			checks = { folder: asset.working_dir };
			this.folderChecks.set(asset.id, checks);
		}
		if (walk === 'last' && checks.ended) {
			return { state: Promise.resolve(checks.ended.state), walked: false };
		}
		const latest = checks.walking ?? checks.ended;
		if (latest && (walk === 'last' || (typeof walk === 'number' && now - latest.at < walk))) {
			return { state: Promise.resolve(latest.state), walked: false };
		}
		const found = this.ctx.snapshots.scan(asset.id, asset.working_dir, { store: false }).then(
			(scan) => scan.manifestHash,
			// Go would refuse it and its text is empty: the key changes once the folder can be read again.
			(error: unknown) => `unreadable ${error instanceof DeskError ? error.code : 'error'}`,
		);
		const walking = { at: now, state: found };
		checks.walking = walking;
		void found.then((state) => {
			// A walk that began later and ended first has the newer state.
			if (!checks.ended || checks.ended.at <= walking.at) {
				checks.ended = { at: walking.at, state };
			}
			if (checks.walking === walking) {
				checks.walking = undefined;
			}
		});
		return { state: found, walked: true };
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
	private async searchText(asset: AssetRecord): Promise<string> {
		if (asset.engine === 'none') {
			return asset.notes.slice(0, suggestAssetCap);
		}
		let atGo: AtGo;
		try {
			atGo = await this.versions.atGo(asset.id);
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
