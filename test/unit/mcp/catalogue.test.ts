/**
 * The desk tools built from the operations table: which tools a caller sees, their flat input
 * schemas and annotations, and the dispatcher over the table for an agent (its run's project filled
 * in and never widened, its receipt key, its record of each call) and for the person.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalJson, sha256Hex } from '../../../server/src/ai/canonical';
import { catalogueFor, toolsFor } from '../../../server/src/mcp/catalogue';
import { operationsDispatcher, type ToolCallRecord } from '../../../server/src/mcp/operationsDispatcher';
import type { Actor } from '../../../server/src/operations/actor';
import { operations } from '../../../server/src/operations';
import { openDesk } from '../../helpers/deskFixture';
import { notFlat } from '../../helpers/flatSchema';
import { tempDir } from '../../helpers/temp';

describe('the desk tools catalogue', () => {
	it('holds the operations with an MCP face their callers may call, with flat schemas and true annotations', () => {
		for (const caller of ['agent', 'cli', 'editor'] as const) {
			const entries = catalogueFor(caller);
			assert.deepEqual(
				entries.map((e) => e.operation.name),
				operations.filter((o) => o.surfaces.mcp && o.callers.includes(caller)).map((o) => o.name),
			);
			assert.equal(new Set(entries.map((e) => e.tool.name)).size, entries.length, 'tool names are unique');
			for (const { operation, tool } of entries) {
				assert.deepEqual(notFlat(tool.inputSchema), [], tool.name);
				assert.equal(tool.inputSchema.type, 'object');
				assert.equal(tool.inputSchema.additionalProperties, false);
				assert.deepEqual(tool.annotations, {
					readOnlyHint: !operation.mutates,
					idempotentHint: operation.idempotent,
					destructiveHint: operation.destructive ?? false,
					openWorldHint: false,
				});
				assert.equal('request_id' in tool.inputSchema.properties, operation.mutates, `${tool.name}: request_id`);
				assert.ok(!('requestId' in tool.inputSchema.properties), `${tool.name}: the receipt key is request_id only`);
				for (const field of tool.inputSchema.required ?? []) {
					assert.ok(field in tool.inputSchema.properties, `${tool.name} requires ${field}, which it lists`);
				}
			}
		}
	});

	it('leaves out for an agent the params its run fixes, and only those', () => {
		const forAgent = toolsFor('agent').find((t) => t.name === 'asset_search')!;
		const forPerson = toolsFor('cli').find((t) => t.name === 'asset_search')!;
		assert.deepEqual(Object.keys(forAgent.inputSchema.properties).sort(), ['limit', 'query']);
		assert.deepEqual(Object.keys(forPerson.inputSchema.properties).sort(), ['limit', 'project', 'query']);
		assert.deepEqual(forAgent.inputSchema.required, ['query']);
		assert.deepEqual(forAgent.inputSchema.properties['query'], { type: 'string', minLength: 1, maxLength: 4096 });
	});
});

describe('the dispatcher over the operations table', () => {
	async function library() {
		const desk = await openDesk(path.join(tempDir(), 'library'));
		const make = async (name: string, project: string, text: string) => {
			const { asset } = await desk.library.newAsset({ name, project, madeBy: 'user' });
			fs.writeFileSync(path.join(asset.working_dir, 'notes.md'), text);
			await desk.library.snapshot(asset.id, { madeBy: 'user' });
			return asset;
		};
		const ours = await make('ours', 'alpha', 'zebra crossing');
		const theirs = await make('theirs', 'beta', 'zebra stripes');
		return { desk, ours, theirs };
	}
	const agent: Actor = {
		kind: 'agent',
		agent: 'scripted',
		project: 'alpha',
		task: 'task-1',
		run: 'run-1',
		workFolder: '/nonexistent/work',
		outbox: '/nonexistent/outbox',
	};

	it("confines an agent's call to its run's project and keys its mutating calls by its run", async () => {
		const { desk, ours, theirs } = await library();
		const records: ToolCallRecord[] = [];
		const dispatcher = operationsDispatcher({ desk, actor: agent, onCall: (r) => void records.push(r) });

		const found = await dispatcher.call('asset_search', { query: 'zebra' }, { harnessCallId: 'toolu_1' });
		assert.ok(found.ok);
		assert.deepEqual(
			(found.result as { hits: Array<{ id: string }> }).hits.map((h) => h.id),
			[ours.id],
			"the run's project only",
		);
		assert.deepEqual(records[0], {
			tool: 'asset_search',
			operation: 'asset.search',
			args: { query: 'zebra' },
			harnessCallId: 'toolu_1',
			outcome: found,
		});

		const wider = await dispatcher.call('asset_search', { query: 'zebra', project: 'beta' }, {});
		assert.ok(!wider.ok);
		assert.equal(wider.error.code, 'desk.badParams');
		assert.equal(wider.error.data['field'], 'params.project');

		const elsewhere = await dispatcher.call('asset_tags', { id: theirs.id, tags: ['x'] }, {});
		assert.ok(!elsewhere.ok);
		assert.equal(elsewhere.error.code, 'operation.outsideRun');

		const args = { id: ours.id, tags: ['reviewed'] };
		const tagged = await dispatcher.call('asset_tags', args, {});
		assert.ok(tagged.ok, JSON.stringify(tagged));
		assert.deepEqual(desk.library.getAsset(ours.id).tags, ['reviewed']);
		assert.equal(records.at(-1)!.key, sha256Hex(`task-1\nrun-1\nasset_tags\n${canonicalJson(args)}`));
		await dispatcher.call('asset_tags', args, { harnessCallId: 'toolu_9' });
		assert.equal(
			records.at(-1)!.key,
			sha256Hex(`task-1\nrun-1\nasset_tags\ncall toolu_9`),
			"the harness's tool-use id names the call when it is sent: a deliberate repeat is a new tool use",
		);

		await dispatcher.call('asset_tags', { ...args, request_id: 'my-own-key-1' }, { key: 'proxy-key-1' });
		assert.equal(
			records.at(-1)!.key,
			sha256Hex('run-1\nproxy-key-1'),
			"a caller's fixed key comes first, the run's own",
		);
		await dispatcher.call('asset_tags', { ...args, request_id: 'my-own-key-1' }, {});
		assert.equal(records.at(-1)!.key, sha256Hex('run-1\nmy-own-key-1'), "then the request_id arg, the run's own");

		// Another run (a Retry of the same task) choosing the same id is another action, not a replay.
		const retry = operationsDispatcher({ desk, actor: { ...agent, run: 'run-2' } });
		const other = await retry.call('asset_tags', { id: ours.id, tags: ['second'], request_id: 'my-own-key-1' }, {});
		assert.ok(other.ok && !other.replayed, JSON.stringify(other));
		assert.deepEqual(desk.library.getAsset(ours.id).tags, ['second']);
		const refused = await retry.call('asset_tags', { id: ours.id, tags: ['third'], request_id: 'my-own-key-1' }, {});
		assert.ok(!refused.ok);
		assert.equal(
			refused.error.code,
			'request.idReused',
			'the same key with other args is refused (tags keep a receipt)',
		);
	});

	it('refuses a tool the catalogue does not hold, and serves the person their whole library', async () => {
		const { desk, ours, theirs } = await library();
		const person = operationsDispatcher({ desk, actor: { kind: 'cli', person: { name: 'Pat' }, via: 'mcp' } });
		for (const name of ['asset_retire', 'run_decide', 'toString', '__proto__']) {
			const refused = await person.call(name, {}, {});
			assert.ok(!refused.ok);
			assert.equal(refused.error.code, 'operation.unknownTool', name);
		}
		const found = await person.call('asset_search', { query: 'zebra' }, {});
		assert.ok(found.ok);
		assert.deepEqual(
			(found.result as { hits: Array<{ id: string }> }).hits.map((h) => h.id).sort(),
			[ours.id, theirs.id].sort(),
		);
		const scoped = await person.call('asset_search', { query: 'zebra', project: 'beta' }, {});
		assert.ok(scoped.ok);
		assert.deepEqual(
			(scoped.result as { hits: Array<{ id: string }> }).hits.map((h) => h.id),
			[theirs.id],
		);
		const bad = await person.call('asset_search', { query: '' }, {});
		assert.ok(!bad.ok);
		assert.equal(bad.error.data['field'], 'params.query');
		const notObject = await person.call('asset_search', ['zebra'], {});
		assert.ok(!notObject.ok);
		assert.equal(notObject.error.code, 'desk.badParams');
	});
});
