import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { AssetRecord } from '../../../server/src/assets/types';
import { maxSuggested, minSuggestScore, suggestAssets } from '../../../server/src/launch/suggest';
import { SuggestIndex, suggestIndexFormat } from '../../../server/src/launch/suggestIndex';
import { LibrarySearch, type SearchDocument } from '../../../server/src/search/librarySearch';
import { openDesk } from '../../helpers/deskFixture';
import { tempDir } from '../../helpers/temp';

let counter = 0;
function asset(name: string, fields: Partial<AssetRecord> = {}): AssetRecord {
	const id = `a-${(++counter).toString(16).padStart(16, '0')}`;
	return {
		id, name, kind: '', about: '', working_dir: '', engine: 'snapshot', picked_version: 1, remote: '', branch: '', url: '', notes: '', tags: [],
		created_at: '', created_by: 'test', about_model_written: false, derived_from: '', derived_from_version: 0, checks: [], retired: false, ...fields,
	};
}

/** Members with the text they are matched on. */
function project(members: Array<[AssetRecord, string]>, main?: AssetRecord) {
	const all = members.map(([a]) => a);
	const documents: SearchDocument[] = members.map(([a, text]) => ({ id: a.id, name: a.name, about: a.about, text }));
	return { library: all, members: all, mainAssetId: main?.id ?? '', plugged: new Set<string>(), index: new LibrarySearch(documents) };
}

describe('launch-card suggestions (§05)', () => {
	it('ranks word matches from the members, with the heaviest terms as the reason and the score to 2 decimals', async () => {
		const billing = asset('billing');
		const design = asset('design');
		const ops = asset('ops');
		const ctx = project([[billing, 'invoice rounding invoice totals'], [design, 'colours spacing'], [ops, 'deploy runbook']]);
		const suggestions = await suggestAssets({ ...ctx, ticket: 'Invoice rounding is off by a cent' });
		assert.deepEqual(suggestions.map((s) => s.asset_id), [billing.id]);
		assert.equal(suggestions[0]!.named, false);
		assert.match(suggestions[0]!.reason, /^matches “(invoice|rounding)”, “(invoice|rounding)”$/);
		assert.equal(suggestions[0]!.score, Math.round(suggestions[0]!.score! * 100) / 100);
	});

	it('skips a word found in every member (with two or more), ignores words under four runes and text in code', async () => {
		const a = asset('alpha');
		const b = asset('beta');
		const ctx = project([[a, 'service cache eviction'], [b, 'service queue api']]);
		assert.deepEqual(await suggestAssets({ ...ctx, ticket: 'The service is slow' }), [], '“service” is in every member');
		assert.deepEqual(await suggestAssets({ ...ctx, ticket: 'api api api' }), [], '“api” has three runes');
		assert.deepEqual(await suggestAssets({ ...ctx, ticket: 'Fix `eviction` now\n```\nqueue\n```' }), [], 'code is dropped');
		assert.deepEqual((await suggestAssets({ ...ctx, ticket: 'cache eviction' })).map((s) => s.asset_id), [a.id]);
		const single = project([[a, 'service cache eviction']]);
		assert.deepEqual((await suggestAssets({ ...single, ticket: 'service' })).map((s) => s.asset_id), [a.id], 'with one member the word counts');
	});

	it('never offers the main asset, retired or plugged assets by words; caps word matches at three and breaks ties by name', async () => {
		const members: Array<[AssetRecord, string]> = ['delta', 'charlie', 'bravo', 'alpha', 'echo'].map((n) => [asset(n), 'pagination cursor']);
		const main = asset('main-repo');
		const retired = asset('retired-one', { retired: true });
		const plugged = asset('plugged-one');
		const filler = asset('filler');
		const ctx = project([...members, [main, 'pagination cursor'], [retired, 'pagination cursor'], [plugged, 'pagination cursor'], [filler, 'unrelated words']], main);
		(ctx.plugged as Set<string>).add(plugged.id);
		const suggestions = await suggestAssets({ ...ctx, ticket: 'cursor pagination' });
		assert.equal(maxSuggested, 3);
		assert.deepEqual(suggestions.map((s) => s.name), ['alpha', 'bravo', 'charlie'], 'five equal scores: the first three by name, a fourth is cut');
	});

	it('lists only a summed weight of at least 0.2', () => {
		const docs: SearchDocument[] = Array.from({ length: 30 }, (_, i) => ({ id: `d${i}`, name: `doc${i}`, about: '', text: i < 29 ? 'common words everywhere' : 'common words everywhere rareterm' }));
		const search = new LibrarySearch(docs);
		const [hit] = search.search('rareterm');
		assert.ok(hit);
		assert.equal(minSuggestScore, 0.2);
		assert.deepEqual(search.search('rareterm', { minScore: hit.score + 0.01 }), [], 'just under the threshold: not listed');
		assert.equal(search.search('rareterm', { minScore: hit.score - 0.01 }).length, 1);
	});

	it('puts assets the ticket names first, by id (with a version) or by a path under their folder, uncapped', async () => {
		const a = asset('one');
		const b = asset('two', { working_dir: '/srv/data/two' });
		const c = asset('three');
		const d = asset('four');
		const ctx = project([[a, ''], [b, ''], [c, ''], [d, '']]);
		const ticket = `Use ${a.id} v3 and ${c.id}, ${d.id}; the CSV is /srv/data/two/input.csv. Also ${a.id} again.`;
		const suggestions = await suggestAssets({ ...ctx, ticket, library: [...ctx.library, asset('other')] });
		assert.deepEqual(
			suggestions.map((s) => [s.name, s.reason]),
			[
				['one', 'named in the ticket at v3'],
				['three', 'named in the ticket'],
				['four', 'named in the ticket'],
				['two', 'named in the ticket'],
			],
		);
		assert.equal(suggestions[0]!.version, 3);
	});

	it('offers a skill as instructions, matched on its SKILL.md description, never its body', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const make = (name: string, skill: string) => {
			const dir = path.join(root, name);
			fs.mkdirSync(dir);
			fs.writeFileSync(path.join(dir, 'SKILL.md'), skill);
			return desk.library.importDir({ dir, project: 'p', main: false });
		};
		const reviewer = (await make('reviewer', '---\nname: reviewer\ndescription: Reviews database migrations\n---\nBody mentions kubernetes deployments.\n')).asset;
		const other = (await make('other', '---\nname: other\ndescription: Writes release notes\n---\nNothing here.\n')).asset;
		const members = [reviewer, other];
		const documents = await Promise.all(members.map((a) => desk.library.matchDocument(a)));
		const input = { library: members, members, mainAssetId: '', plugged: new Set<string>(), index: new LibrarySearch(documents) };
		const byDescription = await suggestAssets({ ...input, ticket: 'Check the migrations' });
		assert.deepEqual(byDescription.map((s) => [s.name, s.role]), [['reviewer', 'instructions']]);
		assert.deepEqual(await suggestAssets({ ...input, ticket: 'kubernetes deployments' }), [], 'the body is never matched');
	});
});

