import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { actor, cutGraphemes, graphemeLength, newTask, titleFrom } from '../../../server/src/ai/model';
import { ticketFields } from '../../../server/src/launch/ticketFields';

it("reads the Task's title, description, acceptance criteria and constraints from a ticket's sections", () => {
	const fields = ticketFields(
		[
			'Add cursor pagination',
			'',
			'Listing endpoints return everything today.',
			'',
			'## Acceptance criteria',
			'- [x] GET /users takes `cursor` and `limit`',
			'* the default limit is 20',
			'',
			'Constraints:',
			'1. No new dependency',
			'2) Keep the response shape',
			'',
			'## Notes',
			'Ask Tess about the cursor format.',
		].join('\n'),
	);
	assert.deepEqual(fields, {
		title: 'Add cursor pagination',
		description: 'Listing endpoints return everything today.\n\n## Notes\nAsk Tess about the cursor format.',
		acceptanceCriteria: ['GET /users takes `cursor` and `limit`', 'the default limit is 20'],
		constraints: ['No new dependency', 'Keep the response shape'],
	});
	assert.deepEqual(ticketFields('Just a title'), { title: 'Just a title', constraints: [], acceptanceCriteria: [] });
	assert.equal(ticketFields('   \n').title, 'Launch');
});

it('cuts titles on grapheme boundaries and counts their length in graphemes', () => {
	const family = '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}';
	const accented = 'e\u0301';
	assert.equal(graphemeLength(`${family}${accented}x`), 3);
	assert.equal(cutGraphemes(`ab${family}cd`, 3), `ab${family}`);
	assert.equal(cutGraphemes(`a${accented}b`, 2), `a${accented}`, 'the accent stays with its letter');
	// A character across the edge of the window the text is segmented by (4,096 units) stays whole.
	const across = `${'a'.repeat(4094)}${family}b`;
	assert.equal(cutGraphemes(across, 4095), `${'a'.repeat(4094)}${family}`);
	assert.equal(cutGraphemes(across, 5000), across);
	// The beginning of a long text is cut at once, not in time proportional to its length per character.
	const started = Date.now();
	assert.equal(cutGraphemes(`${accented}`.repeat(1_000_000), 4000), accented.repeat(4000));
	assert.ok(Date.now() - started < 2000, `cut in ${Date.now() - started} ms`);
	const long = `${'a'.repeat(98)}${family}${family}`;
	assert.equal(titleFrom(long, 'x'), `${'a'.repeat(98)}${family}`);
	assert.equal(titleFrom(long, 'x').slice(-family.length), family, 'no half emoji at the end');
	const human = actor('human', 'tess');
	// 99 emoji are 99 characters (and 198 UTF-16 units): a title.
	assert.equal(newTask(human, '\u{1F600}'.repeat(99)).title.length, 198);
	assert.throws(
		() => newTask(human, '\u{1F600}'.repeat(100)),
		(e) => isDeskError(e, 'ai.badObject') && (e.data as { length: number }).length === 100,
	);
});
