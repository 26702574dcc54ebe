import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DecideRun, PlugAsset } from '../../../server/src/protocol/protocol';
import { oneOf, type Infer } from '../../../server/src/protocol/schema';

it('oneOf takes its values and refuses any other, naming the field and what it takes', () => {
	const role = oneOf(['reference', 'target', 'instructions']);
	// The inferred type is the union: a handler takes it as the domain's type without a cast.
	const taken: Infer<typeof role> = 'target';
	assert.deepEqual(role.check(taken, 'params.role'), { ok: true, value: 'target' });
	for (const value of ['Target', 'target ', '', 'constructor', '__proto__', 'toString']) {
		const checked = role.check(value, 'params.role');
		assert.equal(checked.ok, false, JSON.stringify(value));
		assert.equal(!checked.ok && checked.field, 'params.role');
		assert.match(!checked.ok ? checked.problem : '', /must be one of "reference", "target", "instructions"/);
	}
	for (const value of [1, null, undefined, ['target'], { target: true }]) {
		assert.equal(role.check(value, 'params.role').ok, false, JSON.stringify(value));
	}
});

it('oneOf refuses a lone surrogate as badText, as every string field does', () => {
	const checked = oneOf(['a', 'b']).check('a\ud800', 'params.x');
	assert.equal(!checked.ok && checked.kind, 'badText');
});

it('the protocol declares its closed string fields with oneOf, so a wrong value never reaches a handler', () => {
	const plug = PlugAsset.params.check({ project: 'p', id: 'a', role: 'owner' }, 'params');
	assert.equal(!plug.ok && plug.field, 'params.role');
	const decide = DecideRun.params.check({ project: 'p', run: 'r', decision: 'revert' }, 'params');
	assert.equal(!decide.ok && decide.field, 'params.decision', 'revert is no decision of the model');
	assert.equal(DecideRun.params.check({ project: 'p', run: 'r', decision: 'rollback' }, 'params').ok, true);
	assert.equal(DecideRun.params.check({ project: 'p', run: 'r', decision: 'retry' }, 'params').ok, true);
});