describe('the suggestion index', () => {
	it('is persisted with a format version and updated only for members that changed', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const made = [];
		for (const name of ['alpha', 'beta', 'gamma']) {
			const { asset } = await desk.library.newAsset({ name, project: 'p', madeBy: 'user' });
			fs.writeFileSync(path.join(asset.working_dir, 'notes.md'), `${name} notes about caching\n`);
			await desk.library.snapshot(asset.id, { madeBy: 'user' });
			made.push(desk.library.getAsset(asset.id));
		}
		const file = path.join(root, 'suggest-index.json');
		const logger = { error() {}, warn() {}, info() {}, debug() {} };
		const read: string[] = [];
		const documentOf = async (a: AssetRecord) => {
			read.push(a.name);
			return desk.library.matchDocument(a, 'version');
		};
		const keyOf = (assets: readonly AssetRecord[]) => desk.library.matchKeys(assets);
		const index = SuggestIndex.open(file, logger);
		assert.equal(await index.update(made, keyOf, documentOf), 3);
		index.flush();
		assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).format, suggestIndexFormat);
		read.length = 0;
		const reopened = SuggestIndex.open(file, logger);
		assert.equal(await reopened.update(made, keyOf, documentOf), 0, 'the saved index is current: nothing is read');
		assert.deepEqual(read, []);
		fs.writeFileSync(path.join(made[1]!.working_dir, 'notes.md'), 'beta notes about zeppelins\n');
		await desk.library.snapshot(made[1]!.id, { madeBy: 'user' });
		const fresh = made.map((a) => desk.library.getAsset(a.id));
		assert.equal(await reopened.update(fresh, keyOf, documentOf), 1);
		assert.deepEqual(read, ['beta'], 'only the asset with a new version is read again');
		assert.deepEqual(reopened.index.search('zeppelins').map((h) => h.name), ['beta']);
		assert.equal(await reopened.update(fresh.slice(0, 2), keyOf, documentOf), 1, 'a member that left is dropped');
		reopened.flush();
		fs.writeFileSync(file, JSON.stringify({ format: 99, keys: {}, index: {} }));
		assert.equal(await SuggestIndex.open(file, logger).update(fresh, keyOf, documentOf), 3, 'an unknown format is rebuilt');
	});
});
