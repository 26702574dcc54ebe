import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRunPageMessage } from '../../../webview/src/runPageMessages';

describe("what a run's page may ask the extension host", () => {
	it('takes ready, and a preview of a stored text by its hash', () => {
		assert.deepEqual(parseRunPageMessage({ type: 'ready', extra: 1 }), { type: 'ready' });
		const hash = 'ab'.repeat(32);
		assert.deepEqual(parseRunPageMessage({ type: 'preview', hash, more: 'x' }), { type: 'preview', hash });
	});

	it('refuses anything else: another type, a hash that is not 64 lowercase hex, no object', () => {
		for (const message of [
			undefined,
			null,
			'ready',
			{ type: 'body', html: '<p>' },
			{ type: 'preview' },
			{ type: 'preview', hash: 'AB'.repeat(32) },
			{ type: 'preview', hash: `${'a'.repeat(63)}/` },
			{ type: 'preview', hash: 'a'.repeat(65) },
		]) {
			assert.equal(parseRunPageMessage(message), undefined, JSON.stringify(message));
		}
	});
});
