/**
 * A run survives a reload of its window (glossary: Carrier): the workbench is reloaded while the
 * scripted agent works; the run's page comes back in its tab, follows the run on, and shows it
 * waiting at the gate, its change whole, the agent never stopped.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { launchScriptedRun, runCommand, screenshot, waitFor, webviewWith } from '../helpers/codeServer';
import { git } from '../helpers/gitRepo';
import { agentProcesses } from '../helpers/runProcesses';
import { releaseScriptedAgent } from '../helpers/scriptedAgent';

const greeting = 'export function greet(name: string): string {\n\treturn `Hello, ${name}!`;\n}\n';

it('a window reload mid-run restores the run page, which follows the run on to the gate', async () => {
	const { repo, page, close } = await launchScriptedRun(
		'desk-reload-e2e-',
		{
			plan: ['Write the greeting'],
			writes: [{ path: 'src/greeting.ts', content: greeting }],
			// At work until the reloaded window was looked at, however long the reload takes.
			holdUntilReleased: true,
			answer: 'Added src/greeting.ts with greet().',
		},
		'Add a greeting helper\nWrite src/greeting.ts with greet(name).',
		{ 'agentDesk.runs.maxAttempts': 1 },
	);
	try {
		// The run's page, opened from its row while the agent works. The view refreshes as the run
		// moves; a click that lands on a row being replaced is lost, so it is made again.
		const row = page.getByRole('treeitem', { name: /^Run, patching/ });
		await row.waitFor({ timeout: 30_000 });
		await waitFor(
			async () => {
				await row.click({ timeout: 2_000 });
				return page
					.locator('.tab', { hasText: /Run [^:]*: Add a greeting helper/ })
					.waitFor({ timeout: 3_000 })
					.then(() => true);
			},
			20_000,
			'the run page',
		);
		const before = await webviewWith(page, 'of “Add a greeting helper”');
		const text = await before.locator('body').innerText();
		assert.match(text, /patching/);
		assert.match(text, /Carried by\s+its own process: it goes on when this window reloads or closes/);
		const runId = /\nId\s+(\S+)/.exec(text)?.[1];
		assert.ok(runId, 'the run page shows the run id');
		await waitFor(async () => fs.existsSync(path.join(repo, 'src', 'greeting.ts')), 30_000, 'the agent to write');
		const agents = agentProcesses(runId);
		assert.ok(agents.length > 0, 'the agent is at work');

		// The window reloads: its extension host and desk server end, the run's own process goes on.
		// (Developer: Reload Window saves the workbench's state first, as desktop VS Code always does;
		// the browser's own reload in code-server keeps only what it saved last, which may predate the tab.)
		const reloaded = page.waitForEvent('load', { timeout: 60_000 });
		await runCommand(page, 'Developer: Reload Window');
		await reloaded;
		await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
		const restored = await webviewWith(page, 'of “Add a greeting helper”', 60_000);
		assert.match(await page.locator('.tab.active').first().innerText(), /Run [^:]*: Add a greeting helper/);
		const after = await restored.locator('body').innerText();
		assert.match(after, /patching/, 'restored while the agent still works');
		assert.ok(
			agents.every((pid) => agentProcesses(runId).includes(pid)),
			'the same agent processes are still at work',
		);
		await page.mouse.move(900, 500);
		await page.waitForTimeout(600);
		await screenshot(page, 'reload-1-run-page-restored');
		assert.ok(releaseScriptedAgent(agents) > 0, 'the agent was told it may finish');

		// It follows the run on: at the gate, the change whole, no failure.
		const atGate = await webviewWith(page, 'Waiting for your review', 60_000);
		const gateText = await atGate.locator('body').innerText();
		assert.ok(gateText.includes('Approve and Land'), gateText);
		assert.ok(!/Error\s/.test(gateText), gateText);
		assert.ok(gateText.includes('src/greeting.ts'), 'the PatchSet holds the agent’s file');
		await page.getByRole('treeitem', { name: /^Run, waiting for review/ }).waitFor({ timeout: 30_000 });
		assert.equal(fs.readFileSync(path.join(repo, 'src', 'greeting.ts'), 'utf8'), greeting);
		assert.match(git(repo, 'status', '--porcelain', '--untracked-files=all'), /src\/greeting\.ts/);
		await page.waitForTimeout(600);
		await screenshot(page, 'reload-2-run-at-gate');
	} catch (error) {
		await screenshot(page, 'reload-failed').catch(() => undefined);
		throw error;
	} finally {
		await close();
	}
});
