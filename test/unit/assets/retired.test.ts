import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { LibraryStore, LibraryWrites } from '../../../server/src/assets/ports';
import type { Desk } from '../../../server/src/desk';
import type { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { retiredBeforeAnswers } from '../../../server/src/store/schemas';
import { openDesk } from '../../helpers/deskFixture';
import { tempDir } from '../../helpers/temp';

async function folderAsset(desk: Desk, name: string) {
	const dir = path.join(tempDir(), name);
	fs.mkdirSync(dir);
	fs.writeFileSync(path.join(dir, 'notes.md'), `# ${name}\n`);
	return (await desk.library.importDir({ dir, main: false })).asset;
}

function propose(desk: Desk, assetId: string, id: string) {
	return desk.retireProposals.propose(
		{
			id,
			asset_id: assetId,
			reason: 'Nothing plugs it any more.',
			proposed_by: 'agent claude, run r-1',
			run_id: 'r-1',
			created_at: new Date().toISOString(),
		},
		undefined,
	).proposal;
}

describe('retiring an asset answers its open proposal to retire it (glossary: Retired)', () => {
	it('closes the proposal as accepted by whoever retired it, and a later unretire brings no proposal back', async () => {
		const desk = await openDesk();
		const old = await folderAsset(desk, 'old-spec');
		const kept = await folderAsset(desk, 'kept-spec');
		const proposal = propose(desk, old.id, 'rp-old');
		const other = propose(desk, kept.id, 'rp-kept');

		const before = new Date().toISOString();
		assert.equal(desk.library.setRetired(old.id, true, 'Jane Doe <jane@example.com> (desk)').retired, true);
		const answered = desk.retireProposals.get(proposal.id);
		assert.equal(answered?.state, 'accepted');
		assert.equal(answered.answered_by, 'Jane Doe <jane@example.com> (desk)');
		assert.ok(answered.answered_at && answered.answered_at >= before, answered.answered_at);
		assert.deepEqual(
			desk.retireProposals.open().map((p) => p.id),
			[other.id],
			'only the other asset’s proposal is open',
		);

		// Unretired, the asset is back in the lists with no proposal on it; a new one may be made.
		assert.equal(desk.library.setRetired(old.id, false, 'Jane Doe').retired, false);
		assert.deepEqual(
			desk.retireProposals.open().map((p) => p.id),
			[other.id],
		);
		assert.equal(desk.retireProposals.get(proposal.id)?.state, 'accepted', 'unretiring does not reopen it');
		assert.equal(propose(desk, old.id, 'rp-again').state, 'open');
	});

	it('answers, when a library is upgraded, the open proposals of assets retired before retiring answered them', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		const desk = await openDesk(libraryDir);
		const retired = await folderAsset(desk, 'retired-spec');
		const kept = await folderAsset(desk, 'kept-spec');
		const stale = propose(desk, retired.id, 'rp-stale');
		const open = propose(desk, kept.id, 'rp-open');
		// As a library of schema 6 holds it: the asset retired, its proposal left open.
		const store = (desk.library as unknown as { context: { store: LibraryStore } }).context.store;
		store.batch((writes) => writes.updateAsset(retired.id, { retired: true }));
		const db = desk.libraryRequests as unknown as DurableDatabase;
		db.write((tx) => tx.run("UPDATE desk_meta SET value = '6' WHERE key = 'schema_version'"));
		assert.equal(desk.retireProposals.get(stale.id)?.state, 'open');
		desk.close();

		const before = new Date().toISOString();
		const upgraded = await openDesk(libraryDir);
		const answered = upgraded.retireProposals.get(stale.id);
		assert.equal(answered?.state, 'accepted');
		assert.equal(answered.answered_by, retiredBeforeAnswers);
		assert.ok(answered.answered_at && answered.answered_at >= before.slice(0, 19), answered.answered_at);
		assert.deepEqual(
			upgraded.retireProposals.open().map((p) => p.id),
			[open.id],
			'the proposal of an asset still in use stays open',
		);
		assert.equal(upgraded.library.getAsset(retired.id).retired, true);
	});

	it('is one transaction with the retirement: when closing the proposal fails, the asset is not retired', async () => {
		const desk = await openDesk();
		const asset = await folderAsset(desk, 'drafts');
		const proposal = propose(desk, asset.id, 'rp-drafts');
		const store = (desk.library as unknown as { context: { store: LibraryStore } }).context.store;
		const batch = store.batch.bind(store);
		store.batch = <T>(body: (writes: LibraryWrites) => T): T =>
			batch((writes) => {
				writes.acceptRetireProposals = () => {
					throw new Error('the disk is full');
				};
				return body(writes);
			});
		assert.throws(() => desk.library.setRetired(asset.id, true, 'Jane Doe'), /the disk is full/);
		store.batch = batch;
		assert.equal(desk.library.getAsset(asset.id).retired, false, 'the retirement was rolled back with it');
		assert.equal(desk.retireProposals.get(proposal.id)?.state, 'open');
	});
});
