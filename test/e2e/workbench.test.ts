import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
	literally,
	openDeskWorkbench,
	projectRoot,
	runCommand,
	screenshot,
	tooltipOf,
	waitFor,
	type DeskWorkbench,
} from '../helpers/codeServer';
import { git, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

/**
 * The packaged extension (.vsix) installed into code-server, driven from headless Chromium as a
 * person would use it.
 */
describe('Agent Desk in the workbench', () => {
	let workbench: DeskWorkbench;
	let page: Page;
	let repo: string;
	let libraryDir: string;
	let firstCommit: string;

	before(async () => {
		const vsix = path.join(projectRoot, 'out', 'agent-desk.vsix');
		assert.ok(fs.existsSync(vsix), `${vsix} is missing: run npm run package first`);
		const root = tempDir('desk-e2e-');
		repo = makeRepo(path.join(root, 'webshop'), { commits: 5 });
		// The last commit also holds a symbolic link and a submodule (a gitlink to the first commit,
		// not cloned: an empty folder), as `git ls-tree -r` lists them.
		fs.symlinkSync('file1.txt', path.join(repo, 'latest.txt'));
		fs.mkdirSync(path.join(repo, 'vendor', 'lib'), { recursive: true });
		git(repo, 'add', 'latest.txt');
		firstCommit = git(repo, 'rev-list', '--max-parents=0', 'HEAD');
		git(repo, 'update-index', '--add', '--cacheinfo', `160000,${firstCommit},vendor/lib`);
		git(repo, 'commit', '-q', '--amend', '--no-edit');
		libraryDir = path.join(root, 'library');
		workbench = await openDeskWorkbench({
			folder: repo,
			install: [vsix],
			settings: { 'agentDesk.libraryFolder': libraryDir },
		});
		page = workbench.page;
	});

	after(async () => {
		if (page) {
			await screenshot(page, 'workbench-final').catch(() => undefined);
		}
		await workbench?.close();
	});

	it('shows the repository as the main asset in the Assets view, with kind, engine, branch and version count', async () => {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const versions = git(repo, 'rev-list', '--first-parent', '--count', 'main');
		assert.equal(versions, '5');
		const row = page.getByRole('treeitem', {
			name: /^webshop, main asset, kind code, git engine, branch main, 5 versions/,
		});
		await row.waitFor({ timeout: 60_000 });
		// The status bar says the desk is ready.
		await page.locator('.statusbar-item', { hasText: 'Desk' }).first().waitFor();
		assert.equal(await page.locator('.statusbar-item[aria-label="Agent Desk ready"]').count(), 1);
		await page.mouse.move(700, 300);
		await page.waitForTimeout(500);
		await screenshot(page, 'assets-view');
		// The tooltip tells the rest: id, engine, branch, remote, versions, files, folder, who added it.
		const hover = await tooltipOf(page, row, 'Branch');
		assert.match(await hover.innerText(), /Versions\s*5/);
		await screenshot(page, 'asset-tooltip');
		await page.mouse.move(700, 300);
	});

	it('expands the asset to its versions, newest first', async () => {
		await page.getByRole('treeitem', { name: /webshop, main asset/ }).click();
		const newest = page.getByRole('treeitem', { name: /^v5\s+commit 5/ });
		await newest.waitFor({ timeout: 30_000 });
		// The Assets view's rows only (the Memory view below has rows of its own at that level).
		const assetsPane = page
			.locator('.pane')
			.filter({ has: page.getByRole('treeitem', { name: /webshop, main asset/ }) });
		const labels = await assetsPane.locator('.pane-body .monaco-list-row[aria-level="2"]').allInnerTexts();
		assert.deepEqual(
			labels.map((l) => /^v(\d+)/.exec(l.trim())?.[1]),
			['5', '4', '3', '2', '1'],
			labels.join(' | '),
		);
		await screenshot(page, 'assets-versions');
	});

	it("lists a version's symbolic link and submodule with their icons; opening them shows the link's target and the submodule's commit", async () => {
		// Room for the version's files: the views below the Assets view folded for this test.
		const below = ['Runs', 'Attachments', 'Memory'].map((title) =>
			page.locator('.pane-header', { hasText: title }).first(),
		);
		const fold = async (expanded: 'true' | 'false') => {
			for (const header of below) {
				if ((await header.getAttribute('aria-expanded')) === expanded) {
					await header.click();
				}
			}
		};
		await fold('true');
		await page.getByRole('treeitem', { name: /^v5\s+commit 5/ }).click();
		const link = page.getByRole('treeitem', {
			name: /^latest\.txt, latest\.txt at v5: a symbolic link to file1\.txt/,
		});
		await link.waitFor({ timeout: 30_000 });
		assert.equal(await link.locator('.codicon-file-symlink-file').count(), 1, 'the link has the link icon');
		assert.match(await link.innerText(), /→ file1\.txt/);
		await page.getByRole('treeitem', { name: /^vendor, folder vendor at v5/ }).click();
		const submodule = page.getByRole('treeitem', {
			name: new RegExp(`^lib, vendor/lib at v5: a submodule at commit ${firstCommit}`),
		});
		await submodule.waitFor({ timeout: 30_000 });
		assert.equal(await submodule.locator('.codicon-file-submodule').count(), 1, 'the submodule has its icon');
		assert.match(await submodule.innerText(), new RegExp(`submodule @ ${firstCommit.slice(0, 7)}`));
		const editorText = () => page.locator('.editor-instance .view-lines').first().innerText();
		await link.click();
		await waitFor(async () => (await editorText()).trim() === 'file1.txt', 30_000, "the link's target in the editor");
		await page.waitForTimeout(500);
		await screenshot(page, 'assets-link-opened');
		await submodule.click();
		await waitFor(
			async () => (await editorText()).trim() === firstCommit,
			30_000,
			"the submodule's commit in the editor",
		);
		await page.waitForTimeout(500);
		await screenshot(page, 'assets-submodule-opened');
		await runCommand(page, 'View: Close All Editors');
		await fold('false');
	});

	it('shows what Runs and Attachments will hold', async () => {
		const welcome = page.locator('.welcome-view-content');
		await welcome.filter({ hasText: 'Runs will appear here' }).waitFor();
		await welcome.filter({ hasText: 'The files a run leaves for you in its outbox' }).waitFor();
	});

	it('writes the adoption to the Agent Desk log once', async () => {
		await runCommand(page, 'Agent Desk: Show Log');
		// Visual lines of the output editor, joined as they wrap: a logical line spans several.
		const outputText = async () =>
			(await page.locator('.part.panel .view-lines .view-line').allInnerTexts()).join('').replace(/\u00a0/g, ' ');
		await waitFor(async () => /asset imported:/.test(await outputText()), 30_000, 'the log line');
		const text = await outputText();
		assert.match(
			text,
			new RegExp(`asset imported: a-[0-9a-f]{16} webshop ${literally(repo)} \\(desk boot: project webshop's repo\\)`),
		);
		assert.equal(text.match(/asset imported:/g)?.length, 1);
		await page.waitForTimeout(500);
		await screenshot(page, 'log');
		// The library landed where the setting says.
		assert.ok(fs.existsSync(path.join(libraryDir, 'library.db')));
		assert.ok(fs.existsSync(path.join(repo, '.desk', 'project.db')));
	});

	it('offers a Getting Started walkthrough from the open repository to a landed commit', async () => {
		await runCommand(page, 'Welcome: Open Walkthrough...');
		const input = page.locator('.quick-input-widget input[type="text"]');
		await input.fill('Get Started with Agent Desk');
		await page
			.locator('.quick-input-list .monaco-list-row', { hasText: 'Get Started with Agent Desk' })
			.first()
			.click();
		const steps = page.locator('.getting-started-step');
		await waitFor(async () => (await steps.count()) === 5, 30_000, 'the five steps');
		const titles = (await steps.locator('.step-title').allInnerTexts()).map((t) => t.trim());
		assert.deepEqual(titles, [
			'Your repository is the main asset',
			'Add what an agent should read',
			'Write a ticket',
			'Go, and follow the run',
			'Review at the gate, and land',
		]);
		// The first step's button shows the Agent Desk views, which checks the step.
		await steps.first().getByRole('button', { name: 'Open Agent Desk' }).click();
		await waitFor(
			async () => (await steps.first().getAttribute('aria-checked')) === 'true',
			10_000,
			'the first step checked',
		);
		await steps.nth(1).click();
		await page.locator('.getting-started-step.expanded', { hasText: 'Add what an agent should read' }).waitFor();
		await page.waitForTimeout(800);
		await screenshot(page, 'walkthrough');
	});
});
