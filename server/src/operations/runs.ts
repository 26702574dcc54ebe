/**
 * Runs: what they recorded, cancelling one, and the gate's decision (glossary: Gate). A person
 * decides and cancels, in the editor or at the command line; an agent never does.
 */
import { memorizeRun, oweMemorize, owedNothing } from './memory';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Run } from '../ai/types';
import { DeskError } from '../core/errors';
import { projectDataFolder, type Desk } from '../desk';
import { RepositoryReader } from '../git/repositoryReader';
import { verifyIntegrity } from '../ai/model';
import { CancelRun, DecideRun, ListRuns, PatchSetFiles, ReadRunText, ShowRun } from '../protocol/protocol';
import { object, optional, string } from '../protocol/schema';
import { artifactStore } from '../runs/artifacts';
import { runArtifacts, runDetail, runsOverview } from '../runs/runViews';
import { requireAgentProgram } from '../runs/agentCheck';
import { parseRunSettings } from '../runs/settings';
import { answerOnce, markReplayed, wasReplayed } from '../store/clientRequests';
import type { WriteTransaction } from '../store/durableDatabase';
import { actorRefOf } from './actor';
import { projectTop } from './attachments';
import { operation } from './operation';

export { projectTop };

/** The top of the git repository holding `dir`; `import.notRepoTop` when none does. */
export async function repoTop(dir: string): Promise<string> {
	const top = await new RepositoryReader().findTop(path.resolve(dir));
	if (!top) {
		throw new DeskError('import.notRepoTop', `${dir} is in no git repository; pass --repo PATH.`, { dir });
	}
	return top;
}

/**
 * `top` when the desk keeps records of that repository (a project of the library, or a project
 * database a history import made); otherwise project.notFound, so that a read of a repository nobody
 * adopted creates nothing in it.
 */
export function recordedTop(desk: Desk, top: string): string {
	if (
		desk.library.listProjects().some((p) => p.path === top) ||
		fs.existsSync(path.join(top, projectDataFolder, 'project.db'))
	) {
		return top;
	}
	throw new DeskError(
		'project.notFound',
		`The desk keeps no records of ${top}: adopt it first (desk asset import --dir ${top} --main), or bring its history in (desk history import).`,
		{ dir: top },
	);
}

/**
 * Where a call on a project's records acts: the project named, else the repository at `repo` (a
 * clone whose history was brought in is no project of the library). Exactly one is given.
 */
export async function topOfPlace(desk: Desk, place: { project?: string; repo?: string }): Promise<string> {
	if ((place.project === undefined) === (place.repo === undefined)) {
		throw new DeskError('desk.badParams', 'params: name either a project or a repo, not both nor neither', {
			field: 'params.project',
		});
	}
	return place.project !== undefined ? projectTop(desk, place.project) : repoTop(place.repo!);
}

export const listRuns = operation({
	name: 'run.list',
	summary: "List a project's intents, their tasks and each task's runs.",
	params: ListRuns.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ListRuns, cli: 'runs list' },
	async run(call, { all, ...place }) {
		// A read: it never makes a project database.
		const top = recordedTop(call.desk, await topOfPlace(call.desk, place));
		return runsOverview(await call.desk.projectAi(top), { ...(all ? { all } : {}) });
	},
});

export const showRun = operation({
	name: 'run.show',
	summary: 'Show everything a run recorded.',
	params: ShowRun.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ShowRun, cli: 'runs show' },
	async run(call, { id, ...place }) {
		const top = recordedTop(call.desk, await topOfPlace(call.desk, place));
		return runDetail(await call.desk.projectAi(top), id);
	},
});

/** `desk run status`: a run's detail once the project's runs left by a stopped desk are marked failed. */
export const runStatus = operation({
	name: 'run.status',
	summary: "Show a run's state, its PatchSets, its checks and its decision.",
	params: object({ project: string({ minLength: 1, maxLength: 1024 }), id: string({ minLength: 1, maxLength: 64 }) }),
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { cli: 'run status' },
	async run(call, { project, id }) {
		const top = projectTop(call.desk, project);
		await call.desk.runs(top);
		return runDetail(await call.desk.projectAi(top), id);
	},
});

