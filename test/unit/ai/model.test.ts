import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { uuidv7, uuidv7Time } from '../../../server/src/ai/ids';
import * as m from '../../../server/src/ai/model';
import type {
	AiObject,
	ApplyStatus,
	IntentStatus,
	RunStatus,
	StepStatus,
	TaskStatus,
} from '../../../server/src/ai/types';
import { isDeskError } from '../../../server/src/core/errors';
import { completeChain } from './chain';

const human = m.actor('human', 'alice');
const agent = m.actor('agent', 'coder');

/** The complete chain of ./chain.ts, with a constraint, the PatchSet's diff as an artifact and the intent's commit too. */
function chain() {
	const diff = Buffer.from('--- a/src/users.ts\n+++ b/src/users.ts\n');
	const objects = completeChain('b'.repeat(40), 'a'.repeat(40), {
		resultCommit: 'c'.repeat(40),
		artifact: m.artifactFor(diff, 'local', 'patches/1.diff', 'text/x-diff'),
	});
	m.addConstraint(objects.task, 'Keep the response shape');
	m.setIntentCommit(objects.intent, 'c'.repeat(40));
	return { ...objects, tool: objects.read };
}

describe('status transitions, exactly as drawn', () => {
	const cases: Array<{
		name: string;
		states: string[];
		allowed: Record<string, string[]>;
		make: () => { get(): string; set(to: string): void; history(): number };
	}> = [
		{
			name: 'intent',
			states: ['draft', 'active', 'completed', 'cancelled'],
			allowed: { draft: ['active', 'cancelled'], active: ['completed', 'cancelled'], completed: [], cancelled: [] },
			make: () => {
				const intent = m.newIntent(human, 'p');
				m.setIntentContent(intent, 'c');
				return {
					get: () => m.intentStatus(intent),
					set: (to) => m.setIntentStatus(intent, to as IntentStatus),
					history: () => intent.statuses.length,
				};
			},
		},
		{
			name: 'plan step',
			states: ['pending', 'progressing', 'completed', 'failed', 'skipped'],
			allowed: {
				pending: ['progressing', 'failed', 'skipped'],
				progressing: ['completed', 'failed'],
				completed: [],
				failed: [],
				skipped: [],
			},
			make: () => {
				const step = m.newPlanStep('s');
				return {
					get: () => m.stepStatus(step),
					set: (to) => m.setStepStatus(step, to as StepStatus),
					history: () => step.statuses.length,
				};
			},
		},
		{
			name: 'task',
			states: ['draft', 'running', 'done', 'failed', 'cancelled'],
			allowed: {
				draft: ['running', 'failed', 'cancelled'],
				running: ['done', 'failed', 'cancelled'],
				done: [],
				failed: [],
				cancelled: [],
			},
			make: () => {
				const task = m.newTask(human, 't');
				return { get: () => task.status, set: (to) => m.setTaskStatus(task, to as TaskStatus), history: () => 0 };
			},
		},
		{
			name: 'run',
			states: ['created', 'patching', 'validating', 'completed', 'failed'],
			allowed: {
				created: ['patching'],
				patching: ['validating', 'failed'],
				validating: ['completed', 'failed', 'patching'],
				completed: [],
				failed: [],
			},
			make: () => {
				const run = m.newRun(agent, m.newTask(human, 't'), 'abc');
				return { get: () => run.status, set: (to) => m.setRunStatus(run, to as RunStatus), history: () => 0 };
			},
		},
		{
			name: 'patchset',
			states: ['proposed', 'applied', 'rejected'],
			allowed: { proposed: ['applied', 'rejected'], applied: [], rejected: [] },
			make: () => {
				const patchset = m.newPatchSet(agent, m.newRun(agent, m.newTask(human, 't'), 'abc'));
				return {
					get: () => patchset.apply_status,
					set: (to) => m.setApplyStatus(patchset, to as ApplyStatus),
					history: () => 0,
				};
			},
		},
	];
	/** Walks an object to `state` along allowed moves (breadth-first over the drawn graph). */
	const reach = (c: (typeof cases)[number], state: string) => {
		const object = c.make();
		const path: string[] = [];
		const find = (from: string, seen: Set<string>): boolean => {
			if (from === state) {
				return true;
			}
			for (const next of c.allowed[from] ?? []) {
				if (!seen.has(next)) {
					seen.add(next);
					path.push(next);
					if (find(next, seen)) {
						return true;
					}
					path.pop();
				}
			}
			return false;
		};
		assert.ok(find(object.get(), new Set([object.get()])), `${state} is reachable`);
		for (const step of path) {
			object.set(step);
		}
		return object;
	};
	for (const c of cases) {
		it(`${c.name}: every legal move works, every illegal one is refused and changes nothing`, () => {
			for (const from of c.states) {
				for (const to of c.states) {
					const object = reach(c, from);
					const before = object.history();
					if (c.allowed[from]!.includes(to)) {
						object.set(to);
						assert.equal(object.get(), to, `${c.name} ${from} → ${to}`);
					} else {
						assert.throws(
							() => object.set(to),
							(e) => isDeskError(e, 'ai.illegalTransition') && e.data['from'] === from && e.data['to'] === to,
							`${c.name} ${from} → ${to}`,
						);
						assert.equal(object.get(), from);
						assert.equal(object.history(), before, 'the history is unchanged');
					}
				}
			}
		});
	}

	it('an intent becomes active only with its analysed content', () => {
		const intent = m.newIntent(human, 'p');
		assert.throws(
			() => m.setIntentStatus(intent, 'active'),
			(e) => isDeskError(e, 'ai.illegalTransition'),
		);
		assert.equal(m.intentStatus(intent), 'draft');
	});
});

