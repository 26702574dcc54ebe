import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import { runDetail, runsOverview } from '../runs/runViews';
import { answerOnce, clientRequest } from '../store/clientRequests';
import type { WriteTransaction } from '../store/durableDatabase';
import {
	DecideRun,
	deskRequests,
	LaunchGo,
	type CardView,
	type FolderOutcome,
	type ParamsOf,
	type ResultOf,
	type ServerStatus,
} from '../protocol/protocol';
import { firstAnswerBudgetMs, type ProjectLaunches } from '../launch/projectLaunches';
import { parseRunSettings } from '../runs/settings';
import type { Run } from '../ai/types';
import type { StoreRecovery } from '../desk';
import type { RecoverChoice } from '../store/damage';
import type { PersonIdentity } from '../operations/actor';
import { operations } from '../operations';
import { invokeOperation, type DeskEvents } from '../operations/operation';

type Requests = typeof deskRequests;

/** One handler per declared request; the compiler refuses a missing one, a test checks at run time. */
export type DeskHandlers = {
	[K in keyof Requests]: (params: ParamsOf<Requests[K]>, signal: AbortSignal) => Promise<ResultOf<Requests[K]>>;
};

export interface HandlerContext {
	/** Who the person in the editor is: their git identity, else their account. */
	person(): Promise<PersonIdentity>;
	/** The open desk; throws the reason when it could not be opened. */
	desk(): Promise<Desk>;
	status(): Promise<ServerStatus>;
	/** Recovers a library marked damaged (the desk could not open it), then opens it. */
	recoverLibrary(choice: RecoverChoice): Promise<StoreRecovery>;
	notifyAssetsChanged(reason: string): void;
	notifySnapshotProgress(id: string, files: number): void;
	notifyRunsChanged(project: string): void;
	notifyAttachmentsChanged(project: string, task: string): void;
}

/** What an operation called through this server tells the windows: the protocol's notifications. */
export function notifyingEvents(context: HandlerContext): DeskEvents {
	return {
		assetsChanged: (reason) => context.notifyAssetsChanged(reason),
		snapshotProgress: (id, files) => context.notifySnapshotProgress(id, files),
		runsChanged: (project) => context.notifyRunsChanged(project),
		attachmentsChanged: (project, task) => context.notifyAttachmentsChanged(project, task),
	};
}

export function createHandlers(context: HandlerContext): DeskHandlers {
	return { ...handWritten(context), ...operationHandlers(context) } as DeskHandlers;
}

/**
 * A handler for each operation the table serves over JSON-RPC: the params were checked against the
 * operation's schema (its method's) before it runs; the actor is the person in the editor.
 */
function operationHandlers(context: HandlerContext): Partial<DeskHandlers> {
	const events = notifyingEvents(context);
	const handlers: Record<string, (params: unknown, signal: AbortSignal) => Promise<unknown>> = {};
	const names = new Map<string, keyof Requests>(
		Object.entries(deskRequests).map(([name, definition]) => [definition.method, name as keyof Requests]),
	);
	for (const op of operations) {
		const rpc = op.surfaces.rpc;
		if (!rpc || !op.callers.includes('editor')) {
			continue;
		}
		const name = names.get(rpc.method);
		if (name === undefined) {
			throw new Error(`operation ${op.name} names ${rpc.method}, which the protocol does not declare`);
		}
		handlers[name] = async (params, signal) =>
			invokeOperation(
				op,
				{ desk: await context.desk(), actor: { kind: 'editor', person: await context.person() }, events, signal },
				params,
			);
	}
	return handlers as Partial<DeskHandlers>;
}

function handWritten(
	context: HandlerContext,
): Omit<
	DeskHandlers,
	| 'SearchLibrary'
	| 'SetTags'
	| 'ImportAsset'
	| 'SnapshotAsset'
	| 'PutVersion'
	| 'DescribeAsset'
	| 'AddLink'
	| 'AttachFile'
	| 'ListAssets'
	| 'ListVersions'
	| 'GetAtGo'
	| 'ListFiles'
	| 'ListFolder'
	| 'ReadFile'
	| 'DiffVersions'
	| 'SetRetired'
	| 'SetChecks'
	| 'AddNote'
	| 'SyncAsset'
	| 'UsedInLaunches'
	| 'ListAttachments'
	| 'ReadAttachment'
	| 'DeleteAttachment'
	| 'ListRetireProposals'
	| 'AnswerRetireProposal'
