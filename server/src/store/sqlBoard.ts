import type {
	BoardReads,
	BoardStore,
	BoardTx,
	BoardWrite,
	Delivery,
	DeliveryPhase,
	NewBoardMessage,
} from '../lineage/boardPorts';
import { nodeView } from '../lineage/lineage';
import type { NodeRow } from '../lineage/ports';
import type { BoardMessage, BoardMessageKind, LineageNode } from '../lineage/types';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';

/** Reads through the database outside a write, or through the transaction inside one. */
export type BoardQuery = Pick<WriteTransaction, 'all' | 'get'>;

/** A `board_messages` row, with the id of the answer to it (a report's) when there is one. */
export interface BoardMessageRow {
	seq: number;
	message_id: string;
	request_id: string;
	node: string;
	kind: string;
	from_node: string | null;
	from_run: string | null;
	reply_enabled: number;
	in_reply_to: string | null;
	passive: number;
	frozen: number;
	superseded_by: string | null;
	text: string;
	data: string | null;
	created_at: string;
	answered_by: string | null;
}

/** The columns of a message and its first answer: what {@link boardMessageOf} reads. */
export const boardMessageColumns =
	"m.seq, m.message_id, m.request_id, m.node, m.kind, m.from_node, m.from_run, m.reply_enabled, m.in_reply_to, m.passive, m.frozen, m.superseded_by, m.text, m.data, m.created_at, (SELECT a.message_id FROM board_messages a WHERE a.in_reply_to = m.message_id AND a.kind = 'answer' ORDER BY a.seq LIMIT 1) AS answered_by";

/** The one reader of a board row: absent columns stay absent, flags become booleans, data is parsed. */
export function boardMessageOf(row: BoardMessageRow): BoardMessage {
	const message: BoardMessage = {
		seq: row.seq,
		id: row.message_id,
		request_id: row.request_id,
		node: row.node,
		kind: row.kind as BoardMessageKind,
		reply_enabled: row.reply_enabled === 1,
		passive: row.passive === 1,
		frozen: row.frozen === 1,
		text: row.text,
		created_at: row.created_at,
	};
	if (row.from_node !== null) {
		message.from_node = row.from_node;
	}
	if (row.from_run !== null) {
		message.from_run = row.from_run;
	}
	if (row.in_reply_to !== null) {
		message.in_reply_to = row.in_reply_to;
	}
	if (row.superseded_by !== null) {
		message.superseded_by = row.superseded_by;
	}
	if (row.data !== null) {
		message.data = JSON.parse(row.data) as Record<string, unknown>;
	}
	if (row.answered_by !== null) {
		message.answered_by = row.answered_by;
	}
	return message;
}

/** A node's board, oldest first; `since` leaves out the messages up to that seq. */
export function boardMessagesOf(query: BoardQuery, node: string, since = 0): BoardMessage[] {
	return query
		.all<BoardMessageRow>(
			`SELECT ${boardMessageColumns} FROM board_messages m WHERE m.node = ? AND m.seq > ? ORDER BY m.seq`,
			[node, since],
		)
		.map(boardMessageOf);
}

export function boardMessageById(query: BoardQuery, id: string): BoardMessage | undefined {
	const row = query.get<BoardMessageRow>(`SELECT ${boardMessageColumns} FROM board_messages m WHERE m.message_id = ?`, [
		id,
	]);
	return row && boardMessageOf(row);
}

export function boardMessageByRequest(query: BoardQuery, requestId: string): BoardMessage | undefined {
	const row = query.get<BoardMessageRow>(`SELECT ${boardMessageColumns} FROM board_messages m WHERE m.request_id = ?`, [
		requestId,
	]);
	return row && boardMessageOf(row);
}

/** The phases of a delivery recorded so far, in their order (input, reply, delivered). */
export function deliveryPhasesOf(query: BoardQuery, deliveryId: string): Delivery[] {
	return query
		.all<{
			delivery_id: string;
			phase: DeliveryPhase;
			request_id: string;
			message_id: string | null;
			at: string;
		}>(
			"SELECT delivery_id, phase, request_id, message_id, at FROM board_deliveries WHERE delivery_id = ? ORDER BY CASE phase WHEN 'input' THEN 0 WHEN 'reply' THEN 1 ELSE 2 END",
			[deliveryId],
		)
		.map((row) => ({
			delivery_id: row.delivery_id,
			phase: row.phase,
			request_id: row.request_id,
			...(row.message_id === null ? {} : { message_id: row.message_id }),
			at: row.at,
		}));
}

/** The board writes of one transaction (lineage/boardPorts.ts). */
export function sqlBoardTx(tx: WriteTransaction): BoardTx {
	return {
		insertMessage(message: NewBoardMessage) {
			const stored = boardMessageByRequest(tx, message.request_id);
			if (stored) {
				return { message: stored, created: false };
			}
			tx.run(
				'INSERT INTO board_messages (message_id, request_id, node, kind, from_node, from_run, reply_enabled, in_reply_to, passive, frozen, superseded_by, text, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING',
				[
					message.id,
					message.request_id,
					message.node,
					message.kind,
					message.from_node ?? null,
					message.from_run ?? null,
					message.reply_enabled ? 1 : 0,
					message.in_reply_to ?? null,
					message.passive ? 1 : 0,
					message.frozen ? 1 : 0,
					message.superseded_by ?? null,
					message.text,
					message.data === undefined ? null : JSON.stringify(message.data),
					message.created_at,
				],
			);
			return { message: boardMessageByRequest(tx, message.request_id)!, created: true };
		},
		insertDelivery(delivery: Delivery) {
			const stored = tx.get<{ phase: string }>(
				'SELECT phase FROM board_deliveries WHERE (delivery_id = ? AND phase = ?) OR request_id = ?',
				[delivery.delivery_id, delivery.phase, delivery.request_id],
			);
			if (stored) {
				return false;
			}
			tx.run(
				'INSERT INTO board_deliveries (delivery_id, phase, request_id, message_id, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
				[delivery.delivery_id, delivery.phase, delivery.request_id, delivery.message_id ?? null, delivery.at],
			);
			return true;
		},
	};
}