describe('ids, hashes and seals', () => {
	it('makes UUID v7 ids that sort by creation time', () => {
		const ids = Array.from({ length: 2000 }, () => uuidv7());
		assert.deepEqual([...ids].sort(), ids);
		assert.equal(new Set(ids).size, ids.length);
		for (const id of ids.slice(0, 5)) {
			assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		}
		const before = Date.now();
		const time = uuidv7Time(uuidv7());
		assert.ok(time >= before && time <= Date.now() + 1, 'the id carries its creation time');
	});

	it('seals with a checksum that a later check verifies, and that any change breaks', () => {
		const { task } = chain();
		m.seal(task);
		assert.equal(m.verifyChecksum(task), true);
		const copy = m.fromJson(JSON.parse(JSON.stringify(m.toJson(task))));
		assert.equal(m.verifyChecksum(copy), true, 'the seal survives a round trip');
		(copy as typeof task).title = 'Tampered';
		assert.equal(m.verifyChecksum(copy), false);
		m.addConstraint(task, 'Another rule');
		assert.equal(task.checksum, undefined, 'a change unseals');
		assert.equal(m.verifyChecksum(task), false);
	});

	it('gives each object a stable content hash, whatever the key order', () => {
		const { plan } = chain();
		const reordered = Object.fromEntries(Object.entries(m.toJson(plan)).reverse());
		assert.equal(m.objectHash(m.fromJson(reordered)), m.objectHash(plan));
		assert.equal(m.objectHash(plan), createHash('sha256').update(m.toBytes(plan)).digest('hex'));
	});

	it('registers the AI types as 8–18 and refuses them as git pack types', () => {
		const names = [
			'intent',
			'plan',
			'task',
			'run',
			'patchset',
			'evidence',
			'decision',
			'provenance',
			'tool_invocation',
			'context_snapshot',
			'context_pipeline',
		] as const;
		assert.deepEqual(
			names.map((n) => m.objectTypeId(n)),
			[8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18],
		);
		assert.deepEqual(
			[8, 18, 7, 19].map((id) => m.objectTypeName(id)),
			['intent', 'context_pipeline', undefined, undefined],
		);
		assert.equal(m.toPackType('commit'), 1);
		assert.equal(m.toPackType('ref_delta'), 7);
		assert.throws(
			() => m.toPackType('intent'),
			(e) => isDeskError(e, 'ai.packType') && /git packs cannot hold it/.test(e.message),
		);
		assert.throws(
			() => m.toPackType('bogus'),
			(e) => isDeskError(e, 'ai.badObject'),
		);
	});

	it('checks artifact integrity and content equality by SHA-256', () => {
		const content = Buffer.from('report');
		const ref = m.artifactFor(content, 'local', 'a.txt');
		assert.equal(m.verifyIntegrity(ref, content), true);
		assert.equal(m.verifyIntegrity(ref, Buffer.from('REPORT')), false);
		assert.equal(m.verifyIntegrity({ store: 'local', key: 'x' }, content), false, 'no hash, nothing verified');
		assert.equal(m.contentEq(ref, m.artifactFor(content, 's3', 'elsewhere')), true);
		assert.equal(m.contentEq(ref, m.artifactFor(Buffer.from('other'), 'local', 'a.txt')), false);
		assert.equal(m.contentEq({ store: 'a', key: 'b' }, { store: 'a', key: 'b' }), false);
	});
});

