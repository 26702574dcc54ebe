import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
	AttachFile,
	GetStatus,
	LaunchGo,
	ListAssets,
	ListAttachments,
	OpenWorkspace,
	RecoverStore,
	SetTicket,
	type DeskErrorJson,
	type ResultOf,
} from '../../server/src/protocol/protocol';
import { makeRepo } from '../helpers/gitRepo';
import { expectRpcError, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

async function status(server: RunningServer): Promise<ResultOf<typeof GetStatus>> {
	return await server.call(GetStatus, {});
}

async function refusal(server: RunningServer, method: string, params: unknown): Promise<DeskErrorJson> {
	return (await expectRpcError(server.connection, method, params)).data as DeskErrorJson;
}

describe('desk/store/recover', () => {
	it('a damaged library stays an error in every new server until the person chooses; restore of an unreadable copy is refused, empty opens a new library', async () => {
		const libraryDir = path.join(tempDir(), 'library');
		fs.mkdirSync(libraryDir, { recursive: true });
		const file = path.join(libraryDir, 'library.db');
		fs.writeFileSync(file, 'not a database');
		for (let start = 0; start < 2; start++) {
			const server = await startServer(libraryDir);
			try {
				const state = await status(server);
				assert.equal(state.state, 'error', `server ${start + 1} serves no empty library`);
				assert.equal(state.error?.code, 'store.corrupt');
				assert.equal(state.error?.data['damaged'], true);
				assert.equal(state.error?.data['file'], file);
				assert.deepEqual(state.error?.data['choices'], ['restore', 'empty']);
				assert.equal(fs.readFileSync(String(state.error?.data['keptAs']), 'utf8'), 'not a database');
			} finally {
				await server.stop();
			}
		}
		const server = await startServer(libraryDir);
		try {
			assert.equal(
				(await refusal(server, RecoverStore.method, { store: 'library', choice: 'restore' })).code,
				'store.cannotRecover',
			);
			assert.equal(
				(await refusal(server, RecoverStore.method, { store: 'library', choice: 'rebuild' })).code,
				'store.cannotRecover',
			);
			assert.equal((await status(server)).state, 'error', 'a refused choice changes nothing');
			const result = await server.call(RecoverStore, { store: 'library', choice: 'empty' });
			assert.equal(result.choice, 'empty');
			assert.equal(result.file, file);
			assert.equal((await status(server)).state, 'ready', 'the server opened the new library');
			assert.deepEqual((await server.call(ListAssets, {})).assets, []);
			assert.equal(
				(await refusal(server, RecoverStore.method, { store: 'library', choice: 'empty' })).code,
				'store.notDamaged',
			);
			assert.ok(fs.existsSync(String(result.keptAs)), 'the damaged copy stays');
		} finally {
			await server.stop();
		}
	});

	it('a 0-byte project database: the folder fails to open in every new server, no attachment file is deleted, and recover empty keeps them all', async () => {
		const root = tempDir();
		const libraryDir = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		let server = await startServer(libraryDir);
		try {
			await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
			await server.call(SetTicket, { project: 'shop', ticket: 'Keep the receipts' });
			const { task } = await server.call(LaunchGo, { project: 'shop', execute: false });
			for (const name of ['one.txt', 'two.txt']) {
				fs.writeFileSync(path.join(root, name), `${name}\n`);
				await server.call(AttachFile, { project: 'shop', task, path: path.join(root, name) });
			}
		} finally {
			await server.stop();
		}
		const attachments = path.join(repo, '.desk', 'attachments');
		const stored = () =>
			fs
				.readdirSync(attachments)
				.filter((n) => /^[0-9a-f]{32}$/.test(n))
				.sort();
		const files = stored();
		assert.equal(files.length, 2);
		const hourAgo = new Date(Date.now() - 3_600_000);
		for (const name of files) {
			fs.utimesSync(path.join(attachments, name), hourAgo, hourAgo);
		}
		const file = path.join(repo, '.desk', 'project.db');
		fs.truncateSync(file, 0);

		for (let start = 0; start < 2; start++) {
			server = await startServer(libraryDir);
			try {
				const opened = await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
				const folder = opened.folders[0]!;
				assert.equal(folder.outcome, 'failed', `server ${start + 1} opens no empty project database`);
				assert.ok(folder.outcome === 'failed');
				assert.equal(folder.error.code, 'store.corrupt');
				assert.equal(folder.error.data['file'], file);
				assert.deepEqual(folder.error.data['choices'], ['restore', 'empty', 'rebuild']);
				const listed = await refusal(server, ListAttachments.method, { project: 'shop' });
				assert.equal(listed.code, 'store.corrupt');
				assert.match(listed.message, /project\.db is damaged/);
			} finally {
				await server.stop();
			}
			assert.deepEqual(stored(), files, 'no attachment file was deleted');
		}

		server = await startServer(libraryDir);
		try {
			await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
			const result = await server.call(RecoverStore, { store: 'project', repo, choice: 'empty' });
			assert.deepEqual(
				[result.store, result.choice, result.file, result.attachmentsKept],
				['project', 'empty', file, 2],
			);
			assert.deepEqual(await server.call(ListAttachments, { project: 'shop' }), { tasks: [] });
			const again = await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
			assert.equal(again.folders[0]?.outcome, 'adopted');
			assert.equal(
				(await refusal(server, RecoverStore.method, { store: 'project', repo, choice: 'empty' })).code,
				'store.notDamaged',
			);
			assert.equal(
				(await refusal(server, RecoverStore.method, { store: 'project', repo: root, choice: 'empty' })).code,
				'project.notFound',
			);
		} finally {
			await server.stop();
		}
		assert.deepEqual(stored(), files, 'the new database swept none of the files written before it');
	});
});
