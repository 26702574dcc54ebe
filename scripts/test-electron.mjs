// Runs the extension-host suite (test/extension) in desktop VS Code downloaded by
// @vscode/test-electron, on a temp git repository. It needs a machine that can download VS Code;
// on machines that cannot, the same suite runs inside code-server as part of `npm test`.
//   npm run build && npm run test:electron
import { runTests } from '@vscode/test-electron';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const temp = realpathSync(mkdtempSync(join(tmpdir(), 'desk-electron-')));
const repo = join(temp, 'sample');
mkdirSync(repo);
const git = (...args) =>
	execFileSync('git', args, {
		cwd: repo,
		stdio: 'ignore',
		env: {
			...process.env,
			GIT_AUTHOR_NAME: 't',
			GIT_AUTHOR_EMAIL: 't@example.com',
			GIT_COMMITTER_NAME: 't',
			GIT_COMMITTER_EMAIL: 't@example.com',
		},
	});
git('init', '-q', '-b', 'main');
for (let i = 1; i <= 3; i++) {
	writeFileSync(join(repo, `file${i}.txt`), `${i}\n`);
	git('add', '.');
	git('commit', '-q', '-m', `commit ${i}`);
}
const userData = join(temp, 'user-data');
mkdirSync(join(userData, 'User'), { recursive: true });
writeFileSync(
	join(userData, 'User', 'settings.json'),
	JSON.stringify({ 'agentDesk.libraryFolder': join(temp, 'library') }),
);

try {
	await runTests({
		extensionDevelopmentPath: root,
		extensionTestsPath: join(root, 'out', 'test', 'extension', 'index.js'),
		launchArgs: [repo, '--disable-extensions', '--disable-workspace-trust', '--user-data-dir', userData],
	});
} catch (error) {
	console.error(`extension-host tests failed: ${error}`);
	process.exit(1);
}
