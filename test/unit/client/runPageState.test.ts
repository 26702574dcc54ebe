/**
 * What a run page keeps across a window reload (glossary: Carrier): the run it shows, named on its
 * body for the page's script to keep in the tab's state, escaped so that no name leaves the attribute.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readRunPageState, runPageHtml } from '../../../client/src/runs/runPage';

const run = '01a23c11-21d3-776a-a9ed-361e5e0695e9';
const script = { nonce: 'bm9uY2U=', src: 'https://file+.vscode-resource/dist/runPage/runPage.js' };

it('a page to restore names the run it shows on its body, beside its one script', () => {
	const page = runPageHtml('vscode-resource:', '<h1>Run</h1>', { ...script, shows: { project: 'shop', run } });
	assert.match(page, new RegExp(`<body data-project="shop" data-run="${run}"><h1>Run</h1>`));
	assert.equal(page.match(/<script/g)?.length, 1);
	// Without a script there is nothing to keep it: no script, and a bare body.
	const plain = runPageHtml('vscode-resource:', '<h1>Run</h1>');
	assert.doesNotMatch(plain, /<script|script-src|data-run/);
});

it('a project name cannot leave the attribute: it is escaped, and reads back as the name', () => {
	const hostile = '"><script>alert(1)</script><b x="';
	const page = runPageHtml('vscode-resource:', '', { ...script, shows: { project: hostile, run } });
	assert.equal(page.match(/<script/g)?.length, 1, 'no script but the page’s own');
	const attribute = /data-project="([^"]*)"/.exec(page)![1]!;
	assert.equal(
		attribute
			.replace(/&quot;/g, '"')
			.replace(/&lt;/g, '<')
			.replace(/&gt;/g, '>')
			.replace(/&amp;/g, '&'),
		hostile,
	);
});

it('reads back only a state that names a run, whatever else the page kept beside it', () => {
	assert.deepEqual(readRunPageState({ project: 'shop', run }), { project: 'shop', run });
	assert.deepEqual(readRunPageState({ opened: ['call-1'], closed: [], scrollY: 40, project: 'shop', run }), {
		project: 'shop',
		run,
	});
	for (const state of [
		undefined,
		null,
		'shop',
		{},
		{ opened: [], closed: [], scrollY: 0 },
		{ project: 'shop' },
		{ project: '', run },
		{ project: 'shop', run: 'x' },
		{ project: 3, run },
	]) {
		assert.equal(readRunPageState(state), undefined, JSON.stringify(state));
	}
});
