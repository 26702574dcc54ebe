/**
 * The editor side of the desk tools (glossary: Desk tools), in the workbench with the packaged
 * extension: *Search Library…* from the command palette finds an asset by words of its text and
 * reveals it in the Assets view; a proposal to retire an asset, made by a person's own agent through
 * `desk mcp` (the MCP SDK's client), shows on its row and the person accepts it there; a run whose
 * scripted agent calls desk tools through the desk's proxy lists them on its page and in the Runs
 * view, apart from the agent's own tool calls.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { AssetRecord } from '../../server/src/assets/types';
import {
	launchScriptedRun,
	openAgentDesk,
	runCommand,
	screenshot,
	statusMessage,
	tooltipOf,
	waitFor,
	webviewWith,
} from '../helpers/codeServer';
import { desk, deskJs } from '../helpers/deskCli';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

/** A folder of the library: `files` by name. */
function folder(root: string, name: string, files: Record<string, string>): string {
	const dir = path.join(root, name);
	fs.mkdirSync(dir, { recursive: true });
	for (const [file, text] of Object.entries(files)) {
		fs.writeFileSync(path.join(dir, file), text);
	}
	return dir;
}

function imported(library: string, dir: string): AssetRecord {
	const out = desk('--store', library, '--json', 'asset', 'import', '--dir', dir, '--project', 'shop');
	assert.equal(out.code, 0, out.stderr);
	return (JSON.parse(out.stdout) as { asset: AssetRecord }).asset;
}

it('Search Library… finds an asset and opens it; a proposal to retire one is accepted on its row', async () => {
	const root = tempDir('desk-tools-e2e-');
	const library = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const { page, close } = await openAgentDesk({ folder: repo, libraryFolder: library });
	let agent: Client | undefined;
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		await page.getByRole('treeitem', { name: /^shop, main asset/ }).waitFor({ timeout: 60_000 });
		// Added from the command line while the window is open: the view has not read them yet.
		imported(
			library,
			folder(root, 'api-guides', {
				'pagination.md': '# Pagination\n\nCursor pagination for list endpoints: limit, cursor, next.\n',
			}),
		);
		const stale = imported(library, folder(root, 'old-notes', { 'notes.md': '# Notes from 2024\n\nOffset paging.\n' }));

		await runCommand(page, 'Agent Desk: Search Library…');
		const input = page.locator('.quick-input-widget input[type="text"]');
		await input.pressSequentially('cursor pagination', { delay: 30 });
		const hit = page.locator('.quick-input-list .monaco-list-row', { hasText: 'api-guides' }).first();
		await hit.waitFor({ timeout: 30_000 });
		const row = await hit.innerText();
		assert.match(row, /score \d+\.\d\d/, row);
		assert.match(row, /matches “(cursor|pagination)”/, row);
		await screenshot(page, 'desk-tools-search-library');
		await hit.click();

		// Revealed in the Assets view: selected, expanded to its versions.
		const guides = page.getByRole('treeitem', { name: /^api-guides,/ });
		await waitFor(async () => (await guides.getAttribute('aria-selected')) === 'true', 30_000, 'api-guides selected');
		await waitFor(async () => (await guides.getAttribute('aria-expanded')) === 'true', 30_000, 'api-guides expanded');
		await page.getByRole('treeitem', { name: /^v1 / }).first().waitFor({ timeout: 30_000 });
		await page.mouse.move(900, 500);
		await page.waitForTimeout(500);
		await screenshot(page, 'desk-tools-search-revealed');

		// A person's own agent proposes through `desk mcp`; the person sees it on the row and accepts.
		agent = new Client({ name: 'own-agent', version: '1.0.0' });
		await agent.connect(
			new StdioClientTransport({
				command: process.execPath,
				args: [deskJs, 'mcp', '--store', library],
				env: { ...(process.env as Record<string, string>), DESK_STORE: '' },
				cwd: root,
				stderr: 'pipe',
			}),
		);
		const answer = (await agent.callTool({
			name: 'propose_asset_retire',
			arguments: { id: stale.id, reason: 'Superseded by api-guides (cursor pagination); nothing plugs it.' },
		})) as { isError?: boolean; structuredContent?: { created?: boolean } };
		assert.notEqual(answer.isError, true, JSON.stringify(answer));
		assert.equal(answer.structuredContent?.created, true);

		// `desk mcp` is another process: the window reads the library again on Refresh.
		await runCommand(page, 'Agent Desk: Refresh');
		const proposed = page.getByRole('treeitem', { name: /^old-notes, retirement proposed by .*desk mcp/ });
		await proposed.waitFor({ timeout: 30_000 });
		assert.match(await proposed.innerText(), /retirement proposed/);
		const tooltip = await tooltipOf(page, proposed, 'Retirement proposed');
		assert.match(await tooltip.innerText(), /Superseded by api-guides/);
		await screenshot(page, 'desk-tools-proposal');

		await proposed.click();
		await proposed.getByRole('button', { name: 'Accept Retirement' }).click();
		await statusMessage(page, 'old-notes is retired').waitFor({ timeout: 30_000 });
		await proposed.waitFor({ state: 'detached', timeout: 30_000 });
		const listed = desk('--store', library, '--json', 'assets', 'list', '--all');
		const record = (JSON.parse(listed.stdout) as AssetRecord[]).find((a) => a.id === stale.id);
		assert.equal(record?.retired, true, 'accepting retired the asset');
	} finally {
		await screenshot(page, 'desk-tools-final').catch(() => undefined);
		await agent?.close().catch(() => undefined);
		await close();
	}
});

