import { DeskError } from '../core/errors';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';
import { fromJson, objectHash, toJson } from '../ai/model';
import type {
	AiObject,
	AiObjectType,
	ContextPipeline,
	ContextSnapshot,
	Decision,
	Evidence,
	Intent,
	PatchSet,
	Plan,
	Provenance,
	Run,
	Task,
	ToolInvocation,
} from '../ai/types';
import { canonicalJson } from '../ai/canonical';
import type { StoredAiObjects } from '../ai/importRules';

/**
 * AI objects in a project's database, and the relationship queries the Runs view needs. Writes keep
 * the seed's append-only rule: a stored object's histories (statuses, Task.runs, Run.patchsets,
 * step statuses) may only grow; an update that drops or reorders an entry is refused.
 */
export class AiStore {
	constructor(private readonly db: DurableDatabase) {}

	/** Stores the objects in one durable transaction; returns how many were new or changed. */
	put(objects: readonly AiObject[]): number {
		return this.db.write((tx) => this.putIn(tx, objects));
	}

	/** Stores the objects as part of a transaction of the caller's (Go writes its run with its launch). */
	putIn(tx: WriteTransaction, objects: readonly AiObject[]): number {
		let changed = 0;
		for (const object of objects) {
			const hash = objectHash(object);
			const existing = tx.get<{ hash: string; json: string; updated_at: string }>(
				'SELECT hash, json, updated_at FROM ai_objects WHERE object_id = ?',
				[object.object_id],
			);
			if (existing?.hash === hash) {
				continue;
			}
			if (existing && existing.updated_at > object.updated_at) {
				continue; // An older copy (an import, a stale export) never overwrites a newer one.
			}
			if (existing) {
				checkAppendOnly(fromJson(JSON.parse(existing.json)), object);
			}
			const refs = references(object);
			tx.run(
				`INSERT INTO ai_objects (object_id, object_type, created_at, updated_at, ref_task, ref_run, ref_parent, ref_intent, hash, json)
				 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				 ON CONFLICT (object_id) DO UPDATE SET updated_at = excluded.updated_at, ref_task = excluded.ref_task, ref_run = excluded.ref_run,
				   ref_parent = excluded.ref_parent, ref_intent = excluded.ref_intent, hash = excluded.hash, json = excluded.json`,
				[
					object.object_id,
					object.object_type,
					object.created_at,
					object.updated_at,
					refs.task,
					refs.run,
					refs.parent,
					refs.intent,
					hash,
					canonicalJson(toJson(object)),
				],
			);
			changed++;
		}
		return changed;
	}

	/**
	 * An import: `judge` reads the stored objects and the objects it accepts are stored, in one
	 * transaction, so nothing another process writes in between escapes the judgement.
	 */
	importObjects<R extends { accepted: readonly AiObject[] }>(
		judge: (stored: StoredAiObjects) => R,
	): R & { added: number } {
		return this.db.write((tx) => {
			const judged = judge({
				get(id) {
					const row = tx.get<{ json: string }>('SELECT json FROM ai_objects WHERE object_id = ?', [id]);
					return row ? fromJson(JSON.parse(row.json)) : undefined;
				},
				ofRun(runId, type) {
					return tx
						.all<{ object_id: string }>('SELECT object_id FROM ai_objects WHERE ref_run = ? AND object_type = ?', [
							runId,
							type,
						])
						.map((r) => r.object_id);
				},
			});
			return { ...judged, added: this.putIn(tx, judged.accepted) };
		});
	}

	get<T extends AiObject = AiObject>(id: string): T | undefined {
		const row = this.db.get<{ json: string }>('SELECT json FROM ai_objects WHERE object_id = ?', [id]);
		return row ? (fromJson(JSON.parse(row.json)) as T) : undefined;
	}

	require<T extends AiObject>(id: string, type: T['object_type']): T {
		const object = this.get<T>(id);
		if (!object || object.object_type !== type) {
			throw new DeskError('ai.notFound', `No ${type} ${id} in this project.`, { id, type });
		}
		return object;
	}

	/** Objects of a type, oldest first (UUID v7 ids sort by creation time). */
	list<T extends AiObject>(type: T['object_type']): T[] {
		return this.rows<T>('SELECT json FROM ai_objects WHERE object_type = ? ORDER BY object_id', [type]);
	}

	all(): AiObject[] {
		return this.rows('SELECT json FROM ai_objects ORDER BY object_id', []);
	}

	hashes(): Map<string, string> {
		return new Map(
			this.db
				.all<{ object_id: string; hash: string }>('SELECT object_id, hash FROM ai_objects')
				.map((r) => [r.object_id, r.hash]),
		);
	}

	/** A Task's runs in the order Task.runs records them. */
	taskRuns(task: Task): Run[] {
		return task.runs.map((id) => this.get<Run>(id)).filter((r): r is Run => r?.object_type === 'run');
	}

