/** The sanitiser of rendered Markdown, in plain Node. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sanitiseMarkup } from '../../../../client/src/attachments/sanitiseMarkup';
describe('Attachment previews: the Markdown sanitiser', () => {
	it('turns tags that could load, navigate or submit into text in rendered Markdown', () => {
		const html = sanitiseMarkup(
			'<p>ok</p><SCRIPT>x()</SCRIPT><meta http-equiv="refresh" content="0;url=http://x"><base href="http://x/"><form action="http://x"></form><style>header{}</style><svg><a href="command:x">s</a></svg><iframe srcdoc="x"></iframe><img src="data:image/png;base64,AAAA">',
		);
		assert.ok(!/<(script|meta|base|form|style|svg|iframe)\b/i.test(html), html);
		assert.ok(html.startsWith('<p>ok</p>&lt;SCRIPT&gt;x()&lt;/SCRIPT&gt;'), html);
		assert.ok(html.endsWith('<img src="data:image/png;base64,AAAA">'), 'an image from its bytes stays');
		assert.ok(!html.includes('href="command:'), html);
	});

	it('sanitises rendered Markdown against an allowlist: no class, id, style or handler, links only http(s), mailto: and #fragments, images only data:image', () => {
		const html = sanitiseMarkup(
			[
				'<header class="x" id="top"><h1 style="color:red" onclick="x()">Fake</h1></header>',
				'<a class="button primary" href="command:agentDesk.saveAttachmentAs?%5B%5D">Save</a>',
				'<a href="&#99;ommand:agentDesk.openAttachmentAsText">entity</a><a href=" java\tscript:alert(1)">js</a><a href="https://example.com/?a=1&amp;b=2">web</a>',
				'<a href="mailto:a@example.com">mail</a><a href="#notes">frag</a><a href="notes.md">relative</a><a href="file:///etc/passwd">file</a>',
				'<img src="http://127.0.0.1:9/x" onerror="x()" alt="probe"><img src="data:image/svg+xml;base64,AA" alt="ok"><img src=\'data:text/html,x\'>',
				'<table><tr><th style="text-align:right">n</th><td style="text-align:center;color:red" data-x="1">1</td></tr></table>',
				'<pre><code class="language-ts"><span class="hljs-keyword">export</span> <span class="hljs-title function_ button">f</span></code></pre>',
				'<p data-line="3" class="code-line" dir="auto">para</p></div><header>after</header></article>',
				'<div><b>open <i>nested',
			].join(''),
		);
		assert.ok(!/\s(id|style|on\w+|data-[\w-]+)=/i.test(html), html);
		const classes = [...html.matchAll(/<(\w+)[^>]*\sclass="([^"]*)"/g)].map((m) => [m[1], m[2]]);
		assert.deepEqual(classes, [
			['span', 'hljs-keyword'],
			['span', 'hljs-title function_'],
		]);
		const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
		assert.deepEqual(hrefs, ['https://example.com/?a=1&amp;b=2', 'mailto:a@example.com', '#notes']);
		const sources = [...html.matchAll(/src="([^"]*)"/g)].map((m) => m[1]);
		assert.deepEqual(sources, ['data:image/svg+xml;base64,AA']);
		assert.ok(html.includes('<header><h1>Fake</h1></header>'), html);
		assert.ok(html.includes('<img alt="probe">'), html);
		assert.ok(html.includes('<th align="right">n</th><td>1</td>'), html);
		assert.ok(
			html.includes('<p dir="auto">para</p><header>after</header>&lt;/article&gt;'),
			'an end tag the content did not open is dropped; one of a tag it may not use is text',
		);
		assert.ok(
			html.endsWith('<div><b>open <i>nested</i></b></div>'),
			'what the content leaves open is closed inside it',
		);
		assert.equal(sanitiseMarkup('a < b <!-- hidden <script> --> c <!DOCTYPE x> <?pi x?> d'), 'a &lt; b  c   d');
		assert.equal(
			sanitiseMarkup('<a href="https://x" title=\'say "hi"\'>t'),
			'<a href="https://x" title="say &quot;hi&quot;">t</a>',
		);
		assert.equal(sanitiseMarkup('<img src="x" alt="unterminated'), '&lt;img src=&quot;x&quot; alt=&quot;unterminated');
	});
});
