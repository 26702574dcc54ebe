/**
 * Code in a ticket is dropped before its words are matched (glossary: Suggestion), by CommonMark's
 * rules: code spans (a backtick string opens, the next backtick string of the same length closes)
 * and fenced code blocks (``` or ~~~). What CommonMark leaves literal stays words. Words in code
 * here start with "hidden"; the rest is prose.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ticketTerms } from '../../../server/src/search/tokenizer';

describe('code spans in a ticket', () => {
	it('drops a span opened and closed by a single backtick', () => {
		assert.deepEqual(ticketTerms('Speed `hiddenname` billing'), ['speed', 'billing']);
	});

	it('drops a span of double backticks holding a single one', () => {
		assert.deepEqual(ticketTerms('Quote ``hiddenone `hiddentwo` hiddenthree`` ledger'), ['quote', 'ledger']);
	});

	it('closes a span only at a backtick string of exactly its length', () => {
		assert.deepEqual(ticketTerms('Open ``hiddenone ``` hiddentwo`` ledger'), ['open', 'ledger']);
		assert.deepEqual(ticketTerms('Open `hiddenone `` hiddentwo` ledger'), ['open', 'ledger']);
	});

	it('drops a span that runs over a line ending', () => {
		assert.deepEqual(ticketTerms('Rename `hiddenfirst\nhiddensecond` ledger'), ['rename', 'ledger']);
		assert.deepEqual(ticketTerms('Rename ``hiddenfirst\r\nhiddensecond`` ledger'), ['rename', 'ledger']);
	});

	it('keeps an unmatched backtick string and the words after it', () => {
		assert.deepEqual(ticketTerms('Lonely ` backtick ledger'), ['lonely', 'backtick', 'ledger']);
		assert.deepEqual(
			ticketTerms('Double `` opener single ` closer ledger'),
			['double', 'opener', 'single', 'closer', 'ledger'],
			'a string of two is not closed by one of one',
		);
		assert.deepEqual(
			ticketTerms('Three ``` alone, `hiddencode` ledger'),
			['three', 'alone', 'ledger'],
			'an unmatched string is literal; a span after it is still code',
		);
	});

	it('matches no span across a blank line: a span lives in one paragraph', () => {
		assert.deepEqual(ticketTerms('Opening `paragraph ledger\n\nsecond` invoice'), [
			'opening',
			'paragraph',
			'ledger',
			'second',
			'invoice',
		]);
	});

	it('takes a backslash-escaped backtick as literal, and a backslash inside a span as literal', () => {
		assert.deepEqual(ticketTerms('Escaped \\`literal ledger` invoice'), ['escaped', 'literal', 'ledger', 'invoice']);
		assert.deepEqual(ticketTerms('Span `hiddenends\\` ledger'), ['span', 'ledger']);
		assert.deepEqual(
			ticketTerms('Escape \\``hiddencode` ledger'),
			['escape', 'ledger'],
			'an escape takes the first backtick of a string: the rest opens a span of one',
		);
		assert.deepEqual(
			ticketTerms('Slash \\\\`hiddencode` ledger'),
			['slash', 'ledger'],
			'an escaped backslash escapes nothing after it',
		);
	});
});

describe('fenced code blocks in a ticket', () => {
	it('drops a backtick fence with its info string', () => {
		assert.deepEqual(ticketTerms('Invoice\n```hiddenlang\nconst hiddenthing = 1;\n```\nledger'), ['invoice', 'ledger']);
	});

	it('drops a tilde fence', () => {
		assert.deepEqual(ticketTerms('Invoice\n~~~\nhiddentilde block\n~~~\nledger'), ['invoice', 'ledger']);
	});

	it('takes a fence indented up to three spaces, not four', () => {
		assert.deepEqual(ticketTerms('Invoice\n   ~~~\nhiddenindented\n   ~~~\nledger'), ['invoice', 'ledger']);
		assert.deepEqual(
			ticketTerms('Invoice\n    ~~~\nfour spaces\n    ~~~\nledger'),
			['invoice', 'four', 'spaces', 'ledger'],
			'four spaces is no fence',
		);
	});

	it('closes only with the same character, at least as long as the opener', () => {
		assert.deepEqual(
			ticketTerms('Invoice\n~~~~\nhiddenone\n~~~\n```\nhiddentwo\n~~~~~\nledger'),
			['invoice', 'ledger'],
			'neither a shorter tilde fence nor a backtick fence closes a fence of four tildes',
		);
		assert.deepEqual(
			ticketTerms('Invoice\n```\nhiddenone\n``` hiddentrail\nhiddentwo\n```\nledger'),
			['invoice', 'ledger'],
			'a closing fence has nothing after it but spaces',
		);
	});

	it('runs an unclosed fence to the end of the ticket', () => {
		assert.deepEqual(ticketTerms('Invoice\n```\nhiddennever closed\nhiddenmore'), ['invoice']);
		assert.deepEqual(ticketTerms('Invoice\n~~~\nhiddennever\n```'), ['invoice']);
	});

	it('is no fence with fewer than three characters, or with a backtick in the info string of a backtick fence', () => {
		assert.deepEqual(ticketTerms('Invoice\n~~\nnotfenced\n~~\nledger'), ['invoice', 'notfenced', 'ledger']);
		assert.deepEqual(
			ticketTerms('Invoice\n``` infoword ` trailing\nnotfenced\n'),
			['invoice', 'infoword', 'trailing', 'notfenced'],
			'then the line is prose, and its strings of three and one backticks have no closers',
		);
	});

	it('opens a fence inside what looked like a span: the span is left unmatched', () => {
		assert.deepEqual(ticketTerms('Start `unclosed ledger\n```\nhiddenfenced\n```\ninvoice` closing'), [
			'start',
			'unclosed',
			'ledger',
			'invoice',
			'closing',
		]);
	});
});
