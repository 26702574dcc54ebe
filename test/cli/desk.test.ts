import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { AssetRecord, AssetSummary, GitVersion, ProjectRecord } from '../../server/src/assets/types';
import { commitAll, commitSubmodule, git, makeRepo } from '../helpers/gitRepo';
import { openDesk } from '../helpers/deskFixture';
import { tempDir } from '../helpers/temp';
import { completeChain } from '../unit/ai/chain';
import { desk, deskJs } from '../helpers/deskCli';
import { personLabel } from '../../server/src/operations/actor';
import { personIdentity } from '../../server/src/operations/identity';

/** `desk --store STORE … --json`, which must succeed, parsed. */
function jsonOf(store: string) {
	return <T>(...args: string[]): T => {
		const result = desk('--store', store, ...args, '--json');
		assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
		return JSON.parse(result.stdout) as T;
	};
}

describe('the desk command line', () => {
	it('imports a repository top into a new project as its main asset, lists it and its versions as JSON', async () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'billing'), { commits: 3 });
		git(repo, 'remote', 'add', 'origin', 'https://example.com/billing.git');

		const imported = desk(
			'--store',
			store,
			'asset',
			'import',
			'--dir',
			repo,
			'--project',
			'payments',
			'--main',
			'--json',
		);
		assert.equal(imported.code, 0, imported.stderr);
		const result = JSON.parse(imported.stdout) as { asset: AssetRecord; created: boolean; project: ProjectRecord };
		assert.equal(result.created, true);
		assert.deepEqual(
			Object.keys(result.asset).sort(),
			[
				'about',
				'about_model_written',
				'branch',
				'checks',
				'created_at',
				'created_by',
				'derived_from',
				'derived_from_version',
				'engine',
				'id',
				'kind',
				'name',
				'notes',
				'picked_version',
				'remote',
				'retired',
				'tags',
				'url',
				'working_dir',
			].sort(),
		);
		assert.deepEqual(
			{
				name: result.asset.name,
				engine: result.asset.engine,
				kind: result.asset.kind,
				branch: result.asset.branch,
				remote: result.asset.remote,
				by: result.asset.created_by,
			},
			{
				name: 'billing',
				engine: 'git',
				kind: 'code',
				branch: 'main',
				remote: 'https://example.com/billing.git',
				// Made by the person at the command line: their git identity, through `desk`.
				by: `${personLabel(await personIdentity())} (desk)`,
			},
		);
		assert.equal(result.project?.name, 'payments');
		assert.equal(result.project?.main_asset, result.asset.id);

		const again = desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'payments', '--json');
		assert.equal(
			(JSON.parse(again.stdout) as { created: boolean; asset: AssetRecord }).asset.id,
			result.asset.id,
			'the same checkout and remote: the record already there',
		);

		const listed = desk('--store', store, 'assets', 'list', '--json');
		assert.equal(listed.code, 0, listed.stderr);
		const assets = JSON.parse(listed.stdout) as AssetSummary[];
		assert.equal(assets.length, 1);
		assert.equal(assets[0]?.version_count, 3);
		assert.deepEqual(assets[0]?.projects, [{ name: 'payments', main: true }]);

		const versions = desk('--store', store, 'asset', 'versions', result.asset.id, '--json');
		assert.equal(versions.code, 0, versions.stderr);
		const list = JSON.parse(versions.stdout) as GitVersion[];
		assert.deepEqual(
			list.map((v) => v.version),
			[1, 2, 3],
		);
		assert.deepEqual(
			list.map((v) => v.commit),
			git(repo, 'log', '--first-parent', '--reverse', '--format=%H').split('\n'),
		);
		assert.deepEqual(Object.keys(list[0]!).sort(), ['commit', 'engine', 'made_at', 'made_by', 'subject', 'version']);

		const human = desk('--store', store, 'assets', 'list');
		assert.match(human.stdout, /billing \(main\)\s+code\s+git main 3 versions/);
	});

	it('prints a refusal as JSON with its code and exits 2, changing nothing', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const refused = desk(
			'--store',
			store,
			'asset',
			'import',
			'--dir',
			path.join(root, 'missing'),
			'--project',
			'p',
			'--json',
		);
		assert.equal(refused.code, 2);
		assert.equal((JSON.parse(refused.stdout) as { error: { code: string } }).error.code, 'import.notADirectory');
		assert.match(refused.stderr, /is not a folder/);
		const listed = desk('--store', store, 'assets', 'list', '--json');
		assert.deepEqual(JSON.parse(listed.stdout), []);
		const unknown = desk('--store', store, 'asset', 'versions', 'a-0123456789abcdef', '--json');
		assert.equal(unknown.code, 2);
		assert.equal((JSON.parse(unknown.stdout) as { error: { code: string } }).error.code, 'asset.notFound');
	});

	it('gives a project made without a repository the one --main imports, by folder or by id, so its card is found', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const json = jsonOf(store);
		const notes = path.join(root, 'notes');
		fs.mkdirSync(notes);
		fs.writeFileSync(path.join(notes, 'a.md'), 'notes\n');
		json('asset', 'import', '--dir', notes, '--project', 'shop');
		json('asset', 'import', '--dir', notes, '--project', 'billing');
		const shop = makeRepo(path.join(root, 'shop'));
		const billing = makeRepo(path.join(root, 'billing'));
		const billingAsset = json<{ asset: AssetRecord }>('asset', 'import', '--dir', billing).asset;
		assert.equal(desk('--store', store, 'card', 'show', '--project', 'shop').code, 2, 'no repository yet');

		json('asset', 'import', '--dir', shop, '--project', 'shop', '--main');
		json('asset', 'import', '--asset', billingAsset.id, '--project', 'billing', '--main');
		for (const [project, repo] of [
			['shop', shop],
			['billing', billing],
		] as const) {
			const byName = desk('--store', store, 'card', 'show', '--project', project);
			assert.equal(byName.code, 0, `${project}: ${byName.stderr}`);
			assert.equal(desk('--store', store, 'card', 'show', '--repo', repo).code, 0, `${project} by its repository`);
		}
		const taken = desk('--store', store, 'asset', 'import', '--dir', shop, '--project', 'other', '--main', '--json');
		assert.equal(taken.code, 2);
		assert.equal((JSON.parse(taken.stdout) as { error: { code: string } }).error.code, 'project.repositoryTaken');
	});

	it('answers bad usage with the usage text and exit code 64', () => {
		assert.equal(desk('assets', 'list').code, 64, 'no store given');
		const unknownCommand = desk('--store', tempDir(), 'assets', 'explode');
		assert.equal(unknownCommand.code, 64);
		assert.match(unknownCommand.stderr, /Usage: desk/);
		assert.equal(desk('--store', tempDir(), '--bogus').code, 64);
		assert.equal(
			desk('--store', tempDir(), 'asset', 'import', '--new', 'x', '--asset', 'a-0123456789abcdef').code,
			64,
			'one source only',
		);
	});
});

