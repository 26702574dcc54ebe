import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { openAgentDesk, projectRoot, runCommand, screenshot, typeTicket, waitFor } from '../helpers/codeServer';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

function deskCli(store: string, ...args: string[]): void {
	const result = spawnSync(process.execPath, [path.join(projectRoot, 'dist', 'desk.js'), '--store', store, ...args], {
		encoding: 'utf8',
	});
	assert.equal(result.status, 0, result.stderr);
}

it('writes a ticket, keeps a suggestion, plugs the repo as target, goes, and finds the run and the launch under "used in"', async () => {
	const root = tempDir('desk-card-e2e-');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const notes = path.join(root, 'pagination-notes');
	fs.mkdirSync(notes);
	fs.writeFileSync(
		path.join(notes, 'cursors.md'),
		'# Cursor pagination\n\nOpaque cursors for listing endpoints; page size at most 100.\n',
	);
	const library = path.join(root, 'library');
	deskCli(library, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main');
	deskCli(library, 'asset', 'import', '--dir', notes, '--project', 'shop');

	const { page, close } = await openAgentDesk({ folder: repo, libraryFolder: library });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const shop = page.getByRole('treeitem', { name: /^shop, main asset/ });
		await shop.waitFor({ timeout: 60_000 });
		const { card, editor: ticket } = await typeTicket(page, 'Add cursor pagination to the listing endpoints');
		const suggestion = card.locator('.suggestion', { hasText: 'pagination-notes' });
		await suggestion.waitFor({ timeout: 30_000 });
		assert.match(await suggestion.innerText(), /matches “(cursor|pagination|listing|endpoints)”/);
		assert.equal(
			await ticket.inputValue(),
			'Add cursor pagination to the listing endpoints',
			'what was typed stays in the editor as suggestions arrive',
		);
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'launch-card-suggestions');
		await suggestion.locator('vscode-button', { hasText: 'Keep' }).click();
		await card.locator('.plug', { hasText: 'pagination-notes' }).waitFor();

		// The open repository as target, from the Assets view.
		await shop.click();
		await runCommand(page, 'Agent Desk: Plug into Launch Card as Target');
		const target = card.locator('.plug', { hasText: 'shop' });
		await target.waitFor({ timeout: 30_000 });
		assert.match(await target.innerText(), /target[\s\S]*go would freeze v2/i);
		await card.locator('#go').click();
		await card.locator('.launched').waitFor({ timeout: 30_000 });
		await page.waitForTimeout(600);
		await screenshot(page, 'launch-card-go');

		// The run is in the Runs view; the launch is under "used in" of the kept asset.
		await page
			.getByRole('treeitem', { name: /^Add cursor pagination to the listing endpoints/ })
			.first()
			.waitFor({ timeout: 30_000 });
		// Go starts the run with the configured agent (here the default, which this machine lacks).
		await page.getByRole('treeitem', { name: /^Run, (created|patching|failed)/ }).waitFor({ timeout: 30_000 });
		const notesRow = page.getByRole('treeitem', { name: /^pagination-notes, / });
		await notesRow.click();
		// The repo's own "Used in" (it was the target) is above; the notes' is the last one.
		await waitFor(
			async () => (await page.getByRole('treeitem', { name: /^Used in 1 launch/ }).count()) === 2,
			30_000,
			'both "used in" nodes',
		);
		const usedIn = page.getByRole('treeitem', { name: /^Used in 1 launch/ }).last();
		await usedIn.click();
		await page.getByRole('treeitem', { name: /^Used in launch as reference at v1/ }).waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'launch-card-used-in');
	} finally {
		await screenshot(page, 'launch-card-final').catch(() => undefined);
		await close();
	}
});
