/**
 * Project memory over JSON-RPC with a real repository (glossary: Project memory): remember, forget,
 * the Memory view's data, Commit Memory, a file edited on disk, refusals that leave the file as it
 * was, a damaged file kept aside, and no copy of a memory in the project database.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../server/src/core/logger';
import {
	CommitMemory,
	DecideRun,
	ForgetMemory,
	LaunchGo,
	ListLineageRoots,
	MemoryDidChange,
	OpenWorkspace,
	RememberMemory,
	RunDidFinish,
	SetTicket,
	ShowMemory,
	ShowRun,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { DurableDatabase } from '../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../server/src/store/schemas';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, killStartedServers, serverForSuite, startServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

after(killStartedServers);

let requests = 0;
const requestId = () => `req-memory-${process.pid}-${++requests}`;

describe('project memory over JSON-RPC', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const file = path.join(repo, '.desk-memory', 'main.json');
	const server = serverForSuite(path.join(root, 'library'), (started) =>
		started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] }),
	);

	async function refused(method: string, params: object): Promise<DeskErrorJson> {
		const failure = await expectRpcError(server.connection, method, params);
		return failure.data as DeskErrorJson;
	}

	it('remembers once per request id, with its receipt in the file, and tells the windows', async () => {
		const id = requestId();
		const first = await server.call(RememberMemory, {
			project: 'shop',
			text: 'Run npm test before landing. The e2e stage needs code-server.',
			evidence: ['file1.txt'],
			requestId: id,
		});
		assert.equal(first.replayed, false);
		await server.notified(MemoryDidChange, (n) => n.project === 'shop' && n.root === 'main', 'memory changed');
		const text = fs.readFileSync(file, 'utf8');
		const stored = JSON.parse(text) as {
			format: string;
			memories: Record<string, { title: string; evidence: Array<{ path: string; blob: string }> }>;
			requests: Record<string, { result: { added: string[] } }>;
		};
		assert.equal(stored.format, 'agent-desk-memory/1');
		assert.equal(stored.memories[first.added]?.title, 'Run npm test before landing');
		assert.deepEqual(stored.requests[`remember:${id}`]?.result.added, [first.added]);
		assert.equal(stored.memories[first.added]?.evidence[0]?.blob, git(repo, 'rev-parse', 'HEAD:file1.txt'));
		assert.ok(text.endsWith('}\n') && text.includes('\n  "memories": {'), 'canonical text');
		const again = await server.call(RememberMemory, {
			project: 'shop',
			text: 'Run npm test before landing. The e2e stage needs code-server.',
			evidence: ['file1.txt'],
			requestId: id,
		});
		assert.deepEqual(again, { added: first.added, replayed: true });
		assert.equal(fs.readFileSync(file, 'utf8'), text, 'a repeat changes nothing');
		const reused = await refused(RememberMemory.method, { project: 'shop', text: 'Something else.', requestId: id });
		assert.equal(reused.code, 'request.idReused');
	});

	it('keeps no copy of a memory in the project database once applied', async () => {
		const marker = `marker-${process.pid}-kept-only-in-the-file`;
		await server.call(RememberMemory, { project: 'shop', text: `The ${marker} is here.`, requestId: requestId() });
		assert.ok(fs.readFileSync(file, 'utf8').includes(marker));
		const db = await DurableDatabase.open({
			file: path.join(repo, '.desk', 'project.db'),
			schema: projectSchema,
			migrations: projectMigrations,
			logger: silentLogger,
			idleCheckpointMs: 60_000,
		});
		try {
			const tables = db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").map((t) => t.name);
			assert.ok(tables.includes('memory_queue'));
			for (const table of tables) {
				const rows = JSON.stringify(db.all(`SELECT * FROM "${table}"`));
				assert.ok(!rows.includes(marker), `${table} holds no memory text`);
			}
			assert.equal(db.get<{ n: number }>('SELECT count(*) AS n FROM memory_queue')?.n, 0);
		} finally {
			db.close();
		}
	});

	it('shows the memory, uncommitted until Commit Memory commits that file alone with its trailer', async () => {
		const before = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		assert.equal(before.exists, true);
		assert.equal(before.uncommitted, true);
		assert.equal(before.path, '.desk-memory/main.json');
		assert.equal(before.memories.length, 2);
		assert.deepEqual(
			before.memories.map((m) => m.evidence_changed),
			[[], []],
		);
		// The person's other work stays as it is: a staged file and an unstaged change.
		fs.writeFileSync(path.join(repo, 'staged.txt'), 'staged\n');
		git(repo, 'add', 'staged.txt');
		fs.writeFileSync(path.join(repo, 'file2.txt'), 'edited, not staged\n');
		// A hook that would run on a commit: Commit Memory must not run it.
		fs.writeFileSync(
			path.join(repo, '.git', 'hooks', 'pre-commit'),
			'#!/bin/sh\ntouch "$GIT_DIR/../hook-ran"\nexit 1\n',
			{
				mode: 0o755,
			},
		);
		const head = git(repo, 'rev-parse', 'HEAD');
		const commitId = requestId();
		const { commit } = await server.call(CommitMemory, { project: 'shop', root: 'main', requestId: commitId });
		const repeat = await server.call(CommitMemory, { project: 'shop', root: 'main', requestId: commitId });
		assert.equal(repeat.commit, commit, 'the same request answers the first commit');
		assert.equal(git(repo, 'rev-parse', 'HEAD'), commit);
		assert.equal(git(repo, 'rev-parse', `${commit}^`), head);
		assert.equal(git(repo, 'show', '--name-only', '--format=', commit), '.desk-memory/main.json');
		assert.match(
			git(repo, 'log', '-1', '--format=%B', commit),
			new RegExp(`\n\nDesk-Memory: main\nDesk-Request: ${commitId}$`),
		);
		assert.equal(git(repo, 'show', `${commit}:.desk-memory/main.json`), fs.readFileSync(file, 'utf8').trimEnd());
		assert.ok(!fs.existsSync(path.join(repo, 'hook-ran')), 'no hook ran');
		const status = git(repo, 'status', '--porcelain', '--', '.desk-memory', 'staged.txt', 'file2.txt');
		assert.deepEqual(
			status
				.split('\n')
				.map((l) => l.trim())
				.sort(),
			['A  staged.txt', 'M file2.txt'],
		);
		const after = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		assert.equal(after.uncommitted, false);
		const nothing = await refused(CommitMemory.method, { project: 'shop', root: 'main', requestId: requestId() });
		assert.equal(nothing.code, 'memory.nothingToCommit');
		git(repo, 'reset', '-q', 'staged.txt');
		fs.rmSync(path.join(repo, 'staged.txt'));
		git(repo, 'checkout', '-q', '--', 'file2.txt');
		fs.rmSync(path.join(repo, '.git', 'hooks', 'pre-commit'));
	});

	it('marks a memory whose cited file changed in HEAD as evidence changed', async () => {
		commitFile(repo, 'file1.txt', 'changed\n', 'change file1');
		const view = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		const cited = view.memories.find((m) => m.memory.evidence?.length);
		assert.deepEqual(cited?.evidence_changed, ['file1.txt']);
	});

	it('sees the file edited on disk (a git pull) and tells the windows', async () => {
		const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as { memories: Record<string, { title: string }> };
		const [id] = Object.keys(stored.memories);
		stored.memories[id!]!.title = 'Edited by hand';
		const told = new Set(server.notifications.map((n) => n.params));
		fs.writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`);
		await server.notified(MemoryDidChange, (n) => n.root === 'main' && !told.has(n), 'the watcher tells of the edit');
		const view = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		assert.ok(view.memories.some((m) => m.memory.title === 'Edited by hand'));
		assert.equal(view.uncommitted, true);
	});

	it('forgets; refuses what is not there, bad text and unknown roots, the file byte-identical', async () => {
		const view = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		const text = fs.readFileSync(file, 'utf8');
		const notFound = await refused(ForgetMemory.method, {
			project: 'shop',
			root: 'main',
			memory: '01900000-0000-7000-8000-000000000000',
			requestId: requestId(),
		});
		assert.equal(notFound.code, 'memory.notFound');
		const bidi = await refused(RememberMemory.method, {
			project: 'shop',
			text: 'Looks fine \u202e but reads otherwise',
			requestId: requestId(),
		});
		assert.equal(bidi.code, 'memory.badBatch');
		const over = await refused(RememberMemory.method, {
			project: 'shop',
			text: 'x'.repeat(1001),
			requestId: requestId(),
		});
		assert.equal(over.code, 'desk.badParams');
		const outside = await refused(RememberMemory.method, {
			project: 'shop',
			text: 'A fact.',
			evidence: ['../outside.txt'],
			requestId: requestId(),
		});
		assert.equal(outside.code, 'memory.badBatch');
		const unknown = await refused(RememberMemory.method, {
			project: 'shop',
			root: 'nowhere',
			text: 'A fact.',
			requestId: requestId(),
		});
		assert.equal(unknown.code, 'lineage.unknownRoot');
		assert.equal(fs.readFileSync(file, 'utf8'), text);
		const id = view.memories[0]!.id;
		const forgot = await server.call(ForgetMemory, {
			project: 'shop',
			root: 'main',
			memory: id,
			requestId: requestId(),
		});
		assert.deepEqual(forgot, { removed: id, replayed: false });
		const left = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		assert.equal(left.memories.length, view.memories.length - 1);
	});

	it("counts each root's memory for the Roots view", async () => {
		const { roots } = await server.call(ListLineageRoots, { project: 'shop' });
		const main = roots.find((r) => r.name === 'main');
		const view = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		assert.deepEqual(main?.memory, { exists: true, memories: view.memories.length, uncommitted: true });
	});

	it("is read-only to a run's agent and never part of its change, in the shared checkout and in a worktree", async () => {
		// Without the sandbox (off) an agent can write there: its PatchSet still leaves memory out.
		const cases = [
			{ isolation: 'shared', sandbox: 'auto' },
			{ isolation: 'worktree', sandbox: 'auto' },
			{ isolation: 'worktree', sandbox: 'off' },
		] as const;
		for (const { isolation, sandbox } of cases) {
			const label = `${isolation}, sandbox ${sandbox}`;
			await server.call(SetTicket, { project: 'shop', ticket: 'Write the notes' });
			const before = fs.readFileSync(file, 'utf8');
			const settings = scriptedAgentSettings(
				{
					tryWrite: ['.desk-memory/main.json'],
					writes: [{ path: `notes-${isolation}-${sandbox}.txt`, content: 'notes\n' }],
				},
				{ isolation, sandbox },
			);
			const record = await server.call(LaunchGo, { project: 'shop', settings });
			const end = await server.notified(RunDidFinish, (f) => f.run === record.run, 'the run', 30_000);
			assert.equal(end.status, 'gate');
			assert.equal(fs.readFileSync(file, 'utf8'), before, `${label}: the person's memory file is as it was`);
			const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
			assert.deepEqual(
				detail.patchsets.flatMap((p) => p.touched.map((t) => t.path)),
				[`notes-${isolation}-${sandbox}.txt`],
				`${label}: memory is not part of the run's change`,
			);
			await server.call(DecideRun, { project: 'shop', run: record.run, decision: 'abandon' });
		}
	});

	it('keeps a damaged file aside and never replaces it by an empty one', async () => {
		const damaged = fs.readFileSync(file, 'utf8').slice(0, 100);
		fs.writeFileSync(file, damaged);
		const shown = await refused(ShowMemory.method, { project: 'shop', root: 'main' });
		assert.equal(shown.code, 'memory.corrupt');
		assert.equal(fs.readFileSync(file, 'utf8'), damaged, 'showing moves nothing');
		const failure = await refused(RememberMemory.method, {
			project: 'shop',
			text: 'A new fact.',
			requestId: requestId(),
		});
		assert.equal(failure.code, 'memory.corrupt');
		const keptAs = String(failure.data.keptAs);
		assert.match(keptAs, /^\.desk-memory\/main\.json\.corrupt-/);
		assert.equal(fs.readFileSync(path.join(repo, keptAs), 'utf8'), damaged);
		assert.ok(!fs.existsSync(file), 'no empty file in its place');
		const view = await server.call(ShowMemory, { project: 'shop', root: 'main' });
		assert.equal(view.exists, false);
		// The next remember starts a new file; the damaged one stays for the person.
		await server.call(RememberMemory, { project: 'shop', text: 'A new fact.', requestId: requestId() });
		assert.equal((await server.call(ShowMemory, { project: 'shop', root: 'main' })).memories.length, 1);
		assert.ok(fs.existsSync(path.join(repo, keptAs)));
	});

	it('refuses a file of another format and leaves it as it is', async () => {
		const other = '{"format":"agent-desk-memory/9","root":"main"}\n';
		fs.writeFileSync(file, other);
		const failure = await refused(RememberMemory.method, { project: 'shop', text: 'A fact.', requestId: requestId() });
		assert.equal(failure.code, 'memory.unknownFormat');
		assert.equal(fs.readFileSync(file, 'utf8'), other);
		fs.rmSync(file);
	});
});

describe('Commit Memory killed between its commit and its answer', () => {
	it('answers the repeat with the commit it made, and a new request with nothing to commit', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const library = path.join(root, 'library');
		const open = async (env?: NodeJS.ProcessEnv) => {
			const started = await startServer(library, env ? { env: { ...process.env, ...env } } : {});
			await started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
			return started;
		};
		const armed = await open({ DESK_TEST_FAULTS: 'memory.afterCommit.beforeAnswer' });
		await armed.call(RememberMemory, { project: 'shop', text: 'Prices are in cents.', requestId: requestId() });
		const head = git(repo, 'rev-parse', 'HEAD');
		const commitId = requestId();
		void armed.connection
			.sendRequest(CommitMemory.method, { project: 'shop', root: 'main', requestId: commitId })
			.catch(() => undefined);
		assert.equal((await armed.exited).signal, 'SIGKILL', 'the server died between the commit and its answer');
		const made = git(repo, 'rev-parse', 'HEAD');
		assert.notEqual(made, head, 'the commit was made');
		assert.equal(
			git(repo, 'log', '-1', '--format=%B', made),
			`Memory of main\n\nDesk-Memory: main\nDesk-Request: ${commitId}`,
		);
		const restarted = await open();
		try {
			const repeat = await restarted.call(CommitMemory, { project: 'shop', root: 'main', requestId: commitId });
			assert.deepEqual(repeat, { commit: made }, 'the repeat is answered with the commit it made');
			assert.equal(git(repo, 'rev-parse', 'HEAD'), made, 'nothing committed again');
			const again = await expectRpcError(restarted.connection, CommitMemory.method, {
				project: 'shop',
				root: 'main',
				requestId: requestId(),
			});
			assert.equal((again.data as DeskErrorJson).code, 'memory.nothingToCommit');
		} finally {
			await restarted.stop();
		}
	});
});