/** The board reads over a database or a transaction. */
function boardReads(query: BoardQuery): BoardReads {
	return {
		messages: (node, since) => boardMessagesOf(query, node, since),
		message: (id) => boardMessageById(query, id),
		messageByRequest: (requestId) => boardMessageByRequest(query, requestId),
		node(id) {
			const row = query.get<NodeRow>('SELECT * FROM lineage_nodes WHERE node_id = ?', [id]);
			return row && nodeView(row);
		},
		startedBy: (node) =>
			query
				.all<NodeRow>('SELECT * FROM lineage_nodes WHERE starter_node = ? ORDER BY created_at, node_id', [node])
				.map(nodeView),
		branches: () =>
			query
				.all<NodeRow>("SELECT * FROM lineage_nodes WHERE kind = 'branch' ORDER BY created_at, node_id")
				.map(nodeView),
		tallyOf: (root) =>
			query.get<{ tally_task: string | null }>('SELECT tally_task FROM lineage_roots WHERE name = ?', [root])
				?.tally_task ?? undefined,
		phases: (deliveryId) => deliveryPhasesOf(query, deliveryId),
		// A delivered report's copy on the starter's board (`dlv:<branch>:out`); its answer names the
		// branch's own copy (`dlv:<branch>:reply`), and a continuation carries it as `carry:<id>`.
		openReports: () =>
			query
				.all<BoardMessageRow>(
					`SELECT ${boardMessageColumns} FROM board_messages m WHERE m.kind = 'report' AND m.passive = 0 AND m.request_id = 'dlv:' || m.from_node || ':out'
					AND NOT EXISTS (SELECT 1 FROM board_deliveries d WHERE d.delivery_id = 'carry:' || m.message_id)
					AND NOT EXISTS (SELECT 1 FROM board_messages r JOIN board_messages a ON a.in_reply_to = r.message_id AND a.kind = 'answer' WHERE r.request_id = 'dlv:' || m.from_node || ':reply')
					ORDER BY m.seq`,
				)
				.map(boardMessageOf),
		carrying: () =>
			query
				.all<BoardMessageRow>(
					`SELECT ${boardMessageColumns} FROM board_messages m WHERE m.kind = 'input' AND m.request_id LIKE 'continue:%'
					AND EXISTS (SELECT 1 FROM board_deliveries d WHERE d.message_id = m.message_id AND d.delivery_id LIKE 'carry:%')
					ORDER BY m.seq`,
				)
				.map(boardMessageOf),
	};
}

/** The SQL adapter of the boards (lineage/boardPorts.ts `BoardStore`) over a project database. */
export class SqlBoardStore implements BoardStore<WriteTransaction> {
	private readonly reads: BoardReads;

	constructor(private readonly db: DurableDatabase) {
		this.reads = boardReads(db);
	}

	messages(node: string, since?: number): BoardMessage[] {
		return this.reads.messages(node, since);
	}
	message(id: string): BoardMessage | undefined {
		return this.reads.message(id);
	}
	messageByRequest(requestId: string): BoardMessage | undefined {
		return this.reads.messageByRequest(requestId);
	}
	node(id: string): LineageNode | undefined {
		return this.reads.node(id);
	}
	startedBy(node: string): LineageNode[] {
		return this.reads.startedBy(node);
	}
	branches(): LineageNode[] {
		return this.reads.branches();
	}
	tallyOf(root: string): string | undefined {
		return this.reads.tallyOf(root);
	}
	phases(deliveryId: string): Delivery[] {
		return this.reads.phases(deliveryId);
	}
	openReports(): BoardMessage[] {
		return this.reads.openReports();
	}
	carrying(): BoardMessage[] {
		return this.reads.carrying();
	}

	write<T>(body: (board: BoardWrite, tx: WriteTransaction) => T): T {
		return this.db.write((tx) => {
			const board: BoardWrite = {
				...boardReads(tx),
				...sqlBoardTx(tx),
				supersede: (id, by) =>
					tx.run('UPDATE board_messages SET superseded_by = ? WHERE message_id = ? AND superseded_by IS NULL', [
						by,
						id,
					]),
				freeze: (id) => tx.run('UPDATE board_messages SET frozen = 1 WHERE message_id = ?', [id]),
				release: (input) => {
					const carried = tx.all<{ delivery_id: string }>(
						"SELECT delivery_id FROM board_deliveries WHERE message_id = ? AND delivery_id LIKE 'carry:%'",
						[input],
					);
					if (carried.length > 0) {
						tx.run("DELETE FROM board_deliveries WHERE message_id = ? AND delivery_id LIKE 'carry:%'", [input]);
					}
					return carried.length;
				},
			};
			return body(board, tx);
		});
	}
}
