import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Frame, Locator, Page } from 'playwright-core';
import {
	answerInput,
	launchScriptedRun,
	pickAfterCommand,
	runCommand,
	screenshot,
	waitFor,
	webviewWith,
	walkthroughStep,
	type ScriptedRunBench,
} from '../helpers/codeServer';
import { git } from '../helpers/gitRepo';
import type { Scenario } from '../helpers/scriptedAgent';

/** The scripted agent playing `scenario` in the shop repository, a project check that passes when the agent wrote its file, and the ticket launched. */
function launch(
	prefix: string,
	scenario: Scenario,
	ticket: string,
	options: { walkthrough?: boolean } = {},
): Promise<ScriptedRunBench> {
	return launchScriptedRun(
		prefix,
		scenario,
		ticket,
		{
			'agentDesk.runs.maxAttempts': 1,
			'agentDesk.checks': [
				{
					id: 'greeting-exists',
					executable: process.execPath,
					args: ['-e', "require('fs').accessSync('src/greeting.ts')"],
					timeout: 30,
				},
			],
		},
		options,
	);
}

/** A decision's link on a run page pressed, its rationale left out: the confirmation it asks, and its text. */
async function confirmationOf(
	page: Page,
	runPage: Frame,
	link: string,
	rationaleTitle: string,
): Promise<{ dialog: Locator; question: string }> {
	await runPage.getByRole('link', { name: link, exact: true }).click();
	await answerInput(page, rationaleTitle);
	const dialog = page.locator('.monaco-dialog-box');
	await dialog.waitFor({ timeout: 30_000 });
	return { dialog, question: await dialog.innerText() };
}

const greeting = 'export function greet(name: string): string {\n\treturn `Hello, ${name}!`;\n}\n';

