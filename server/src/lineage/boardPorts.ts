import type { AiObject, Decision, PatchSet, Run } from '../ai/types';
import type { BoardMessage, LineageNode } from './types';

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

/** What the board reads, outside a write or inside one (then with the transaction's own changes). */
export interface BoardReads {
	/** A node's board, oldest first, after `since` (a seq). */
	messages(node: string, since?: number): BoardMessage[];
	message(id: string): BoardMessage | undefined;
	messageByRequest(requestId: string): BoardMessage | undefined;
	/** A tally or branch; undefined for any other Task. */
	node(id: string): LineageNode | undefined;
	/** The branches `node` started (its children on the starter side). */
	startedBy(node: string): LineageNode[];
	/** Every branch of the project, oldest first. */
	branches(): LineageNode[];
	/** The tally Task of a root, once its first branch started. */
	tallyOf(root: string): string | undefined;
	/** The phases of a delivery recorded so far, in order. */
	phases(deliveryId: string): Delivery[];
	/**
	 * The active reports delivered to starters' boards (whichever process delivered them) that are
	 * neither answered nor carried into a continuation yet, oldest first.
	 */
	openReports(): BoardMessage[];
	/** The inputs of Continue with Reports whose carry phases are recorded (what each continuation carries). */
	carrying(): BoardMessage[];
}

/** The board's writes and reads inside one durable transaction. */
export interface BoardWrite extends BoardTx, BoardReads {
	/** A liquid abstract replaced by the next one. */
	supersede(id: string, by: string): void;
	/** A branch's abstract frozen by its landing. */
	freeze(id: string): void;
	/** The carry phases a continuation's input recorded, removed: its reports can be carried again. How many. */
	release(input: string): number;
}

/**
 * The project database's boards: reads, and writes in one durable transaction each; `Tx` is the
 * transaction itself, for a caller that writes other records in it (a continuation's Run).
 */
export interface BoardStore<Tx> extends BoardReads {
	write<T>(body: (board: BoardWrite, tx: Tx) => T): T;
}

/** The AI objects the board reads a branch's runs from (the project's AiStore). */
export interface BoardObjects {
	get<T extends AiObject = AiObject>(id: string): T | undefined;
	runDecision(runId: string): Decision | undefined;
	runPatchSets(run: Run): PatchSet[];
}

/** An active report delivered to a starter: what the desk tells the windows (`desk/board/didReport`). */
export interface ReportNotice {
	/** The starter's node (a Task), and its run when an agent's run started the branch. */
	starter_node: string;
	starter_run?: string;
	/** Whether a person started the branch (then `starter_node` is the root's tally). */
	person: boolean;
	branch: string;
	/** The report as delivered on the starter's board. */
	report: string;
	title: string;
	outcome: string;
}
