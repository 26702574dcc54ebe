import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import type { Run, Task } from '../../../server/src/ai/types';
import { GitRepository } from '../../../server/src/git/repository';
import { isAtGate } from '../../../server/src/runs/runViews';
import { openDesk } from '../../helpers/deskFixture';
import { git, makeRepoWithOrigin } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { tempDir } from '../../helpers/temp';

/** Whether the repository at `dir` has the object `oid` (git's own reader). */
function hasObject(dir: string, oid: string): boolean {
	return spawnSync('git', ['-C', dir, 'cat-file', '-e', oid]).status === 0;
}

it("a run's context items and task fields travel with the history: exported in one clone, gc'd, pushed, fetched and imported in another, they read the same there", async () => {
	const root = tempDir();
	const origin = path.join(root, 'origin.git');
	const repo = makeRepoWithOrigin(path.join(root, 'shop'), origin, { commits: 1 });
	const desk = await openDesk(path.join(root, 'library'));
	await desk.openWorkspace([{ name: 'shop', path: repo }]);
	const guides = path.join(root, 'guides');
	fs.mkdirSync(guides);
	const guideText = 'A README starts with one line saying what the project is.\n';
	fs.writeFileSync(path.join(guides, 'readme.md'), guideText);
	const styleText = 'Headings in sentence case.\nNo emoji in titles.\n';
	fs.writeFileSync(path.join(guides, 'style.md'), styleText);
	const guide = (await desk.library.importDir({ dir: guides, project: 'shop', main: false })).asset;

	// The title line is 98 letters and a family emoji (one character of 8 UTF-16 units) and more.
	const family = '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}';
	const ticket = [
		`${'a'.repeat(98)}${family}b`,
		'',
		'Keep it short.',
		'',
		'## Acceptance criteria',
		'- README has a title',
		'- [ ] no typos',
		'',
		'## Constraints',
		'1. Touch only README.md',
	].join('\n');
	const launches = await desk.launches(repo);
	launches.setTicket(ticket);
	await launches.plug(guide.id, 'reference', { files: ['*.md'] });
	const record = await launches.go();
	const { executor } = await desk.runs(repo);
	const settings = scriptedAgentSettings({ writes: [{ path: 'README.md', content: '# Shop\n' }] });
	const run = await executor.execute(record, record.run, settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);

	const ai = await desk.projectAi(repo);
	const task = ai.require<Task>(run.task, 'task');
	assert.equal(task.title, `${'a'.repeat(98)}${family}`, 'the title is cut after the 99th character, never inside it');
	assert.equal(task.description, 'Keep it short.');
	assert.deepEqual(task.acceptance_criteria, ['README has a title', 'no typos']);
	assert.deepEqual(task.constraints, ['Touch only README.md']);

	const items = ai.runSnapshot(run)!.items;
	const styleItem = items.find((i) => i.path.endsWith('/style.md'));
	const guideItem = items.find((i) => i.path.endsWith('/readme.md'));
	assert.ok(styleItem?.blob && guideItem?.blob, JSON.stringify(items));
	const contents = new Map([
		[styleItem.blob, styleText],
		[guideItem.blob, guideText],
	]);
	for (const [blob, text] of contents) {
		assert.equal(git(repo, 'rev-parse', `refs/desk/blobs/${blob}`), blob, 'anchored as the run captured it');
		assert.equal(git(repo, 'cat-file', 'blob', blob), text.trimEnd());
	}
	const exported = await desk.exportHistory(repo);
	assert.ok(exported.anchored >= 2, `anchored: ${exported.anchored}`);
	// gc keeps what is anchored.
	git(repo, 'gc', '-q', '--prune=now');
	git(repo, 'push', '-q', 'origin', 'refs/desk/*:refs/desk/*');

	git(root, 'clone', '-q', '--no-local', origin, path.join(root, 'other'));
	const other = fs.realpathSync(path.join(root, 'other'));
	assert.equal(hasObject(other, styleItem.blob), false, 'a plain clone does not bring the context');
	git(other, 'fetch', '-q', 'origin', 'refs/desk/*:refs/desk/*');
	const desk2 = await openDesk(path.join(root, 'library2'));
	const imported = await desk2.importHistory(other);
	assert.deepEqual(imported.refused, []);
	const ai2 = await desk2.projectAi(other);
	const items2 = ai2.runSnapshot(ai2.require<Run>(run.object_id, 'run'))!.items;
	assert.deepEqual(items2, items);
	for (const [blob, text] of contents) {
		assert.equal(
			Buffer.from(GitRepository.open(other).blob(blob)).toString('utf8'),
			text,
			"readable by the desk's reader there",
		);
	}
	const task2 = ai2.require<Task>(run.task, 'task');
	assert.deepEqual(
		[task2.description, task2.acceptance_criteria, task2.constraints],
		[task.description, task.acceptance_criteria, task.constraints],
	);
});
