import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { openDeskWorkbench, projectRoot } from '../helpers/codeServer';
import { commitFile, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

/**
 * Runs the mocha suite of test/extension inside code-server's extension host: the extension is
 * loaded from this checkout (extensionDevelopmentPath) and the suite from out/test/extension
 * (extensionTestsPath), both given in the page URL as E2E.md describes.
 */
it('the extension-host suite passes inside code-server', async (t) => {
	const suite = path.join(projectRoot, 'out', 'test', 'extension', 'index.js');
	assert.ok(fs.existsSync(path.join(projectRoot, 'dist', 'client.js')), 'build first');
	const root = tempDir('desk-exthost-');
	const repo = makeRepo(path.join(root, 'inventory'), { commits: 4 });
	// A folder too, so the suite sees a version expand folder by folder.
	commitFile(repo, 'src/stock/levels.ts', 'export const levels = new Map<string, number>();\n', 'stock levels');
	const report = path.join(root, 'report.json');
	let exitCode: Promise<number> | undefined;
	const remote = (port: number, p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
	const { close } = await openDeskWorkbench({
		folder: repo,
		settings: { 'agentDesk.libraryFolder': path.join(root, 'library') },
		env: { AGENT_DESK_TEST_REPORT: report },
		// Registered before the page loads: the workbench calls it when the suite ends.
		beforeLoad: async (page) => {
			let resolveExit!: (code: number) => void;
			exitCode = new Promise<number>((resolve) => (resolveExit = resolve));
			await page.exposeFunction('codeAutomationExit', (code: number) => resolveExit(code));
		},
		payload: (server) => [
			['extensionDevelopmentPath', remote(server.port, projectRoot)],
			['extensionTestsPath', remote(server.port, suite)],
		],
	});
	try {
		let timer: NodeJS.Timeout | undefined;
		const timeout = new Promise<number>(
			(_, reject) => (timer = setTimeout(() => reject(new Error('the suite did not finish in 180 s')), 180_000)),
		);
		const code = await Promise.race([exitCode!, timeout]).finally(() => clearTimeout(timer));
		assert.ok(fs.existsSync(report), 'the suite wrote no report');
		const { failures, results } = JSON.parse(fs.readFileSync(report, 'utf8')) as {
			failures: number;
			results: Array<{ title: string; state: string; error?: string }>;
		};
		for (const result of results) {
			t.diagnostic(
				`${result.state === 'passed' ? 'ok' : 'FAILED'} ${result.title}${result.error ? `\n${result.error}` : ''}`,
			);
		}
		assert.equal(
			failures,
			0,
			results
				.filter((r) => r.state === 'failed')
				.map((r) => `${r.title}: ${r.error}`)
				.join('\n'),
		);
		assert.ok(results.length >= 6, `only ${results.length} tests ran`);
		assert.equal(code, 0);
	} finally {
		await close();
	}
});
