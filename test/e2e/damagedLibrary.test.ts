import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { openAgentDesk, screenshot, waitFor } from '../helpers/codeServer';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

it('a damaged library shows as an error in the status bar, one message with Open Log and the choices, the file kept aside; the choice recovers it', async () => {
	const root = tempDir('desk-damaged-');
	const repo = makeRepo(path.join(root, 'ledger'), { commits: 2 });
	const libraryDir = path.join(root, 'library');
	fs.mkdirSync(libraryDir, { recursive: true });
	fs.writeFileSync(path.join(libraryDir, 'library.db'), 'this is not a database');
	const { page, close } = await openAgentDesk({ folder: repo, libraryFolder: libraryDir });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const status = page.locator('.statusbar-item[aria-label="Agent Desk error"]');
		await status.waitFor({ timeout: 60_000 });
		const toast = page.locator('.notification-toast', { hasText: 'Agent Desk:' });
		await toast.waitFor();
		assert.match(await toast.innerText(), /library\.db is damaged/);
		assert.equal(await toast.getByRole('button', { name: 'Open Log' }).count(), 1);
		await page.locator('.welcome-view-content', { hasText: 'The desk server could not start' }).waitFor();
		await page.mouse.move(700, 300);
		await page.waitForTimeout(800);
		await screenshot(page, 'damaged-library');

		// The status bar item opens the log, which says what happened.
		await status.click();
		const logText = async () =>
			(await page.locator('.part.panel .view-lines .view-line').allInnerTexts()).join('').replace(/\u00a0/g, ' ');
		await waitFor(async () => (await logText()).includes('the desk could not open its library'), 20_000, 'the log');
		assert.match(await logText(), /library\.db\.corrupt-/);

		const kept = fs.readdirSync(libraryDir).filter((name) => name.startsWith('library.db.corrupt-'));
		assert.equal(kept.length, 1);
		assert.equal(fs.readFileSync(path.join(libraryDir, kept[0]!), 'utf8'), 'this is not a database');
		assert.equal(fs.existsSync(path.join(libraryDir, 'library.db')), false, 'no empty database took its place');

		// The person chooses. Restoring a copy SQLite cannot read is refused by name, and the choices stay open.
		const damaged = page.locator('.notification-toast', { hasText: 'library.db is damaged' });
		await damaged.getByRole('button', { name: 'Restore Kept Copy' }).first().click();
		await page.locator('.notification-toast', { hasText: 'cannot be restored' }).waitFor({ timeout: 30_000 });
		assert.equal(fs.existsSync(path.join(libraryDir, 'library.db')), false, 'a refused restore changes nothing');
		await screenshot(page, 'damaged-library-restore-refused');
		await damaged.getByRole('button', { name: 'Start Empty' }).first().click();
		await page
			.locator('.notification-toast', { hasText: 'library.db recovered (Start Empty)' })
			.waitFor({ timeout: 30_000 });
		await page.locator('.statusbar-item[aria-label="Agent Desk ready"]').waitFor({ timeout: 60_000 });
		await screenshot(page, 'damaged-library-recovered');
		assert.ok(fs.existsSync(path.join(libraryDir, 'library.db')), 'a new library was started');
		assert.equal(
			fs.readFileSync(path.join(libraryDir, kept[0]!), 'utf8'),
			'this is not a database',
			'the damaged copy stays',
		);
		assert.equal(fs.existsSync(path.join(libraryDir, 'library.db.damaged')), false);
	} finally {
		await close();
	}
});
