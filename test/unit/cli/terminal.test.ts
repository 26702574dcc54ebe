import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonForTerminal, terminalSafe, terminalSafeLines, writeMessage } from '../../../server/src/cli/terminal';

/** Anything a terminal would act on or not show: C0/C1 controls, DEL, format characters, separators. */
const raw = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udfff]/u;

describe('text for a terminal', () => {
	it('shows every control and invisible format character of a name as a visible escape, in one line', () => {
		const cases: Array<[string, string]> = [
			['title\u001b]0;pwned\u0007', 'title\\x1b]0;pwned\\x07'],
			['clear\u001b[2J\u001b[H', 'clear\\x1b[2J\\x1b[H'],
			['a\nb\rc\td', 'a\\nb\\rc\\td'],
			['nul\u0000del\u007f', 'nul\\x00del\\x7f'],
			['c1 csi \u009b31m', 'c1 csi \\x9b31m'],
			['invoice\u202egpj.exe', 'invoice\\u202egpj.exe'],
			['iso\u2066late\u2069', 'iso\\u2066late\\u2069'],
			['zero\u200bwidth\ufeff', 'zero\\u200bwidth\\ufeff'],
			['line\u2028sep\u2029', 'line\\u2028sep\\u2029'],
			['tag\u{e0041}chars', 'tag\\u{e0041}chars'],
			['lone \ud800 surrogate', 'lone \\ud800 surrogate'],
			['soft\u00adhyphen', 'soft\\xadhyphen'],
		];
		for (const [input, shown] of cases) {
			assert.equal(terminalSafe(input), shown, JSON.stringify(input));
			assert.doesNotMatch(terminalSafe(input), raw);
		}
	});

	it('leaves printable text as it is: accents, CJK, emoji (joined ones too), backslashes', () => {
		for (const text of [
			'plain name.txt',
			'Café résumé',
			'報告書.md',
			'rocket 🚀',
			'dev 👩‍💻 and 👩🏽‍💻',
			'C:\\path\\x1b literal',
			'tab-free',
		]) {
			assert.equal(terminalSafe(text), text);
		}
		assert.equal(terminalSafe('join\u200dnot emoji'), 'join\\u200dnot emoji', 'a joiner outside an emoji is shown');
	});

	it('keeps the newlines and tabs of text the desk laid out, escapes the rest', () => {
		assert.equal(terminalSafeLines('one\ttwo\nthree\u001b[31m\r\n'), 'one\ttwo\nthree\\x1b[31m\\r\n');
	});

	it('writes JSON that parses to the same value and holds nothing a terminal would act on', () => {
		const value = { name: 'a\u001b]0;x\u0007b\u009b\u202e\u200b\u2028\u{e0041}\u007f', nested: ['ok', 'ß', '👩‍💻'] };
		const text = jsonForTerminal(value);
		assert.deepEqual(JSON.parse(text), value);
		assert.doesNotMatch(text.replace(/\n/g, ''), raw);
		assert.match(text, /\\u009b/);
		assert.match(text, /\\u202e/);
		// Text that is otherwise ASCII: a DEL alone is still escaped; nothing else is touched.
		assert.equal(jsonForTerminal({ name: 'plain\u007f' }), '{\n  "name": "plain\\u007f"\n}');
		assert.equal(jsonForTerminal({ name: 'plain', n: 1 }), JSON.stringify({ name: 'plain', n: 1 }, null, 2));
	});

	it('writeMessage is one guard for every line written', () => {
		const chunks: string[] = [];
		writeMessage({ write: (c) => chunks.push(String(c)) }, 'desk: \u001b[2Jgone\u0007\n');
		assert.deepEqual(chunks, ['desk: \\x1b[2Jgone\\x07\n']);
	});
});
