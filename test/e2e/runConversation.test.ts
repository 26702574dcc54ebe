import assert from 'node:assert/strict';
import { it } from 'node:test';
import { launchScriptedRun, screenshot, waitFor, webviewWith } from '../helpers/codeServer';

const greeting = 'export function greet(name: string): string {\n\treturn `Hello, ${name}!`;\n}\n';
/** What the agent's shell call printed: more lines than the page previews, so the whole is read in a tab. */
const testOutput = Array.from({ length: 40 }, (_, i) => `ok ${i + 1} - greets case ${i + 1}`).join('\n');

it("reads the agent's conversation on the run page while it works and after: its message live, a tool call's output opened in a tab, a check's log in a tab", async () => {
	const { page, close } = await launchScriptedRun(
		'desk-conversation-e2e-',
		{
			say: ['Looking at the shop before I write the helper.'],
			printed: [{ command: 'npm test -- --grep greet', output: testOutput }],
			writes: [{ path: 'src/greeting.ts', content: greeting }],
			// The agent works a while after its message, so the page is seen while it works.
			sleepMs: 10_000,
			answer: 'Added src/greeting.ts with greet().',
		},
		'Add a greeting helper\nWrite src/greeting.ts with greet(name).',
		{
			// The workbench's default theme is dark: the page is looked at as most people see it.
			'workbench.colorTheme': 'Default Dark Modern',
			'agentDesk.runs.maxAttempts': 1,
			'agentDesk.checks': [
				{
					id: 'greeting-exists',
					executable: process.execPath,
					args: ['-e', "require('fs').accessSync('src/greeting.ts'); console.log('greeting found in src/greeting.ts')"],
					timeout: 30,
				},
			],
		},
	);
	try {
		// While the agent works: its page shows what it said, the call it made, and that it is at work.
		const running = page.getByRole('treeitem', { name: /^Run, patching/ });
		await running.waitFor({ timeout: 30_000 });
		// The view refreshes as the run goes on; a click on a row being replaced is lost, so it is made again.
		let runPage: Awaited<ReturnType<typeof webviewWith>> | undefined;
		await waitFor(
			async () => {
				await running.click();
				runPage = await webviewWith(page, 'Looking at the shop before I write the helper.', 5_000);
				return true;
			},
			30_000,
			'the run page of the working run',
		);
		if (!runPage) {
			throw new Error('no run page');
		}
		assert.match(await page.locator('.tab.active').first().innerText(), /Run 1: Add a greeting helper/);
		await runPage.getByText('The agent is working…').waitFor({ timeout: 10_000 });
		const call = runPage.locator('details.call', { hasText: 'npm test -- --grep greet' });
		await call.waitFor({ timeout: 10_000 });
		// Opened while the run goes on: it stays open as the page follows the run.
		await call.locator('summary').click();
		await runPage.getByText('ok 20 - greets case 20').waitFor({ timeout: 10_000 });
		assert.equal(await runPage.getByText('ok 21 - greets case 21').count(), 0, 'a preview, not the whole output');
		await runPage.getByText('No check has run yet').waitFor();
		await runPage.locator('.working').scrollIntoViewIfNeeded();
		await page.mouse.move(1200, 700);
		await screenshot(page, 'run-conversation-1-live');

		// At the gate the same page has followed on: the answer, the change, the check; the call is still open.
		await runPage.getByText('Waiting for your review').waitFor({ timeout: 90_000 });
		await runPage.getByText('Added src/greeting.ts with greet().').first().waitFor({ timeout: 10_000 });
		await runPage.getByText('Changed 1 file: src/greeting.ts').waitFor({ timeout: 10_000 });
		assert.equal(await call.getAttribute('open'), '', 'the call opened before is still open');
		assert.equal(await runPage.getByText('The agent is working…').count(), 0);
		const text = await runPage.locator('body').innerText();
		assert.doesNotMatch(text, /intent_analysis|context pipeline|frames?\b/i);
		await runPage.getByText('Changed 1 file: src/greeting.ts').scrollIntoViewIfNeeded();
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(500);
		await screenshot(page, 'run-conversation-2-at-gate');

		// The call's whole output opens in a read-only tab.
		await call.locator('.part', { hasText: 'Output' }).getByRole('link', { name: 'Open in a tab' }).click();
		await page.locator('.tab', { hasText: /Bash output \(call \d+, Run 1\)\.log/ }).waitFor({ timeout: 20_000 });
		const editor = page.locator('.monaco-editor .view-lines').first();
		await waitFor(
			async () => (await editor.innerText()).replace(/\u00a0/g, ' ').includes('ok 1 - greets case 1'),
			20_000,
			'the output in its tab',
		);
		await page.waitForTimeout(500);
		await screenshot(page, 'run-conversation-3-output-tab');

		// Back on the run page, the check's full log opens in a tab too.
		await page.locator('.tab', { hasText: 'Run 1: Add a greeting helper' }).click();
		const again = await webviewWith(page, 'Waiting for your review');
		await again.locator('table.evidence').getByRole('link', { name: 'Open log' }).click();
		await page.locator('.tab', { hasText: 'greeting-exists log (Run 1).log' }).waitFor({ timeout: 20_000 });
		await waitFor(
			async () =>
				(await page.locator('.monaco-editor .view-lines').first().innerText())
					.replace(/\u00a0/g, ' ')
					.includes('greeting found in src/greeting.ts'),
			20_000,
			'the check log in its tab',
		);
		await page.waitForTimeout(500);
		await screenshot(page, 'run-conversation-4-log-tab');
	} finally {
		await screenshot(page, 'run-conversation-final').catch(() => undefined);
		await close();
	}
});