describe('the desk command line over git assets', () => {
	it('lists symbolic links and submodules as git ls-tree -r does, with their kinds; the file count agrees; cat reads a link as its target and a submodule as its commit', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		fs.writeFileSync(path.join(repo, 'build.sh'), '#!/bin/sh\n', { mode: 0o755 });
		fs.mkdirSync(path.join(repo, 'docs'));
		fs.writeFileSync(path.join(repo, 'docs', 'guide.md'), '# Guide\n');
		fs.symlinkSync('docs/guide.md', path.join(repo, 'README.md'));
		const pinned = commitAll(repo, 'a script, a guide and a link to it');
		commitSubmodule(repo, 'vendor/lib', pinned, 'vendor/lib as a submodule');
		const json = jsonOf(store);
		const { asset } = json<{ asset: AssetRecord }>('asset', 'import', '--dir', repo, '--project', 'shop', '--main');

		const lsTree = git(repo, 'ls-tree', '-r', '--name-only', 'HEAD').split('\n');
		const { files } = json<{ files: Array<{ path: string; kind: string; target?: string; hash: string }> }>(
			'asset',
			'files',
			asset.id,
		);
		assert.deepEqual(
			files.map((f) => f.path),
			lsTree,
		);
		assert.deepEqual(
			files.map((f) => [f.path, f.kind, f.target]),
			[
				['README.md', 'symlink', 'docs/guide.md'],
				['build.sh', 'executable', undefined],
				['docs/guide.md', 'file', undefined],
				['file1.txt', 'file', undefined],
				['vendor/lib', 'submodule', undefined],
			],
		);
		assert.equal(files.find((f) => f.kind === 'submodule')?.hash, pinned);
		const [summary] = json<AssetSummary[]>('assets', 'list');
		assert.equal(summary?.file_count, files.length, "the asset's file count is the listing's");

		const human = desk('--store', store, 'asset', 'files', asset.id);
		assert.equal(human.code, 0, human.stderr);
		const lines = human.stdout.split('\n').map((l) => l.trim());
		assert.ok(lines.includes('-  README.md -> docs/guide.md'), human.stdout);
		assert.ok(lines.includes('-  build.sh  (executable)'), human.stdout);
		assert.ok(lines.includes('-  docs/guide.md'), human.stdout);
		assert.ok(lines.includes(`-  vendor/lib  (submodule @ ${pinned.slice(0, 7)})`), human.stdout);

		assert.equal(desk('--store', store, 'asset', 'cat', asset.id, 'README.md').stdout, 'docs/guide.md');
		assert.equal(desk('--store', store, 'asset', 'cat', asset.id, 'vendor/lib').stdout, `${pinned}\n`);
		const folder = desk('--store', store, 'asset', 'cat', asset.id, 'docs');
		assert.equal(folder.code, 2, 'a folder is not read');
		assert.match(folder.stderr, /asset\.fileNotFound|is not in/);
	});

	it('stops printing quietly when the reader goes away (desk asset versions ID | head): exit 0, nothing on stderr', async () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		// 8,000 versions: over half a megabyte of text and two of JSON, far more than a pipe holds.
		const repo = makeRepo(path.join(root, 'shop'), { commits: 8000, oneFile: true });
		const json = jsonOf(store);
		const { asset } = json<{ asset: AssetRecord }>('asset', 'import', '--dir', repo, '--project', 'shop', '--main');
		for (const format of [[], ['--json']]) {
			const child = spawn(process.execPath, [deskJs, '--store', store, 'asset', 'versions', asset.id, ...format], {
				env: { ...process.env, DESK_STORE: '' },
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			let stderr = '';
			child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
			// What `head` does once it has its lines: it closes its end of the pipe, reading nothing more.
			// (Read as 'readable' asks, so no more than a buffer's worth is taken from the pipe first.)
			const first = await new Promise<string>((resolve) =>
				child.stdout.once('readable', () => {
					const chunk = child.stdout.read() as Buffer;
					child.stdout.destroy();
					resolve(chunk.toString('utf8'));
				}),
			);
			assert.match(first, format.length ? /^\[\n {2}\{/ : /^v1 /, 'the listing began');
			const [code] = (await once(child, 'close')) as [number | null];
			assert.equal(stderr, '', `${format.join(' ') || 'text'}: nothing on stderr`);
			assert.equal(code, 0, `${format.join(' ') || 'text'}: the command ends as it would have`);
		}
	});
});

describe('the desk command line over snapshot assets', () => {
	it('makes a new skill whose v1 is its SKILL.md (asset import --new NAME --skill DESCRIPTION)', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const json = jsonOf(store);
		const skill = json<{ asset: AssetRecord }>(
			'asset',
			'import',
			'--new',
			'sql-review',
			'--skill',
			'Reviews SQL: use it on migrations',
		);
		assert.deepEqual([skill.asset.kind, skill.asset.about], ['skill', 'Reviews SQL: use it on migrations']);
		assert.match(desk('--store', store, 'asset', 'cat', skill.asset.id, 'SKILL.md').stdout, /^---\nname: sql-review\n/);
		assert.equal(
			desk('--store', store, 'asset', 'import', '--dir', root, '--skill', 'x').code,
			64,
			'--skill needs --new',
		);
	});

	it('makes a new asset, writes a version, reads it back, diffs, mounts, tags and retires it', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const json = jsonOf(store);
		const { asset } = json<{ asset: AssetRecord }>('asset', 'import', '--new', 'research', '--project', 'shop');
		assert.equal(asset.picked_version, 1);
		const source = path.join(root, 'plan.md');
		fs.writeFileSync(source, '# Plan\n');
		const put = json<{ version: { version: number; made_by: string } }>(
			'asset',
			'version',
			asset.id,
			'--put',
			`docs/plan.md=${source}`,
			'--note',
			'plan',
		);
		assert.deepEqual([put.version.version, put.version.made_by], [2, 'conductor']);
		assert.equal(desk('--store', store, 'asset', 'cat', asset.id, 'docs/plan.md').stdout, '# Plan\n');
		fs.writeFileSync(path.join(asset.working_dir, 'docs', 'plan.md'), '# Plan\n\nMeasure first.\n');
		assert.deepEqual(json<{ working_changes: boolean; version: number }>('asset', 'atgo', asset.id), {
			engine: 'snapshot',
			version: 3,
			working_changes: true,
			changed: 1,
		});
		assert.equal(
			json<{ version: { version: number } }>('asset', 'snapshot', asset.id, '--note', 'measure').version.version,
			3,
		);
		const diff = json<{ modified: Array<{ after: { path: string } }> }>('asset', 'diff', asset.id, '2', '3');
		assert.deepEqual(
			diff.modified.map((m) => m.after.path),
			['docs/plan.md'],
		);
		const mounted = json<{ path: string }>('asset', 'mount', asset.id, '2').path;
		assert.equal(fs.readFileSync(path.join(mounted, 'docs', 'plan.md'), 'utf8'), '# Plan\n');
		assert.deepEqual(json<AssetRecord>('asset', 'tags', asset.id, 'area:checkout', 'perf').tags, [
			'area:checkout',
			'perf',
		]);
		const badTag = desk('--store', store, 'asset', 'tags', asset.id, 'Not A Tag');
		assert.equal(badTag.code, 2);
		assert.match(badTag.stderr, /Not a tag/);
		json('asset', 'retire', asset.id);
		assert.deepEqual(json<AssetRecord[]>('assets', 'list'), []);
		assert.equal(json<AssetRecord[]>('assets', 'list', '--all').length, 1);
		const versions = json<Array<{ version: number; note: string }>>('asset', 'versions', asset.id);
		assert.deepEqual(
			versions.map((v) => [v.version, v.note]),
			[
				[1, 'created'],
				[2, 'plan'],
				[3, 'measure'],
			],
		);
		assert.deepEqual(json('asset', 'used-in', asset.id), []);
	});

	it("asset show says of an about a model wrote that a model wrote it; a person's describe makes it theirs", async () => {
		const store = path.join(tempDir(), 'library');
		const made = desk('--store', store, 'asset', 'import', '--new', 'research', '--json');
		assert.equal(made.code, 0, made.stderr);
		const { asset } = JSON.parse(made.stdout) as { asset: AssetRecord };
		// An agent's asset_describe, as a run's desk tool call makes it.
		(await openDesk(store)).library.describe(asset.id, 'Notes on rounding', true);
		assert.match(
			desk('--store', store, 'asset', 'show', asset.id).stdout,
			/about: Notes on rounding \(written by a model\)/,
		);
		assert.equal(desk('--store', store, 'asset', 'describe', asset.id, 'My rounding notes').code, 0);
		const shown = desk('--store', store, 'asset', 'show', asset.id).stdout;
		assert.match(shown, /about: My rounding notes\n/);
		assert.doesNotMatch(shown, /written by a model/);
	});

	it('packs the small loose blobs of a library from before packs (store pack), and its files still read', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const made = desk('--store', store, 'asset', 'import', '--new', 'old-notes', '--json');
		assert.equal(made.code, 0, made.stderr);
		const { asset } = JSON.parse(made.stdout) as { asset: AssetRecord };
		// The library as blob layout 1 left it: the file's bytes loose, the layout file saying 1.
		const bytes = Buffer.from('# written before packs\n');
		const hash = createHash('sha256').update(bytes).digest('hex');
		fs.mkdirSync(path.join(store, 'blobs', 'sha256', hash.slice(0, 2)), { recursive: true });
		fs.writeFileSync(path.join(store, 'blobs', 'sha256', hash.slice(0, 2), hash), bytes);
		fs.writeFileSync(path.join(store, 'blobs', 'layout.json'), JSON.stringify({ layout: 1, hash: 'sha256' }));
		fs.writeFileSync(path.join(asset.working_dir, 'old.md'), bytes);
		assert.equal(desk('--store', store, 'asset', 'snapshot', asset.id).code, 0);
		const packed = desk('--store', store, 'store', 'pack', '--json');
		assert.equal(packed.code, 0, packed.stderr);
		assert.deepEqual(JSON.parse(packed.stdout), { packed: 1, corrupt: [], done: true });
		assert.equal(
			fs.existsSync(path.join(store, 'blobs', 'sha256', hash.slice(0, 2), hash)),
			false,
			'the loose file is gone',
		);
		assert.equal(desk('--store', store, 'asset', 'cat', asset.id, 'old.md').stdout, bytes.toString());
		assert.equal(JSON.parse(fs.readFileSync(path.join(store, 'blobs', 'layout.json'), 'utf8')).looseToPack, undefined);
	});

	it('refuses links and notes where files are needed, and paths outside the folder, exiting 2', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const link = JSON.parse(
			desk('--store', store, 'asset', 'link', '--name', 'Spec', '--url', 'https://example.com/spec', '--json').stdout,
		) as AssetRecord;
		const atGo = desk('--store', store, 'asset', 'atgo', link.id);
		assert.equal(atGo.code, 2);
		assert.match(atGo.stderr, /Spec has no files to read/);
		const created = JSON.parse(desk('--store', store, 'asset', 'import', '--new', 'n', '--json').stdout) as {
			asset: AssetRecord;
		};
		fs.writeFileSync(path.join(root, 'x'), 'x');
		const outside = desk(
			'--store',
			store,
			'asset',
			'version',
			created.asset.id,
			'--put',
			`../escape=${path.join(root, 'x')}`,
		);
		assert.equal(outside.code, 2);
		assert.equal(fs.existsSync(path.join(path.dirname(created.asset.working_dir), 'escape')), false);
	});
});

