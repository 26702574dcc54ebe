import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Frame, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { makeRepo } from './gitRepo';
import { scriptedAgentSettings, type Scenario } from './scriptedAgent';
import { findProjectRoot, tempDir } from './temp';

/**
 * code-server (VS Code 1.100 in a browser) and Debian's Chromium driven by playwright-core: the
 * real workbench, with the real extension host, as ../shared/E2E.md describes.
 */

export const projectRoot = findProjectRoot();

/** Installs code-server when missing (scripts/ensure-code-server.sh) and returns its entry script. */
export function codeServerEntry(): string {
	const out = execFileSync('bash', [path.join(projectRoot, 'scripts', 'ensure-code-server.sh')], {
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	return out.trim().split('\n').pop()!;
}

export interface CodeServer {
	url: string;
	port: number;
	home: string;
	userDataDir: string;
	extensionsDir: string;
	stop(): Promise<void>;
}

export interface CodeServerOptions {
	folder: string;
	/** User settings written before start. */
	settings?: Record<string, unknown>;
	/** .vsix files installed into the extensions folder before start. */
	install?: string[];
	env?: NodeJS.ProcessEnv;
	/** false: workspace trust stays on, and the folder opens in Restricted Mode without a prompt. */
	trustAll?: boolean;
	/**
	 * false: the workbench's home has no git identity, as on a machine where git was never set up
	 * (a landing then asks for one); else it has the person's, as most have.
	 */
	gitIdentity?: boolean;
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
	const entry = codeServerEntry();
	const home = tempDir('desk-cs-');
	const userDataDir = path.join(home, 'user-data');
	const extensionsDir = path.join(home, 'extensions');
	fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
	fs.mkdirSync(extensionsDir, { recursive: true });
	fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
	fs.writeFileSync(path.join(home, 'config.yaml'), 'auth: none\ncert: false\n');
	if (options.gitIdentity !== false) {
		fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Test Person\n\temail = person@example.com\n');
	}
	fs.writeFileSync(
		path.join(userDataDir, 'User', 'settings.json'),
		JSON.stringify(
			{
				'workbench.startupEditor': 'none',
				'workbench.tips.enabled': false,
				'telemetry.telemetryLevel': 'off',
				'extensions.autoCheckUpdates': false,
				'extensions.autoUpdate': false,
				'update.mode': 'none',
				'git.enabled': false,
				'security.workspace.trust.startupPrompt': 'never',
				// A .ts file a test opens (a run's diff) would start TypeScript's project server and typings
				// installer: about 10 s of CPU a test, beside the other tests on CI's two cores, for
				// diagnostics no test reads. Its syntax server alone colours and folds the file as before.
				'typescript.tsserver.useSyntaxServer': 'always',
				'typescript.disableAutomaticTypeAcquisition': true,
				...options.settings,
			},
			null,
			2,
		),
	);
	const env: NodeJS.ProcessEnv = {
		...process.env,
		HOME: home,
		XDG_CONFIG_HOME: path.join(home, '.config'),
		XDG_DATA_HOME: path.join(home, '.local', 'share'),
		TMPDIR: path.join(home, 'tmp'),
		...options.env,
	};
	const common = ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];
	installExtensions(entry, options.install ?? [], extensionsDir, env);
	const port = await freePort();
	const log = fs.openSync(path.join(home, 'code-server.log'), 'a');
	const child: ChildProcess = spawn(
		process.execPath,
		[
			entry,
			'--config',
			path.join(home, 'config.yaml'),
			...common,
			'--auth',
			'none',
			'--bind-addr',
			`127.0.0.1:${port}`,
			'--disable-telemetry',
			'--disable-update-check',
			...(options.trustAll === false ? [] : ['--disable-workspace-trust']),
			'--disable-getting-started-override',
			options.folder,
		],
		{ env, detached: true, stdio: ['ignore', log, log] },
	);
	const url = `http://127.0.0.1:${port}`;
	const stop = async () => {
		if (child.exitCode === null && child.pid !== undefined) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			// The whole process group: a file watcher outlives a plain SIGTERM of the parent.
			killGroup(child.pid, 'SIGTERM');
			const timer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), 3_000);
			await exited;
			clearTimeout(timer);
			killGroup(child.pid, 'SIGKILL');
		}
		fs.closeSync(log);
	};
	try {
		await waitFor(async () => (await fetch(`${url}/healthz`)).ok, 30_000, 'code-server /healthz');
	} catch (error) {
		await stop();
		throw new Error(
			`${(error as Error).message}\n${fs.readFileSync(path.join(home, 'code-server.log'), 'utf8').slice(-4000)}`,
			{ cause: error },
		);
	}
	return { url, port, home, userDataDir, extensionsDir, stop };
}

