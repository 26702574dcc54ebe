/** JSON formatting of the JSON preview, in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatJson } from '../../../../client/src/attachments/formatJson';
describe('Attachment previews: JSON formatting', () => {
	it('formats JSON keeping numbers and strings as written, and reports what does not parse', () => {
		const formatted = formatJson('{"big":12345678901234567890,"s":"a\\"}{,:","list":[1,{"x":[]}],"e":{}}');
		assert.ok('text' in formatted);
		assert.equal(
			formatted.text,
			'{\n  "big": 12345678901234567890,\n  "s": "a\\"}{,:",\n  "list": [\n    1,\n    {\n      "x": []\n    }\n  ],\n  "e": {}\n}\n',
		);
		const broken = formatJson('{"a": 1,}');
		assert.ok('error' in broken && broken.error.length > 0);
	});
});
