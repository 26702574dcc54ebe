import { DeskError } from '../core/errors';
import type { Desk } from '../desk';
import {
	deskRequests,
	type FolderOutcome,
	type ParamsOf,
	type ResultOf,
	type ServerStatus,
} from '../protocol/protocol';
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
	notifyLineageChanged(project: string, node?: string): void;
}

/** What an operation called through this server tells the windows: the protocol's notifications. */
export function notifyingEvents(context: HandlerContext): DeskEvents {
	return {
		assetsChanged: (reason) => context.notifyAssetsChanged(reason),
		snapshotProgress: (id, files) => context.notifySnapshotProgress(id, files),
		runsChanged: (project) => context.notifyRunsChanged(project),
		attachmentsChanged: (project, task) => context.notifyAttachmentsChanged(project, task),
		lineageChanged: (project, node) => context.notifyLineageChanged(project, node),
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
	| 'ListRuns'
	| 'ShowRun'
	| 'PatchSetFiles'
	| 'ReadRunText'
	| 'ImportHistory'
	| 'ExportHistory'
	| 'GetCard'
	| 'SetTicket'
	| 'SuggestAssets'
	| 'PlugAsset'
	| 'UnplugAsset'
	| 'LaunchGo'
	| 'CheckAgents'
	| 'CancelRun'
	| 'CancelTask'
	| 'CancelIntent'
	| 'FollowUp'
	| 'ListLineageRoots'
	| 'AddLineageRoot'
	| 'LineageTreeRequest'
	| 'BranchFromRun'
	| 'PromptLineage'
	| 'DecideRun'
	| 'ResumeRun'
	| 'ListBoard'
	| 'PostToBoard'
	| 'AnswerReport'
	| 'ContinueWithReports'
	| 'RememberMemory'
	| 'ForgetMemory'
	| 'ShowMemory'
	| 'CommitMemory'
	| 'LineageCatchUp'
	| 'MemorizeLanding'
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
	};
}
