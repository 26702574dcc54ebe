import type { Desk } from '../desk';
import { deskRequests, type FolderOutcome, type ParamsOf, type ResultOf, type ServerStatus } from '../protocol/protocol';

type Requests = typeof deskRequests;

/** One handler per declared request; the compiler refuses a missing one, a test checks at run time. */
export type DeskHandlers = {
	[K in keyof Requests]: (params: ParamsOf<Requests[K]>, signal: AbortSignal) => Promise<ResultOf<Requests[K]>>;
};

export interface HandlerContext {
	/** The open desk; throws the reason when it could not be opened. */
	desk(): Promise<Desk>;
	status(): Promise<ServerStatus>;
	notifyAssetsChanged(reason: string): void;
}

export function createHandlers(context: HandlerContext): DeskHandlers {
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

		async ListAssets({ project }) {
			const desk = await context.desk();
			return { assets: await desk.library.listAssets(project) };
		},

		async ListVersions({ id }, signal) {
			const desk = await context.desk();
			const asset = desk.library.getAsset(id);
			return { asset, versions: await desk.library.assetVersions(id, signal) };
		},

		async GetStatus() {
			return context.status();
		},
	};
}