describe('the desk command line over runs', () => {
	it('exports, imports, lists and shows runs of the repository at --repo', async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const chain = completeChain(git(repo, 'rev-parse', 'HEAD'));
		const library = path.join(root, 'library');
		const seeded = await openDesk(path.join(root, 'seed-library'));
		(await seeded.projectAi(repo)).put(chain.all);
		seeded.close();
		const exported = desk('--store', path.join(root, 'seed-library'), '--repo', repo, 'history', 'export', '--json');
		assert.equal(exported.code, 0, exported.stderr);
		assert.match((JSON.parse(exported.stdout) as { commit: string }).commit, /^[0-9a-f]{40}$/);
		fs.rmSync(path.join(repo, '.desk'), { recursive: true });
		const imported = desk('--store', library, '--repo', repo, 'history', 'import', '--json');
		assert.equal(imported.code, 0, imported.stderr);
		assert.equal((JSON.parse(imported.stdout) as { added: number }).added, chain.all.length);
		const listed = JSON.parse(desk('--store', library, '--repo', repo, 'runs', 'list', '--json').stdout) as {
			intents: Array<{ intent: { prompt: string } }>;
		};
		assert.equal(listed.intents[0]?.intent.prompt, chain.intent.prompt);
		const shown = JSON.parse(
			desk('--store', library, '--repo', repo, 'runs', 'show', chain.run.object_id, '--json').stdout,
		) as { summary: { model: string; cost_usd: number } };
		assert.deepEqual([shown.summary.model, shown.summary.cost_usd], ['claude-sonnet-4', 0.0125]);
		assert.match(desk('--store', library, '--repo', repo, 'runs', 'list').stdout, /completed\s+Add pagination/);
		const outside = desk('--store', library, '--repo', root, 'runs', 'list');
		assert.equal(outside.code, 2, 'a folder in no repository is refused');
	});
});

