import { execFileSync } from 'node:child_process';
/**
 * Forking a branch over a real project database: the roots (main listed once, New Lineage Root), the
 * one transaction of a fork (tally once, Intent/Task/Run, launch record, node, board, delivery,
 * receipt), receipts (replay, conflict, key derivation), each limit at and one over, the branch's
 * configuration from its starter's launch, and the lineage part of the run settings.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as m from '../../../server/src/ai/model';
import { summaryAgentTool, usageOfModels } from '../../../server/src/ai/tokenUsage';
import type { Intent, Run, Task } from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { receiptKey } from '../../../server/src/lineage/lineage';
import { defaultLineageLimits } from '../../../server/src/lineage/types';
import { parseRunSettings } from '../../../server/src/runs/settings';
import { checkRepo } from '../../../server/src/operations/lineage';
import { git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';
import { forkSettings, goRun, openLineage, personFork } from './lineageFixture';

const count = (
	db: { get<R extends object>(sql: string, p?: Array<string | number | null>): R | undefined },
	sql: string,
	params: string[] = [],
) => db.get<{ n: number }>(sql, params)!.n;

describe('lineage roots', () => {
	it('lists main once, at first open and again, and lists a new root; a second of that name is refused', async () => {
		const folder = tempDir();
		const first = await openLineage(folder);
		first.lineage.listMain('again', new Date().toISOString());
		assert.deepEqual(
			first.lineage.roots().map((r) => r.name),
			['main'],
		);
		const root = first.lineage.addRoot('experiments', 'Things to try', 'Jane', '2026-01-02T00:00:00.000Z');
		assert.equal(root.name, 'experiments');
		assert.deepEqual(root.memory, { exists: false, memories: 0, uncommitted: false });
		assert.throws(
			() => first.lineage.addRoot('experiments', '', 'Jane', '2026-01-03T00:00:00.000Z'),
			(e: unknown) => isDeskError(e, 'lineage.rootExists'),
		);
		first.db.close();
		const second = await openLineage(folder);
		assert.deepEqual(
			second.lineage.roots().map((r) => [r.name, r.branches, r.tally]),
			[
				['main', 0, undefined],
				['experiments', 0, undefined],
			],
		);
		second.db.close();
	});
});

describe('forking a branch', () => {
	it("by the person on main: the tally once, the branch's objects, node, board, delivery and receipt in one write", async () => {
		const { db, ai, lineage } = await openLineage(tempDir());
		const before = count(db, 'SELECT COUNT(*) AS n FROM ai_objects');
		const result = lineage.fork(personFork('req-00000001'));
		assert.equal(result.replayed, false);
		assert.equal(result.queued, true);
		assert.equal(result.root, 'main');
		assert.deepEqual(result.grant_chain, [`branch:${result.node}`, 'root:main', 'ultimate:person']);
		const tally = ai.require<Task>(result.tally, 'task');
		assert.equal(tally.tags['desk.lineage.kind'], 'tally');
		assert.equal(tally.status, 'running');
		assert.deepEqual(tally.runs, [], 'a tally has no runs');
		const task = ai.require<Task>(result.node, 'task');
		assert.equal(task.parent, result.tally, "the person's branch hangs under the tally");
		assert.deepEqual(task.requester, { kind: 'human', id: 'Jane Doe <jane@example.com>' });
		assert.deepEqual(task.runs, [result.run]);
		assert.equal(ai.require<Run>(result.run, 'run').status, 'created');
		assert.equal(ai.require<Intent>(result.intent, 'intent').prompt, 'Split the parser (req-00000001)');
		assert.equal(count(db, 'SELECT COUNT(*) AS n FROM ai_objects') - before, 4, 'tally, intent, task, run');
		assert.equal(
			db.get<{ tally_task: string }>("SELECT tally_task FROM lineage_roots WHERE name = 'main'")!.tally_task,
			result.tally,
		);
		const board = db.all<{ kind: string; node: string; reply_enabled: number; request_id: string }>(
			'SELECT kind, node, reply_enabled, request_id FROM board_messages ORDER BY seq',
		);
		assert.deepEqual(board, [
			{ kind: 'board.started.by', node: result.node, reply_enabled: 0, request_id: `started:${result.node}` },
			{ kind: 'input', node: result.node, reply_enabled: 1, request_id: `dlv:${result.node}:in` },
			{ kind: 'intent', node: result.tally, reply_enabled: 0, request_id: `intent:${result.node}` },
		]);
		assert.deepEqual(db.all('SELECT delivery_id, phase, request_id FROM board_deliveries'), [
			{ delivery_id: `dlv:${result.node}`, phase: 'input', request_id: `dlv:${result.node}:in` },
		]);
		assert.equal(count(db, 'SELECT COUNT(*) AS n FROM call_receipts'), 1);
		const record = db.get<{ json: string }>('SELECT json FROM launch_records')!;
		assert.deepEqual(JSON.parse(record.json).template.nodes, ['work'], "no starter's launch: the work node alone");
		// A second branch of main finds the tally the first one made.
		const second = lineage.fork(personFork('req-00000002'));
		assert.equal(second.tally, result.tally);
		assert.equal(count(db, "SELECT COUNT(*) AS n FROM lineage_nodes WHERE kind = 'tally'"), 1);
		assert.equal(lineage.roots()[0]!.branches, 2);
		assert.equal(lineage.isBranchTask(result.node), true);
		assert.equal(lineage.isBranchTask(result.tally), false);
		assert.equal(lineage.isTallyTask(result.tally), true);
		db.close();
	});

	it('answers a repeat of a receipt key with the first fork, and refuses the key with other arguments', async () => {
		const { db, lineage } = await openLineage(tempDir());
		const first = lineage.fork(personFork('req-00000003'));
		const again = lineage.fork(personFork('req-00000003'));
		assert.deepEqual(again, { ...first, replayed: true });
		assert.equal(count(db, "SELECT COUNT(*) AS n FROM lineage_nodes WHERE kind = 'branch'"), 1, 'one child');
		assert.throws(
			() =>
				lineage.fork(
					personFork('req-00000003', {
						receipt: { scope: 'person', key: 'req-00000003', hash: 'other', tool: 'prompt' },
					}),
				),
			(e: unknown) => isDeskError(e, 'lineage.receiptConflict'),
		);
		// The same key in another scope (another conversation's node) is another call.
		const other = lineage.fork(
			personFork('req-00000003', { receipt: { scope: 'task-x', key: 'req-00000003', hash: 'h', tool: 'branch' } }),
		);
		assert.notEqual(other.node, first.node);
		db.close();
	});

	it('derives a key from the scope, the tool and the canonical arguments when the caller names none', () => {
		const a = receiptKey('task-1', 'branch', { prompt: 'p', repo: '/r' });
		assert.equal(a, receiptKey('task-1', 'branch', { repo: '/r', prompt: 'p' }), 'key order does not matter');
		assert.notEqual(a, receiptKey('task-2', 'branch', { prompt: 'p', repo: '/r' }), 'another node');
		assert.notEqual(a, receiptKey('task-1', 'prompt', { prompt: 'p', repo: '/r' }), 'another tool');
		assert.notEqual(a, receiptKey('task-1', 'branch', { prompt: 'q', repo: '/r' }), 'other arguments');
		assert.equal(receiptKey('task-1', 'branch', { prompt: 'p' }, 'my-request-1'), 'my-request-1');
	});

	it('refuses an unknown root, writing nothing', async () => {
		const { db, lineage } = await openLineage(tempDir());
		assert.throws(
			() => lineage.fork(personFork('req-00000004', { root: 'nope' })),
			(e: unknown) => isDeskError(e, 'lineage.unknownRoot'),
		);
		assert.equal(count(db, 'SELECT COUNT(*) AS n FROM lineage_nodes'), 0);
		assert.equal(count(db, 'SELECT COUNT(*) AS n FROM ai_objects'), 0);
		db.close();
	});

	it('configures a branch of a run from its launch (agent, template, plugs at their frozen versions), the branch settings over it', async () => {
		const { db, ai, lineage } = await openLineage(tempDir());
		const starter = goRun(ai, db);
		const result = lineage.fork(personFork('req-00000005', { starter: { run: starter.run }, root: undefined }));
		assert.deepEqual(result.grant_chain, [`branch:${result.node}`, 'root:main', `ultimate:${starter.run}`]);
		const node = lineage.nodeOf(result.node)!;
		assert.deepEqual(node.config, {
			agent: 'scripted',
			template: ['plan', 'work'],
			isolation: 'shared',
			fromLaunch: starter.launch.launch_id,
			maxNotes: 50,
		});
		const task = ai.require<Task>(result.node, 'task');
		assert.equal(task.parent, starter.task);
		assert.deepEqual(task.requester, { kind: 'agent', id: starter.run });
		const starterIntent = ai.require<Task>(starter.task, 'task').intent;
		assert.equal(ai.require<Intent>(result.intent, 'intent').parent, starterIntent);
		const record = lineage.queued().find((q) => q.node === result.node)!.record;
		assert.deepEqual(
			record.plugs.map((p) => [p.name, p.version]),
			[['specs', 3]],
		);
		// The branch settings win over the launch.
		const overridden = lineage.fork(
			personFork('req-00000006', {
				starter: { run: starter.run },
				settings: forkSettings({}, { agent: 'claude', template: ['work'], isolation: 'worktree', maxAttempts: 1 }),
			}),
		);
		assert.deepEqual(lineage.nodeOf(overridden.node)!.config, {
			agent: 'claude',
			template: ['work'],
			isolation: 'worktree',
			maxAttempts: 1,
			fromLaunch: starter.launch.launch_id,
			maxNotes: 50,
		});
		// A branch of a branch forks its root and carries its starter's chain after the root.
		const sub = lineage.fork(personFork('req-00000007', { starter: { run: result.run }, root: undefined }));
		assert.deepEqual(sub.grant_chain, [
			`branch:${sub.node}`,
			'root:main',
			`branch:${result.node}`,
			`ultimate:${starter.run}`,
		]);
		assert.equal(lineage.nodeOf(sub.node)!.depth, 2);
		const tree = lineage.tree();
		const top = tree.roots[0]!.branches.map((b) => b.node.node);
		assert.deepEqual(
			top,
			[result.node, overridden.node],
			'top branches: those the conversation the person drives started',
		);
		assert.deepEqual(
			tree.roots[0]!.branches[0]!.children.map((c) => c.node.node),
			[sub.node],
			'a branch of a branch nests under it',
		);
		assert.deepEqual(tree.by_starter_run[starter.run], [result.node, overridden.node]);
		assert.equal(tree.roots[0]!.branches[0]!.state, 'queued');
		assert.equal(tree.roots[0]!.branches[0]!.subtree.branches, 2);
		// A branch's subtree costs what its runs' agents spent and what the summary agent spent on its landing.
		const branchRun = ai.require<Run>(result.run, 'run');
		const provenance = m.newProvenance(m.actor('system', 'desk'), branchRun, 'anthropic', 'claude-haiku-4-5');
		m.setUsage(
			provenance,
			usageOfModels([
				{ model: 'claude-haiku-4-5', input_tokens: 300, output_tokens: 30, total_tokens: 330, cost_usd: 0.001 },
			]),
		);
		const summary = m.newToolInvocation(m.actor('agent', 'summary:haiku'), branchRun, summaryAgentTool, {
			usage: { input_tokens: 1000, output_tokens: 200, total_tokens: 1200, cost_usd: 0.02 },
		});
		ai.put([provenance, summary]);
		const costed = lineage.tree().roots[0]!.branches[0]!.subtree;
		assert.deepEqual([costed.tokens, costed.cost_usd], [330 + 1200, 0.021]);
		db.close();
	});
});

describe('the limits along the grant chain', () => {
	const refusedFor = (limit: string) => (e: unknown) =>
		isDeskError(e, 'lineage.limit') && (e.data as { limit: string }).limit === limit;

	it('maxDepth: a branch at the depth is started, one deeper is refused', async () => {
		const { db, ai, lineage } = await openLineage(tempDir());
		const starter = goRun(ai, db);
		const settings = forkSettings({ maxDepth: 2 });
		const one = lineage.fork(personFork('req-00000010', { starter: { run: starter.run }, settings }));
		const two = lineage.fork(personFork('req-00000011', { starter: { run: one.run }, settings }));
		assert.equal(lineage.nodeOf(two.node)!.depth, 2);
		assert.throws(
			() => lineage.fork(personFork('req-00000012', { starter: { run: two.run }, settings })),
			refusedFor('maxDepth'),
		);
		db.close();
	});

	it('maxBranchesPerNode: the node that started as many as the limit is refused the next', async () => {
		const { db, ai, lineage } = await openLineage(tempDir());
		const starter = goRun(ai, db);
		const settings = forkSettings({ maxBranchesPerNode: 2, maxLiveBranches: 10 });
		lineage.fork(personFork('req-00000020', { starter: { run: starter.run }, settings }));
		lineage.fork(personFork('req-00000021', { starter: { run: starter.run }, settings }));
		assert.throws(
			() => lineage.fork(personFork('req-00000022', { starter: { run: starter.run }, settings })),
			refusedFor('maxBranchesPerNode'),
		);
		// The person's own branches on the root count for the person, not for that conversation.
		lineage.fork(personFork('req-00000023', { settings }));
		db.close();
	});

	it('maxLiveBranches: as many live as the limit refuses the next; an ended one no longer counts', async () => {
		const { db, ai, lineage } = await openLineage(tempDir());
		const settings = forkSettings({ maxLiveBranches: 2, maxBranchesPerNode: 10 });
		const first = lineage.fork(personFork('req-00000030', { settings }));
		lineage.fork(personFork('req-00000031', { settings }));
		assert.throws(() => lineage.fork(personFork('req-00000032', { settings })), refusedFor('maxLiveBranches'));
		// The first branch's run failed: its work ended.
		db.write((tx) => tx.run('UPDATE lineage_nodes SET queued = 0 WHERE node_id = ?', [first.node]));
		const run = ai.require<Run>(first.run, 'run');
		run.status = 'failed';
		run.updated_at = new Date(Date.now() + 1000).toISOString();
		ai.put([run]);
		assert.equal(lineage.tree().roots[0]!.branches[0]!.state, 'failed');
		lineage.fork(personFork('req-00000033', { settings }));
		db.close();
	});
});

describe('the lineage settings', () => {
	it('defaults every limit and takes each over; an unknown agent, limit or value is run.badSettings naming the field', () => {
		const defaults = parseRunSettings({});
		assert.deepEqual(defaults.lineage, { branch: {}, limits: defaultLineageLimits, memorizeOnLanding: false });
		const agents = [{ name: 'scripted', command: 'node' }];
		const set = parseRunSettings({
			agents,
			lineage: {
				branch: { agent: 'scripted', template: ['work'], isolation: 'worktree', maxAttempts: 3 },
				limits: { maxDepth: 3 },
				summaryAgent: 'scripted',
				memorizeOnLanding: true,
			},
		});
		assert.deepEqual(set.lineage, {
			branch: { agent: 'scripted', template: ['work'], isolation: 'worktree', maxAttempts: 3 },
			limits: { ...defaultLineageLimits, maxDepth: 3 },
			summaryAgent: 'scripted',
			memorizeOnLanding: true,
		});
		const refused = (lineage: unknown, field: string) =>
			assert.throws(
				() => parseRunSettings({ agents, lineage }),
				(e: unknown) => isDeskError(e, 'run.badSettings') && (e.data as { field: string }).field === field,
				field,
			);
		refused({ summaryAgent: 'claude' }, 'lineage.summaryAgent');
		refused({ branch: { agent: 'nobody' } }, 'lineage.branch.agent');
		refused({ branch: { isolation: 'folder' } }, 'lineage.branch.isolation');
		refused({ branch: { template: [] } }, 'lineage.branch.template');
		refused({ limits: { maxDepth: 0 } }, 'lineage.limits.maxDepth');
		refused({ limits: { maxDepth: 9 } }, 'lineage.limits.maxDepth');
		refused({ limits: { maxWidth: 2 } }, 'lineage.limits.maxWidth');
		refused({ memorizeOnLanding: 'yes' }, 'lineage.memorizeOnLanding');
		refused([], 'lineage');
	});
});

describe('the repository a branch names', () => {
	it('is the project, a link to it or one of its worktrees; a relative path, another repository or a folder inside is lineage.badRepo', () => {
		const root = tempDir();
		const top = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const other = makeRepo(path.join(root, 'other'), { commits: 1 });
		git(top, 'worktree', 'add', '-q', path.join(root, 'shop-wt'), '-b', 'side');
		fs.symlinkSync(top, path.join(root, 'link'));
		fs.mkdirSync(path.join(top, 'src'));
		checkRepo(top, top);
		checkRepo(top, path.join(root, 'shop-wt'));
		checkRepo(top, path.join(root, 'link'));
		const bad = (repo: string) =>
			assert.throws(
				() => checkRepo(top, repo),
				(e: unknown) => isDeskError(e, 'lineage.badRepo'),
				repo,
			);
		bad('shop');
		bad(other);
		bad(path.join(top, 'src'));
		bad(path.join(root, 'nowhere'));
		git(other, 'worktree', 'add', '-q', path.join(root, 'other-wt'), '-b', 'side');
		bad(path.join(root, 'other-wt'));
		// What an agent can make inside its work folder: a .git file naming a made-up git folder whose
		// commondir leads back to the project's, and one whose commondir is a FIFO (reading it would
		// hang the desk). Neither is a worktree git registered; neither is read.
		const fake = path.join(top, 'fake');
		fs.mkdirSync(path.join(fake, 'gitdir'), { recursive: true });
		fs.writeFileSync(path.join(fake, '.git'), 'gitdir: gitdir\n');
		fs.writeFileSync(path.join(fake, 'gitdir', 'commondir'), path.join(top, '.git') + '\n');
		bad(fake);
		const fifo = path.join(top, 'fifo');
		fs.mkdirSync(path.join(fifo, 'gitdir'), { recursive: true });
		fs.writeFileSync(path.join(fifo, '.git'), 'gitdir: gitdir\n');
		execFileSync('mkfifo', [path.join(fifo, 'gitdir', 'commondir')]);
		bad(fifo);
		// The refusal of a path that does not exist reads as the one of a path that does.
		const message = (repo: string) => {
			try {
				checkRepo(top, repo);
			} catch (error) {
				return (error as Error).message.replace(repo, '');
			}
			return '';
		};
		assert.equal(message(path.join(root, 'nowhere')), message(other));
	});
});
