import { DeskError } from '../core/errors';
import { validateChecks } from './checks';
import type { LibraryContext } from './libraryContext';
import type { AssetRecord, AssetSummary, ProjectRecord, UsedIn } from './types';
import type { Versions } from './versions';

/** At most this many tags per asset (glossary: Tags and about). */
export const maxTags = 16;
/** `key` or `key:value`, lowercase letters, digits and hyphens (glossary: Tags and about). */
export const tagPattern = /^[a-z0-9-]+(:[a-z0-9-]+)?$/;

/** One plug of a launch as "used in" records it: the asset, its role and the version launched. */
export interface LaunchedPlug {
	id: string;
	role: string;
	version: number;
}

/**
 * What is said about an asset and what the Assets view lists (glossary: Tags and about, Checks, Retired, Used in): tags,
 * about, checks, retired, "used in", and the summaries of assets and projects.
 */
export class AssetMetadata {
	constructor(
		private readonly ctx: LibraryContext,
		private readonly versions: Versions,
	) {}

	/** asset_tags (glossary: Tags and about): replaces the tags; at most 16, each `key` or `key:value` of lowercase letters, digits and hyphens. */
	setTags(id: string, tags: string[]): AssetRecord {
		const asset = this.ctx.getAsset(id);
		const unique = [...new Set(tags)];
		const bad = unique.filter((t) => !tagPattern.test(t));
		if (bad.length > 0) {
			throw new DeskError(
				'asset.badTag',
				`Not a tag: ${bad.map((t) => JSON.stringify(t)).join(', ')}. A tag is key or key:value in lowercase letters, digits and hyphens.`,
				{ tags: bad },
			);
		}
		if (unique.length > maxTags) {
			throw new DeskError('asset.badTag', `${unique.length} tags; an asset has at most ${maxTags}.`, {
				count: unique.length,
				limit: maxTags,
			});
		}
		this.ctx.store.batch((writes) => writes.updateAsset(asset.id, { tags: unique }));
		return this.ctx.getAsset(asset.id);
	}

	/**
	 * asset_describe (glossary: Tags and about): the one-line about. `modelWritten` when a model wrote
	 * it (an agent's desk tool call): it is taken and marked `about_model_written` while the about is
	 * empty or a model's, and refused with `asset.aboutByPerson` over an about a person wrote, since
	 * the person's own text wins. A person's text replaces any and clears the mark.
	 */
	describe(id: string, about: string, modelWritten = false): AssetRecord {
		const asset = this.ctx.getAsset(id);
		const line = about.replace(/\s+/g, ' ').trim();
		if (line.length > 500) {
			throw new DeskError(
				'asset.badName',
				`An about is one line of at most 500 characters (this one has ${line.length}).`,
				{ length: line.length },
			);
		}
		return this.ctx.store.batch((writes) => {
			// Read in the write: the person may have written it a moment ago, in another window.
			const current = writes.getAsset(asset.id) ?? asset;
			const persons = current.about !== '' && !current.about_model_written;
			if (modelWritten && persons) {
				if (current.about === line) {
					// The person's words already: they stay theirs.
					return current;
				}
				throw new DeskError(
					'asset.aboutByPerson',
					`The about of ${current.name} was written by a person; a model's text does not replace it.`,
					{ id: current.id },
				);
			}
			writes.updateAsset(current.id, { about: line, about_model_written: modelWritten && line !== '' });
			return writes.getAsset(current.id)!;
		});
	}

	/**
	 * Retire / unretire (glossary: Retired): out of the lists and suggestions, never deleted. Retiring
	 * answers the asset's open proposal to retire it too, as accepted by `by` (who retired it), in the
	 * same transaction: the person did what it asked, and it must not wait on the row for a later unretire.
	 */
	setRetired(id: string, retired: boolean, by: string): AssetRecord {
		const asset = this.ctx.getAsset(id);
		const at = this.ctx.now();
		this.ctx.store.batch((writes) => {
			writes.updateAsset(asset.id, { retired });
			if (retired) {
				writes.acceptRetireProposals(asset.id, by, at);
			}
		});
		return this.ctx.getAsset(asset.id);
	}