describe('context pipelines and plans', () => {
	it('gives frames stable monotonic ids and evicts the oldest unprotected frame past max_frames', () => {
		const pipeline = m.newContextPipeline(agent, { maxFrames: 3 });
		const seed = m.pushFrame(pipeline, 'intent_analysis', 'seed');
		const a = m.pushFrame(pipeline, 'step_summary', 'a');
		const save = m.pushFrame(pipeline, 'checkpoint', 'save');
		const b = m.pushFrame(pipeline, 'tool_call', 'b');
		assert.deepEqual([seed, a, save, b], [0, 1, 2, 3]);
		assert.deepEqual(
			pipeline.frames.map((f) => f.frame_id),
			[0, 2, 3],
			'a, the oldest unprotected, went',
		);
		const c = m.pushFrame(pipeline, { other: 'note' }, 'c');
		assert.deepEqual(
			pipeline.frames.map((f) => f.frame_id),
			[0, 2, 4],
		);
		assert.equal(c, 4);
		assert.equal(m.frameById(pipeline, save)?.summary, 'save');
		assert.equal(m.frameById(pipeline, a), undefined);
		const step = m.newPlanStep('uses the seed');
		step.iframes.push(seed);
		assert.equal(
			m.frameById(pipeline, step.iframes[0]!)?.kind,
			'intent_analysis',
			"a step's iframes stay valid after eviction",
		);
		const unlimited = m.newContextPipeline(agent);
		for (let i = 0; i < 50; i++) {
			m.pushFrame(unlimited, 'code_change', `c${i}`);
		}
		assert.equal(unlimited.frames.length, 50);
		const allProtected = m.newContextPipeline(agent, { maxFrames: 1 });
		m.pushFrame(allProtected, 'intent_analysis', 'x');
		m.pushFrame(allProtected, 'checkpoint', 'y');
		assert.equal(allProtected.frames.length, 2, 'protected frames are never evicted');
	});

	it('chains plan revisions through previous, keeping the pipeline and window; steps spawn sub-tasks', () => {
		const { plan, step, task } = chain();
		const v2 = m.newRevision(plan, agent);
		const v3 = m.newRevision(v2, agent);
		assert.deepEqual([v3.previous, v2.previous, plan.previous], [v2.object_id, plan.object_id, undefined]);
		assert.deepEqual(v3.fwindow, [0, 1]);
		assert.equal(v3.pipeline, plan.pipeline);
		assert.throws(
			() => m.setFwindow(v3, [3, 1]),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		const sub = m.spawnSubTask(step, agent, 'Write the migration', { parent: task });
		assert.equal(step.task, sub.object_id);
		assert.equal(sub.parent, task.object_id);
		assert.equal(sub.intent, task.intent);
	});

	it('keeps Task.runs and Run.patchsets append-only and consistent both ways', () => {
		const { task, run, patchset } = chain();
		m.addRun(task, run);
		assert.deepEqual(task.runs, [run.object_id], 'adding the same run twice adds nothing');
		const other = m.newRun(agent, m.newTask(human, 'other'), 'abc');
		assert.throws(
			() => m.addRun(task, other),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		assert.throws(
			() => m.addPatchSet(other, patchset),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		const second = m.newRun(agent, task, 'abc');
		m.addRun(task, second);
		assert.deepEqual(task.runs, [run.object_id, second.object_id]);
	});

	it('computes token totals and refuses a Commit decision without its patchset', () => {
		const { provenance, run } = chain();
		assert.deepEqual(provenance.token_usage, {
			input_tokens: 1200,
			output_tokens: 300,
			total_tokens: 1500,
			cost_usd: 0.0125,
		});
		assert.throws(
			() => m.setTokenUsage(provenance, -1, 2),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		assert.throws(
			() => m.newDecision(human, run, 'commit'),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		assert.equal(m.newDecision(human, run, 'retry').decision_type, 'retry');
	});
});

describe('serialisation', () => {
	it('round-trips every object type', () => {
		const objects = chain();
		const all: AiObject[] = [
			objects.intent,
			objects.pipeline,
			objects.plan,
			objects.task,
			objects.snapshot,
			objects.run,
			objects.tool,
			objects.patchset,
			objects.evidence,
			objects.provenance,
			objects.decision,
		];
		assert.equal(new Set(all.map((o) => o.object_type)).size, 11);
		for (const object of all) {
			const back = m.fromBytes(m.toBytes(object));
			assert.deepEqual(m.toJson(back), m.toJson(object), object.object_type);
			assert.equal(m.objectHash(back), m.objectHash(object));
		}
	});

	it('leaves optional and empty fields out, and reads them back as defaults', () => {
		const intent = m.newIntent(human, 'only a prompt');
		const json = m.toJson(intent);
		for (const absent of ['content', 'parent', 'commit', 'plan', 'tags', 'external_ids', 'checksum']) {
			assert.equal(absent in json, false, absent);
		}
		const task = m.newTask(human, 'bare');
		const taskJson = m.toJson(task);
		for (const absent of ['constraints', 'acceptance_criteria', 'runs', 'dependencies', 'goal']) {
			assert.equal(absent in taskJson, false, absent);
		}
		const back = m.fromJson(taskJson) as typeof task;
		assert.deepEqual([back.constraints, back.runs, back.tags], [[], [], {}]);
		const run = m.newRun(agent, task, 'abc');
		const read = m.newToolInvocation(agent, run, 'read_file', {}, { read: ['a.ts'] });
		assert.equal('paths_written' in (m.toJson(read)['io_footprint'] as object), false);
		assert.deepEqual(
			(m.fromJson(m.toJson(read)) as typeof read).io_footprint,
			{ paths_read: ['a.ts'], paths_written: [] },
			'nested empty lists come back too',
		);
	});

	it('keeps the empty lists and nulls an agent or a tool sent, inside args, data, parameters and metrics', () => {
		const task = m.newTask(human, 'carried data');
		const run = m.newRun(agent, task, 'abc');
		run.metrics = { nodes: [], note: null };
		const call = m.newToolInvocation(agent, run, 'grep', { pattern: 'x', paths: [], limit: null, opts: {} });
		const nullArgs = m.newToolInvocation(agent, run, 'ping', null);
		const provenance = m.newProvenance(agent, run, 'p', 'm');
		provenance.parameters = { stop: [], seed: null };
		const pipeline = m.newContextPipeline(agent);
		m.pushFrame(pipeline, 'tool_call', 'f', { data: { files: [], error: null } });
		const plan = m.newPlan(agent);
		const step = m.newPlanStep('s');
		step.inputs = { files: [] };
		step.checks = null;
		m.addStep(plan, step);
		for (const object of [run, call, nullArgs, provenance, pipeline, plan] as AiObject[]) {
			assert.deepEqual(m.toJson(m.fromBytes(m.toBytes(object))), m.toJson(object), `${object.object_type} round-trips`);
		}
		const back = <T extends AiObject>(o: T) => m.fromBytes(m.toBytes(o)) as T;
		assert.deepEqual(back(run).metrics, { nodes: [], note: null });
		assert.deepEqual(back(call).args, { pattern: 'x', paths: [], limit: null, opts: {} });
		assert.equal(back(nullArgs).args, null, 'a null the tool was called with stays null');
		assert.deepEqual(back(provenance).parameters, { stop: [], seed: null });
		assert.deepEqual(back(pipeline).frames[0]!.data, { files: [], error: null });
		assert.deepEqual(back(plan).steps[0]!.inputs, { files: [] });
		assert.equal(back(plan).steps[0]!.checks, null);
		// The model's own optional fields are still left out when empty.
		assert.equal('patchsets' in m.toJson(run), false);
		assert.equal('iframes' in (m.toJson(plan)['steps'] as Array<Record<string, unknown>>)[0]!, false);
	});

	it('still reads renamed fields under their old names', () => {
		const { evidence, tool, decision, patchset } = chain();
		const old = (object: AiObject, renames: Record<string, string>) => {
			const json = m.toJson(object);
			for (const [now, was] of Object.entries(renames)) {
				json[was] = json[now];
				delete json[now];
			}
			return m.fromJson(json);
		};
		assert.equal(
			(old(evidence, { run_id: 'run', report_artifacts: 'reports' }) as typeof evidence).run_id,
			evidence.run_id,
		);
		assert.equal((old(tool, { tool_name: 'tool' }) as typeof tool).tool_name, 'read_file');
		assert.equal(
			(old(decision, { chosen_patchset_id: 'chosen_patchset' }) as typeof decision).chosen_patchset_id,
			patchset.object_id,
		);
		assert.equal((old(patchset, { apply_status: 'status' }) as typeof patchset).apply_status, 'applied');
	});

	it('refuses unknown schema versions, unknown types, missing fields and prototype keys', () => {
		const { run } = chain();
		const json = m.toJson(run);
		assert.throws(
			() => m.fromJson({ ...json, schema_version: 2 }),
			(e) => isDeskError(e, 'ai.unknownSchema') && e.data['schema_version'] === 2,
		);
		assert.throws(
			() => m.fromJson({ ...json, header_version: 9 }),
			(e) => isDeskError(e, 'ai.unknownSchema'),
		);
		assert.throws(
			() => m.fromJson({ ...json, object_type: 'widget' }),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		const { task: _task, ...noTask } = json;
		assert.throws(
			() => m.fromJson(noTask),
			(e) => isDeskError(e, 'ai.badObject') && e.data['field'] === 'task',
		);
		assert.throws(
			() => m.fromBytes(Buffer.from('{not json')),
			(e) => isDeskError(e, 'ai.badObject'),
		);
		const hostile = m.fromJson(JSON.parse(JSON.stringify(json).replace('{', '{"__proto__":{"polluted":true},')));
		assert.equal((hostile as unknown as { polluted?: boolean }).polluted, undefined);
		assert.equal(({} as { polluted?: boolean }).polluted, undefined);
	});
});