	/** A Run's patchsets in the order Run.patchsets records them. */
	runPatchSets(run: Run): PatchSet[] {
		return run.patchsets
			.map((id) => this.get<PatchSet>(id))
			.filter((p): p is PatchSet => p?.object_type === 'patchset');
	}

	runEvidence(runId: string): Evidence[] {
		return this.byRun<Evidence>(runId, 'evidence');
	}

	runDecision(runId: string): Decision | undefined {
		return this.byRun<Decision>(runId, 'decision').at(-1);
	}

	runProvenance(runId: string): Provenance | undefined {
		return this.byRun<Provenance>(runId, 'provenance').at(-1);
	}

	runToolInvocations(runId: string): ToolInvocation[] {
		return this.byRun<ToolInvocation>(runId, 'tool_invocation');
	}

	runSnapshot(run: Run): ContextSnapshot | undefined {
		return run.snapshot ? this.get<ContextSnapshot>(run.snapshot) : undefined;
	}

	/** An intent and its predecessors through `parent`, newest first. */
	intentChain(intent: Intent): Intent[] {
		return this.follow(intent, (i) => i.parent);
	}

	/** A plan and its earlier revisions through `previous`, newest first. */
	planRevisions(plan: Plan): Plan[] {
		return this.follow(plan, (p) => p.previous);
	}

	intentTasks(intentId: string): Task[] {
		return this.rows<Task>(
			"SELECT json FROM ai_objects WHERE object_type = 'task' AND ref_intent = ? ORDER BY object_id",
			[intentId],
		);
	}

	subTasks(taskId: string): Task[] {
		return this.rows<Task>(
			"SELECT json FROM ai_objects WHERE object_type = 'task' AND ref_parent = ? ORDER BY object_id",
			[taskId],
		);
	}

	pipeline(id: string | undefined): ContextPipeline | undefined {
		return id ? this.get<ContextPipeline>(id) : undefined;
	}

	private byRun<T extends AiObject>(runId: string, type: AiObjectType): T[] {
		return this.rows<T>('SELECT json FROM ai_objects WHERE ref_run = ? AND object_type = ? ORDER BY object_id', [
			runId,
			type,
		]);
	}

	private follow<T extends AiObject>(start: T, next: (object: T) => string | undefined): T[] {
		const chain: T[] = [start];
		const seen = new Set([start.object_id]);
		for (let id = next(start); id !== undefined && !seen.has(id);) {
			const object = this.get<T>(id);
			if (!object) {
				break;
			}
			chain.push(object);
			seen.add(id);
			id = next(object);
		}
		return chain;
	}

	private rows<T extends AiObject>(sql: string, params: string[]): T[] {
		return this.db.all<{ json: string }>(sql, params).map((r) => fromJson(JSON.parse(r.json)) as T);
	}
}

function references(object: AiObject): {
	task: string | null;
	run: string | null;
	parent: string | null;
	intent: string | null;
} {
	const refs = {
		task: null as string | null,
		run: null as string | null,
		parent: null as string | null,
		intent: null as string | null,
	};
	switch (object.object_type) {
		case 'run':
			refs.task = object.task;
			break;
		case 'patchset':
			refs.run = object.run;
			break;
		case 'evidence':
		case 'decision':
		case 'provenance':
		case 'tool_invocation':
			refs.run = object.run_id;
			break;
		case 'intent':
			refs.parent = object.parent ?? null;
			break;
		case 'plan':
			refs.parent = object.previous ?? null;
			break;
		case 'task':
			refs.parent = object.parent ?? null;
			refs.intent = object.intent ?? null;
			break;
		default:
			break;
	}
	return refs;
}

/** Histories only grow: every entry stored before is still there, in its place. */
function checkAppendOnly(before: AiObject, after: AiObject): void {
	const lists: Array<[string, unknown[], unknown[]]> = [];
	if (before.object_type === 'intent' && after.object_type === 'intent') {
		lists.push(['statuses', before.statuses, after.statuses]);
	} else if (before.object_type === 'task' && after.object_type === 'task') {
		lists.push(['runs', before.runs, after.runs]);
	} else if (before.object_type === 'run' && after.object_type === 'run') {
		lists.push(['patchsets', before.patchsets, after.patchsets]);
	} else if (before.object_type === 'plan' && after.object_type === 'plan') {
		before.steps.forEach((step, i) =>
			lists.push([`steps[${i}].statuses`, step.statuses, after.steps[i]?.statuses ?? []]),
		);
	}
	if (before.object_type !== after.object_type) {
		throw new DeskError('ai.badObject', `${before.object_id} is a ${before.object_type}, not a ${after.object_type}.`, {
			id: before.object_id,
		});
	}
	for (const [name, old, now] of lists) {
		const kept = old.every((entry, i) => i < now.length && canonicalJson(entry) === canonicalJson(now[i]));
		if (!kept) {
			throw new DeskError(
				'ai.illegalTransition',
				`${after.object_type} ${after.object_id}: ${name} is append-only; an update may not drop or change its entries.`,
				{ id: after.object_id, field: name },
			);
		}
	}
}
