import type { AdoptedGitDir } from '../git/gitDir';
import type { AssetChanges, ClientRequestKey, LibraryReads, LibraryStore, LibraryWrites } from '../assets/ports';
import type {
	AssetCheck,
	AssetRecord,
	Engine,
	HeadObservation,
	MadeBy,
	ProjectRecord,
	SnapshotVersion,
	UsedIn,
} from '../assets/types';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';
import { recordAnswer } from './clientRequests';
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
	about_model_written: number;
	derived_from: string;
	derived_from_version: number;
	checks: string;
	retired: number;
}

const assetColumns =
	'id, name, kind, about, working_dir, engine, picked_version, remote, branch, url, notes, tags, created_at, created_by, about_model_written, derived_from, derived_from_version, checks, retired';

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
		const row = this.tx.get<AssetRow>(
			`SELECT ${assetColumns} FROM assets WHERE engine = 'git' AND working_dir = ? AND remote = ?`,
			[workingDir, remote],
		);
		return row && toAsset(row);
	}

	listAssets(): AssetRecord[] {
		return this.tx.all<AssetRow>(`SELECT ${assetColumns} FROM assets ORDER BY name COLLATE NOCASE, id`).map(toAsset);
	}

	getProject(name: string): ProjectRecord | undefined {
		return this.tx.get<ProjectRecord>('SELECT name, path, main_asset, created_at FROM projects WHERE name = ?', [name]);
	}

	getProjectByPath(path: string): ProjectRecord | undefined {
		return this.tx.get<ProjectRecord>(
			"SELECT name, path, main_asset, created_at FROM projects WHERE path = ? AND path <> '' ORDER BY created_at LIMIT 1",
			[path],
		);
	}

	listProjects(): ProjectRecord[] {
		return this.tx.all<ProjectRecord>('SELECT name, path, main_asset, created_at FROM projects ORDER BY name');
	}

	snapshotVersions(assetId: string): SnapshotVersion[] {
		return this.tx
			.all<VersionRow>(
				'SELECT version, manifest, file_count, bytes, note, made_at, made_by FROM snapshot_versions WHERE asset_id = ? ORDER BY version',
				[assetId],
			)
			.map(toVersion);
	}

	snapshotVersion(assetId: string, version: number): SnapshotVersion | undefined {
		const row = this.tx.get<VersionRow>(
			'SELECT version, manifest, file_count, bytes, note, made_at, made_by FROM snapshot_versions WHERE asset_id = ? AND version = ?',
			[assetId, version],
		);
		return row && toVersion(row);
	}

	latestSnapshotVersion(assetId: string): SnapshotVersion | undefined {
		const row = this.tx.get<VersionRow>(
			'SELECT version, manifest, file_count, bytes, note, made_at, made_by FROM snapshot_versions WHERE asset_id = ? ORDER BY version DESC LIMIT 1',
			[assetId],
		);
		return row && toVersion(row);
	}

	projectAssets(project: string): AssetRecord[] {
		const columns = assetColumns
			.split(', ')
			.map((c) => `a.${c}`)
			.join(', ');
		return this.tx
			.all<AssetRow>(
				`SELECT ${columns} FROM project_assets p JOIN assets a ON a.id = p.asset_id WHERE p.project = ? ORDER BY p.position`,
				[project],
			)
			.map(toAsset);
	}

	snapshotFacts(): Map<string, { versions: number; files: number }> {
		// Versions are numbered 1..n with no gaps, so the highest number is the count (read from the key).
		const rows = this.tx.all<{ id: string; versions: number | null; files: number | null }>(
			`SELECT a.id AS id, (SELECT MAX(s.version) FROM snapshot_versions s WHERE s.asset_id = a.id) AS versions, v.file_count AS files
			 FROM assets a LEFT JOIN snapshot_versions v ON v.asset_id = a.id AND v.version = a.picked_version
			 WHERE a.engine = 'snapshot'`,
		);
		return new Map(rows.map((r) => [r.id, { versions: r.versions ?? 0, files: r.files ?? 0 }]));
	}

	memberships(): Array<{ project: string; asset_id: string }> {
		return this.tx.all<{ project: string; asset_id: string }>(
			'SELECT project, asset_id FROM project_assets ORDER BY project, position',
		);
	}

	adoptedGitDir(workingDir: string): AdoptedGitDir | undefined {
		const row = this.tx.get<{ git_dir: string; git_dir_allowed: number }>(
			"SELECT git_dir, git_dir_allowed FROM assets WHERE engine = 'git' AND working_dir = ? AND git_dir <> '' ORDER BY created_at DESC, id LIMIT 1",
			[workingDir],
		);
		return row && { gitDir: row.git_dir, allowed: row.git_dir_allowed === 1 };
	}

	gitTip(assetId: string): { tip: string; count: number } | undefined {
		return this.tx.get<{ tip: string; count: number }>('SELECT tip, count FROM git_tips WHERE asset_id = ?', [assetId]);
	}

	usedIn(assetId: string): UsedIn[] {
		return this.tx.all<UsedIn>(
			'SELECT launch_id, project, role, version, launched_at FROM launch_plugs WHERE asset_id = ? ORDER BY launched_at, launch_id',
			[assetId],
		);
	}

	headObservations(assetId: string): HeadObservation[] {
		return this.tx
			.all<{ commit_oid: string; head_at: string; made_by: string }>(
				'SELECT commit_oid, head_at, made_by FROM git_heads WHERE asset_id = ? ORDER BY head_at',
				[assetId],
			)
			.map((r) => ({ commit: r.commit_oid, head_at: r.head_at, made_by: r.made_by as MadeBy }));
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
			asset.about_model_written ? 1 : 0,
			asset.derived_from,
			asset.derived_from_version,
			JSON.stringify(asset.checks),
			asset.retired ? 1 : 0,
		];
		this.writer.run(`INSERT INTO assets (${assetColumns}) VALUES (${values.map(() => '?').join(', ')})`, values);
	}

	updateAsset(id: string, changes: AssetChanges): void {
		const columns: string[] = [];
		const values: SqlValue[] = [];
		for (const [key, value] of Object.entries(changes) as Array<
			[keyof AssetChanges, AssetChanges[keyof AssetChanges]]
		>) {
			if (value === undefined) {
				continue;
			}
			columns.push(`${key} = ?`);
			values.push(typeof value === 'boolean' ? (value ? 1 : 0) : Array.isArray(value) ? JSON.stringify(value) : value);
		}
		if (columns.length > 0) {
			this.writer.run(`UPDATE assets SET ${columns.join(', ')} WHERE id = ?`, [...values, id]);
		}
	}

	setGitDir(assetId: string, gitDir: AdoptedGitDir): void {
		this.writer.run('UPDATE assets SET git_dir = ?, git_dir_allowed = ? WHERE id = ?', [
			gitDir.gitDir,
			gitDir.allowed ? 1 : 0,
			assetId,
		]);
	}

	setGitTip(assetId: string, tip: string, count: number, seenAt: string): void {
		this.writer.run(
			'INSERT INTO git_tips (asset_id, tip, count, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (asset_id) DO UPDATE SET tip = excluded.tip, count = excluded.count, seen_at = excluded.seen_at',
			[assetId, tip, count, seenAt],
		);
	}

	answer(request: ClientRequestKey | undefined, result: unknown, at: string): void {
		recordAnswer(this.writer, request, result, at);
	}

	insertLaunchPlug(plug: UsedIn & { asset_id: string }): void {
		this.writer.run(
			'INSERT INTO launch_plugs (launch_id, project, asset_id, role, version, launched_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (launch_id, asset_id) DO NOTHING',
			[plug.launch_id, plug.project, plug.asset_id, plug.role, plug.version, plug.launched_at],
		);
	}

	insertSnapshotVersion(assetId: string, version: SnapshotVersion): void {
		this.writer.run(
			'INSERT INTO snapshot_versions (asset_id, version, manifest, file_count, bytes, note, made_at, made_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
			[
				assetId,
				version.version,
				version.manifest,
				version.file_count,
				version.bytes,
				version.note,
				version.made_at,
				version.made_by,
			],
		);
	}

	insertProject(project: ProjectRecord): void {
		this.writer.run('INSERT INTO projects (name, path, main_asset, created_at) VALUES (?, ?, ?, ?)', [
			project.name,
			project.path,
			project.main_asset,
			project.created_at,
		]);
	}

	setMainAsset(project: string, assetId: string): void {
		this.writer.run('UPDATE projects SET main_asset = ? WHERE name = ?', [assetId, project]);
	}

	setProjectPath(project: string, path: string): void {
		this.writer.run('UPDATE projects SET path = ? WHERE name = ?', [path, project]);
	}

	addProjectAsset(project: string, assetId: string, addedAt: string): void {
		this.writer.run(
			`INSERT INTO project_assets (project, asset_id, position, added_at)
			 SELECT ?, ?, COALESCE(MAX(position), 0) + 1, ? FROM project_assets WHERE project = ?
			 ON CONFLICT (project, asset_id) DO NOTHING`,
			[project, assetId, addedAt, project],
		);
	}

	acceptRetireProposals(assetId: string, by: string, at: string): void {
		this.writer.run(
			"UPDATE retire_proposals SET state = 'accepted', answered_by = ?, answered_at = ? WHERE asset_id = ? AND state = 'open'",
			[by, at, assetId],
		);
	}

	recordHead(assetId: string, observation: HeadObservation): boolean {
		const known = this.writer.get('SELECT 1 AS known FROM git_heads WHERE asset_id = ? AND commit_oid = ?', [
			assetId,
			observation.commit,
		]);
		if (known) {
			return false;
		}
		this.writer.run('INSERT INTO git_heads (asset_id, commit_oid, head_at, made_by) VALUES (?, ?, ?, ?)', [
			assetId,
			observation.commit,
			observation.head_at,
			observation.made_by,
		]);
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
	return {
		...row,
		engine: row.engine as Engine,
		picked_version: Number(row.picked_version),
		tags: JSON.parse(row.tags) as string[],
		about_model_written: row.about_model_written === 1,
		derived_from_version: Number(row.derived_from_version),
		checks: JSON.parse(row.checks) as AssetCheck[],
		retired: row.retired === 1,
	};
}

/** A snapshot_versions row: the record's fields, made_by as stored (checked by toVersion). */
type VersionRow = Omit<SnapshotVersion, 'made_by'> & { made_by: string };

function toVersion(row: VersionRow): SnapshotVersion {
	return { ...row, made_by: row.made_by as MadeBy };
}
