/**
 * `desk memory …` (glossary: Project memory): the real command line remembers, shows, forgets and
 * commits a root's memory file; a repeat with the same --request-id changes nothing; refusals exit 2
 * with their code and leave the file as it was.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { MemoryView } from '../../server/src/lineage/types';
import { desk } from '../helpers/deskCli';
import { git, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/temp';

it('desk memory remember, show, forget and commit', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 2 });
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	const at = ['--store', store, '--repo', repo];
	const file = path.join(repo, '.desk-memory', 'main.json');

	const remember = [
		'memory',
		'remember',
		'main',
		'Prices are in cents.',
		'--title',
		'Prices',
		'--request-id',
		'cli-memory-1',
	];
	const remembered = desk(...at, '--json', ...remember);
	assert.equal(remembered.code, 0, remembered.stderr);
	const { added, replayed } = JSON.parse(remembered.stdout) as { added: string; replayed: boolean };
	assert.equal(replayed, false);
	const text = fs.readFileSync(file, 'utf8');
	const again = desk(...at, ...remember);
	assert.equal(again.code, 0, again.stderr);
	assert.match(again.stdout, /remembered before/);
	assert.equal(fs.readFileSync(file, 'utf8'), text);

	const shown = desk(...at, '--json', 'memory', 'show', 'main');
	assert.equal(shown.code, 0, shown.stderr);
	const view = JSON.parse(shown.stdout) as MemoryView;
	assert.deepEqual(
		view.memories.map((m) => [m.id, m.memory.title, m.memory.created_by.kind]),
		[[added, 'Prices', 'human']],
	);
	assert.equal(view.uncommitted, true);
	assert.match(desk(...at, 'memory', 'show', 'main').stdout, /Prices: Prices are in cents\./);

	const tooLong = desk(...at, '--json', 'memory', 'remember', 'main', 'x', '--title', 't'.repeat(81));
	assert.equal(tooLong.code, 2);
	const bidi = desk(...at, '--json', 'memory', 'remember', 'main', 'a\u202eb');
	assert.equal(bidi.code, 2);
	assert.match(bidi.stderr + bidi.stdout, /memory\.badBatch/);
	assert.equal(fs.readFileSync(file, 'utf8'), text);

	const committed = desk(...at, '--json', 'memory', 'commit', 'main');
	assert.equal(committed.code, 0, committed.stderr);
	const { commit } = JSON.parse(committed.stdout) as { commit: string };
	assert.match(git(repo, 'log', '-1', '--format=%B', commit), /Desk-Memory: main/);
	const nothing = desk(...at, 'memory', 'commit', 'main');
	assert.equal(nothing.code, 2);
	assert.match(nothing.stderr + nothing.stdout, /memory\.nothingToCommit/);

	const forgot = desk(...at, 'memory', 'forget', 'main', added);
	assert.equal(forgot.code, 0, forgot.stderr);
	const missing = desk(...at, 'memory', 'forget', 'main', added);
	assert.equal(missing.code, 2);
	assert.match(missing.stderr + missing.stdout, /memory\.notFound/);
	assert.equal((JSON.parse(desk(...at, '--json', 'memory', 'show', 'main').stdout) as MemoryView).memories.length, 0);
	assert.equal(desk(...at, 'memory', 'show').code, 64, 'usage');
});