	/** asset checks (glossary: Checks): stored and validated; runs enforce them. */
	setChecks(id: string, value: unknown): AssetRecord {
		const asset = this.ctx.getAsset(id);
		const checks = validateChecks(value);
		this.ctx.store.batch((writes) => writes.updateAsset(asset.id, { checks }));
		return this.ctx.getAsset(asset.id);
	}

	/** Records the plugs of a launch for "used in" (glossary: Used in), all of them in one transaction. */
	recordLaunch(launchId: string, project: string, plugs: readonly LaunchedPlug[], at: string): void {
		this.ctx.store.batch((writes) => {
			for (const plug of plugs) {
				writes.insertLaunchPlug({
					launch_id: launchId,
					project,
					asset_id: plug.id,
					role: plug.role,
					version: plug.version,
					launched_at: at,
				});
			}
		});
	}

	/** "Used in" (glossary: Used in): the launch records that plugged the asset, with role and frozen version. */
	usedIn(id: string): UsedIn[] {
		return this.ctx.store.usedIn(this.ctx.getAsset(id).id);
	}

	listProjects(): ProjectRecord[] {
		return this.ctx.store.listProjects();
	}

	allAssets(): AssetRecord[] {
		return this.ctx.store.listAssets();
	}

	/** A project's member assets, in the order they joined. */
	listProjectAssets(project: string): AssetRecord[] {
		return this.ctx.store.projectAssets(project);
	}

	/**
	 * Assets with what the Assets view shows of them; limited to one project's when `project` is given.
	 * A handful of reads however many assets there are: the view asks for this on every refresh.
	 */
	async listAssets(project?: string): Promise<AssetSummary[]> {
		const projects = this.ctx.store.listProjects();
		let assets: AssetRecord[];
		if (project !== undefined) {
			if (!projects.some((p) => p.name === project)) {
				throw new DeskError('project.notFound', `No project named ${JSON.stringify(project)}.`, { project });
			}
			assets = this.ctx.store.projectAssets(project);
		} else {
			assets = this.ctx.store.listAssets();
		}
		return this.summaries(assets, projects);
	}

	/** One asset with what the Assets view shows of it. */
	async assetSummary(id: string): Promise<AssetSummary> {
		const [summary] = await this.summaries([this.ctx.getAsset(id)], this.ctx.store.listProjects());
		return summary!;
	}

	private async summaries(assets: readonly AssetRecord[], projects: readonly ProjectRecord[]): Promise<AssetSummary[]> {
		const mainOf = new Map(projects.map((p) => [p.name, p.main_asset]));
		const memberships = new Map<string, Array<{ name: string; main: boolean }>>();
		for (const { project, asset_id } of this.ctx.store.memberships()) {
			const list = memberships.get(asset_id) ?? [];
			list.push({ name: project, main: mainOf.get(project) === asset_id });
			memberships.set(asset_id, list);
		}
		const snapshotFacts = assets.some((a) => a.engine === 'snapshot')
			? this.ctx.store.snapshotFacts()
			: new Map<string, { versions: number; files: number }>();
		const summaries: AssetSummary[] = [];
		for (const asset of assets) {
			let facts: Pick<AssetSummary, 'version_count' | 'file_count' | 'problem'> = { version_count: 0, file_count: 0 };
			if (asset.engine === 'snapshot') {
				const known = snapshotFacts.get(asset.id);
				facts = { version_count: known?.versions ?? 0, file_count: known?.files ?? 0 };
			} else if (asset.engine === 'git') {
				facts = await this.gitFacts(asset);
			}
			summaries.push({ ...asset, projects: memberships.get(asset.id) ?? [], ...facts });
		}
		return summaries;
	}

	private async gitFacts(asset: AssetRecord): Promise<Pick<AssetSummary, 'version_count' | 'file_count' | 'problem'>> {
		try {
			const history = await this.versions.gitHistory(asset);
			return {
				version_count: history.count,
				file_count: history.tip ? await this.ctx.git.fileCount(asset.working_dir, history.tip) : 0,
			};
		} catch (error) {
			return {
				version_count: 0,
				file_count: 0,
				problem: `could not read ${asset.working_dir}: ${(error as Error).message}`,
			};
		}
	}
}
