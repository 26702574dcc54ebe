import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Page } from 'playwright-core';
import {
	answerInput,
	launchScriptedRun,
	runCommand,
	screenshot,
	statusMessage,
	waitFor,
	webviewWith,
} from '../helpers/codeServer';
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
/** What the summary agent proposes to remember of the branch's landing. */
const memorized = {
	op: 'add',
	title: 'Greeting docs',
	text: 'docs/greeting.md documents greet(name) of src/greeting.ts; keep them in step.',
	evidence: ['docs/greeting.md'],
};

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
	// Memorize Landing…'s summary agent (agentDesk.lineage.summaryAgent) answers one batch of memory operations.
	const summaryAgent = scriptedAgentSettings({ answer: JSON.stringify({ ops: [memorized] }) });
	summaryAgent.agents[0]!.name = 'scripted-summary';
	const { repo, page, close } = await launchScriptedRun('desk-lineage-e2e-', {}, 'Add a greeting helper', {
		'agentDesk.agents': [...starter.agents, ...branchAgent.agents, ...summaryAgent.agents],
		'agentDesk.runs.maxAttempts': 1,
		'agentDesk.lineage.branch': { agent: 'scripted-docs' },
		'agentDesk.lineage.summaryAgent': 'scripted-summary',
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
		await statusMessage(page, 'remembered in .desk-memory/main.json').waitFor({ timeout: 30_000 });
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

		console.log(`lineage e2e: branch at the gate at ${Math.round((Date.now() - started) / 1000)} s`);
		// Post Note… on the branch's run: a passive note on its starter's board (no notification), beside
		// the note its final answer at the gate became.
		await contextMenu(page, /^Run, waiting for review/, 'Post Note…');
		await answerInput(page, 'Post Note', 'The docs cite src/greeting.ts; nothing else changed.');
		await statusMessage(page, 'note posted to the starter’s board').waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');
		await page
			.getByRole('treeitem', { name: /^Board, 2 notes/ })
			.first()
			.waitFor({ timeout: 30_000 });
		await expandTo(page, /^Board, 2 notes/, /^Note: The docs cite src\/greeting\.ts; nothing else changed\./);
		assert.equal(await page.locator('.notification-toast').count(), 0, 'a note raises no notification');
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'lineage-1b-note-on-board');
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
		await statusMessage(page, 'answered ‘Document the greeting helper').waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// The Board under the starter run: the report (answered) and the answer, newest first.
		await page
			.getByRole('treeitem', { name: /^Root main, tally · 1 branch \(1 landed\)/ })
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Board, 1 report · / })
			.first()
			.waitFor({ timeout: 30_000 });
		await expandTo(
			page,
			/^Board, 1 report · /,
			/^Report \(landed as [0-9a-f]{7}\): Documented greet\(\) in docs\/greeting\.md\./,
		);
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

		// Continue with Reports on the starter run: a new run of its task (not a resumed session) whose
		// prompt carries the report. The starter's agent now links the docs, and writes down what it was told.
		const starterScenario = starter.agents[0]!.args[1]!;
		fs.writeFileSync(
			starterScenario,
			JSON.stringify({
				writes: [{ path: 'src/greeting.ts', content: `// Documented in docs/greeting.md.\n${greeting}` }],
				answer: 'Pointed greet() at its docs.',
				echoPromptTo: path.dirname(starterScenario),
			}),
		);
		await runCommand(page, 'View: Close All Editors');
		await contextMenu(page, starterRow, 'Continue with Reports');
		const continued = page.locator('.notification-toast', {
			hasText: 'a new run continues the task with 1 report in its prompt',
		});
		await continued.waitFor({ timeout: 30_000 });
		await continued.getByRole('button', { name: 'Show Run', exact: true }).click();
		await webviewWith(page, 'Reports from branches');
		await page.locator('.notification-toast', { hasText: 'is ready for review' }).waitFor({ timeout: 60_000 });
		const promptFile = path.join(path.dirname(starterScenario), 'work.prompt.txt');
		const prompt = fs.readFileSync(promptFile, 'utf8');
		for (const expected of [
			'Add a greeting helper',
			'## Reports from branches',
			'### Document the greeting helper in docs/greeting.md: landed',
			'Documented greet() in docs/greeting.md.',
		]) {
			assert.ok(prompt.includes(expected), `the continuation's prompt carries ${expected}`);
		}
		await page.getByRole('treeitem', { name: /^Run, waiting for review/ }).waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');
		// The page is drawn anew as the run reaches its gate.
		const continuation = await webviewWith(page, 'Approve and Land');
		const continuationText = await continuation.locator('body').innerText();
		for (const expected of ['Prompt', 'Reports from branches', 'Documented greet() in docs/greeting.md.']) {
			assert.ok(continuationText.includes(expected), `the continuation's run page shows ${expected}`);
		}
		await continuation.locator('#lineage').evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'lineage-4c-continuation-run-page');
		console.log(`lineage e2e: continued at ${Math.round((Date.now() - started) / 1000)} s`);

		// Project memory: Remember… in the Memory view, then Commit Memory.
		await fold(page, 'Runs', false);
		await fold(page, 'Memory', true);
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 1 memory · uncommitted/ })
			.waitFor({ timeout: 30_000 });
		console.log(`lineage e2e: memory view at ${Math.round((Date.now() - started) / 1000)} s`);
		// Memorize Landing… of the branch: the summary agent's memory, with the landing as its provenance.
		await runCommand(page, 'Agent Desk: Memorize Landing…');
		await pickItem(page, 'Memorize which landing?', 'Document the greeting helper in docs/greeting.md');
		await statusMessage(page, 'memorized ‘Document the greeting helper in docs/greeting.md’: 1 memory added').waitFor({
			timeout: 60_000,
		});
		await page
			.getByRole('treeitem', {
				name: /^Memory Greeting docs, from landing [0-9a-f]{7} · .* · “docs\/greeting\.md documents greet\(name\)/,
			})
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 2 memories · uncommitted/ })
			.waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(800);
		await screenshot(page, 'lineage-5a-memorized');
		await runCommand(page, 'Notifications: Clear All Notifications');

		await runCommand(page, 'Agent Desk: Remember…');
		await answerInput(page, 'Remember (main)', 'greet(name) lives in src/greeting.ts; its docs are docs/greeting.md.');
		await answerInput(page, 'Remember (main): title', 'Greeting helper');
		await statusMessage(page, 'remembered in .desk-memory/main.json').waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 3 memories · uncommitted/ })
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Memory Greeting helper, you · .* · “greet\(name\) lives in/ })
			.waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// Forget by the memory row's inline button: a modal confirmation, then the row and the file's entry are gone.
		// The view refreshes its rows when the memory file changes on disk (the remember above wrote it); a
		// click that lands on a row being replaced is lost, so a person (and this test) clicks again.
		const tests = page.getByRole('treeitem', { name: /^Memory Tests, / });
		const confirm = page.locator('.monaco-dialog-box', { hasText: 'Forget ‘Tests’?' });
		for (let attempt = 1; ; attempt++) {
			await tests.hover();
			await tests.locator('.action-label[aria-label="Forget"]').click();
			const shown = await confirm.waitFor({ timeout: 5_000 }).then(
				() => true,
				() => false,
			);
			if (shown) break;
			assert.ok(attempt < 3, 'Forget on the memory row opened no confirmation in three clicks');
		}
		await page.waitForTimeout(400);
		await screenshot(page, 'lineage-5b-forget-dialog');
		await confirm.getByRole('button', { name: 'Forget', exact: true }).click();
		await tests.waitFor({ state: 'detached', timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Root main, \.desk-memory\/main\.json · 2 memories · uncommitted/ })
			.waitFor({ timeout: 30_000 });
		assert.deepEqual(memoryTitles(repo), ['Greeting docs', 'Greeting helper']);
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

		// New Lineage Root…: Roots lists it, and Branch from Here… then asks which root to fork.
		console.log(`lineage e2e: memory committed at ${Math.round((Date.now() - started) / 1000)} s`);
		await runCommand(page, 'Notifications: Clear All Notifications');
		await fold(page, 'Memory', false);
		await fold(page, 'Runs', true);
		await runCommand(page, 'Agent Desk: New Lineage Root…');
		await answerInput(page, 'New Lineage Root', 'docs-site');
		await answerInput(page, 'New Lineage Root: docs-site', 'The documentation site, reviewed apart from the code.');
		await statusMessage(page, 'listed root docs-site').waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^Roots, 2 roots · 1 branch/ }).waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Root docs-site, no branch yet · The documentation site/ })
			.waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(800);
		await screenshot(page, 'lineage-7-new-root');
		await runCommand(page, 'Notifications: Clear All Notifications');

		// The docs agent proofreads this time (the continuation waits at its gate: it no longer edits the shared checkout).
		fs.writeFileSync(
			branchAgent.agents[0]!.args[1]!,
			JSON.stringify({
				writes: [{ path: 'docs/greeting.md', content: docs.replace('says hello.', 'says hello to `name`.') }],
				answer: 'Proofread docs/greeting.md.',
			}),
		);
		await contextMenu(page, starterRow, 'Branch from Here…');
		await page.locator('.quick-input-list .monaco-list-row', { hasText: 'docs-site' }).waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(300);
		await screenshot(page, 'lineage-7b-root-pick');
		await pickItem(page, 'Branch from ‘Add a greeting helper’', 'docs-site');
		await answerInput(page, 'Branch from ‘Add a greeting helper’ (root docs-site)', 'Proofread docs/greeting.md');
		await page
			.locator('.notification-toast', { hasText: 'started branch ‘Proofread docs/greeting.md’ of root docs-site.' })
			.waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^Root docs-site, tally · 1 branch/ }).waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Branch Proofread docs\/greeting\.md, / })
			.first()
			.waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(800);
		await screenshot(page, 'lineage-8-branch-of-new-root');
		console.log(`lineage e2e: ${Math.round((Date.now() - started) / 1000)} s`);
	} finally {
		await screenshot(page, 'lineage-final').catch(() => undefined);
		await close();
	}
});

