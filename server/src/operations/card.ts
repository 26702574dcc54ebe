/**
 * The launch card (glossary: Launch card): its ticket, suggestions and plugs, and Go, which freezes
 * it into a launch and makes the run. A person plugs and goes, in the editor or at the command line;
 * an agent never does.
 */
import type { Desk } from '../desk';
import { firstAnswerBudgetMs, type ProjectLaunches } from '../launch/projectLaunches';
import {
	GetCard,
	LaunchGo,
	PlugAsset,
	SetTicket,
	SuggestAssets,
	UnplugAsset,
	type CardView,
} from '../protocol/protocol';
import { requireAgentProgram } from '../runs/agentCheck';
import { parseRunSettings } from '../runs/settings';
import { actorRefOf, madeByOf } from './actor';
import { operation } from './operation';
import { projectTop } from './runs';

/** The card with each plug's asset name and what AtGo would freeze now. */
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

async function launchesOf(desk: Desk, project: string): Promise<ProjectLaunches> {
	return desk.launches(projectTop(desk, project));
}

export const getCard = operation({
	name: 'card.show',
	summary: "Show a project's launch card: its ticket and plugs, with what each plug would freeze at Go.",
	params: GetCard.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: GetCard, cli: 'card show' },
	async run(call, { project }) {
		return cardView(call.desk, await launchesOf(call.desk, project));
	},
});

export const setTicket = operation({
	name: 'card.ticket',
	summary: "Save the launch card's ticket.",
	params: SetTicket.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: true,
	surfaces: { rpc: SetTicket },
	async run(call, { project, ticket }) {
		const launches = await launchesOf(call.desk, project);
		launches.setTicket(ticket);
		return cardView(call.desk, launches);
	},
});

export const suggestAssets = operation({
	name: 'card.suggest',
	summary: "Suggest assets for a ticket (default: the card's), named assets first.",
	params: SuggestAssets.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: SuggestAssets, cli: 'card suggest' },
	async run(call, { project, ticket, complete }) {
		const launches = await launchesOf(call.desk, project);
		return launches.suggestions(ticket, complete ? {} : { budgetMs: firstAnswerBudgetMs });
	},
});

export const plugAsset = operation({
	name: 'card.plug',
	summary: 'Plug an asset into the launch card as a reference, the target or instructions.',
	params: PlugAsset.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: PlugAsset, cli: 'card plug' },
	async run(call, { project, id, role, nodes, files, copy }) {
		const launches = await launchesOf(call.desk, project);
		await launches.plug(id, role, {
			nodes: nodes ?? [],
			files: files ?? [],
			copy: Object.fromEntries((copy ?? []).map((c) => [c.from, c.to])),
		});
		return cardView(call.desk, launches);
	},
});

export const unplugAsset = operation({
	name: 'card.unplug',
	summary: 'Take a plug off the launch card.',
	params: UnplugAsset.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: UnplugAsset, cli: 'card unplug' },
	async run(call, { project, id }) {
		const launches = await launchesOf(call.desk, project);
		launches.unplug(id);
		return cardView(call.desk, launches);
	},
});

/**
 * Go (glossary: Go). Unless `execute` is false, the run claims the checkout in Go's own transaction
 * (two Gos, in this process or another, never both start an agent in it) and starts in this process
 * in the background; a face that must outlive it (the command line) waits for it with `desk.runEnded`.
 * A repeat of an answered request id returns the first launch and starts nothing.
 */
export const launchGo = operation({
	name: 'card.go',
	summary: 'Go: freeze the launch card into a launch, make its run and start carrying it out.',
	params: LaunchGo.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: LaunchGo, cli: 'run go' },
	async run(call, { project, settings, execute }) {
		const { desk, request } = call;
		const top = projectTop(desk, project);
		// Settings are checked before Go changes anything.
		const runSettings = execute === false ? undefined : parseRunSettings(settings);
		const launches = await desk.launches(top);
		// The project is open and nothing of Go is written yet: a kill here must leave the card as it was.
		desk.faults.point('go.beforeLaunch');
		const madeBy = madeByOf(call.actor);
		const options = { by: actorRefOf(call.actor), ...(request ? { request } : {}) };
		if (!runSettings) {
			const { result, replayed } = await launches.goOnce(madeBy, new Date(), options);
			if (!replayed) {
				call.events.runsChanged(project);
				call.events.assetsChanged('launch');
			}
			return result;
		}
		const { executor } = await desk.runs(top);
		const card = launches.card();
		const { result: record, replayed } = await launches.goOnce(madeBy, new Date(), {
			...options,
			// An agent whose program is not there makes no run (glossary: Agent check).
			check: () => {
				requireAgentProgram(runSettings);
				executor.assertCheckoutFree(runSettings, card);
			},
			claim: (tx, launched) => executor.claimIn(tx, runSettings, launched, launched.run),
		});
		if (replayed) {
			return record;
		}
		await desk.startRun(top, record, record.run, runSettings);
		call.events.runsChanged(project);
		call.events.assetsChanged('launch');
		return record;
	},
});

/** The launch card's operations, in the table's order. */
export const cardOperations = [getCard, setTicket, suggestAssets, plugAsset, unplugAsset, launchGo];
