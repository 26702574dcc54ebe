import * as m from '../../../server/src/ai/model';
import type { AiObject, HistoryRefusalCode } from '../../../server/src/ai/types';
import { completeChain } from './chain';

/**
 * A project's history as a teammate exports it: a landed run (completeChain) and a second task's run
 * waiting at the gate (a PatchSet proposed, no Decision yet), every object sealed.
 */
export function historyFixture(baseCommit: string, fileBlob?: string) {
	const chain = completeChain(baseCommit, fileBlob);
	const waitingTask = m.newTask(chain.human, 'Cache GET /users', { goal: 'perf', intent: chain.intent });
	const waitingRun = m.newRun(chain.agent, waitingTask, baseCommit);
	m.addRun(waitingTask, waitingRun);
	m.setTaskStatus(waitingTask, 'running');
	m.setRunStatus(waitingRun, 'patching');
	const waitingPatch = m.newPatchSet(chain.agent, waitingRun, { rationale: 'An LRU in front of the query' });
	m.addPatchSet(waitingRun, waitingPatch);
	m.setRunStatus(waitingRun, 'validating');
	const waitingProvenance = m.newProvenance(chain.agent, waitingRun, 'anthropic', 'claude-sonnet-4');
	const all: AiObject[] = [...chain.all, waitingTask, waitingRun, waitingPatch, waitingProvenance].map((o) =>
		m.seal(structuredClone(o)),
	);
	return { chain, waitingTask, waitingRun, waitingPatch, waitingProvenance, all };
}
export type HistoryFixture = ReturnType<typeof historyFixture>;

/** One way of rewriting the past on a pushed ref, and the reason import must give for it. */
export interface CraftedHistory {
	name: string;
	code: HistoryRefusalCode;
	/** The objects changed or added (resealed); the rest of the ref is as exported. */
	objects: AiObject[];
	/** The ids import must refuse. */
	refused: string[];
}

function shifted(object: AiObject, ms: number): string {
	return new Date(Date.parse(object.updated_at) + ms).toISOString();
}

/** A copy of `object` changed by `change`, dated `ms` after the original (before it when negative), resealed. */
function crafted<T extends AiObject>(object: T, change: (copy: T) => void, ms = 60_000): T {
	const copy = structuredClone(object);
	change(copy);
	copy.updated_at = shifted(object, ms);
	return m.seal(copy);
}

/** Every class of rewritten past the issue lists, and a few more, each on its own ref. */
export function craftedHistories(f: HistoryFixture): CraftedHistory[] {
	const { chain } = f;
	const later = <T extends AiObject>(object: T, change: (copy: T) => void) => crafted(object, change);
	const fresh = <T extends AiObject>(object: T): T => m.seal(object);
	const one = (name: string, code: HistoryRefusalCode, object: AiObject): CraftedHistory => ({
		name,
		code,
		objects: [object],
		refused: [object.object_id],
	});
	const stranger = m.newTask(chain.human, 'A task no one made');
	const duplicate = fresh({ ...structuredClone(f.waitingTask), object_id: chain.intent.object_id });
	const unsealed = structuredClone(f.all.find((o) => o.object_id === chain.task.object_id) as typeof chain.task);
	unsealed.title = 'Changed after sealing';
	return [
		one(
			'a completed run moved back to patching',
			'status_backwards',
			later(chain.run, (r) => (r.status = 'patching')),
		),
		one(
			'a done task moved back to draft',
			'status_backwards',
			later(chain.task, (t) => (t.status = 'draft')),
		),
		one(
			"an Intent's prompt rewritten",
			'immutable_changed',
			later(chain.intent, (i) => (i.prompt = 'Delete the user list API')),
		),
		one(
			'a second Decision for a landed run',
			'second_decision',
			fresh(m.newDecision(chain.human, chain.run, 'abandon', { rationale: 'changed my mind' })),
		),
		one(
			'a second Provenance for a run',
			'second_provenance',
			fresh(m.newProvenance(chain.agent, chain.run, 'openai', 'gpt-4')),
		),
		one(
			'a commit Decision with no PatchSet',
			'commit_without_patchset',
			fresh({ ...m.newDecision(chain.human, f.waitingRun, 'abandon'), decision_type: 'commit' }),
		),
		one(
			'a run of a task that does not exist',
			'unresolved_reference',
			fresh(m.newRun(chain.agent, stranger, chain.run.commit)),
		),
		one(
			"a Decision choosing another run's PatchSet",
			'unresolved_reference',
			fresh(
				m.newDecision(chain.human, f.waitingRun, 'commit', {
					chosen: { ...chain.patchset, run: f.waitingRun.object_id },
				}),
			),
		),
		one(
			'an older copy with other content',
			'older_copy_differs',
			crafted(chain.intent, (i) => (i.prompt = 'Remove pagination'), -60_000),
		),
		one(
			"a task's runs emptied",
			'history_rewritten',
			later(chain.task, (t) => (t.runs = [])),
		),
		one(
			"an intent's status history rewritten",
			'history_rewritten',
			later(chain.intent, (i) => (i.statuses = [i.statuses[0]!, { status: 'cancelled', changed_at: i.updated_at }])),
		),
		one(
			'a pipeline frame rewritten',
			'history_rewritten',
			later(chain.pipeline, (p) => (p.frames[0]!.summary = 'drop the users table')),
		),
		one(
			'a PatchSet moved to another run',
			'immutable_changed',
			later(chain.patchset, (p) => (p.run = f.waitingRun.object_id)),
		),
		one(
			"a run's plan swapped for something that is no revision of it",
			'immutable_changed',
			later(chain.run, (r) => (r.plan = f.waitingRun.object_id)),
		),
		{
			name: 'an object with a stored id under another type',
			code: 'duplicate_id',
			objects: [duplicate],
			refused: [duplicate.object_id],
		},
		one('a change left with the old seal', 'bad_checksum', unsealed),
	];
}

/** The ref's objects: the exported ones with `changes` put in place of the same ids, or added. */
export function withChanges(all: readonly AiObject[], changes: readonly AiObject[]): AiObject[] {
	const byId = new Map(changes.map((o) => [o.object_id, o]));
	const kept = all.filter((o) => !byId.has(o.object_id) || byId.get(o.object_id)!.object_type !== o.object_type);
	return [...kept, ...changes];
}
