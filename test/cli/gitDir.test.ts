import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { git, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

function errorOf(result: { stdout: string }): { code: string; message: string; data: Record<string, unknown> } {
	return (JSON.parse(result.stdout) as { error: { code: string; message: string; data: Record<string, unknown> } })
		.error;
}

describe('history refs as git names them', () => {
	it('refuses to export to or import from a ref git would refuse, naming it, and writes nothing', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const before = fs.readdirSync(path.join(repo, '.git')).sort();
		const objectsBefore = git(repo, 'count-objects', '-v');
		for (const ref of ['refs/../x', 'refs/desk/a..b', 'refs/desk/x.lock', 'refs/desk/a b', 'refs//desk']) {
			for (const verb of ['export', 'import']) {
				const result = desk('--store', store, '--repo', repo, 'history', verb, '--ref', ref, '--json');
				assert.equal(result.code, 2, `${verb} ${ref}: ${result.stdout}${result.stderr}`);
				const error = errorOf(result);
				assert.equal(error.code, 'git.badRef', `${verb} ${ref}`);
				assert.equal(error.data.ref, ref);
			}
		}
		assert.deepEqual(fs.readdirSync(path.join(repo, '.git')).sort(), before, 'nothing written beside refs/');
		assert.equal(git(repo, 'count-objects', '-v'), objectsBefore, 'no object written before the refusal');
		assert.equal(git(repo, 'for-each-ref', '--format=%(refname)'), 'refs/heads/main');
		const good = desk('--store', store, '--repo', repo, 'history', 'export', '--ref', 'refs/desk/other', '--json');
		assert.equal(good.code, 0, good.stderr);
	});
});

interface Adopted {
	asset: { id: string; working_dir: string };
}

/** Files only: a folder that looks like a project, whose `.git` is whatever the test plants. */
function plainFolder(dir: string): string {
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, 'README.md'), 'hello\n');
	return fs.realpathSync(dir);
}

function versionsOf(
	store: string,
	id: string,
): { code: number | null; commits: string[]; error?: { code: string; data: Record<string, unknown> } } {
	const result = desk('--store', store, 'asset', 'versions', id, '--json');
	if (result.code !== 0) {
		return { code: result.code, commits: [], error: errorOf(result) };
	}
	return { code: 0, commits: (JSON.parse(result.stdout) as Array<{ commit: string }>).map((v) => v.commit) };
}

