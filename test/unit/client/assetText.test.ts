import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
	AssetSummary,
	AssetVersion,
	ImportResultJson,
	RetireProposal,
	VersionFile,
} from '../../../server/src/protocol/protocol';
import type { AssetRecord } from '../../../server/src/assets/types';
import {
	aboutByModel,
	addedFolderText,
	addedSkillText,
	assetTooltip,
	atGoText,
	groupOf,
	proposalText,
	versionFileRow,
	versionTooltip,
} from '../../../client/src/assets/assetText';
import { assertInertMarkdown, renderMarkdown } from '../../helpers/markdown';

/** Text a repository, a folder or an agent chooses: a command link, an image, an autolink, an icon, a table break, a heading. */
const hostile =
	'[Fix](command:agentDesk.approveRun) ![x](https://evil.example/t.png) www.evil.example $(sync~spin) a | b\n# head\u202e';

function asset(engine: 'git' | 'snapshot' | 'none', more: Partial<AssetSummary> = {}): AssetSummary {
	return {
		id: 'a1',
		name: hostile,
		kind: hostile,
		engine,
		about: hostile,
		branch: hostile,
		remote: hostile,
		url: hostile,
		working_dir: hostile,
		tags: [hostile, hostile],
		created_at: hostile,
		created_by: hostile,
		notes: hostile,
		problem: hostile,
		retired: false,
		picked_version: 2,
		version_count: 3,
		file_count: 4,
		projects: [],
		...more,
	} as unknown as AssetSummary;
}

const assertInert = (text: string) => assertInertMarkdown(text, ['warning']);

describe("the Assets view's tooltips, built without VS Code", () => {
	it('show every name, note, branch, path, URL and tag of an asset as text, in every engine', () => {
		for (const engine of ['git', 'snapshot', 'none'] as const) {
			assertInert(assetTooltip(asset(engine), true, hostile, { error: hostile }));
			assertInert(assetTooltip(asset(engine), false, 'shop', undefined));
		}
	});

	it("say of an about a model wrote that a model wrote it, and nothing of a person's", () => {
		const about = 'The storefront and its checkout';
		const byModel = assetTooltip(asset('git', { about, about_model_written: true }), false, 'shop', undefined);
		assert.ok(byModel.includes(`${about} *(${aboutByModel})*`), byModel);
		const byPerson = assetTooltip(asset('git', { about, about_model_written: false }), false, 'shop', undefined);
		assert.ok(byPerson.includes(about) && !byPerson.includes(aboutByModel), byPerson);
	});

	it("show an agent's proposal to retire the asset first, its proposer and reason as text", () => {
		const proposal: RetireProposal = {
			id: 'rp-1',
			asset_id: 'a1',
			reason: `${hostile}\nsecond line`,
			proposed_by: hostile,
			run_id: 'r-1',
			created_at: '2026-12-02T10:00:00.000Z',
			state: 'open',
		};
		const text = assetTooltip(asset('snapshot'), false, 'shop', undefined, proposal);
		assertInertMarkdown(text, ['warning', 'lightbulb']);
		assert.ok(text.indexOf('Retirement proposed') < text.indexOf('| Id |'), 'the proposal comes before the facts');
		assert.match(renderMarkdown(proposalText(proposal)), /on 2026-12-02 10:00/);
		assert.match(proposalText(proposal), /second line/);
		assert.doesNotMatch(assetTooltip(asset('snapshot'), false, 'shop', undefined), /Retirement proposed/);
	});

	it("show a version's commit subject or note as text", () => {
		const git = {
			engine: 'git',
			version: 3,
			subject: hostile,
			commit: 'f'.repeat(40),
			made_at: '2026-01-01T00:00:00Z',
			made_by: 'outside',
			head_at: '2026-01-02T00:00:00Z',
			never_head: false,
		} as unknown as AssetVersion;
		const snapshot = {
			engine: 'snapshot',
			version: 2,
			note: hostile,
			manifest: 'e'.repeat(64),
			file_count: 3,
			bytes: 2048,
			made_at: '2026-01-01T00:00:00Z',
			made_by: 'person',
		} as unknown as AssetVersion;
		assertInert(versionTooltip(asset('git'), git));
		assertInert(versionTooltip(asset('snapshot'), snapshot));
		assert.match(versionTooltip(asset('snapshot'), snapshot), /3 files, 2\.0 KiB/);
	});

	it('say what Go would read and list each asset in its group', () => {
		assert.equal(atGoText(undefined), undefined);
		assert.equal(atGoText({ error: 'gone' }), 'AtGo: gone');
		assert.equal(
			atGoText({ engine: 'snapshot', version: 4, working_changes: true } as never),
			'working changes: go would read them as v4',
		);
		assert.equal(atGoText({ engine: 'git', version: 7 } as never), 'go would read v7');
		assert.deepEqual([asset('git'), asset('snapshot'), asset('none'), asset('git', { kind: 'skill' })].map(groupOf), [
			'repos',
			'folders',
			'links',
			'skills',
		]);
	});

	it("show a file's kind in its row: a link's target, a submodule's commit, a file's size", () => {
		const file = (more: Partial<VersionFile>): VersionFile => ({
			path: 'docs/x',
			size: -1,
			hash: '9427de7ddc6ef20e1dac006e09aee97f8ceb1de9',
			executable: false,
			kind: 'file',
			...more,
		});
		assert.deepEqual(versionFileRow(file({ kind: 'symlink', target: '../guide.md' }), 3), {
			icon: 'file-symlink-file',
			description: '→ ../guide.md',
			tooltip: 'docs/x at v3: a symbolic link to ../guide.md (its target is its content; never followed)',
		});
		assert.deepEqual(versionFileRow(file({ kind: 'submodule' }), 3), {
			icon: 'file-submodule',
			description: 'submodule @ 9427de7',
			tooltip:
				'docs/x at v3: a submodule at commit 9427de7ddc6ef20e1dac006e09aee97f8ceb1de9 (another repository; its files are not part of this version)',
		});
		assert.deepEqual(versionFileRow(file({ kind: 'executable', executable: true, size: 2048 }), 3), {
			icon: 'file',
			description: '2.0 KiB',
			tooltip: 'docs/x at v3 (executable)',
		});
		assert.deepEqual(versionFileRow(file({}), 3), { icon: 'file', tooltip: 'docs/x at v3' });
	});
});

