import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { DeskErrorJson } from '../../server/src/core/errors';
import type { Actor } from '../../server/src/operations/actor';
import { invokeOperation, noEvents, type DeskEvents } from '../../server/src/operations/operation';
import { proposeRetire } from '../../server/src/operations/proposals';
import {
	AnswerRetireProposal,
	AssetsDidChange,
	ImportAsset,
	LaunchGo,
	ListAssets,
	ListRetireProposals,
	OpenWorkspace,
	RunDidFinish,
	SetRetired,
	SetTicket,
	ShowRun,
	deskErrorCode,
} from '../../server/src/protocol/protocol';
import { libraryChangedOutside } from '../../server/src/desk';
import { desk } from '../helpers/deskCli';
import { openDesk } from '../helpers/deskFixture';
import { makeRepo } from '../helpers/gitRepo';
import { deskToolAnswers, scriptedAgentSettings } from '../helpers/scriptedAgent';
import { expectRpcError, serverForSuite } from '../helpers/serverProcess';
import { tempDir } from '../helpers/temp';

describe('proposals to retire an asset: an agent proposes through the operation, the person answers over JSON-RPC', () => {
	const root = tempDir();
	const libraryDir = path.join(root, 'library');
	const server = serverForSuite(libraryDir);

	function folder(name: string): string {
		const dir = path.join(root, name);
		fs.mkdirSync(dir);
		fs.writeFileSync(path.join(dir, 'notes.md'), `# ${name}\n`);
		return dir;
	}

	const agent = (run: string): Actor => ({
		kind: 'agent',
		agent: 'claude',
		project: 'shop',
		task: 't-1',
		run,
		workFolder: path.join(root, 'work'),
		outbox: path.join(root, 'outbox'),
	});

	async function propose(actor: Actor, params: unknown, requestId?: string, events: DeskEvents = noEvents) {
		// Another process than the server, on the same library: as the run's desk or `desk mcp` is.
		const runDesk = await openDesk(libraryDir);
		return invokeOperation(
			proposeRetire,
			{ desk: runDesk, actor, events, signal: new AbortController().signal, ...(requestId ? { requestId } : {}) },
			params,
		);
	}

	async function refusal(work: Promise<unknown>): Promise<string> {
		try {
			await work;
		} catch (error) {
			return (error as { code: string }).code;
		}
		throw new Error('the call succeeded but a refusal was expected');
	}

	it('records a proposal that retires nothing; the person accepts it once and the asset is retired', async () => {
		const { asset } = await server.call(ImportAsset, { dir: folder('old-spec'), project: 'shop' });
		const { asset: other } = await server.call(ImportAsset, { dir: folder('elsewhere'), project: 'other' });

		const told: string[] = [];
		const first = await propose(
			agent('r-1'),
			{ id: asset.id, reason: '  Superseded by new-spec; nothing plugs it since June.  ' },
			'receipt-0001',
			{ ...noEvents, assetsChanged: (reason) => told.push(reason) },
		);
		assert.equal(first.created, true);
		assert.deepEqual(told, ['retirement proposed']);
		const proposal = first.proposal;
		assert.deepEqual(
			{ ...proposal, id: undefined, created_at: undefined },
			{
				id: undefined,
				asset_id: asset.id,
				reason: 'Superseded by new-spec; nothing plugs it since June.',
				proposed_by: 'agent claude, run r-1',
				run_id: 'r-1',
				created_at: undefined,
				state: 'open',
			},
		);
		const listed = await server.call(ListAssets, {});
		assert.equal(listed.assets.find((a) => a.id === asset.id)?.retired, false, 'a proposal retires nothing');

		// The same receipt key is the same answer; another proposal while one is open answers with that one.
		assert.deepEqual(
			await propose(
				agent('r-1'),
				{ id: asset.id, reason: '  Superseded by new-spec; nothing plugs it since June.  ' },
				'receipt-0001',
			),
			first,
		);
		const again = await propose(agent('r-2'), { id: asset.id, reason: 'Also unused.' });
		assert.deepEqual(again, { proposal, created: false });
		assert.equal(
			await refusal(propose(agent('r-1'), { id: asset.id, reason: 'other words' }, 'receipt-0001')),
			'request.idReused',
		);

		// Confined to the run's project; the editor and the person do not propose, they retire.
		assert.equal(await refusal(propose(agent('r-1'), { id: other.id, reason: 'not mine' })), 'operation.outsideRun');
		const person = { name: 'Jane Doe', email: 'jane@example.com' };
		assert.equal(
			await refusal(propose({ kind: 'editor', person }, { id: asset.id, reason: 'x' })),
			'operation.notAllowed',
		);
		assert.equal(await refusal(propose(agent('r-1'), { id: asset.id, reason: '' })), 'desk.badParams');

		assert.deepEqual(await server.call(ListRetireProposals, { project: 'shop' }), { proposals: [proposal] });
		assert.deepEqual(await server.call(ListRetireProposals, { project: 'other' }), { proposals: [] });
		assert.deepEqual(await server.call(ListRetireProposals, {}), { proposals: [proposal] });

		const accepted = await server.call(AnswerRetireProposal, {
			id: proposal.id,
			answer: 'accept',
			requestId: 'answer-0001',
		});
		assert.equal(accepted.state, 'accepted');
		assert.ok(accepted.answered_by && accepted.answered_by !== 'desk-user', accepted.answered_by);
		assert.ok(accepted.answered_at);
		await server.notified(AssetsDidChange, (p) => p.reason === 'retirement accepted', 'the accept was told');
		const after = await server.call(ListAssets, {});
		assert.equal(after.assets.find((a) => a.id === asset.id)?.retired, true, 'accepting retired the asset');
		assert.equal(after.assets.find((a) => a.id === other.id)?.retired, false);
		assert.deepEqual(await server.call(ListRetireProposals, {}), { proposals: [] });

		// A retried accept is the first answer; a second answer is refused; a retired asset takes no proposal.
		assert.deepEqual(
			await server.call(AnswerRetireProposal, { id: proposal.id, answer: 'accept', requestId: 'answer-0001' }),
			accepted,
		);
		const second = await expectRpcError(server.connection, AnswerRetireProposal.method, {
			id: proposal.id,
			answer: 'decline',
		});
		assert.equal(second.code, deskErrorCode);
		assert.equal((second.data as DeskErrorJson).code, 'proposal.notOpen');
		assert.equal(await refusal(propose(agent('r-3'), { id: asset.id, reason: 'again' })), 'asset.retired');
	});

	it('declines a proposal (the asset stays), refuses an unknown one, and takes one from a person’s own agent', async () => {
		const { asset } = await server.call(ImportAsset, { dir: folder('kept'), project: 'shop' });
		const person = { name: 'Jane Doe', email: 'jane@example.com' };
		const { proposal } = await propose({ kind: 'cli', person, via: 'mcp' }, { id: asset.id, reason: 'Looks stale.' });
		assert.equal(proposal.proposed_by, 'Jane Doe <jane@example.com> (desk mcp)');
		assert.equal(proposal.run_id, undefined);

		const declined = await server.call(AnswerRetireProposal, { id: proposal.id, answer: 'decline' });
		assert.equal(declined.state, 'declined');
		await server.notified(AssetsDidChange, (p) => p.reason === 'retirement declined', 'the decline was told');
		const after = await server.call(ListAssets, {});
		assert.equal(after.assets.find((a) => a.id === asset.id)?.retired, false, 'declining keeps the asset');
		assert.deepEqual(await server.call(ListRetireProposals, {}), { proposals: [] });

		// Declined, it may be proposed again.
		const anew = await propose(agent('r-4'), { id: asset.id, reason: 'Still stale.' });
		assert.equal(anew.created, true);
		assert.notEqual(anew.proposal.id, proposal.id);

		const unknown = await expectRpcError(server.connection, AnswerRetireProposal.method, {
			id: 'rp-none',
			answer: 'accept',
		});
		assert.equal((unknown.data as DeskErrorJson).code, 'proposal.notFound');
		const outsider = await expectRpcError(server.connection, ListRetireProposals.method, { project: 'no-such' });
		assert.equal((outsider.data as DeskErrorJson).code, 'project.notFound');
	});

	it('retiring the asset directly, in the window or with `desk asset retire`, answers its open proposal', async () => {
		const { asset: inWindow } = await server.call(ImportAsset, { dir: folder('retired-in-window'), project: 'shop' });
		const { asset: atCli } = await server.call(ImportAsset, { dir: folder('retired-at-cli'), project: 'shop' });
		const { proposal: first } = await propose(agent('r-5'), { id: inWindow.id, reason: 'Superseded.' });
		const { proposal: second } = await propose(agent('r-6'), { id: atCli.id, reason: 'Unused.' });
		const mine = new Set([inWindow.id, atCli.id]);
		const openOnMine = async () =>
			(await server.call(ListRetireProposals, { project: 'shop' })).proposals
				.filter((p) => mine.has(p.asset_id))
				.map((p) => p.id);
		assert.deepEqual(await openOnMine(), [first.id, second.id]);

		// Retire in the Assets view: the proposal is closed in the retirement's own transaction.
		assert.equal((await server.call(SetRetired, { id: inWindow.id, retired: true })).retired, true);
		assert.deepEqual(await openOnMine(), [second.id]);
		// `desk asset retire`, another process on the same library.
		const retired = desk('--store', libraryDir, 'asset', 'retire', atCli.id);
		assert.equal(retired.code, 0, retired.stderr);
		assert.deepEqual(await openOnMine(), []);

		// Each was answered as accepted, by whoever retired it: a later answer is refused and says so.
		for (const [proposal, by] of [
			[first, /^Proposal rp-\S+ was accepted already by (?!.*\(desk\)).+/],
			[second, /^Proposal rp-\S+ was accepted already by .+ \(desk\)\.$/],
		] as const) {
			const late = await expectRpcError(server.connection, AnswerRetireProposal.method, {
				id: proposal.id,
				answer: 'decline',
			});
			assert.equal((late.data as DeskErrorJson).code, 'proposal.notOpen');
			assert.match(late.message, by);
		}

		// Unretired, both are back in the lists with no proposal on them.
		await server.call(SetRetired, { id: inWindow.id, retired: false });
		assert.equal(desk('--store', libraryDir, 'asset', 'unretire', atCli.id).code, 0);
		const listed = await server.call(ListAssets, { project: 'shop' });
		assert.deepEqual(
			listed.assets.filter((a) => a.id === inWindow.id || a.id === atCli.id).map((a) => a.retired),
			[false, false],
		);
		assert.deepEqual(await openOnMine(), []);
	});
});

