/** What a decision at the gate is asked with, and the request id a Decision keeps (read by the gate and Rollback). */
import type { ActorRef, Decision, DecisionType } from '../ai/types';
import type { WriteTransaction } from '../store/durableDatabase';

export interface DecideRequest {
	decision: DecisionType;
	/** Who decides: the person (their git identity), recorded as the Decision's `created_by`. */
	by: ActorRef;
	/** The PatchSet to land (Commit) or keep (Checkpoint); the run's last one when not named. */
	patchset?: string;
	rationale?: string;
	/** Retry: refuses before anything is put back (the checkout is another run's now, say). */
	check?: () => void;
	/**
	 * Retry: claims where the new run will work, in the decision's own transaction, so a desk stopped
	 * before the run starts leaves a claimed run that the next desk fails, never one left Created.
	 */
	claim?: (tx: WriteTransaction, runId: string) => void;
	/**
	 * The client's request this decision answers (its id and params hash), kept on the Decision: a
	 * desk stopped after the Decision and before the answer was recorded answers the same request
	 * again from the Decision instead of refusing it as decided already.
	 */
	request?: { id: string; hash: string };
	/** Abandon: the person cancelled the Task (glossary: Ending), which ends Cancelled rather than Failed. */
	cancelTask?: boolean;
	/**
	 * The person's name and email for a commit the decision makes, used only where git has no identity
	 * (the editor asks for it once; see `commitPerson`).
	 */
	identity?: PersonName;
}

/** A name and an email, as a commit records a person. */
export interface PersonName {
	name: string;
	email: string;
}

/** The Decision keeps the request it answers (see {@link DecideRequest.request}). */
export function forRequest(decision: Decision, request: Pick<DecideRequest, 'request'>): Decision {
	if (request.request) {
		decision.tags = { ...decision.tags, 'desk.request': request.request.id, 'desk.request_hash': request.request.hash };
	}
	return decision;
}

export function madeFor(decision: Decision, request: { id: string; hash: string }): boolean {
	return decision.tags['desk.request'] === request.id && decision.tags['desk.request_hash'] === request.hash;
}