describe('what is adopted: the git directory (CLI)', () => {
	it('refuses a .git file (absolute or relative gitdir:) or a .git link to another repository, naming where it leads; --allow-git-dir adopts it', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const other = makeRepo(path.join(root, 'private'), { commits: 4 });
		const otherGit = path.join(other, '.git');
		const shapes: Array<[string, (dir: string) => void]> = [
			['absolute gitdir file', (dir) => fs.writeFileSync(path.join(dir, '.git'), `gitdir: ${otherGit}\n`)],
			[
				'relative gitdir file',
				(dir) => fs.writeFileSync(path.join(dir, '.git'), `gitdir: ${path.relative(dir, otherGit)}\n`),
			],
			['link', (dir) => fs.symlinkSync(otherGit, path.join(dir, '.git'))],
		];
		for (const [shape, plant] of shapes) {
			const dir = plainFolder(path.join(root, shape.replace(/ /g, '-')));
			plant(dir);
			const refused = desk('--store', store, 'asset', 'import', '--dir', dir, '--project', 'p', '--json');
			assert.equal(refused.code, 2, `${shape}: ${refused.stdout}${refused.stderr}`);
			const error = errorOf(refused);
			assert.equal(error.code, 'git.foreignGitDir', shape);
			assert.equal(error.data.gitDir, otherGit, `${shape}: the refusal says where the git folder really is`);
			assert.match(error.message, new RegExp(otherGit.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
		}
		assert.deepEqual(JSON.parse(desk('--store', store, 'assets', 'list', '--json').stdout), [], 'nothing adopted');

		const dir = path.join(root, 'absolute-gitdir-file');
		const allowed = desk(
			'--store',
			store,
			'asset',
			'import',
			'--dir',
			dir,
			'--project',
			'p',
			'--allow-git-dir',
			'--json',
		);
		assert.equal(allowed.code, 0, allowed.stderr);
		const asset = (JSON.parse(allowed.stdout) as Adopted).asset;
		assert.deepEqual(
			versionsOf(store, asset.id).commits,
			git(other, 'log', '--reverse', '--format=%H').split('\n'),
			'allowed: read where the person said',
		);
	});

	it('a git folder that moves after adoption is refused with git.gitDirChanged: the other history never shows as versions', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const other = makeRepo(path.join(root, 'private'), { commits: 4 });
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const imported = desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main', '--json');
		assert.equal(imported.code, 0, imported.stderr);
		const id = (JSON.parse(imported.stdout) as Adopted).asset.id;
		assert.equal(versionsOf(store, id).commits.length, 2);
		fs.renameSync(path.join(repo, '.git'), path.join(root, 'shop-git'));
		fs.writeFileSync(path.join(repo, '.git'), `gitdir: ${path.join(other, '.git')}\n`);
		const after = versionsOf(store, id);
		assert.equal(after.code, 2, 'refused');
		assert.equal(after.error?.code, 'git.gitDirChanged');
		assert.deepEqual(
			[after.error?.data.adopted, after.error?.data.now],
			[path.join(repo, '.git'), path.join(other, '.git')],
		);
		const again = desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--json');
		assert.equal(errorOf(again).code, 'git.gitDirChanged', 'adopting again asks too');
	});

	it('adopts a real submodule (its git folder is in the superproject and names it back) but not a folder that borrows it', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const lib = makeRepo(path.join(root, 'lib'), { commits: 3 });
		const sup = makeRepo(path.join(root, 'super'), { commits: 1 });
		git(sup, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'vendor/lib');
		const sub = path.join(sup, 'vendor', 'lib');
		assert.equal(fs.statSync(path.join(sub, '.git')).isFile(), true, 'git made the submodule a .git file');
		const imported = desk('--store', store, 'asset', 'import', '--dir', sub, '--json');
		assert.equal(imported.code, 0, imported.stdout + imported.stderr);
		assert.deepEqual(
			versionsOf(store, (JSON.parse(imported.stdout) as Adopted).asset.id).commits,
			git(lib, 'log', '--reverse', '--format=%H').split('\n'),
		);

		const borrower = plainFolder(path.join(sup, 'borrower'));
		fs.writeFileSync(path.join(borrower, '.git'), 'gitdir: ../.git/modules/vendor/lib\n');
		const refused = desk('--store', store, 'asset', 'import', '--dir', borrower, '--json');
		assert.equal(errorOf(refused).code, 'git.foreignGitDir');
		assert.equal(errorOf(refused).data.gitDir, path.join(sup, '.git', 'modules', 'vendor', 'lib'));
	});

	it('a linked worktree alone asks (its repository is elsewhere); a folder planted to borrow a worktree folder is refused', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'main-repo'), { commits: 3 });
		git(repo, 'worktree', 'add', '-q', '-b', 'side', path.join(root, 'wt'), 'HEAD~1');
		const wt = fs.realpathSync(path.join(root, 'wt'));
		const refused = desk('--store', store, 'asset', 'import', '--dir', wt, '--json');
		assert.equal(errorOf(refused).code, 'git.foreignGitDir', refused.stdout);
		assert.equal(errorOf(refused).data.commonDir, path.join(repo, '.git'));
		const allowed = desk('--store', store, 'asset', 'import', '--dir', wt, '--allow-git-dir', '--json');
		assert.equal(allowed.code, 0, allowed.stderr);

		const borrower = plainFolder(path.join(root, 'borrower'));
		fs.writeFileSync(path.join(borrower, '.git'), `gitdir: ${path.join(repo, '.git', 'worktrees', 'wt')}\n`);
		const planted = desk('--store', store, 'asset', 'import', '--dir', borrower, '--json');
		assert.equal(errorOf(planted).code, 'git.foreignGitDir');
		assert.match(errorOf(planted).message, /belongs to another work tree/);
	});

	it('refuses a repository whose objects/info/alternates reads another repository', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const other = makeRepo(path.join(root, 'private'), { commits: 2 });
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		fs.writeFileSync(
			path.join(repo, '.git', 'objects', 'info', 'alternates'),
			`${path.join(other, '.git', 'objects')}\n`,
		);
		const refused = desk('--store', store, 'asset', 'import', '--dir', repo, '--json');
		assert.equal(refused.code, 2);
		assert.equal(errorOf(refused).code, 'git.foreignGitDir');
		assert.deepEqual(errorOf(refused).data.outside, [path.join(other, '.git', 'objects')]);
		assert.equal(
			desk('--store', store, 'asset', 'import', '--dir', repo, '--allow-git-dir', '--json').code,
			0,
			'the person may allow it',
		);

		// Alternates added after adoption are news too.
		const later = makeRepo(path.join(root, 'later'), { commits: 1 });
		const adopted = desk('--store', store, 'asset', 'import', '--dir', later, '--json');
		const id = (JSON.parse(adopted.stdout) as Adopted).asset.id;
		fs.writeFileSync(
			path.join(later, '.git', 'objects', 'info', 'alternates'),
			`${path.join(other, '.git', 'objects')}\n`,
		);
		assert.equal(versionsOf(store, id).error?.code, 'git.foreignGitDir');
	});

	it('refuses a .git folder whose objects and refs are links into another repository', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const other = makeRepo(path.join(root, 'private'), { commits: 2 });
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		for (const name of ['objects', 'refs']) {
			fs.rmSync(path.join(repo, '.git', name), { recursive: true });
			fs.symlinkSync(path.join(other, '.git', name), path.join(repo, '.git', name));
		}
		const refused = desk('--store', store, 'asset', 'import', '--dir', repo, '--json');
		assert.equal(refused.code, 2, refused.stdout);
		assert.equal(errorOf(refused).code, 'git.foreignGitDir');
		const outside = errorOf(refused).data.outside as string[];
		assert.ok(
			outside.includes(path.join(other, '.git', 'objects')) && outside.includes(path.join(other, '.git', 'refs')),
			outside.join(', '),
		);
	});

	it('refuses a project data folder (.desk) the repository planted as a link or a file, and writes nothing through it', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const elsewhere = path.join(root, 'elsewhere');
		fs.mkdirSync(elsewhere);
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		fs.symlinkSync(elsewhere, path.join(repo, '.desk'));
		assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
		const listed = desk('--store', store, '--repo', repo, 'runs', 'list', '--json');
		assert.equal(listed.code, 2, listed.stdout + listed.stderr);
		assert.equal(errorOf(listed).code, 'project.unsafeDataFolder');
		assert.equal(errorOf(listed).data.path, path.join(repo, '.desk'));
		assert.deepEqual(fs.readdirSync(elsewhere), [], 'nothing written where the link leads');

		fs.unlinkSync(path.join(repo, '.desk'));
		fs.writeFileSync(path.join(repo, '.desk'), 'x');
		assert.equal(
			errorOf(desk('--store', store, '--repo', repo, 'runs', 'list', '--json')).code,
			'project.unsafeDataFolder',
		);
		fs.unlinkSync(path.join(repo, '.desk'));
		fs.mkdirSync(path.join(repo, '.desk'));
		fs.symlinkSync(path.join(elsewhere, 'db'), path.join(repo, '.desk', 'project.db'));
		assert.equal(
			errorOf(desk('--store', store, '--repo', repo, 'runs', 'list', '--json')).code,
			'project.unsafeDataFolder',
		);
		fs.unlinkSync(path.join(repo, '.desk', 'project.db'));
		fs.symlinkSync(path.join(elsewhere, 'journal'), path.join(repo, '.desk', 'project.db.journal'));
		const journal = desk('--store', store, '--repo', repo, 'runs', 'list', '--json');
		assert.equal(errorOf(journal).code, 'project.unsafeDataFolder', 'a link beside the database too');
		assert.equal(errorOf(journal).data.path, path.join(repo, '.desk', 'project.db.journal'));
		assert.deepEqual(fs.readdirSync(elsewhere), []);
	});
});

