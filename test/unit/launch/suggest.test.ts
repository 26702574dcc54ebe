import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { FolderWalk } from '../../../server/src/assets/searchText';
import type { AssetRecord } from '../../../server/src/assets/types';
import { isDeskError } from '../../../server/src/core/errors';
import { maxSuggested, minSuggestScore, suggestAssets } from '../../../server/src/launch/suggest';
import { firstAnswerBudgetMs, folderRecheckMs } from '../../../server/src/launch/projectLaunches';
import { SuggestIndex, suggestIndexFormat } from '../../../server/src/launch/suggestIndex';
import { NodeSuggestIndexFile } from '../../../server/src/store/suggestIndexFile';
import { LibrarySearch, type SearchDocument } from '../../../server/src/search/librarySearch';
import { openDesk, recordingLogger } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';
import { testAsset } from '../../helpers/assetRecord';

let counter = 0;
function asset(name: string, fields: Partial<AssetRecord> = {}): AssetRecord {
	const id = `a-${(++counter).toString(16).padStart(16, '0')}`;
	return testAsset(id, name, { engine: 'snapshot', ...fields });
}

/** Members with the text they are matched on. */
function project(members: Array<[AssetRecord, string]>, main?: AssetRecord) {
	const all = members.map(([a]) => a);
	const documents: SearchDocument[] = members.map(([a, text]) => ({ id: a.id, name: a.name, about: a.about, text }));
	return {
		library: all,
		members: all,
		mainAssetId: main?.id ?? '',
		plugged: new Set<string>(),
		index: new LibrarySearch(documents),
	};
}

