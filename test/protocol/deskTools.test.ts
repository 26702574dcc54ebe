/**
 * The desk tools inside a run (glossary: Desk tools), through the real server, the real bubblewrap
 * sandbox and the bundled proxy: the scripted agent is an MCP client of the server its wiring names
 * (`dist/desk-mcp.js`, started as Claude Code starts one from `--mcp-config`), and once a shell user
 * of `desk-tool`. It searches the library, snapshots an asset of its project, attaches a file of its
 * work folder, and tries to attach a file outside its folders (refused, the run goes on). The effects
 * are the desk's (a new version, an attachment on the task), and the run records each call as a
 * ToolInvocation tagged `desk.tool`, linked to the agent's own id of the call.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ToolInvocation } from '../../server/src/ai/types';
import { Desk } from '../../server/src/desk';
import { exitBeforeReplyHook } from '../../server/src/mcp/socketHost';
import { importAsset } from '../../server/src/operations/assets';
import { invokeOperation, noEvents } from '../../server/src/operations/operation';
import {
	ImportAsset,
	LaunchGo,
	ListAttachments,
	ListVersions,
	OpenWorkspace,
	RunDidFinish,
	SetTicket,
	ShowRun,
} from '../../server/src/protocol/protocol';
import { sandboxStatus } from '../../server/src/runs/sandbox';
import { makeRepo } from '../helpers/gitRepo';
import { recordingLogger } from '../helpers/deskFixture';
import { deskToolAnswers, scriptedAgentSettings } from '../helpers/scriptedAgent';
import { serverForSuite } from '../helpers/serverProcess';
import { atExit, findProjectRoot, tempDir } from '../helpers/temp';
import type { ToolSocketHostArgs } from '../helpers/toolSocketHost';

interface McpAnswer {
	result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ text?: string }> };
	error?: unknown;
}

describe('desk tools inside a sandboxed run', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	// An asset whose folder is inside the run's work folder (the shared checkout): the only folders an agent may snapshot.
	const specs = path.join(repo, 'specs');
	fs.mkdirSync(specs);
	fs.writeFileSync(path.join(specs, 'pagination.md'), '# Pagination\n\nCursor pagination of the users endpoint.\n');
	fs.writeFileSync(path.join(root, 'outside.txt'), "not the run's\n");
	let specsId = '';
	const server = serverForSuite(path.join(root, 'library'), async (started) => {
		await started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		specsId = (await started.call(ImportAsset, { dir: specs, project: 'shop' })).asset.id;
	});

	it('searches, snapshots and attaches through the proxy and desk-tool; a path outside is refused and the run goes on', async () => {
		assert.equal(sandboxStatus().available, true, `bubblewrap works here: ${sandboxStatus().reason ?? ''}`);
		await server.call(SetTicket, { project: 'shop', ticket: 'Paginate the users endpoint' });
		const settings = scriptedAgentSettings({
			printEnv: ['DESK_MCP_SOCKET', 'DESK_MCP_TOKEN'],
			writes: [
				{ path: 'src/users.ts', content: 'export const pageSize = 50;\n' },
				{ path: 'notes/report.md', content: '# Report\n\nPaginated.\n' },
				// The spec changed since it was imported: the agent's snapshot makes version 2.
				{ path: 'specs/pagination.md', content: '# Pagination\n\nCursor pagination, 50 a page.\n' },
			],
			deskTools: [
				{ tool: 'asset_search', args: { query: 'cursor pagination' } },
				{ tool: 'asset_snapshot', args: { id: specsId, note: 'the spec the agent read' } },
				{ tool: 'attach', args: { path: 'notes/report.md', note: 'what I did' } },
				{ tool: 'attach', args: { path: path.join(root, 'outside.txt') } },
				{ tool: 'asset_search', args: { query: 'pagination' }, via: 'cli' },
			],
		});
		const record = await server.call(LaunchGo, { project: 'shop', settings });
		const end = await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to finish');
		assert.equal(end.status, 'gate', `the run went on to the gate: ${end.error ?? ''}`);

		const [list, search, snapshot, attach, outside, shell] = deskToolAnswers(settings) as [
			{ list: string[] },
			{ answer: McpAnswer },
			{ answer: McpAnswer },
			{ answer: McpAnswer },
			{ answer: McpAnswer },
			{ status: number; stdout: string },
		];
		assert.ok(
			['asset_search', 'asset_snapshot', 'attach'].every((tool) => list.list.includes(tool)),
			JSON.stringify(list),
		);
		assert.ok(!list.list.some((tool) => /decide|land|settings/.test(tool)), 'an agent is offered no decision');
		const hits = search.answer.result?.structuredContent?.hits as Array<{ id: string }>;
		assert.ok(
			hits.some((hit) => hit.id === specsId),
			JSON.stringify(search.answer),
		);
		assert.equal(snapshot.answer.result?.isError, undefined, JSON.stringify(snapshot.answer));
		assert.equal(attach.answer.result?.isError, undefined, JSON.stringify(attach.answer));
		assert.equal(outside.answer.result?.isError, true);
		assert.equal((outside.answer.result?.structuredContent?.error as { code: string }).code, 'operation.outsideRun');
		assert.equal(shell.status, 0, JSON.stringify(shell));
		assert.ok((JSON.parse(shell.stdout) as { hits: unknown[] }).hits.length > 0);

		const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
		// The effects are the desk's: a new version of the asset, the file on the task.
		const versions = await server.call(ListVersions, { id: specsId });
		assert.equal(versions.total, 2);
		const attachments = await server.call(ListAttachments, { project: 'shop' });
		const files = attachments.tasks.find((t) => t.task_id === record.task)?.files ?? [];
		assert.deepEqual(
			files.map((f) => [f.name, f.run_id]),
			[['report.md', record.run]],
		);

		// Under bubblewrap, the socket at /run/desk; the token, printed by the agent, kept nowhere.
		assert.match(detail.run.tags['desk.sandbox'] ?? '', /^isolated/);
		const printed = detail.tool_invocations.filter((t) => t.tool_name === 'Bash').map((t) => t.result_summary);
		assert.deepEqual(printed.slice(0, 2), ['/run/desk/desk.sock', '[secret removed]']);
		// The run records each call, tagged as a desk tool call and linked to the agent's own id.
		const deskCalls = detail.tool_invocations.filter((t: ToolInvocation) => t.tags['desk.tool'] === 'desk');
		assert.deepEqual(
			deskCalls.map((t) => [t.tool_name, t.status, t.external_ids['tool_use_id'] ?? null]),
			[
				['asset_search', 'ok', 'toolu_6'],
				['asset_snapshot', 'ok', 'toolu_7'],
				['attach', 'ok', 'toolu_8'],
				['attach', 'error', 'toolu_9'],
				['asset_search', 'ok', null],
			],
		);
		assert.deepEqual(deskCalls[1]?.created_by, { kind: 'mcp_client', id: `run:${record.run}` });
		assert.deepEqual(deskCalls[2]?.args, { path: 'notes/report.md', note: 'what I did' });
		assert.match(deskCalls[3]?.result_summary ?? '', /^operation\.outsideRun: /);
		// The agent's own record of the same calls (its transcript's tool_use) is there too, by its MCP name.
		assert.ok(detail.tool_invocations.some((t) => t.tool_name === 'mcp__desk__asset_snapshot'));
	});
});

describe("a desk killed between a desk tool call's effect and its reply", () => {
	const hostJs = path.join(findProjectRoot(), 'out', 'test', 'helpers', 'toolSocketHost.js');
	const proxyJs = path.join(findProjectRoot(), 'dist', 'desk-mcp.js');

	/** A desk process hosting the socket; resolves once it listens, with where and its token. */
	async function startHost(
		args: ToolSocketHostArgs,
		env: Record<string, string> = {},
	): Promise<{ child: ChildProcess; ipcDir: string; token: string }> {
		const child = spawn(process.execPath, [hostJs, JSON.stringify(args)], {
			env: { ...process.env, ...env },
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		atExit(() => child.kill('SIGKILL'));
		const first = await readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
		const line = first.value as string;
		return { child, ...(JSON.parse(line) as { ipcDir: string; token: string }) };
	}

	it('the proxy tries again with the same request against the restarted desk: one effect, the first answer', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const specs = path.join(repo, 'specs');
		fs.mkdirSync(specs);
		fs.writeFileSync(path.join(specs, 'a.md'), 'one\n');
		const libraryDir = path.join(root, 'library');
		const desk = await Desk.open({ libraryDir, logger: recordingLogger() });
		let id: string;
		try {
			await desk.openWorkspace([{ name: 'shop', path: repo }]);
			const imported = await invokeOperation(
				importAsset,
				{
					desk,
					actor: { kind: 'cli', person: { name: 'Test' } },
					events: noEvents,
					signal: new AbortController().signal,
				},
				{ dir: specs, project: 'shop' },
			);
			id = (imported as { asset: { id: string } }).asset.id;
		} finally {
			desk.close();
		}
		fs.writeFileSync(path.join(specs, 'a.md'), 'two\n');
		const args: ToolSocketHostArgs = {
			libraryDir,
			actor: {
				kind: 'agent',
				agent: 'scripted',
				project: 'shop',
				task: '0190f0f0-0000-7000-8000-000000000001',
				run: '0190f0f0-0000-7000-8000-000000000002',
				workFolder: repo,
				outbox: path.join(root, 'outbox'),
			},
		};
		// The first desk exits once the snapshot is committed, before it answers.
		const first = await startHost(args, { [exitBeforeReplyHook]: 'asset_snapshot' });
		let second: Awaited<ReturnType<typeof startHost>> | undefined;
		const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
		const client = new Client({ name: 'desk-test', version: '1.0.0' });
		await client.connect(
			new StdioClientTransport({
				command: process.execPath,
				args: [proxyJs],
				env: { DESK_MCP_SOCKET: path.join(first.ipcDir, 'desk.sock'), DESK_MCP_TOKEN: first.token },
				stderr: 'inherit',
			}),
		);
		try {
			const calling = client.callTool({ name: 'asset_snapshot', arguments: { id } });
			assert.equal(await exited, 70, 'the desk exited between the effect and the reply');
			// The desk again, in the same folder with the same token: the proxy's next try reaches it.
			second = await startHost({ ...args, reuse: { ipcDir: first.ipcDir, token: first.token } });
			const answer = (await calling) as {
				isError?: boolean;
				structuredContent?: { version?: { version: number } };
				_meta?: Record<string, unknown>;
			};
			assert.equal(answer.isError, undefined, JSON.stringify(answer));
			assert.equal(answer._meta?.['desk/replayed'], true, 'answered from the receipt, not made again');
			assert.equal(answer.structuredContent?.version?.version, 2, JSON.stringify(answer.structuredContent));
		} finally {
			await client.close();
			// The restarted desk serves until stopped; this test's process would wait for it.
			second?.child.kill('SIGKILL');
		}
		const after = await Desk.open({ libraryDir, logger: recordingLogger() });
		try {
			const page = await after.library.versionPage(id, {});
			assert.equal(page.total, 2, 'exactly one new version');
		} finally {
			after.close();
		}
	});
});