describe('what adding a folder says, built without VS Code', () => {
	const imported = (kind: string, skipped?: ImportResultJson['skipped']): ImportResultJson => ({
		asset: { id: 'a-0123456789abcdef', name: 'docs', kind, engine: 'snapshot' } as AssetRecord,
		created: true,
		...(skipped ? { skipped } : {}),
	});
	const skipped = [
		{ path: 'passwd', reason: 'a link (never followed)' },
		{ path: 'pipe', reason: 'a FIFO' },
		{ path: 'sock', reason: 'a socket' },
		{ path: 'dev', reason: 'a device' },
	];

	it('names what the first version of a folder does not store, as a snapshot does; nothing when all is stored', () => {
		assert.deepEqual(addedFolderText(imported('')), {
			text: 'Agent Desk: added docs (snapshot).',
			notStored: false,
		});
		assert.deepEqual(addedFolderText(imported('', skipped.slice(0, 2))), {
			text: 'Agent Desk: added docs (snapshot) (not stored: passwd (a link (never followed)); pipe (a FIFO)).',
			notStored: true,
		});
		assert.match(
			addedFolderText(imported('', skipped)).text,
			/not stored: passwd .*; pipe .*; sock \(a socket\) and 1 more \(see the log\)\)\.$/,
		);
	});

	it('says so of a skill folder too', () => {
		assert.deepEqual(addedSkillText(imported('skill')), { text: 'Agent Desk: added skill docs.', notStored: false });
		assert.deepEqual(addedSkillText(imported('skill', skipped.slice(1, 2))), {
			text: 'Agent Desk: added skill docs (not stored: pipe (a FIFO)).',
			notStored: true,
		});
	});
});