it('runs a ticket through Go with a scripted agent, follows it live, reviews the diff at the gate, approves and finds the commit with its Desk-Run trailer, then rolls it back after a confirmation', async () => {
	// The agent sleeps a little in the work node so that the run can be seen in progress.
	const { repo, page, close } = await launch(
		'desk-gate-e2e-',
		{
			plan: ['Read the shop', 'Write the greeting'],
			writes: [{ path: 'src/greeting.ts', content: greeting }],
			sleepMs: 6_000,
			answer: 'Added src/greeting.ts with greet().',
		},
		'Add a greeting helper\nWrite src/greeting.ts with greet(name).',
		{ walkthrough: true },
	);
	const headBefore = git(repo, 'rev-parse', 'HEAD');
	try {
		// The Runs view follows the run live: a spinning row while the agent works…
		const running = page.getByRole('treeitem', { name: /^Run, patching/ });
		await running.waitFor({ timeout: 30_000 });
		assert.equal(await running.locator('.codicon-sync.codicon-modifier-spin').count(), 1, 'a running run spins');
		await page.mouse.move(1200, 700);
		walkthroughStep(await screenshot(page, 'run-gate-1-in-progress'), '3-run-in-progress');

		// …then it waits for review, and a notification offers the review.
		const toast = page.locator('.notification-toast', { hasText: 'is ready for review' });
		await toast.waitFor({ timeout: 90_000 });
		assert.match(
			await toast.innerText(),
			/Run ‘Add a greeting helper’ is ready for review: 1 file changed, checks: 1 passed, 0 failed/,
		);
		// It opens the review; landing is decided next to the diff.
		await toast.getByRole('button', { name: 'Review', exact: true }).waitFor();
		assert.equal(
			await toast.getByRole('button', { name: 'Approve and Land' }).count(),
			0,
			'the notification does not land',
		);
		const waiting = page.getByRole('treeitem', { name: /^Run, waiting for review · .*scripted-model-1/ });
		await waiting.waitFor({ timeout: 30_000 });
		// The waiting run stays in sight after the notification is gone: a count on the activity bar's
		// Agent Desk entry and in the status bar.
		const toReview = page.locator('.statusbar-item', { hasText: '1 to review' });
		await toReview.waitFor({ timeout: 15_000 });
		const badge = page
			.locator('.activitybar .action-item', { has: page.locator('[aria-label^="Agent Desk"]') })
			.locator('.badge-content');
		await waitFor(
			async () => (await badge.innerText().catch(() => '')).trim() === '1',
			15_000,
			'the badge counting one run',
		);
		await page.waitForTimeout(800);
		walkthroughStep(await screenshot(page, 'run-gate-2-notification'), '4-ready-for-review');

		// Review: the change in the multi-file diff editor, the run's page beside it.
		await toast.getByRole('button', { name: 'Review', exact: true }).click();
		await page.locator('.tab', { hasText: 'Review: Add a greeting helper' }).waitFor({ timeout: 30_000 });
		const diff = page.locator('.monaco-diff-editor').first();
		await diff.waitFor({ timeout: 30_000 });
		await waitFor(
			async () => (await diff.innerText()).replace(/\u00a0/g, ' ').includes('return `Hello, ${name}!`;'),
			20_000,
			'the agent’s change in the diff',
		);
		assert.match(await page.locator('.multiDiffEditor').first().innerText(), /greeting\.ts/);
		const runPage = await webviewWith(page, 'Waiting for your review');
		const pageText = await runPage.locator('body').innerText();
		for (const expected of [
			'Run 1 of “Add a greeting helper”',
			'Evidence (1 passed, 0 failed)',
			'greeting-exists',
			'✓ passed',
			'scripted-model-1',
			'Provenance',
			'Approve and Land',
			'Retry',
			'Abandon',
			'Checkpoint',
		]) {
			assert.ok(pageText.includes(expected), `the run page shows ${expected}`);
		}
		const runId = /\nId\s+(\S+)/.exec(pageText)?.[1];
		assert.ok(runId, 'the run page shows the run id');
		await page.mouse.move(700, 500);
		await page.waitForTimeout(600);
		walkthroughStep(await screenshot(page, 'run-gate-3-review'), '5-review');

		// Approve and Land from the page's link: a rationale, then the confirmation saying what happens.
		await runPage.getByRole('link', { name: 'Approve and Land' }).click();
		await answerInput(page, 'Approve and Land: Add a greeting helper', 'The helper is what the ticket asks for.');
		const dialog = page.locator('.monaco-dialog-box');
		await dialog.waitFor({ timeout: 30_000 });
		const question = await dialog.innerText();
		assert.match(question, /Land run ‘Add a greeting helper’\?/);
		assert.ok(
			question.includes(`Commit 1 file on main as “Add a greeting helper” with the trailer Desk-Run: ${runId}.`),
			question,
		);
		assert.match(question, /A src\/greeting\.ts/);
		await screenshot(page, 'run-gate-4-confirm');
		await dialog.getByRole('button', { name: 'Land', exact: true }).click();
		const landed = page.locator('.notification-toast', { hasText: 'landed ‘Add a greeting helper’ as commit' });
		await landed.waitFor({ timeout: 30_000 });

		// The commit: the ticket's first line as subject, the run named in its trailer, on main.
		const head = git(repo, 'rev-parse', 'HEAD');
		assert.notEqual(head, headBefore);
		assert.equal(git(repo, 'rev-parse', 'HEAD~1'), headBefore);
		const message = git(repo, 'log', '-1', '--format=%B');
		assert.equal(message.split('\n')[0], 'Add a greeting helper');
		assert.ok(message.split('\n').includes(`Desk-Run: ${runId}`), message);
		assert.match(await landed.innerText(), new RegExp(`as commit ${head.slice(0, 7)} on main`));
		assert.equal(git(repo, 'show', 'HEAD:src/greeting.ts'), greeting.trimEnd());
		assert.equal(git(repo, 'status', '--porcelain'), '', 'the checkout is clean after the land');
		await page.getByRole('treeitem', { name: /^Run, completed · landed/ }).waitFor({ timeout: 30_000 });
		await toReview.waitFor({ state: 'hidden', timeout: 15_000 });
		const landedPage = await webviewWith(
			page,
			`landed as ${head.slice(0, 12)} — The helper is what the ticket asks for.`,
		);
		await page.mouse.move(700, 500);
		await page.waitForTimeout(800);
		walkthroughStep(await screenshot(page, 'run-gate-5-landed'), '6-landed');

		// Rollback… from the page: a confirmation that says exactly what it reverts, then a revert commit.
		const { dialog: rollbackDialog, question: rollbackQuestion } = await confirmationOf(
			page,
			landedPage,
			'Rollback…',
			'Rollback: Add a greeting helper',
		);
		assert.match(rollbackQuestion, /Roll Back run ‘Add a greeting helper’\?/);
		assert.ok(rollbackQuestion.includes(`Make a commit on main that reverts ${head.slice(0, 12)}`), rollbackQuestion);
		assert.match(rollbackQuestion, /D src\/greeting\.ts/);
		await screenshot(page, 'run-gate-5b-rollback-confirm');
		await rollbackDialog.getByRole('button', { name: 'Roll Back', exact: true }).click();
		await page
			.locator('.notification-toast', { hasText: 'rolled back ‘Add a greeting helper’: commit' })
			.waitFor({ timeout: 30_000 });
		assert.equal(git(repo, 'rev-parse', 'HEAD~1'), head, 'the revert commit follows the landing');
		assert.match(git(repo, 'log', '-1', '--format=%B'), new RegExp(`This reverts commit ${head}`));
		assert.equal(git(repo, 'status', '--porcelain'), '', 'the checkout follows the revert');
		await page.getByRole('treeitem', { name: /^Run, completed · rolled back a landing/ }).waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Run, completed · landed, then rolled back/ })
			.waitFor({ timeout: 30_000 });
		await page.waitForTimeout(800);
		await screenshot(page, 'run-gate-5c-rolled-back');
	} finally {
		await screenshot(page, 'run-gate-final').catch(() => undefined);
		await close();
	}
});

