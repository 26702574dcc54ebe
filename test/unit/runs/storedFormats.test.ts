import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { claimJson, placementJson, readPlacement, type RunPlacement } from '../../../server/src/runs/placement';
import { readTargetChanges, targetChangesBytes } from '../../../server/src/runs/targetChangesRecord';

const placed: RunPlacement = {
	target: 'git',
	isolation: 'worktree',
	work_folder: '/lib/runs/r1/worktree',
	run_folder: '/lib/runs/r1',
	branch: 'desk/run-r1',
	start_tree: 'a'.repeat(40),
	installed: ['.claude/skills/x'],
	reference_folders: ['/lib/mounts/m/1'],
	agent: 'claude',
	settings: { isolation: 'worktree' } as unknown as RunPlacement['settings'],
	isolated: true,
	isolation_note: 'isolated (bubblewrap)',
};
const hash = (c: string) => c.repeat(64);

it('a run_control row: written with its format and read back; a row from before formats reads as format 1', () => {
	assert.deepEqual(readPlacement(placementJson(placed), 'r1'), { isolation: 'worktree', placement: placed });
	assert.deepEqual(readPlacement(claimJson('shared'), 'r1'), { isolation: 'shared' });
	assert.equal(JSON.parse(placementJson(placed)).format, 1);
	// As the desk wrote them before: no format, and (older still) no reference_folders.
	assert.deepEqual(readPlacement('{"isolation":"folder"}', 'r1'), { isolation: 'folder' });
	// A claim of the desks of 2026-11-30 named no isolation: a run not placed, in no known checkout.
	assert.deepEqual(readPlacement('{}', 'r1'), {});
	const { reference_folders: _, ...older } = placed;
	assert.deepEqual(readPlacement(JSON.stringify(older), 'r1'), {
		isolation: 'worktree',
		placement: { ...placed, reference_folders: [] },
	});
});

it('a run_control row of a format this desk does not know, or of a shape it did not write, is refused with a typed error naming it', () => {
	assert.throws(
		() => readPlacement(JSON.stringify({ format: 2, ...placed }), 'r1'),
		(e) =>
			isDeskError(e, 'store.unknownSchema') &&
			(e.data as { format: number }).format === 2 &&
			(e.data as { run: string }).run === 'r1',
	);
	assert.throws(
		() => readPlacement(JSON.stringify({ ...placed, isolation: 'elsewhere' }), 'r1'),
		(e) => isDeskError(e, 'store.corrupt') && (e.data as { field: string }).field === 'isolation',
	);
	assert.throws(
		() => readPlacement(JSON.stringify({ ...placed, installed: 'x' }), 'r1'),
		(e) => isDeskError(e, 'store.corrupt') && (e.data as { field: string }).field === 'installed',
	);
	assert.throws(
		() => readPlacement(JSON.stringify({ ...placed, target: undefined }), 'r1'),
		(e) => isDeskError(e, 'store.corrupt') && (e.data as { field: string }).field === 'target',
	);
	assert.throws(
		() => readPlacement('{"isolation":', 'r1'),
		(e) => isDeskError(e, 'store.corrupt'),
	);
	assert.throws(
		() => readPlacement('[]', 'r1'),
		(e) => isDeskError(e, 'store.corrupt'),
	);
});

it('desk.target_changes: written with its format and read back; the bytes are those the desk always wrote, so the blob names are unchanged', () => {
	const files = [
		{
			path: 'guide.md',
			change_type: 'modified' as const,
			before: hash('1'),
			after: hash('2'),
			size: 20,
			executable: false,
		},
		{ path: 'logo.png', change_type: 'deleted' as const, before: hash('3'), size: 7, executable: false },
	];
	const bytes = targetChangesBytes({ asset: 'asset-1', version: 3, files });
	assert.equal(bytes.toString('utf8'), JSON.stringify({ format: 1, asset: 'asset-1', version: 3, files }));
	assert.deepEqual(readTargetChanges(bytes, hash('f')), { format: 1, asset: 'asset-1', version: 3, files });
	// A list without a format (none was ever written so, but it must read as format 1).
	assert.deepEqual(readTargetChanges(Buffer.from(JSON.stringify({ files })), hash('f')).files, files);
});

it('desk.target_changes of a format this desk does not know, or of a shape it did not write, is refused with a typed error naming it', () => {
	const file = { path: 'a', change_type: 'added', after: hash('2'), size: 1, executable: false };
	const read = (value: unknown) => () => readTargetChanges(Buffer.from(JSON.stringify(value)), hash('f'));
	assert.throws(
		read({ format: 2, files: [file] }),
		(e) => isDeskError(e, 'store.unknownSchema') && (e.data as { blob: string }).blob === hash('f'),
	);
	assert.throws(
		read({ format: 1, files: [{ ...file, change_type: 'renamed' }] }),
		(e) => isDeskError(e, 'store.corrupt') && (e.data as { field: string }).field === 'files[0].change_type',
	);
	assert.throws(
		read({ format: 1, files: [{ ...file, after: '../../etc/passwd' }] }),
		(e) => isDeskError(e, 'store.corrupt') && (e.data as { field: string }).field === 'files[0].after',
	);
	assert.throws(read({ format: 1, files: [{ ...file, path: '' }] }), (e) => isDeskError(e, 'store.corrupt'));
	assert.throws(
		read({ format: 1 }),
		(e) => isDeskError(e, 'store.corrupt') && (e.data as { field: string }).field === 'files',
	);
	assert.throws(
		() => readTargetChanges(Buffer.from('not json'), hash('f')),
		(e) => isDeskError(e, 'store.corrupt'),
	);
});