/** Picks the row holding `label` in the quick pick whose title holds `title`. */
async function pickItem(page: Page, title: string, label: string): Promise<void> {
	const widget = page.locator('.quick-input-widget', { hasText: title });
	await widget.waitFor({ timeout: 30_000 });
	await widget.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().click();
}

/** The titles of the memories `.desk-memory/main.json` holds now, sorted. */
function memoryTitles(repo: string): string[] {
	const file = JSON.parse(fs.readFileSync(path.join(repo, '.desk-memory', 'main.json'), 'utf8')) as {
		memories: Record<string, { title: string }>;
	};
	return Object.values(file.memories)
		.map((m) => m.title)
		.sort();
}

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

/** Unfolds the row `name` until its child `child` shows (a refresh of the view while it unfolds can fold it again). */
async function expandTo(page: Page, name: RegExp, child: RegExp): Promise<void> {
	await waitFor(
		async () => {
			await expand(page, name);
			await page.getByRole('treeitem', { name: child }).first().waitFor({ timeout: 3_000 });
			return true;
		},
		45_000,
		`the row ${child} under ${name}`,
	);
}

/** Waits for the commit with subject `subject` to be HEAD; returns its id. */
async function waitForHead(repo: string, subject: string): Promise<string> {
	await waitFor(async () => git(repo, 'log', '-1', '--format=%s') === subject, 30_000, `the commit “${subject}”`);
	return git(repo, 'rev-parse', 'HEAD');
}