it('keeps a run at the gate as a checkpoint from its page, then Resume from Checkpoint starts a new run that begins with the kept change and reaches the gate', async () => {
	const farewell = 'export function farewell(name: string): string {\n\treturn `Bye, ${name}!`;\n}\n';
	// The agent's first attempt writes the greeting; the resumed run's attempt only the farewell.
	const { repo, page, close } = await launch(
		'desk-gate-resume-e2e-',
		{
			firstAttemptWrites: [{ path: 'src/greeting.ts', content: greeting }],
			writes: [{ path: 'src/farewell.ts', content: farewell }],
		},
		'Add a greeting helper\nWrite src/greeting.ts with greet(name).',
	);
	const headBefore = git(repo, 'rev-parse', 'HEAD');
	try {
		const ready = page.locator('.notification-toast', { hasText: 'is ready for review: 1 file changed' });
		await ready.waitFor({ timeout: 90_000 });
		await ready.getByRole('button', { name: 'Review', exact: true }).click();
		const runPage = await webviewWith(page, 'Waiting for your review');
		const runId = /\nId\s+(\S+)/.exec(await runPage.locator('body').innerText())?.[1];
		assert.ok(runId, 'the run page shows the run id');

		// Checkpoint from the page: a rationale, then a confirmation saying what is kept, where, and what is put back.
		const { dialog, question } = await confirmationOf(page, runPage, 'Checkpoint', 'Checkpoint: Add a greeting helper');
		assert.match(question, /Keep run ‘Add a greeting helper’ as a checkpoint\?/);
		assert.ok(question.includes(`as a commit under refs/desk/checkpoints/${runId}, off every branch`), question);
		assert.match(question, /The 1 file the agent changed in the checkout is put back/);
		await screenshot(page, 'run-gate-12-checkpoint-confirm');
		await dialog.getByRole('button', { name: 'Keep as Checkpoint', exact: true }).click();
		const kept = page.locator('.notification-toast', { hasText: 'kept ‘Add a greeting helper’ as a checkpoint' });
		await kept.waitFor({ timeout: 30_000 });
		const checkpoint = git(repo, 'rev-parse', `refs/desk/checkpoints/${runId}`);
		assert.ok((await kept.innerText()).includes(`as commit ${checkpoint.slice(0, 7)} under refs/desk/checkpoints/`));
		assert.equal(git(repo, 'show', `${checkpoint}:src/greeting.ts`), greeting.trimEnd());
		assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'the change is kept aside');
		assert.equal(git(repo, 'rev-parse', 'HEAD'), headBefore, 'nothing landed');
		await page.getByRole('treeitem', { name: /^Run, completed · checkpointed/ }).waitFor({ timeout: 30_000 });
		await runCommand(page, 'Notifications: Clear All Notifications');

		// The page now offers Resume from Checkpoint; the new run begins with the kept greeting.
		await webviewWith(page, 'Its change is kept as a checkpoint: resume it in a new run of the task.');
		const checkpointed = await webviewWith(page, 'Resume from Checkpoint');
		await page.mouse.move(700, 500);
		await page.waitForTimeout(600);
		await screenshot(page, 'run-gate-13-checkpointed');
		await checkpointed.getByRole('link', { name: 'Resume from Checkpoint' }).click();
		await page
			.locator('.notification-toast', { hasText: 'resumed ‘Add a greeting helper’ from its checkpoint in a new run' })
			.waitFor({ timeout: 30_000 });
		// The greeting the agent did not write this time: its check passes, and the change holds both files.
		const resumed = page.locator('.notification-toast', {
			hasText: /Run ‘Add a greeting helper’ is ready for review: 2 files changed, checks: 1 passed, 0 failed/,
		});
		await resumed.waitFor({ timeout: 90_000 });
		assert.equal(
			git(repo, 'status', '--porcelain', '--untracked-files=all'),
			'?? src/farewell.ts\n?? src/greeting.ts',
			'the checkout has the kept greeting and the new farewell',
		);
		await page
			.getByRole('treeitem', { name: /^Run, completed · checkpointed, then resumed/ })
			.waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^Run, waiting for review/ }).waitFor({ timeout: 30_000 });
		// Each run revised the plan: the revisions before the latest are one folded row, not a row each.
		await page.getByRole('treeitem', { name: /^Earlier plans\b/ }).waitFor({ timeout: 30_000 });
		assert.equal(await page.getByRole('treeitem', { name: /^Earlier plan(?!s)/ }).count(), 0);
		await resumed.getByRole('button', { name: 'Review', exact: true }).click();
		await page.locator('.tab', { hasText: 'Review: Add a greeting helper (Run 2' }).waitFor({ timeout: 30_000 });
		// Run 1's review stays open in its own group; Run 2's shows both files.
		const review = page.locator('.multiDiffEditor', { hasText: 'farewell.ts' });
		await review.waitFor({ timeout: 30_000 });
		await waitFor(
			async () => /greeting\.ts/.test(await review.innerText()),
			20_000,
			"the kept greeting in Run 2's review",
		);
		const secondPage = await webviewWith(page, 'Run 2 of “Add a greeting helper”');
		const secondText = await secondPage.locator('body').innerText();
		assert.ok(secondText.includes('Waiting for your review: 2 files changed, checks: 1 passed, 0 failed.'), secondText);
		assert.match(secondText, /Resumes\s+the checkpoint of Run 1: its change was in place before the agent started/);
		await page.mouse.move(700, 500);
		await page.waitForTimeout(800);
		await screenshot(page, 'run-gate-14-resumed-at-gate');
	} finally {
		await screenshot(page, 'run-gate-resume-final').catch(() => undefined);
		await close();
	}
});