/**
 * `desk run diff`: a run's PatchSet as the unified diff it stored (glossary: PatchSet), the latest
 * unless one is named: a snapshot target's `target_diff`, a git target's diff. Base64, as a file's
 * bytes are: a diff holds what the agent wrote, in any encoding.
 */
export const runDiff = operation({
	name: 'run.diff',
	summary: "Print a run's PatchSet (the latest unless named) as a unified diff.",
	params: object({
		project: string({ minLength: 1, maxLength: 1024 }),
		id: string({ minLength: 1, maxLength: 64 }),
		patchset: optional(string({ minLength: 1, maxLength: 64 })),
	}),
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { cli: 'run diff' },
	async run(call, { project, id, patchset }) {
		const { patchset: shown, diff } = await call.desk.patchSetDiff(projectTop(call.desk, project), id, patchset);
		return {
			run: id,
			patchset: shown.object_id,
			format: shown.format,
			size: diff.length,
			base64: diff.toString('base64'),
		};
	},
});

export const patchSetFiles = operation({
	name: 'run.patchSetFiles',
	summary: 'Read the files a PatchSet changes, before and after.',
	params: PatchSetFiles.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: PatchSetFiles },
	async run(call, { project, patchset }) {
		const files = await call.desk.patchSetFiles(projectTop(call.desk, project), patchset);
		const b64 = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('base64'));
		return {
			source: files.source,
			files: files.files.map((f) => ({ path: f.path, before: b64(f.before), after: b64(f.after) })),
		};
	},
});

/**
 * A text a run stored (glossary: Conversation), for the run page's previews and the tabs that show
 * one whole: only a blob the run's own records name, checked against the hash they give.
 */
export const readRunText = operation({
	name: 'run.readText',
	summary: "Read a text a run stored: a tool call's output, a check's log, a long message, a transcript.",
	params: ReadRunText.params,
	callers: ['editor', 'cli'],
	mutates: false,
	idempotent: true,
	surfaces: { rpc: ReadRunText },
	async run(call, { project, run, hash, max_bytes: maxBytes }) {
		const ai = await call.desk.projectAi(projectTop(call.desk, project));
		const ref = runArtifacts(ai, run).find((a) => a.hash?.toLowerCase() === hash);
		if (!ref) {
			throw new DeskError('ai.notFound', `Run ${run} stored no text ${hash}.`, { run, hash });
		}
		if (ref.store !== artifactStore) {
			throw new DeskError('blob.missing', `Text ${hash} of run ${run} is kept in ${ref.store}, not in this library.`, {
				hash,
				store: ref.store,
			});
		}
		const bytes = call.desk.blobs.get(ref.key);
		if (!verifyIntegrity(ref, bytes)) {
			throw new DeskError('blob.corrupt', `Text ${hash} of run ${run} is not what the run recorded.`, { hash });
		}
		const partial = maxBytes !== undefined && bytes.length > maxBytes;
		const shown = partial ? bytes.subarray(0, maxBytes) : bytes;
		// A preview cut inside a character ends before it, not with a replacement character.
		const decoded = new TextDecoder('utf-8').decode(shown);
		const text = partial ? decoded.replace(/\uFFFD{1,3}$/, '') : decoded;
		return {
			text,
			bytes: bytes.length,
			partial,
			...(ref.content_type ? { content_type: ref.content_type } : {}),
		};
	},
});

export const cancelRun = operation({
	name: 'run.cancel',
	summary: "Cancel a run: stop its agent's process group and fail the run with the reason.",
	params: CancelRun.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: CancelRun, cli: 'run cancel' },
	async run(call, { project, run, reason }) {
		const { executor } = await call.desk.runs(projectTop(call.desk, project));
		const result = executor.cancel(run, reason?.trim() || `cancelled by ${actorRefOf(call.actor).id}`);
		call.events.runsChanged(project, run);
		return result;
	},
});

