import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeImport, type StoredAiObjects } from '../../../server/src/ai/importRules';
import * as m from '../../../server/src/ai/model';
import type { AiObject, Plan, Run } from '../../../server/src/ai/types';
import { craftedHistories, historyFixture, withChanges } from './craftedHistory';

/** The project's stored objects, as the import's transaction reads them. */
function storedOf(objects: readonly AiObject[]): StoredAiObjects {
	const byId = new Map(objects.map((o) => [o.object_id, structuredClone(o)]));
	return {
		get: (id) => byId.get(id),
		ofRun: (runId, type) =>
			[...byId.values()]
				.filter((o) => o.object_type === type && 'run_id' in o && o.run_id === runId)
				.map((o) => o.object_id),
	};
}

const ids = (objects: readonly AiObject[]) => objects.map((o) => o.object_id).sort();

/** Each object as it was a minute earlier, before the run landed: what a teammate may have imported mid-run. */
function beforeLanding(f: ReturnType<typeof historyFixture>): AiObject[] {
	const { chain } = f;
	return f.all
		.filter((o) => o.object_id !== chain.decision.object_id)
		.map((o) => {
			const earlier = structuredClone(o);
			earlier.updated_at = new Date(Date.parse(o.updated_at) - 60_000).toISOString();
			delete earlier.checksum;
			switch (earlier.object_type) {
				case 'run':
					if (earlier.object_id === chain.run.object_id) {
						earlier.status = 'validating';
					}
					break;
				case 'task':
					if (earlier.object_id === chain.task.object_id) {
						earlier.status = 'running';
					}
					break;
				case 'intent':
					earlier.statuses = earlier.statuses.slice(0, -1);
					delete earlier.commit;
					break;
				case 'patchset':
					earlier.apply_status = 'proposed';
					break;
				case 'plan':
					earlier.steps[0]!.statuses = earlier.steps[0]!.statuses.slice(0, -1);
					earlier.steps[0]!.oframes = [];
					break;
				case 'context_pipeline':
					earlier.frames = earlier.frames.slice(0, -1);
					earlier.next_frame_id--;
					break;
				case 'provenance':
					delete earlier.token_usage;
					break;
				default:
					break;
			}
			return earlier;
		});
}

