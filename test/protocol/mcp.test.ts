/**
 * `desk mcp` with the MCP SDK's own client (glossary: Desk tools): the real command line serving the
 * desk tools on stdio over a real library holding an adopted git repository and an imported folder.
 * The tools it lists (flat schemas, true annotations, the catalogue of the operations table), each
 * tool's happy path, its refusals (bad params naming the field, a tool that does not exist, retiring
 * and deciding never a tool), a receipt key answering a repeat with the first result, and the command
 * itself: nothing but MCP on stdout, a clean exit when stdin closes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as readline from 'node:readline';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { AssetRecord } from '../../server/src/assets/types';
import { toolsFor } from '../../server/src/mcp/catalogue';
import { desk, deskJs, launchedTask } from '../helpers/deskCli';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';
import { notFlat } from '../helpers/flatSchema';

/** What a tool call answers, as the client gives it. */
interface ToolAnswer {
	isError?: boolean;
	content: Array<{ type: string; text?: string }>;
	structuredContent?: Record<string, unknown>;
	_meta?: Record<string, unknown>;
}

/**
 * The annotations of every desk tool `desk mcp` serves: a tool added to the table fails here until
 * its line is added (a snapshot, read by a person, of what agents are told about each tool).
 */
const annotationsSnapshot: Record<string, { readOnlyHint: boolean; idempotentHint: boolean }> = {
	asset_search: { readOnlyHint: true, idempotentHint: true },
	asset_tags: { readOnlyHint: false, idempotentHint: true },
	asset_import: { readOnlyHint: false, idempotentHint: false },
	asset_snapshot: { readOnlyHint: false, idempotentHint: true },
	asset_version: { readOnlyHint: false, idempotentHint: true },
	asset_describe: { readOnlyHint: false, idempotentHint: true },
	asset_link: { readOnlyHint: false, idempotentHint: true },
	attach: { readOnlyHint: false, idempotentHint: false },
	propose_asset_retire: { readOnlyHint: false, idempotentHint: true },
	// The lineage's tools the person has through `desk mcp` (the run's own, reports and branch, need a run).
	board_post: { readOnlyHint: false, idempotentHint: true },
	board_answer: { readOnlyHint: false, idempotentHint: false },
	remember: { readOnlyHint: false, idempotentHint: false },
};

