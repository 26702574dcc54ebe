/**
 * Runs inside the real extension host, with the workspace folder a git repository made by the
 * harness (test/e2e/extensionHost.test.ts, or scripts/test-electron.mjs).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { AgentDeskApi } from '../../client/src/extension';
import { runSettings } from '../../client/src/runs/runSettings';
import {
	defaultAgents,
	defaultLineageSettings,
	defaultRunSettings,
	parseRunSettings,
} from '../../server/src/runs/settings';

const extensionId = 'agent-desk.agent-desk';

function gitOut(cwd: string, ...args: string[]): string {
	return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

describe('Agent Desk in the extension host', () => {
	let api: AgentDeskApi;
	let folder: vscode.WorkspaceFolder;

	before(async () => {
		const extension = vscode.extensions.getExtension<AgentDeskApi>(extensionId);
		assert.ok(extension, `${extensionId} is not installed`);
		api = await extension.activate();
		assert.equal(await api.whenSettled(), 'ready');
		folder = vscode.workspace.workspaceFolders![0]!;
	});

	it('adopts the workspace repository as its project main asset (desk boot)', () => {
		const [outcome] = api.folders();
		assert.ok(outcome?.outcome === 'adopted', JSON.stringify(outcome));
		const top = fs.realpathSync(folder.uri.fsPath);
		assert.equal(outcome.asset.working_dir, top);
		assert.equal(outcome.asset.engine, 'git');
		assert.equal(outcome.asset.kind, 'code');
		assert.equal(outcome.asset.created_by, `desk boot: project ${outcome.project.name}'s repo`);
		assert.equal(outcome.project.main_asset, outcome.asset.id);
	});

	it('shows it first in the Assets view with the first-parent commit count of its branch', async () => {
		const [outcome] = api.folders();
		assert.ok(outcome?.outcome === 'adopted');
		const expected = Number(
			gitOut(outcome.asset.working_dir, 'rev-list', '--first-parent', '--count', outcome.asset.branch),
		);
		const nodes = await api.assets.getChildren();
		const first = nodes[0];
		assert.ok(first?.type === 'asset', JSON.stringify(nodes));
		const item = api.assets.getTreeItem(first);
		assert.equal(item.label, outcome.asset.name);
		assert.match(
			String(item.description),
			new RegExp(`^main asset · ${expected} versions? · git ${outcome.asset.branch} · code$`),
		);
		assert.match(item.accessibilityInformation?.label ?? '', /main asset/);
	});

	it('expands the asset to its versions, newest first, with the commits of git log --first-parent', async () => {
		const [asset] = await api.assets.getChildren();
		assert.ok(asset?.type === 'asset');
		const versions = await api.assets.getChildren(asset);
		const commits = gitOut(asset.asset.working_dir, 'log', '--first-parent', '--format=%H', asset.asset.branch).split(
			'\n',
		);
		assert.deepEqual(
			versions.map((v) => (v.type === 'version' && v.version.engine === 'git' ? v.version.commit : v.type)),
			commits,
		);
		const newest = versions[0];
		assert.ok(newest?.type === 'version');
		assert.equal(newest.version.version, commits.length);
	});

	it('expands a version a folder at a time, as git ls-tree lists it, and opens its files through desk-asset: URIs', async () => {
		const [asset] = await api.assets.getChildren();
		assert.ok(asset?.type === 'asset');
		const [newest] = await api.assets.getChildren(asset);
		assert.ok(newest?.type === 'version' && newest.version.engine === 'git');
		const commit = newest.version.commit;
		const top = await api.assets.getChildren(newest);
		const listed = gitOut(asset.asset.working_dir, 'ls-tree', commit)
			.split('\n')
			.map((line) => line.split(/\s+/))
			.filter(([mode]) => mode !== '120000' && mode !== '160000');
		const labels = top.map((node) => `${node.type} ${String(api.assets.getTreeItem(node).label)}`);
		const expectedFolders = listed.filter(([, type]) => type === 'tree').map((l) => `folder ${l.slice(3).join(' ')}`);
		const expectedFiles = listed.filter(([, type]) => type === 'blob').map((l) => `file ${l.slice(3).join(' ')}`);
		assert.deepEqual([...labels].sort(), [...expectedFolders, ...expectedFiles].sort());
		assert.ok(
			labels.slice(0, expectedFolders.length).every((l) => l.startsWith('folder ')),
			'folders come first',
		);

		const file = top.find((node) => node.type === 'file');
		assert.ok(file?.type === 'file');
		const fileItem = api.assets.getTreeItem(file);
		const uri = fileItem.resourceUri!;
		// A click runs the view's row command, which takes no arguments: VS Code caches a row's command
		// with arguments only until the next refresh, and a click on a row drawn before it failed
		// ("Actual command not found"). The row's own command is found from the selection.
		assert.deepEqual(fileItem.command, { command: 'agentDesk.assets.openRow', title: 'Open File at Version' });
		assert.equal(api.assets.commandOfRow(file)?.command, 'agentDesk.openFileAtVersion');
		assert.deepEqual(api.assets.commandOfRow(file)?.arguments, [file]);
		assert.equal(uri.scheme, 'desk-asset');
		const bytes = await vscode.workspace.fs.readFile(uri);
		assert.ok(
			Buffer.from(bytes).equals(
				execFileSync('git', ['show', `${commit}:${file.file.path}`], { cwd: asset.asset.working_dir }),
			),
			'the bytes git has',
		);
		assert.equal((await vscode.workspace.fs.stat(uri)).type, vscode.FileType.File);
		const root = uri.with({ path: uri.path.slice(0, uri.path.lastIndexOf('/')) });
		const entries = await vscode.workspace.fs.readDirectory(root);
		assert.equal(entries.length, expectedFolders.length + expectedFiles.length);
		await assert.rejects(
			Promise.resolve(vscode.workspace.fs.stat(uri.with({ path: `${uri.path}.missing` }))),
			(e: unknown) => e instanceof vscode.FileSystemError,
		);
	});

	it('reads again what a branch rewrite renumbered: an open desk-asset: editor shows the version’s new commit', async () => {
		const [asset] = await api.assets.getChildren();
		assert.ok(asset?.type === 'asset');
		const dir = asset.asset.working_dir;
		const [newest] = await api.assets.getChildren(asset);
		assert.ok(newest?.type === 'version' && newest.version.engine === 'git');
		const file = (await api.assets.getChildren(newest)).find((node) => node.type === 'file');
		assert.ok(file?.type === 'file');
		const uri = api.assets.getTreeItem(file).resourceUri!;
		const oldTip = gitOut(dir, 'rev-parse', 'HEAD');
		const before = execFileSync('git', ['show', `HEAD:${file.file.path}`], { cwd: dir, encoding: 'utf8' });
		const document = await vscode.workspace.openTextDocument(uri);
		assert.equal(document.getText(), before);
		const after = `rewritten\n${before}`;
		try {
			// The newest commit amended: the same number of versions, the newest naming another commit.
			fs.writeFileSync(`${dir}/${file.file.path}`, after);
			execFileSync(
				'git',
				['-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '-qa', '--amend', '--no-edit'],
				{ cwd: dir },
			);
			// The next read of the history finds the rewrite (the view's next listing does it).
			await api.assets.getChildren(asset);
			const deadline = Date.now() + 15_000;
			while (document.getText() !== after && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
			assert.equal(document.getText(), after, 'the open editor read the version again');
		} finally {
			execFileSync('git', ['reset', '-q', '--hard', oldTip], { cwd: dir });
			await api.assets.getChildren(asset);
		}
	});

	it('registers every command it contributes', async () => {
		const contributed = (
			vscode.extensions.getExtension(extensionId)!.packageJSON as {
				contributes: { commands: Array<{ command: string }> };
			}
		).contributes.commands.map((c) => c.command);
		const registered = new Set(await vscode.commands.getCommands(true));
		for (const command of contributed) {
			assert.ok(registered.has(command), `${command} is contributed but not registered`);
		}
	});

	it("contributes the desk's default run settings as the defaults of its settings", () => {
		const config = vscode.workspace.getConfiguration('agentDesk');
		assert.deepEqual(config.inspect('agents')?.defaultValue, defaultAgents);
		assert.equal(config.inspect('runs.isolation')?.defaultValue, defaultRunSettings.isolation);
		assert.equal(config.inspect('runs.maxAttempts')?.defaultValue, defaultRunSettings.maxAttempts);
		assert.equal(config.inspect('runs.sandbox')?.defaultValue, defaultRunSettings.sandbox);
		assert.deepEqual(config.inspect('checks')?.defaultValue, defaultRunSettings.checks);
	});

	it("contributes the desk's lineage limits as the defaults of its settings, and sends them under the settings' lineage key", () => {
		const config = vscode.workspace.getConfiguration('agentDesk');
		assert.deepEqual(config.inspect('lineage.limits')?.defaultValue, defaultLineageSettings.limits);
		assert.deepEqual(config.inspect('lineage.branch')?.defaultValue, defaultLineageSettings.branch);
		assert.equal(config.inspect('lineage.memorizeOnLanding')?.defaultValue, defaultLineageSettings.memorizeOnLanding);
		// What Go, Retry and Branch from Here… send by default is what the desk takes as its defaults.
		assert.deepEqual(parseRunSettings(runSettings(folder.uri.fsPath)).lineage, defaultLineageSettings);
	});

	it('lists the main root in the Memory view, with no memory yet and the row that says what Remember… does', async () => {
		const [main] = await api.memory.getChildren();
		assert.ok(main?.type === 'memoryRoot' && main.root.name === 'main', JSON.stringify(main));
		const item = api.memory.getTreeItem(main);
		assert.equal(item.description, 'no memory yet');
		assert.equal(item.contextValue, 'memoryRoot.none');
		const [empty] = await api.memory.getChildren(main);
		assert.equal(empty?.type, 'memoryEmpty');
		assert.equal(api.memory.commandOfRow(empty!)?.command, 'agentDesk.remember');
	});

	it('reports the library folder it uses and its server process', async () => {
		const status = await api.status();
		assert.equal(status.state, 'ready');
		const configured = vscode.workspace.getConfiguration('agentDesk').get<string>('libraryFolder');
		if (configured) {
			assert.equal(status.libraryDir, configured);
		}
		assert.notEqual(status.pid, process.pid, 'the desk server runs in its own process');
		assert.ok(fs.existsSync(`${status.libraryDir}/library.db`));
	});

	it('finds the same record after a server restart instead of adopting again', async () => {
		const [before] = api.folders();
		assert.ok(before?.outcome === 'adopted');
		const oldPid = (await api.status()).pid;
		await vscode.commands.executeCommand('agentDesk.restartServer');
		assert.equal(await api.whenSettled(), 'ready');
		const [after] = api.folders();
		assert.ok(after?.outcome === 'adopted');
		assert.equal(after.created, false);
		assert.equal(after.asset.id, before.asset.id);
		assert.notEqual((await api.status()).pid, oldPid, 'a new server process');
	});

	it('starts a new server at once when its process dies, and tells the person with a notice', async () => {
		const oldPid = (await api.status()).pid;
		const told = api.serverRestarts().length;
		process.kill(oldPid, 'SIGKILL');
		// Bounded wait for the client to notice the exit (not a timed assertion: the count is what is checked).
		for (let i = 0; i < 300 && api.serverRestarts().length === told; i++) {
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
		assert.equal(api.serverRestarts().length, told + 1, 'the person was told');
		assert.match(api.serverRestarts()[told]!, /stopped unexpectedly; a new one was started/);
		assert.equal(await api.whenSettled(), 'ready');
		const status = await api.status();
		assert.equal(status.state, 'ready');
		assert.notEqual(status.pid, oldPid, 'a new server process');
		assert.ok(api.folders()[0]?.outcome === 'adopted', 'the workspace was booted again');
	});
});