it('tells of a failed run with Show Run and Retry; Retry on the shared checkout asks first and says what it put back; Abandon from the command palette puts the checkout back', async () => {
	const { repo, page, close } = await launch(
		'desk-gate-fail-e2e-',
		{ writes: [{ path: 'src/greeting.ts', content: greeting }], exitCode: 3 },
		'Add a broken greeting',
	);
	try {
		const toast = page.locator('.notification-toast', { hasText: 'failed:' });
		await toast.waitFor({ timeout: 90_000 });
		assert.match(await toast.innerText(), /Run ‘Add a broken greeting’ failed: /);
		for (const button of ['Show Run', 'Retry']) {
			await toast.getByRole('button', { name: button, exact: true }).waitFor();
		}
		await page.getByRole('treeitem', { name: /^Run, failed/ }).waitFor({ timeout: 30_000 });
		await page.waitForTimeout(800);
		await screenshot(page, 'run-gate-6-failed');
		assert.equal(
			git(repo, 'status', '--porcelain', '--untracked-files=all'),
			'?? src/greeting.ts',
			'the failed run left its file in the shared checkout',
		);

		// Retry from the notification: a rationale, then a confirmation that names the files it puts back.
		await toast.getByRole('button', { name: 'Retry', exact: true }).click();
		await answerInput(page, 'Retry: Add a broken greeting');
		const retryDialog = page.locator('.monaco-dialog-box');
		await retryDialog.waitFor({ timeout: 30_000 });
		const retryQuestion = await retryDialog.innerText();
		assert.match(retryQuestion, /Retry run ‘Add a broken greeting’\?/);
		assert.match(
			retryQuestion,
			/Retry puts back the 1 file the agent changed in the checkout \(files you changed since are kept\) and starts a new run/,
		);
		await screenshot(page, 'run-gate-6b-retry-confirm');
		await retryDialog.getByRole('button', { name: 'Retry', exact: true }).click();
		await page
			.locator('.notification-toast', { hasText: 'retrying ‘Add a broken greeting’ in a new run. 1 file put back.' })
			.waitFor({ timeout: 30_000 });
		// The new run fails the same way.
		await page.getByRole('treeitem', { name: /^Run, failed · retried/ }).waitFor({ timeout: 30_000 });
		await waitFor(
			async () => (await page.getByRole('treeitem', { name: /^Run, failed( |$)/ }).count()) === 2,
			90_000,
			'the retried run and the new one, both failed',
		);
		await runCommand(page, 'Notifications: Clear All Notifications');

		const pick = await pickAfterCommand(page, 'Agent Desk: Abandon Run…', 'Add a broken greeting');
		assert.match(await pick.innerText(), /failed/);
		await page.keyboard.press('Enter');
		await answerInput(page, 'Abandon: Add a broken greeting', 'The agent crashed.');
		const dialog = page.locator('.monaco-dialog-box');
		await dialog.waitFor({ timeout: 30_000 });
		assert.match(await dialog.innerText(), /Abandon run ‘Add a broken greeting’\?[\s\S]*task marked failed/);
		await dialog.getByRole('button', { name: 'Abandon', exact: true }).click();
		await page
			.locator('.notification-toast', { hasText: 'abandoned ‘Add a broken greeting’' })
			.waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^Run, failed · abandoned/ }).waitFor({ timeout: 30_000 });
		assert.equal(git(repo, 'status', '--porcelain'), '', "the agent's file is gone from the checkout");
		await page.waitForTimeout(800);
		await screenshot(page, 'run-gate-7-abandoned');
	} finally {
		await screenshot(page, 'run-gate-fail-final').catch(() => undefined);
		await close();
	}
});