describe('the desk command line over launch cards', () => {
	it('suggests from a ticket file, plugs, and goes, printing the frozen versions', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const json = jsonOf(store);
		const repoAsset = json<{ asset: AssetRecord }>(
			'asset',
			'import',
			'--dir',
			repo,
			'--project',
			'shop',
			'--main',
		).asset;
		const specs = path.join(root, 'invoice-specs');
		fs.mkdirSync(specs);
		fs.writeFileSync(path.join(specs, 'rounding.md'), 'Invoice rounding rules.\n');
		const specsAsset = json<{ asset: AssetRecord }>('asset', 'import', '--dir', specs, '--project', 'shop').asset;
		const ticketFile = path.join(root, 'ticket.md');
		fs.writeFileSync(ticketFile, 'Invoice rounding is off by a cent\n');
		const suggestions = json<Array<{ asset_id: string; reason: string }>>(
			'card',
			'suggest',
			'--project',
			'shop',
			'--ticket-file',
			ticketFile,
		);
		assert.deepEqual(
			suggestions.map((s) => s.asset_id),
			[specsAsset.id],
		);
		json('card', 'plug', '--project', 'shop', '--asset', specsAsset.id, '--role', 'reference', '--files', '*.md');
		json('card', 'plug', '--project', 'shop', '--asset', repoAsset.id, '--role', 'target');
		const refused = desk(
			'--store',
			store,
			'card',
			'plug',
			'--project',
			'shop',
			'--asset',
			specsAsset.id,
			'--role',
			'owner',
		);
		assert.equal(refused.code, 2);
		assert.match(refused.stderr, /reference, target or instructions/);
		const record = json<{ plugs: Array<{ name: string; role: string; version: number }>; run: string }>(
			'card',
			'go',
			'--project',
			'shop',
		);
		assert.deepEqual(
			record.plugs.map((p) => [p.name, p.role, p.version]),
			[
				['invoice-specs', 'reference', 1],
				['shop', 'target', 2],
			],
		);
		assert.equal(json<Array<{ role: string }>>('asset', 'used-in', specsAsset.id)[0]?.role, 'reference');
	});

	it("refuses as git target another repository made the project's main asset, and another work tree of its own, naming both checkouts", () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const shop = makeRepo(path.join(root, 'shop'), { commits: 2 });
		const billing = makeRepo(path.join(root, 'billing'), { commits: 1 });
		git(shop, 'worktree', 'add', '-q', path.join(root, 'shop-wt'), '-b', 'side');
		const json = jsonOf(store);
		const own = json<{ asset: AssetRecord }>('asset', 'import', '--dir', shop, '--project', 'shop', '--main').asset;
		// The project's main asset is now another repository; runs of the project still write shop.
		const other = json<{ asset: AssetRecord; project: ProjectRecord }>(
			'asset',
			'import',
			'--dir',
			billing,
			'--project',
			'shop',
			'--main',
		);
		assert.deepEqual([other.project.main_asset, other.project.path], [other.asset.id, shop]);
		const worktree = json<{ asset: AssetRecord }>(
			'asset',
			'import',
			'--dir',
			path.join(root, 'shop-wt'),
			'--project',
			'shop',
			'--allow-git-dir',
		).asset;
		json('card', 'suggest', '--project', 'shop', '--ticket', 'Fix the totals');
		const plugTarget = (id: string) =>
			desk('--store', store, 'card', 'plug', '--project', 'shop', '--asset', id, '--role', 'target', '--json');

		const refused = plugTarget(other.asset.id);
		assert.equal(refused.code, 2, refused.stderr);
		const error = (JSON.parse(refused.stdout) as { error: { code: string; message: string; data: object } }).error;
		assert.equal(error.code, 'launch.foreignRepo');
		assert.deepEqual(error.data, {
			id: other.asset.id,
			project: 'shop',
			checkout: shop,
			checkout_git_dir: path.join(shop, '.git'),
			target: billing,
			target_git_dir: path.join(billing, '.git'),
		});
		assert.match(error.message, /another repository/);

		const sibling = plugTarget(worktree.id);
		assert.equal(sibling.code, 2, sibling.stderr);
		assert.match(sibling.stdout, /launch\.foreignRepo/);
		assert.match(sibling.stdout, /another work tree of that repository/);

		assert.deepEqual(json<{ plugs: unknown[] }>('card', 'show', '--project', 'shop').plugs, [], 'nothing was plugged');
		json('card', 'plug', '--project', 'shop', '--asset', own.id, '--role', 'target');
		assert.equal(json<{ plugs: Array<{ name: string }> }>('card', 'go', '--project', 'shop').plugs[0]?.name, 'shop');
	});

	it("keeps a suggestion as the card's Keep does: a skill as instructions, a folder as reference; refuses one not suggested", () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const json = jsonOf(store);
		json('asset', 'import', '--dir', repo, '--project', 'shop', '--main');
		const imported = (name: string, file: string, text: string) => {
			const dir = path.join(root, name);
			fs.mkdirSync(dir);
			fs.writeFileSync(path.join(dir, file), text);
			return json<{ asset: AssetRecord }>('asset', 'import', '--dir', dir, '--project', 'shop').asset;
		};
		const specs = imported('invoice-specs', 'rounding.md', 'Invoice rounding rules.\n');
		const skill = imported(
			'rounding-skill',
			'SKILL.md',
			'---\nname: rounding\ndescription: How to round invoice amounts\n---\nRound half to even.\n',
		);
		const unrelated = imported('gardening', 'roses.md', 'Pruning roses in spring.\n');
		json('card', 'suggest', '--project', 'shop', '--ticket', 'Invoice rounding is off by a cent');

		const kept = desk('--store', store, 'card', 'keep', '--project', 'shop', '--asset', skill.id);
		assert.equal(kept.code, 0, kept.stderr);
		assert.equal(kept.stdout.trim(), `kept ${skill.id} as instructions`);
		const card = json<{ plugs: Array<{ id: string; role: string }> }>(
			'card',
			'keep',
			'--project',
			'shop',
			'--asset',
			specs.id,
		);
		assert.deepEqual(
			card.plugs.map((p) => [p.id, p.role]),
			[
				[skill.id, 'instructions'],
				[specs.id, 'reference'],
			],
		);
		for (const id of [unrelated.id, specs.id]) {
			const refused = desk('--store', store, 'card', 'keep', '--project', 'shop', '--asset', id, '--json');
			assert.equal(refused.code, 2, refused.stderr);
			assert.equal((JSON.parse(refused.stdout) as { error: { code: string } }).error.code, 'launch.notSuggested');
		}
		assert.equal(
			json<{ plugs: unknown[] }>('card', 'show', '--project', 'shop').plugs.length,
			2,
			'nothing more plugged',
		);
	});

	it('suggests a folder changed without a snapshot by the words Go would freeze, as asset search finds it', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const json = jsonOf(store);
		json('asset', 'import', '--dir', repo, '--project', 'shop', '--main');
		const notes = path.join(root, 'field-notes');
		fs.mkdirSync(notes);
		fs.writeFileSync(path.join(notes, 'notes.md'), 'originalword\n');
		const notesAsset = json<{ asset: AssetRecord }>('asset', 'import', '--dir', notes, '--project', 'shop').asset;
		const suggested = (word: string) =>
			json<Array<{ asset_id: string }>>('card', 'suggest', '--project', 'shop', '--ticket', word).map(
				(s) => s.asset_id,
			);
		const searched = (word: string) =>
			json<{ hits: Array<{ id: string }> }>('asset', 'search', word).hits.map((h) => h.id);
		assert.deepEqual(suggested('originalword'), [notesAsset.id], 'the index holds v1 now');

		fs.writeFileSync(path.join(notes, 'notes.md'), 'workingword\n');
		assert.deepEqual(searched('workingword'), [notesAsset.id]);
		assert.deepEqual(suggested('workingword'), [notesAsset.id], 'the card reads the folder as Go would snapshot it');
		assert.deepEqual(searched('originalword'), []);
		assert.deepEqual(suggested('originalword'), []);
		assert.equal(
			json<{ plugs: unknown[] }>('card', 'show', '--project', 'shop').plugs.length,
			0,
			'nothing was snapshotted or plugged',
		);
		assert.equal(json<Array<{ version: number }>>('asset', 'versions', notesAsset.id).length, 1);
	});
});
