import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import {
	openAgentDesk,
	projectRoot,
	runCommand,
	screenshot,
	statusMessage,
	tooltipOf,
	typeTicket,
} from '../helpers/codeServer';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

/**
 * A folder whose name (and so the asset's) carries a command link, Markdown, an icon and a
 * right-to-left override, with a file named the same way: the Assets view's row and tooltip and the
 * Snapshot Now notification show it as text. A link made of it would run a command on a click.
 */
const link = '[click](command:workbench.action.openSettings)';
const hostileName = `notes ${link} **b** $(warning) \u202eexe.txt`;

function desk(...args: string[]): void {
	const result = spawnSync(process.execPath, [path.join(projectRoot, 'dist', 'desk.js'), ...args], {
		encoding: 'utf8',
		env: { ...process.env, DESK_STORE: '' },
	});
	assert.equal(result.status, 0, result.stderr);
}

it('an asset and file named with a command link, Markdown and a bidi override show as text in the Assets view, its tooltip, a notification and the launch card', async () => {
	const root = tempDir('desk-hostile-e2e-');
	const library = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const folder = path.join(root, hostileName);
	fs.mkdirSync(folder);
	fs.writeFileSync(path.join(folder, `${link}\u202egpj.md`), '# notes\n');
	desk('--store', library, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main');
	desk('--store', library, 'asset', 'import', '--dir', folder, '--project', 'shop');

	const { page, close } = await openAgentDesk({ folder: repo, libraryFolder: library });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const row = page.getByRole('treeitem', { name: /^notes \[click\]/ });
		await row.waitFor({ timeout: 60_000 });
		// The row: the override shown as an escape, not acting on the text after it.
		const label = await row.locator('.label-name').first().innerText();
		assert.equal(label, 'notes [click](command:workbench.action.openSettings) **b** $(warning) \\u202eexe.txt');

		// The tooltip: every part of the name as text; no link, no icon, no bold.
		const hover = await tooltipOf(page, row, 'Picked version');
		const hoverText = await hover.innerText();
		assert.ok(hoverText.includes(`notes ${link} **b** $(warning) \\u202eexe.txt`), hoverText);
		assert.equal(await hover.locator('a').count(), 0, 'no link in the tooltip');
		assert.equal(await hover.locator('.codicon').count(), 0, 'no icon made of $(warning)');
		assert.equal(await hover.locator('strong').count(), 1, 'only the desk’s own bold name line');
		await page.waitForTimeout(300);
		await screenshot(page, 'hostile-tooltip');

		// The file's row under v1.
		await page.mouse.move(900, 700);
		await row.click();
		const v1 = page.getByRole('treeitem', { name: /^v1/ });
		await v1.waitFor({ timeout: 15_000 });
		await v1.click();
		const file = page.getByRole('treeitem', { name: /^\[click\]/ });
		await file.waitFor({ timeout: 15_000 });
		assert.equal(await file.locator('.label-name').first().innerText(), `${link}\\u202egpj.md`);

		// A notification that names the asset: its text, and no link in it.
		fs.writeFileSync(path.join(folder, 'second.md'), '# second\n');
		await runCommand(page, 'Agent Desk: Snapshot Now');
		const input = page.locator('.quick-input-widget input[type="text"]');
		await input.waitFor();
		await input.fill('notes');
		const choice = page.locator('.quick-input-list .monaco-list-row', { hasText: 'notes' }).first();
		await choice.waitFor();
		assert.equal(await choice.locator('.codicon-warning').count(), 0, 'no icon in the pick');
		await page.keyboard.press('Enter');
		// A routine confirmation: the status bar, where `$(name)` would otherwise draw an icon.
		const status = statusMessage(page, 'v2 — 2 files');
		await status.waitFor({ timeout: 30_000 });
		const statusText = await status.innerText();
		assert.ok(
			statusText.includes('notes [click](command:workbench.action.openSettings) **b** $(warning) \\u202eexe.txt v2'),
			statusText,
		);
		assert.equal(await status.locator('.codicon').count(), 0, 'no icon drawn in the status bar message');
		await screenshot(page, 'hostile-status-message');

		// The launch card suggests the asset for a ticket that names it: the name shown as text there too.
		const { card } = await typeTicket(page, 'Read the notes');
		const suggestion = card.locator('.suggestion', { hasText: 'notes [click]' });
		await suggestion.waitFor({ timeout: 30_000 });
		const suggested = await suggestion.innerText();
		assert.ok(suggested.includes(`notes ${link} **b** $(warning) \\u202eexe.txt`), suggested);
		assert.doesNotMatch(suggested, /\u202e/);
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'hostile-launch-card');
	} finally {
		await screenshot(page, 'hostile-final').catch(() => undefined);
		await close();
	}
});
