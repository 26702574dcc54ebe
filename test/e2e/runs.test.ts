import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { newDecision, seal } from '../../server/src/ai/model';
import { GitRepository } from '../../server/src/git/repository';
import { exportHistory } from '../../server/src/git/historyRef';
import { openAgentDesk, runCommand, screenshot, statusMessage, waitFor } from '../helpers/codeServer';
import { commitFile, git, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';
import { completeChain } from '../unit/ai/chain';

it('imports a run history ref and shows the chain in the Runs view, the run page and the PatchSet diff', async () => {
	const root = tempDir('desk-runs-e2e-');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	commitFile(repo, 'src/users.ts', 'export function listUsers() {\n\treturn db.users.all();\n}\n', 'users endpoint');
	const base = git(repo, 'rev-parse', 'HEAD');
	commitFile(
		repo,
		'src/users.ts',
		'export function listUsers(limit = 20, offset = 0) {\n\treturn db.users.all().slice(offset, offset + limit);\n}\n',
		'paginate users',
	);
	const result = git(repo, 'rev-parse', 'HEAD');
	// The chain is made with the model's own API and shared the way a teammate would: on the history ref.
	const chain = completeChain(base, git(repo, 'rev-parse', `${base}:src/users.ts`), {
		resultCommit: result,
		touched: 'src/users.ts',
	});
	await exportHistory(
		GitRepository.open(repo),
		chain.all.map((o) => seal(structuredClone(o))),
	);
	assert.ok(git(repo, 'rev-parse', 'refs/desk/history'));

	const { page, close } = await openAgentDesk({ folder: repo, libraryFolder: path.join(root, 'library') });
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		await page.getByRole('treeitem', { name: /^shop, main asset/ }).waitFor({ timeout: 60_000 });
		await runCommand(page, 'Agent Desk: Import Run History');
		await statusMessage(page, `${chain.all.length} objects imported`).waitFor({ timeout: 30_000 });

		const intent = page.getByRole('treeitem', { name: /^Add pagination to the user list API/ });
		await intent.waitFor({ timeout: 30_000 });
		await page.getByRole('treeitem', { name: /^Paginate GET \/users/ }).waitFor();
		const run = page.getByRole('treeitem', { name: /^Run, completed · .*claude-sonnet-4 · 1,500 tokens · \$0\.0125/ });
		await run.waitFor();
		// The run's page opens in an editor tab. The view refreshes once more after the import's
		// notification; a click that lands on a row being replaced is lost, so it is made again.
		const preview = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
		await waitFor(
			async () => {
				await run.click();
				return preview
					.getByText('Provenance')
					.first()
					.waitFor({ timeout: 5_000 })
					.then(() => true);
			},
			30_000,
			'the run page',
		);
		assert.match(await page.locator('.tab.active').first().innerText(), /Run 1: Paginate GET \/users/);
		const text = await preview.locator('body').innerText();
		for (const expected of [
			'Run 1 of “Paginate GET /users”',
			'claude-sonnet-4',
			'1,500',
			'Add limit and offset query parameters',
			// The conversation: the ticket and the agent's calls, in a person's words.
			'Conversation',
			'read_file',
			'edit_file',
			'npm test',
			'commit',
		]) {
			assert.ok(text.includes(expected), `the run page shows ${expected}`);
		}
		// Nothing in the desk's internal words.
		assert.doesNotMatch(text, /intent_analysis|context pipeline|frames?\b/i);
		await page.mouse.move(900, 500);
		await page.waitForTimeout(600);
		await screenshot(page, 'runs-view-and-page');

		// Under the run: its PatchSet, Evidence, Decision and tool calls; the PatchSet opens its diff.
		await run.locator('.monaco-tl-twistie').click();
		const patchset = page.getByRole('treeitem', { name: /^PatchSet 1: src\/users\.ts/ });
		await patchset.waitFor();
		await page.getByRole('treeitem', { name: /^test: npm/ }).waitFor();
		await page.getByRole('treeitem', { name: /^Decision: commit/ }).waitFor();
		await patchset.click();
		const diff = page.locator('.monaco-diff-editor').first();
		await diff.waitFor({ timeout: 30_000 });
		await waitFor(
			async () => (await diff.innerText()).replace(/\u00a0/g, ' ').includes('slice(offset, offset + limit)'),
			20_000,
			'the committed change in the diff',
		);
		await page.mouse.move(900, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'runs-patchset-diff');
		assert.ok(fs.existsSync(path.join(repo, '.desk', 'project.db')));

		// A pushed ref that rewinds the landed run and adds a second Decision: refused, and listed.
		const rewound = structuredClone(chain.run);
		rewound.status = 'patching';
		rewound.updated_at = new Date(Date.now() + 60_000).toISOString();
		const second = newDecision(chain.human, chain.run, 'abandon');
		await exportHistory(GitRepository.open(repo), [
			...chain.all.filter((o) => o.object_id !== chain.run.object_id).map((o) => seal(structuredClone(o))),
			seal(rewound),
			seal(second),
		]);
		await runCommand(page, 'Agent Desk: Import Run History');
		const warning = page.locator('.notification-toast', { hasText: '2 refused' });
		await warning.waitFor({ timeout: 30_000 });
		await warning.getByRole('button', { name: 'Show Details' }).click();
		const details = page.locator('.monaco-editor .view-lines').first();
		await waitFor(
			async () => {
				const shown = (await details.innerText()).replace(/\u00a0/g, ' ');
				return shown.includes('[status_backwards]') && shown.includes('[second_decision]');
			},
			20_000,
			'the refused objects with their reasons',
		);
		// A read-only document of the desk's, not an untitled one that asks to be saved when closed.
		await page.locator('.tab', { hasText: 'Refused by the history import' }).waitFor({ timeout: 10_000 });
		await screenshot(page, 'runs-import-refused');
		await page.getByRole('treeitem', { name: /^Run, completed/ }).waitFor();
	} finally {
		await screenshot(page, 'runs-final').catch(() => undefined);
		await close();
	}
});
