/** What a language service would fetch from the network, in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { externalReference } from '../../../../client/src/attachments/externalReference';
describe('Attachment previews: remote references', () => {
	it('finds what a language service would fetch: a remote JSON $schema, an external DTD or entity, a remote XML schema', () => {
		assert.equal(
			externalReference('{"$schema":"https://example.com/s.json","a":1}', 'json', 'a.json'),
			'a JSON schema at https://example.com/s.json',
		);
		assert.equal(
			externalReference('{"a":{"$schema":"https://example.com/nested"},"$schema":"./local.json"}', 'json', 'a.json'),
			undefined,
		);
		assert.equal(externalReference('{"$schema":"file:///schemas/s.json"}', 'json', 'a.json'), undefined);
		assert.equal(
			externalReference('{"\\u0024schema":"//example.com/s"}', 'json', 'a.json'),
			'a JSON schema at //example.com/s',
		);
		assert.equal(
			externalReference('{"$schema":"./a.json","$schema":"http://x/y"}', undefined, 'a.txt'),
			'a JSON schema at http://x/y',
			'a repeated key counts each time',
		);
		assert.match(
			externalReference('{"$schema":"http://x/y", // comment\n}', 'json', 'a.json') ?? '',
			/cannot read exactly/,
		);
		assert.equal(
			externalReference('{"ok":1}\n{"$schema":"https://x/s"}\n', 'jsonl', 'a.jsonl'),
			'a JSON schema at https://x/s',
		);
		assert.equal(
			externalReference(
				'<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg/>',
				'xml',
				'a.svg',
			),
			'an external DTD (PUBLIC -//W3C//DTD SVG 1.1//EN)',
		);
		assert.equal(
			externalReference('<!DOCTYPE note SYSTEM "https://example.com/note.dtd"><note/>', 'xml', 'a.xml'),
			'an external DTD (SYSTEM https://example.com/note.dtd)',
		);
		assert.equal(externalReference('<!DOCTYPE note SYSTEM "note.dtd"><note/>', 'xml', 'a.xml'), undefined);
		assert.equal(
			externalReference('<!DOCTYPE r [ <!ENTITY e SYSTEM "http://example.com/e"> ]><r>&e;</r>', 'xml', 'a.xml'),
			'an external entity (SYSTEM http://example.com/e)',
		);
		assert.match(
			externalReference(
				'<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://example.com/r.xsd"/>',
				'xml',
				'a.xml',
			) ?? '',
			/XML schema at http:\/\/example\.com\/r\.xsd/,
		);
		assert.equal(externalReference('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>', 'xml', 'a.svg'), undefined);
		assert.equal(
			externalReference('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://x">', 'html', 'a.html'),
			undefined,
			'HTML has no DTD reader',
		);
	});
});