> {
	return {
		async OpenWorkspace({ folders }) {
			const desk = await context.desk();
			const results = await desk.openWorkspace(folders);
			const outcomes = results.map((r): FolderOutcome => {
				const { name, path } = r.folder;
				switch (r.outcome) {
					case 'adopted':
						return { name, path, outcome: 'adopted', project: r.project, asset: r.asset, created: r.created };
					case 'notARepository':
						return { name, path, outcome: 'notARepository' };
					case 'failed':
						return { name, path, outcome: 'failed', error: r.error.toJSON() };
				}
			});
			if (results.some((r) => r.outcome === 'adopted')) {
				context.notifyAssetsChanged('workspace opened');
			}
			return { folders: outcomes };
		},

		async GetStatus() {
			return context.status();
		},

		async RecoverStore({ store, repo, choice }) {
			if (store === 'library') {
				if (repo !== undefined) {
					throw new DeskError('store.cannotRecover', 'Recovering the library takes no repo.', { repo });
				}
				return context.recoverLibrary(choice);
			}
			if (repo === undefined) {
				throw new DeskError('store.cannotRecover', 'Recovering a project database needs the repo it belongs to.', {});
			}
			const desk = await context.desk();
			const project = desk.library.listProjects().find((p) => p.path === repo && p.path !== '');
			if (!project) {
				throw new DeskError('project.notFound', `No project has the repository ${repo}.`, { dir: repo });
			}
			const result = await desk.recoverProject(project.path, choice);
			context.notifyAssetsChanged('project database recovered');
			context.notifyRunsChanged(project.name);
			return result;
		},

		async ListRuns({ project }) {
			const desk = await context.desk();
			return runsOverview(await desk.projectAi(projectTop(desk, project)));
		},

		async ShowRun({ project, id }) {
			const desk = await context.desk();
			return runDetail(await desk.projectAi(projectTop(desk, project)), id);
		},

		async ImportHistory({ project, ref }) {
			const desk = await context.desk();
			const result = await desk.importHistory(projectTop(desk, project), ref);
			if (result.added > 0) {
				context.notifyRunsChanged(project);
			}
			return result;
		},

		async ExportHistory({ project, ref }) {
			const desk = await context.desk();
			return desk.exportHistory(projectTop(desk, project), ref);
		},

		async GetCard({ project }) {
			const desk = await context.desk();
			return cardView(desk, await desk.launches(projectTop(desk, project)));
		},

		async SetTicket({ project, ticket }) {
			const desk = await context.desk();
			const launches = await desk.launches(projectTop(desk, project));
			launches.setTicket(ticket);
			return cardView(desk, launches);
		},

		async SuggestAssets({ project, ticket }) {
			const desk = await context.desk();
			return (await desk.launches(projectTop(desk, project))).suggestions(ticket, { budgetMs: firstAnswerBudgetMs });
		},

		async PlugAsset({ project, id, role, nodes, files, copy }) {
			const desk = await context.desk();
			const launches = await desk.launches(projectTop(desk, project));
			await launches.plug(id, role, {
				nodes: nodes ?? [],
				files: files ?? [],
				copy: Object.fromEntries((copy ?? []).map((c) => [c.from, c.to])),
			});
			return cardView(desk, launches);
		},

		async UnplugAsset({ project, id }) {
			const desk = await context.desk();
			const launches = await desk.launches(projectTop(desk, project));
			launches.unplug(id);
			return cardView(desk, launches);
		},

		async LaunchGo({ project, settings, execute, requestId }) {
			const desk = await context.desk();
			const top = projectTop(desk, project);
			// Settings are checked before Go changes anything.
			const runSettings = parseRunSettings(settings);
			const launches = await desk.launches(top);
			const request = clientRequest(LaunchGo.method, requestId, { project, settings, execute });
			if (execute === false) {
				const { result, replayed } = await launches.goOnce('user', new Date(), { ...(request ? { request } : {}) });
				if (!replayed) {
					context.notifyRunsChanged(project);
					context.notifyAssetsChanged('launch');
				}
				return result;
			}
			const { executor } = await desk.runs(top);
			const card = launches.card();
			// The run claims the checkout in Go's own transaction: two Gos (here or in another
			// process) never both start an agent in it.
			const { result: record, replayed } = await launches.goOnce('user', new Date(), {
				...(request ? { request } : {}),
				check: () => executor.assertCheckoutFree(runSettings, card),
				claim: (tx, launched) => executor.claimIn(tx, runSettings, launched, launched.run),
			});
			if (replayed) {
				return record;
			}
			await desk.startRun(top, record, record.run, runSettings);
			context.notifyRunsChanged(project);
			context.notifyAssetsChanged('launch');
			return record;
		},

		async CancelRun({ project, run, reason }) {
			const desk = await context.desk();
			const { executor } = await desk.runs(projectTop(desk, project));
			const result = executor.cancel(run, reason?.trim() || 'cancelled by the person');
			context.notifyRunsChanged(project);
			return result;
		},

		async DecideRun({ project, run, decision, patchset, rationale, settings, requestId }) {
			const desk = await context.desk();
			const top = projectTop(desk, project);
			const runSettings = decision === 'retry' ? parseRunSettings(settings) : undefined;
			const { gate, executor } = await desk.runs(top);
			const request = clientRequest(DecideRun.method, requestId, {
				project,
				run,
				decision,
				patchset,
				rationale,
				settings,
			});
			// Retry: the new run claims the checkout in the decision's transaction, as Go's run does.
			const decided = (await desk.projectAi(top)).get<Run>(run);
			const record = runSettings && decided?.object_type === 'run' ? gate.launchRecord(decided) : undefined;
			const retry =
				runSettings && record
					? {
							check: () => executor.assertCheckoutFree(runSettings, record),
							claim: (tx: WriteTransaction, id: string) => executor.claimIn(tx, runSettings, record, id),
						}
					: {};
			// A decision is made once whatever happens (a second is refused); its answer is recorded after it.
			const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, async () => {
				const decided = await gate.decide(run, {
					decision,
					...(patchset ? { patchset } : {}),
					...(rationale ? { rationale } : {}),
					...retry,
				});
				await desk.answerProjectRequest(top, request, decided);
				return decided;
			});
			if (replayed) {
				return result;
			}
			if (result.new_run && runSettings) {
				const newRun = (await desk.projectAi(top)).require<Run>(result.new_run, 'run');
				const record = gate.launchRecord(newRun);
				if (record) {
					await desk.startRun(top, record, result.new_run, runSettings);
				}
			}
			context.notifyRunsChanged(project);
			if (result.commit || result.version !== undefined) {
				context.notifyAssetsChanged('run landed');
			}
			return result;
		},

		async PatchSetFiles({ project, patchset }) {
			const desk = await context.desk();
			const files = await desk.patchSetFiles(projectTop(desk, project), patchset);
			const b64 = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('base64'));
			return {
				source: files.source,
				files: files.files.map((f) => ({ path: f.path, before: b64(f.before), after: b64(f.after) })),
			};
		},
	};
}

async function cardView(desk: Desk, launches: ProjectLaunches): Promise<CardView> {
	const card = launches.card();
	const plugs: CardView['plugs'] = [];
	for (const plug of card.plugs) {
		const asset = desk.library.getAsset(plug.id);
		const atGo = await desk.library.atGo(plug.id).catch((error: unknown) => ({ error: (error as Error).message }));
		plugs.push({ id: plug.id, role: plug.role, name: asset.name, nodes: plug.nodes, at_go: atGo });
	}
	return { card, plugs };
}

/** The repository top of a project of the library. */
function projectTop(desk: Desk, project: string): string {
	const record = desk.library.listProjects().find((p) => p.name === project);
	if (!record || record.path === '') {
		throw new DeskError('project.notFound', `No project named ${JSON.stringify(project)} with a repository.`, {
			project,
		});
	}
	return record.path;
}
