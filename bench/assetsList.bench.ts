/**
 * The list the Assets view asks for on every refresh, at library size (issue 11): a project of
 * 1,000 snapshot assets holding 126,791 versions between them (a long-tailed spread, as a real
 * library grows) and its repository, served by the real desk server over JSON-RPC. Measures
 * `desk/assets/list` for the project (p50/p95 of 30 requests; target p95 under 100 ms) beside two
 * baselines of the same run: the same list at 100 assets, and the round trip of a request that does
 * nothing (`desk/server/status`), the floor of any answer. Also prints the library database's size.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AssetRecord } from '../server/src/assets/types';
import { silentLogger } from '../server/src/core/logger';
import { Desk } from '../server/src/desk';
import { GetStatus, ListAssets, OpenWorkspace } from '../server/src/protocol/protocol';
import { DurableDatabase } from '../server/src/store/durableDatabase';
import { libraryMigrations, librarySchema } from '../server/src/store/schemas';
import { SqlLibraryStore } from '../server/src/store/sqlLibraryStore';
import { startServer } from '../test/helpers/serverProcess';
import { makeBenchRepo } from './benchRepo';

export interface AssetsListResult {
	assets: number;
	versions: number;
	databaseMb: number;
	p50Ms: number;
	p95Ms: number;
	smallAssets: number;
	smallP50Ms: number;
	smallP95Ms: number;
	floorMs: number;
}

const percentile = (values: number[], q: number) =>
	[...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/** A library of `assets` snapshot assets with `versions` versions in all, made through the store (no files). */
export async function makeLibrary(libraryDir: string, repo: string, assets: number, versions: number): Promise<void> {
	const desk = await Desk.open({ libraryDir, logger: silentLogger });
	await desk.openWorkspace([{ name: 'bench', path: repo }]);
	const manifest = desk.blobs.put(Buffer.from('{"format":1,"files":[]}'));
	desk.close();
	const db = await DurableDatabase.open({
		file: path.join(libraryDir, 'library.db'),
		schema: librarySchema,
		migrations: libraryMigrations,
		logger: silentLogger,
	});
	const store = new SqlLibraryStore(db);
	// Zipf-like: a few assets with thousands of versions, most with a few dozen.
	const weights = Array.from({ length: assets }, (_, i) => 1 / (i + 1) ** 0.8);
	const scale = versions / weights.reduce((a, b) => a + b, 0);
	let left = versions;
	const now = new Date('2026-11-01T00:00:00Z').getTime();
	for (let a = 0; a < assets; a++) {
		const count =
			a === assets - 1 ? left : Math.max(1, Math.min(left - (assets - a - 1), Math.round(weights[a]! * scale)));
		left -= count;
		const id = `a-${(0x1000000000000000n + BigInt(a)).toString(16).slice(-16)}`;
		const asset: AssetRecord = {
			id,
			name: `notes-${String(a).padStart(4, '0')}`,
			kind: a % 10 === 0 ? 'skill' : 'docs',
			about: `Working notes number ${a}`,
			working_dir: path.join(libraryDir, 'assets', 'folders', id),
			engine: 'snapshot',
			picked_version: count,
			remote: '',
			branch: '',
			url: '',
			notes: '',
			tags: ['area:bench'],
			created_at: new Date(now).toISOString(),
			created_by: 'user',
			about_model_written: false,
			derived_from: '',
			derived_from_version: 0,
			checks: [],
			retired: false,
		};
		store.batch((writes) => {
			writes.insertAsset(asset);
			for (let v = 1; v <= count; v++) {
				writes.insertSnapshotVersion(id, {
					version: v,
					manifest,
					file_count: v % 50,
					bytes: v * 1000,
					note: v === 1 ? 'adopted' : '',
					made_at: new Date(now + v * 60_000).toISOString(),
					made_by: 'user',
				});
			}
			writes.addProjectAsset('bench', id, new Date(now).toISOString());
		});
	}
	db.close();
}

async function measureList(
	assets: number,
	versions: number,
	root: string,
): Promise<{ p50: number; p95: number; floor: number; databaseMb: number }> {
	const repo = makeBenchRepo(path.join(root, `repo-${assets}`));
	const libraryDir = path.join(root, `library-${assets}`);
	await makeLibrary(libraryDir, repo, assets, versions);
	const server = await startServer(libraryDir, { logLevel: 'error' });
	try {
		await server.connection.sendRequest(OpenWorkspace.method, { folders: [{ name: 'bench', path: repo }] });
		const time = async (method: string, params: unknown) => {
			const started = process.hrtime.bigint();
			const result = await server.connection.sendRequest(method, params);
			return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
		};
		const listed = (await time(ListAssets.method, { project: 'bench' })).result as { assets: unknown[] };
		if (listed.assets.length !== assets + 1) {
			throw new Error(`the list held ${listed.assets.length} assets, not ${assets + 1}`);
		}
		const lists: number[] = [];
		const floors: number[] = [];
		for (let i = 0; i < 30; i++) {
			lists.push((await time(ListAssets.method, { project: 'bench' })).ms);
			floors.push((await time(GetStatus.method, {})).ms);
		}
		return {
			p50: percentile(lists, 0.5),
			p95: percentile(lists, 0.95),
			floor: percentile(floors, 0.5),
			databaseMb: fs.statSync(path.join(libraryDir, 'library.db')).size / (1024 * 1024),
		};
	} finally {
		await server.stop();
	}
}

export async function benchAssetsList(assets = 1000, versions = 126_791): Promise<AssetsListResult> {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-list-'));
	try {
		const big = await measureList(assets, versions, root);
		const small = await measureList(Math.max(1, Math.round(assets / 10)), Math.round(versions / 10), root);
		return {
			assets,
			versions,
			databaseMb: big.databaseMb,
			p50Ms: big.p50,
			p95Ms: big.p95,
			smallAssets: Math.max(1, Math.round(assets / 10)),
			smallP50Ms: small.p50,
			smallP95Ms: small.p95,
			floorMs: big.floor,
		};
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
}

export function formatAssetsList(r: AssetsListResult): string {
	return [
		`assets list over JSON-RPC: a project of ${r.assets} assets with ${r.versions.toLocaleString('en-US')} versions (library.db ${r.databaseMb.toFixed(1)} MB)`,
		`  desk/assets/list   p50 ${r.p50Ms.toFixed(1)} ms, p95 ${r.p95Ms.toFixed(1)} ms (target p95 < 100 ms: ${r.p95Ms < 100 ? 'met' : 'NOT met'})`,
		`  baseline: the same list at ${r.smallAssets} assets p50 ${r.smallP50Ms.toFixed(1)} ms, p95 ${r.smallP95Ms.toFixed(1)} ms (${(r.p50Ms / r.smallP50Ms).toFixed(1)}× for ${(r.assets / r.smallAssets).toFixed(0)}× the assets); an empty request's round trip ${r.floorMs.toFixed(2)} ms`,
	].join('\n');
}
