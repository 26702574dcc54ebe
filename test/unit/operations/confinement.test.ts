/**
 * The asset and attachment operations on a real desk (a temp library, real git repositories): the
 * actor is recorded on what a call makes, and an agent's call is confined to its run's project, task
 * and folders (a `..`, an absolute path elsewhere, a link in the work folder pointing out).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Desk } from '../../../server/src/desk';
import { isDeskError, type DeskErrorCode } from '../../../server/src/core/errors';
import { actorLabel, personLabel, type Actor } from '../../../server/src/operations/actor';
import {
	addLink,
	describeAsset,
	fileOfCall,
	importAsset,
	putVersion,
	snapshotAsset,
} from '../../../server/src/operations/assets';
import { attachFile } from '../../../server/src/operations/attachments';
import { invokeOperation, noEvents, type Operation } from '../../../server/src/operations/operation';
import { actor as actorRef, newTask, seal } from '../../../server/src/ai/model';
import { openDesk } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

const person = { name: 'Jane Doe', email: 'jane@example.com' };
const editor: Actor = { kind: 'editor', person };
const cli: Actor = { kind: 'cli', person };

/** The run's task, made in each webshop project below: a file is attached only to a task the project holds. */
const taskId = '01920000-0000-7000-8000-000000000001';
/** Another task of the same project, the person's. */
const otherTaskId = '01920000-0000-7000-8000-000000000002';

/** Puts a task (the run's unless `id` says otherwise) into the project `name` of `desk`. */
async function makeRunTask(desk: Desk, name: string, id = taskId): Promise<void> {
	const top = desk.library.listProjects().find((p) => p.name === name)!.path;
	const task = newTask(actorRef('human', 'jane'), 'Chart the sales');
	task.object_id = id;
	(await desk.projectAi(top)).put([seal(task)]);
}

/** The agent claude of run-1 on the task of project webshop, with its folders. */
const agentOf = (workFolder: string, outbox: string): Extract<Actor, { kind: 'agent' }> => ({
	kind: 'agent',
	agent: 'claude',
	project: 'webshop',
	task: taskId,
	run: 'run-1',
	workFolder,
	outbox,
});

