import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Page } from 'playwright-core';
import { openAgentDesk, runCommand, screenshot, statusMessage, waitFor } from '../helpers/codeServer';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

/** Picks `label` in the quick pick that a command opened. */
async function pick(page: Page, label: string): Promise<void> {
	const input = page.locator('.quick-input-widget input[type="text"]');
	await input.waitFor();
	await input.fill(label);
	await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor();
	await page.keyboard.press('Enter');
}

it('adds a folder, snapshots it, sees working changes, snapshots again and compares the two versions; creates a skill', async () => {
	const root = tempDir('desk-snap-e2e-');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const research = path.join(root, 'research');
	fs.mkdirSync(research);
	fs.writeFileSync(path.join(research, 'findings.md'), '# Findings\n\nCheckout is slow on mobile.\n');
	// A link its first version does not store (never followed), which Add Folder names.
	fs.symlinkSync('findings.md', path.join(research, 'latest.md'));
	const { page, close } = await openAgentDesk({
		folder: repo,
		libraryFolder: path.join(root, 'library'),
		settings: { 'files.simpleDialog.enable': true },
	});
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		await page.getByRole('treeitem', { name: /^shop, main asset/ }).waitFor({ timeout: 60_000 });

		// Add Folder… through VS Code's own folder dialog.
		await runCommand(page, 'Agent Desk: Add Folder…');
		const dialog = page.locator('.quick-input-widget input[type="text"]');
		await dialog.waitFor();
		// The dialog starts on the workspace folder; replace that path once it is there.
		await page.locator('.quick-input-list .monaco-list-row', { hasText: '.git' }).waitFor();
		await dialog.press('Control+a');
		// Without a trailing slash: with one, Enter opens the folder in the dialog instead of choosing it.
		await dialog.pressSequentially(research, { delay: 5 });
		// The dialog may complete the name to "research/" and, on Enter, open the folder instead of
		// choosing it; its button chooses the folder shown either way. Pressed until the dialog closes.
		await waitFor(async () => (await dialog.inputValue()).replace(/\/$/, '') === research, 10_000, 'the typed path');
		const widget = page.locator('.quick-input-widget');
		await waitFor(
			async () => {
				if (!(await widget.isVisible())) {
					return true;
				}
				await page.waitForTimeout(500);
				await widget
					.getByRole('button', { name: 'Add Folder' })
					.click({ timeout: 2_000 })
					.catch(() => undefined);
				await page.waitForTimeout(500);
				return !(await widget.isVisible());
			},
			20_000,
			'the folder dialog to accept the folder',
		);
		const asset = page.getByRole('treeitem', { name: /^research, .*snapshot engine/ });
		await asset.waitFor({ timeout: 30_000 });
		await page
			.locator('.notification-toast', { hasText: 'added research (snapshot) (not stored: latest.md (a link' })
			.waitFor({ timeout: 30_000 });
		await screenshot(page, 'snapshot-add-folder-not-stored');
		await runCommand(page, 'Notifications: Clear All Notifications');
		fs.unlinkSync(path.join(research, 'latest.md'));
		assert.match((await asset.getAttribute('aria-label')) ?? '', /1 version, go would read v1/);

		// A new file: working changes, and go would read the folder as v2.
		fs.writeFileSync(path.join(research, 'plan.md'), '# Plan\n\n1. Measure.\n');
		await runCommand(page, 'Agent Desk: Refresh');
		await page
			.getByRole('treeitem', { name: /^research, .*working changes: go would read them as v2/ })
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Agent Desk: Snapshot Now');
		await pick(page, 'research');
		await statusMessage(page, 'research v2 — 2 files').waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^research, .*2 versions, go would read v2/ }).waitFor();

		// An edit and a new file: working changes again, then v3.
		fs.writeFileSync(
			path.join(research, 'findings.md'),
			'# Findings\n\nCheckout is slow on mobile: 4.2 s to first paint.\n',
		);
		fs.writeFileSync(path.join(research, 'sources.md'), '# Sources\n\n- RUM dashboard\n');
		await runCommand(page, 'Agent Desk: Refresh');
		const changed = page.getByRole('treeitem', { name: /^research, .*working changes: go would read them as v3/ });
		await changed.waitFor({ timeout: 30_000 });
		await page.mouse.move(700, 300);
		await page.waitForTimeout(400);
		await screenshot(page, 'snapshot-working-changes');
		await runCommand(page, 'Agent Desk: Snapshot Now');
		await pick(page, 'research');
		await page
			.getByRole('treeitem', { name: /^research, .*3 versions, go would read v3/ })
			.waitFor({ timeout: 30_000 });

		// Versions newest first; v3 against v2 in the diff editor.
		await page.getByRole('treeitem', { name: /^research, / }).click();
		const v3 = page.getByRole('treeitem', { name: /^v3,/ });
		await v3.waitFor();
		await v3.click();
		// The row's inline action, as a person would hover and click it.
		await v3.hover();
		await v3.locator('.action-label[aria-label="Compare with Previous Version"]').click();
		// Two changed files: the multi-file diff, each file under its own header.
		const diff = page.locator('.monaco-diff-editor');
		await diff.first().waitFor({ timeout: 30_000 });
		await waitFor(
			async () => {
				const texts = await diff.allInnerTexts();
				return texts.some((t) => t.replace(/\u00a0/g, ' ').includes('4.2 s to first paint'));
			},
			20_000,
			'the new text in the diff',
		);
		assert.match(await page.locator('.tab.active').first().innerText(), /v2 ↔ v3/);
		// The edited file is the same file at two versions, not a rename; the new one is added.
		const headers = page.locator('.multiDiffEntry .header');
		await waitFor(async () => (await headers.count()) === 2, 20_000, 'a header per changed file');
		const statuses = Object.fromEntries(
			await Promise.all(
				(await headers.all()).map(async (h) => [
					(await h.locator('.title.modified').innerText()).trim(),
					(await h.locator('.file-path .status').innerText()).trim(),
				]),
			),
		) as Record<string, string>;
		assert.deepEqual(
			Object.entries(statuses)
				.map(([name, status]) => [name.split(/\s/)[0], status])
				.sort(),
			[
				['findings.md', ''],
				['sources.md', 'A'],
			],
			`statuses by file: ${JSON.stringify(statuses)}`,
		);
		await page.mouse.move(700, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'snapshot-diff');

		// Add Skill… → Create a New Skill…: a name and a description make a skill whose v1 is its
		// SKILL.md, opened for the person to write its steps.
		await runCommand(page, 'Agent Desk: Add Skill…');
		await pick(page, 'Create a New Skill');
		const input = page.locator('.quick-input-widget input[type="text"]');
		await page.locator('.quick-input-widget', { hasText: 'New Skill: name' }).waitFor();
		await input.fill('Checkout Review');
		await page.locator('.quick-input-widget', { hasText: '"Checkout Review" is not' }).waitFor();
		await input.fill('checkout-review');
		await page.keyboard.press('Enter');
		await page.locator('.quick-input-widget', { hasText: 'checkout-review: description' }).waitFor();
		await input.fill('Reviews checkout changes: use it when a change touches the payment page');
		await page.keyboard.press('Enter');
		await waitFor(
			async () => /SKILL\.md/.test(await page.locator('.tab.active').first().innerText()),
			30_000,
			'SKILL.md open in the editor',
		);
		// Folders folded away, so that the Skills group below fits the view.
		await page.getByRole('treeitem', { name: /^Folders/ }).click();
		await page.getByRole('treeitem', { name: /^Skills/ }).waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^checkout-review, .*1 version/ }).waitFor({ timeout: 30_000 });
		await statusMessage(page, 'skill checkout-review created').waitFor({ timeout: 30_000 });
		await page.mouse.move(700, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'snapshot-new-skill');
	} finally {
		await screenshot(page, 'snapshot-final').catch(() => undefined);
		await close();
	}
});
