import assert from 'node:assert/strict';
import * as path from 'node:path';
import { it } from 'node:test';
import { silentLogger } from '../../../server/src/core/logger';
import type { NewBoardMessage } from '../../../server/src/lineage/boardPorts';
import { DurableDatabase } from '../../../server/src/store/durableDatabase';
import { projectMigrations, projectSchema } from '../../../server/src/store/schemas';
import { boardMessageById, boardMessagesOf, deliveryPhasesOf, sqlBoardTx } from '../../../server/src/store/sqlBoard';
import { tempDir } from '../../helpers/temp';

function openProject(folder: string): Promise<DurableDatabase> {
	return DurableDatabase.open({
		file: path.join(folder, 'project.db'),
		schema: projectSchema,
		migrations: projectMigrations,
		logger: silentLogger,
		lockTimeoutMs: 5_000,
	});
}

const at = '2026-12-02T13:00:00.000Z';

function report(id: string, requestId: string): NewBoardMessage {
	return {
		id,
		request_id: requestId,
		node: 'branch-1',
		kind: 'report',
		from_node: 'branch-1',
		from_run: 'run-1',
		reply_enabled: true,
		passive: false,
		frozen: false,
		text: 'landed as abc1234',
		data: { outcome: 'landed', commit: 'abc1234', run: 'run-1' },
		created_at: at,
	};
}

it('a message is stored once per request id: a repeat returns the first one, created false, and writes nothing', async () => {
	const folder = tempDir();
	const db = await openProject(folder);
	try {
		const first = db.write((tx) => sqlBoardTx(tx).insertMessage(report('m-1', 'dlv:branch-1:reply')));
		assert.equal(first.created, true);
		assert.equal(first.message.id, 'm-1');
		assert.deepEqual(first.message.data, { outcome: 'landed', commit: 'abc1234', run: 'run-1' });
		assert.equal(first.message.reply_enabled, true);
		assert.equal(first.message.in_reply_to, undefined);
		assert.equal(first.message.answered_by, undefined);
		const journal = db.journalBytes;
		const again = db.write((tx) =>
			sqlBoardTx(tx).insertMessage({ ...report('m-2', 'dlv:branch-1:reply'), text: 'another text' }),
		);
		assert.equal(again.created, false);
		assert.deepEqual(again.message, first.message);
		assert.equal(db.journalBytes, journal, 'a repeat writes no journal record');
		assert.equal(boardMessagesOf(db, 'branch-1').length, 1);
	} finally {
		db.close();
	}
});

it('a report shows the answer to it; since leaves out what was read; another process reads the same rows', async () => {
	const folder = tempDir();
	const db = await openProject(folder);
	try {
		db.write((tx) => sqlBoardTx(tx).insertMessage(report('m-1', 'dlv:branch-1:reply')));
		const answer = db.write((tx) =>
			sqlBoardTx(tx).insertMessage({
				id: 'm-2',
				request_id: 'answer:m-1',
				node: 'branch-1',
				kind: 'answer',
				from_node: 'starter',
				reply_enabled: false,
				in_reply_to: 'm-1',
				passive: false,
				frozen: false,
				text: 'thanks',
				created_at: at,
			}),
		).message;
		assert.equal(boardMessageById(db, 'm-1')?.answered_by, 'm-2');
		assert.equal(answer.in_reply_to, 'm-1');
		assert.equal(answer.data, undefined);
		assert.deepEqual(
			boardMessagesOf(db, 'branch-1', boardMessageById(db, 'm-1')!.seq).map((m) => m.id),
			['m-2'],
		);
		const other = await openProject(folder);
		try {
			assert.deepEqual(boardMessagesOf(other, 'branch-1'), boardMessagesOf(db, 'branch-1'));
		} finally {
			other.close();
		}
	} finally {
		db.close();
	}
});

it('a delivery phase is recorded once', async () => {
	const db = await openProject(tempDir());
	try {
		const phase = { delivery_id: 'dlv:branch-1', phase: 'reply' as const, request_id: 'dlv:branch-1:reply', at };
		assert.equal(
			db.write((tx) => sqlBoardTx(tx).insertDelivery({ ...phase, message_id: 'm-1' })),
			true,
		);
		assert.equal(
			db.write((tx) => sqlBoardTx(tx).insertDelivery(phase)),
			false,
		);
		assert.equal(
			db.write((tx) => sqlBoardTx(tx).insertDelivery({ ...phase, phase: 'delivered', request_id: 'dlv:branch-1:out' })),
			true,
		);
		assert.deepEqual(
			deliveryPhasesOf(db, 'dlv:branch-1').map((d) => [d.phase, d.message_id]),
			[
				['reply', 'm-1'],
				['delivered', undefined],
			],
		);
	} finally {
		db.close();
	}
});
