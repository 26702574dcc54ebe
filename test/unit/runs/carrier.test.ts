/**
 * The hand-over between a desk and a run's carrier (glossary: Carrier): the request it reads on
 * stdin, read back whole or refused, and its answer, written only on the pipe its desk gave it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import type { LaunchRecord } from '../../../server/src/launch/types';
import { answerDesk, carrierRequestText, readCarrierRequest } from '../../../server/src/runs/carrier';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { tempDir } from '../../helpers/temp';

// Run as the child of the last test: answers on descriptor 3 as a carrier does, and ends.
if (process.env['CARRIER_TEST_ANSWER']) {
	answerDesk({ carrying: true });
	process.exit(0);
}

const record: LaunchRecord = {
	launch_id: '01a23c11-21d3-776a-a9ed-361e5e0695e0',
	created_at: '2026-12-03T13:21:25.459Z',
	project: 'shop',
	ticket: 'Add a greeting helper\n\nWrite src/greeting.ts.',
	template: { name: 'plan-work', nodes: ['plan', 'work'] },
	plugs: [{ id: 'a-1', role: 'reference', nodes: [], files: ['*.md'], copy: {}, name: 'docs', version: 3 }],
	intent: '01a23c11-21d3-776a-a9ed-361e5e0695e1',
	task: '01a23c11-21d3-776a-a9ed-361e5e0695e2',
	run: '01a23c11-21d3-776a-a9ed-361e5e0695e9',
};

it('a request reads back as it was written: the run, the launch record and the settings', () => {
	const settings = { ...scriptedAgentSettings({}), maxFrames: 5 };
	const request = { top: '/repo/shop', run: '01a23c11-21d3-776a-a9ed-361e5e0695e9', record, settings };
	const read = readCarrierRequest(carrierRequestText(request));
	assert.deepEqual(read, request);
});

it('a request of another format, or not of this shape, is refused naming why', () => {
	const good = JSON.parse(
		carrierRequestText({ top: '/r', run: 'r1', record, settings: scriptedAgentSettings({}) }),
	) as Record<string, unknown>;
	for (const [text, why] of [
		['', /not JSON/],
		['[]', /not a JSON object/],
		[JSON.stringify({ ...good, format: 2 }), /format is 2/],
		[JSON.stringify({ ...good, run: 7 }), /run is not text/],
		[JSON.stringify({ ...good, record: '{}' }), /./],
		[JSON.stringify({ ...good, settings: { isolation: 'elsewhere' } }), /isolation/],
	] as const) {
		assert.throws(
			() => readCarrierRequest(text),
			(error: unknown) => isDeskError(error) && why.test(error.message),
			text,
		);
	}
});

it('the answer goes only to the pipe its desk gave: a file in its place is never written', () => {
	const file = path.join(tempDir(), 'descriptor-3');
	fs.writeFileSync(file, '');
	const fd = fs.openSync(file, 'r+');
	const run = (env: Record<string, string>, stdio: Array<'pipe' | 'ignore' | number>) =>
		spawnSync(process.execPath, [process.argv[1]!], {
			env: { ...process.env, CARRIER_TEST_ANSWER: '1', ...env },
			stdio: stdio as never,
			encoding: 'utf8',
		});
	try {
		// A file at descriptor 3, whether or not the variable says a desk gave one.
		run({ DESK_CARRIER_ANSWER_FD: '3' }, ['ignore', 'ignore', 'ignore', fd]);
		run({}, ['ignore', 'ignore', 'ignore', fd]);
		assert.equal(fs.readFileSync(file, 'utf8'), '');
		// The pipe a desk gives: the answer arrives.
		const answered = run({ DESK_CARRIER_ANSWER_FD: '3' }, ['ignore', 'ignore', 'ignore', 'pipe']);
		assert.equal(String((answered.output as unknown[])[3]), 'carrying\n');
	} finally {
		fs.closeSync(fd);
	}
});
