import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { decodeManifest } from '../../../server/src/assets/manifest';
import type { Manifest } from '../../../server/src/assets/types';
import type { Desk } from '../../../server/src/desk';
import { makeWritable } from '../../../server/src/store/folderFiles';
import { prepareTargetFolder, targetChanges, type TargetMarker } from '../../../server/src/runs/targetFolder';
import { removeInFolder, removeTreeInFolder, writeInFolder } from '../../../server/src/store/folderFiles';
import { isDeskError } from '../../../server/src/core/errors';
import { openDesk } from '../../helpers/deskFixture';
import { findProjectRoot, tempDir } from '../../helpers/temp';
import { background, race, swapFolderForLink } from '../../helpers/races';

/** Issue 12, snapshot folders: what a person (or a hostile writer) puts in a folder the desk snapshots. */

const deskJs = path.join(findProjectRoot(), 'dist', 'desk.js');

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
	const result = spawnSync(process.execPath, [deskJs, ...args], {
		encoding: 'utf8',
		env: { ...process.env, DESK_STORE: '' },
	});
	return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function manifests(desk: Desk, id: string): Promise<Manifest[]> {
	const versions = await desk.library.assetVersions(id);
	return versions.map((v) => {
		assert.ok(v.engine === 'snapshot');
		return decodeManifest(desk.blobs.get(v.manifest), v.manifest);
	});
}

