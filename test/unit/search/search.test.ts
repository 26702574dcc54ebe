import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { LibrarySearch } from '../../../server/src/search/librarySearch';
import { terms, ticketTerms } from '../../../server/src/search/tokenizer';
import { openDesk } from '../../helpers/deskFixture';
import { tempDir } from '../../helpers/temp';

describe('the tokenizer', () => {
	it('keeps lowercase words of at least four runes that are not stop words', () => {
		assert.deepEqual(terms('The Checkout PAGE is slow; fix it with caching. Über straße'), [
			'checkout',
			'page',
			'slow',
			'caching',
			'über',
			'straße',
		]);
		assert.deepEqual(terms('should would could please ticket'), [], 'stop words');
		assert.deepEqual(terms('日本語の文章'), ['日本語の文章'], 'runes, not bytes');
	});

	it('drops text in backticks and code fences from a ticket', () => {
		assert.deepEqual(ticketTerms('Speed up `renderInvoice` in billing\n```ts\nconst secretThing = 1;\n```\nreports'), [
			'speed',
			'billing',
			'reports',
		]);
	});
});

describe('asset_search', () => {
	it('ranks assets by BM25 over name, about and text, with the three strongest terms as the reason', () => {
		const search = new LibrarySearch([
			{
				id: 'a-1',
				name: 'billing-service',
				about: 'Invoices and payments',
				text: 'invoice totals tax rounding invoice invoice',
			},
			{ id: 'a-2', name: 'design-notes', about: 'UI notes', text: 'colours spacing typography' },
			{ id: 'a-3', name: 'payments-api', about: 'Payment gateway client', text: 'refunds chargebacks invoice' },
		]);
		const hits = search.search('Invoice rounding errors in payments');
		assert.deepEqual(
			hits.map((h) => h.id),
			['a-1', 'a-3'],
		);
		assert.match(hits[0]!.reason, /^matches “(invoice|rounding|payments)”/);
		assert.ok(hits[0]!.terms.length <= 3);
		assert.equal(hits[0]!.score, Math.round(hits[0]!.score * 100) / 100);
	});

	it('searches the whole library at the version go would read, within the caps, without retired assets', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const make = async (name: string, files: Record<string, string>) => {
			const { asset } = await desk.library.newAsset({ name, madeBy: 'user' });
			for (const [file, text] of Object.entries(files)) {
				fs.writeFileSync(path.join(asset.working_dir, file), text);
			}
			await desk.library.snapshot(asset.id, { madeBy: 'user' });
			return asset;
		};
		const observability = await make('observability', { 'tracing.md': 'distributed tracing with spans and exporters' });
		const late = await make('late-words', { 'big.md': `${'filler '.repeat(12_000)}zeppelin` });
		const retired = await make('old-tracing', { 'a.md': 'tracing tracing tracing' });
		desk.library.setRetired(retired.id, true, 'Jane Doe');
		fs.writeFileSync(path.join(observability.working_dir, 'new.md'), 'quokka sightings');
		const hits = await desk.library.search('tracing exporters');
		assert.deepEqual(
			hits.map((h) => h.id),
			[observability.id],
		);
		assert.deepEqual(
			(await desk.library.search('quokka')).map((h) => h.id),
			[observability.id],
			'working changes are what go would read',
		);
		assert.deepEqual(
			(await desk.library.search('filler')).map((h) => h.id),
			[late.id],
			'the first 64 KiB of a big file are matched',
		);
		assert.deepEqual(await desk.library.search('zeppelin'), [], 'text past 64 KiB of a file is not matched');
	});
});
