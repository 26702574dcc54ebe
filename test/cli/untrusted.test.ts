import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { AssetRecord, AssetSummary } from '../../server/src/assets/types';
import type { RunDetail } from '../../server/src/runs/types';
import { commitFile, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk, deskJs } from '../helpers/deskCli';

// What a hostile repository, folder or agent puts in names: set the title and ring (OSC … BEL),
// clear the screen (CSI 2J), an 8-bit CSI (C1 U+009B), and a right-to-left override.
const title = '\u001b]0;pwned\u0007';
const clear = '\u001b[2J';
const c1 = '\u009b31m';
const rlo = '\u202e';
/** A character a terminal acts on or hides, raw. */
const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

function assertInert(result: { stdout: string; stderr: string }, what: string): void {
	assert.doesNotMatch(result.stdout, raw, `${what}: stdout ${JSON.stringify(result.stdout)}`);
	assert.doesNotMatch(result.stderr, raw, `${what}: stderr ${JSON.stringify(result.stderr)}`);
}

describe('untrusted text and input on the command line', () => {
	it('prints file names, commit subjects, asset names, notes and tags from a hostile repository as inert escapes', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const hostileFile = `evil${title}${clear}${c1}${rlo}gpj.txt`;
		commitFile(repo, hostileFile, 'hello\n', `subject ${title}${clear}`);
		const imported = desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main', '--json');
		assert.equal(imported.code, 0, imported.stderr);
		const gitAsset = (JSON.parse(imported.stdout) as { asset: AssetRecord }).asset;

		const files = desk('--store', store, 'asset', 'files', gitAsset.id);
		assert.equal(files.code, 0, files.stderr);
		assertInert(files, 'asset files');
		assert.ok(files.stdout.includes('evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202egpj.txt'), files.stdout);

		const versions = desk('--store', store, 'asset', 'versions', gitAsset.id);
		assertInert(versions, 'asset versions');
		assert.ok(versions.stdout.includes('subject \\x1b]0;pwned\\x07\\x1b[2J'), versions.stdout);

		// The same name in --json: parses to the exact name, and no raw C1 or override reaches the terminal.
		const json = desk('--store', store, 'asset', 'files', gitAsset.id, '--json');
		assertInert(json, 'asset files --json');
		assert.ok(
			(JSON.parse(json.stdout) as { files: Array<{ path: string }> }).files.some((f) => f.path === hostileFile),
		);

		// A name that is not in the version: the refusal carries it, escaped.
		const missing = desk('--store', store, 'asset', 'cat', gitAsset.id, `gone${title}`);
		assert.equal(missing.code, 2);
		assertInert(missing, 'asset cat refusal');
		assert.match(missing.stderr, /gone\\x1b\]0;pwned\\x07/);

		// A snapshot asset with a hostile name, note, tag and about; a notes asset.
		const docs = path.join(root, 'docs');
		const snap = desk('--store', store, 'asset', 'import', '--new', `docs${c1}${rlo}`, '--dir', docs, '--json');
		assert.equal(snap.code, 0, snap.stderr);
		const snapAsset = (JSON.parse(snap.stdout) as { asset: AssetRecord }).asset;
		fs.writeFileSync(path.join(docs, `read${clear}me.md`), '# docs\n');
		// A link is not stored, and the snapshot says so by name: a name with a newline stays on its line.
		fs.symlinkSync('/etc/hostname', path.join(docs, `link${title}\nforged: line`));
		const cut = desk('--store', store, 'asset', 'snapshot', snapAsset.id, '--note', `note ${title}\nforged line`);
		assert.equal(cut.code, 0, cut.stderr);
		assertInert(cut, 'asset snapshot');
		assert.match(cut.stdout, /not stored: link\\x1b\]0;pwned\\x07\\nforged: line/);
		assert.doesNotMatch(cut.stdout, /^forged/m);
		const outputs = {
			'assets list': desk('--store', store, 'assets', 'list'),
			'asset versions (note)': desk('--store', store, 'asset', 'versions', snapAsset.id),
			'asset files (snapshot)': desk('--store', store, 'asset', 'files', snapAsset.id),
			'asset describe': desk('--store', store, 'asset', 'describe', snapAsset.id, `about ${title}`),
			'asset show': desk('--store', store, 'asset', 'show', snapAsset.id),
			'asset note': desk('--store', store, 'asset', 'note', '--name', `memo${rlo}`, '--text', `text ${title}`),
		};
		for (const [what, result] of Object.entries(outputs)) {
			assert.equal(result.code, 0, `${what}: ${result.stderr}`);
			assertInert(result, what);
		}
		// `asset cat`: the stored bytes as they are into a pipe; escaped when stdout is a terminal.
		fs.writeFileSync(path.join(docs, 'banner.txt'), `hello${title}${clear}\n`);
		assert.equal(desk('--store', store, 'asset', 'snapshot', snapAsset.id).code, 0);
		const piped = desk('--store', store, 'asset', 'cat', snapAsset.id, 'banner.txt');
		assert.equal(piped.stdout, `hello${title}${clear}\n`, 'a pipe gets the bytes');
		const tty = spawnSync(
			'script',
			['-qec', 'node "$DESK_JS" --store "$DESK_STORE_DIR" asset cat "$DESK_ASSET" banner.txt', '/dev/null'],
			{
				encoding: 'utf8',
				env: { ...process.env, DESK_STORE: '', DESK_JS: deskJs, DESK_STORE_DIR: store, DESK_ASSET: snapAsset.id },
				timeout: 30_000,
			},
		);
		assert.equal(tty.status, 0, tty.stderr);
		assert.ok(tty.stdout.includes('hello\\x1b]0;pwned\\x07\\x1b[2J'), JSON.stringify(tty.stdout));
		assert.doesNotMatch(tty.stdout, /\u001b|\u0007/, 'a terminal gets no raw ESC or BEL');
		const tag = desk('--store', store, 'asset', 'tags', snapAsset.id, `tag${c1}`);
		assert.equal(tag.code, 2, 'not a tag');
		assertInert(tag, 'asset tags refusal');
		assert.ok(
			outputs['asset versions (note)'].stdout.includes('note \\x1b]0;pwned\\x07\\nforged line'),
			'the note stays on its line',
		);
		assert.ok(outputs['assets list'].stdout.includes('docs\\x9b31m\\u202e'), outputs['assets list'].stdout);
	});

	it('prints an agent’s model name, plan and file names and attachment notes as inert escapes', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
		assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
		const settingsFile = path.join(root, 'settings.json');
		fs.writeFileSync(
			settingsFile,
			JSON.stringify(
				scriptedAgentSettings({
					model: `model${title}${clear}${c1}`,
					plan: [`Step ${title}one`, `Step ${rlo}two`],
					writes: [{ path: `made${clear}${title}.txt`, content: 'made\n' }],
				}),
			),
		);
		assert.equal(
			desk(
				'--store',
				store,
				'card',
				'suggest',
				'--project',
				'shop',
				'--ticket',
				`Ticket ${title}\nsecond line ${clear}`,
			).code,
			0,
		);
		const card = desk('--store', store, 'card', 'show', '--project', 'shop');
		assertInert(card, 'card show');
		assert.match(
			card.stdout,
			/^Ticket \\x1b\]0;pwned\\x07\nsecond line \\x1b\[2J\n/,
			'the ticket keeps its lines, not its escapes',
		);

		const went = desk('--store', store, 'run', 'go', 'shop', '--settings', settingsFile);
		assert.equal(went.code, 0, went.stderr);
		assertInert(went, 'run go');
		assert.ok(went.stdout.includes('model\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m'), went.stdout);
		assert.ok(went.stdout.includes('made\\x1b[2J\\x1b]0;pwned\\x07.txt'), went.stdout);

		const status = desk(
			'--store',
			store,
			'run',
			'status',
			'--repo',
			repo,
			'--json',
			(
				JSON.parse(desk('--store', store, 'runs', 'list', '--repo', repo, '--json').stdout) as {
					intents: Array<{ tasks: Array<{ runs: Array<{ id: string }> }> }>;
				}
			).intents[0]!.tasks[0]!.runs[0]!.id,
		);
		assert.equal(status.code, 0, status.stderr);
		assertInert(status, 'run status --json');
		assert.equal(
			(JSON.parse(status.stdout) as RunDetail).summary.model,
			`model${title}${clear}${c1}`,
			'JSON keeps the exact model name',
		);
		const list = desk('--store', store, 'runs', 'list', '--repo', repo);
		assert.equal(list.code, 0, list.stderr);
		assertInert(list, 'runs list');
		assert.ok(list.stdout.includes('model\\x1b]0;pwned\\x07'), list.stdout);

		// An attachment added by hand with a hostile name and note, listed and shown.
		const runs = JSON.parse(desk('--store', store, 'runs', 'list', '--repo', repo, '--json').stdout) as {
			intents: Array<{ tasks: Array<{ task: { object_id: string } }> }>;
		};
		const task = runs.intents[0]!.tasks[0]!.task.object_id;
		const report = path.join(root, 'report.txt');
		fs.writeFileSync(report, 'report\n');
		const added = desk(
			'--store',
			store,
			'task',
			'attachments',
			'add',
			task,
			report,
			'--repo',
			repo,
			'--note',
			`note ${title}${clear}\nforged`,
			'--name',
			`report${rlo}txt.exe`,
		);
		assert.equal(added.code, 0, added.stderr);
		assertInert(added, 'task attachments add');
		for (const sub of [
			['list', task],
			['show', task, 'report.txt'],
		]) {
			const shown = desk('--store', store, 'task', 'attachments', ...sub, '--repo', repo);
			assertInert(shown, `task attachments ${sub[0]}`);
		}
		const attachments = JSON.parse(
			desk('--store', store, 'task', 'attachments', 'list', task, '--repo', repo, '--json').stdout,
		) as Array<{ id: string }>;
		const show = desk('--store', store, 'task', 'attachments', 'show', task, attachments[0]!.id, '--repo', repo);
		assert.equal(show.code, 0, show.stderr);
		assertInert(show, 'task attachments show');
		assert.ok(show.stdout.includes('note: note \\x1b]0;pwned\\x07\\x1b[2J\\nforged'), show.stdout);
	});

	it('carries a run out to the gate when the agent prints one 600 MB line, saying it dropped that line', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
		const settingsFile = path.join(root, 'settings.json');
		// Over V8's longest string (about 512 MiB): kept whole, the line could not even be held.
		const flood = 600 * 1024 * 1024;
		fs.writeFileSync(
			settingsFile,
			JSON.stringify(
				scriptedAgentSettings({ floodLineBytes: flood, writes: [{ path: 'after.txt', content: 'after\n' }] }),
			),
		);
		assert.equal(desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket', 'Print a lot').code, 0);
		const went = desk('--store', store, 'run', 'go', 'shop', '--settings', settingsFile, '--json');
		assert.equal(went.code, 0, went.stderr.slice(-2000));
		const detail = JSON.parse(went.stdout) as RunDetail;
		assert.deepEqual([detail.summary.status, detail.summary.at_gate], ['validating', true]);
		assert.deepEqual(
			detail.patchsets.flatMap((p) => p.touched.map((t) => t.path)),
			['after.txt'],
			'the lines after the long one were read',
		);
		assert.match(went.stderr, new RegExp(`a line of ${flood} bytes, over the limit of \\d+; it was dropped`));
	});

	it('refuses /dev/zero, a FIFO and a folder as input files by what they are, and a file as the library folder', () => {
		const root = tempDir();
		const store = path.join(root, 'library');
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
		const fifo = path.join(root, 'pipe');
		execFileSync('mkfifo', [fifo]);
		const code = (result: { stdout: string }) =>
			(JSON.parse(result.stdout) as { error: { code: string; data: Record<string, unknown> } }).error;

		const zero = desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket-file', '/dev/zero', '--json');
		assert.equal(zero.code, 2, zero.stderr);
		assert.deepEqual([code(zero).code, code(zero).data['kind']], ['input.notAFile', 'a character device']);
		assert.match(zero.stderr, /The ticket file \/dev\/zero is a character device, not a regular file/);

		const ticketFifo = desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket-file', fifo, '--json');
		assert.equal(ticketFifo.code, 2, ticketFifo.stderr);
		assert.equal(code(ticketFifo).code, 'input.notAFile');

		const big = path.join(root, 'ticket.md');
		fs.writeFileSync(big, 'a'.repeat(256 * 1024 + 1));
		const tooLarge = desk('--store', store, 'card', 'suggest', '--project', 'shop', '--ticket-file', big, '--json');
		assert.equal(tooLarge.code, 2, tooLarge.stderr);
		assert.deepEqual([code(tooLarge).code, code(tooLarge).data['limit']], ['input.tooLarge', 256 * 1024]);
		assert.equal(
			JSON.parse(desk('--store', store, 'card', 'show', '--project', 'shop', '--json').stdout).ticket,
			'',
			'no ticket was saved',
		);

		const docs = path.join(root, 'docs');
		fs.mkdirSync(docs);
		const snap = JSON.parse(
			desk('--store', store, 'asset', 'import', '--new', 'docs', '--dir', docs, '--json').stdout,
		) as { asset: AssetRecord };
		const put = desk('--store', store, 'asset', 'version', snap.asset.id, '--put', `a.txt=${fifo}`, '--json');
		assert.equal(put.code, 2, put.stderr);
		assert.deepEqual([code(put).code, code(put).data['file']], ['input.notAFile', fifo]);
		const putMissing = desk(
			'--store',
			store,
			'asset',
			'version',
			snap.asset.id,
			'--put',
			`a.txt=${path.join(root, 'missing')}`,
			'--json',
		);
		assert.deepEqual([code(putMissing).code, code(putMissing).data['errno']], ['input.unreadable', 'ENOENT']);
		assert.deepEqual(
			(JSON.parse(desk('--store', store, 'assets', 'list', '--json').stdout) as AssetSummary[]).find(
				(a) => a.id === snap.asset.id,
			)?.version_count,
			1,
			'no version was cut',
		);

		const settings = desk('--store', store, 'run', 'go', 'shop', '--settings', '/dev/zero', '--json');
		assert.equal(settings.code, 2, settings.stderr);
		assert.equal(code(settings).code, 'input.notAFile');
		const checks = desk('--store', store, 'asset', 'checks', snap.asset.id, '--file', fifo, '--json');
		assert.equal(code(checks).code, 'input.notAFile');

		const file = path.join(root, 'not-a-folder');
		fs.writeFileSync(file, 'x');
		const storeIsFile = desk('--store', file, 'assets', 'list', '--json');
		assert.equal(storeIsFile.code, 64, storeIsFile.stderr);
		assert.equal(code(storeIsFile).code, 'store.notAFolder');
		assert.match(storeIsFile.stderr, /The library folder .*not-a-folder is not a folder/);
		assert.doesNotMatch(storeIsFile.stderr, /internal error|at .*\.js:\d+/);
		assert.equal(fs.readFileSync(file, 'utf8'), 'x');
	});
});