/**
 * The .vsix files installed into `extensionsDir`. code-server's own install (a workbench process of its
 * own, seconds each) runs once per set of .vsix contents; later workbenches get a copy of its folder,
 * whose extensions.json is rewritten to name the copy.
 */
function installExtensions(
	entry: string,
	vsixes: readonly string[],
	extensionsDir: string,
	env: NodeJS.ProcessEnv,
): void {
	if (vsixes.length === 0) {
		return;
	}
	const key = createHash('sha256').update(entry);
	for (const vsix of vsixes) {
		key.update('\0').update(fs.readFileSync(vsix));
	}
	const cacheRoot = path.join(os.tmpdir(), 'agent-desk-e2e-extensions');
	const installed = path.join(cacheRoot, key.digest('hex').slice(0, 32));
	if (!fs.existsSync(path.join(installed, 'extensions.json'))) {
		fs.mkdirSync(cacheRoot, { recursive: true });
		const staging = fs.mkdtempSync(path.join(cacheRoot, 'installing-'));
		const into = path.join(staging, 'extensions');
		for (const vsix of vsixes) {
			execFileSync(
				process.execPath,
				[
					entry,
					'--user-data-dir',
					path.join(staging, 'user-data'),
					'--extensions-dir',
					into,
					'--install-extension',
					vsix,
				],
				{ env, stdio: ['ignore', 'ignore', 'inherit'] },
			);
		}
		const manifest = path.join(into, 'extensions.json');
		fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').split(into).join(installed));
		try {
			fs.renameSync(into, installed);
		} catch {
			// Another test file installed the same set meanwhile: theirs is as good.
		}
		fs.rmSync(staging, { recursive: true, force: true });
		// Each build packages a new .vsix: the installs of builds a day old go.
		for (const name of fs.readdirSync(cacheRoot)) {
			const older = path.join(cacheRoot, name);
			if (older !== installed && Date.now() - fs.statSync(older).mtimeMs > 86_400_000) {
				fs.rmSync(older, { recursive: true, force: true });
			}
		}
	}
	fs.cpSync(installed, extensionsDir, { recursive: true });
	const manifest = path.join(extensionsDir, 'extensions.json');
	fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').split(installed).join(extensionsDir));
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {
		// Already gone.
	}
}

export async function openBrowser(): Promise<BrowserContext> {
	const profile = tempDir('desk-chromium-');
	return chromium.launchPersistentContext(profile, {
		executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1400, height: 860 },
		// code-server gzips every response as it sends it (its workbench.js alone, 11 MB, costs it half
		// a second of CPU a load); over loopback the bytes as they are cost nothing to send.
		extraHTTPHeaders: { 'Accept-Encoding': 'identity' },
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
		env: { ...process.env, HOME: profile },
	});
}

/** Loads the workbench on `folder` and waits until it is there. */
export async function openWorkbench(
	page: Page,
	server: CodeServer,
	folder: string,
	payload?: Array<[string, string]>,
): Promise<void> {
	const query = new URLSearchParams({ folder });
	if (payload) {
		query.set('payload', JSON.stringify(payload));
	}
	await page.goto(`${server.url}/?${query.toString()}`);
	await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
}