describe('snapshot folders a hostile writer controls', () => {
	it('a folder swapped for a link to a folder outside, again and again while snapshots run: nothing outside is ever read or stored', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const work = path.join(root, 'work');
		const { asset } = await desk.library.newAsset({ name: 'swapped', dir: work, madeBy: 'user' });
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		fs.writeFileSync(path.join(outside, 'passwd'), 'OUTSIDE root:x:0:0\n');
		fs.writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE\n');
		fs.writeFileSync(path.join(work, 'top.txt'), 'top\n');
		// A swapper process exchanges d for a link to the outside folder as fast as it can.
		const swapper = background(
			`const fs=require('fs'),p=require('path');const o=${JSON.stringify(work)};const t=${JSON.stringify(outside)};let i=0;
			 for(const end=Date.now()+15000;Date.now()<end;){i++;try{fs.mkdirSync(p.join(o,'d'),{recursive:true});fs.writeFileSync(p.join(o,'d','secret.txt'),'INSIDE '+i+'\\n');}catch{}
			  try{fs.renameSync(p.join(o,'d'),p.join(o,'real'));fs.symlinkSync(t,p.join(o,'d'));for(let k=0;k<200;k++){fs.lstatSync(p.join(o,'d'));}fs.rmSync(p.join(o,'d'));fs.renameSync(p.join(o,'real'),p.join(o,'d'));}catch{}}`,
		);
		let snapshots = 0;
		let linksMet = 0;
		let withInside = 0;
		try {
			await race(
				() => snapshots >= 30 && linksMet > 0 && withInside > 0,
				async () => {
					const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
					linksMet += result.skipped.filter((s) => /link/.test(s.reason)).length;
					const stored = decodeManifest(desk.blobs.get(result.version.manifest), result.version.manifest).files.map(
						(f) => f.path,
					);
					withInside += stored.includes('d/secret.txt') ? 1 : 0;
					snapshots += 1;
				},
			);
		} finally {
			await swapper.stop();
		}
		const all = await manifests(desk, asset.id);
		const storedInside = all.filter((m) => m.files.some((f) => f.path === 'd/secret.txt')).length;
		assert.ok(snapshots >= 30, `${snapshots} snapshots ran`);
		assert.ok(
			linksMet > 0 && storedInside > 0,
			`the race was real: ${linksMet} links met, ${storedInside} versions hold d/secret.txt`,
		);
		for (const manifest of all) {
			assert.deepEqual(
				manifest.files.filter((f) => f.path.endsWith('passwd')),
				[],
				'no version names the outside file',
			);
		}
		for (const hash of desk.blobs.list()) {
			assert.doesNotMatch(
				desk.blobs.get(hash).toString('latin1'),
				/OUTSIDE/,
				'no stored blob holds bytes from outside the folder',
			);
		}
	});

	it('a file rewritten while snapshots run: every recorded size is the length of the stored bytes, whose hash it names', async () => {
		const root = tempDir();
		const desk = await openDesk(path.join(root, 'library'));
		const work = path.join(root, 'work');
		const { asset } = await desk.library.newAsset({ name: 'rewritten', dir: work, madeBy: 'user' });
		const file = path.join(work, 'log.bin');
		fs.writeFileSync(file, 'aaaaa');
		// The writer truncates and rewrites the file with sizes that differ (0 bytes in between).
		const writer = background(
			`const fs=require('fs');const f=${JSON.stringify(file)};const sizes=[65536,1000,300000,7];let i=0;
			 for(const end=Date.now()+15000;Date.now()<end;){i++;fs.writeFileSync(f,Buffer.alloc(sizes[i%4],97+(i%26)));}`,
		);
		let snapshots = 0;
		let created = 0;
		let unsettled = 0;
		try {
			await race(
				() => snapshots >= 30 && created > 10,
				async () => {
					const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
					unsettled += result.skipped.filter((s) => s.path === 'log.bin' && /kept changing/.test(s.reason)).length;
					created += result.created ? 1 : 0;
					snapshots += 1;
				},
			);
		} finally {
			await writer.stop();
		}
		const all = await manifests(desk, asset.id);
		const recorded = all.flatMap((m) => m.files).filter((f) => f.path === 'log.bin');
		assert.ok(
			snapshots >= 30 && recorded.length > 5,
			`${snapshots} snapshots, ${recorded.length} versions of log.bin, ${unsettled} reported as never settling`,
		);
		const torn = recorded.filter((f) => {
			const bytes = desk.blobs.get(f.hash);
			return (
				bytes.length !== f.size ||
				createHash('sha256').update(bytes).digest('hex') !== f.hash ||
				new Set(bytes).size > 1
			);
		});
		assert.deepEqual(
			torn.map((f) => ({ size: f.size, stored: desk.blobs.get(f.hash).length })),
			[],
			'no version records a size other than its stored bytes, or bytes from two writes',
		);
	});

	it('names that are not UTF-8 and the temporary files of an interrupted write are reported by name, never stored or merged; the version mounts (desk CLI)', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const made = cli('--store', store, 'asset', 'import', '--new', 'bytes', '--json');
		assert.equal(made.code, 0, made.stderr);
		const { asset } = JSON.parse(made.stdout) as { asset: { id: string; working_dir: string } };
		const work = Buffer.from(asset.working_dir);
		const at = (...parts: Array<string | Buffer>) =>
			Buffer.concat([work, ...parts.flatMap((p) => [Buffer.from('/'), Buffer.from(p)])]);
		fs.writeFileSync(at(Buffer.from('61ff2e747874', 'hex')), 'latin-1 y umlaut\n'); // a\xff.txt
		fs.writeFileSync(at(Buffer.from('61fe2e747874', 'hex')), 'latin-1 thorn\n'); // a\xfe.txt
		fs.writeFileSync(at('a\ufffd.txt'), 'the real replacement character\n');
		fs.mkdirSync(at(Buffer.from('646972c0', 'hex'))); // dir\xc0
		fs.writeFileSync(at(Buffer.from('646972c0', 'hex'), 'inner.txt'), 'inside a folder with a bad name\n');
		fs.writeFileSync(at('ok.txt'), 'ok\n');
		// What a killed `asset version --put` leaves: a 2 MiB temp file under the desk's own prefix.
		fs.writeFileSync(at('.desk-tmp-0123456789ab'), Buffer.alloc(2 * 1024 * 1024, 1));
		const snap = cli('--store', store, 'asset', 'snapshot', asset.id, '--json');
		assert.equal(snap.code, 0, snap.stderr);
		const result = JSON.parse(snap.stdout) as {
			version: { version: number; file_count: number; manifest: string };
			skipped: Array<{ path: string; reason: string }>;
		};
		assert.deepEqual(result.skipped.map((s) => s.path).sort(), [
			'.desk-tmp-0123456789ab',
			'a\\xfe.txt',
			'a\\xff.txt',
			'dir\\xc0',
		]);
		assert.match(result.skipped.find((s) => s.path === 'a\\xff.txt')!.reason, /not UTF-8/);
		assert.match(result.skipped.find((s) => s.path === '.desk-tmp-0123456789ab')!.reason, /temporary/);
		const { files } = JSON.parse(
			cli('--store', store, 'asset', 'files', asset.id, '--version', String(result.version.version), '--json').stdout,
		) as { files: Array<{ path: string; size: number }> };
		assert.deepEqual(
			files.map((f) => [f.path, f.size]),
			[
				['a\ufffd.txt', 31],
				['ok.txt', 3],
			],
			'one entry a path, each with its own bytes',
		);
		assert.equal(
			cli('--store', store, 'asset', 'cat', asset.id, 'a\ufffd.txt').stdout,
			'the real replacement character\n',
		);
		const mounted = cli('--store', store, 'asset', 'mount', asset.id, String(result.version.version), '--json');
		assert.equal(mounted.code, 0, mounted.stderr);
		assert.deepEqual(fs.readdirSync((JSON.parse(mounted.stdout) as { path: string }).path).sort(), [
			'a\ufffd.txt',
			'ok.txt',
		]);
		// The person reading the CLI sees what was not stored, by name.
		fs.writeFileSync(at('ok.txt'), 'changed\n');
		const human = cli('--store', store, 'asset', 'snapshot', asset.id);
		assert.equal(human.code, 0, human.stderr);
		assert.match(human.stdout, /not stored: a\\xff\.txt \(a name that is not UTF-8/);
		assert.match(human.stdout, /not stored: \.desk-tmp-0123456789ab \(a temporary file/);
	});

	it('the first import of a folder reports what it did not store, by name, as later snapshots do (desk CLI)', () => {
		const root = tempDir();
		const store = path.join(root, 'store');
		const folder = path.join(root, 'docs');
		fs.mkdirSync(folder);
		fs.writeFileSync(path.join(folder, 'guide.md'), 'guide\n');
		fs.symlinkSync('/etc/passwd', path.join(folder, 'passwd'));
		assert.equal(spawnSync('mkfifo', [path.join(folder, 'pipe')]).status, 0);
		const human = cli('--store', store, 'asset', 'import', '--dir', folder);
		assert.equal(human.code, 0, human.stderr);
		assert.match(human.stdout, /^imported: a-[0-9a-f]{16} docs /);
		assert.match(human.stdout, /\n {2}not stored: passwd \(a link \(never followed\)\)/);
		assert.match(human.stdout, /\n {2}not stored: pipe \(a FIFO\)/);
		const again = JSON.parse(cli('--store', store, 'asset', 'import', '--dir', folder, '--json').stdout) as {
			created: boolean;
			skipped?: unknown;
		};
		assert.deepEqual([again.created, again.skipped], [false, undefined], 'adopting it again stores nothing new');
		const other = path.join(root, 'other');
		fs.mkdirSync(other);
		fs.symlinkSync('guide.md', path.join(other, 'link'));
		const json = JSON.parse(cli('--store', store, 'asset', 'import', '--dir', other, '--json').stdout) as {
			skipped: Array<{ path: string; reason: string }>;
		};
		assert.deepEqual(
			json.skipped.map((s) => s.path),
			['link'],
		);
	});

	it("the library's own folder inside a snapshot folder is skipped and named; a tree deeper than 256 folders is cut there and named", async () => {
		const root = tempDir();
		const project = path.join(root, 'project');
		fs.mkdirSync(project);
		fs.writeFileSync(path.join(project, 'a.txt'), 'a\n');
		const desk = await openDesk(path.join(project, 'desk-library'));
		const { asset } = await desk.library.importDir({ dir: project, main: false, madeBy: 'user' });
		assert.equal(asset.engine, 'snapshot');
		const deep = Array.from({ length: 257 }, (_, i) => `d${i + 1}`);
		fs.mkdirSync(path.join(project, ...deep), { recursive: true });
		fs.writeFileSync(path.join(project, ...deep.slice(0, 256), 'deep.txt'), 'at level 256\n');
		fs.writeFileSync(path.join(project, ...deep, 'deeper.txt'), 'at level 257\n');
		const result = await desk.library.snapshot(asset.id, { madeBy: 'user' });
		assert.deepEqual(result.skipped, [
			{ path: deep.join('/'), reason: 'a folder deeper than 256 levels: not walked' },
			{ path: 'desk-library', reason: "the desk's own library folder: never snapshotted into itself" },
		]);
		const [first, latest] = await manifests(desk, asset.id);
		assert.deepEqual(
			first!.files.map((f) => f.path),
			['a.txt'],
			'the import did not store the library either',
		);
		assert.deepEqual(
			latest!.files.map((f) => f.path),
			['a.txt', `${deep.slice(0, 256).join('/')}/deep.txt`],
		);
	});
});

