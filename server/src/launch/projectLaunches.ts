import { uuidv7 } from '../ai/ids';
import { actor, addRun, newIntent, newRun, newTask } from '../ai/model';
import type { ActorRef, AiObject, Intent } from '../ai/types';
import type { Library } from '../assets/library';
import type { AssetRecord, MadeBy, ProjectRecord } from '../assets/types';
import { DeskError } from '../core/errors';
import type { ClientRequest } from '../store/clientRequests';
import type { WriteTransaction } from '../store/durableDatabase';
import type { Logger } from '../core/logger';
import { checkGitTarget, newPlug, plugInto, type CheckoutPlace, type PlugContext } from './plugging';
import type { LaunchStore, LaunchWrites } from './ports';
import { encodeLaunchCard, encodeLaunchRecord, readLaunchCard, readLaunchRecord } from './storedFormats';
import { mayNameAssets, suggestAssets } from './suggest';
import { ticketFields } from './ticketFields';
import type { SuggestIndex } from './suggestIndex';
import {
	defaultTemplate,
	type AssetPlug,
	type LaunchCard,
	type LaunchRecord,
	type LaunchTemplate,
	type PlugRole,
	type Suggestion,
	type SuggestResult,
} from './types';

/**
 * How long a card's suggestions wait for the index being built before they are answered from what
 * is indexed (a small change, such as one asset's new version, is indexed well within it).
 */
export const firstAnswerBudgetMs = 500;

/**
 * How often a card asking as its ticket is typed has the members' folders walked again for working
 * changes (see Library.matchKeys): a walk stats every file, so it runs in the background, at most
 * this often, and what it finds is indexed and reported for the card to ask again. An answer that
 * waits for the complete index walks them every time.
 */
export const folderRecheckMs = 2_000;

export interface GoOptions {
	/**
	 * Written in Go's transaction once the launch is known: the runner claims the shared checkout
	 * for the run here (and refuses by throwing), so a launch and its claim exist together or not at all.
	 */
	claim?: (tx: WriteTransaction, record: LaunchRecord) => void;
	/** The client's request id: a repeat returns the first launch. */
	request?: ClientRequest;
	/** Refuses early, before anything is snapshotted (not for a repeat of an answered request). */
	check?: () => void;
	/** Who pressed Go: the Intent's and Task's `created_by` (the person's git identity, say). */
	by?: ActorRef;
}

/**
 * A project's launch card and its launches: the draft card (kept in the project database so it
 * survives a reload), suggestions for its ticket, plugging by the rules of plugging (glossary: Plug), and Go, which freezes
 * every plug at the version AtGo shows, writes the launch record and makes the Intent, Task and Run.
 */
export class ProjectLaunches {
	constructor(
		private readonly store: LaunchStore,
		private readonly library: Library,
		private readonly project: ProjectRecord,
		private readonly headCommit: () => Promise<string | undefined>,
		private readonly index: SuggestIndex,
		/** The project's member assets (the desk keeps them until the library changes). */
		private readonly members: () => readonly AssetRecord[] = () => library.listProjectAssets(project.name),
		private readonly logger?: Logger,
	) {}

