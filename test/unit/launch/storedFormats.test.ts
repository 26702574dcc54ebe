import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { Desk } from '../../../server/src/desk';
import {
	encodeLaunchCard,
	encodeLaunchRecord,
	readLaunchCard,
	readLaunchRecord,
} from '../../../server/src/launch/storedFormats';
import type { LaunchCard, LaunchRecord } from '../../../server/src/launch/types';
import type { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { SqlRunControl } from '../../../server/src/store/sqlRunControl';
import { recordingLogger } from '../../helpers/deskFixture';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

const card: LaunchCard = {
	project: 'shop',
	ticket: 'Add cursor pagination',
	template: { name: 'plan-work', nodes: ['plan', 'work'] },
	plugs: [
		{
			id: 'a-0123456789abcdef',
			role: 'reference',
			nodes: [],
			files: ['docs/*.md'],
			copy: { 'fixtures/a.json': 'test/a.json' },
		},
	],
};

const record: LaunchRecord = {
	launch_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
	created_at: '2026-01-02T03:04:05.000Z',
	project: 'shop',
	ticket: card.ticket,
	template: card.template,
	plugs: [{ ...card.plugs[0]!, name: 'pagination-specs', version: 2 }],
	intent: 'i-1',
	task: 't-1',
	run: 'r-1',
};

/** The refusal `read` throws, with its code and data. */
function refusal(read: () => unknown): { code: string; data: Record<string, unknown> } {
	try {
		read();
	} catch (error) {
		assert.ok(isDeskError(error), `a DeskError, not ${String(error)}`);
		return { code: error.code, data: error.data as Record<string, unknown> };
	}
	assert.fail('read, not refused');
}

describe('the stored formats of launch cards and launch records', () => {
	it('reads a card and a record stored before formats had a number as format 1, and reads back what it writes', () => {
		assert.deepEqual(readLaunchCard(JSON.stringify(card)), card);
		assert.deepEqual(readLaunchRecord(JSON.stringify(record)), record);
		assert.equal(JSON.parse(encodeLaunchCard(card)).format, 1);
		assert.equal(JSON.parse(encodeLaunchRecord(record)).format, 1);
		assert.deepEqual(readLaunchCard(encodeLaunchCard(card)), card);
		assert.deepEqual(readLaunchRecord(encodeLaunchRecord(record)), record);
		// Fields a format does not have are not taken in.
		assert.deepEqual(readLaunchCard(JSON.stringify({ ...card, extra: { deep: true } })), card);
	});

	it('refuses a format it does not know with launch.unknownFormat', () => {
		for (const format of [2, 0, '1', null]) {
			assert.deepEqual(
				refusal(() => readLaunchCard(JSON.stringify({ format, ...card }))),
				{
					code: 'launch.unknownFormat',
					data: { what: 'launch card', format: typeof format === 'number' ? format : String(format), known: 1 },
				},
			);
			assert.equal(refusal(() => readLaunchRecord(JSON.stringify({ format, ...record }))).code, 'launch.unknownFormat');
		}
	});

	it('refuses a value that is not JSON or not of its shape with launch.corrupt, naming the field', () => {
		const plug = card.plugs[0]!;
		const cases: Array<[string, string, () => unknown]> = [
			['it is not JSON', 'not JSON', () => readLaunchCard('{"project":')],
			['a list', 'it is not a JSON object', () => readLaunchCard('[]')],
			['no ticket', 'ticket is not a string', () => readLaunchCard(JSON.stringify({ ...card, ticket: undefined }))],
			['plugs an object', 'plugs is not a list', () => readLaunchCard(JSON.stringify({ ...card, plugs: {} }))],
			[
				'a plug a string',
				'plugs[0] is not an object',
				() => readLaunchCard(JSON.stringify({ ...card, plugs: ['a-0123456789abcdef'] })),
			],
			[
				'an unknown role',
				'plugs[0].role "owner" is not a role',
				() => readLaunchCard(JSON.stringify({ ...card, plugs: [{ ...plug, role: 'owner' }] })),
			],
			[
				'a node a number',
				'template.nodes[1] is not a string',
				() => readLaunchCard(JSON.stringify({ ...card, template: { name: 'plan-work', nodes: ['plan', 7] } })),
			],
			[
				'copy a list',
				'plugs[0].copy is not an object',
				() => readLaunchCard(JSON.stringify({ ...card, plugs: [{ ...plug, copy: [] }] })),
			],
			[
				'a copy target a number',
				'plugs[0].copy.fixtures/a.json is not a string',
				() => readLaunchCard(JSON.stringify({ ...card, plugs: [{ ...plug, copy: { 'fixtures/a.json': 1 } }] })),
			],
			[
				'a record plug without its version',
				'plugs[0].version is not a whole number',
				() => readLaunchRecord(JSON.stringify({ ...record, plugs: [{ ...record.plugs[0]!, version: '2' }] })),
			],
			[
				'a record without its run',
				'run is not a string',
				() => readLaunchRecord(JSON.stringify({ ...record, run: 12 })),
			],
		];
		for (const [label, problem, read] of cases) {
			const refused = refusal(read);
			assert.equal(refused.code, 'launch.corrupt', label);
			assert.ok(String(refused.data.problem).includes(problem), `${label}: ${String(refused.data.problem)}`);
		}
	});

	it("a project's stored card or record of an unknown format or a broken shape is refused by name, not read with casts (by launches and by run control)", async () => {
		const root = tempDir();
		const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
		const desk = await Desk.open({ libraryDir: path.join(root, 'library'), logger: recordingLogger() });
		try {
			await desk.openWorkspace([{ name: 'shop', path: repo }]);
			const launches = await desk.launches(repo);
			launches.setTicket('Add cursor pagination');
			const db = (desk as unknown as { projectDatabases: Map<string, DurableDatabase> }).projectDatabases.get(repo)!;
			const storeCard = (value: unknown) =>
				db.write((tx) => tx.run('UPDATE launch_card SET json = ? WHERE id = 1', [JSON.stringify(value)]));

			storeCard({ ...card, project: 'shop' });
			assert.deepEqual(launches.card(), card, 'a card stored without a format is format 1');
			storeCard({ format: 2, ...card });
			assert.equal(refusal(() => launches.card()).code, 'launch.unknownFormat');
			storeCard({ ...card, plugs: {} });
			assert.deepEqual(
				refusal(() => launches.card()),
				{ code: 'launch.corrupt', data: { what: 'launch card', problem: 'plugs is not a list' } },
			);
			assert.throws(
				() => launches.unplug('a-0123456789abcdef'),
				(e) => isDeskError(e, 'launch.corrupt'),
				'a change of the card reads it first',
			);

			db.write((tx) =>
				tx.run('INSERT INTO launch_records (launch_id, created_at, json) VALUES (?, ?, ?)', [
					record.launch_id,
					record.created_at,
					JSON.stringify({ format: 9, ...record }),
				]),
			);
			assert.equal(refusal(() => launches.records()).code, 'launch.unknownFormat');
			const runControl = new SqlRunControl(db);
			assert.equal(
				refusal(() => runControl.launchRecordOfTask(record.task)).code,
				'launch.unknownFormat',
				'the run-control adapter reads records through the same reader',
			);
			assert.equal(refusal(() => runControl.launchRecord(record.launch_id)).code, 'launch.unknownFormat');
			// A record that cannot be read hides no other: the task's own readable record is found.
			const readable = { ...record, launch_id: 'launch-readable', task: 'task-readable' };
			db.write((tx) =>
				tx.run('INSERT INTO launch_records (launch_id, created_at, json) VALUES (?, ?, ?)', [
					readable.launch_id,
					'9999-12-31T00:00:00.000Z',
					JSON.stringify(readable),
				]),
			);
			assert.equal(runControl.launchRecordOfTask('task-readable')?.launch_id, 'launch-readable');
		} finally {
			desk.close();
		}
	});
});