/** `text` matched as it is in a pattern. */
export function literally(text: string): string {
	return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A routine confirmation of the extension: a status bar message for ten seconds, never a notification. */
export function statusMessage(page: Page, text: string): Locator {
	return page.locator('.statusbar-item', { hasText: text });
}

/**
 * Runs a command from the command palette by its whole title: the row whose label is exactly
 * `title` (the palette also lists titles that merely contain its words, sorted before it).
 */
export async function runCommand(page: Page, title: string): Promise<void> {
	const widget = page.locator('.quick-input-widget').first();
	const input = page.locator('.quick-input-widget input[type="text"]');
	// A palette opened while an earlier quick input is still closing can be closed with it (seen under
	// load, twice): wait for the earlier one to go, and open the palette again when it does not stay.
	for (let attempt = 1; ; attempt++) {
		await widget.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => undefined);
		await page.keyboard.press('F1');
		const timeout = attempt < 3 ? 5_000 : 30_000;
		try {
			await input.waitFor({ timeout });
			await input.fill(`>${title}`, { timeout });
			break;
		} catch (error) {
			if (attempt >= 3) {
				throw error;
			}
		}
	}
	const exact = new RegExp(`^${literally(title)}$`);
	const row = page
		.locator('.quick-input-list .monaco-list-row')
		.filter({ has: page.locator('.label-name', { hasText: exact }) })
		.first();
	await row.waitFor();
	await row.click();
}

/**
 * Runs a command that asks with a quick pick and returns the row of that pick holding `rowText`,
 * once it shows. Under load the pick has been seen closing the moment it opened (the row there but
 * hidden, its widget gone, nothing pressed): the command is run once more then, and the test log
 * says so, since a pick that closes every time is still a failure.
 */
export async function pickAfterCommand(
	page: Page,
	title: string,
	rowText: string,
	timeoutMs = 30_000,
): Promise<Locator> {
	const row = page.locator('.quick-input-list .monaco-list-row', { hasText: rowText }).first();
	const widget = page.locator('.quick-input-widget').first();
	for (let attempt = 1; ; attempt++) {
		await runCommand(page, title);
		const deadline = Date.now() + timeoutMs;
		let closedSince: number | undefined;
		for (;;) {
			if (await row.isVisible()) {
				return row;
			}
			// The palette closing and the pick opening leave the widget hidden for a moment: only a
			// widget hidden for a second and a half, with the pick's row in it, means the pick closed.
			const closed = (await row.count()) > 0 && !(await widget.isVisible());
			closedSince = closed ? (closedSince ?? Date.now()) : undefined;
			if (closedSince !== undefined && Date.now() - closedSince > 1_500 && attempt < 2) {
				console.log(`the quick pick of ${title} closed before it was used; running the command again`);
				await screenshot(page, `closed-pick-${attempt}`).catch(() => undefined);
				break;
			}
			if (Date.now() > deadline) {
				throw new Error(
					`timed out after ${timeoutMs} ms waiting for a row with ${rowText} in the quick pick of ${title}`,
				);
			}
			await page.waitForTimeout(200);
		}
	}
}

/**
 * Answers the input box the workbench shows (its title holding `title`) with `text`, or with what
 * it holds (as a person pressing Enter at once) when there is no `text`. Enter goes to the box's
 * input, focused first: a key sent to the page the moment the box showed was seen going elsewhere
 * under load, leaving the box open.
 */
export async function answerInput(page: Page, title: string, text?: string): Promise<void> {
	await page.locator('.quick-input-widget', { hasText: title }).waitFor({ timeout: 30_000 });
	const input = page.locator('.quick-input-widget input[type="text"]');
	if (text !== undefined) {
		await input.fill(text);
	}
	await input.press('Enter');
}

