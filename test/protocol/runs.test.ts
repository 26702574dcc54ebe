import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { seal } from '../../server/src/ai/model';
import { GitRepository } from '../../server/src/git/repository';
import { exportHistory } from '../../server/src/git/historyRef';
import {
	ExportHistory,
	ImportHistory,
	ListRuns,
	OpenWorkspace,
	PatchSetFiles,
	RunsDidChange,
	ShowRun,
	deskErrorCode,
	type DeskErrorJson,
} from '../../server/src/protocol/protocol';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { expectRpcError, startServer, type RunningServer } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';
import { completeChain } from '../unit/ai/chain';

describe('runs over JSON-RPC', () => {
	let server: RunningServer;
	let repo: string;
	let chain: ReturnType<typeof completeChain>;

	before(async () => {
		const root = tempDir();
		repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		commitFile(repo, 'src/users.ts', 'v1\n', 'users');
		const base = git(repo, 'rev-parse', 'HEAD');
		commitFile(repo, 'src/users.ts', 'v2\n', 'paginate');
		chain = completeChain(base, git(repo, 'rev-parse', `${base}:src/users.ts`), {
			resultCommit: git(repo, 'rev-parse', 'HEAD'),
		});
		await exportHistory(
			GitRepository.open(repo),
			chain.all.map((o) => seal(structuredClone(o))),
		);
		server = await startServer(path.join(root, 'library'));
		await server.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
	});
	after(() => server.stop());

	it('imports the history ref, tells the views, and lists and shows the runs', async () => {
		assert.deepEqual((await server.call(ListRuns, { project: 'shop' })).intents, []);
		const imported = await server.call(ImportHistory, { project: 'shop' });
		assert.deepEqual([imported.added, imported.refused], [chain.all.length, []]);
		assert.ok(server.notifications.some((n) => n.method === RunsDidChange.method));
		const overview = await server.call(ListRuns, { project: 'shop' });
		assert.equal(overview.intents[0]?.intent.prompt, chain.intent.prompt);
		assert.equal(overview.intents[0]?.tasks[0]?.runs[0]?.total_tokens, 1500);
		const detail = await server.call(ShowRun, { project: 'shop', id: chain.run.object_id });
		assert.deepEqual(
			[detail.decision?.decision_type, detail.tool_invocations.length, detail.patchsets[0]?.touched[0]?.path],
			['commit', 2, 'src/users.ts'],
		);
		const again = await server.call(ImportHistory, { project: 'shop' });
		assert.equal(again.added, 0);
	});

	it("gives a PatchSet's files before and after, and exports without a new commit when nothing changed", async () => {
		const sides = await server.call(PatchSetFiles, { project: 'shop', patchset: chain.patchset.object_id });
		assert.equal(sides.source, 'commit');
		assert.deepEqual(
			sides.files.map((f) => [
				f.path,
				f.before && Buffer.from(f.before, 'base64').toString(),
				f.after && Buffer.from(f.after, 'base64').toString(),
			]),
			[['src/users.ts', 'v1\n', 'v2\n']],
		);
		const exported = await server.call(ExportHistory, { project: 'shop' });
		assert.equal(exported.commit, undefined, 'the imported objects are what the ref already holds');
	});

	it('refuses unknown projects and runs with their codes', async () => {
		const project = await expectRpcError(server.connection, ListRuns.method, { project: 'nowhere' });
		assert.equal((project.data as DeskErrorJson).code, 'project.notFound');
		const run = await expectRpcError(server.connection, ShowRun.method, { project: 'shop', id: chain.task.object_id });
		assert.equal(run.code, deskErrorCode);
		assert.equal(
			(run.data as DeskErrorJson).code,
			'ai.notFound',
			'a task id names no run: not found, not a bad object',
		);
		const patchset = await expectRpcError(server.connection, PatchSetFiles.method, {
			project: 'shop',
			patchset: 'no-such-patchset',
		});
		assert.equal((patchset.data as DeskErrorJson).code, 'ai.notFound');
		const badRef = await expectRpcError(server.connection, ImportHistory.method, { project: 'shop', ref: '../../etc' });
		assert.equal(badRef.code, -32602);
	});
});
