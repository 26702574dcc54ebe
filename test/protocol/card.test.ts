import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
	GetCard,
	ImportAsset,
	LaunchGo,
	ListRuns,
	OpenWorkspace,
	PlugAsset,
	SetTicket,
	SuggestAssets,
	SuggestIndexDidChange,
	UnplugAsset,
	UsedInLaunches,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('launch cards over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	let repoAsset: string;
	const server = serverForSuite(path.join(root, 'library'), async (started) => {
		const opened = await started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		assert.ok(opened.folders[0]?.outcome === 'adopted');
		repoAsset = opened.folders[0].asset.id;
	});

	it('saves the ticket, suggests, plugs with AtGo shown, refuses a rule break by name, and goes', async () => {
		const specs = path.join(root, 'checkout-specs');
		fs.mkdirSync(specs);
		fs.writeFileSync(path.join(specs, 'coupons.md'), 'Coupons stack at checkout.\n');
		const { asset } = await server.call(ImportAsset, { dir: specs, project: 'shop' });
		await server.call(SetTicket, { project: 'shop', ticket: 'Coupons should not stack at checkout' });
		assert.equal((await server.call(GetCard, { project: 'shop' })).card.ticket, 'Coupons should not stack at checkout');
		const { suggestions } = await server.call(SuggestAssets, { project: 'shop' });
		assert.deepEqual(
			suggestions.map((s) => s.asset_id),
			[asset.id],
		);
		await server.call(PlugAsset, { project: 'shop', id: asset.id, role: 'reference' });
		fs.writeFileSync(path.join(specs, 'more.md'), 'More.\n');
		const view = await server.call(PlugAsset, { project: 'shop', id: repoAsset, role: 'target' });
		assert.deepEqual(
			view.plugs.map((p) => [
				p.name,
				p.role,
				'error' in p.at_go
					? p.at_go.error
					: [p.at_go.version, p.at_go.engine === 'snapshot' && p.at_go.working_changes],
			]),
			[
				['checkout-specs', 'reference', [2, true]],
				['shop', 'target', [2, false]],
			],
		);
		const second = await expectRpcError(server.connection, PlugAsset.method, {
			project: 'shop',
			id: asset.id,
			role: 'target',
		});
		assert.equal((second.data as DeskErrorJson).code, 'launch.alreadyPlugged');
		await server.call(UnplugAsset, { project: 'shop', id: asset.id });
		const copyOnTarget = await expectRpcError(server.connection, PlugAsset.method, {
			project: 'shop',
			id: asset.id,
			role: 'target',
			copy: [{ from: 'a', to: 'b' }],
		});
		assert.equal((copyOnTarget.data as DeskErrorJson).code, 'launch.secondTarget');
		await server.call(PlugAsset, { project: 'shop', id: asset.id, role: 'reference' });
		const record = await server.call(LaunchGo, { project: 'shop', execute: false });
		assert.deepEqual(
			record.plugs.map((p) => [p.name, p.version]),
			[
				['shop', 2],
				['checkout-specs', 2],
			],
		);
		const { usedIn } = await server.call(UsedInLaunches, { id: asset.id });
		assert.deepEqual(
			usedIn.map((u) => [u.launch_id, u.role, u.version]),
			[[record.launch_id, 'reference', 2]],
		);
		const runs = await server.call(ListRuns, { project: 'shop' });
		assert.equal(runs.intents[0]?.tasks[0]?.runs[0]?.id, record.run);
		const empty = await expectRpcError(server.connection, LaunchGo.method, { project: 'shop' });
		assert.equal((empty.data as DeskErrorJson).code, 'launch.emptyTicket');
	});

	it('says how much of the index the suggestions come from, and tells the card when the index is complete', async () => {
		const notes = path.join(root, 'harbour-notes');
		fs.mkdirSync(notes);
		fs.writeFileSync(path.join(notes, 'cranes.md'), 'Gantry cranes unload the freighters.\n');
		const { asset } = await server.call(ImportAsset, { dir: notes, project: 'shop' });
		let result = await server.call(SuggestAssets, { project: 'shop', ticket: 'Which gantry unloads the freighters' });
		assert.equal(result.index.total, 3, 'the repository and the two folders');
		// A slow machine may answer before the index is complete: the notification then says when to ask again.
		await server.notified(
			SuggestIndexDidChange,
			(progress) => progress.indexed === 3,
			'the suggestion index to be complete',
		);
		const done = server.notifications.filter((n) => n.method === SuggestIndexDidChange.method).at(-1)?.params;
		assert.deepEqual(done, { project: 'shop', indexed: 3, total: 3 });
		result = await server.call(SuggestAssets, { project: 'shop', ticket: 'Which gantry unloads the freighters' });
		assert.deepEqual(result.index, { indexed: 3, total: 3 });
		assert.deepEqual(
			result.suggestions.map((s) => s.asset_id),
			[asset.id],
		);
	});
});
