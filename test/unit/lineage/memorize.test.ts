/**
 * Memorizing a landing, the pure part (glossary: Project memory): the summary agent's answer becomes
 * ops with its text normalised to the limits, at most ten adds, each with the landing's provenance;
 * what cannot apply is refused with a message the agent is asked again with; the input is canonical.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from '../../../server/src/ai/ids';
import { isDeskError } from '../../../server/src/core/errors';
import {
	memoKey,
	memorizeInput,
	memorizePrompt,
	opsFromAnswer,
	type LandingSource,
} from '../../../server/src/lineage/memorize';
import { applyMemoryBatch, emptyMemoryFile } from '../../../server/src/lineage/memory';

const source: LandingSource = {
	kind: 'landing',
	run: 'run-1',
	commit: 'a'.repeat(40),
	decision: 'd-1',
	model: 'm',
	memo: 'sha256:x',
};
const landing = {
	source,
	at: '2026-12-02T13:00:00.000Z',
	by: { kind: 'agent' as const, id: 'summary:s' },
	newId: () => uuidv7(),
};

function refusal(fn: () => unknown): string {
	try {
		fn();
	} catch (error) {
		assert.ok(isDeskError(error, 'memory.badBatch'), String(error));
		return error.message;
	}
	assert.fail('expected a refusal');
}

describe("the summary agent's answer", () => {
	it('is read from a fenced block, normalised to the limits, and carries the landing', () => {
		const answer = `Here you go:\n\`\`\`json\n${JSON.stringify({ ops: [{ op: 'add', title: ` ${'T'.repeat(90)}\u202e `, text: `a\n\n${'b'.repeat(600)}` }] })}\n\`\`\``;
		const [op] = opsFromAnswer(answer, undefined, landing);
		assert.equal(op?.op, 'add');
		const memory = op.op === 'add' ? op.memory : undefined;
		assert.equal([...memory!.title].length, 80);
		assert.ok(memory!.title.endsWith('…') && !memory!.title.includes('\u202e'));
		assert.equal([...memory!.text].length, 500);
		assert.ok(memory!.text.startsWith('a b'));
		assert.deepEqual(memory!.source, source);
		assert.equal(
			applyMemoryBatch(undefined, {
				root: 'main',
				request: 'land:run-1',
				op: 'memorize',
				at: landing.at,
				by: 'x',
				request_hash: 'h',
				ops: [op],
			}).replayed,
			false,
		);
	});

	it('keeps ten adds of a landing and drops the rest', () => {
		const ops = Array.from({ length: 12 }, (_, i) => ({ op: 'add', title: `t${i}`, text: `x${i}` }));
		const made = opsFromAnswer(JSON.stringify({ ops }), undefined, landing);
		assert.equal(made.length, 10);
		assert.equal(opsFromAnswer(JSON.stringify({ ops: ops.slice(0, 10) }), undefined, landing).length, 10);
	});

	it('refuses what is not a batch or cannot apply, saying why', () => {
		assert.match(
			refusal(() => opsFromAnswer('Sure, noted.', undefined, landing)),
			/not a JSON object/,
		);
		assert.match(
			refusal(() => opsFromAnswer('{"ops": [{"op": "rename"}]}', undefined, landing)),
			/not add, update or remove/,
		);
		assert.match(
			refusal(() => opsFromAnswer('{"ops": [{"op": "remove", "id": "nope"}]}', emptyMemoryFile('main'), landing)),
			/"nope", which is not there/,
		);
		assert.match(
			refusal(() => opsFromAnswer('{"ops": [{"op": "add", "title": "t", "text": "  "}]}', undefined, landing)),
			/text is empty/,
		);
		assert.match(
			refusal(() =>
				opsFromAnswer(
					'{"ops": [{"op": "add", "title": "t", "text": "x", "evidence": ["../etc"]}]}',
					undefined,
					landing,
				),
			),
			/\.\./,
		);
	});
});

describe('the input', () => {
	it('is canonical: the same facts give the same input and memo key, the refusal goes into the retry prompt', () => {
		const a = memorizeInput({ ticket: 't', abstract: 'a', touched: ['b.ts', 'a.ts'], rationale: 'r' }, undefined);
		const b = memorizeInput({ rationale: 'r', touched: ['a.ts', 'b.ts'], abstract: 'a', ticket: 't' }, undefined);
		assert.equal(a, b);
		assert.equal(memoKey('m', a), memoKey('m', b));
		assert.notEqual(memoKey('m', a), memoKey('n', a));
		assert.match(memorizePrompt(a, 'bad JSON'), /Your previous answer was refused: bad JSON/);
		assert.doesNotMatch(memorizePrompt(a), /refused/);
	});
});
