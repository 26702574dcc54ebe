import { canonicalJson, sha256Hex } from '../ai/canonical';
import { DeskError } from '../core/errors';
import type { WriteTransaction } from './durableDatabase';

/**
 * Client request ids: a client (the extension, a script using `desk --request-id`) names each action
 * that creates something (Go, a new asset, a link, a note, an attachment, a version, a snapshot) with
 * an id of its own and sends the same id again when it retries. The first answer is stored in the
 * database's `client_requests` table, in the same transaction as the effect, so a repeat returns that
 * answer and changes nothing, whether the first attempt's answer was lost, the server restarted, or
 * the repeat came from another process; the same id with other params is refused (`request.idReused`).
 */
export interface ClientRequest {
	readonly id: string;
	readonly method: string;
	/** sha256 of the method and the canonical JSON of its params (the request id left out). */
	readonly hash: string;
}

/** What can read a database: the database itself or a transaction. */
export interface RequestLedger {
	get<Row extends object>(sql: string, params?: Array<string | number | null>): Row | undefined;
}

/** A request id: what a client may choose (a UUID, say), bounded so it is stored and echoed as is. */
export const requestIdPattern = /^[A-Za-z0-9._:-]{8,128}$/;

/** The request a method call names, or undefined when it carries no id (then it runs as it comes). */
export function clientRequest(
	method: string,
	requestId: string | undefined,
	params: object,
): ClientRequest | undefined {
	if (requestId === undefined) {
		return undefined;
	}
	if (!requestIdPattern.test(requestId)) {
		throw new DeskError(
			'request.badId',
			`A request id is 8 to 128 letters, digits or . _ : -; not ${JSON.stringify(requestId.slice(0, 140))}.`,
			{ requestId: requestId.slice(0, 140) },
		);
	}
	const rest: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(params)) {
		if (key !== 'requestId') {
			rest[key] = value;
		}
	}
	return { id: requestId, method, hash: sha256Hex(`${method}\n${canonicalJson(rest)}`) };
}

/**
 * The stored answer of `request`, or undefined when the id is new. The same id with other params
 * (or another method) is refused.
 */
export function storedAnswer<T>(ledger: RequestLedger, request: ClientRequest): { result: T } | undefined {
	const row = ledger.get<{ method: string; params_hash: string; result: string }>(
		'SELECT method, params_hash, result FROM client_requests WHERE request_id = ?',
		[request.id],
	);
	if (!row) {
		return undefined;
	}
	if (row.params_hash !== request.hash) {
		throw idReused(request, row.method);
	}
	return { result: JSON.parse(row.result) as T };
}

/** Thrown inside a transaction that found its request answered meanwhile (by another process): the effect is rolled back and the stored answer returned. */
export class AlreadyAnswered extends Error {
	constructor(readonly result: unknown) {
		super('the request was answered meanwhile');
	}
}

/**
 * Records the answer of `request` in the transaction that makes its effect. When another process
 * answered the same id meanwhile, the transaction is abandoned (AlreadyAnswered) so its effect is not
 * made twice.
 */
export function recordAnswer(
	tx: WriteTransaction,
	request: ClientRequest | undefined,
	result: unknown,
	at: string,
): void {
	if (!request) {
		return;
	}
	throwIfAnswered(tx, request);
	tx.run('INSERT INTO client_requests (request_id, method, params_hash, result, created_at) VALUES (?, ?, ?, ?, ?)', [
		request.id,
		request.method,
		request.hash,
		JSON.stringify(result),
		at,
	]);
}

/**
 * Abandons the caller's transaction (AlreadyAnswered) when the request was answered meanwhile, by
 * another process: a transaction whose other checks would refuse first (a card already launched)
 * calls it before them, so the repeat gets the first answer rather than that refusal.
 */
export function throwIfAnswered(tx: RequestLedger, request: ClientRequest | undefined): void {
	const stored = request && storedAnswer(tx, request);
	if (stored) {
		throw new AlreadyAnswered(stored.result);
	}
}

/** The requests {@link answerOnce} answered with an earlier answer: how a caller that did not call it learns so. */
const replayedRequests = new WeakSet<ClientRequest>();

/**
 * Marks `request` answered with an earlier answer, for an operation that answered a request of its
 * own made from it (a version keyed by the bytes it puts, not only their paths).
 */
export function markReplayed(request: ClientRequest): void {
	replayedRequests.add(request);
}

/** True when `request` was answered with an earlier answer (a repeat), not by its own work. */
export function wasReplayed(request: ClientRequest | undefined): boolean {
	return request !== undefined && replayedRequests.has(request);
}

const inFlight = new WeakMap<
	object,
	Map<string, { hash: string; answer: Promise<{ result: unknown; replayed: boolean }> }>
>();

/**
 * Runs `work` once for `request` (when there is one): a stored answer is returned at once; a repeat
 * while the first is still working waits for it and returns its answer; `work` records its answer
 * with {@link recordAnswer} in the transaction that makes its effect. `replayed` says the answer is
 * an earlier one, so the caller starts nothing (no run, no notification).
 */
export async function answerOnce<T>(
	ledger: RequestLedger,
	request: ClientRequest | undefined,
	work: () => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
	if (!request) {
		return { result: await work(), replayed: false };
	}
	const answered = await answerOnceRequested(ledger, request, work);
	if (answered.replayed) {
		replayedRequests.add(request);
	}
	return answered;
}

async function answerOnceRequested<T>(
	ledger: RequestLedger,
	request: ClientRequest,
	work: () => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
	const stored = storedAnswer<T>(ledger, request);
	if (stored) {
		return { result: stored.result, replayed: true };
	}
	let flights = inFlight.get(ledger);
	if (!flights) {
		flights = new Map();
		inFlight.set(ledger, flights);
	}
	const running = flights.get(request.id);
	if (running) {
		if (running.hash !== request.hash) {
			throw idReused(request, request.method);
		}
		const first = await running.answer;
		return { result: JSON.parse(JSON.stringify(first.result)) as T, replayed: true };
	}
	const answer = work().then(
		(result) => ({ result: result as unknown, replayed: false }),
		(error: unknown) => {
			if (error instanceof AlreadyAnswered) {
				return { result: error.result, replayed: true };
			}
			throw error;
		},
	);
	flights.set(request.id, { hash: request.hash, answer });
	try {
		return (await answer) as { result: T; replayed: boolean };
	} finally {
		flights.delete(request.id);
	}
}

function idReused(request: ClientRequest, firstMethod: string): DeskError {
	return new DeskError(
		'request.idReused',
		`Request id ${request.id} was used before for ${firstMethod === request.method ? 'the same action with other params' : firstMethod}; a repeat must send the same params, a new action a new id.`,
		{ requestId: request.id, method: request.method, first: firstMethod },
	);
}
