import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import {
	openAgentDesk,
	projectRoot,
	runCommand,
	screenshot,
	statusMessage,
	typeTicket,
	waitFor,
} from '../helpers/codeServer';
import { fakeClaudeFolder } from '../helpers/fakeAgentCli';
import { makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { defaultAgents } from '../../server/src/runs/settings';
import { tempDir } from '../helpers/temp';

function deskCli(store: string, ...args: string[]): void {
	const result = spawnSync(process.execPath, [path.join(projectRoot, 'dist', 'desk.js'), '--store', store, ...args], {
		encoding: 'utf8',
	});
	assert.equal(result.status, 0, result.stderr);
}

it('writes a ticket (every key kept after Ctrl+A), keeps a suggestion, plugs the repo as target, goes, and finds the run and the launch under "used in"', async () => {
	const root = tempDir('desk-card-e2e-');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const notes = path.join(root, 'pagination-notes');
	fs.mkdirSync(notes);
	fs.writeFileSync(
		path.join(notes, 'cursors.md'),
		'# Cursor pagination\n\nOpaque cursors for listing endpoints; page size at most 100.\n',
	);
	const library = path.join(root, 'library');
	deskCli(library, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main');
	deskCli(library, 'asset', 'import', '--dir', notes, '--project', 'shop');

	const agents = scriptedAgentSettings({ writes: [{ path: 'docs/cursors.md', content: '# Cursors\n' }] }).agents;
	const { page, close } = await openAgentDesk({
		folder: repo,
		libraryFolder: library,
		settings: { 'agentDesk.agents': agents },
	});
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		const shop = page.getByRole('treeitem', { name: /^shop, main asset/ });
		await shop.waitFor({ timeout: 60_000 });
		const { card, editor: ticket } = await typeTicket(page, 'Add cursor pagination to the listing endpoints');
		const suggestion = card.locator('.suggestion', { hasText: 'pagination-notes' });
		await suggestion.waitFor({ timeout: 30_000 });
		assert.match(await suggestion.innerText(), /matches “(cursor|pagination|listing|endpoints)”/);
		assert.equal(
			await ticket.inputValue(),
			'Add cursor pagination to the listing endpoints',
			'what was typed stays in the editor as suggestions arrive',
		);
		// Ctrl+A, then a ticket typed at once, again and again: every key stays. VS Code passed the key on
		// to the workbench, which answered with a select-all of its own (execCommand) a moment later and
		// took the first key typed meanwhile, on a loaded machine 4 times in 8: the card's page counts
		// those answers too, which come after every Ctrl+A unless the card keeps the key to itself.
		const cardFrame = (await (await ticket.elementHandle())!.ownerFrame())!;
		await cardFrame.evaluate(`(() => {
			window.selectAlls = 0;
			const execCommand = document.execCommand.bind(document);
			document.execCommand = (command, ...rest) => {
				if (command === 'selectAll') window.selectAlls++;
				return execCommand(command, ...rest);
			};
		})()`);
		const tickets = [
			'Document cursor pagination',
			'Describe the listing endpoints',
			'Document cursor pagination',
			'Describe the listing endpoints',
			'Document cursor pagination',
			'Document cursor pagination for the listing endpoints',
		];
		const typed: string[] = [];
		for (const text of tickets) {
			await page.keyboard.press('Control+A');
			await page.keyboard.type(text);
			await page.waitForTimeout(150);
			typed.push(await ticket.inputValue());
		}
		assert.deepEqual(typed, tickets, 'what the editor holds after each Ctrl+A and retyping');
		assert.equal(await cardFrame.evaluate('window.selectAlls'), 0, "the workbench's select-alls after Ctrl+A");
		const ticketText = tickets.at(-1)!;
		await suggestion.waitFor({ timeout: 30_000 });
		// Its score as a share of the best suggestion's (a BM25 weight alone has no scale).
		assert.match(await suggestion.innerText(), /\b100%/);
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'launch-card-suggestions');
		await suggestion.locator('vscode-button', { hasText: 'Keep' }).click();
		await card.locator('.plug', { hasText: 'pagination-notes' }).waitFor();

		// The open repository as target, from the Assets view.
		await shop.click();
		await runCommand(page, 'Agent Desk: Plug into Launch Card as Target');
		const target = card.locator('.plug', { hasText: 'shop' });
		await target.waitFor({ timeout: 30_000 });
		assert.match(await target.innerText(), /target[\s\S]*go would freeze v2/i);
		// The agent Go would start is there (a program the desk does not know: its sign-in unknown).
		await card.locator('.agent.unknown', { hasText: 'scripted: ' }).waitFor({ timeout: 30_000 });
		// Ctrl+Enter in the ticket presses Go.
		await ticket.click();
		await page.keyboard.press('Control+Enter');
		await card.locator('.launched').waitFor({ timeout: 30_000 });
		// The routine confirmation, in the status bar with its rocket drawn as an icon (the ticket's
		// own text is escaped there, so only the desk's icon is drawn).
		const launched = statusMessage(page, 'Launched “');
		await launched.waitFor({ timeout: 30_000 });
		assert.equal(await launched.locator('.codicon-rocket').count(), 1, 'the rocket is an icon');
		assert.doesNotMatch(await launched.innerText(), /\$\(rocket\)/);
		await page.waitForTimeout(600);
		await screenshot(page, 'launch-card-go');

		// The run is in the Runs view, titled with the ticket as typed last; the launch is under "used in" of the kept asset.
		await page
			.getByRole('treeitem', { name: new RegExp(`^${ticketText}`) })
			.first()
			.waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: /^Run, / })
			.first()
			.waitFor({ timeout: 30_000 });
		const notesRow = page.getByRole('treeitem', { name: /^pagination-notes, / });
		await notesRow.click();
		// The repo's own "Used in" (it was the target) is above; the notes' is the last one.
		await waitFor(
			async () => (await page.getByRole('treeitem', { name: /^Used in 1 launch/ }).count()) === 2,
			30_000,
			'both "used in" nodes',
		);
		const usedIn = page.getByRole('treeitem', { name: /^Used in 1 launch/ }).last();
		await usedIn.click();
		await page.getByRole('treeitem', { name: /^Used in launch as reference at v1/ }).waitFor({ timeout: 30_000 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'launch-card-used-in');
	} finally {
		await screenshot(page, 'launch-card-final').catch(() => undefined);
		await close();
	}
});

