/**
 * What the run page says of a desk tool call (glossary: Desk tools): its result in words a person
 * reads at a glance, the refusal's code and message, or the JSON when the shape is not one the desk knows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summaryOf } from '../../../server/src/mcp/runTools';

const asset = { id: 'a-0123456789abcdef', name: 'specs' };

describe('a desk tool call in one line', () => {
	it('says what the call did for the results the desk knows', () => {
		const ok = (result: unknown, replayed = false) => summaryOf({ ok: true, result, replayed });
		assert.equal(
			ok({
				hits: [
					{ name: 'shop', score: 0.43 },
					{ name: 'specs', score: 0.2 },
				],
			}),
			'2 hits: shop 0.43, specs 0.2',
		);
		assert.equal(ok({ hits: [] }), '0 hits');
		assert.equal(ok({ asset, version: { version: 2 }, created: true }), 'made v2 of specs (a-0123456789abcdef)');
		assert.equal(
			ok({ asset, version: { version: 2 }, created: false }),
			'no change: still v2 of specs (a-0123456789abcdef)',
		);
		assert.equal(ok({ asset, created: false }), 'already there: specs (a-0123456789abcdef)');
		assert.equal(ok({ id: 'x1', task_id: 't1', name: 'report.md', size: 35 }), 'attached report.md (35 B)');
		assert.equal(ok({ ...asset, tags: ['stale'] }), 'specs (a-0123456789abcdef)');
		assert.equal(ok({ hits: [] }, true), 'answered before: 0 hits');
		assert.equal(ok({ other: 'shape' }), '{"other":"shape"}');
		assert.ok(ok({ other: 'x'.repeat(400) }).length <= 300);
	});

	it('gives a refusal as its code and message', () => {
		assert.equal(
			summaryOf({ ok: false, error: { code: 'operation.outsideRun', message: 'Not yours.', data: {} } }),
			'operation.outsideRun: Not yours.',
		);
	});
});
