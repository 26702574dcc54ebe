/**
 * asset_describe through the operation, by actor (glossary: Tags and about): an agent's about, and
 * one the person's own agent writes through `desk mcp`, is marked `about_model_written`; it never
 * replaces an about the person wrote; the person's replaces a model's and clears the mark.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import type { Desk } from '../../../server/src/desk';
import type { Actor } from '../../../server/src/operations/actor';
import { describeAsset } from '../../../server/src/operations/assets';
import { invokeOperation, noEvents } from '../../../server/src/operations/operation';
import { openDesk } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

const person = { name: 'Jane Doe', email: 'jane@example.com' };
const editor: Actor = { kind: 'editor', person };
const deskMcp: Actor = { kind: 'cli', person, via: 'mcp' };

describe("asset_describe marks a model's about and keeps a person's", () => {
	const root = tempDir();
	const agent: Actor = {
		kind: 'agent',
		agent: 'claude',
		project: 'webshop',
		task: '01920000-0000-7000-8000-000000000001',
		run: 'run-1',
		workFolder: path.join(root, 'work'),
		outbox: path.join(root, 'outbox'),
	};
	let desk: Desk;
	let id: string;

	const describeAs = (actor: Actor, about: string) =>
		invokeOperation(
			describeAsset,
			{ desk, actor, events: noEvents, signal: new AbortController().signal },
			{ id, about },
		);

	before(async () => {
		desk = await openDesk();
		await desk.openWorkspace([{ name: 'webshop', path: makeRepo(path.join(root, 'webshop'), { commits: 1 }) }]);
		id = (await desk.library.listAssets('webshop'))[0]!.id;
	});

	it("an agent's about is marked as written by a model", async () => {
		const asset = await describeAs(agent, 'The storefront and its checkout');
		assert.deepEqual([asset.about, asset.about_model_written], ['The storefront and its checkout', true]);
	});

	it("the person's about replaces the model's and clears the mark", async () => {
		const asset = await describeAs(editor, 'Our shop; payments live in billing');
		assert.deepEqual([asset.about, asset.about_model_written], ['Our shop; payments live in billing', false]);
	});

	it("an agent may not replace the person's about, nor may their own agent through desk mcp", async () => {
		for (const actor of [agent, deskMcp]) {
			await assert.rejects(describeAs(actor, 'A shop, says the model'), (error: unknown) =>
				isDeskError(error, 'asset.aboutByPerson'),
			);
		}
		const kept = desk.library.getAsset(id);
		assert.deepEqual([kept.about, kept.about_model_written], ['Our shop; payments live in billing', false]);
	});

	it("the person's about emptied, their agent through desk mcp writes one, marked as a model's", async () => {
		await describeAs(editor, '');
		const asset = await describeAs(deskMcp, 'A shop, says the model');
		assert.deepEqual([asset.about, asset.about_model_written], ['A shop, says the model', true]);
	});
});
