import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCodes } from 'vscode-languageserver/node';
import {
	AddNote,
	AttachFile,
	deskErrorCode,
	deskRequests,
	ExportHistory,
	GetCard,
	GetStatus,
	ImportAsset,
	LaunchGo,
	ListAssets,
	ListAttachments,
	ListRuns,
	ListVersions,
	OpenWorkspace,
	PatchSetFiles,
	ReadAttachment,
	SetChecks,
	ShowRun,
	SuggestAssets,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

const bounded = { timeout: 30_000 };

describe('the server before and after initialize', () => {
	it(
		'refuses every declared request before initialize with desk.notReady, and never says "ready" before it',
		bounded,
		async () => {
			const libraryDir = path.join(tempDir(), 'library');
			const server = await startServer(libraryDir, { initialize: false });
			try {
				for (const definition of Object.values(deskRequests)) {
					const failure = await expectRpcError(server.connection, definition.method, {});
					assert.equal(failure.code, deskErrorCode, `${definition.method}: ${failure.message}`);
					assert.equal((failure.data as DeskErrorJson).code, 'desk.notReady', definition.method);
				}
				assert.equal(fs.existsSync(libraryDir), false, 'no library was opened');
				await server.connection.sendRequest('initialize', {
					processId: null,
					capabilities: {},
					initializationOptions: { libraryDir },
				});
				const status = await server.call(GetStatus, {});
				assert.equal(status.state, 'ready');
				assert.equal(status.libraryDir, libraryDir);
			} finally {
				await server.stop();
			}
		},
	);

	it('refuses a second initialize with desk.alreadyInitialized and keeps the first library', bounded, async () => {
		const root = tempDir();
		const first = path.join(root, 'first');
		const second = path.join(root, 'second');
		const server = await startServer(first);
		try {
			const failure = await expectRpcError(server.connection, 'initialize', {
				processId: null,
				capabilities: {},
				initializationOptions: { libraryDir: second },
			});
			assert.equal(failure.code, deskErrorCode, failure.message);
			assert.equal((failure.data as DeskErrorJson).code, 'desk.alreadyInitialized');
			const status = await server.call(GetStatus, {});
			assert.equal(status.libraryDir, first);
			assert.equal(fs.existsSync(second), false, 'the second library was never opened');
		} finally {
			await server.stop();
		}
	});

	it('refuses a relative library folder in initialize, naming the field', bounded, async () => {
		const cwd = process.cwd();
		const server = await startServer('', { initialize: false });
		try {
			const failure = await expectRpcError(server.connection, 'initialize', {
				processId: null,
				capabilities: {},
				initializationOptions: { libraryDir: 'desk-relative-library' },
			});
			assert.equal(failure.code, ErrorCodes.InvalidParams, failure.message);
			assert.deepEqual((failure.data as DeskErrorJson).code, 'desk.relativePath');
			assert.equal((failure.data as DeskErrorJson).data['field'], 'initializationOptions.libraryDir');
			assert.equal(fs.existsSync(path.join(cwd, 'desk-relative-library')), false);
		} finally {
			await server.stop();
		}
	});
});

describe('params the desk refuses by name', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'webshop'), { commits: 2 });
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'webshop', path: repo }] }),
	);

	const assets = async () => (await server.call(ListAssets, {})).assets;

	it("refuses relative paths with desk.relativePath naming the field, and resolves nothing against the server's folder", async () => {
		const before = await assets();
		const cases: Array<[string, unknown, string]> = [
			[OpenWorkspace.method, { folders: [{ name: 'w', path: 'webshop' }] }, 'params.folders[0].path'],
			[ImportAsset.method, { dir: '.' }, 'params.dir'],
			[ImportAsset.method, { dir: '../x', newName: 'n' }, 'params.dir'],
			[AttachFile.method, { project: 'webshop', task: 't-1', path: 'package.json' }, 'params.path'],
		];
		for (const [method, params, field] of cases) {
			const failure = await expectRpcError(server.connection, method, params);
			assert.equal(failure.code, ErrorCodes.InvalidParams, `${method}: ${failure.message}`);
			assert.equal((failure.data as DeskErrorJson).code, 'desk.relativePath', method);
			assert.equal((failure.data as DeskErrorJson).data['field'], field);
			assert.ok(failure.message.includes(field), failure.message);
		}
		assert.deepEqual(await assets(), before);
	});

	it('refuses names with a lone surrogate (they have no UTF-8 form) with desk.badText naming the field', async () => {
		const before = await assets();
		const cases: Array<[string, unknown, string]> = [
			[AddNote.method, { name: 'p\ud800', text: 'x' }, 'params.name'],
			[AddNote.method, { name: 'ok', text: 'tail \udc00 first' }, 'params.text'],
			[ImportAsset.method, { newName: 'n', project: 'p\ud800' }, 'params.project'],
			[ListAssets.method, { project: '\udfff' }, 'params.project'],
		];
		for (const [method, params, field] of cases) {
			const failure = await expectRpcError(server.connection, method, params);
			assert.equal(failure.code, ErrorCodes.InvalidParams, `${method}: ${failure.message}`);
			assert.equal((failure.data as DeskErrorJson).code, 'desk.badText', method);
			assert.equal((failure.data as DeskErrorJson).data['field'], field);
		}
		// A well-formed pair (an emoji) is a name like any other.
		const note = await server.call(AddNote, { name: 'p\ud83d\ude00', text: 'x' });
		assert.equal(note.name, 'p😀');
		assert.deepEqual((await assets()).length, before.length + 1);
	});

	it('refuses JSON params (checks, run settings) nested deeper than 64 levels before any parser walks them, naming the field', async () => {
		const assetId = (await assets())[0]!.id;
		const deepChecks = '['.repeat(10_000) + ']'.repeat(10_000);
		const checks = await server.sendRawBody(
			'deep-checks',
			`{"jsonrpc":"2.0","id":"deep-checks","method":"${SetChecks.method}","params":{"id":${JSON.stringify(assetId)},"checks":${deepChecks}}}`,
		);
		assert.equal(checks.error?.code, ErrorCodes.InvalidParams, JSON.stringify(checks).slice(0, 300));
		assert.equal((checks.error.data as DeskErrorJson).data['field'], 'params.checks');
		assert.match(checks.error.message, /nested deeper than 64 levels/);
		const settings = await expectRpcError(server.connection, LaunchGo.method, {
			project: 'webshop',
			settings: { agents: JSON.parse('['.repeat(100) + ']'.repeat(100)) as unknown },
			execute: false,
		});
		assert.equal(settings.code, ErrorCodes.InvalidParams, settings.message);
		assert.equal((settings.data as DeskErrorJson).data['field'], 'params.settings');
	});

	it('answers positional params with InvalidParams, whatever their count', async () => {
		for (const params of [[], ['a-0000000000000000'], ['a', 'b'], ['a', 'b', 'c', 'd']]) {
			const failure = await expectRpcError(server.connection, ListVersions.method, params);
			assert.equal(failure.code, ErrorCodes.InvalidParams, `${JSON.stringify(params)}: ${failure.message}`);
		}
	});

	it('echoes no more than a few hundred characters of the input in any error', async () => {
		const hugeMethod = `desk/${'m'.repeat(10 * 1024 * 1024)}`;
		const unknown = await expectRpcError(server.connection, hugeMethod, {});
		assert.equal(unknown.code, ErrorCodes.MethodNotFound);
		assert.ok(
			unknown.message.length < 1000,
			`the answer to a 10 MB method name is ${unknown.message.length} characters`,
		);
		const longProject = 'q'.repeat(1024);
		const notFound = await expectRpcError(server.connection, ListAssets.method, { project: longProject });
		assert.equal((notFound.data as DeskErrorJson).code, 'project.notFound');
		assert.ok(
			JSON.stringify(notFound).length < 2000,
			`the refusal of a 1024-character name is ${JSON.stringify(notFound).length} characters`,
		);
		assert.ok(
			server.logs.every((line) => line.length < 5000),
			'no log line repeats the input in full',
		);
	});

	it('answers a read of an unknown project with project.notFound and never creates it', async () => {
		const reads: Array<[string, Record<string, unknown>]> = [
			[ListAssets.method, {}],
			[ListRuns.method, {}],
			[ShowRun.method, { id: 'r-1' }],
			[GetCard.method, {}],
			[SuggestAssets.method, { ticket: 'x' }],
			[ListAttachments.method, {}],
			[ReadAttachment.method, { task: 't-1', ref: 'a' }],
			[PatchSetFiles.method, { patchset: 'p-1' }],
			[ExportHistory.method, {}],
		];
		for (const [method, params] of reads) {
			const failure = await expectRpcError(server.connection, method, { ...params, project: 'ghost' });
			assert.equal(
				(failure.data as DeskErrorJson | undefined)?.code,
				'project.notFound',
				`${method}: ${failure.message}`,
			);
		}
		const still = await expectRpcError(server.connection, ListAssets.method, { project: 'ghost' });
		assert.equal((still.data as DeskErrorJson).code, 'project.notFound', 'no read created the project');
	});
});