/** Opens the launch card and types `ticket` into its editor, as a person would; the card's frame and its editor. */
export async function typeTicket(page: Page, ticket: string): Promise<{ card: FrameLocator; editor: Locator }> {
	await runCommand(page, 'Agent Desk: Open Launch Card');
	const card = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
	const editor = card.locator('#ticket textarea');
	await editor.waitFor({ timeout: 30_000 });
	await editor.click();
	await page.keyboard.type(ticket, { delay: 10 });
	return { card, editor };
}

export const outputDir = path.join(projectRoot, 'test-output', 'e2e');

export async function screenshot(page: Page, name: string): Promise<string> {
	fs.mkdirSync(outputDir, { recursive: true });
	const file = path.join(outputDir, `${name}.png`);
	await page.screenshot({ path: file });
	return file;
}

/**
 * The walkthrough set (`walkthrough-N-….png`): a new user's path from the first open to a landed
 * commit, made of the screenshots the e2e tests take on that path, under names that read in order.
 */
export function walkthroughStep(file: string, step: string): void {
	fs.copyFileSync(file, path.join(outputDir, `walkthrough-${step}.png`));
}

export async function waitFor(
	check: () => Promise<boolean>,
	timeoutMs: number,
	what: string,
	intervalMs = 200,
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		try {
			if (await check()) {
				return;
			}
		} catch {
			// Not up yet.
		}
		if (Date.now() > deadline) {
			throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		}
		await new Promise((resolve) => setTimeout(resolve, intervalMs));
	}
}

function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as net.AddressInfo;
			server.close(() => resolve(port));
		});
	});
}

export interface DeskWorkbench {
	server: CodeServer;
	browser: BrowserContext;
	page: Page;
	/** Closes the browser and stops code-server. */
	close(): Promise<void>;
}

/** code-server on `options.folder`, a fresh Chromium, and the workbench loaded in it. */
export async function openDeskWorkbench(
	options: CodeServerOptions & {
		payload?: (server: CodeServer) => Array<[string, string]>;
		beforeLoad?: (page: Page) => Promise<void>;
	},
): Promise<DeskWorkbench> {
	const server = await startCodeServer(options);
	let browser: BrowserContext | undefined;
	try {
		browser = await openBrowser();
		const page = browser.pages()[0] ?? (await browser.newPage());
		await options.beforeLoad?.(page);
		await openWorkbench(page, server, options.folder, options.payload?.(server));
		const opened = browser;
		return {
			server,
			browser,
			page,
			async close() {
				await opened.close();
				await server.stop();
			},
		};
	} catch (error) {
		await browser?.close();
		await server.stop();
		throw error;
	}
}

/**
 * The workbench on `options.folder` with the packaged extension (out/agent-desk.vsix) installed and
 * its library in `libraryFolder`; other settings and .vsix files as `options` says.
 */
export function openAgentDesk(options: CodeServerOptions & { libraryFolder: string }): Promise<DeskWorkbench> {
	const { libraryFolder, ...rest } = options;
	return openDeskWorkbench({
		...rest,
		install: [path.join(projectRoot, 'out', 'agent-desk.vsix'), ...(options.install ?? [])],
		settings: { 'agentDesk.libraryFolder': libraryFolder, ...options.settings },
	});
}

/** The frame of the visible webview whose page shows `text` (webviews nest two iframes deep). */
export async function webviewWith(page: Page, text: string, timeoutMs = 30_000): Promise<Frame> {
	let found: Frame | undefined;
	await waitFor(
		async () => {
			for (const frame of page.frames()) {
				if (frame.name() === 'active-frame' || frame.url().includes('fake.html')) {
					const body = await frame
						.locator('body')
						.innerText({ timeout: 1_000 })
						.catch(() => '');
					if (body.includes(text)) {
						found = frame;
						return true;
					}
				}
			}
			return false;
		},
		timeoutMs,
		`a webview showing “${text}”`,
	);
	return found!;
}

