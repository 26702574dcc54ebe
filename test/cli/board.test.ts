/**
 * `desk board …` with the real command line: a person's branch carried out here to the gate leaves a
 * passive note on the tally; `run decide` lands it and the report is listed; answered once, then
 * refused; a post from the branch's run; the branch continued with the answer once; usage errors.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { BoardMessage, BranchResult } from '../../server/src/lineage/types';
import { commitFile, makeRepo } from '../helpers/gitRepo';
import { scriptedAgentSettings } from '../helpers/scriptedAgent';
import { tempDir } from '../helpers/temp';
import { desk } from '../helpers/deskCli';

it('desk board list, post, answer and continue', () => {
	const root = tempDir();
	const store = path.join(root, 'library');
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	commitFile(repo, 'price.txt', '10\n', 'price');
	assert.equal(desk('--store', store, 'asset', 'import', '--dir', repo, '--project', 'shop', '--main').code, 0);
	const settingsFile = path.join(root, 'settings.json');
	fs.writeFileSync(
		settingsFile,
		JSON.stringify(
			scriptedAgentSettings({ writes: [{ path: 'price.txt', content: '12\n' }], answer: 'Raised the price to 12.' }),
		),
	);
	const prompted = desk(
		...['--store', store, 'lineage', 'prompt', '--root', 'main', '--prompt', 'Raise the price to 12'],
		...['--settings', settingsFile, '--repo', repo, '--json'],
	);
	assert.equal(prompted.code, 0, prompted.stderr);
	const branch = JSON.parse(prompted.stdout) as BranchResult;
	const list = () => {
		const listed = desk('--store', store, 'board', 'list', branch.tally, '--repo', repo, '--json');
		assert.equal(listed.code, 0, listed.stderr);
		return (JSON.parse(listed.stdout) as { messages: BoardMessage[] }).messages;
	};
	const atGate = list();
	const notes = atGate.filter((m) => m.kind === 'note');
	assert.deepEqual(
		notes.map((m) => m.passive),
		[true],
	);
	assert.match(
		notes[0]!.text,
		/^at the gate: Raised the price to 12\.\n\n\(still waiting for the decision at the gate;/,
	);
	assert.equal(atGate.filter((m) => m.kind === 'report').length, 0);
	const text = desk('--store', store, 'board', 'list', branch.tally, '--repo', repo);
	assert.match(text.stdout, /#\d+ note \S+ from \S+ \(passive\)\n {2}at the gate: Raised the price to 12\./);

	const posted = desk('--store', store, 'board', 'post', branch.run, 'one more thing', '--repo', repo, '--json');
	assert.equal(posted.code, 0, posted.stderr);
	assert.deepEqual(
		[(JSON.parse(posted.stdout) as BoardMessage).kind, (JSON.parse(posted.stdout) as BoardMessage).passive],
		['note', true],
	);

	const decided = desk('--store', store, 'run', 'decide', branch.run, '--decision', 'commit', '--repo', repo);
	assert.equal(decided.code, 0, decided.stderr);
	const landed = list();
	assert.equal(landed.filter((m) => m.kind === 'landed').length, 1);
	const reports = landed.filter((m) => m.kind === 'report');
	assert.equal(reports.length, 1);
	assert.equal(reports[0]!.data?.outcome, 'landed');

	const answer = desk('--store', store, 'board', 'answer', reports[0]!.id, 'Thanks.', '--repo', repo);
	assert.equal(answer.code, 0, answer.stderr);
	assert.match(answer.stdout, /answer/);
	const again = desk('--store', store, 'board', 'answer', reports[0]!.id, 'Again.', '--repo', repo);
	assert.equal(again.code, 2);
	assert.match(again.stderr, /answered already/);
	const onNote = desk(
		'--store',
		store,
		'board',
		'answer',
		atGate.find((m) => m.kind === 'note')!.id,
		'x',
		'--repo',
		repo,
	);
	assert.equal(onNote.code, 2);
	assert.match(onNote.stderr, /not a report/);
	const ownBoard = desk('--store', store, 'board', 'list', branch.node, '--repo', repo, '--json');
	assert.deepEqual(
		(JSON.parse(ownBoard.stdout) as { messages: BoardMessage[] }).messages.map((m) => m.kind),
		['board.started.by', 'input', 'report', 'answer'],
	);

	// The branch's own board got the answer: continuing the branch carries it, once; what the
	// continuation says is a passive note (the branch reported already).
	const moreFile = path.join(root, 'more.json');
	fs.writeFileSync(
		moreFile,
		JSON.stringify(scriptedAgentSettings({ writes: [{ path: 'price.txt', content: '13\n' }] })),
	);
	const continued = desk('--store', store, 'board', 'continue', branch.run, '--settings', moreFile, '--repo', repo);
	assert.equal(continued.code, 0, continued.stderr);
	assert.match(continued.stdout, /^continued with 1 report\(s\)/);
	const after = list();
	assert.equal(after.filter((m) => m.kind === 'report').length, 1, 'no second report');
	assert.deepEqual(
		after.filter((m) => m.kind === 'note').map((m) => m.passive),
		[true, true, true],
	);
	const nothing = desk('--store', store, 'board', 'continue', branch.run, '--settings', settingsFile, '--repo', repo);
	assert.equal(nothing.code, 2);
	assert.match(nothing.stderr, /board\.noReports|Nothing new came back/);
	assert.equal(desk('--store', store, 'board', 'list', '--repo', repo).code, 64);
	assert.equal(desk('--store', store, 'board', 'post', branch.run, '--repo', repo).code, 64);
	assert.equal(desk('--store', store, 'board', 'post', branch.run, 'x', '--kind', 'report', '--repo', repo).code, 64);
});
