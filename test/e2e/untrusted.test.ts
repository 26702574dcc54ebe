import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { openAgentDesk, screenshot } from '../helpers/codeServer';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

it('in an untrusted folder the desk adopts nothing and says why', async () => {
	const root = tempDir('desk-untrusted-');
	const repo = makeRepo(path.join(root, 'stranger'), { commits: 2 });
	const libraryDir = path.join(root, 'library');
	const { page, close } = await openAgentDesk({ folder: repo, trustAll: false, libraryFolder: libraryDir });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		await page
			.locator('.welcome-view-content', { hasText: 'This folder is not trusted, so Agent Desk adopts nothing from it' })
			.waitFor({ timeout: 60_000 });
		await page.locator('.statusbar-item[aria-label="Agent Desk ready"]').waitFor();
		await page
			.locator('.welcome-view-content', { hasText: 'Agent Desk shows no attachments and renders nothing from it' })
			.waitFor();
		await page.mouse.move(700, 300);
		await page.waitForTimeout(500);
		await screenshot(page, 'untrusted');
		assert.equal(await page.getByRole('treeitem', { name: /stranger/ }).count(), 0);
		assert.equal(fs.existsSync(path.join(repo, '.desk')), false, 'nothing was written into the repository');
	} finally {
		await close();
	}
});
