import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchScriptedRun, screenshot, statusMessage } from '../helpers/codeServer';
import { git } from '../helpers/gitRepo';

/** The first Runs view row named `item`, its context menu's `entry` run from the keyboard. */
async function contextMenu(page: Page, item: RegExp, entry: string): Promise<void> {
	await page.mouse.move(1200, 700);
	await page.keyboard.press('Escape');
	await page.waitForTimeout(300);
	await page.getByRole('treeitem', { name: item }).first().click({ button: 'right' });
	const menuItem = page.getByRole('menuitem', { name: entry });
	await menuItem.hover();
	await menuItem.focus();
	await page.keyboard.press('Enter');
}

it('Cancel Intent… on an intent row asks first, abandons its failed run and shows it cancelled; Follow Up… starts a follow-up marked as such', async () => {
	const { repo, page, close } = await launchScriptedRun(
		'desk-endings-e2e-',
		{ writes: [{ path: 'src/greeting.ts', content: 'export {};\n' }], exitCode: 3 },
		'Add a broken greeting',
		{ 'agentDesk.runs.maxAttempts': 1 },
	);
	try {
		await page.getByRole('treeitem', { name: /^Run, failed/ }).waitFor({ timeout: 90_000 });
		await contextMenu(page, /^Add a broken greeting/, 'Cancel Intent…');
		const dialog = page.locator('.monaco-dialog-box');
		await dialog.waitFor({ timeout: 30_000 });
		assert.match(
			await dialog.innerText(),
			/Cancel Intent ‘Add a broken greeting’\?[\s\S]*each run waiting for review or failed is abandoned/,
		);
		await screenshot(page, 'endings-1-confirm');
		await dialog.getByRole('button', { name: 'Cancel Intent', exact: true }).click();
		await statusMessage(page, 'intent ‘Add a broken greeting’ is cancelled (1 run(s) abandoned)').waitFor({
			timeout: 30_000,
		});
		await page.getByRole('treeitem', { name: /^Run, failed · abandoned/ }).waitFor({ timeout: 30_000 });
		assert.equal(git(repo, 'status', '--porcelain'), '', "the agent's file is gone from the checkout");
		const intentRow = page.locator('.monaco-list-row', { hasText: 'Add a broken greeting' }).first();
		assert.match(await intentRow.innerText(), /cancelled/);

		await contextMenu(page, /^Add a broken greeting/, 'Follow Up…');
		await page
			.locator('.quick-input-widget', { hasText: 'Follow Up: Add a broken greeting' })
			.waitFor({ timeout: 30_000 });
		await page.locator('.quick-input-widget input[type="text"]').fill('Add a working greeting');
		await page.keyboard.press('Enter');
		const followUp = page.locator('.monaco-list-row', { hasText: 'Add a working greeting' }).first();
		await followUp.waitFor({ timeout: 30_000 });
		assert.match(await followUp.innerText(), /follow-up of ‘Add a broken greeting’/);
		await page.waitForTimeout(800);
		await screenshot(page, 'endings-2-follow-up');
	} finally {
		await screenshot(page, 'endings-final').catch(() => undefined);
		await close();
	}
});
