import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchScriptedRun, runCommand, screenshot, waitFor, webviewWith } from '../helpers/codeServer';
import { git } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';

/** Runs an entry of a tree item's context menu (Monaco's menus act on the keyboard more reliably than on a synthetic click). */
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

/** Answers the input box the workbench shows (its title holding `title`) with `text`. */
async function answerInput(page: Page, title: string, text: string): Promise<void> {
	await page.locator('.quick-input-widget', { hasText: title }).waitFor({ timeout: 30_000 });
	const input = page.locator('.quick-input-widget input[type="text"]');
	await input.fill(text);
	await page.keyboard.press('Enter');
}

/** Approve and Land of the run whose row is named `run` in the Runs view: a rationale, then the confirmation. */
async function land(page: Page, run: RegExp, rationale: string): Promise<void> {
	await contextMenu(page, run, 'Approve and Land Run…');
	await answerInput(page, 'Approve and Land', rationale);
	const dialog = page.locator('.monaco-dialog-box');
	await dialog.waitFor({ timeout: 30_000 });
	await dialog.getByRole('button', { name: 'Land', exact: true }).click();
}

const greeting = 'export function greet(name: string): string {\n\treturn `Hello, ${name}!`;\n}\n';
const docs = '# Greeting\n\n`greet(name)` says hello.\n';

it('branches from a run, lands the branch at the gate, answers its one report, and remembers and commits project memory', async () => {
	const started = Date.now();
	// The starter's agent writes the helper; the branch's (agentDesk.lineage.branch.agent) its docs.
	const starter = scriptedAgentSettings({
		writes: [{ path: 'src/greeting.ts', content: greeting }],
		answer: 'Added greet().',
	});
	const branchAgent = scriptedAgentSettings({
		writes: [{ path: 'docs/greeting.md', content: docs }],
		answer: 'Documented greet() in docs/greeting.md.',
	});
	branchAgent.agents[0]!.name = 'scripted-docs';
	const { repo, page, close } = await launchScriptedRun('desk-lineage-e2e-', {}, 'Add a greeting helper', {
		'agentDesk.agents': [...starter.agents, ...branchAgent.agents],
		'agentDesk.runs.maxAttempts': 1,
		'agentDesk.lineage.branch': { agent: 'scripted-docs' },
	});
	try {
		// Room for the Runs and Memory views: the Assets and Attachments views folded.
		for (const view of ['Assets', 'Attachments', 'Memory']) {
			await fold(page, view, false);
		}
		// A wider side bar: the rows' descriptions (tallies, tokens and cost) are what the screenshots show.
		const sideBar = (await page.locator('.part.sidebar').boundingBox())!;
		await page.mouse.move(sideBar.x + sideBar.width + 1, 400);
		await page.mouse.down();
		await page.mouse.move(sideBar.x + sideBar.width + 260, 400, { steps: 8 });
		await page.mouse.up();
		// The starter run reaches the gate and lands: the run to branch from.
		await page.locator('.notification-toast', { hasText: 'is ready for review' }).waitFor({ timeout: 90_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');
		await land(page, /^Run, waiting for review/, 'The helper is right.');
		await page
			.locator('.notification-toast', { hasText: 'landed ‘Add a greeting helper’ as commit' })
			.waitFor({ timeout: 30_000 });
		const starterRow = /^Run, completed · landed/;
		await page.getByRole('treeitem', { name: starterRow }).waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// A memory before the branch starts: the branch's first input is told its root's memory.
		await runCommand(page, 'Agent Desk: Remember…');
		await answerInput(page, 'Remember (main)', 'Run npm test before landing; the checks are in package.json.');
		await answerInput(page, 'Remember (main): title', 'Tests');
		await page
			.locator('.notification-toast', { hasText: 'remembered in .desk-memory/main.json' })
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// Branch from Here… on the landed run: main is the only root, so only the prompt is asked.
		await contextMenu(page, starterRow, 'Branch from Here…');
		await answerInput(page, 'Branch from ‘Add a greeting helper’', 'Document the greeting helper in docs/greeting.md');
		await page
			.locator('.notification-toast', {
				hasText: 'started branch ‘Document the greeting helper in docs/greeting.md’ of root main',
			})
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// The Runs view: Roots with main's tally, and the branch nested under the run that started it.
		await page.getByRole('treeitem', { name: /^Roots, 1 root · 1 branch/ }).waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^Root main, tally · 1 branch/ }).waitFor({ timeout: 30_000 });
		await expand(page, starterRow);
		await page.getByRole('treeitem', { name: /^Branches, 1/ }).waitFor({ timeout: 30_000 });

		// The branch runs in the shared checkout to the gate, and lands.
		const branchAtGate = /^Branch Document the greeting helper in docs\/greeting\.md, branch · at the gate/;
		await page.getByRole('treeitem', { name: branchAtGate }).waitFor({ timeout: 90_000 });
		await page.locator('.notification-toast', { hasText: 'is ready for review' }).waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');
		await page.mouse.move(1200, 700);
		await screenshot(page, 'lineage-1-branch-at-gate');
		await land(page, /^Run, waiting for review/, 'The docs say it.');
		const head = await waitForHead(repo, 'Document the greeting helper in docs/greeting.md');
		assert.equal(git(repo, 'show', 'HEAD:docs/greeting.md'), docs.trimEnd());

		// Its work ended: one report, one notification, with Open Report, Answer… and Continue with Reports.
		const report = page.locator('.notification-toast', {
			hasText: 'branch ‘Document the greeting helper in docs/greeting.md’ landed',
		});
		await report.waitFor({ timeout: 60_000 });
		for (const button of ['Open Report', 'Answer…', 'Continue with Reports']) {
			await report.getByRole('button', { name: button, exact: true }).waitFor();
		}
		assert.equal(
			await page.locator('.notification-toast', { hasText: 'branch ‘Document the greeting helper' }).count(),
			1,
			'one notification for the report',
		);
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(800);
		await screenshot(page, 'lineage-2-report-notification');

		await report.getByRole('button', { name: 'Answer…', exact: true }).click();
		await answerInput(page, 'Answer Report', 'Thanks: the docs read well.');
		await page
			.locator('.notification-toast', { hasText: 'answered ‘Document the greeting helper' })
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// The Board under the starter run: the report (answered) and the answer, newest first.
		await page
			.getByRole('treeitem', { name: /^Root main, tally · 1 branch \(1 landed\)/ })
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Board, 1 report · / })
			.first()
			.waitFor({ timeout: 30_000 });
		await expand(page, /^Board, 1 report · /);
		await page
			.getByRole('treeitem', { name: /^Report: landed as [0-9a-f]{7}/ })
			.first()
			.waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'lineage-3-runs-view');

		// The starter run's page: its Lineage section with the branch and the board timeline.
		await page.getByRole('treeitem', { name: starterRow }).first().click();
		const runPage = await webviewWith(page, 'Branches it started (1)');
		const text = await runPage.locator('body').innerText();
		for (const expected of [
			'Lineage',
			'Document the greeting helper in docs/greeting.md',
			'landed',
			'answered',
			'Branch from Here…',
		]) {
			assert.ok(text.includes(expected), `the run page's Lineage section shows ${expected}`);
		}
		await runPage.locator('#lineage').evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'lineage-4-run-page');

		// The branch's run page: its grant chain, and exactly the memory section its first input was told.
		await page.getByRole('treeitem', { name: starterRow }).nth(1).click();
		const branchPage = await webviewWith(page, 'Grant chain');
		const told = await branchPage.locator('body').innerText();
		for (const expected of [
			'root main, depth 1',
			'What its prompts were told',
			'Project memory',
			'Run npm test before landing',
		]) {
			assert.ok(told.includes(expected), `the branch's run page shows ${expected}`);
		}
		await branchPage.locator('#told').evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'lineage-4b-branch-run-page');

		// Project memory: Remember… in the Memory view, then Commit Memory.
		await fold(page, 'Runs', false);
		await fold(page, 'Memory', true);
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 1 memory · uncommitted/ })
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Agent Desk: Remember…');
		await answerInput(page, 'Remember (main)', 'greet(name) lives in src/greeting.ts; its docs are docs/greeting.md.');
		await answerInput(page, 'Remember (main): title', 'Greeting helper');
		await page
			.locator('.notification-toast', { hasText: 'remembered in .desk-memory/main.json' })
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 2 memories · uncommitted/ })
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Memory Greeting helper, “greet\(name\) lives in/ })
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');
		// The file itself, as the person reviews it before committing.
		await runCommand(page, 'Agent Desk: Open Memory File');
		await page.locator('.tab', { hasText: 'main.json' }).waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(800);
		await screenshot(page, 'lineage-5-memory-view');

		await runCommand(page, 'Agent Desk: Commit Memory');
		const committed = page.locator('.notification-toast', { hasText: 'committed .desk-memory/main.json alone as' });
		await committed.waitFor({ timeout: 30_000 });
		const message = git(repo, 'log', '-1', '--format=%B');
		assert.ok(message.split('\n').includes('Desk-Memory: main'), message);
		assert.deepEqual(git(repo, 'show', '--name-only', '--format=', 'HEAD').split('\n'), ['.desk-memory/main.json']);
		assert.equal(git(repo, 'rev-parse', 'HEAD~1'), head);
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 2 memories\s*$/ })
			.waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'lineage-6-memory-committed');
		console.log(`lineage e2e: ${Math.round((Date.now() - started) / 1000)} s`);
	} finally {
		await screenshot(page, 'lineage-final').catch(() => undefined);
		await close();
	}
});