/**
 * A small extension of the test's own, packaged as a .vsix (with the pinned vsce) for
 * `launchScriptedRun(..., { install })`: `files` are its files by relative path, package.json among them.
 */
export function packageExtension(files: Record<string, string>): string {
	const folder = tempDir('desk-ext-');
	for (const [name, content] of Object.entries(files)) {
		fs.mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
		fs.writeFileSync(path.join(folder, name), content);
	}
	const vsix = path.join(folder, 'extension.vsix');
	execFileSync(
		process.execPath,
		[
			path.join(projectRoot, 'node_modules', '@vscode', 'vsce', 'vsce'),
			'package',
			'--no-dependencies',
			'--allow-missing-repository',
			'--skip-license',
			'--out',
			vsix,
		],
		{ cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] },
	);
	return vsix;
}

export interface ScriptedRunBench {
	repo: string;
	page: Page;
	close(): Promise<void>;
}

/**
 * A git repo `shop` opened in the workbench whose one agent is the scripted agent playing `scenario`
 * (with `settings` besides); the ticket written on the launch card, and Go. Resolves once the
 * ticket's intent is in the Runs view.
 */
export async function launchScriptedRun(
	prefix: string,
	scenario: Scenario,
	ticket: string,
	settings: Record<string, unknown> = {},
	options: { install?: string[]; gitIdentity?: boolean; walkthrough?: boolean } = {},
): Promise<ScriptedRunBench> {
	const root = tempDir(prefix);
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	const bench = await openAgentDesk({
		folder: repo,
		libraryFolder: path.join(root, 'library'),
		install: options.install,
		...(options.gitIdentity === false ? { gitIdentity: false } : {}),
		settings: { 'agentDesk.agents': scriptedAgentSettings(scenario).agents, ...settings },
	});
	const { page } = bench;
	try {
		await page.getByRole('tab', { name: 'Agent Desk' }).click();
		await page.getByRole('treeitem', { name: /^shop, main asset/ }).waitFor({ timeout: 60_000 });
		if (options.walkthrough) {
			await page.mouse.move(1200, 700);
			walkthroughStep(await screenshot(page, `${prefix}first-open`), '1-first-open');
		}
		await runCommand(page, 'Agent Desk: Open Launch Card');
		const card = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
		const editor = card.locator('#ticket textarea');
		await editor.waitFor({ timeout: 30_000 });
		await card.locator('.run-with', { hasText: 'Go runs agent scripted in ' }).waitFor({ timeout: 30_000 });
		await editor.click();
		await page.keyboard.type(ticket, { delay: 5 });
		await page.waitForTimeout(500);
		if (options.walkthrough) {
			walkthroughStep(await screenshot(page, `${prefix}ticket`), '2-ticket');
		}
		await card.locator('#go').click();
		await card.locator('.launched').waitFor({ timeout: 30_000 });
		await page
			.getByRole('treeitem', { name: new RegExp(`^${ticket.split('\n')[0]}`) })
			.first()
			.waitFor({ timeout: 30_000 });
		return { repo, page, close: bench.close };
	} catch (error) {
		await screenshot(page, `${prefix}launch-failed`).catch(() => undefined);
		await bench.close();
		throw error;
	}
}

/**
 * Hovers `target` until the workbench shows its tooltip (the hover holding `text`) and returns that
 * hover. The mouse leaves first each time: a pointer already resting on the row makes no new hover,
 * and a loaded machine can miss the first one. Fails naming the text after four tries.
 */
export async function tooltipOf(page: Page, target: Locator, text: string): Promise<Locator> {
	const hover = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: text }).first();
	for (let attempt = 1; ; attempt++) {
		await page.mouse.move(2, 2);
		await page.waitForTimeout(200);
		await target.hover();
		try {
			await hover.waitFor({ timeout: 6_000 });
			return hover;
		} catch (error) {
			if (attempt === 4) {
				throw new Error(`no tooltip with "${text}" after ${attempt} hovers`, { cause: error });
			}
		}
	}
}
