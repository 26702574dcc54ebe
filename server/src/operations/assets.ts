/** The asset library's operations (glossary: Asset). */
import { DeskError } from '../core/errors';
import { SearchLibrary, SetTags } from '../protocol/protocol';
import type { OperationCall } from './operation';
import { operation } from './operation';

/**
 * The project an agent's call may touch: its run's. A person may name any project, or none (the
 * whole library); an agent naming another project is refused.
 */
export function projectOfCall(call: OperationCall, named: string | undefined): string | undefined {
	if (call.actor.kind !== 'agent') {
		return named;
	}
	if (named !== undefined && named !== call.actor.project) {
		throw new DeskError('operation.outsideRun', `A run may touch only its own project (${call.actor.project}).`, {
			project: named,
		});
	}
	return call.actor.project;
}

/** Refuses an agent's call on an asset that is not one of its run's project. */
export async function assertAssetOfCall(call: OperationCall, id: string): Promise<void> {
	const project = projectOfCall(call, undefined);
	if (project === undefined) {
		return;
	}
	const assets = await call.desk.library.listAssets(project);
	if (!assets.some((a) => a.id === id)) {
		throw new DeskError('operation.outsideRun', `Asset ${id} is not one of project ${project}'s assets.`, {
			id,
			project,
		});
	}
}

export const searchAssets = operation({
	name: 'asset.search',
	summary: 'Search the library for assets matching words, ranked by BM25, each with why it matched.',
	params: SearchLibrary.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: false,
	idempotent: true,
	surfaces: {
		rpc: SearchLibrary,
		cli: 'asset search',
		mcp: {
			tool: 'asset_search',
			title: 'Search assets',
			description:
				"Search the project's asset library (documents, skills, datasets, code, links) for words; returns assets ranked by BM25 with their id, name, score and the terms that matched. Retired assets are never returned.",
			boundByRun: ['project'],
		},
	},
	async run(call, { query, project, limit }) {
		const scope = projectOfCall(call, project);
		const library = call.desk.library;
		const allowed = scope === undefined ? undefined : new Set((await library.listAssets(scope)).map((a) => a.id));
		// Searched wider than the limit when scoped, so a project's assets are not crowded out by others.
		const hits = await library.search(query, allowed ? 1000 : (limit ?? 20));
		return { hits: hits.filter((h) => !allowed || allowed.has(h.id)).slice(0, limit ?? 20) };
	},
});

export const setTags = operation({
	name: 'asset.tags',
	summary: "Set an asset's tags (glossary: Tags and about).",
	params: SetTags.params,
	callers: ['editor', 'cli', 'agent'],
	mutates: true,
	idempotent: true,
	surfaces: {
		rpc: SetTags,
		cli: 'asset tags',
		mcp: {
			tool: 'asset_tags',
			title: 'Set asset tags',
			description:
				'Replace the tags of an asset of this project: at most 16, each `key` or `key:value` of lowercase letters, digits and hyphens. Returns the asset.',
		},
	},
	async run(call, { id, tags }) {
		await assertAssetOfCall(call, id);
		const asset = call.desk.library.setTags(id, tags);
		call.events.assetsChanged('asset changed');
		return asset;
	},
});

/** The asset library's operations, in the table's order. */
export const assetOperations = [searchAssets, setTags];