describe('history import rules', () => {
	const f = historyFixture('a'.repeat(40));

	it('takes a whole new history, its references resolved within the import', () => {
		const judged = judgeImport(f.all, storedOf([]));
		assert.deepEqual(judged.refused, []);
		assert.deepEqual(ids(judged.accepted), ids(f.all));
	});

	it('takes later states of stored objects, and leaves earlier ones as they are', () => {
		const earlier = beforeLanding(f);
		const forward = judgeImport(f.all, storedOf(earlier));
		assert.deepEqual(forward.refused, []);
		assert.ok(
			forward.accepted.some((o) => o.object_id === f.chain.decision.object_id),
			'the Decision is new',
		);
		assert.equal(forward.accepted.length + forward.unchanged.length, f.all.length);
		const backward = judgeImport(earlier, storedOf(f.all));
		assert.deepEqual([backward.refused, backward.accepted], [[], []], "a teammate's older export changes nothing");
		assert.equal(backward.unchanged.length, earlier.length);
	});

	for (const crafted of craftedHistories(f).filter((c) => c.code !== 'bad_checksum')) {
		it(`refuses ${crafted.name} (${crafted.code}) and takes nothing of it`, () => {
			const judged = judgeImport(withChanges(f.all, crafted.objects), storedOf(f.all));
			assert.deepEqual(judged.accepted, []);
			assert.deepEqual(
				[...new Set(judged.refused.map((r) => r.object_id))].sort(),
				[...crafted.refused].sort(),
				JSON.stringify(judged.refused),
			);
			for (const refusal of judged.refused) {
				assert.equal(refusal.code, crafted.code, refusal.reason);
				assert.match(refusal.path, /^[a-z_]+\/[0-9a-f-]+\.json$/);
			}
		});
	}

	it("follows a run's plan to a later revision, and lets a pipeline evict unprotected frames", () => {
		const { chain } = f;
		const revision = m.newRevision(chain.plan, chain.agent);
		const run = structuredClone(f.all.find((o) => o.object_id === chain.run.object_id) as Run);
		run.plan = revision.object_id;
		run.updated_at = new Date(Date.parse(run.updated_at) + 1000).toISOString();
		const pipeline = structuredClone(chain.pipeline);
		pipeline.max_frames = chain.pipeline.max_frames;
		for (let i = 0; i < 10; i++) {
			m.pushFrame(pipeline, 'tool_call', `call ${i}`, { now: new Date(Date.parse(chain.pipeline.updated_at) + 1000) });
		}
		assert.ok(pipeline.frames.length < pipeline.next_frame_id, 'frames were evicted');
		const judged = judgeImport(withChanges(f.all, [revision, run, pipeline]), storedOf(f.all));
		assert.deepEqual(judged.refused, []);
		assert.deepEqual(ids(judged.accepted), ids([revision, run, pipeline]));
		const unrelated: Plan = m.newPlan(chain.agent);
		const swapped = { ...run, plan: unrelated.object_id };
		const refused = judgeImport(withChanges(f.all, [unrelated, swapped]), storedOf(f.all));
		assert.deepEqual(
			refused.refused.map((r) => [r.object_id, r.code]),
			[[run.object_id, 'immutable_changed']],
		);
	});

	it("a run's usage per model and a subagent's call under its starter round-trip and are imported; the starter is fixed and of the same run", () => {
		const { chain } = f;
		const later = new Date(Date.parse(chain.provenance.updated_at) + 1000);
		const provenance = structuredClone(chain.provenance);
		const counts = (input: number, output: number, cost: number) => ({
			input_tokens: input,
			output_tokens: output,
			total_tokens: input + output,
			cost_usd: cost,
			cache_read_tokens: input - 10,
			cache_creation_tokens: 5,
		});
		m.setUsage(
			provenance,
			{
				...counts(3000, 300, 0.03),
				reasoning_tokens: 40,
				models: [
					{ model: 'claude-sonnet-4-5', ...counts(2000, 200, 0.02), reasoning_tokens: 40 },
					{ model: 'claude-haiku-4-5', ...counts(1000, 100, 0.01), cost_estimated: true },
				],
				cost_estimated: true,
				turns: 7,
				duration_ms: 64_000,
				incomplete: true,
				agent_totals: counts(2000, 200, 0.03),
			},
			later,
		);
		const subagentCall = m.newToolInvocation(
			chain.agent,
			chain.run,
			'Read',
			{ file_path: 'a.ts' },
			{
				parent: chain.read,
				read: ['a.ts'],
				now: later,
			},
		);
		const starter = structuredClone(chain.read);
		starter.token_usage = { ...counts(1000, 100, 0.01), incomplete: true };
		starter.updated_at = later.toISOString();
		for (const object of [provenance, subagentCall, starter]) {
			m.seal(object);
			const back = m.fromBytes(m.toBytes(object));
			assert.deepEqual(back, { ...object }, object.object_type);
			assert.ok(m.verifyChecksum(back), `${object.object_type}: the seal holds after the round trip`);
		}
		const judged = judgeImport(withChanges(f.all, [provenance, subagentCall, starter]), storedOf(f.all));
		assert.deepEqual(judged.refused, []);
		assert.deepEqual(ids(judged.accepted), ids([provenance, subagentCall, starter]));

		const stored = withChanges(f.all, [subagentCall]);
		const moved = { ...structuredClone(subagentCall), parent_invocation: chain.edit.object_id };
		moved.updated_at = new Date(later.getTime() + 1000).toISOString();
		assert.deepEqual(
			judgeImport([moved], storedOf(stored)).refused.map((r) => r.code),
			['immutable_changed'],
		);
		const otherRun = m.newRun(chain.agent, chain.task, chain.run.commit);
		const foreign = m.newToolInvocation(chain.agent, otherRun, 'Bash', {});
		const wrongRun = {
			...m.newToolInvocation(chain.agent, chain.run, 'Read', {}),
			parent_invocation: foreign.object_id,
		};
		const self = m.newToolInvocation(chain.agent, chain.run, 'Read', {});
		self.parent_invocation = self.object_id;
		assert.deepEqual(
			judgeImport([otherRun, foreign, wrongRun, self], storedOf(f.all)).refused.map((r) => [r.object_id, r.code]),
			[
				[wrongRun.object_id, 'unresolved_reference'],
				[self.object_id, 'unresolved_reference'],
			],
		);
	});

	it('orders two copies with the same updated_at by what they append (a finished tool call is not touched)', () => {
		const { chain } = f;
		const running = structuredClone(f.all.find((o) => o.object_id === chain.read.object_id) as typeof chain.read);
		const finished = structuredClone(running);
		finished.status = 'error';
		finished.artifacts = [m.artifactFor(Buffer.from('no such file'), 'desk', 'tool/1.txt')];
		const forward = judgeImport([finished], storedOf(f.all));
		assert.deepEqual(ids(forward.accepted), [finished.object_id]);
		const backward = judgeImport([running], storedOf(withChanges(f.all, [finished])));
		assert.deepEqual([backward.accepted, backward.refused, backward.unchanged.length], [[], [], 1]);
	});

	it('refuses what names a refused object, down the chain', () => {
		const { chain } = f;
		const stranger = m.newTask(chain.human, 'Never stored');
		const orphan = m.newRun(chain.agent, stranger, chain.run.commit);
		const patch = m.newPatchSet(chain.agent, orphan);
		m.addPatchSet(orphan, patch);
		const provenance = m.newProvenance(chain.agent, orphan, 'anthropic', 'claude');
		const judged = judgeImport(withChanges(f.all, [orphan, patch, provenance]), storedOf(f.all));
		assert.deepEqual(judged.accepted, []);
		assert.deepEqual(judged.refused.map((r) => r.object_id).sort(), ids([orphan, patch, provenance]));
		assert.ok(judged.refused.every((r) => r.code === 'unresolved_reference'));
	});
});

describe('history import: a ContextSnapshot', () => {
	const stored = m.newContextSnapshot(m.actor('system', 'agent-desk'), 'explicit', [
		{ kind: 'file', path: 'src/a.ts', preview: 'a' },
	]);
	const laterWith = (items: typeof stored.items) => {
		const later = structuredClone(stored);
		later.items = items;
		later.updated_at = new Date(Date.parse(stored.updated_at) + 60_000).toISOString();
		return m.seal(later);
	};

	it('takes a later state whose items grew (catch-up adds what a branch is told before each input)', () => {
		const grown = laterWith([...stored.items, { kind: 'file', path: 'tally', preview: 'the tally' }]);
		const judged = judgeImport([grown], storedOf([m.seal(structuredClone(stored))]));
		assert.deepEqual([judged.refused, ids(judged.accepted)], [[], [stored.object_id]]);
	});

	it('refuses a later state that drops or changes a stored item', () => {
		const base = storedOf([m.seal(structuredClone(stored))]);
		const dropped = judgeImport([laterWith([])], base);
		assert.deepEqual(
			dropped.refused.map((r) => r.code),
			['history_rewritten'],
		);
		const changed = judgeImport([laterWith([{ kind: 'file', path: 'src/other.ts', preview: 'a' }])], base);
		assert.deepEqual(
			changed.refused.map((r) => r.code),
			['immutable_changed'],
		);
	});
});
