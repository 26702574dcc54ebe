import { uuidv7 } from '../ai/ids';
import { actor, addRun, newIntent, newRun, newTask } from '../ai/model';
import type { Library } from '../assets/library';
import type { AssetRecord, MadeBy, ProjectRecord } from '../assets/types';
import { DeskError } from '../core/errors';
import type { AiStore } from '../store/aiStore';
import type { DurableDatabase } from '../store/durableDatabase';
import { newPlug, plugInto, type PlugContext } from './plugging';
import { mayNameAssets, suggestAssets } from './suggest';
import type { SuggestIndex } from './suggestIndex';
import { defaultTemplate, type AssetPlug, type LaunchCard, type LaunchTemplate, type PlugRole, type Suggestion, type SuggestResult } from './types';

/**
 * How long a card's suggestions wait for the index being built before they are answered from what
 * is indexed (a small change, such as one asset's new version, is indexed well within it).
 */
export const firstAnswerBudgetMs = 500;

/** What a Go froze (LaunchAsset for every plug) and made. */
export interface LaunchRecord {
	launch_id: string;
	created_at: string;
	project: string;
	ticket: string;
	template: LaunchTemplate;
	plugs: Array<AssetPlug & { name: string; version: number }>;
	intent: string;
	task: string;
	run: string;
}

/**
 * A project's launch card and its launches: the draft card (kept in the project database so it
 * survives a reload), suggestions for its ticket, plugging by the rules of §06, and Go, which freezes
 * every plug at the version AtGo shows, writes the launch record and makes the Intent, Task and Run.
 */
export class ProjectLaunches {
	constructor(
		private readonly db: DurableDatabase,
		private readonly library: Library,
		private readonly ai: AiStore,
		private readonly project: ProjectRecord,
		private readonly headCommit: () => Promise<string | undefined>,
		private readonly index: SuggestIndex,
		/** The project's member assets (the desk keeps them until the library changes). */
		private readonly members: () => readonly AssetRecord[] = () => library.listProjectAssets(project.name),
	) {}

	card(): LaunchCard {
		const row = this.db.get<{ json: string }>('SELECT json FROM launch_card WHERE id = 1');
		return row ? (JSON.parse(row.json) as LaunchCard) : this.emptyCard();
	}

	/** Saves the ticket (and template) being written. */
	setTicket(ticket: string, template?: LaunchTemplate): LaunchCard {
		return this.change((card) => ({ ...card, ticket, ...(template ? { template } : {}) }));
	}

	/** Suggestions from the complete index (waits for it): for the command line and scripts. */
	async suggest(ticket?: string): Promise<Suggestion[]> {
		return (await this.suggestions(ticket)).suggestions;
	}

	/**
	 * Suggestions for the ticket (default: the card's). The index is brought up to date in the
	 * background; with `budgetMs` the answer comes once it is complete or that time has passed,
	 * whichever is first, ranked on what is indexed by then (named assets need no index), and says
	 * how much that was. Without it, the answer waits for the complete index.
	 */
	async suggestions(ticket?: string, options: { budgetMs?: number } = {}): Promise<SuggestResult> {
		const card = this.card();
		const text = ticket ?? card.ticket;
		const members = this.members();
		const complete = this.index.refresh(members, await this.library.matchKeys(members), (asset) => this.library.matchDocument(asset, 'version'));
		if (options.budgetMs === undefined) {
			await complete;
		} else {
			await within(complete, options.budgetMs);
		}
		const suggestions = await suggestAssets({
			ticket: text,
			// Only an id or a path names an asset: without one, the library need not be listed.
			library: mayNameAssets(text) ? this.library.allAssets() : [],
			members,
			mainAssetId: this.project.main_asset,
			plugged: new Set(card.plugs.map((p) => p.id)),
			index: this.index.index,
		});
		return { suggestions, index: this.index.progress() };
	}

	async plug(id: string, role: PlugRole, options: Partial<Pick<AssetPlug, 'nodes' | 'files' | 'copy'>> = {}): Promise<LaunchCard> {
		const context = await this.context(id);
		// The rules are checked against the card as it is inside the write, so two plugs at once
		// (two windows, say) cannot both pass as the one target.
		return this.change((card) => plugInto(card, newPlug(id, role, options), context));
	}