/**
 * The gate (glossary: Gate). The Decision records who made it. Retry's new run claims the checkout in
 * the decision's own transaction, as Go's run does, and starts in this process in the background; a
 * face that must outlive it (the command line) waits for it with `desk.runEnded`.
 */
export const decideRun = operation({
	name: 'run.decide',
	summary: 'Decide a run at the gate: commit, retry, abandon or checkpoint; or roll back a landed run.',
	params: DecideRun.params,
	callers: ['editor', 'cli'],
	mutates: true,
	idempotent: false,
	surfaces: { rpc: DecideRun, cli: 'run decide' },
	async run(call, { project, run, decision, patchset, rationale, settings, identity }) {
		const { desk, request } = call;
		const top = projectTop(desk, project);
		// Settings are checked before anything is decided.
		const runSettings = decision === 'retry' ? parseRunSettings(settings) : undefined;
		const landingSettings = decision === 'commit' && settings !== undefined ? parseRunSettings(settings) : undefined;
		const { gate, executor } = await desk.runs(top);
		const ai = await desk.projectAi(top);
		const decided = ai.get<Run>(run);
		const record = runSettings && decided?.object_type === 'run' ? gate.launchRecord(decided) : undefined;
		const retry =
			runSettings && record
				? {
						check: () => {
							requireAgentProgram(runSettings);
							executor.assertCheckoutFree(runSettings, record);
						},
						claim: (tx: WriteTransaction, id: string) => executor.claimIn(tx, runSettings, record, id),
					}
				: {};
		// A branch's landing is memorized into its root (glossary: Project memory).
		const memorizes =
			decision === 'commit' &&
			landingSettings?.lineage.memorizeOnLanding === true &&
			decided?.object_type === 'run' &&
			(await desk.isBranchTask(top, decided.task));
		// A decision is made once whatever happens (a second is refused); its answer is recorded after it.
		const { result, replayed } = await answerOnce(await desk.projectRequests(top), request, async () => {
			// The gate answers a Decision made for this very request from it (a desk stopped before its
			// answer was recorded); any other Decision it refuses.
			// A rollback's Decision is its own run's: the landed run's is not one made for this request.
			const madeBefore = decision !== 'rollback' && ai.runDecision(run) !== undefined;
			// What the landing owes is recorded before it is decided: a desk stopped after the Decision
			// resumes the memorize on its next start.
			const owes = memorizes && !madeBefore;
			if (owes) {
				await oweMemorize(desk, top, run, landingSettings!);
			}
			let made: Awaited<ReturnType<typeof gate.decide>>;
			try {
				made = await gate.decide(run, {
					decision,
					by: actorRefOf(call.actor),
					...(patchset ? { patchset } : {}),
					...(rationale ? { rationale } : {}),
					...(identity ? { identity } : {}),
					...(request ? { request: { id: request.id, hash: request.hash } } : {}),
					...retry,
				});
			} catch (error) {
				if (owes) {
					await owedNothing(desk, top, run);
				}
				throw error;
			}
			if (owes && !made.commit) {
				// Landed as a version of a snapshot target: no commit, nothing to memorize.
				await owedNothing(desk, top, run);
			}
			await desk.answerProjectRequest(top, request, made);
			if (madeBefore && request) {
				markReplayed(request);
			}
			return made;
		});
		if (replayed || wasReplayed(request)) {
			return result;
		}
		if (result.new_run && runSettings) {
			const next = gate.launchRecord(ai.require<Run>(result.new_run, 'run'));
			if (next) {
				await desk.startRun(top, next, result.new_run, runSettings);
			}
		}
		call.events.runsChanged(project, run);
		if (result.commit || result.version !== undefined) {
			call.events.assetsChanged('run landed');
		}
		if (result.commit && memorizes) {
			// The run records the outcome. The command line waits for it; the editor is answered at once.
			const memorizing = memorizeRun(desk, top, run, landingSettings!).catch(() => undefined);
			if (call.actor.kind === 'cli') {
				await memorizing;
			}
		}
		return result;
	},
});

/** The runs' operations, in the table's order. */
export const runOperations = [listRuns, showRun, runStatus, runDiff, patchSetFiles, readRunText, cancelRun, decideRun];