describe('the same hole elsewhere: writes into a working folder, a run target folder', () => {
	it('writing into a working folder (asset version, the gate) whose folder is swapped for a link meanwhile: nothing is ever written outside', async () => {
		const root = tempDir();
		const work = path.join(root, 'work');
		fs.mkdirSync(work);
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		fs.writeFileSync(path.join(outside, 'keep.txt'), 'OUTSIDE\n');
		const swapper = swapFolderForLink(work, outside, { refill: true });
		let writes = 0;
		let refused = 0;
		try {
			await race(
				() => writes >= 300 && refused > 0,
				() => {
					for (let i = 0; i < 50; i++, writes++) {
						try {
							writeInFolder(work, `d/w${writes % 50}.txt`, Buffer.from(`write ${writes}\n`));
							removeInFolder(work, `d/w${(writes + 25) % 50}.txt`);
						} catch (error) {
							assert.ok(isDeskError(error, 'asset.unsafePath') || isDeskError(error, 'store.io'), String(error));
							refused += 1; // A link (or a folder moved away) on the way: refused by name.
						}
					}
				},
			);
		} finally {
			await swapper.stop();
		}
		assert.ok(writes >= 300 && refused > 0, `the race was real: ${writes} writes, ${refused} refused`);
		assert.deepEqual(fs.readdirSync(outside), ['keep.txt'], 'nothing was written or left outside the folder');
	});

	it('a working folder reached by a path that is itself a link is still written (only what lies below is confined)', () => {
		const root = tempDir();
		const work = path.join(root, 'work');
		fs.mkdirSync(work);
		fs.symlinkSync(work, path.join(root, 'via-link'));
		writeInFolder(path.join(root, 'via-link'), 'docs/a.txt', Buffer.from('a\n'));
		assert.equal(fs.readFileSync(path.join(work, 'docs', 'a.txt'), 'utf8'), 'a\n');
		removeInFolder(path.join(root, 'via-link'), 'docs/a.txt');
		assert.deepEqual(fs.readdirSync(path.join(work, 'docs')), []);
	});

	it("a run's target folder holding a link and a name that is not UTF-8: both reported by name, neither read", () => {
		const root = tempDir();
		const folder = path.join(root, 'target');
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		fs.writeFileSync(path.join(outside, 'passwd'), 'OUTSIDE\n');
		prepareTargetFolder(folder, { format: 1, asset_id: 'a', asset_name: 'a', version: 1, files: [] }, () =>
			Buffer.alloc(0),
		);
		fs.symlinkSync(outside, path.join(folder, 'linked'));
		fs.writeFileSync(Buffer.concat([Buffer.from(`${folder}/`), Buffer.from('62ff', 'hex')]), 'bad name\n');
		const skipped: Array<{ path: string; reason: string }> = [];
		assert.deepEqual(targetChanges(folder, [], undefined, skipped), []);
		assert.deepEqual(
			skipped.sort((a, b) => (a.path < b.path ? -1 : 1)),
			[
				{ path: 'b\\xff', reason: 'a name that is not UTF-8 (shown with \\x escapes): not taken' },
				{ path: 'linked', reason: 'a link (never followed)' },
			],
		);
	});

	it("a run's target folder read while the agent swaps a folder for a link: no change carries bytes from outside", async () => {
		const root = tempDir();
		const folder = path.join(root, 'target');
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside);
		fs.writeFileSync(path.join(outside, 'passwd'), 'OUTSIDE\n');
		const marker: TargetMarker = { format: 1, asset_id: 'a', asset_name: 'a', version: 1, files: [] };
		prepareTargetFolder(folder, marker, () => Buffer.alloc(0));
		const swapper = swapFolderForLink(folder, outside, { refill: true });
		let reads = 0;
		let inside = 0;
		try {
			await race(
				() => reads >= 30 && inside > 0,
				() => {
					for (const change of targetChanges(folder)) {
						assert.doesNotMatch(
							change.after?.bytes.toString('latin1') ?? '',
							/OUTSIDE/,
							`${change.path} holds bytes from outside`,
						);
						assert.ok(!change.path.endsWith('passwd'), `${change.path} is a file outside`);
						inside += change.path === 'd/inside.txt' ? 1 : 0;
					}
					reads += 1;
				},
			);
		} finally {
			await swapper.stop();
		}
		assert.ok(reads >= 30 && inside > 0, `the race was real: ${reads} reads, ${inside} saw d/inside.txt`);
	});
});