describe('landing goes only into the adopted git directory', () => {
	function project(): { root: string; store: string; repo: string; other: string } {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		fs.writeFileSync(path.join(repo, 'price.txt'), '10\n');
		git(repo, 'add', 'price.txt');
		git(repo, 'commit', '-q', '-m', 'price');
		// Another repository with the same history: the one a planted .git would lead to.
		const other = path.join(root, 'other');
		spawnSync('git', ['clone', '-q', repo, other], {
			env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
		});
		assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
		return { root, store, repo, other };
	}

	function state(repo: string): string {
		return `${git(repo, 'for-each-ref', '--format=%(refname) %(objectname)')}\n${git(repo, 'rev-parse', 'HEAD')}\n${git(repo, 'count-objects', '-v')}`;
	}

	it('a .git swapped for a file naming another repository while a run waits at the gate: landing is refused, nothing commits there', () => {
		const { root, store, repo, other } = project();
		const settingsFile = path.join(root, 'settings.json');
		fs.writeFileSync(
			settingsFile,
			JSON.stringify(scriptedAgentSettings({ writes: [{ path: 'price.txt', content: '12\n' }] })),
		);
		assert.equal(desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Raise the price').code, 0);
		const went = desk('--store', store, 'run', 'go', 'shop', '--settings', settingsFile, '--json');
		assert.equal(went.code, 0, went.stderr);
		const runId = (JSON.parse(went.stdout) as { run: { object_id: string } }).run.object_id;
		const before = state(other);
		fs.renameSync(path.join(repo, '.git'), path.join(root, 'shop-git'));
		fs.writeFileSync(path.join(repo, '.git'), `gitdir: ${path.join(other, '.git')}\n`);
		const landed = desk('--store', store, 'run', 'decide', runId, '--repo', repo, '--decision', 'commit', '--json');
		assert.equal(state(other), before, 'the other repository is untouched');
		assert.equal(landed.code, 2, landed.stdout + landed.stderr);
		assert.equal(errorOf(landed).code, 'git.gitDirChanged');
	});

	it("an agent that rewrites its worktree's .git to name another repository: the desk runs no git there", () => {
		const { root, store, other } = project();
		const settingsFile = path.join(root, 'settings.json');
		fs.writeFileSync(
			settingsFile,
			JSON.stringify(
				scriptedAgentSettings(
					{
						writes: [
							{ path: 'price.txt', content: '12\n' },
							{ path: '.git', content: `gitdir: ${path.join(other, '.git')}\n` },
						],
					},
					{ isolation: 'worktree' },
				),
			),
		);
		assert.equal(desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Raise the price').code, 0);
		const before = state(other);
		const went = desk('--store', store, 'run', 'go', 'shop', '--settings', settingsFile, '--json');
		assert.equal(state(other), before, 'no object, ref or index written into the other repository');
		assert.match(went.stdout + went.stderr, /git\.foreignGitDir|not a worktree of the repository/);
	});
});
