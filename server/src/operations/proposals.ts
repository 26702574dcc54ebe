/**
 * Proposals to retire an asset (glossary: Retired): an agent may propose, only the person decides.
 * `propose_asset_retire` records a proposal and retires nothing; the editor lists the open ones on
 * their assets and the person accepts (the asset is retired, by them) or declines.
 */
import { uuidv7 } from '../ai/ids';
import { AnswerRetireProposal, ListRetireProposals } from '../protocol/protocol';
import { object, string } from '../protocol/schema';
import { answerOnce } from '../store/clientRequests';
import { actorLabel } from './actor';
import { assertAssetOfCall } from './assets';
import { operation } from './operation';

export const proposeRetire = operation({
	name: 'asset.proposeRetire',
	summary: 'Propose to retire an asset, with a reason; the person accepts or declines it in the editor.',
	params: object({
		id: string({ minLength: 1, maxLength: 64 }),
		reason: string({ minLength: 1, maxLength: 2000 }),
	}),
	// The person retires an asset themselves; proposing is for agents (in a run, or their own through `desk mcp`).
	callers: ['cli', 'agent'],
	mutates: true,
	// A second proposal while one is open answers with that one and changes nothing.
	idempotent: true,
	surfaces: {
		mcp: {
			tool: 'propose_asset_retire',
			title: 'Propose retiring an asset',
			description:
				'Propose that an asset of this project be retired (taken out of the lists and suggestions; never deleted), with a one-paragraph reason the person reads. This does not retire it: the person accepts or declines the proposal in the editor. Returns the proposal (id, state open) and whether it is new; an asset with an open proposal answers with that one.',
		},
	},
	async run(call, { id, reason }) {
		await assertAssetOfCall(call, id);
		const proposals = call.desk.retireProposals;
		const { result, replayed } = await answerOnce(call.desk.libraryRequests, call.request, async () =>
			proposals.propose(
				{
					id: `rp-${uuidv7()}`,
					asset_id: id,
					reason: reason.trim(),
					proposed_by: actorLabel(call.actor),
					...(call.actor.kind === 'agent' ? { run_id: call.actor.run } : {}),
					created_at: new Date().toISOString(),
				},
				call.request,
			),
		);
		if (result.created && !replayed) {
			call.events.assetsChanged('retirement proposed');
		}
		return result;
	},
});

export const listProposals = operation({
	name: 'proposal.list',
	summary: 'List the open proposals to retire an asset.',
	params: ListRetireProposals.params,
	callers: ['editor'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListRetireProposals },
	async run(call, { project }) {
		const open = call.desk.retireProposals.open();
		if (project === undefined) {
			return { proposals: open };
		}
		const members = new Set((await call.desk.library.listAssets(project)).map((a) => a.id));
		return { proposals: open.filter((p) => members.has(p.asset_id)) };
	},
});

export const answerProposal = operation({
	name: 'proposal.answer',
	summary: 'Accept (retire the asset) or decline a proposal to retire an asset.',
	params: AnswerRetireProposal.params,
	callers: ['editor'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: AnswerRetireProposal },
	async run(call, { id, answer }) {
		const proposals = call.desk.retireProposals;
		const { result, replayed } = await answerOnce(call.desk.libraryRequests, call.request, async () =>
			proposals.answer(id, answer, actorLabel(call.actor), new Date().toISOString(), call.request),
		);
		if (!replayed) {
			call.events.assetsChanged(answer === 'accept' ? 'retirement accepted' : 'retirement declined');
		}
		return result;
	},
});

/** The proposals' operations, in the table's order. */
export const proposalOperations = [proposeRetire, listProposals, answerProposal];