describe('the same hole elsewhere: a decided run folder given its write bit back', () => {
	it('a folder swapped for a link while the run folder is made writable again: nothing outside changes mode', async () => {
		const root = tempDir();
		const runFolder = path.join(root, 'run');
		fs.mkdirSync(runFolder);
		const outside = path.join(root, 'outside');
		fs.mkdirSync(outside, { mode: 0o700 });
		fs.chmodSync(outside, 0o700);
		const swapper = swapFolderForLink(runFolder, outside, { refill: true });
		let passes = 0;
		// At least two seconds of passes (the old code changed the outside folder's mode within them).
		const from = Date.now();
		try {
			await race(
				() => (Date.now() - from > 2000 && passes >= 1000) || (fs.statSync(outside).mode & 0o777) !== 0o700,
				() => {
					for (let i = 0; i < 100; i++, passes++) {
						makeWritable(runFolder);
					}
				},
			);
		} finally {
			await swapper.stop();
		}
		assert.ok(passes >= 1000, `${passes} passes`);
		assert.equal((fs.statSync(outside).mode & 0o777).toString(8), '700', 'the outside folder kept its mode');
	});
});

describe('the same hole elsewhere: the skills a run installed, removed after it', () => {
	it('.claude swapped for a link while the installed skill is removed: nothing outside is deleted', async () => {
		const root = tempDir();
		const work = path.join(root, 'work');
		fs.mkdirSync(path.join(work, '.claude', 'skills', 'x'), { recursive: true });
		const outside = path.join(root, 'outside');
		fs.mkdirSync(path.join(outside, 'skills', 'x'), { recursive: true });
		fs.writeFileSync(path.join(outside, 'skills', 'x', 'keep.txt'), 'OUTSIDE\n');
		const swapper = swapFolderForLink(work, outside, { name: '.claude', refill: true });
		let passes = 0;
		let removed = 0;
		const kept = () => fs.existsSync(path.join(outside, 'skills', 'x', 'keep.txt'));
		try {
			await race(
				() => (passes >= 2000 && removed > 0) || !kept(),
				() => {
					for (let i = 0; i < 20; i++, passes++) {
						try {
							writeInFolder(work, '.claude/skills/x/SKILL.md', Buffer.from('skill\n'));
						} catch {
							// A link on the way: refused.
						}
						removed += removeTreeInFolder(work, '.claude/skills/x', 0) ? 1 : 0;
					}
				},
			);
		} finally {
			await swapper.stop();
		}
		assert.equal(kept(), true, `the outside folder of the same name is untouched (after ${passes} passes)`);
		assert.ok(passes >= 2000 && removed > 0, `the race was real: ${passes} passes, ${removed} removals`);
	});
});