it('the run page lists the desk tool calls of a run apart from the agent’s own', async () => {
	const { page, close } = await launchScriptedRun(
		'desk-tools-run-e2e-',
		{
			writes: [{ path: 'notes/report.md', content: '# Report\n\nThe shop has one commit.\n' }],
			deskTools: [
				{ tool: 'asset_search', args: { query: 'shop' } },
				{ tool: 'attach', args: { path: 'notes/report.md', note: 'what I found' } },
				// Not an asset of the run's project: refused, and the run goes on.
				{ tool: 'asset_tags', args: { id: 'a-0000000000000000', tags: ['stale'] } },
			],
			answer: 'Wrote notes/report.md and attached it.',
		},
		'Report on the shop\nSearch the library, write a report and attach it.',
		{ 'agentDesk.runs.maxAttempts': 1 },
	);
	try {
		const waiting = page.getByRole('treeitem', { name: /^Run, waiting for review/ });
		await waiting.waitFor({ timeout: 120_000 });
		await waitFor(
			async () => {
				await waiting.click();
				await webviewWith(page, 'Desk tool calls (3)', 5_000);
				return true;
			},
			30_000,
			'the run page with its desk tool calls',
		);
		const frame = await webviewWith(page, 'Desk tool calls (3)');
		const rows = await frame
			.locator('xpath=//h2[starts-with(., "Desk tool calls (")]/following-sibling::table[1]/tbody/tr')
			.allInnerTexts();
		assert.equal(rows.length, 3, rows.join('\n'));
		assert.match(rows[0]!, /^asset_search\s+query: "shop"\s+ok\s.*toolu_\d+$/s);
		assert.match(rows[1]!, /^attach\s+note: "what I found", path: "notes\/report\.md"\s+ok\s.*toolu_\d+$/s);
		assert.match(rows[2]!, /^asset_tags\s.*error\s+operation\.outsideRun/s);
		// The conversation has the agent's own calls, a desk tool by its name and marked as one, with what
		// the desk recorded of it (paired by the agent's call id), each once.
		const calls = await frame.locator('.conversation details.call > summary').allInnerTexts();
		for (const tool of ['asset_search', 'attach', 'asset_tags']) {
			assert.equal(
				calls.filter((c) => new RegExp(`^[✓✗]?\\s*${tool}\\s+desk tool\\b`).test(c)).length,
				1,
				calls.join('\n'),
			);
		}
		const conversation = (await frame.locator('.conversation').allTextContents()).join('\n');
		assert.match(conversation, /Through the desk: attach answered/);
		assert.match(conversation, /Through the desk: asset_tags refused — .*operation\.outsideRun/);
		await runCommand(page, 'Notifications: Clear All Notifications');
		await frame.locator('h2:has-text("Desk tool calls")').scrollIntoViewIfNeeded();
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		await screenshot(page, 'desk-tools-run-page');

		// In the Runs view, under the run: a group of its own. The Memory and Attachments views are folded
		// away first: the list draws only the rows in sight, and the side bar is shared.
		for (const view of [/^Memory/i, /^Attachments/i]) {
			await page.locator('.pane-header[aria-expanded="true"]', { hasText: view }).click();
		}
		await waiting.locator('.monaco-tl-twistie').click();
		const group = page.getByRole('treeitem', { name: /^Desk tool calls/ });
		await group.waitFor({ timeout: 30_000 });
		await group.click();
		await page.getByRole('treeitem', { name: /^asset_tags, error/ }).waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		await screenshot(page, 'desk-tools-runs-view');
	} finally {
		await screenshot(page, 'desk-tools-run-final').catch(() => undefined);
		await close();
	}
});