describe('desk mcp, with the MCP SDK client', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const home = path.join(root, 'home');
	let client: Client;
	let folderAsset: AssetRecord;
	let repoAsset: AssetRecord;

	/** The environment of `desk mcp`: the person is who the global git config of a home of its own says. */
	function environment(): Record<string, string> {
		const env: Record<string, string> = {};
		for (const [key, value] of Object.entries(process.env)) {
			if (value !== undefined && key !== 'DESK_STORE' && !key.startsWith('GIT_')) {
				env[key] = value;
			}
		}
		return { ...env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
	}

	/** A client of a `desk mcp` of its own, on the 2025 protocol (the SDK's default) or the revision `pin` names. */
	async function connect(pin?: '2026-07-28'): Promise<Client> {
		const connected = new Client(
			{ name: 'desk-test', version: '1.0.0' },
			pin ? { versionNegotiation: { mode: { pin } } } : {},
		);
		await connected.connect(
			new StdioClientTransport({
				command: process.execPath,
				args: [deskJs, 'mcp', '--store', store],
				env: environment(),
				cwd: root,
				stderr: 'pipe',
			}),
		);
		return connected;
	}

	async function call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
		return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as ToolAnswer;
	}

	function refusalOf(answer: ToolAnswer): { code: string; message: string; data: Record<string, unknown> } {
		assert.equal(answer.isError, true, `refused: ${JSON.stringify(answer)}`);
		const error = answer.structuredContent?.['error'] as {
			code: string;
			message: string;
			data: Record<string, unknown>;
		};
		assert.ok(error, 'the refusal is in structuredContent.error');
		assert.equal(answer.content[0]?.text, `${error.code}: ${error.message}`, 'and in the text');
		return error;
	}

	function resultOf(answer: ToolAnswer): Record<string, unknown> {
		assert.notEqual(answer.isError, true, `answered: ${JSON.stringify(answer)}`);
		assert.deepEqual(
			JSON.parse(answer.content[0]!.text!),
			answer.structuredContent,
			'the text is the JSON of the result',
		);
		return answer.structuredContent!;
	}

	before(async () => {
		fs.mkdirSync(home, { recursive: true });
		fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Pat Tester\n\temail = pat@example.com\n');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const adopted = desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main', '--json');
		assert.equal(adopted.code, 0, adopted.stderr);
		repoAsset = (JSON.parse(adopted.stdout) as { asset: AssetRecord }).asset;
		const folder = path.join(root, 'field-notes');
		fs.mkdirSync(folder);
		fs.writeFileSync(path.join(folder, 'sightings.md'), '# Sightings\n\nA quokka near the harbour at dawn.\n');
		const imported = desk('--store', store, 'asset', 'import', '--dir', folder, '--project', 'shop', '--json');
		assert.equal(imported.code, 0, imported.stderr);
		folderAsset = (JSON.parse(imported.stdout) as { asset: AssetRecord }).asset;
		client = await connect();
	});

	after(async () => {
		await client?.close();
	});

	it('lists the catalogue of the operations table: flat schemas, true annotations, server desk', async () => {
		assert.equal(client.getServerVersion()?.name, 'desk');
		const { tools } = await client.listTools();
		assert.deepEqual(
			JSON.parse(JSON.stringify(tools)),
			JSON.parse(JSON.stringify(toolsFor('cli'))),
			'the tools are the catalogue as the table builds it for the person',
		);
		assert.deepEqual(
			Object.fromEntries(
				tools.map((t) => [
					t.name,
					{ readOnlyHint: t.annotations?.readOnlyHint, idempotentHint: t.annotations?.idempotentHint },
				]),
			),
			annotationsSnapshot,
		);
		for (const tool of tools) {
			assert.deepEqual(notFlat(tool.inputSchema), [], `${tool.name}'s schema is flat`);
			assert.equal(
				tool.annotations?.destructiveHint,
				['asset_version', 'asset_tags', 'asset_describe'].includes(tool.name),
				`${tool.name}: destructive when it overwrites files or replaces a record's text`,
			);
			assert.equal(tool.annotations?.openWorldHint, false);
			assert.ok(tool.description && tool.description.length > 40, `${tool.name} is described`);
			assert.equal(
				'request_id' in (tool.inputSchema.properties ?? {}),
				tool.annotations?.readOnlyHint === false,
				`${tool.name}: a receipt key exactly when it changes something`,
			);
		}
		const names = tools.map((t) => t.name);
		assert.deepEqual(
			names.filter((name) => /retire/.test(name)),
			['propose_asset_retire'],
			'retiring is only ever proposed',
		);
		assert.deepEqual(
			names.filter((name) => /decide|land|plug|setting|cancel|^run_|^card_/.test(name)),
			[],
			'an agent never decides, lands, plugs or changes settings',
		);
	});

	it('notFlat finds references, unions and type lists at any depth', () => {
		assert.deepEqual(notFlat({ type: 'object', properties: { a: { anyOf: [] }, b: { type: ['string', 'null'] } } }), [
			'inputSchema.properties.a.anyOf',
			'inputSchema.properties.b.type is ["string","null"]',
		]);
		assert.deepEqual(notFlat({ $defs: {}, items: [{ $ref: '#' }], allOf: [], oneOf: [] }), [
			'inputSchema.$defs',
			'inputSchema.items[0].$ref',
			'inputSchema.allOf',
			'inputSchema.oneOf',
		]);
	});

	it('asset_search finds the imported folder by a word of its file, in the whole library or a project', async () => {
		const found = resultOf(await call('asset_search', { query: 'quokka' }));
		const hits = found['hits'] as Array<{ id: string; name: string; terms: string[] }>;
		assert.deepEqual(
			hits.map((h) => h.id),
			[folderAsset.id],
		);
		assert.deepEqual(hits[0]!.terms, ['quokka']);
		const inProject = resultOf(await call('asset_search', { query: 'quokka harbour', project: 'shop', limit: 5 }));
		assert.deepEqual(
			(inProject['hits'] as Array<{ id: string }>).map((h) => h.id),
			[folderAsset.id],
		);
		assert.deepEqual(resultOf(await call('asset_search', { query: 'zeppelin' }))['hits'], []);
	});

	it('asset_tags sets the tags, for the person, as the store then shows them', async () => {
		const tagged = resultOf(await call('asset_tags', { id: repoAsset.id, tags: ['reviewed', 'team:shop'] }));
		assert.deepEqual(tagged['tags'], ['reviewed', 'team:shop']);
		const shown = desk('--store', store, 'asset', 'show', repoAsset.id, '--json');
		assert.equal(shown.code, 0, shown.stderr);
		assert.deepEqual((JSON.parse(shown.stdout) as AssetRecord).tags, ['reviewed', 'team:shop']);
	});

	it('propose_asset_retire records a proposal by the person through desk mcp, and retires nothing', async () => {
		const proposed = resultOf(
			await call('propose_asset_retire', { id: folderAsset.id, reason: 'The sightings moved to the wiki.' }),
		);
		const proposal = proposed['proposal'] as { proposed_by: string; state: string; asset_id: string };
		assert.equal(proposal.proposed_by, 'Pat Tester <pat@example.com> (desk mcp)');
		assert.equal(proposal.state, 'open');
		assert.equal(proposal.asset_id, folderAsset.id);
		const shown = desk('--store', store, 'asset', 'show', folderAsset.id, '--json');
		assert.equal((JSON.parse(shown.stdout) as AssetRecord).retired, false);
	});

	it('asset_import adopts a folder for the person (again: the same asset), or makes a new empty asset', async () => {
		const folder = path.join(root, 'recipes');
		fs.mkdirSync(folder);
		fs.writeFileSync(path.join(folder, 'bread.md'), 'Sourdough with rye.\n');
		const imported = resultOf(await call('asset_import', { dir: folder, project: 'shop' }));
		const asset = imported['asset'] as AssetRecord;
		assert.equal(imported['created'], true);
		assert.equal(asset.working_dir, folder);
		assert.equal(asset.created_by, 'Pat Tester <pat@example.com> (desk mcp)');
		const again = resultOf(await call('asset_import', { dir: folder, project: 'shop' }));
		assert.equal(again['created'], false);
		assert.equal((again['asset'] as AssetRecord).id, asset.id);
		const made = resultOf(await call('asset_import', { newName: 'scratch', project: 'shop' }));
		assert.equal(made['created'], true);
		assert.equal((made['asset'] as AssetRecord).name, 'scratch');
		// desk mcp was started in root: a relative path is read against the folder the person's agent started it in.
		const relative = resultOf(await call('asset_import', { dir: 'recipes', project: 'shop' }));
		assert.equal((relative['asset'] as AssetRecord).id, asset.id, 'recipes, read against the folder desk mcp runs in');
	});

	it('asset_snapshot cuts a version from the folder as it is now, and none when nothing changed', async () => {
		fs.writeFileSync(path.join(folderAsset.working_dir, 'later.md'), 'A wombat, later.\n');
		const cut = resultOf(await call('asset_snapshot', { id: folderAsset.id, note: 'the wombat' }));
		assert.equal(cut['created'], true);
		const version = cut['version'] as { version: number; made_by: string; note: string };
		assert.equal(version.version, 2);
		assert.equal(version.note, 'the wombat');
		assert.equal(version.made_by, 'conductor');
		assert.equal(resultOf(await call('asset_snapshot', { id: folderAsset.id }))['created'], false);
		const hits = resultOf(await call('asset_search', { query: 'wombat' }))['hits'] as Array<{ id: string }>;
		assert.deepEqual(
			hits.map((h) => h.id),
			[folderAsset.id],
		);
	});

	it('asset_version puts a file into the asset and cuts its next version', async () => {
		const source = path.join(root, 'outside-note.md');
		fs.writeFileSync(source, 'Platypus notes.\n');
		const put = resultOf(
			await call('asset_version', { id: folderAsset.id, files: [{ path: 'notes/platypus.md', from: source }] }),
		);
		assert.equal(put['created'], true);
		assert.equal(fs.readFileSync(path.join(folderAsset.working_dir, 'notes/platypus.md'), 'utf8'), 'Platypus notes.\n');
		const files = desk('--store', store, 'asset', 'files', folderAsset.id, '--json');
		assert.match(files.stdout, /notes\/platypus\.md/);
	});

	it('asset_describe sets the about text, which search then matches', async () => {
		const described = resultOf(
			await call('asset_describe', { id: repoAsset.id, about: 'The storefront: checkout and the kangaroo mascot.' }),
		);
		assert.equal(described['about'], 'The storefront: checkout and the kangaroo mascot.');
		const hits = resultOf(await call('asset_search', { query: 'kangaroo' }))['hits'] as Array<{ id: string }>;
		assert.deepEqual(
			hits.map((h) => h.id),
			[repoAsset.id],
		);
	});

	it('attach copies a file to a task of the project, added by the person', async () => {
		const report = path.join(root, 'report.md');
		fs.writeFileSync(report, '# Report\n');
		const task = launchedTask(store, 'shop', 'Report on the shop');
		const attached = resultOf(await call('attach', { project: 'shop', task, path: report, note: 'from my agent' }));
		assert.equal(attached['name'], 'report.md');
		assert.equal(attached['added_by'], 'Pat Tester <pat@example.com> (desk mcp)');
		const listed = desk('--store', store, '--project', 'shop', 'task', 'attachments', 'list', task, '--json');
		assert.equal(listed.code, 0, listed.stderr);
		assert.match(listed.stdout, /report\.md/);
	});

	it('refuses bad params naming the field, a tool that does not exist, and retiring or deciding', async () => {
		const badQuery = refusalOf(await call('asset_search', { query: '' }));
		assert.equal(badQuery.code, 'desk.badParams');
		assert.equal(badQuery.data['field'], 'params.query');
		assert.match(badQuery.message, /params\.query/);

		const wrongType = refusalOf(await call('asset_tags', { id: repoAsset.id, tags: 'reviewed' }));
		assert.equal(wrongType.code, 'desk.badParams');
		assert.equal(wrongType.data['field'], 'params.tags');

		const unknownField = refusalOf(await call('asset_search', { query: 'quokka', requestId: 'abcdefgh-1' }));
		assert.equal(unknownField.code, 'desk.badParams');
		assert.equal(unknownField.data['field'], 'params.requestId');

		const missing = refusalOf(await call('asset_tags', { tags: [] }));
		assert.equal(missing.data['field'], 'params.id');

		const notFound = refusalOf(await call('asset_tags', { id: 'a-0000000000000000', tags: [] }));
		assert.equal(notFound.code, 'asset.notFound');

		for (const name of ['asset_retire', 'run_decide', 'asset_plug', 'no_such_tool']) {
			const refused = refusalOf(await call(name, { id: folderAsset.id }));
			assert.equal(refused.code, 'operation.unknownTool', name);
		}
		const shown = desk('--store', store, 'asset', 'show', folderAsset.id, '--json');
		assert.equal((JSON.parse(shown.stdout) as AssetRecord).retired, false, 'nothing was retired');
	});

	it('answers a repeat of a receipt key with the first result and one effect, and refuses the key with other args', async () => {
		const links = () =>
			(
				JSON.parse(desk('--store', store, 'assets', 'list', '--project', 'shop', '--json').stdout) as AssetRecord[]
			).filter((a) => a.kind === 'link').length;
		const before = links();
		const args = { name: 'Spec', url: 'https://example.com/spec', project: 'shop', request_id: 'receipt-0001' };
		const first = await call('asset_link', args, { 'claudecode/toolUseId': 'toolu_01' });
		const again = await call('asset_link', args, { 'claudecode/toolUseId': 'toolu_02' });
		assert.deepEqual(resultOf(again), resultOf(first), 'the same result');
		assert.equal(first._meta?.['desk/replayed'], undefined);
		assert.equal(again._meta?.['desk/replayed'], true, 'the second is the first answer again');
		assert.equal(links(), before + 1, 'one link asset made');

		// Without a key, the same call is another action; but the same link (name, URL, project) asked
		// for again is the one made the first time (glossary: Asset), and another URL under its name is refused.
		const unkeyed = await call('asset_link', { ...args, request_id: undefined });
		assert.equal(resultOf(unkeyed)['id'], resultOf(first)['id']);
		assert.equal(unkeyed._meta?.['desk/replayed'], undefined, 'answered by the library, not by a receipt');
		const taken = refusalOf(
			await call('asset_link', { ...args, url: 'https://example.com/spec-v2', request_id: undefined }),
		);
		assert.equal(taken.code, 'asset.nameTaken');
		resultOf(
			await call('asset_link', { ...args, name: 'Spec v2', url: 'https://example.com/spec-v2', request_id: undefined }),
		);
		assert.equal(links(), before + 2);

		const reused = refusalOf(await call('asset_link', { ...args, url: 'https://example.com/other' }));
		assert.equal(reused.code, 'request.idReused');
		const badKey = refusalOf(await call('asset_link', { ...args, request_id: 'short' }));
		assert.equal(badKey.code, 'request.badId');
		assert.equal(links(), before + 2, 'the refused calls made nothing');

		// A proposal's receipt too (its ledger is the library's, as a link's).
		const draft = resultOf(await call('asset_import', { newName: 'draft-notes', project: 'shop' }))[
			'asset'
		] as AssetRecord;
		const proposal = { id: draft.id, reason: 'A draft nobody reads.', request_id: 'receipt-0002' };
		const proposed = await call('propose_asset_retire', proposal);
		const repeated = await call('propose_asset_retire', proposal);
		assert.deepEqual(resultOf(repeated), resultOf(proposed));
		assert.equal(resultOf(repeated)['created'], true, 'the first answer, not a second proposal finding the first');
		assert.equal(repeated._meta?.['desk/replayed'], true);
	});

	it('serves the 2026-07-28 protocol revision too', async () => {
		const modern = await connect('2026-07-28');
		try {
			const { tools } = await modern.listTools();
			assert.deepEqual(
				tools.map((t) => t.name),
				toolsFor('cli').map((t) => t.name),
			);
			const answer = (await modern.callTool({ name: 'asset_search', arguments: { query: 'quokka' } })) as ToolAnswer;
			assert.deepEqual(
				(resultOf(answer)['hits'] as Array<{ id: string }>).map((h) => h.id),
				[folderAsset.id],
			);
		} finally {
			await modern.close();
		}
	});

	// The timeout bounds a build that would never exit (the test would wait forever); it asserts nothing.
	it('writes nothing but MCP to stdout, and exits 0 when stdin closes', { timeout: 120_000 }, async () => {
		const child = spawn(process.execPath, [deskJs, 'mcp', '--store', store], {
			env: environment(),
			cwd: root,
			stdio: ['pipe', 'pipe', 'pipe'],
		});
		const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
		const stdout = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
		const requests = [
			{
				jsonrpc: '2.0',
				id: 1,
				method: 'initialize',
				params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
			},
			{ jsonrpc: '2.0', method: 'notifications/initialized' },
			{ jsonrpc: '2.0', id: 2, method: 'tools/list' },
			{ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'asset_search', arguments: { query: 'quokka' } } },
		];
		const replies: Array<{ jsonrpc: string; id: number; result?: unknown }> = [];
		// Each request once the one before is answered: stdin closing first would abandon a request in flight.
		for (const request of requests) {
			child.stdin.write(JSON.stringify(request) + '\n');
			if ('id' in request) {
				const line = await stdout.next();
				assert.equal(line.done, false, 'answered');
				replies.push(JSON.parse(line.value as string) as (typeof replies)[number]);
			}
		}
		child.stdin.end();
		const rest = await stdout.next();
		assert.equal(rest.done, true, `nothing more on stdout: ${String(rest.value)}`);
		assert.equal(await exited, 0);
		assert.deepEqual(
			replies.map((r) => [r.jsonrpc, r.id, r.result !== undefined]),
			[
				['2.0', 1, true],
				['2.0', 2, true],
				['2.0', 3, true],
			],
		);
	});
});