describe('launch-card suggestions', () => {
	it('ranks word matches from the members, with the heaviest terms as the reason and the score to 2 decimals', async () => {
		const billing = asset('billing');
		const design = asset('design');
		const ops = asset('ops');
		const ctx = project([
			[billing, 'invoice rounding invoice totals'],
			[design, 'colours spacing'],
			[ops, 'deploy runbook'],
		]);
		const suggestions = await suggestAssets({ ...ctx, ticket: 'Invoice rounding is off by a cent' });
		assert.deepEqual(
			suggestions.map((s) => s.asset_id),
			[billing.id],
		);
		assert.equal(suggestions[0]!.named, false);
		assert.match(suggestions[0]!.reason, /^matches “(invoice|rounding)”, “(invoice|rounding)”$/);
		assert.equal(suggestions[0]!.score, Math.round(suggestions[0]!.score! * 100) / 100);
	});

	it('skips a word found in every member (with two or more), ignores words under four runes and text in code', async () => {
		const a = asset('alpha');
		const b = asset('beta');
		const ctx = project([
			[a, 'service cache eviction'],
			[b, 'service queue api'],
		]);
		assert.deepEqual(
			await suggestAssets({ ...ctx, ticket: 'The service is slow' }),
			[],
			'“service” is in every member',
		);
		assert.deepEqual(await suggestAssets({ ...ctx, ticket: 'api api api' }), [], '“api” has three runes');
		assert.deepEqual(
			await suggestAssets({ ...ctx, ticket: 'Fix `eviction` now\n```\nqueue\n```' }),
			[],
			'code is dropped',
		);
		assert.deepEqual(
			(await suggestAssets({ ...ctx, ticket: 'cache eviction' })).map((s) => s.asset_id),
			[a.id],
		);
		const single = project([[a, 'service cache eviction']]);
		assert.deepEqual(
			(await suggestAssets({ ...single, ticket: 'service' })).map((s) => s.asset_id),
			[a.id],
			'with one member the word counts',
		);
	});

	it('never offers the main asset, retired or plugged assets by words; caps word matches at three and breaks ties by name', async () => {
		const members: Array<[AssetRecord, string]> = ['delta', 'charlie', 'bravo', 'alpha', 'echo'].map((n) => [
			asset(n),
			'pagination cursor',
		]);
		const main = asset('main-repo');
		const retired = asset('retired-one', { retired: true });
		const plugged = asset('plugged-one');
		const filler = asset('filler');
		const ctx = project(
			[
				...members,
				[main, 'pagination cursor'],
				[retired, 'pagination cursor'],
				[plugged, 'pagination cursor'],
				[filler, 'unrelated words'],
			],
			main,
		);
		(ctx.plugged as Set<string>).add(plugged.id);
		const suggestions = await suggestAssets({ ...ctx, ticket: 'cursor pagination' });
		assert.equal(maxSuggested, 3);
		assert.deepEqual(
			suggestions.map((s) => s.name),
			['alpha', 'bravo', 'charlie'],
			'five equal scores: the first three by name, a fourth is cut',
		);
	});

	it('lists only a summed weight of at least 0.2', () => {
		const docs: SearchDocument[] = Array.from({ length: 30 }, (_, i) => ({
			id: `d${i}`,
			name: `doc${i}`,
			about: '',
			text: i < 29 ? 'common words everywhere' : 'common words everywhere rareterm',
		}));
		const search = new LibrarySearch(docs);
		const [hit] = search.search('rareterm');
		assert.ok(hit);
		assert.equal(minSuggestScore, 0.2);
		assert.deepEqual(
			search.search('rareterm', { minScore: hit.score + 0.01 }),
			[],
			'just under the threshold: not listed',
		);
		assert.equal(search.search('rareterm', { minScore: hit.score - 0.01 }).length, 1);
	});

	it('puts assets the ticket names first, by id (with a version) or by a path under their folder, uncapped', async () => {
		const a = asset('one');
		const b = asset('two', { working_dir: '/srv/data/two' });
		const c = asset('three');
		const d = asset('four');
		const ctx = project([
			[a, ''],
			[b, ''],
			[c, ''],
			[d, ''],
		]);
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

	it('never names a retired asset, by id or by a path under its folder, nor one plugged already', async () => {
		const retired = asset('old-specs', { retired: true, working_dir: '/srv/data/old' });
		const enclosing = asset('data', { working_dir: '/srv/data' });
		const plugged = asset('plugged-specs', { working_dir: '/srv/plugged' });
		const free = asset('free');
		const ctx = project([
			[retired, ''],
			[enclosing, ''],
			[plugged, ''],
			[free, ''],
		]);
		(ctx.plugged as Set<string>).add(plugged.id);
		const named = async (ticket: string) =>
			(await suggestAssets({ ...ctx, ticket })).map((s) => [s.name, s.reason] as const);
		assert.deepEqual(await named(`Use ${retired.id} v2 and ${free.id}`), [['free', 'named in the ticket']]);
		assert.deepEqual(await named(`Use ${plugged.id} and ${free.id}`), [['free', 'named in the ticket']]);
		assert.deepEqual(await named('The CSV is /srv/plugged/input.csv'), [], 'a path under a plugged folder');
		assert.deepEqual(
			await named('The CSV is /srv/data/old/input.csv'),
			[['data', 'named in the ticket']],
			'a path under a retired folder names the asset around it, which holds the file too',
		);
		assert.deepEqual(await named('Read /srv/data/old'), [['data', 'named in the ticket']]);
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
		const reviewer = (
			await make(
				'reviewer',
				'---\nname: reviewer\ndescription: Reviews database migrations\n---\nBody mentions kubernetes deployments.\n',
			)
		).asset;
		const other = (await make('other', '---\nname: other\ndescription: Writes release notes\n---\nNothing here.\n'))
			.asset;
		const members = [reviewer, other];
		const documents = await Promise.all(members.map((a) => desk.library.matchDocument(a)));
		const input = {
			library: members,
			members,
			mainAssetId: '',
			plugged: new Set<string>(),
			index: new LibrarySearch(documents),
		};
		const byDescription = await suggestAssets({ ...input, ticket: 'Check the migrations' });
		assert.deepEqual(
			byDescription.map((s) => [s.name, s.role]),
			[['reviewer', 'instructions']],
		);
		assert.deepEqual(
			await suggestAssets({ ...input, ticket: 'kubernetes deployments' }),
			[],
			'the body is never matched',
		);
	});
});

describe('named assets on a card', () => {
	it('lists a named asset until it is plugged, never a retired one, and refuses to plug a retired one', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const desk = await openDesk(path.join(root, 'library'));
		await desk.openWorkspace([{ name: 'shop', path: repo }]);
		const folder = async (name: string) => {
			const dir = path.join(root, name);
			fs.mkdirSync(dir);
			fs.writeFileSync(path.join(dir, 'notes.md'), `${name} notes\n`);
			return (await desk.library.importDir({ dir, project: 'shop', main: false })).asset;
		};
		const specs = await folder('specs');
		const old = await folder('old-specs');
		desk.library.setRetired(old.id, true, 'Jane Doe');
		const launches = await desk.launches(repo);
		launches.setTicket(`Compare ${specs.id} with ${old.id} v1 and ${path.join(old.working_dir, 'notes.md')}`);
		assert.deepEqual(
			(await launches.suggest()).map((s) => [s.name, s.reason]),
			[['specs', 'named in the ticket']],
		);
		await assert.rejects(launches.plug(old.id, 'reference'), (e) => isDeskError(e, 'launch.retired'));
		await launches.plug(specs.id, 'reference');
		assert.deepEqual(await launches.suggest(), [], 'a named asset plugged already is not offered to keep again');
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
			return desk.library.matchDocument(a);
		};
		const keyOf = (assets: readonly AssetRecord[]) => desk.library.matchKeys(assets);
		const index = SuggestIndex.open(new NodeSuggestIndexFile(file), logger);
		assert.equal(await index.update(made, keyOf, documentOf), 3);
		index.flush();
		assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).format, suggestIndexFormat);
		read.length = 0;
		const reopened = SuggestIndex.open(new NodeSuggestIndexFile(file), logger);
		assert.equal(await reopened.update(made, keyOf, documentOf), 0, 'the saved index is current: nothing is read');
		assert.deepEqual(read, []);
		fs.writeFileSync(path.join(made[1]!.working_dir, 'notes.md'), 'beta notes about zeppelins\n');
		await desk.library.snapshot(made[1]!.id, { madeBy: 'user' });
		const fresh = made.map((a) => desk.library.getAsset(a.id));
		assert.equal(await reopened.update(fresh, keyOf, documentOf), 1);
		assert.deepEqual(read, ['beta'], 'only the asset with a new version is read again');
		assert.deepEqual(
			reopened.index.search('zeppelins').map((h) => h.name),
			['beta'],
		);
		assert.equal(await reopened.update(fresh.slice(0, 2), keyOf, documentOf), 1, 'a member that left is dropped');
		reopened.flush();
		fs.writeFileSync(file, JSON.stringify({ format: 99, keys: {}, index: {} }));
		assert.equal(
			await SuggestIndex.open(new NodeSuggestIndexFile(file), logger).update(fresh, keyOf, documentOf),
			3,
			'an unknown format is rebuilt',
		);
	});
});

