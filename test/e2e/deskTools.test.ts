/**
 * The editor side of the desk tools (glossary: Desk tools), in the workbench with the packaged
 * extension: *Search Library…* from the command palette finds an asset by words of its text and
 * reveals it in the Assets view; a proposal to retire an asset, made by a person's own agent through
 * `desk mcp` (the MCP SDK's client), shows on its row and the person accepts it there.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { AssetRecord } from '../../server/src/assets/types';
import { openAgentDesk, runCommand, screenshot, tooltipOf, waitFor } from '../helpers/codeServer';
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
		await page.locator('.notification-toast', { hasText: 'old-notes is retired' }).waitFor({ timeout: 30_000 });
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
