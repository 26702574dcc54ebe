/**
 * Errors as data. Every failure the desk reports carries a stable `code` that callers branch on, a
 * message for people, and `data` with the facts (paths, ids, limits). One place in the RPC layer
 * maps them to JSON-RPC errors; the CLI prints them as JSON.
 */
export type DeskErrorCode =
	| 'store.corrupt'
	| 'store.journalCorrupt'
	| 'store.locked'
	| 'store.unknownSchema'
	| 'store.closed'
	| 'store.io'
	// Package damage (issue 12): a store marked damaged is recovered only by the person's choice.
	| 'store.notDamaged'
	| 'store.cannotRecover'
	| 'blob.badHash'
	| 'blob.corrupt'
	| 'blob.missing'
	| 'blob.tooLarge'
	// Lineage (glossary: Lineage): a repo that is not the project's, a root not listed or listed already,
	// a limit of the grant chain (named in data.limit), a receipt key reused with other params, a tally
	// asked to run, a run whose task is no branch, desk tools asked for a branch that its starter lacks
	// (named in data.tools).
	| 'lineage.badRepo'
	| 'lineage.unknownRoot'
	| 'lineage.rootExists'
	| 'lineage.limit'
	| 'lineage.receiptConflict'
	| 'lineage.tallyNoRuns'
	| 'lineage.notBranch'
	| 'lineage.toolsNotGranted'
	// Boards: a post from a run with no starter, an answer to what is not a report or was answered, a
	// continuation with nothing to carry.
	| 'board.noStarter'
	| 'board.notReplyEnabled'
	| 'board.alreadyAnswered'
	| 'board.noReports'
	// Project memory (glossary: Project memory).
	| 'memory.badBatch'
	| 'memory.corrupt'
	| 'memory.unknownFormat'
	| 'memory.locked'
	| 'memory.notFound'
	| 'memory.notRoot'
	| 'memory.nothingToCommit'
	| 'run.notLanded'
	| 'asset.notFound'
	| 'asset.badId'
	| 'asset.noFiles'
	| 'asset.noFolder'
	| 'asset.folderNotEmpty'
	| 'asset.badPath'
	| 'asset.unsafePath'
	| 'asset.fileNotFound'
	| 'asset.noVersion'
	| 'asset.badTag'
	| 'asset.badChecks'
	| 'asset.badName'
	| 'asset.badSkill'
	| 'asset.badUrl'
	// A link or a note asked for under the name of one of its project with another URL or text.
	| 'asset.nameTaken'
	// A model's about over one a person wrote (glossary: Tags and about): the person's own text wins.
	| 'asset.aboutByPerson'
	// A proposal to retire an asset that is retired already; a proposal the person cannot answer (unknown, answered).
	| 'asset.retired'
	| 'proposal.notFound'
	| 'proposal.notOpen'
	| 'manifest.corrupt'
	| 'ai.illegalTransition'
	| 'ai.unknownSchema'
	// An AI object that breaks the model's rules (`ai.badObject`), and one the project does not hold (`ai.notFound`).
	| 'ai.badObject'
	| 'ai.notFound'
	| 'ai.packType'
	| 'ai.badActor'
	| 'launch.badRole'
	| 'launch.secondTarget'
	| 'launch.badTarget'
	| 'launch.foreignRepo'
	| 'launch.referenceOnly'
	| 'launch.notSkill'
	| 'launch.badNode'
	| 'launch.badCopy'
	| 'launch.alreadyPlugged'
	// Keep (glossary: Suggestion) of an asset the card's ticket does not suggest.
	| 'launch.notSuggested'
	// Plugging an asset that is retired (glossary: Retired).
	| 'launch.retired'
	| 'launch.emptyTicket'
	| 'launch.notPlugged'
	| 'import.badArgs'
	| 'import.notADirectory'
	| 'import.notRepoTop'
	| 'git.unreadable'
	| 'git.corrupt'
	| 'git.missingObject'
	| 'git.unsupported'
	| 'git.badRef'
	| 'git.failed'
	| 'run.badSettings'
	| 'run.unknownAgent'
	// Go, Retry or Resume with an agent whose program is not installed (glossary: Agent check): no run is made.
	| 'run.agentMissing'
	// A commit of the desk's (a landing, a checkpoint, a rollback) with no identity: git has none here and none was given.
	| 'run.noIdentity'
	| 'run.spawnFailed'
	| 'run.notAwaitingDecision'
	| 'run.notRunning'
	| 'run.landConflict'
	| 'run.targetMoved'
	| 'run.noPatch'
	| 'run.checkoutBusy'
	// A run's carrier (glossary: Carrier) could not be started or ended before it took the run: the
	// desk that started the run carries it itself.
	| 'run.carrierFailed'
	// Rollback: the checkout has changes in files it would write. Resume: the run kept no checkpoint
	// (or it was resumed), or the checkpoint's change no longer applies to where the new run works.
	| 'run.checkoutDirty'
	| 'run.notCheckpointed'
	| 'run.checkpointConflict'
	| 'attachment.tooLarge'
	| 'attachment.quota'
	| 'attachment.unavailable'
	| 'attachment.notRegular'
	| 'attachment.ambiguous'
	| 'attachment.notFound'
	| 'attachment.badName'
	| 'attachment.changed'
	| 'project.notFound'
	// A repository made the main asset of a second project.
	| 'project.repositoryTaken'
	| 'desk.notReady'
	// Package idem (issue 12, requests that run twice): a card another Go launched or that changed
	// while Go ran, a client request id sent again with other params, and one that is not an id.
	| 'launch.cardChanged'
	| 'request.idReused'
	| 'request.badId'
	// Package cli (issue 12): files the command line reads, and its library folder.
	| 'input.notAFile'
	| 'input.tooLarge'
	| 'input.unreadable'
	| 'store.notAFolder'
	// Package rpc (issue 12): refusals of the JSON-RPC surface, sent as InvalidParams or RequestFailed data.
	| 'desk.badParams'
	| 'desk.relativePath'
	| 'desk.badText'
	| 'desk.alreadyInitialized'
	| 'input.notUtf8'
	// Package gitdir (issue 12): a git folder outside what was adopted, one that moved since, and a
	// project data folder (`.desk`) the repository planted as a link or a file.
	| 'git.foreignGitDir'
	| 'git.gitDirChanged'
	| 'project.unsafeDataFolder'
	// Operations (issue 14): a caller the operation is not for (an agent deciding, say), and an agent
	// reaching past its run (another project, a path outside its work folder and outbox).
	| 'operation.notAllowed'
	| 'operation.outsideRun'
	// A desk tool call naming a tool the caller's catalogue does not hold (retiring, deciding: never a tool).
	| 'operation.unknownTool'
	// Package assets (issue 13): a stored launch card or launch record of a format newer than the
	// code, and one that is not JSON or not of its format's shape.
	| 'launch.unknownFormat'
	| 'launch.corrupt';

export class DeskError extends Error {
	override readonly name = 'DeskError';

	constructor(
		readonly code: DeskErrorCode,
		message: string,
		readonly data: Readonly<Record<string, unknown>> = {},
		options?: { cause?: unknown },
	) {
		super(message, options);
	}

	toJSON(): DeskErrorJson {
		return { code: this.code, message: this.message, data: { ...this.data } };
	}
}

export interface DeskErrorJson {
	code: DeskErrorCode;
	message: string;
	data: Record<string, unknown>;
}

export function isDeskError(value: unknown, code?: DeskErrorCode): value is DeskError {
	return value instanceof DeskError && (code === undefined || value.code === code);
}

/** The message of anything thrown, for logs; never loses the code of a DeskError. */
export function describeError(error: unknown): string {
	if (error instanceof DeskError) {
		return `${error.message} [${error.code}]`;
	}
	if (error instanceof Error) {
		return error.message;
	}
	return String(error);
}