describe('asset and attachment operations: actor and confinement', () => {
	const root = tempDir();
	const work = path.join(root, 'work');
	const outbox = path.join(root, 'outbox');
	const elsewhere = path.join(root, 'elsewhere');
	const agent = agentOf(work, outbox);
	let desk: Desk;

	const call = <P, R>(op: Operation<P, R>, actor: Actor, params: unknown, requestId?: string) =>
		invokeOperation(
			op,
			{
				desk,
				actor,
				events: noEvents,
				signal: new AbortController().signal,
				...(requestId ? { requestId } : {}),
			},
			params,
		);

	const refused = async (promise: Promise<unknown>, code: DeskErrorCode) => {
		await assert.rejects(promise, (error: unknown) => {
			assert.ok(isDeskError(error, code), `${code}: ${String(error)}`);
			return true;
		});
	};

	const firstVersion = async (id: string) => (await desk.library.versionPage(id, { from: 1, to: 1 })).versions[0];

	const assetCount = () => desk.library.allAssets().length;

	before(async () => {
		desk = await openDesk();
		await desk.openWorkspace([
			{ name: 'webshop', path: makeRepo(path.join(root, 'webshop'), { commits: 1 }) },
			{ name: 'billing', path: makeRepo(path.join(root, 'billing'), { commits: 1 }) },
		]);
		await makeRunTask(desk, 'webshop');
		await makeRunTask(desk, 'webshop', otherTaskId);
		for (const dir of [work, outbox, elsewhere, path.join(work, 'docs'), path.join(elsewhere, 'secret')]) {
			fs.mkdirSync(dir, { recursive: true });
		}
		fs.writeFileSync(path.join(work, 'docs', 'guide.md'), '# Guide\n');
		fs.writeFileSync(path.join(work, 'report.txt'), 'the report\n');
		fs.writeFileSync(path.join(outbox, 'chart.csv'), 'a,b\n1,2\n');
		fs.writeFileSync(path.join(elsewhere, 'secret', 'key.txt'), 'not yours\n');
		// A link inside the work folder to a folder and a file outside it.
		fs.symlinkSync(path.join(elsewhere, 'secret'), path.join(work, 'out-dir'));
		fs.symlinkSync(path.join(elsewhere, 'secret', 'key.txt'), path.join(work, 'out-file.txt'));
	});

	it("an agent imports a folder of its work folder (relative) into its run's project, recorded as the agent", async () => {
		const result = await call(importAsset, agent, { dir: 'docs' });
		assert.equal(result.created, true);
		assert.equal(result.asset.working_dir, path.join(work, 'docs'));
		assert.equal(result.asset.created_by, 'agent claude, run run-1');
		assert.equal(result.project?.name, 'webshop');
		assert.equal((await firstVersion(result.asset.id))?.made_by, 'conductor');
	});

	it('an agent may not import a folder outside its work folder and outbox: .., an absolute path, a link pointing out', async () => {
		const count = assetCount();
		for (const dir of ['../elsewhere/secret', path.join(elsewhere, 'secret'), 'out-dir', 'out-dir/new']) {
			await refused(call(importAsset, agent, { dir }), 'operation.outsideRun');
			await refused(call(importAsset, agent, { newName: 'fresh', dir }), 'operation.outsideRun');
		}
		assert.equal(assetCount(), count, 'nothing was imported');
	});

	it("an agent may not name another project, an asset of another project, or set a project's main asset", async () => {
		const count = assetCount();
		await refused(call(importAsset, agent, { dir: 'docs', project: 'billing' }), 'operation.outsideRun');
		const billing = (await desk.library.listAssets('billing'))[0]!;
		await refused(call(importAsset, agent, { assetId: billing.id }), 'operation.outsideRun');
		await refused(call(describeAsset, agent, { id: billing.id, about: 'mine now' }), 'operation.outsideRun');
		await refused(
			call(addLink, agent, { name: 'docs', url: 'https://example.com', from: billing.id }),
			'operation.outsideRun',
		);
		await refused(call(importAsset, agent, { dir: 'docs', main: true }), 'operation.notAllowed');
		assert.equal(assetCount(), count);
		assert.equal(desk.library.getAsset(billing.id).about, '');
	});

	it('the person imports with their identity: created_by their name, the first version made_by user from the editor', async () => {
		fs.mkdirSync(path.join(elsewhere, 'handbook'));
		fs.writeFileSync(path.join(elsewhere, 'handbook', 'a.md'), 'a\n');
		const result = await call(importAsset, editor, { dir: path.join(elsewhere, 'handbook'), project: 'billing' });
		assert.equal(result.asset.created_by, personLabel(person));
		assert.equal((await firstVersion(result.asset.id))?.made_by, 'user');
		const made = await call(importAsset, cli, { newName: 'scratch', project: 'billing' });
		assert.equal(made.asset.created_by, actorLabel(cli));
		assert.equal((await firstVersion(made.asset.id))?.made_by, 'conductor');
		// A relative path from anyone but an agent would resolve against the server's folder.
		await refused(call(importAsset, editor, { dir: 'docs' }), 'desk.relativePath');
	});

	it("an agent snapshots and versions its project's asset from its work folder, made_by conductor", async () => {
		const docs = (await desk.library.listAssets('webshop')).find((a) => a.working_dir === path.join(work, 'docs'))!;
		fs.writeFileSync(path.join(work, 'docs', 'more.md'), 'more\n');
		const snapped = await call(snapshotAsset, agent, { id: docs.id, note: 'more' });
		assert.equal(snapped.created, true);
		assert.equal(snapped.version.made_by, 'conductor');
		const put = await call(putVersion, agent, { id: docs.id, files: [{ path: 'report.txt', from: 'report.txt' }] });
		assert.equal(put.created, true);
		assert.equal(put.version.made_by, 'conductor');
		assert.equal(Buffer.from(await desk.library.cat(docs.id, 'report.txt')).toString(), 'the report\n');
		for (const from of ['out-file.txt', '../elsewhere/secret/key.txt', path.join(elsewhere, 'secret', 'key.txt')]) {
			await refused(
				call(putVersion, agent, { id: docs.id, files: [{ path: 'key.txt', from }] }),
				'operation.outsideRun',
			);
		}
		assert.equal(fs.existsSync(path.join(work, 'docs', 'key.txt')), false);
	});

	it('an agent may not snapshot an asset of its project whose folder is outside its work folder', async () => {
		const handbook = await call(importAsset, editor, { dir: path.join(elsewhere, 'handbook'), project: 'webshop' });
		fs.writeFileSync(path.join(elsewhere, 'handbook', 'b.md'), 'b\n');
		await refused(call(snapshotAsset, agent, { id: handbook.asset.id }), 'operation.outsideRun');
		assert.equal((await desk.library.versionPage(handbook.asset.id, {})).total, 1);
	});

	it('links record their actor', async () => {
		const link = await call(addLink, agent, { name: 'spec', url: 'https://example.com/spec' });
		assert.equal(link.created_by, 'agent claude, run run-1');
		assert.ok((await desk.library.listAssets('webshop')).some((a) => a.id === link.id));
		const mine = await call(addLink, editor, { name: 'blog', url: 'https://example.com/blog' });
		assert.equal(mine.created_by, personLabel(person));
	});

	it("an agent attaches a file of its work folder or outbox to its run's task, added by the agent", async () => {
		const row = await call(attachFile, agent, { path: 'report.txt', note: 'for you' });
		assert.equal(row.task_id, taskId);
		assert.equal(row.added_by, 'agent claude, run run-1');
		assert.equal(row.run_id, 'run-1');
		assert.equal((await call(attachFile, agent, { path: path.join(outbox, 'chart.csv') })).name, 'chart.csv');
		const byHand = await call(attachFile, editor, {
			project: 'webshop',
			task: otherTaskId,
			path: path.join(work, 'report.txt'),
		});
		assert.equal(byHand.added_by, personLabel(person));
	});

	it("scrubs the agent's secrets from what it attaches, as from its outbox", async () => {
		const secret = 'sk-test-0123456789abcdef';
		fs.writeFileSync(path.join(work, 'env.txt'), `TOKEN=${secret}\n`);
		const row = await call(attachFile, { ...agent, secrets: [secret] }, { path: 'env.txt' });
		const store = await desk.attachments(desk.library.listProjects().find((p) => p.name === 'webshop')!.path);
		const stored = store.read(row).toString();
		assert.ok(!stored.includes(secret), stored);
		assert.match(stored, /^TOKEN=/);
	});

	it('an agent may not attach a file outside its folders, or to another task or project', async () => {
		const store = await desk.attachments(desk.library.listProjects().find((p) => p.name === 'webshop')!.path);
		const count = store.list().length;
		for (const file of ['out-file.txt', '../elsewhere/secret/key.txt', path.join(elsewhere, 'secret', 'key.txt')]) {
			await refused(call(attachFile, agent, { path: file }), 'operation.outsideRun');
		}
		await refused(call(attachFile, agent, { path: 'report.txt', task: otherTaskId }), 'operation.outsideRun');
		await refused(call(attachFile, agent, { path: 'report.txt', project: 'billing' }), 'operation.outsideRun');
		assert.equal(store.list().length, count);
	});

	it('refuses params its schema refuses, naming the field, before anything runs', async () => {
		const count = assetCount();
		await refused(call(importAsset, editor, { dir: path.join(elsewhere, 'x'), main: 'yes' }), 'desk.badParams');
		await refused(call(addLink, editor, { name: 'n' }), 'desk.badParams');
		await refused(call(putVersion, editor, { id: 'a', files: [{ path: 'x' }] }), 'desk.badParams');
		await refused(call(attachFile, editor, { path: '/x', task: taskId }), 'desk.badParams');
		assert.equal(assetCount(), count);
	});

	it('a repeat of a request id returns the first answer and makes nothing more', async () => {
		const first = await call(addLink, agent, { name: 'once', url: 'https://example.com/once' }, 'request-0001');
		const again = await call(addLink, agent, { name: 'once', url: 'https://example.com/once' }, 'request-0001');
		assert.equal(again.id, first.id);
		await refused(
			call(addLink, agent, { name: 'once', url: 'https://example.com/other' }, 'request-0001'),
			'request.idReused',
		);
		assert.equal(desk.library.allAssets().filter((a) => a.name === 'once').length, 1);
	});
});

