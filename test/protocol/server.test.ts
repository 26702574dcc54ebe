import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCodes } from 'vscode-languageserver/node';
import {
	AssetsDidChange,
	deskErrorCode,
	deskRequests,
	GetStatus,
	LaunchGo,
	ListAssets,
	ListVersions,
	OpenWorkspace,
	SetChecks,
	type DeskErrorJson,
	type ParamsOf,
} from '../../server/src/protocol/protocol';
import type { Schema } from '../../server/src/protocol/schema';
import { makeRepo } from '../helpers/gitRepo';
import { expectRpcError, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('the desk server over JSON-RPC', () => {
	const root = tempDir();
	const server = serverForSuite(path.join(root, 'library'));

	const stillServing = async () => {
		const status = await server.call(GetStatus, {});
		assert.equal(status.state, 'ready');
		assert.equal(status.pid, server.child.pid);
	};

	it('adopts the workspace repository and lists it as the main asset with its version count', async () => {
		const repo = makeRepo(path.join(root, 'webshop'), { commits: 4 });
		const opened = await server.call(OpenWorkspace, { folders: [{ name: 'webshop', path: repo }] });
		const [folder] = opened.folders;
		assert.ok(folder?.outcome === 'adopted', JSON.stringify(folder));
		assert.equal(folder.asset.created_by, "desk boot: project webshop's repo");
		assert.ok(
			server.logs.includes(`asset imported: ${folder.asset.id} webshop ${repo} (desk boot: project webshop's repo)`),
			server.logs.join('\n'),
		);
		assert.ok(server.notifications.some((n) => n.method === AssetsDidChange.method));

		const { assets } = await server.call(ListAssets, { project: 'webshop' });
		assert.equal(assets.length, 1);
		assert.deepEqual(
			{
				id: assets[0]?.id,
				engine: assets[0]?.engine,
				kind: assets[0]?.kind,
				branch: assets[0]?.branch,
				versions: assets[0]?.version_count,
				projects: assets[0]?.projects,
			},
			{
				id: folder.asset.id,
				engine: 'git',
				kind: 'code',
				branch: 'main',
				versions: 4,
				projects: [{ name: 'webshop', main: true }],
			},
		);
		const { versions } = await server.call(ListVersions, { id: folder.asset.id });
		assert.deepEqual(
			versions.map((v) => v.version),
			[1, 2, 3, 4],
		);

		const again = await server.call(OpenWorkspace, { folders: [{ name: 'webshop', path: repo }] });
		assert.ok(again.folders[0]?.outcome === 'adopted' && again.folders[0].created === false);
		assert.equal(
			server.logs.filter((l) => l.startsWith('asset imported:')).length,
			1,
			'the import is logged once per new record',
		);
	});

	it('refuses with RequestFailed and the desk error as data', async () => {
		const failure = await expectRpcError(server.connection, ListVersions.method, { id: 'a-0000000000000000' });
		assert.equal(failure.code, deskErrorCode);
		assert.equal((failure.data as DeskErrorJson).code, 'asset.notFound');
		const project = await expectRpcError(server.connection, ListAssets.method, { project: 'no such project' });
		assert.equal((project.data as DeskErrorJson).code, 'project.notFound');
		await stillServing();
	});

	it('answers an unknown method with MethodNotFound and keeps serving', async () => {
		const failure = await expectRpcError(server.connection, 'desk/no/such', {});
		assert.equal(failure.code, ErrorCodes.MethodNotFound);
		await stillServing();
	});

	const badParams: Array<[string, string, () => unknown]> = [
		['a wrong type', ListVersions.method, () => ({ id: 5 })],
		['a missing field', ListVersions.method, () => ({})],
		['an unknown field', ListAssets.method, () => ({ project: 'x', extra: true })],
		['positional params', ListVersions.method, () => ['a-0000000000000000']],
		['a string of 100 000 characters', ListVersions.method, () => ({ id: 'a'.repeat(100_000) })],
		[
			'too many folders',
			OpenWorkspace.method,
			() => ({ folders: Array.from({ length: 300 }, (_, i) => ({ name: `f${i}`, path: `/tmp/f${i}` })) }),
		],
		[
			'a __proto__ key',
			OpenWorkspace.method,
			() => JSON.parse('{"folders": [], "__proto__": {"polluted": true}}') as unknown,
		],
	];
	for (const [label, method, params] of badParams) {
		it(`answers ${label} with InvalidParams, changes nothing and keeps serving`, async () => {
			const before = await server.call(ListAssets, {});
			const failure = await expectRpcError(server.connection, method, params());
			assert.equal(failure.code, ErrorCodes.InvalidParams, failure.message);
			assert.ok(failure.message.length < 500, 'the message names the problem without echoing the input');
			const afterwards = await server.call(ListAssets, {});
			assert.deepEqual(afterwards, before);
		});
	}

	it('pollutes no prototype of the server with __proto__ and constructor.prototype keys: later requests answer as before', async () => {
		const [asset] = (await server.call(ListAssets, { project: 'webshop' })).assets;
		assert.ok(asset, 'the webshop repository was adopted by an earlier test');
		const assetsBefore = await server.call(ListAssets, {});
		const versionsBefore = await server.call(ListVersions, { id: asset.id });
		assert.ok(versionsBefore.versions.length > 1);
		// Were any of these to reach Object.prototype in the server, a request that leaves `project` or `to`
		// out would find them there: ListAssets would look for the project "polluted" and ListVersions stop at v1.
		const pollution = '{"project": "polluted", "to": 1}';
		const payloads: Array<[string, string]> = [
			[OpenWorkspace.method, `{"folders": [], "__proto__": ${pollution}}`],
			[OpenWorkspace.method, `{"folders": [{"name": "x", "path": "/nonexistent/x", "__proto__": ${pollution}}]}`],
			[ListAssets.method, `{"constructor": {"prototype": ${pollution}}}`],
			[ListVersions.method, `{"id": "${asset.id}", "__proto__": ${pollution}}`],
			// Accepted by the schema (any JSON) and handed to the domain's parser of checks.
			[
				SetChecks.method,
				`{"id": "${asset.id}", "checks": {"__proto__": ${pollution}, "constructor": {"prototype": ${pollution}}}}`,
			],
			[SetChecks.method, `{"id": "${asset.id}", "checks": [{"__proto__": ${pollution}}]}`],
			[
				LaunchGo.method,
				`{"project": "webshop", "execute": false, "settings": {"__proto__": ${pollution}, "constructor": {"prototype": ${pollution}}}}`,
			],
		];
		for (const [index, [method, params]] of payloads.entries()) {
			const id = `pollute-${index}`;
			const answer = await server.sendRawRequest(
				id,
				`{"jsonrpc":"2.0","id":"${id}","method":"${method}","params":${params}}`,
			);
			assert.ok(
				answer.error === undefined || answer.error.code !== ErrorCodes.InternalError,
				`${method} ${params}: ${JSON.stringify(answer.error)}`,
			);
		}
		assert.deepEqual(await server.call(ListAssets, {}), assetsBefore, 'ListAssets without a project lists every asset');
		assert.deepEqual(
			(await server.call(ListVersions, { id: asset.id })).versions,
			versionsBefore.versions,
			'ListVersions without `to` lists every version',
		);
		await stillServing();
	});

	it('answers params nested 100 000 deep with InvalidParams and keeps serving', async () => {
		const depth = 100_000;
		const params = '{"project":'.repeat(depth) + '"leaf"' + '}'.repeat(depth);
		const answer = await server.sendRawRequest(
			'deep-1',
			`{"jsonrpc":"2.0","id":"deep-1","method":"${ListAssets.method}","params":${params}}`,
		);
		assert.equal(answer.error?.code, ErrorCodes.InvalidParams, JSON.stringify(answer).slice(0, 300));
		await stillServing();
	});

	it('survives a malformed frame on the wire and answers the next request', async () => {
		const body = '{"jsonrpc":"2.0","id":999,"method":"desk/server/status","params":{'; // cut JSON
		server.writeRaw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
		await stillServing();
	});

	// Run last: some of these change the library (a link, a card's ticket).
	it('answers every method the protocol declares with its handler, and no other', async () => {
		const project = 'no-such-project';
		const id = 'a-0000000000000000';
		// Params each method's schema takes, so the answer comes from its handler; the compiler asks for one per declared method.
		const params: { [K in keyof typeof deskRequests]: ParamsOf<(typeof deskRequests)[K]> } = {
			OpenWorkspace: { folders: [] },
			ListAssets: { project },
			ListVersions: { id },
			GetStatus: {},
			SearchLibrary: { query: 'readme', project },
			RecoverStore: { store: 'library', choice: 'restore' },
			ImportAsset: {},
			SnapshotAsset: { id },
			PutVersion: { id, files: [] },
			GetAtGo: { id },
			ListFiles: { id },
			ListFolder: { id, folder: '' },
			ReadFile: { id, path: 'README.md' },
			DiffVersions: { id, from: 1, to: 2 },
			SetTags: { id, tags: [] },
			DescribeAsset: { id, about: '' },
			SetRetired: { id, retired: false },
			SetChecks: { id, checks: [] },
			AddLink: { name: 'docs', url: 'not a url' },
			AddNote: { name: 'note', text: 'text', project },
			SyncAsset: { id },
			UsedInLaunches: { id },
			ListRuns: { project },
			ShowRun: { project, id: 'r' },
			ImportHistory: { project },
			ExportHistory: { project },
			PatchSetFiles: { project, patchset: 'p' },
			ReadRunText: { project, run: 'r', hash: 'a'.repeat(64) },
			GetCard: { project },
			SetTicket: { project, ticket: '' },
			SuggestAssets: { project },
			PlugAsset: { project, id, role: 'reference' },
			UnplugAsset: { project, id },
			LaunchGo: { project, execute: false },
			CheckAgents: { agent: 'no-such-agent' },
			CancelRun: { project, run: 'r' },
			DecideRun: { project, run: 'r', decision: 'abandon' },
			ResumeRun: { project, run: 'r' },
			CancelTask: { project, task: 't' },
			CancelIntent: { project, intent: 'i' },
			FollowUp: { project, from: 'i', ticket: 'more' },
			ListAttachments: { project },
			ReadAttachment: { project, task: 't', ref: 'x' },
			AttachFile: { project, task: 't', path: '/nonexistent/file' },
			DeleteAttachment: { project, task: 't', ref: 'x', via: 'test' },
			ListRetireProposals: { project },
			AnswerRetireProposal: { id: 'rp-none', answer: 'decline' },
			ListLineageRoots: { project },
			AddLineageRoot: { project, name: 'experiments' },
			LineageTreeRequest: { project },
			BranchFromRun: { project, repo: '/nonexistent', prompt: 'p' },
			PromptLineage: { project, root: 'main', prompt: 'p' },
			ListBoard: { project, node: 't' },
			PostToBoard: { project, run: 'r', text: 'a note' },
			AnswerReport: { project, report: 'm', text: 'thanks' },
			ContinueWithReports: { project, run: 'r' },
			RememberMemory: { project, text: 'a fact', requestId: 'req-memory-1' },
			ForgetMemory: { project, root: 'main', memory: 'm', requestId: 'req-memory-2' },
			ShowMemory: { project, root: 'main' },
			CommitMemory: { project, root: 'main', requestId: 'req-memory-3' },
			LineageCatchUp: { project, run: 'r' },
			MemorizeLanding: { project, run: 'r', requestId: 'req-memory-4' },
		};
		const answered: string[] = [];
		for (const [name, definition] of Object.entries(deskRequests) as Array<
			[keyof typeof deskRequests, (typeof deskRequests)[keyof typeof deskRequests]]
		>) {
			const sent = params[name];
			assert.ok(
				(definition.params as Schema<unknown>).check(sent, 'params').ok,
				`the test's params for ${definition.method} pass its schema`,
			);
			try {
				await server.connection.sendRequest(definition.method, sent);
				answered.push(definition.method);
			} catch (error) {
				const { code, message, data } = error as { code: number; message: string; data?: DeskErrorJson };
				// A refusal of the desk (RequestFailed with a code) comes from the handler; MethodNotFound,
				// InvalidParams or InternalError ("handler is not a function") would mean none ran.
				assert.equal(
					code,
					deskErrorCode,
					`${definition.method} is answered by its handler, not with ${code} ${message}`,
				);
				assert.ok(data?.code, `${definition.method}: a desk error code`);
				answered.push(definition.method);
			}
		}
		assert.deepEqual(
			answered.sort(),
			Object.values(deskRequests)
				.map((d) => d.method)
				.sort(),
		);
		// And nothing the protocol does not declare: a near miss, another case, a notification's name, names every object has.
		const declared: string[] = Object.values(deskRequests).map((d) => d.method);
		const undeclared = [
			'desk/no/such',
			`${ListAssets.method}/`,
			ListAssets.method.toUpperCase(),
			` ${GetStatus.method}`,
			AssetsDidChange.method,
			'constructor',
			'__proto__',
			'toString',
			'hasOwnProperty',
			'initialized',
		];
		for (const method of undeclared) {
			assert.ok(!declared.includes(method), method);
			const failure = await expectRpcError(server.connection, method, {});
			assert.equal(
				failure.code,
				ErrorCodes.MethodNotFound,
				`${JSON.stringify(method)} is not a method of the desk: ${failure.message}`,
			);
		}
		await stillServing();
	});
});

describe('the desk server with a damaged library', () => {
	it('reports the error in its status, keeps the bad file aside and refuses work with the reason', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		fs.mkdirSync(libraryDir, { recursive: true });
		fs.writeFileSync(path.join(libraryDir, 'library.db'), 'not a database');
		const server = await startServer(libraryDir);
		try {
			const status = await server.call(GetStatus, {});
			assert.equal(status.state, 'error');
			assert.equal(status.error?.code, 'store.corrupt');
			const kept = String(status.error?.data['keptAs']);
			assert.equal(fs.readFileSync(kept, 'utf8'), 'not a database');
			const failure = await expectRpcError(server.connection, ListAssets.method, {});
			assert.equal((failure.data as DeskErrorJson).code, 'store.corrupt');
			assert.ok(server.logs.some((l) => l.includes('could not open its library')));
		} finally {
			await server.stop();
		}
	});
});