	card(): LaunchCard {
		return this.cardOf(this.store.cardText());
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
	 * Suggestions for the ticket (default: the card's), each member matched at the version Go would
	 * freeze. Without `budgetMs` every member's folder is walked now and the answer waits for the
	 * complete index. With it, each folder is taken as its last walk found it (walked now only when
	 * none has ended yet) and the answer comes once the index is up to date or that time has passed,
	 * whichever is first, ranked on what is indexed by then (named assets need no index), saying how
	 * much that was (a folder whose first walk is still going counts as not indexed). Then folders
	 * not walked for `folderRecheckMs` are walked in the background; what they find is indexed, and
	 * the index tells (`onProgress`) when it changed.
	 */
	async suggestions(ticket?: string, options: { budgetMs?: number } = {}): Promise<SuggestResult> {
		const card = this.card();
		const text = ticket ?? card.ticket;
		const members = this.members();
		let walked = false;
		const complete = this.library.matchKeys(members, options.budgetMs === undefined ? 'now' : 'last').then((keys) => {
			walked = true;
			return this.index.refresh(members, keys, (asset) => this.library.matchDocument(asset));
		});
		if (options.budgetMs === undefined) {
			await complete;
		} else {
			await within(complete, options.budgetMs);
			// A failure (the desk closing under it, say) leaves the folders to the next card's walk.
			complete
				.then(() => this.walkFolders())
				.catch((error: unknown) =>
					this.logger?.debug(`folders of ${this.project.name} not walked again: ${(error as Error).message}`),
				);
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
		if (walked) {
			return { suggestions, index: this.index.progress() };
		}
		// The card asks again when told; the first walks may find nothing to index, so tell it anyway.
		complete.then(() => this.index.reportProgress()).catch(() => undefined);
		const walking = new Set(members.filter((m) => m.engine === 'snapshot').map((m) => m.id));
		return { suggestions, index: this.index.progress(walking) };
	}

	/**
	 * Walks the members' folders not walked for `folderRecheckMs`, and brings the index up to date
	 * with what the walks found (it reports a change to `onProgress`).
	 */
	private async walkFolders(): Promise<void> {
		await this.library.matchKeys(this.members(), folderRecheckMs);
		// The members as they are now (a request may have come meanwhile), with the walks just ended.
		const members = this.members();
		const keys = await this.library.matchKeys(members, 'last');
		await this.index.refresh(members, keys, (asset) => this.library.matchDocument(asset));
	}

	async plug(
		id: string,
		role: PlugRole,
		options: Partial<Pick<AssetPlug, 'nodes' | 'files' | 'copy'>> = {},
	): Promise<LaunchCard> {
		const context = await this.context(id, role);
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
	async go(madeBy: MadeBy = 'user', now = new Date(), options: GoOptions = {}): Promise<LaunchRecord> {
		return (await this.goOnce(madeBy, now, options)).result;
	}

	/**
	 * Go as one transaction: the Intent, Task and Run, the launch record, the card cleared, the
	 * caller's claim (the run's control row) and the answer to the client's request id are written
	 * together, so a desk stopped at any point has launched either nothing (the card as it was) or
	 * everything. The card is read again inside the transaction: a card another Go launched
	 * meanwhile, or one changed while this Go froze its plugs, is refused (`launch.cardChanged`), so
	 * one card is launched once. "Used in" lives in the library's database: it is recorded after,
	 * from `launch_uses_pending`, which the transaction fills and the next open empties if this
	 * process stopped first. A repeat of an answered request id returns the first launch
	 * (`replayed`) and changes nothing.
	 */
	async goOnce(
		madeBy: MadeBy = 'user',
		now = new Date(),
		options: GoOptions = {},
	): Promise<{ result: LaunchRecord; replayed: boolean }> {
		return this.store.answerOnce(options.request, () => this.launch(madeBy, now, options));
	}

	private async launch(madeBy: MadeBy, now: Date, options: GoOptions): Promise<LaunchRecord> {
		const cardJson = this.store.cardText();
		const card = this.cardOf(cardJson);
		// The card's own refusal first: with no ticket there is nothing to run, whatever the agent.
		if (card.ticket.trim() === '') {
			throw new DeskError('launch.emptyTicket', "Write the ticket before Go: it becomes the run's prompt.");
		}
		options.check?.();
		// Everything that can refuse is checked before anything is snapshotted or written.
		const head = await this.requireHead();
		await this.checkTarget(card.plugs);
		const plugs: LaunchRecord['plugs'] = [];
		for (const plug of card.plugs) {
			const asset = this.library.getAsset(plug.id);
			plugs.push({ ...plug, name: asset.name, version: await this.versionNow(asset.id, madeBy) });
		}
		const { record, objects } = this.launchObjects(card.ticket, card.template, plugs, head, options, now);
		this.store.write((writes) => {
			writes.throwIfAnswered(options.request);
			const current = writes.cardText();
			if (current !== cardJson) {
				throw new DeskError(
					'launch.cardChanged',
					current === undefined
						? `The card of ${this.project.name} was launched by another Go meanwhile; nothing was launched twice.`
						: `The card of ${this.project.name} changed while Go froze its plugs; look at it and press Go again.`,
					{ project: this.project.name },
				);
			}
			writes.clearCard();
			this.writeLaunch(writes, record, objects, options);
		});
		this.recordPendingUses();
		return record;
	}

	/**
	 * A follow-up (glossary: Follow-up): a refinement Intent whose `parent` is `parent`, with its Task
	 * and Run, launched from `original`'s record with the new ticket, as Go writes a launch (one
	 * transaction, the caller's claim in it, a repeat of the request answered from the first). The
	 * target plug is taken at its AtGo version now (the original may have landed on it since), the
	 * others as the original froze them. The card is not touched.
	 */
	async followUp(
		original: LaunchRecord,
		parent: Intent,
		ticket: string,
		options: GoOptions = {},
		now = new Date(),
	): Promise<{ result: LaunchRecord; replayed: boolean }> {
		return this.store.answerOnce(options.request, async () => {
			options.check?.();
			if (ticket.trim() === '') {
				throw new DeskError('launch.emptyTicket', "Write the follow-up's ticket: it becomes the run's prompt.");
			}
			const head = await this.requireHead();
			await this.checkTarget(original.plugs);
			const plugs: LaunchRecord['plugs'] = [];
			for (const plug of original.plugs) {
				plugs.push(plug.role === 'target' ? { ...plug, version: await this.versionNow(plug.id, 'user') } : plug);
			}
			const { record, objects } = this.launchObjects(ticket, original.template, plugs, head, options, now, parent);
			this.store.write((writes) => this.writeLaunch(writes, record, objects, options));
			this.recordPendingUses();
			return record;
		});
	}

	private async requireHead(): Promise<string> {
		const head = await this.headCommit();
		if (head === undefined) {
			throw new DeskError('git.unreadable', `${this.project.path} has no commit to start a run from.`, {
				dir: this.project.path,
			});
		}
		return head;
	}

	/** The version a plug is frozen at: its AtGo version, a snapshot asset with working changes snapshotted first. */
	private async versionNow(id: string, madeBy: MadeBy): Promise<number> {
		const atGo = await this.library.atGo(id);
		if (atGo.engine === 'snapshot' && atGo.working_changes) {
			return (await this.library.snapshot(id, { madeBy, note: 'at go' })).version.version;
		}
		return atGo.version;
	}

	/** A launch's Intent (the ticket as prompt), Task and Run (Created), and its record. */
	private launchObjects(
		ticket: string,
		template: LaunchTemplate,
		plugs: LaunchRecord['plugs'],
		head: string,
		options: GoOptions,
		now: Date,
		parent?: Intent,
	): { record: LaunchRecord; objects: AiObject[] } {
		const person = options.by ?? actor('human', 'desk-user');
		const intent = newIntent(person, ticket, { now, ...(parent ? { parent } : {}) });
		const fields = ticketFields(ticket);
		const task = newTask(person, fields.title, {
			intent,
			now,
			...(fields.description ? { description: fields.description } : {}),
			constraints: fields.constraints,
			acceptanceCriteria: fields.acceptanceCriteria,
		});
		const run = newRun(actor('system', 'agent-desk'), task, head, { now });
		addRun(task, run);
		const record: LaunchRecord = {
			launch_id: uuidv7(now.getTime()),
			created_at: now.toISOString(),
			project: this.project.name,
			ticket,
			template,
			plugs,
			intent: intent.object_id,
			task: task.object_id,
			run: run.object_id,
		};
		return { record, objects: [intent, task, run] };
	}

	/** The launch's objects and record, the caller's claim and the answer to its request, in one transaction. */
	private writeLaunch(writes: LaunchWrites, record: LaunchRecord, objects: AiObject[], options: GoOptions): void {
		writes.throwIfAnswered(options.request);
		writes.putAiObjects(objects);
		writes.insertLaunch(record, encodeLaunchRecord(record));
		const claim = options.claim;
		if (claim) {
			writes.alongside((tx) => claim(tx, record));
		}
		writes.answer(options.request, record, record.created_at);
	}

	/**
	 * Records in the library the plugs ("used in") of launches whose Go wrote them as pending: the
	 * launch just made, and those of a desk that stopped before it got there. Recording twice
	 * changes nothing; a failure leaves them pending for the next time.
	 */
	recordPendingUses(): void {
		for (const launch_id of this.store.pendingUses()) {
			try {
				const json = this.store.recordText(launch_id);
				if (json !== undefined) {
					const launched = readLaunchRecord(json);
					this.library.recordLaunch(launched.launch_id, launched.project, launched.plugs, launched.created_at);
				}
				this.store.usesRecorded(launch_id);
			} catch (error) {
				this.logger?.warn(
					`launch ${launch_id}: "used in" not recorded yet (${(error as Error).message}); tried again at the next Go`,
				);
				return;
			}
		}
	}

	records(): LaunchRecord[] {
		return this.store.recordTexts().map(readLaunchRecord);
	}

	private async context(id: string, role: PlugRole): Promise<PlugContext> {
		const asset = this.library.getAsset(id);
		return {
			asset,
			project: this.project,
			skill: asset.kind === 'skill' ? await this.library.skillOf(asset) : undefined,
			checkouts: role === 'target' && asset.engine === 'git' ? await this.checkouts(asset) : undefined,
		};
	}

	/** A git target's checkout and the project's, each where git finds its folders. */
	private async checkouts(asset: AssetRecord): Promise<{ target: CheckoutPlace; project: CheckoutPlace }> {
		const place = async (top: string): Promise<CheckoutPlace> => {
			const { gitDir, commonDir } = await this.library.gitLocation(top);
			return { top, gitDir, commonDir };
		};
		return { target: await place(asset.working_dir), project: await place(this.project.path) };
	}

	/**
	 * The rule of a git target checked again at Go (glossary: Plug): the card may have been plugged
	 * under another main asset, or a checkout moved since. Before anything is snapshotted or written.
	 */
	private async checkTarget(plugs: readonly AssetPlug[]): Promise<void> {
		const target = plugs.find((p) => p.role === 'target');
		const asset = target ? this.library.getAsset(target.id) : undefined;
		if (asset?.engine === 'git') {
			checkGitTarget(asset, this.project, await this.checkouts(asset));
		}
	}

	/** Reads the card, changes it and saves it in one transaction. */
	private change(edit: (card: LaunchCard) => LaunchCard): LaunchCard {
		return this.store.write((writes) => {
			const card = edit(this.cardOf(writes.cardText()));
			writes.saveCard(encodeLaunchCard(card), new Date().toISOString());
			return card;
		});
	}

	/** The card stored as `json`, read by its one reader; a new card when none is stored. */
	private cardOf(json: string | undefined): LaunchCard {
		return json === undefined ? this.emptyCard() : readLaunchCard(json);
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