	unplug(id: string): LaunchCard {
		return this.change((card) => {
			if (!card.plugs.some((p) => p.id === id)) {
				throw new DeskError('launch.notPlugged', `${id} is not plugged into the card.`, { id });
			}
			return { ...card, plugs: card.plugs.filter((p) => p.id !== id) };
		});
	}

	/**
	 * Go: every plug frozen at its AtGo version (a snapshot asset with working changes is snapshotted
	 * first, so the version exists), the launch record written, "used in" recorded, and the Intent
	 * (the ticket as prompt), Task and Run (Created) made. The card starts afresh.
	 */
	async go(madeBy: MadeBy = 'user', now = new Date()): Promise<LaunchRecord> {
		const card = this.card();
		if (card.ticket.trim() === '') {
			throw new DeskError('launch.emptyTicket', 'Write the ticket before Go: it becomes the run\'s prompt.');
		}
		// Everything that can refuse is checked before anything is snapshotted or written.
		const head = await this.headCommit();
		if (head === undefined) {
			throw new DeskError('git.unreadable', `${this.project.path} has no commit to start a run from.`, { dir: this.project.path });
		}
		const plugs: LaunchRecord['plugs'] = [];
		for (const plug of card.plugs) {
			const asset = this.library.getAsset(plug.id);
			const atGo = await this.library.atGo(asset.id);
			let version = atGo.version;
			if (atGo.engine === 'snapshot' && atGo.working_changes) {
				version = (await this.library.snapshot(asset.id, { madeBy, note: 'at go' })).version.version;
			}
			plugs.push({ ...plug, name: asset.name, version });
		}
		const person = actor('human', 'desk-user');
		const intent = newIntent(person, card.ticket, { now });
		const title = card.ticket.trim().split('\n', 1)[0]!.slice(0, 99).trim() || 'Launch';
		const task = newTask(person, title, { intent, now });
		const run = newRun(actor('system', 'agent-desk'), task, head, { now });
		addRun(task, run);
		const record: LaunchRecord = {
			launch_id: uuidv7(now.getTime()),
			created_at: now.toISOString(),
			project: this.project.name,
			ticket: card.ticket,
			template: card.template,
			plugs,
			intent: intent.object_id,
			task: task.object_id,
			run: run.object_id,
		};
		this.ai.put([intent, task, run]);
		this.db.write((tx) => {
			tx.run('INSERT INTO launch_records (launch_id, created_at, json) VALUES (?, ?, ?)', [record.launch_id, record.created_at, JSON.stringify(record)]);
			// The card starts afresh, unless it was edited while Go ran: then the edits stay.
			tx.run('DELETE FROM launch_card WHERE id = 1 AND json = ?', [JSON.stringify(card)]);
		});
		this.library.recordLaunch(record.launch_id, this.project.name, plugs, record.created_at);
		return record;
	}

	records(): LaunchRecord[] {
		return this.db.all<{ json: string }>('SELECT json FROM launch_records ORDER BY launch_id').map((r) => JSON.parse(r.json) as LaunchRecord);
	}

	private async context(id: string): Promise<PlugContext> {
		const asset = this.library.getAsset(id);
		return { asset, project: this.project, skill: asset.kind === 'skill' ? await this.library.skillOf(asset) : undefined };
	}

	/** Reads the card, changes it and saves it in one transaction. */
	private change(edit: (card: LaunchCard) => LaunchCard): LaunchCard {
		return this.db.write((tx) => {
			const row = tx.get<{ json: string }>('SELECT json FROM launch_card WHERE id = 1');
			const card = edit(row ? (JSON.parse(row.json) as LaunchCard) : this.emptyCard());
			tx.run('INSERT INTO launch_card (id, json, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at', [
				JSON.stringify(card),
				new Date().toISOString(),
			]);
			return card;
		});
	}

	private emptyCard(): LaunchCard {
		return { project: this.project.name, ticket: '', template: defaultTemplate, plugs: [] };
	}
}

/** Waits for `work` at most `ms`; a failure of `work` after that is left to whoever else awaits it. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
	let timer: NodeJS.Timeout | undefined;
	try {
		await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
	} finally {
		clearTimeout(timer);
	}
}
