import type { LibraryReads, LibraryStore, LibraryWrites } from '../assets/ports';
import type { AssetRecord, Engine, HeadObservation, MadeBy, ProjectRecord } from '../assets/types';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';
import type { SqlValue } from './journal';

interface AssetRow {
	id: string;
	name: string;
	kind: string;
	about: string;
	working_dir: string;
	engine: string;
	picked_version: number;
	remote: string;
	branch: string;
	url: string;
	notes: string;
	tags: string;
	created_at: string;
	created_by: string;
}

const assetColumns = 'id, name, kind, about, working_dir, engine, picked_version, remote, branch, url, notes, tags, created_at, created_by';

/** Reads through the database outside a write, or through the transaction inside one. */
interface Query {
	all<Row extends object>(sql: string, params?: SqlValue[]): Row[];
	get<Row extends object>(sql: string, params?: SqlValue[]): Row | undefined;
}

class SqlLibraryReads implements LibraryReads {
	constructor(private readonly tx: Query) {}

	getAsset(id: string): AssetRecord | undefined {
		const row = this.tx.get<AssetRow>(`SELECT ${assetColumns} FROM assets WHERE id = ?`, [id]);
		return row && toAsset(row);
	}

	findGitAsset(workingDir: string, remote: string): AssetRecord | undefined {
		const row = this.tx.get<AssetRow>(`SELECT ${assetColumns} FROM assets WHERE engine = 'git' AND working_dir = ? AND remote = ?`, [workingDir, remote]);
		return row && toAsset(row);
	}

	listAssets(): AssetRecord[] {
		return this.tx.all<AssetRow>(`SELECT ${assetColumns} FROM assets ORDER BY name COLLATE NOCASE, id`).map(toAsset);
	}

	getProject(name: string): ProjectRecord | undefined {
		return this.tx.get<ProjectRecord>('SELECT name, path, main_asset, created_at FROM projects WHERE name = ?', [name]);
	}

	getProjectByPath(path: string): ProjectRecord | undefined {
		return this.tx.get<ProjectRecord>("SELECT name, path, main_asset, created_at FROM projects WHERE path = ? AND path <> '' ORDER BY created_at LIMIT 1", [path]);
	}

	listProjects(): ProjectRecord[] {
		return this.tx.all<ProjectRecord>('SELECT name, path, main_asset, created_at FROM projects ORDER BY name');
	}

	projectAssetIds(project: string): string[] {
		return this.tx.all<{ asset_id: string }>('SELECT asset_id FROM project_assets WHERE project = ? ORDER BY position', [project]).map((r) => r.asset_id);
	}

	headObservations(assetId: string): HeadObservation[] {
		return this.tx.all<{ commit_oid: string; head_at: string; made_by: string }>(
			'SELECT commit_oid, head_at, made_by FROM git_heads WHERE asset_id = ? ORDER BY head_at',
			[assetId],
		).map((r) => ({ commit: r.commit_oid, head_at: r.head_at, made_by: r.made_by as MadeBy }));
	}

}

class SqlLibraryWrites extends SqlLibraryReads implements LibraryWrites {
	constructor(private readonly writer: WriteTransaction) {
		super(writer);
	}

	insertAsset(asset: AssetRecord): void {
		const values: SqlValue[] = [
			asset.id,
			asset.name,
			asset.kind,
			asset.about,
			asset.working_dir,
			asset.engine,
			asset.picked_version,
			asset.remote,
			asset.branch,
			asset.url,
			asset.notes,
			JSON.stringify(asset.tags),
			asset.created_at,
			asset.created_by,
		];
		this.writer.run(`INSERT INTO assets (${assetColumns}) VALUES (${values.map(() => '?').join(', ')})`, values);
	}

	insertProject(project: ProjectRecord): void {
		this.writer.run('INSERT INTO projects (name, path, main_asset, created_at) VALUES (?, ?, ?, ?)', [project.name, project.path, project.main_asset, project.created_at]);
	}

	setMainAsset(project: string, assetId: string): void {
		this.writer.run('UPDATE projects SET main_asset = ? WHERE name = ?', [assetId, project]);
	}

	addProjectAsset(project: string, assetId: string, addedAt: string): void {
		this.writer.run(
			`INSERT INTO project_assets (project, asset_id, position, added_at)
			 SELECT ?, ?, COALESCE(MAX(position), 0) + 1, ? FROM project_assets WHERE project = ?
			 ON CONFLICT (project, asset_id) DO NOTHING`,
			[project, assetId, addedAt, project],
		);
	}

	recordHead(assetId: string, observation: HeadObservation): boolean {
		const known = this.writer.get('SELECT 1 AS known FROM git_heads WHERE asset_id = ? AND commit_oid = ?', [assetId, observation.commit]);
		if (known) {
			return false;
		}
		this.writer.run('INSERT INTO git_heads (asset_id, commit_oid, head_at, made_by) VALUES (?, ?, ?, ?)', [assetId, observation.commit, observation.head_at, observation.made_by]);
		return true;
	}
}

/** The asset library's records in the library database. */
export class SqlLibraryStore extends SqlLibraryReads implements LibraryStore {
	constructor(private readonly db: DurableDatabase) {
		super(db);
	}

	batch<T>(body: (writes: LibraryWrites) => T): T {
		return this.db.write((tx) => body(new SqlLibraryWrites(tx)));
	}
}

function toAsset(row: AssetRow): AssetRecord {
	return { ...row, engine: row.engine as Engine, picked_version: Number(row.picked_version), tags: JSON.parse(row.tags) as string[] };
}
