import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { openAgentDesk, screenshot } from '../helpers/codeServer';
import { git, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

it('a folder whose .git leads to another repository: a modal says where the git folder really is, nothing is adopted until the person says Adopt Anyway', async () => {
	const root = tempDir('desk-gitdir-');
	const other = makeRepo(path.join(root, 'private'), { commits: 2 });
	const planted = path.join(root, 'planted');
	fs.mkdirSync(planted);
	fs.writeFileSync(path.join(planted, 'README.md'), 'hello\n');
	fs.writeFileSync(path.join(planted, '.git'), `gitdir: ${path.join(other, '.git')}\n`);
	const libraryDir = path.join(root, 'library');
	const { page, close } = await openAgentDesk({ folder: planted, libraryFolder: libraryDir });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const dialog = page.locator('.monaco-dialog-box', { hasText: 'is not inside it' });
		await dialog.waitFor({ timeout: 60_000 });
		const text = (await dialog.innerText()).replace(/\u00a0/g, ' ');
		assert.ok(text.includes(`Its git folder is really: ${path.join(other, '.git')}`), text);
		assert.equal(fs.existsSync(path.join(planted, '.desk')), false, 'nothing written before the person answers');
		assert.equal(fs.existsSync(path.join(other, '.desk')), false);
		await screenshot(page, 'foreign-git-dir');
		await dialog.getByRole('button', { name: 'Adopt Anyway' }).click();
		await page.locator('.statusbar-item[aria-label="Agent Desk ready"]').waitFor({ timeout: 60_000 });
		await page
			.getByRole('treeitem', { name: /planted/ })
			.first()
			.waitFor({ timeout: 30_000 });
		assert.equal(git(other, 'rev-list', '--count', 'HEAD'), '2');
	} finally {
		await close();
	}
});
