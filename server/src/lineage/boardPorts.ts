import type { BoardMessage } from './types';

/** A board message as written: the store numbers it (`seq`) and finds its answer (`answered_by`). */
export type NewBoardMessage = Omit<BoardMessage, 'seq' | 'answered_by'>;

/** A phase of a delivery (`dlv:<branch>`): the input, the report on the branch's board, the report delivered to its starter. */
export type DeliveryPhase = 'input' | 'reply' | 'delivered';

export interface Delivery {
	delivery_id: string;
	phase: DeliveryPhase;
	request_id: string;
	message_id?: string;
	at: string;
}

/**
 * Board writes inside a caller's transaction: the fork writes a branch's `board.started.by`, input
 * and delivery phase in the same transaction as its Task and Run. Every write consumes a request id
 * once, so a phase repeated after a restart writes nothing twice.
 */
export interface BoardTx {
	/** Inserts unless a message with the same request_id exists (INSERT … ON CONFLICT DO NOTHING); returns the stored one, created false on a repeat. */
	insertMessage(message: NewBoardMessage): { message: BoardMessage; created: boolean };
	/** Records a delivery phase once; false when it was recorded already. */
	insertDelivery(delivery: Delivery): boolean;
}
