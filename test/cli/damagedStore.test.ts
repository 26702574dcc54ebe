import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { AssetSummary } from '../../server/src/assets/types';
import { git, makeRepo } from '../helpers/gitRepo';
import { openDesk } from '../helpers/deskFixture';
import { tempDir } from '../helpers/temp';
import { completeChain } from '../unit/ai/chain';
import { desk, launchedTask } from '../helpers/deskCli';

/** `desk task attachments add TASK FILE [more]` on the project at `repo`. */
function attach(store: string, repo: string, task: string, file: string, ...more: string[]) {
	return desk('--store', store, '--repo', repo, 'task', 'attachments', 'add', task, file, ...more);
}

function ok(result: { code: number | null; stdout: string; stderr: string }, what: string): string {
	assert.equal(result.code, 0, `${what}: ${result.stderr}`);
	return result.stdout;
}

/** Every call refused with a message naming `file`, exit code not 0, as often as it is asked. */
function assertRefused(args: string[], file: string, times = 2): void {
	for (let i = 0; i < times; i++) {
		const result = desk(...args);
		assert.notEqual(result.code, 0, `call ${i + 1} of ${args.join(' ')} succeeded: ${result.stdout}`);
		assert.ok(result.stderr.includes(file), `call ${i + 1} names ${file}: ${result.stderr}`);
		assert.match(result.stderr, /damaged/);
		assert.match(result.stderr, /desk store recover/, 'the message says how to choose');
	}
}

/** Attachment files, made older than the sweep's ten minutes. */
function ageAttachments(repo: string): string[] {
	const folder = path.join(repo, '.desk', 'attachments');
	const names = fs.readdirSync(folder).filter((n) => /^[0-9a-f]{32}$/.test(n));
	const hourAgo = new Date(Date.now() - 3_600_000);
	for (const name of names) {
		fs.utimesSync(path.join(folder, name), hourAgo, hourAgo);
	}
	return names.sort();
}

function attachmentFiles(repo: string): string[] {
	return fs
		.readdirSync(path.join(repo, '.desk', 'attachments'))
		.filter((n) => /^[0-9a-f]{32}$/.test(n))
		.sort();
}