describe("an agent's desk tools keep to what its sandbox shows it: read-only and hidden folders, no links", () => {
	const root = tempDir();
	// Shared isolation: the work folder is the person's own checkout, the outbox inside its hidden .desk.
	const work = path.join(root, 'webshop');
	const outbox = path.join(work, '.desk', 'tasks', taskId, 'outbox');
	const elsewhere = path.join(root, 'elsewhere');
	const inside = (rel: string) => path.join(work, rel);
	const agent: Actor = {
		...agentOf(work, outbox),
		readOnlyInside: ['.git', '.vscode', '.claude', '.agents'].map(inside),
		hiddenInside: [inside('.desk')],
	};
	let desk: Desk;

	const call = <P, R>(op: Operation<P, R>, actor: Actor, params: unknown) =>
		invokeOperation(op, { desk, actor, events: noEvents, signal: new AbortController().signal }, params);

	const refused = async (promise: Promise<unknown>, code: DeskErrorCode, message?: RegExp) => {
		await assert.rejects(promise, (error: unknown) => {
			assert.ok(isDeskError(error, code), `${code}: ${String(error)}`);
			if (message) {
				assert.match((error as Error).message, message);
			}
			return true;
		});
	};

	const webshopAttachments = async () =>
		(await desk.attachments(desk.library.listProjects().find((p) => p.name === 'webshop')!.path)).list();

	before(async () => {
		desk = await openDesk();
		await desk.openWorkspace([{ name: 'webshop', path: makeRepo(work, { commits: 1 }) }]);
		await makeRunTask(desk, 'webshop');
		for (const dir of [outbox, elsewhere, inside('.vscode'), inside('.claude'), inside('docs')]) {
			fs.mkdirSync(dir, { recursive: true });
		}
		fs.writeFileSync(inside('.vscode/settings.json'), '{}\n');
		fs.writeFileSync(inside('.claude/settings.json'), '{}\n');
		fs.writeFileSync(inside('docs/guide.md'), '# Guide\n');
		fs.writeFileSync(inside('report.txt'), 'the report\n');
		fs.writeFileSync(path.join(outbox, 'chart.csv'), 'a,b\n');
		fs.writeFileSync(path.join(elsewhere, 'key.txt'), 'not yours\n');
		if (!fs.existsSync(inside('.desk/project.db'))) {
			fs.writeFileSync(inside('.desk/project.db'), 'the project database\n');
		}
		// Links that stay inside the work folder: still never followed for an agent.
		fs.symlinkSync(inside('report.txt'), inside('alias.txt'));
		fs.symlinkSync(inside('docs'), inside('docs-link'));
		// A hard link: a name inside the work folder for a file outside it.
		fs.linkSync(path.join(elsewhere, 'key.txt'), inside('hard.txt'));
	});

	it('an agent may not make an asset of a read-only or hidden folder (.git, .vscode, .claude, .desk)', async () => {
		const count = desk.library.allAssets().length;
		for (const dir of ['.git', '.vscode', '.claude', '.agents/skills', '.desk', '.desk/tasks']) {
			await refused(call(importAsset, agent, { dir }), 'operation.outsideRun');
			await refused(call(importAsset, agent, { newName: 'mine', dir }), 'operation.outsideRun');
		}
		assert.equal(desk.library.allAssets().length, count);
	});

	it("an agent may not put files into, nor snapshot, an asset whose folder is read-only to it (the person's .vscode)", async () => {
		const settings = await call(importAsset, editor, { dir: inside('.vscode'), project: 'webshop' });
		const before = (await desk.library.versionPage(settings.asset.id, {})).total;
		fs.writeFileSync(inside('evil.json'), '{"desk.agents": {}}\n');
		await refused(
			call(putVersion, agent, { id: settings.asset.id, files: [{ path: 'settings.json', from: 'evil.json' }] }),
			'operation.outsideRun',
			/read but not write/,
		);
		assert.equal(fs.readFileSync(inside('.vscode/settings.json'), 'utf8'), '{}\n');
		fs.writeFileSync(inside('.vscode/more.json'), '{}\n');
		await refused(call(snapshotAsset, agent, { id: settings.asset.id }), 'operation.outsideRun');
		assert.equal((await desk.library.versionPage(settings.asset.id, {})).total, before);
	});

	it('an agent may not read the hidden .desk (the project database, other tasks) but reads its outbox inside it', async () => {
		const docs = await call(importAsset, agent, { dir: 'docs' });
		const attached = (await webshopAttachments()).length;
		for (const from of [
			'.desk/project.db',
			inside('.desk/project.db'),
			`.desk/tasks/${taskId}/outbox/../../../project.db`,
		]) {
			await refused(
				call(putVersion, agent, { id: docs.asset.id, files: [{ path: 'db', from }] }),
				'operation.outsideRun',
				/does not see/,
			);
			await refused(call(attachFile, agent, { path: from }), 'operation.outsideRun', /does not see/);
		}
		assert.equal((await webshopAttachments()).length, attached);
		assert.equal((await call(attachFile, agent, { path: path.join(outbox, 'chart.csv') })).name, 'chart.csv');
		// A read-only folder is read as the sandbox shows it.
		const put = await call(putVersion, agent, {
			id: docs.asset.id,
			files: [{ path: 'claude.json', from: '.claude/settings.json' }],
		});
		assert.equal(put.created, true);
	});

	it('an agent is refused a link anywhere on its path, even one that stays inside, and a hard link', async () => {
		const docs = await call(importAsset, agent, { dir: 'docs' });
		const attached = (await webshopAttachments()).length;
		for (const from of ['alias.txt', 'docs-link/guide.md']) {
			await refused(
				call(putVersion, agent, { id: docs.asset.id, files: [{ path: 'x.md', from }] }),
				'operation.outsideRun',
				/is a link/,
			);
			await refused(call(attachFile, agent, { path: from }), 'operation.outsideRun', /is a link/);
		}
		await refused(
			call(putVersion, agent, { id: docs.asset.id, files: [{ path: 'key.txt', from: 'hard.txt' }] }),
			'operation.outsideRun',
			/hard link/,
		);
		await refused(call(attachFile, agent, { path: 'hard.txt' }), 'operation.outsideRun', /hard link/);
		await refused(call(importAsset, agent, { dir: 'docs-link' }), 'operation.outsideRun', /is a link/);
		assert.equal((await webshopAttachments()).length, attached);
		assert.equal(fs.existsSync(inside('docs/key.txt')), false);
	});

	it("an asset's folder swapped for a link after the check is refused when the library opens it again", async () => {
		fs.mkdirSync(inside('deep/notes'), { recursive: true });
		fs.writeFileSync(inside('deep/notes/a.md'), 'a\n');
		const notes = await call(importAsset, agent, { dir: 'deep/notes' });
		const { dev, ino } = fs.statSync(inside('deep/notes'));
		fs.mkdirSync(inside('deep/fresh'));
		const fresh = fs.statSync(inside('deep/fresh'));
		// A folder on the way swapped for a link to a folder of the same shape elsewhere.
		const decoy = path.join(elsewhere, 'decoy');
		fs.mkdirSync(path.join(decoy, 'notes'), { recursive: true });
		fs.writeFileSync(path.join(decoy, 'notes', 'a.md'), 'theirs\n');
		fs.mkdirSync(path.join(decoy, 'fresh'));
		fs.writeFileSync(path.join(decoy, 'fresh', 'b.md'), 'theirs\n');
		fs.renameSync(inside('deep'), inside('deep-moved'));
		fs.symlinkSync(decoy, inside('deep'));
		const versions = (await desk.library.versionPage(notes.asset.id, {})).total;
		await refused(
			desk.library.putFiles(notes.asset.id, [{ path: 'planted.txt', bytes: Buffer.from('x') }], {
				madeBy: 'conductor',
				folderIs: { dev, ino },
			}),
			'asset.unsafePath',
			/no longer the folder that was checked/,
		);
		assert.equal(fs.existsSync(path.join(decoy, 'notes', 'planted.txt')), false);
		await refused(
			desk.library.snapshot(notes.asset.id, { madeBy: 'conductor', folderIs: { dev, ino } }),
			'asset.unsafePath',
			/no longer the folder that was checked/,
		);
		assert.equal((await desk.library.versionPage(notes.asset.id, {})).total, versions);
		const count = desk.library.allAssets().length;
		await refused(
			desk.library.importDir({
				dir: inside('deep/fresh'),
				project: 'webshop',
				main: false,
				madeBy: 'conductor',
				folderIs: { dev: fresh.dev, ino: fresh.ino },
			}),
			'asset.unsafePath',
			/no longer the folder that was checked/,
		);
		assert.equal(desk.library.allAssets().length, count);
		// Through the tools, the link is refused before the library is asked.
		await refused(call(snapshotAsset, agent, { id: notes.asset.id }), 'operation.outsideRun', /is a link/);
	});

	it('a folder swapped for a link after the check leads nowhere: the file is opened through descriptors', async () => {
		fs.mkdirSync(inside('swap'));
		fs.writeFileSync(inside('swap/key.txt'), 'mine\n');
		const file = await fileOfCall(
			{ desk, actor: agent, events: noEvents, signal: new AbortController().signal },
			'swap/key.txt',
			'path',
		);
		fs.rmSync(inside('swap'), { recursive: true });
		fs.symlinkSync(elsewhere, inside('swap'));
		assert.ok(file.open, "an agent's file is opened by the desk's own opener");
		assert.throws(
			() => file.open!((opened) => opened.read(100).bytes.toString()),
			(error: unknown) => isDeskError(error, 'operation.outsideRun') && /is a link/.test((error as Error).message),
		);
	});
});
