/**
 * What a run page keeps across a window reload (glossary: Carrier): the run it shows, handed to VS
 * Code by its one script, which only its nonce allows and which no name can end.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { readRunPageState, runPageHtml } from '../../../client/src/runs/runPage';

const run = '01a23c11-21d3-776a-a9ed-361e5e0695e9';

it('a page to restore carries one script, allowed by its nonce, setting the run it shows as its state', () => {
	const page = runPageHtml('vscode-resource:', '<h1>Run</h1>', { nonce: 'bm9uY2U=', state: { project: 'shop', run } });
	assert.match(page, /script-src 'nonce-bm9uY2U=';/);
	const scripts = [...page.matchAll(/<script nonce="([^"]*)">(.*?)<\/script>/g)];
	assert.deepEqual(
		scripts.map((m) => [m[1], m[2]]),
		[['bm9uY2U=', `acquireVsCodeApi().setState({"project":"shop","run":"${run}"});`]],
	);
	// Without a state to keep there is no script, and the policy allows none.
	const plain = runPageHtml('vscode-resource:', '<h1>Run</h1>');
	assert.doesNotMatch(plain, /<script|script-src/);
});

it('a project name cannot end the script or the page: < and line separators are escaped in its JSON', () => {
	const hostile = '</script><script>alert(1)</script>\u2028';
	const page = runPageHtml('vscode-resource:', '', { nonce: 'n', state: { project: hostile, run } });
	assert.equal(page.match(/<script/g)?.length, 1);
	assert.equal(page.match(/<\/script>/g)?.length, 1);
	const json = /setState\((.*)\);<\/script>/.exec(page)![1]!;
	assert.equal(JSON.parse(json).project, hostile, 'the state reads back as the name');
});

it('reads back only a state a run page wrote', () => {
	assert.deepEqual(readRunPageState({ project: 'shop', run }), { project: 'shop', run });
	for (const state of [
		undefined,
		null,
		'shop',
		{},
		{ project: 'shop' },
		{ project: '', run },
		{ project: 'shop', run: 'x' },
		{ project: 3, run },
	]) {
		assert.equal(readRunPageState(state), undefined, JSON.stringify(state));
	}
});