describe('an agent inside a run proposes through the desk tools; the window is told', () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	const drafts = path.join(root, 'drafts');
	fs.mkdirSync(drafts);
	fs.writeFileSync(path.join(drafts, 'old.md'), '# Old draft\n');
	let draftsId = '';
	const server = serverForSuite(path.join(root, 'library'), async (started) => {
		await started.call(OpenWorkspace, { folders: [{ name: 'shop', path: repo }] });
		draftsId = (await started.call(ImportAsset, { dir: drafts, project: 'shop' })).asset.id;
	});

	it('records the proposal with the run, retires nothing, and tells the Assets view', async () => {
		await server.call(SetTicket, { project: 'shop', ticket: 'Tidy the library' });
		const settings = scriptedAgentSettings({
			writes: [{ path: 'notes.md', content: 'tidied\n' }],
			deskTools: [
				{ tool: 'propose_asset_retire', args: { id: draftsId, reason: 'The drafts were merged into the spec.' } },
			],
		});
		// The window is told by whichever process recorded it: this desk (reason 'retirement proposed'),
		// or, when a carrier carried the run, this desk seeing the library written outside.
		const toldBefore = server.notifications.length;
		const record = await server.call(LaunchGo, { project: 'shop', settings });
		const end = await server.notified(RunDidFinish, (finished) => finished.run === record.run, 'the run to finish');
		assert.equal(end.status, 'gate', `the run went on to the gate: ${end.error ?? ''}`);
		const [, proposed] = deskToolAnswers(settings) as [
			unknown,
			{ answer: { result?: { isError?: boolean; structuredContent?: { created?: boolean } } } },
		];
		assert.notEqual(proposed.answer.result?.isError, true, JSON.stringify(proposed));
		assert.equal(proposed.answer.result?.structuredContent?.created, true);

		await server.notified(
			AssetsDidChange,
			(p) =>
				server.notifications.slice(toldBefore).some((n) => n.params === p) &&
				(p.reason === 'retirement proposed' || p.reason === libraryChangedOutside),
			'the window was told',
		);
		const { proposals } = await server.call(ListRetireProposals, { project: 'shop' });
		assert.deepEqual(
			proposals.map((p) => [p.asset_id, p.run_id, p.proposed_by, p.reason]),
			[[draftsId, record.run, `agent scripted, run ${record.run}`, 'The drafts were merged into the spec.']],
		);
		const listed = await server.call(ListAssets, { project: 'shop' });
		assert.equal(listed.assets.find((a) => a.id === draftsId)?.retired, false, 'a proposal retires nothing');
		const detail = await server.call(ShowRun, { project: 'shop', id: record.run });
		assert.deepEqual(
			detail.tool_invocations.filter((t) => t.tags['desk.tool'] === 'desk').map((t) => [t.tool_name, t.status]),
			[['propose_asset_retire', 'ok']],
		);
	});
});