it('lands a run with a failing check only past a warning that names it, asks once for the identity git lacks, and offers to merge the run’s own branch', async () => {
	const { repo, page, close } = await launchScriptedRun(
		'desk-gate-branch-e2e-',
		{ writes: [{ path: 'src/greeting.ts', content: greeting }] },
		'Add a greeting helper on a branch',
		{
			'agentDesk.runs.isolation': 'worktree',
			'agentDesk.runs.maxAttempts': 1,
			'agentDesk.checks': [
				{
					id: 'greeting-tested',
					executable: process.execPath,
					args: ['-e', "require('fs').accessSync('src/greeting.test.ts')"],
					timeout: 30,
				},
			],
		},
		// A machine where git was never set up: the landing asks who commits.
		{ gitIdentity: false },
	);
	const headBefore = git(repo, 'rev-parse', 'HEAD');
	try {
		await page.locator('.notification-toast', { hasText: 'checks: 0 passed, 1 failed' }).waitFor({ timeout: 90_000 });
		await pickAfterCommand(page, 'Agent Desk: Approve and Land Run…', 'Add a greeting helper on a branch');
		await page.keyboard.press('Enter');
		await answerInput(page, 'Approve and Land: Add a greeting helper on a branch');
		// A warning that names the failing check; Enter would review the checks, not land.
		const dialog = page.locator('.monaco-dialog-box');
		await dialog.waitFor({ timeout: 30_000 });
		const question = await dialog.innerText();
		assert.match(question, /Land run ‘Add a greeting helper on a branch’ with 1 failing check\?/);
		assert.match(question, /This check of the change failed:\n\s*✕ greeting-tested \(exit 1/);
		assert.match(
			question,
			/Commit 1 file on desk\/run-\S+, the run's own branch, .* main does not get it until you merge it/,
		);
		assert.equal(await dialog.locator('.dialog-icon.codicon-dialog-warning').count(), 1, 'the warning icon');
		// The dialog gives its default button the focus once it is drawn (under load, a moment after it shows).
		const focused = () => page.evaluate('document.activeElement && document.activeElement.textContent');
		await waitFor(async () => (await focused()) === 'Review Checks', 10_000, 'the focus on Review Checks').catch(
			async (error: unknown) =>
				assert.fail(`${(error as Error).message}; the focus is on ${JSON.stringify(await focused())}`),
		);
		await screenshot(page, 'run-gate-8-failing-check-confirm');
		await dialog.getByRole('button', { name: 'Land Anyway', exact: true }).click();

		// Git has no identity here: asked once, then the commit is the person's.
		await page.locator('.quick-input-widget', { hasText: 'Your name for the commit' }).waitFor({ timeout: 30_000 });
		await screenshot(page, 'run-gate-9-identity');
		await answerInput(page, 'Your name for the commit', 'Ada Lovelace');
		await answerInput(page, 'Your email for the commit', 'ada@example.com');

		// Landed on the run's own branch; the report offers to merge it into main.
		const landed = page.locator('.notification-toast', { hasText: "the run's own branch: main does not have it yet" });
		await landed.waitFor({ timeout: 30_000 });
		assert.deepEqual((await landed.locator('.monaco-button').allInnerTexts()).slice(0, 3), [
			'Merge into main',
			'Switch to Branch',
			'Copy Commit Id',
		]);
		const branch = /on (desk\/run-\S+), the run's own branch/.exec(await landed.innerText())?.[1];
		assert.ok(branch, await landed.innerText());
		const commit = git(repo, 'rev-parse', branch);
		assert.equal(git(repo, 'log', '-1', '--format=%cn <%ce>', commit), 'Ada Lovelace <ada@example.com>');
		assert.equal(git(repo, 'rev-parse', 'HEAD'), headBefore, 'main is as it was until merged');
		await page.waitForTimeout(800);
		await screenshot(page, 'run-gate-10-landed-on-branch');
		await landed.getByRole('button', { name: 'Merge into main', exact: true }).click();
		await waitFor(async () => git(repo, 'rev-parse', 'HEAD') === commit, 30_000, 'main to have the landed commit');
		assert.equal(git(repo, 'show', 'HEAD:src/greeting.ts'), greeting.trimEnd());
		await page.waitForTimeout(800);
		await screenshot(page, 'run-gate-11-merged');
	} finally {
		await screenshot(page, 'run-gate-branch-final').catch(() => undefined);
		await close();
	}
});