describe('a damaged store on the command line', () => {
	it('a 0-byte library stays an error on every call until the person chooses; "empty" starts a new one, the kept copy stays', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		ok(desk('--store', store, 'asset', 'note', '--name', 'remember', '--text', 'the milk'), 'note');
		const file = path.join(store, 'library.db');
		fs.truncateSync(file, 0);

		assertRefused(['--store', store, 'assets', 'list'], file, 2);
		const kept = fs.readdirSync(store).filter((n) => n.startsWith('library.db.corrupt-'));
		assert.equal(kept.length, 1, 'set aside once, not once per call');
		assert.equal(fs.statSync(path.join(store, kept[0]!)).size, 0);

		// The kept copy is empty: restoring it is refused by name; nothing changes.
		const restore = desk('--store', store, 'store', 'recover', '--library', 'restore', '--json');
		assert.equal(restore.code, 2, restore.stdout);
		assert.match(restore.stderr, /store\.cannotRecover/);
		assertRefused(['--store', store, 'assets', 'list'], file, 1);
		const rebuild = desk('--store', store, 'store', 'recover', '--library', 'rebuild');
		assert.equal(rebuild.code, 2);
		assert.match(rebuild.stderr, /restore or empty/);

		const empty = JSON.parse(
			ok(desk('--store', store, 'store', 'recover', '--library', 'empty', '--json'), 'recover empty'),
		) as { file: string; choice: string; keptAs: string };
		assert.equal(empty.choice, 'empty');
		assert.equal(empty.file, file);
		assert.ok(fs.existsSync(empty.keptAs), 'the kept copy is still there');
		assert.deepEqual(JSON.parse(ok(desk('--store', store, 'assets', 'list', '--json'), 'list')), []);
		const again = desk('--store', store, 'store', 'recover', '--library', 'empty');
		assert.equal(again.code, 2);
		assert.match(again.stderr, /store\.notDamaged/);
	});

	it('a byte changed inside a record of the library is damage naming the file, never served; "restore" takes the changed file back on purpose', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		ok(desk('--store', store, 'asset', 'note', '--name', 'quarterly-figures', '--text', 'kept safe'), 'note');
		const file = path.join(store, 'library.db');
		const bytes = fs.readFileSync(file);
		const at = bytes.indexOf('quarterly-figures');
		assert.ok(at > 0, 'the name is in the checkpointed base');
		bytes[at] = 'Q'.charCodeAt(0);
		fs.writeFileSync(file, bytes);

		assertRefused(['--store', store, 'assets', 'list', '--json'], file, 2);
		assert.equal(fs.existsSync(file), false, 'the damaged file is set aside');

		const restored = JSON.parse(
			ok(desk('--store', store, 'store', 'recover', '--library', 'restore', '--json'), 'restore'),
		) as { choice: string };
		assert.equal(restored.choice, 'restore');
		const assets = JSON.parse(ok(desk('--store', store, 'assets', 'list', '--json'), 'list')) as AssetSummary[];
		assert.deepEqual(
			assets.map((a) => a.name),
			['Quarterly-figures'],
			'the person took the file back as it is',
		);
	});

	it('a 0-byte project database with stored attachments: every call refused naming the file, no attachment deleted; empty and rebuild keep them', async () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		ok(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main'), 'import');
		// AI objects in refs/desk/history, for "rebuild"; the files are attached to their task.
		const chain = completeChain(git(repo, 'rev-parse', 'HEAD'));
		const seeded = await openDesk(store);
		(await seeded.projectAi(repo)).put(chain.all);
		seeded.close();
		for (const name of ['a.txt', 'b.txt', 'c.txt']) {
			fs.writeFileSync(path.join(root, name), `attachment ${name}\n`);
			ok(attach(store, repo, chain.task.object_id, path.join(root, name)), `attach ${name}`);
		}
		ok(desk('--store', store, '--repo', repo, 'history', 'export'), 'export');
		const files = ageAttachments(repo);
		assert.equal(files.length, 3);

		const file = path.join(repo, '.desk', 'project.db');
		fs.truncateSync(file, 0);
		const list = ['--store', store, '--repo', repo, 'task', 'attachments', 'list', 'task-1'];
		assertRefused(list, file, 2);
		assertRefused(['--store', store, '--repo', repo, 'runs', 'list'], file, 1);
		assert.deepEqual(attachmentFiles(repo), files, 'no attachment file was deleted');

		const empty = JSON.parse(
			ok(desk('--store', store, '--repo', repo, 'store', 'recover', 'empty', '--json'), 'recover empty'),
		) as { file: string };
		assert.equal(empty.file, file);
		assert.deepEqual(JSON.parse(ok(desk(...list, '--json'), 'list after empty')), []);
		ok(desk('--store', store, '--repo', repo, 'task', 'attachments', 'list'), 'list tasks');
		assert.deepEqual(
			attachmentFiles(repo),
			files,
			'a database started after the files were written sweeps none of them',
		);

		// Damaged again; this time rebuilt from refs/desk/history.
		fs.truncateSync(file, 0);
		assertRefused(list, file, 1);
		const rebuilt = JSON.parse(
			ok(desk('--store', store, '--project', 'shop', 'store', 'recover', 'rebuild', '--json'), 'rebuild'),
		) as { rebuilt: { added: number } };
		assert.equal(rebuilt.rebuilt.added, chain.all.length);
		const runs = JSON.parse(ok(desk('--store', store, '--repo', repo, 'runs', 'list', '--json'), 'runs')) as {
			intents: Array<{ intent: { prompt: string } }>;
		};
		assert.equal(runs.intents[0]?.intent.prompt, chain.intent.prompt);
		ok(desk(...list), 'list after rebuild');
		assert.deepEqual(attachmentFiles(repo), files, 'rebuild deletes no attachment file either');
	});

	it('a byte changed inside a record of a project database is damage naming the file; restore of a healthy store is refused', async () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		ok(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main'), 'import');
		fs.writeFileSync(path.join(root, 'invoice.txt'), 'invoice\n');
		const task = launchedTask(store, 'shop', 'File the invoice');
		ok(attach(store, repo, task, path.join(root, 'invoice.txt'), '--note', 'signed-by-finance'), 'attach');
		const file = path.join(repo, '.desk', 'project.db');
		const bytes = fs.readFileSync(file);
		const at = bytes.indexOf('signed-by-finance');
		assert.ok(at > 0);
		bytes.writeUInt8(bytes[at]! ^ 0x20, at);
		fs.writeFileSync(file, bytes);
		const files = ageAttachments(repo);
		assertRefused(['--store', store, '--repo', repo, 'task', 'attachments', 'list', 'task-1'], file, 2);
		assert.deepEqual(attachmentFiles(repo), files);
		const library = desk('--store', store, 'store', 'recover', '--library', 'restore');
		assert.equal(library.code, 2);
		assert.match(library.stderr, /store\.notDamaged/);
		assert.match(library.stderr, /library\.db/);
	});
});
