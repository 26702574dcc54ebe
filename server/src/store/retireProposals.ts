import type { RetireProposal } from '../assets/types';
import { DeskError } from '../core/errors';
import { recordAnswer, type ClientRequest } from './clientRequests';
import type { DurableDatabase, WriteTransaction } from './durableDatabase';

interface ProposalRow {
	id: string;
	asset_id: string;
	reason: string;
	proposed_by: string;
	run_id: string;
	created_at: string;
	state: string;
	answered_by: string;
	answered_at: string;
}

const columns = 'id, asset_id, reason, proposed_by, run_id, created_at, state, answered_by, answered_at';

/** What a proposal is made of when it is made; the rest is the answer's. */
export type NewRetireProposal = Pick<
	RetireProposal,
	'id' | 'asset_id' | 'reason' | 'proposed_by' | 'run_id' | 'created_at'
>;

/**
 * Proposals to retire assets (glossary: Retired), in the library database beside the assets they
 * name: a proposal and its answer are each one transaction with the request id's answer, and an
 * accepted proposal retires its asset in that same transaction. The other way round, a direct
 * retirement answers the asset's open proposal in its own transaction (`acceptRetireProposals` of
 * the library's store).
 */
export class RetireProposals {
	constructor(private readonly db: DurableDatabase) {}

	/** The open proposals, oldest first. */
	open(): RetireProposal[] {
		return this.db
			.all<ProposalRow>(`SELECT ${columns} FROM retire_proposals WHERE state = 'open' ORDER BY created_at, id`)
			.map(toProposal);
	}

	get(id: string): RetireProposal | undefined {
		const row = this.db.get<ProposalRow>(`SELECT ${columns} FROM retire_proposals WHERE id = ?`, [id]);
		return row && toProposal(row);
	}

	/**
	 * Records a proposal, unless its asset has one open already: then that one is the answer
	 * (`created` false) and nothing changes. Refuses an asset that is not in the library
	 * (`asset.notFound`) or is retired already (`asset.retired`).
	 */
	propose(
		proposal: NewRetireProposal,
		request: ClientRequest | undefined,
	): { proposal: RetireProposal; created: boolean } {
		return this.db.write((tx) => {
			const asset = tx.get<{ retired: number }>('SELECT retired FROM assets WHERE id = ?', [proposal.asset_id]);
			if (!asset) {
				throw new DeskError('asset.notFound', `No asset ${proposal.asset_id}.`, { id: proposal.asset_id });
			}
			if (asset.retired === 1) {
				throw new DeskError('asset.retired', `Asset ${proposal.asset_id} is retired already.`, {
					id: proposal.asset_id,
				});
			}
			const openOne = openOf(tx, proposal.asset_id);
			const result = openOne
				? { proposal: openOne, created: false }
				: { proposal: { ...proposal, state: 'open' as const }, created: true };
			if (!openOne) {
				tx.run(
					'INSERT INTO retire_proposals (id, asset_id, reason, proposed_by, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
					[
						proposal.id,
						proposal.asset_id,
						proposal.reason,
						proposal.proposed_by,
						proposal.run_id ?? '',
						proposal.created_at,
					],
				);
			}
			recordAnswer(tx, request, result, proposal.created_at);
			return result;
		});
	}

	/**
	 * The person's answer: `accept` retires the asset (as Retire does) and closes the proposal, in one
	 * transaction; `decline` closes it. Fails with `proposal.notFound`, or `proposal.notOpen` when it
	 * was answered already.
	 */
	answer(
		id: string,
		answer: 'accept' | 'decline',
		by: string,
		at: string,
		request: ClientRequest | undefined,
	): RetireProposal {
		return this.db.write((tx) => {
			const row = tx.get<ProposalRow>(`SELECT ${columns} FROM retire_proposals WHERE id = ?`, [id]);
			if (!row) {
				throw new DeskError('proposal.notFound', `No proposal ${id}.`, { id });
			}
			if (row.state !== 'open') {
				throw new DeskError('proposal.notOpen', `Proposal ${id} was ${row.state} already by ${row.answered_by}.`, {
					id,
					state: row.state,
				});
			}
			const state = answer === 'accept' ? 'accepted' : 'declined';
			tx.run('UPDATE retire_proposals SET state = ?, answered_by = ?, answered_at = ? WHERE id = ?', [
				state,
				by,
				at,
				id,
			]);
			if (answer === 'accept') {
				tx.run('UPDATE assets SET retired = 1 WHERE id = ?', [row.asset_id]);
			}
			const result = toProposal({ ...row, state, answered_by: by, answered_at: at });
			recordAnswer(tx, request, result, at);
			return result;
		});
	}
}

function openOf(tx: WriteTransaction, assetId: string): RetireProposal | undefined {
	const row = tx.get<ProposalRow>(`SELECT ${columns} FROM retire_proposals WHERE asset_id = ? AND state = 'open'`, [
		assetId,
	]);
	return row && toProposal(row);
}

function toProposal(row: ProposalRow): RetireProposal {
	return {
		id: row.id,
		asset_id: row.asset_id,
		reason: row.reason,
		proposed_by: row.proposed_by,
		...(row.run_id ? { run_id: row.run_id } : {}),
		created_at: row.created_at,
		state: row.state as RetireProposal['state'],
		...(row.answered_by ? { answered_by: row.answered_by } : {}),
		...(row.answered_at ? { answered_at: row.answered_at } : {}),
	};
}