/** Waits for `done` (polled), failing with what it waited for after ten seconds. */
async function until(done: () => boolean, what: string): Promise<void> {
	const deadline = Date.now() + 10_000;
	while (!done()) {
		assert.ok(Date.now() < deadline, `waited 10 s for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
}

describe('suggestions at the version Go would freeze', () => {
	async function shopWith(folders: Record<string, Record<string, string>>) {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const desk = await openDesk(path.join(root, 'library'));
		await desk.openWorkspace([{ name: 'shop', path: repo }]);
		const assets: Record<string, AssetRecord> = {};
		for (const [name, files] of Object.entries(folders)) {
			const dir = path.join(root, name);
			fs.mkdirSync(dir);
			for (const [file, text] of Object.entries(files)) {
				fs.writeFileSync(path.join(dir, file), text);
			}
			assets[name] = (await desk.library.importDir({ dir, project: 'shop', main: false })).asset;
		}
		return { desk, launches: await desk.launches(repo), assets };
	}
	const names = (suggestions: ReadonlyArray<{ name: string }>) => suggestions.map((s) => s.name);

	it('reads a folder with working changes as Go would snapshot it, as asset search does', async () => {
		const { desk, launches, assets } = await shopWith({
			'field-notes': { 'notes.md': 'originalword\n' },
			other: { 'other.md': 'unrelated prose\n' },
		});
		const folder = assets['field-notes']!;
		assert.deepEqual(names(await launches.suggest('originalword')), ['field-notes']);

		fs.writeFileSync(path.join(folder.working_dir, 'notes.md'), 'workingword\n');
		assert.deepEqual(names(await launches.suggest('workingword')), ['field-notes'], 'the working state');
		assert.deepEqual(await launches.suggest('originalword'), [], 'not the picked version any more');
		assert.deepEqual(
			(await desk.library.search('workingword')).map((h) => h.name),
			['field-notes'],
			'asset search agrees',
		);
		assert.deepEqual(await desk.library.search('originalword'), []);

		fs.writeFileSync(path.join(folder.working_dir, 'notes.md'), 'originalword\n');
		assert.deepEqual(
			names(await launches.suggest('originalword')),
			['field-notes'],
			'the changes undone: the picked version again',
		);
		assert.equal((await desk.library.assetVersions(folder.id)).length, 1, 'nothing was snapshotted');
	});

	it('matches a skill on its working SKILL.md description, which an unrelated edit does not change', async () => {
		const { desk, launches, assets } = await shopWith({
			reviewer: { 'SKILL.md': '---\nname: reviewer\ndescription: Reviews database migrations\n---\nBody.\n' },
			other: { 'other.md': 'unrelated prose\n' },
		});
		const skill = assets.reviewer!;
		assert.deepEqual(names(await launches.suggest('migrations')), ['reviewer']);

		fs.writeFileSync(
			path.join(skill.working_dir, 'SKILL.md'),
			'---\nname: reviewer\ndescription: Audits zeppelin manifests\n---\nBody.\n',
		);
		assert.deepEqual(names(await launches.suggest('zeppelin')), ['reviewer'], 'the description Go would load');
		assert.deepEqual(await launches.suggest('migrations'), []);
		desk.library.describe(skill.id, 'A reviewer');
		assert.deepEqual(names(await launches.suggest('zeppelin')), ['reviewer'], 'the same after asset describe');
		assert.deepEqual(await launches.suggest('migrations'), []);
	});

	it(
		"walks a card's folders again in the background after folderRecheckMs, and tells the card when the index took in a change",
		{ timeout: 30_000 },
		async () => {
			const { desk, launches, assets } = await shopWith({
				'field-notes': { 'notes.md': 'originalword\n' },
				other: { 'other.md': 'unrelated prose\n' },
			});
			const ask = async (ticket: string) =>
				names((await launches.suggestions(ticket, { budgetMs: firstAnswerBudgetMs })).suggestions);
			assert.deepEqual(await ask('originalword'), ['field-notes'], 'the first walk is waited for');
			const progress: Array<{ indexed: number; total: number }> = [];
			desk.onSuggestIndexProgress = (_top, p) => progress.push(p);
			fs.writeFileSync(path.join(assets['field-notes']!.working_dir, 'notes.md'), 'workingword\n');
			assert.deepEqual(await ask('workingword'), [], 'within folderRecheckMs the last walk stands');
			await new Promise((resolve) => setTimeout(resolve, folderRecheckMs));
			assert.deepEqual(progress, [], 'nothing told while nothing changed');
			assert.deepEqual(await ask('workingword'), [], 'answered at once from the last walk');
			await until(() => progress.length > 0, 'the index to tell of the walk');
			assert.deepEqual(progress.at(-1), { indexed: 3, total: 3 }, 'the walk in the background found the change');
			assert.deepEqual(await ask('workingword'), ['field-notes'], 'the card asks again and sees it');
			assert.deepEqual(await ask('originalword'), []);
		},
	);

	it('answers within its budget while folders are walked, as partial, and tells when the walk is done', async () => {
		const { desk, launches } = await shopWith({
			'field-notes': { 'notes.md': 'originalword\n' },
			other: { 'other.md': 'unrelated prose\n' },
		});
		assert.deepEqual(names(await launches.suggest('originalword')), ['field-notes']);
		const progress: Array<{ indexed: number; total: number }> = [];
		desk.onSuggestIndexProgress = (_top, p) => progress.push(p);
		let release: () => void = () => undefined;
		const matchKeys = desk.library.matchKeys.bind(desk.library);
		desk.library.matchKeys = async (assets, options) => {
			await new Promise<void>((resolve) => (release = resolve));
			return matchKeys(assets, options);
		};
		const started = Date.now();
		const answer = await launches.suggestions('originalword', { budgetMs: 100 });
		assert.ok(Date.now() - started < 1_000, 'answered within a second');
		assert.deepEqual(names(answer.suggestions), ['field-notes'], 'from what is indexed');
		assert.deepEqual(answer.index, { indexed: 1, total: 3 }, 'the two folders being walked are not counted');
		assert.deepEqual(progress, []);
		release();
		await until(() => progress.length > 0, 'the index to tell of the walk');
		assert.deepEqual(progress.at(-1), { indexed: 3, total: 3 }, 'told, though the walk found nothing new');
	});

	it('checks folders against the stat cache: an unchanged folder is not read again', async () => {
		const { desk, launches, assets } = await shopWith({
			'field-notes': { 'notes.md': 'originalword\n' },
			other: { 'other.md': 'unrelated prose\n' },
		});
		await launches.suggest('originalword');
		const read: string[] = [];
		const matchDocument = desk.library.matchDocument.bind(desk.library);
		desk.library.matchDocument = async (asset) => {
			read.push(asset.name);
			return matchDocument(asset);
		};
		await launches.suggest('originalword');
		assert.deepEqual(read, [], 'nothing changed: nothing is read');
		fs.writeFileSync(path.join(assets.other!.working_dir, 'other.md'), 'other prose\n');
		await launches.suggest('originalword');
		assert.deepEqual(read, ['other'], 'only the folder that changed');
	});

	it('keys a folder by a walk: one begun now, the last one that ended, or one begun within the time asked for', async () => {
		const { desk, assets } = await shopWith({ 'field-notes': { 'notes.md': 'originalword\n' } });
		const folder = assets['field-notes']!;
		const keyOf = async (walk: FolderWalk) => (await desk.library.matchKeys([folder], walk)).get(folder.id);
		const before = await keyOf('last');
		assert.ok(before, 'walked the first time');
		fs.writeFileSync(path.join(folder.working_dir, 'notes.md'), 'workingword\n');
		assert.equal(await keyOf(60_000), before, 'the walk of a moment ago stands');
		assert.equal(await keyOf('last'), before);
		const after = await keyOf('now');
		assert.notEqual(after, before, 'a new walk finds the working change');
		assert.equal(await keyOf('last'), after);
		assert.equal(await keyOf(60_000), after);
		fs.writeFileSync(path.join(folder.working_dir, 'notes.md'), 'originalword\n');
		assert.equal(await keyOf(0), before, 'the same folder, the same key');
	});
});

describe('the suggestion index in the background', () => {
	it(
		'answers a card within its budget from what is indexed (named assets always), says how much, and completes in the background',
		{ timeout: 30_000 },
		async () => {
			const root = tempDir();
			const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
			const desk = await openDesk(path.join(root, 'library'));
			await desk.openWorkspace([{ name: 'shop', path: repo }]);
			const made: AssetRecord[] = [];
			for (const [name, text] of [
				['alpha-notes', 'zeppelin airships'],
				['beta-notes', 'quokka sightings'],
				['gamma-notes', 'harbour cranes'],
			]) {
				const dir = path.join(root, name!);
				fs.mkdirSync(dir);
				fs.writeFileSync(path.join(dir, 'notes.md'), `${text}\n`);
				made.push((await desk.library.importDir({ dir, project: 'shop', main: false })).asset);
			}
			// Reading an asset's text waits until the test lets it go.
			const held: Array<() => void> = [];
			const read = desk.library.matchDocument.bind(desk.library);
			desk.library.matchDocument = async (asset) => {
				await new Promise<void>((resolve) => held.push(resolve));
				return read(asset);
			};
			const progress: Array<{ indexed: number; total: number }> = [];
			desk.onSuggestIndexProgress = (_top, p) => progress.push(p);
			const launches = await desk.launches(repo);
			const ticket = `Compare ${made[1]!.id} with the zeppelin airships`;

			const started = Date.now();
			const first = await launches.suggestions(ticket, { budgetMs: 100 });
			assert.ok(Date.now() - started < 1_000, 'answered within a second');
			assert.deepEqual(
				first.index,
				{ indexed: 0, total: 4 },
				'nothing read yet: the repository and three folders to go',
			);
			assert.deepEqual(
				first.suggestions.map((s) => [s.name, s.reason]),
				[['beta-notes', 'named in the ticket']],
				'a named asset needs no index',
			);

			while (progress.at(-1)?.indexed !== 4) {
				held.splice(0).forEach((release) => release());
				await new Promise((resolve) => setTimeout(resolve, 5));
			}
			const full = await launches.suggestions(ticket, { budgetMs: 100 });
			assert.deepEqual(full.index, { indexed: 4, total: 4 });
			assert.deepEqual(
				full.suggestions.map((s) => s.name),
				['beta-notes', 'alpha-notes'],
			);
			assert.deepEqual(progress.at(-1), { indexed: 4, total: 4 }, 'completion is reported');
		},
	);

	it(
		'lets the event loop run between assets, so the server keeps answering while it builds',
		{ timeout: 30_000 },
		async () => {
			const members = Array.from({ length: 5 }, (_, i) => asset(`busy-${i}`));
			const events: string[] = [];
			let ticking = true;
			const tick = () => {
				events.push('tick');
				if (ticking) {
					setImmediate(tick);
				}
			};
			const index = SuggestIndex.open(new NodeSuggestIndexFile(path.join(tempDir(), 'suggest-index.json')), {
				error() {},
				warn() {},
				info() {},
				debug() {},
			});
			const keys = new Map(members.map((m) => [m.id, 'v1']));
			setImmediate(tick);
			const changed = await index.refresh(members, keys, async (a) => {
				// An asset's read and tokenizing hold the event loop for a while.
				const until = Date.now() + 15;
				while (Date.now() < until) {
					// busy
				}
				events.push(a.name);
				return { id: a.id, name: a.name, about: '', text: `${a.name} words` };
			});
			ticking = false;
			assert.equal(changed, 5);
			const reads = events.map((e, i) => [e, i] as const).filter(([e]) => e !== 'tick');
			for (let r = 1; r < reads.length; r++) {
				assert.ok(
					events.slice(reads[r - 1]![1], reads[r]![1]).includes('tick'),
					`the event loop ran between ${reads[r - 1]![0]} and ${reads[r]![0]}: ${events.join(' ')}`,
				);
			}
			index.flush();
		},
	);

	it(
		'saves itself after the request that changed it, a document a line, and loads back what it can of a damaged file',
		{ timeout: 30_000 },
		async () => {
			const root = tempDir();
			const file = path.join(root, 'suggest-index.json');
			const logger = recordingLogger();
			const members = ['amber', 'cobalt', 'violet'].map((n) => asset(n));
			const keys = new Map(members.map((m) => [m.id, 'v1']));
			const read: string[] = [];
			const documentOf = async (a: AssetRecord) => {
				read.push(a.name);
				return { id: a.id, name: a.name, about: '', text: `${a.name} zeppelin` };
			};
			const index = SuggestIndex.open(new NodeSuggestIndexFile(file), logger);
			assert.equal(await index.refresh(members, keys, documentOf), 3);
			assert.equal(fs.existsSync(file), false, 'the request did not wait for the file');
			const deadline = Date.now() + 5_000;
			while (!fs.existsSync(file) && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
			const saved = fs.readFileSync(file, 'utf8');
			assert.equal(JSON.parse(saved).format, suggestIndexFormat);
			assert.equal(JSON.parse(saved).documents.length, 3, 'the file is JSON as a whole');
			read.length = 0;
			assert.equal(
				await SuggestIndex.open(new NodeSuggestIndexFile(file), logger).refresh(members, keys, documentOf),
				0,
				'loaded, nothing read',
			);
			assert.deepEqual(read, []);

			// Cut in the middle of the third document: the first two load, the third is read again.
			fs.writeFileSync(file, saved.slice(0, saved.lastIndexOf('"key"') + 10));
			const damaged = SuggestIndex.open(new NodeSuggestIndexFile(file), logger);
			assert.equal(await damaged.refresh(members, keys, documentOf), 1);
			assert.deepEqual(read, [members[2]!.name]);
			assert.ok(
				logger.lines.some((l) => l.level === 'warn' && /damaged at line 4/.test(l.message)),
				'the damage is logged',
			);
			assert.deepEqual(
				damaged.index
					.search('amber violet')
					.map((h) => h.name)
					.sort(),
				['amber', 'violet'],
				'loaded and read again alike',
			);
			damaged.flush();

			// Lines of valid JSON but the wrong shape (written into .desk/ by anything that writes the
			// checkout): each is damage from there on, never a broken index that fails every refresh.
			const lines = saved.split('\n');
			const third = JSON.parse(lines[3]!.replace(/^,/, '')) as { terms: string; tf: number[] };
			for (const [label, bad] of [
				['terms that are not a string', { ...third, terms: 7 }],
				['frequencies that do not fit the terms', { ...third, tf: third.tf.slice(1) }],
				[
					'a term twice',
					{ ...third, terms: `${third.terms} ${third.terms.split(' ')[0]}`, tf: [...third.tf, 1, 1, 1] },
				],
			] as const) {
				fs.writeFileSync(file, [...lines.slice(0, 3), `,${JSON.stringify(bad)}`, ...lines.slice(4)].join('\n'));
				read.length = 0;
				const hostile = SuggestIndex.open(new NodeSuggestIndexFile(file), logger);
				assert.equal(await hostile.refresh(members, keys, documentOf), 1, label);
				assert.deepEqual(read, [members[2]!.name], `${label}: that document is read again`);
				assert.deepEqual(
					hostile.index
						.search('amber violet')
						.map((h) => h.name)
						.sort(),
					['amber', 'violet'],
					label,
				);
				hostile.flush();
			}
			index.flush();
		},
	);
});