/** Folds or unfolds a view of the Agent Desk container (a tree shows only the rows that fit: a folded neighbour gives it room). */
async function fold(page: Page, view: string, expanded: boolean): Promise<void> {
	const header = page.locator('.pane-header', {
		has: page.locator('h3.title', { hasText: new RegExp(`^${view}$`, 'i') }),
	});
	await waitFor(
		async () => {
			if ((await header.getAttribute('aria-expanded')) !== String(expanded)) {
				await header.locator('h3.title').click();
			}
			return (await header.getAttribute('aria-expanded')) === String(expanded);
		},
		10_000,
		`the ${view} view ${expanded ? 'unfolded' : 'folded'}`,
	);
}

/** Unfolds a row of a tree by its twistie (a click on a row with a command runs it and leaves the row as it was). */
async function expand(page: Page, name: RegExp): Promise<void> {
	const row = page.getByRole('treeitem', { name }).first();
	await waitFor(
		async () => {
			if ((await row.getAttribute('aria-expanded')) !== 'true') {
				await row.locator('.monaco-tl-twistie').click();
			}
			return (await row.getAttribute('aria-expanded')) === 'true';
		},
		15_000,
		`the row ${name} unfolded`,
	);
}

/** Waits for the commit with subject `subject` to be HEAD; returns its id. */
async function waitForHead(repo: string, subject: string): Promise<string> {
	await waitFor(async () => git(repo, 'log', '-1', '--format=%s') === subject, 30_000, `the commit “${subject}”`);
	return git(repo, 'rev-parse', 'HEAD');
}
