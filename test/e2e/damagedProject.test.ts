import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { openAgentDesk, projectRoot, screenshot } from '../helpers/codeServer';
import { launchedTask } from '../helpers/deskCli';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

function desk(...args: string[]): string {
	const result = spawnSync(process.execPath, [path.join(projectRoot, 'dist', 'desk.js'), ...args], {
		encoding: 'utf8',
		env: { ...process.env, DESK_STORE: '' },
	});
	assert.equal(result.status, 0, `desk ${args.join(' ')}: ${result.stderr}`);
	return result.stdout;
}

it('a 0-byte project database: one message with the three choices; Rebuild from History recovers the project and deletes no attachment file', async () => {
	const root = tempDir('desk-damaged-project-');
	const repo = makeRepo(path.join(root, 'ledger'), { commits: 2 });
	const libraryDir = path.join(root, 'library');
	desk('--store', libraryDir, 'asset', 'import', '--dir', repo, '--project', 'ledger', '--main');
	const task = launchedTask(libraryDir, 'ledger', 'File the receipt');
	fs.writeFileSync(path.join(root, 'receipt.txt'), 'receipt\n');
	desk('--store', libraryDir, '--repo', repo, 'task', 'attachments', 'add', task, path.join(root, 'receipt.txt'));
	const attachments = path.join(repo, '.desk', 'attachments');
	const stored = () => fs.readdirSync(attachments).filter((n) => /^[0-9a-f]{32}$/.test(n));
	const files = stored();
	const hourAgo = new Date(Date.now() - 3_600_000);
	for (const name of files) {
		fs.utimesSync(path.join(attachments, name), hourAgo, hourAgo);
	}
	fs.truncateSync(path.join(repo, '.desk', 'project.db'), 0);

	const { page, close } = await openAgentDesk({ folder: repo, libraryFolder: libraryDir });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const toast = page.locator('.notification-toast', { hasText: 'project.db is damaged' });
		await toast.waitFor({ timeout: 60_000 });
		for (const name of ['Restore Kept Copy', 'Start Empty', 'Rebuild from History', 'Open Log']) {
			assert.equal(await toast.getByRole('button', { name }).count(), 1, name);
		}
		// The Assets view says a folder was not opened, not that there is no repository.
		await page.getByText('An open folder was not opened').waitFor({ timeout: 30_000 });
		await page.mouse.move(700, 300);
		await toast.getByRole('button', { name: 'Rebuild from History' }).waitFor({ state: 'visible' });
		await screenshot(page, 'damaged-project');
		assert.deepEqual(stored(), files, 'no attachment file was deleted while the project was damaged');

		await toast.getByRole('button', { name: 'Rebuild from History' }).click();
		await page
			.locator('.notification-toast', { hasText: 'project.db recovered (Rebuild from History)' })
			.waitFor({ timeout: 30_000 });
		// The folder is adopted again: the project's main asset is in the Assets view.
		await page.getByRole('treeitem', { name: /^ledger, main asset/ }).waitFor({ timeout: 30_000 });
		await screenshot(page, 'damaged-project-rebuilt');
		assert.ok(fs.existsSync(path.join(repo, '.desk', 'project.db')));
		assert.equal(fs.existsSync(path.join(repo, '.desk', 'project.db.damaged')), false);
		assert.deepEqual(stored(), files, 'the rebuilt database swept none of the files written before it');
	} finally {
		await close();
	}
});