it('tells before Go whether the agent can start: not installed with Go held back and its fixes; not signed in with its sign-in one click away; a run that never started kept out of the Runs view; signed in after the sign-in', async () => {
	const root = tempDir('desk-card-agent-e2e-');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	// The default agents: Claude Code (here a stand-in, not signed in; the workbench's login shell sets
	// its own PATH, so it is named by its path) and Codex (not installed), Codex chosen.
	const claude = path.join(fakeClaudeFolder(), 'claude');
	const agents = defaultAgents.map((a) => (a.name === 'claude' ? { ...a, command: claude } : a));
	const { page, close } = await openAgentDesk({
		folder: repo,
		libraryFolder: path.join(root, 'library'),
		settings: { 'agentDesk.agents': agents, 'agentDesk.runs.agent': 'codex' },
	});
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		await page.getByRole('treeitem', { name: /^shop, main asset/ }).waitFor({ timeout: 60_000 });
		await runCommand(page, 'Agent Desk: Open Launch Card');
		const card = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
		const agent = card.locator('.agent');

		// Codex: not installed; Go is held back, and the fixes are its install and another agent.
		await card.locator('.agent.missing').waitFor({ timeout: 30_000 });
		assert.match(await agent.innerText(), /codex: Codex is not installed/);
		assert.deepEqual(await agent.locator('vscode-button[appearance="secondary"]').allInnerTexts(), [
			'Install Codex',
			'Choose Another Agent',
		]);
		assert.equal(await card.locator('#go').getAttribute('disabled'), '', 'Go is held back');
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'launch-card-agent-missing');

		// Choose Another Agent opens the setting; claude chosen there, the card tells of it.
		await agent.locator('vscode-button', { hasText: 'Choose Another Agent' }).click();
		const setting = page.locator('.settings-editor .setting-item-contents input').first();
		await setting.waitFor({ timeout: 30_000 });
		await setting.fill('claude');
		await page.keyboard.press('Tab');
		await page.locator('.tab', { hasText: 'Launch Card — shop' }).click();
		await card.locator('.agent.signIn').waitFor({ timeout: 30_000 });
		assert.match(await agent.innerText(), /claude: Claude Code 2\.1\.3 is not signed in/);
		assert.match(await agent.innerText(), /no sign-in in ~\/\.claude\/\.credentials\.json/);
		assert.ok((await agent.innerText()).includes(`Opens a terminal running ${claude}: type /login in it`));
		const signIn = agent.locator('vscode-button', { hasText: 'Sign In to Claude Code' });
		await signIn.waitFor();
		const editor = card.locator('#ticket textarea');
		await editor.click();
		await page.keyboard.type('Add a changelog', { delay: 10 });
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(600);
		await screenshot(page, 'launch-card-agent-not-signed-in');

		// Go all the same: the run stops at once. The notification offers the sign-in first, the card
		// says the run never started (with Retry), and the Runs view leaves it out until asked.
		await card.locator('#go').click();
		const toast = page.locator('.notification-toast', { hasText: 'never started' });
		await toast.waitFor({ timeout: 60_000 });
		assert.match(
			await toast.innerText(),
			/Run ‘Add a changelog’ never started: agent claude stopped before doing anything \(.*Not logged in · Please run \/login.*\)/,
		);
		const buttons = await toast.locator('.monaco-button').allInnerTexts();
		assert.deepEqual(buttons.slice(0, 3), ['Sign In to Claude Code', 'Retry', 'Show Run']);
		await card.locator('.not-started', { hasText: 'never started' }).waitFor({ timeout: 30_000 });
		await card.locator('#retry-launched').waitFor();
		await page.waitForTimeout(800);
		await screenshot(page, 'launch-card-agent-never-started');
		const runRow = page.getByRole('treeitem', { name: /^Add a changelog/ });
		await runCommand(page, 'Agent Desk: Refresh Runs');
		await page.waitForTimeout(1_000);
		assert.equal(await runRow.count(), 0, 'the run that never started is not listed');
		await runCommand(page, 'Agent Desk: Show Runs That Never Started');
		await runRow.first().waitFor({ timeout: 30_000 });
		await runCommand(page, 'Agent Desk: Hide Runs That Never Started');
		await runCommand(page, 'Notifications: Clear All Notifications');

		// Sign In from the card: a terminal runs the sign-in and closes once it succeeded; the card looks again.
		await signIn.click();
		await card.locator('.agent.ready').waitFor({ timeout: 60_000 });
		assert.match(await agent.innerText(), /claude: Claude Code 2\.1\.3, signed in/);
		assert.match(await agent.innerText(), /with a Claude account \(~\/\.claude\/\.credentials\.json\)/);
		await page.mouse.move(1200, 700);
		await page.waitForTimeout(400);
		await screenshot(page, 'launch-card-agent-signed-in');
	} finally {
		await screenshot(page, 'launch-card-agent-final').catch(() => undefined);
		await close();
	}
});
