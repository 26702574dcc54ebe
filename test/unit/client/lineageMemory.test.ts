import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryView } from '../../../server/src/protocol/protocol';
import { boardArg, memoryArg, reportArg, rootArg, runArg } from '../../../client/src/lineage/lineageArgs';
import {
	memoryDescription,
	memoryRootDescription,
	memoryRootTooltip,
	memoryTooltip,
	newestMemoriesFirst,
	shortDay,
	type MemoryEntry,
} from '../../../client/src/lineage/memoryText';
import { assertInertMarkdown } from '../../helpers/markdown';
import { branch, hostile, message, root } from './lineageFixtures';

type Memory = MemoryView['memories'][number]['memory'];

function entry(id: string, more: Partial<Memory> = {}, changed: string[] = []): MemoryEntry {
	return {
		id,
		memory: {
			title: 'Tests',
			text: 'Run npm test; the e2e stage needs code-server.\nSecond line.',
			created_at: '2026-10-02T09:00:00Z',
			updated_at: '2026-10-02T09:00:00Z',
			created_by: { kind: 'human', id: 'ada@example.com' },
			source: { kind: 'remember' },
			...more,
		},
		evidence_changed: changed,
	};
}

const now = new Date('2026-12-02T12:00:00Z');

describe('the Memory view', () => {
	it('says of a root its file, its memories and whether it is committed; without memory or damaged, that', () => {
		assert.equal(
			memoryRootDescription(root({ memory: { exists: true, memories: 14, uncommitted: true } })),
			'.desk-memory/main.json · 14 memories · uncommitted',
		);
		assert.equal(
			memoryRootDescription(root({ memory: { exists: true, memories: 1, uncommitted: false } })),
			'.desk-memory/main.json · 1 memory',
		);
		assert.equal(memoryRootDescription(root()), 'no memory yet');
		assert.equal(
			memoryRootDescription(
				root({ memory: { exists: false, memories: 0, uncommitted: false, corrupt: 'main.json.corrupt-1' } }),
			),
			'.desk-memory/main.json · damaged, kept aside',
		);
	});

	it('says of a memory its first line, who and when, and that its evidence changed', () => {
		assert.equal(memoryDescription(entry('a'), now), 'you · 2 Oct · “Run npm test; the e2e stage needs code-server.”');
		assert.equal(
			memoryDescription(
				entry(
					'b',
					{
						source: { kind: 'landing', run: '0194abcdef012345', commit: 'abc1234fff', model: 'm', memo: 'sha256:x' },
						created_by: { kind: 'system', id: 'desk' },
						updated_at: '2025-03-01T00:00:00Z',
					},
					['src/parser.ts'],
				),
				now,
			),
			'⚠ evidence changed · from landing abc1234 · 1 Mar 2025 · “Run npm test; the e2e stage needs code-server.”',
		);
		assert.match(
			memoryDescription(
				entry('c', { created_by: { kind: 'agent', id: 'x' }, source: { kind: 'remember', run: 'run-123456789' } }),
				now,
			),
			/an agent \(run run-1234…\)/,
		);
		assert.equal(shortDay('not a date'), 'not a date');
	});

	it('lists memories newest first', () => {
		const list = newestMemoriesFirst([
			entry('old', { updated_at: '2026-01-01T00:00:00Z' }),
			entry('new', { updated_at: '2026-11-01T00:00:00Z' }),
		]);
		assert.deepEqual(
			list.map((e) => e.id),
			['new', 'old'],
		);
	});

	it('renders no link, image, icon or bidi override from a hostile memory file', () => {
		const evil = entry(
			hostile,
			{ title: hostile, text: `${hostile}\n${hostile}`, tags: [hostile], evidence: [{ path: hostile }] },
			[hostile],
		);
		const tooltip = memoryTooltip(evil);
		assertInertMarkdown(tooltip);
		assert.match(tooltip, /changed since it was remembered/);
		assertInertMarkdown(
			memoryRootTooltip(
				root({ name: 'main', memory: { exists: false, memories: 0, uncommitted: false, corrupt: hostile } }),
			),
		);
		assertInertMarkdown(memoryRootTooltip(root({ memory: { exists: true, memories: 2, uncommitted: true } })));
	});
});

describe("what a lineage command's arguments name", () => {
	const projects = [{ name: 'shop', path: '/repos/shop' }];

	it('a run: strings from a link, a run row, a Board row, a branch row (its latest run)', () => {
		assert.deepEqual(runArg('shop', 'run-1', projects), { project: 'shop', runId: 'run-1' });
		assert.deepEqual(runArg({ type: 'run', project: 'shop', run: { id: 'run-2', task: 't' } }, undefined, projects), {
			project: 'shop',
			runId: 'run-2',
		});
		assert.deepEqual(runArg({ type: 'board', project: 'shop', runId: 'run-3', node: 't' }, undefined, projects), {
			project: 'shop',
			runId: 'run-3',
		});
		const b = branch('b', 'gate', {
			runs: [
				{ id: 'r1', status: 'failed' },
				{ id: 'r2', status: 'validating' },
			],
		});
		assert.deepEqual(runArg({ type: 'branch', project: 'shop', branch: b }, undefined, projects), {
			project: 'shop',
			runId: 'r2',
		});
		assert.equal(runArg(undefined, undefined, projects), undefined, 'nothing named: the command asks');
		assert.equal(runArg({ type: 'memory' }, undefined, projects), undefined);
	});

	it('refuses a project of another window and an id of the wrong shape', () => {
		assert.throws(() => runArg('elsewhere', 'run-1', projects), /names no run of this window/);
		assert.throws(() => runArg('shop', '../../etc', projects), /names no run/);
		assert.throws(() => runArg({ type: 'run', project: 'shop', run: { id: 7 } }, undefined, projects), /names no run/);
		assert.throws(() => reportArg('shop', 'x'.repeat(200), projects), /names no report/);
		assert.throws(() => rootArg('shop', 'Main Root', projects), /names no root/);
		assert.throws(
			() => rootArg({ type: 'memoryRoot', project: 'other', root: { name: 'main' } }, undefined, projects),
			/names no root/,
		);
	});

	it('a board, a report, a root and a memory from their rows', () => {
		assert.deepEqual(boardArg({ type: 'run', project: 'shop', run: { id: 'r', task: 'task-1' } }, projects), {
			project: 'shop',
			node: 'task-1',
		});
		assert.deepEqual(boardArg({ type: 'branch', project: 'shop', branch: branch('b', 'running') }, projects), {
			project: 'shop',
			node: 'b',
		});
		assert.deepEqual(
			boardArg({ type: 'root', project: 'shop', root: root(), tally: 'tally-1', branches: [] }, projects),
			{
				project: 'shop',
				node: 'tally-1',
			},
		);
		assert.deepEqual(
			reportArg({ type: 'message', project: 'shop', message: message(4, 'report') }, undefined, projects),
			{
				project: 'shop',
				report: 'm-4',
			},
		);
		assert.throws(() =>
			reportArg({ type: 'message', project: 'shop', message: message(4, 'note') }, undefined, projects),
		);
		assert.deepEqual(
			rootArg({ type: 'memoryRoot', project: 'shop', root: root({ name: 'parser' }) }, undefined, projects),
			{
				project: 'shop',
				root: 'parser',
			},
		);
		assert.deepEqual(rootArg('shop', 'main', projects), { project: 'shop', root: 'main' });
		assert.deepEqual(memoryArg({ type: 'memory', project: 'shop', root: 'main', entry: entry('0194-a') }, projects), {
			project: 'shop',
			root: 'main',
			id: '0194-a',
			title: 'Tests',
		});
	});
});
