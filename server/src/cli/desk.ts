/**
 * `desk`: the command line over the same desk core as the extension's server, for scripts, CI and
 * agents. Every command prints JSON with --json (records with the field names of seed 000) and
 * human-readable text without it. Exit codes: 0 done, 2 refused by the desk (the reason on stderr,
 * and with --json as {"error": …} on stdout; nothing changed), 64 bad usage, 70 internal error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { ImportResult } from '../assets/library';
import type { AssetSummary, AssetVersion, AtGo, VersionDiff } from '../assets/types';
import { DeskError, describeError } from '../core/errors';
import { leveledLogger, type LogLevel } from '../core/logger';
import { Desk, projectDataFolder, type StoreRecovery } from '../desk';
import { RepositoryReader } from '../git/repositoryReader';
import type { PlugRole } from '../launch/types';
import { runDetail, runsOverview } from '../runs/runViews';
import type { RunDetail, RunSummary, RunsOverview } from '../runs/types';
import { parseRunSettings, type RunSettings } from '../runs/settings';
import { resolveAttachment } from '../attachments/attachmentStore';
import type { AttachmentRow } from '../attachments/types';
import { humanBytes } from '../attachments/names';
import * as os from 'node:os';
import type { LaunchRecord } from '../launch/types';
import type { Run } from '../ai/types';
import { answerOnce, clientRequest, requestIdPattern, type ClientRequest } from '../store/clientRequests';
import type { WriteTransaction } from '../store/durableDatabase';
import { maxBlobBytes, maxJsonBytes, maxSettingsBytes, maxTicketBytes } from '../core/inputLimits';
import { readInputFile, readInputText } from './files';
import { jsonForTerminal, terminalSafe as t, terminalSafeLines, writeMessage } from './terminal';
import { createHash } from 'node:crypto';

const usage = `Usage: desk [--store DIR] [--json] [--verbose] COMMAND

The library folder is --store, else $DESK_STORE.
Commands that create something (asset import, snapshot, version, link and note, task attachments add,
card go, run go, run decide) take --request-id ID (8 to 128 of A-Z a-z 0-9 . _ : -): run again with the same ID,
the command answers what it did the first time and changes nothing; the same ID with other
arguments is refused (request.idReused).

Commands:
  assets list [--project NAME] [--all]            the library's assets (--all: retired ones too)
  asset import --dir PATH [--project NAME] [--main] [--allow-git-dir]
                                                  adopt a folder (a repository's top becomes a git asset;
                                                  --allow-git-dir: also when its git folder is elsewhere)
  asset import --new NAME [--dir PATH] [--project NAME] [--main]
                                                  a new empty snapshot asset (v1 "created")
  asset import --asset ID --project NAME [--main] add a library asset to a project
  asset show ID                                   the record, its versions and what go would read
  asset versions ID                               versions, oldest first
  asset atgo ID                                   what a run would read if go were pressed now
  asset files ID [--version N]                    the files of a version
  asset cat ID PATH [--version N]                 one file's bytes
  asset snapshot ID [--note TEXT]                 cut the next version from the working folder
  asset version ID --put REL=SRC... [--note TEXT] write files into the folder, then cut a version
  asset tags ID [TAG...]                          set the tags (none: clear them)
  asset describe ID TEXT                          set the one-line about
  asset link --name NAME --url URL [--project NAME] [--from ID]
                                                  a link asset (--from: the asset it derives from)
  asset note --name NAME --text TEXT [--project NAME]
  asset retire ID | asset unretire ID
  asset checks ID --file CHECKS.json              set the command checks
  asset mount ID N                                lay version N out read-only; prints its path
  asset diff ID A B                               files added, removed and changed from A to B
  asset sync ID                                   record a git asset's head (made_by sync)
  asset used-in ID                                launches that plugged the asset
  asset search WORDS...                           rank the library's assets for the words (BM25)

Runs (of the repository at --repo PATH, default the current folder):
  runs list                                       intents, their plans and tasks, each task's runs
  runs show ID                                    everything a run recorded
  history export [--ref REF]                      write the AI objects to refs/desk/history
  history import [--ref REF]                      read them from a history ref (twice adds nothing)
  store pack                                      move small loose blobs (a library from before packs) into packs now
  store recover --library restore|empty           a library marked damaged: take the kept copy back, or start empty
  store recover restore|empty|rebuild             the project database (of --project NAME, else --repo PATH or the
                                                  current folder) marked damaged; rebuild: empty, then refs/desk/history

Launch cards (of --project NAME, else the repository at --repo PATH or the current folder):
  card show                                       the draft card
  card suggest [--ticket TEXT | --ticket-file F]  suggestions for the ticket (saved as the card's)
  card plug --asset ID --role reference|target|instructions [--nodes a,b] [--files GLOB]... [--copy FROM=TO]...
  card unplug --asset ID
  card go [--request-id ID]                       freeze every plug, record the launch, make the run

Runs carried out (of --project NAME, else the repository at --repo PATH or the current folder):
  run go [PROJECT] [--settings FILE] [--agent NAME] [--isolation shared|worktree] [--request-id ID]
                                                  Go, then carry the run out here to the gate
  run status ID                                   the run, its PatchSets, evidence and decision
  run cancel ID [--reason TEXT]                   stop the agent's process group; the run fails
  run decide ID --decision commit|retry|abandon|checkpoint [--patchset ID] [--rationale TEXT] [--settings FILE]
                                                  the gate: commit lands the change; retry runs again here

Attachments of a task (of --project NAME, else the repository at --repo PATH or the current folder):
  task attachments list [TASK]                    tasks with attachments, or one task's files
  task attachments add TASK FILE [--name NAME] [--note TEXT]
                                                  attach a file by hand (32 MiB a file, 100 files and 128 MiB a task)
  task attachments show TASK REF                  the record (REF: id, id prefix of 6+, or exact name)
  task attachments cat TASK REF                   the stored bytes, checked against the recorded digest
  task attachments rm TASK REF                    delete it (audited)
  (--settings FILE: JSON with the desk.agents, desk.runs and desk.checks settings as
   {"agents": [...], "agent": NAME, "isolation": ..., "checks": [...], "maxAttempts": N, "sandbox": "auto"|"off"})
`;

class UsageError extends Error {}

interface Output {
	json: boolean;
	/** Whether stdout is a terminal (default: `process.stdout.isTTY`): `cat` output is escaped there. */
	toTerminal?: boolean;
	write(text: string | Uint8Array): void;
}

export async function main(argv: string[], out: Output = { json: false, write: (chunk) => process.stdout.write(chunk) }): Promise<number> {
	let parsed;
	try {
		parsed = parseArgs({
			args: argv,
			allowPositionals: true,
			strict: true,
			options: {
				store: { type: 'string' },
				library: { type: 'boolean', default: false },
				json: { type: 'boolean', default: false },
				verbose: { type: 'boolean', short: 'v', default: false },
				help: { type: 'boolean', short: 'h', default: false },
				dir: { type: 'string' },
				new: { type: 'string' },
				asset: { type: 'string' },
				project: { type: 'string' },
				main: { type: 'boolean', default: false },
				'allow-git-dir': { type: 'boolean', default: false },
				all: { type: 'boolean', default: false },
				version: { type: 'string' },
				note: { type: 'string' },
				put: { type: 'string', multiple: true },
				name: { type: 'string' },
				url: { type: 'string' },
				text: { type: 'string' },
				file: { type: 'string' },
				from: { type: 'string' },
				repo: { type: 'string' },
				ref: { type: 'string' },
				'ticket-file': { type: 'string' },
				ticket: { type: 'string' },
				role: { type: 'string' },
				nodes: { type: 'string' },
				files: { type: 'string', multiple: true },
				copy: { type: 'string', multiple: true },
				settings: { type: 'string' },
				agent: { type: 'string' },
				isolation: { type: 'string' },
				reason: { type: 'string' },
				decision: { type: 'string' },
				patchset: { type: 'string' },
				rationale: { type: 'string' },
				'request-id': { type: 'string' },
			},
		});
	} catch (error) {
		writeMessage(process.stderr, `desk: ${t((error as Error).message)}\n\n${usage}`);
		return 64;
	}
	const { values, positionals } = parsed;
	out.json = values.json ?? false;
	if (values.help || positionals.length === 0) {
		process.stdout.write(usage);
		return values.help ? 0 : 64;
	}
	const store = values.store ?? process.env['DESK_STORE'];
	if (!store) {
		process.stderr.write(`desk: no library folder: pass --store DIR or set DESK_STORE\n`);
		return 64;
	}
	const level: LogLevel = values.verbose ? 'debug' : 'warn';
	const logger = leveledLogger(level, (l, message) => writeMessage(process.stderr, `[${l}] ${t(message)}\n`));

	let desk: Desk | undefined;
	try {
		const [area, verb, ...rest] = positionals;
		const command = `${area} ${verb ?? ''}`.trim();
		const version = values.version === undefined ? undefined : positiveInteger(values.version, '--version');
		const open = async () => (desk = await Desk.open({ libraryDir: store, logger }));
		const lib = async () => (await open()).library;
		// Commands made from the command line are desk tool calls (made_by conductor, §03).
		const madeBy = 'conductor' as const;
		/** --request-id: the caller's id for this action; running the command again with it repeats nothing. */
		const requestOf = (action: string, params: object): { request?: ClientRequest } => {
			const id = values['request-id'];
			if (id === undefined) {
				return {};
			}
			if (!requestIdPattern.test(id)) {
				throw new UsageError('--request-id takes 8 to 128 letters, digits or . _ : - (a UUID, say)');
			}
			return { request: clientRequest(action, id, params)! };
		};
		switch (command) {
			case 'assets list': {
				expectArgs(rest, 0, command);
				const assets = (await (await lib()).listAssets(values.project)).filter((a) => values.all || !a.retired);
				print(out, assets, () => assets.map(formatAsset).join('\n') || '(no assets)');
				return 0;
			}
			case 'asset import': {
				expectArgs(rest, 0, command);
				const sources = [values.dir !== undefined && values.new === undefined, values.new !== undefined, values.asset !== undefined].filter(Boolean).length;
				if (sources !== 1) {
					throw new UsageError('asset import takes one of --dir PATH, --new NAME or --asset ID');
				}
				const opened = await open();
				const library = opened.library;
				const { request } = requestOf('desk asset import', { dir: values.dir === undefined ? undefined : path.resolve(values.dir), new: values.new, asset: values.asset, project: values.project, main: values.main });
				const { result } = await answerOnce(opened.libraryRequests, request, async (): Promise<ImportResult> => {
					if (values.new !== undefined) {
						return library.newAsset({ name: values.new, dir: values.dir, project: values.project, main: values.main ?? false, madeBy, ...(request ? { clientRequest: request } : {}) });
					}
					let imported: ImportResult;
					if (values.asset !== undefined) {
						if (!values.project) {
							throw new UsageError('asset import --asset ID needs --project NAME');
						}
						imported = library.importAsset({ id: values.asset, project: values.project, main: values.main ?? false });
					} else {
						imported = await library.importDir({ dir: values.dir!, project: values.project, main: values.main ?? false, madeBy, allowGitDir: values['allow-git-dir'] ?? false });
					}
					opened.answerLibraryRequest(request, imported);
					return imported;
				});
				print(out, result, () => formatImport(result));
				return 0;
			}
			case 'asset show': {
				const id = oneId(rest, command);
				const library = await lib();
				const asset = await library.assetSummary(id);
				let atGo: AtGo | { error: string };
				try {
					atGo = await library.atGo(id);
				} catch (error) {
					atGo = { error: describeError(error) };
				}
				const show = { ...asset, at_go: atGo, used_in: library.usedIn(id) };
				print(out, show, () => `${formatAsset(asset)}\n  at go: ${formatAtGo(atGo)}${asset.about ? `\n  about: ${t(asset.about)}` : ''}`);
				return 0;
			}
			case 'asset versions': {
				// Written a page at a time: a history of tens of thousands of versions in flat memory.
				let written = 0;
				for await (const page of (await lib()).versionsInPages(oneId(rest, command), 2000)) {
					if (out.json) {
						out.write(`${written === 0 ? '[\n' : ',\n'}${page.map((v) => jsonForTerminal(v).replace(/^/gm, '  ')).join(',\n')}`);
					} else {
						writeMessage(out, `${page.map(formatVersion).join('\n')}\n`);
					}
					written += page.length;
				}
				out.write(out.json ? (written === 0 ? '[]\n' : '\n]\n') : written === 0 ? '(no versions)\n' : '');
				return 0;
			}
			case 'asset atgo': {
				const atGo = await (await lib()).atGo(oneId(rest, command));
				print(out, atGo, () => formatAtGo(atGo));
				return 0;
			}
			case 'asset files': {
				const files = await (await lib()).files(oneId(rest, command), version);
				print(out, files, () => files.files.map((f) => `${f.size >= 0 ? String(f.size).padStart(10) : '         -'}  ${t(f.path)}`).join('\n') || '(no files)');
				return 0;
			}
			case 'asset cat': {
				expectArgs(rest, 2, command);
				const bytes = await (await lib()).cat(rest[0]!, rest[1]!, version);
				if (out.json) {
					print(out, { path: rest[1], size: bytes.length, base64: Buffer.from(bytes).toString('base64') }, () => '');
				} else {
					writeBytes(out, bytes);
				}
				return 0;
			}
			case 'asset snapshot': {
				const id = oneId(rest, command);
				const opened = await open();
				const { request } = requestOf('desk asset snapshot', { id, note: values.note });
				const { result } = await answerOnce(opened.libraryRequests, request, () => opened.library.snapshot(id, { note: values.note, madeBy, ...(request ? { clientRequest: request } : {}) }));
				print(out, result, () => formatSnapshot(result));
				return 0;
			}
			case 'asset version': {
				const id = oneId(rest, command);
				if (!values.put || values.put.length === 0) {
					throw new UsageError('asset version needs at least one --put REL=SRC');
				}
				const files = values.put.map((spec) => {
					const eq = spec.indexOf('=');
					if (eq <= 0 || eq === spec.length - 1) {
						throw new UsageError(`--put takes REL=SRC, not ${spec}`);
					}
					return { path: spec.slice(0, eq), bytes: readInputFile(spec.slice(eq + 1), 'the file to put', maxBlobBytes) };
				});
				const opened = await open();
				// The request names the bytes put, so the same id with other contents is refused.
				const { request } = requestOf('desk asset version', { id, note: values.note, files: files.map((f) => ({ path: f.path, sha256: createHash('sha256').update(f.bytes).digest('hex') })) });
				const { result } = await answerOnce(opened.libraryRequests, request, () => opened.library.putFiles(id, files, { note: values.note, madeBy, ...(request ? { clientRequest: request } : {}) }));
				print(out, result, () => formatSnapshot(result));
				return 0;
			}
			case 'asset tags': {
				const [id, ...tags] = rest;
				if (!id) {
					throw new UsageError('asset tags takes an asset id and the tags');
				}
				const asset = (await lib()).setTags(id, tags);
				print(out, asset, () => `${t(asset.name)}: ${asset.tags.map(t).join(' ') || '(no tags)'}`);
				return 0;
			}
			case 'asset describe': {
				expectArgs(rest, 2, command);
				const asset = (await lib()).describe(rest[0]!, rest[1]!);
				print(out, asset, () => `${t(asset.name)}: ${t(asset.about)}`);
				return 0;
			}
			case 'asset link': {
				expectArgs(rest, 0, command);
				if (values.name === undefined || values.url === undefined) {
					throw new UsageError('asset link needs --name NAME and --url URL');
				}
				const opened = await open();
				const { request } = requestOf('desk asset link', { name: values.name, url: values.url, project: values.project, from: values.from });
				const { result: asset } = await answerOnce(opened.libraryRequests, request, async () =>
					opened.library.addLink({ name: values.name!, url: values.url!, madeBy, project: values.project, from: values.from, ...(request ? { clientRequest: request } : {}) }),
				);
				print(out, asset, () => `${t(asset.id)} ${t(asset.name)} ${t(asset.url)}`);
				return 0;
			}
			case 'asset note': {
				expectArgs(rest, 0, command);
				if (values.name === undefined || values.text === undefined) {
					throw new UsageError('asset note needs --name NAME and --text TEXT');
				}
				const opened = await open();
				const { request } = requestOf('desk asset note', { name: values.name, text: values.text, project: values.project });
				const { result: asset } = await answerOnce(opened.libraryRequests, request, async () =>
					opened.library.addNote({ name: values.name!, text: values.text!, madeBy, project: values.project, ...(request ? { clientRequest: request } : {}) }),
				);
				print(out, asset, () => `${t(asset.id)} ${t(asset.name)}`);
				return 0;
			}
			case 'asset retire':
			case 'asset unretire': {
				const asset = (await lib()).setRetired(oneId(rest, command), verb === 'retire');
				print(out, asset, () => `${t(asset.name)}: ${asset.retired ? 'retired' : 'in the lists again'}`);
				return 0;
			}
			case 'asset checks': {
				const id = oneId(rest, command);
				if (!values.file) {
					throw new UsageError('asset checks needs --file CHECKS.json');
				}
				const text = readInputText(values.file, 'the checks file', maxJsonBytes);
				let checks: unknown;
				try {
					checks = JSON.parse(text);
				} catch (error) {
					throw new DeskError('asset.badChecks', `Could not read checks from ${values.file}: ${(error as Error).message}`, { file: values.file });
				}
				const asset = (await lib()).setChecks(id, checks);
				print(out, asset, () => `${t(asset.name)}: ${asset.checks.length} check${asset.checks.length === 1 ? '' : 's'}`);
				return 0;
			}
			case 'asset mount': {
				expectArgs(rest, 2, command);
				const mounted = (await lib()).mount(rest[0]!, positiveInteger(rest[1]!, 'N'));
				print(out, { path: mounted }, () => t(mounted));
				return 0;
			}
			case 'asset diff': {
				expectArgs(rest, 3, command);
				const diff = await (await lib()).diff(rest[0]!, positiveInteger(rest[1]!, 'A'), positiveInteger(rest[2]!, 'B'));
				print(out, diff, () => formatDiff(diff));
				return 0;
			}
			case 'asset sync': {
				const result = await (await lib()).sync(oneId(rest, command));
				print(out, result, () => (result.head ? `${t(result.asset.name)}: head ${t(result.head.slice(0, 12))}${result.recorded ? ' recorded (sync)' : ' already observed'}` : `${t(result.asset.name)}: no commits`));
				return 0;
			}
			case 'asset search': {
				if (rest.length === 0) {
					throw new UsageError('asset search takes the words to look for');
				}
				const hits = await (await lib()).search(rest.join(' '));
				print(out, hits, () => hits.map((h) => `${h.score.toFixed(2).padStart(7)}  ${t(h.id)}  ${t(h.name)}  (${t(h.reason)})`).join('\n') || '(no matches)');
				return 0;
			}
			case 'store pack': {
				expectArgs(rest, 0, command);
				const opened = await open();
				const result = opened.blobs.packLoose() ?? { packed: 0, corrupt: [], done: false };
				print(out, result, () =>
					[
						result.done ? `${result.packed} loose blob${result.packed === 1 ? '' : 's'} packed` : 'another process is packing the store; try again when it is done',
						...result.corrupt.map((hash) => `not packed, its bytes do not match its name: ${t(hash)}`),
					].join('\n'),
				);
				return result.done ? 0 : 75;
			}
			case 'store recover': {
				expectArgs(rest, 1, command);
				const choice = rest[0]!;
				if (choice !== 'restore' && choice !== 'empty' && choice !== 'rebuild') {
					throw new UsageError(`store recover takes restore, empty or rebuild, not ${JSON.stringify(choice)}`);
				}
				if (values.library && (values.project !== undefined || values.repo !== undefined)) {
					throw new UsageError('store recover takes --library or a project (--project, --repo), not both');
				}
				const result = values.library
					? await Desk.recoverLibrary(store, choice, logger)
					: await (async () => {
							const opened = await open();
							return opened.recoverProject(values.project ? projectPath(opened, values.project) : await repoTop(values.repo ?? process.cwd()), choice);
						})();
				print(out, result, () => formatRecovery(result));
				return 0;
			}
			case 'runs list':
			case 'runs show':
			case 'history export':
			case 'history import': {
				const opened = await open();
				const found = await repoTop(values.repo ?? process.cwd());
				// A read never makes a project database; an import (a fresh clone's history brought in) and an export (a ref written) are writes.
				const top = command === 'history import' || command === 'history export' ? found : recordedTop(opened, found);
				if (command === 'history export') {
					expectArgs(rest, 0, command);
					const result = await opened.exportHistory(top, values.ref);
					print(out, result, () => (result.commit ? `${result.objects} objects written to ${t(values.ref ?? 'refs/desk/history')} (${t(result.commit.slice(0, 12))})` : 'no change since the last export'));
					return 0;
				}
				if (command === 'history import') {
					expectArgs(rest, 0, command);
					const result = await opened.importHistory(top, values.ref);
					print(out, result, () => `${result.added} added, ${result.unchanged} already here${result.refused.length ? `, ${result.refused.length} refused` : ''}`);
					for (const refused of result.refused) {
						writeMessage(process.stderr, `desk: refused ${t(refused.path)}: ${t(refused.reason)}\n`);
					}
					return result.refused.length > 0 ? 2 : 0;
				}
				const ai = await opened.projectAi(top);
				if (command === 'runs list') {
					expectArgs(rest, 0, command);
					const overview = runsOverview(ai);
					print(out, overview, () => formatOverview(overview));
					return 0;
				}
				const detail = runDetail(ai, oneId(rest, command));
				print(out, detail, () => formatRunSummary(detail.summary, detail.task.title));
				return 0;
			}
			case 'run go':
			case 'run status':
			case 'run cancel':
			case 'run decide': {
				const opened = await open();
				const projectName = command === 'run go' && rest.length > 0 ? rest[0] : values.project;
				if (command === 'run go' && rest.length > 1) {
					throw new UsageError('run go takes at most the project name');
				}
				const top = projectName ? projectPath(opened, projectName) : await repoTop(values.repo ?? process.cwd());
				const settingsFor = () => {
					const file = values.settings !== undefined ? readSettingsFile(values.settings) : {};
					return parseRunSettings({ ...file, ...(values.agent ? { agent: values.agent } : {}), ...(values.isolation ? { isolation: values.isolation } : {}) });
				};
				const { executor, gate } = await opened.runs(top);
				const ai = await opened.projectAi(top);
				const carryOut = async (record: LaunchRecord, runId: string, settings: RunSettings) => {
					// Ctrl-C cancels the run (its agent's whole process group) rather than orphaning it.
					const onSignal = () => executor.cancel(runId, 'interrupted from the command line');
					process.once('SIGINT', onSignal);
					process.once('SIGTERM', onSignal);
					let last = '';
					opened.onRunChanged = (_top, changed) => {
						const run = ai.get<Run>(changed);
						if (run && run.status !== last && !out.json) {
							last = run.status;
							writeMessage(process.stderr, `desk: run ${t(runId)} ${t(run.status)}\n`);
						}
					};
					try {
						return await executor.execute(record, runId, settings);
					} finally {
						process.off('SIGINT', onSignal);
						process.off('SIGTERM', onSignal);
					}
				};
				const report = (runId: string) => {
					const detail = runDetail(ai, runId);
					print(out, detail, () => formatRunDetail(detail));
					return detail.summary.status === 'failed' ? 2 : 0;
				};
				if (command === 'run go') {
					const settings = settingsFor();
					const launches = await opened.launches(top);
					const card = launches.card();
					// The run claims the checkout in Go's own transaction: two `desk run go` at once
					// (or a window's Go) never both start an agent in it.
					const { result: record, replayed } = await launches.goOnce(madeBy, new Date(), {
						...requestOf('desk run go', { top, settings }),
						check: () => executor.assertCheckoutFree(settings, card),
						claim: (tx, launched) => executor.claimIn(tx, settings, launched, launched.run),
					});
					if (!replayed) {
						await carryOut(record, record.run, settings);
					}
					return report(record.run);
				}
				const id = oneId(rest, command);
				if (command === 'run status') {
					return report(id);
				}
				if (command === 'run cancel') {
					const result = executor.cancel(id, values.reason?.trim() || 'cancelled from the command line');
					print(out, result, () => (result.stopped ? `run ${t(id)}: its agent was told to stop` : `run ${t(id)}: marked failed (no process was carrying it out)`));
					return 0;
				}
				const decision = values.decision;
				if (decision !== 'commit' && decision !== 'retry' && decision !== 'abandon' && decision !== 'checkpoint') {
					throw new UsageError('run decide needs --decision commit, retry, abandon or checkpoint');
				}
				const settings = decision === 'retry' ? settingsFor() : undefined;
				const { request } = requestOf('desk run decide', { top, id, decision, patchset: values.patchset, rationale: values.rationale, settings });
				// Retry: the new run claims the checkout in the decision's transaction, as Go's run does.
				const previous = ai.get<Run>(id);
				const record = settings && previous?.object_type === 'run' ? gate.launchRecord(previous) : undefined;
				const retry = settings && record ? { check: () => executor.assertCheckoutFree(settings, record), claim: (tx: WriteTransaction, runId: string) => executor.claimIn(tx, settings, record, runId) } : {};
				const { result, replayed } = await answerOnce(await opened.projectRequests(top), request, async () => {
					const decided = await gate.decide(id, { decision, ...(values.patchset ? { patchset: values.patchset } : {}), ...(values.rationale ? { rationale: values.rationale } : {}), ...retry });
					await opened.answerProjectRequest(top, request, decided);
					return decided;
				});
				if (result.new_run && settings && !replayed) {
					const record = gate.launchRecord(ai.require<Run>(result.new_run, 'run'));
					if (record) {
						await carryOut(record, result.new_run, settings);
						return report(result.new_run);
					}
				}
				print(out, result, () =>
					result.commit
						? `landed as ${t(result.commit)}`
						: result.version !== undefined
							? `landed as v${result.version}`
							: `${decision}${result.restored?.length ? `: ${result.restored.length} file(s) put back` : ''}${result.left?.length ? `; left as you changed them: ${result.left.map(t).join(', ')}` : ''}`,
				);
				return 0;
			}
			case 'task attachments': {
				const opened = await open();
				const top = values.project ? projectPath(opened, values.project) : recordedTop(opened, await repoTop(values.repo ?? process.cwd()));
				const store = await opened.attachments(top);
				const [sub, taskArg, third] = rest;
				const needTask = () => {
					if (!taskArg) {
						throw new UsageError(`task attachments ${sub} needs the task id`);
					}
					return taskArg;
				};
				const who = (() => {
					try {
						return os.userInfo().username || 'desk-user';
					} catch {
						return 'desk-user';
					}
				})();
				switch (sub) {
					case 'list': {
						if (taskArg === undefined) {
							const tasks = store.tasks();
							print(out, tasks, () => tasks.map((task) => `${t(task.task_id)}  ${String(task.count).padStart(3)} file${task.count === 1 ? ' ' : 's'}  ${humanBytes(task.bytes)}`).join('\n') || '(no attachments)');
						} else {
							const rows = store.list(taskArg);
							print(out, rows, () => rows.map(formatAttachment).join('\n') || '(no attachments)');
						}
						return 0;
					}
					case 'add': {
						if (!third) {
							throw new UsageError('task attachments add TASK FILE');
						}
						const { request } = requestOf('desk task attachments add', { task: needTask(), file: path.resolve(third), name: values.name, note: values.note });
						const { result: row } = await answerOnce(await opened.projectRequests(top), request, async () =>
							store.add(needTask(), path.resolve(third), { addedBy: who, ...(values.name ? { name: values.name } : {}), ...(values.note ? { note: values.note } : {}), ...(request ? { request } : {}) }),
						);
						print(out, row, () => `attached ${formatAttachment(row)}`);
						return 0;
					}
					case 'show':
					case 'cat':
					case 'rm': {
						if (!third) {
							throw new UsageError(`task attachments ${sub} TASK REF`);
						}
						if (sub === 'rm') {
							const row = store.delete(needTask(), third, who, 'desk task attachments rm');
							print(out, row, () => `deleted ${formatAttachment(row)}`);
							return 0;
						}
						const row = resolveAttachment(store.list(needTask()), third);
						if (sub === 'show') {
							print(out, row, () => `${formatAttachment(row)}\n  sha256 ${t(row.sha256)}${row.run_id ? `\n  run ${t(row.run_id)}` : ''}${row.note ? `\n  note: ${t(row.note)}` : ''}`);
							return 0;
						}
						const bytes = store.read(row);
						if (out.json) {
							print(out, { ...row, base64: bytes.toString('base64') }, () => '');
						} else {
							writeBytes(out, bytes);
						}
						return 0;
					}
					default:
						throw new UsageError('task attachments takes list, add, show, cat or rm');
				}
			}
			case 'card show':
			case 'card suggest':
			case 'card plug':
			case 'card unplug':
			case 'card go': {
				expectArgs(rest, 0, command);
				const opened = await open();
				const top = values.project ? projectPath(opened, values.project) : await repoTop(values.repo ?? process.cwd());
				const launches = await opened.launches(top);
				if (command === 'card show') {
					const card = launches.card();
					print(out, card, () => `${terminalSafeLines(card.ticket) || '(no ticket yet)'}\n${card.plugs.map((p) => `  ${t(p.role).padEnd(12)} ${t(p.id)}`).join('\n') || '  (nothing plugged)'}`);
					return 0;
				}
				if (command === 'card suggest') {
					const ticket = values['ticket-file'] !== undefined ? readInputText(values['ticket-file'], 'the ticket file', maxTicketBytes) : values.ticket;
					if (ticket !== undefined && ticket.length > maxTicketBytes) {
						throw new DeskError('input.tooLarge', `The ticket is over the limit of ${humanBytes(maxTicketBytes)}.`, { size: ticket.length, limit: maxTicketBytes });
					}
					if (ticket !== undefined) {
						launches.setTicket(ticket);
					}
					const suggestions = await launches.suggest();
					print(out, suggestions, () => suggestions.map((s) => `${s.score !== undefined ? s.score.toFixed(2).padStart(6) : '     —'}  ${t(s.asset_id)}  ${t(s.name)}  ${t(s.role)}  (${t(s.reason)})`).join('\n') || '(no suggestions)');
					return 0;
				}
				if (command === 'card go') {
					const { result: record } = await launches.goOnce(madeBy, new Date(), requestOf('desk card go', { top }));
					print(out, record, () => `launched ${t(record.launch_id)}: run ${t(record.run)}\n${record.plugs.map((p) => `  ${t(p.role).padEnd(12)} ${t(p.name)} v${p.version}`).join('\n')}`);
					return 0;
				}
				if (!values.asset) {
					throw new UsageError(`${command} needs --asset ID`);
				}
				if (command === 'card unplug') {
					print(out, launches.unplug(values.asset), () => `unplugged ${t(values.asset!)}`);
					return 0;
				}
				if (command === 'card plug') {
					const copy: Record<string, string> = {};
					for (const spec of values.copy ?? []) {
						const eq = spec.indexOf('=');
						if (eq <= 0) {
							throw new UsageError(`--copy takes FROM=TO, not ${spec}`);
						}
						copy[spec.slice(0, eq)] = spec.slice(eq + 1);
					}
					const card = await launches.plug(values.asset, (values.role ?? 'reference') as PlugRole, {
						nodes: values.nodes ? values.nodes.split(',').filter(Boolean) : [],
						files: values.files ?? [],
						copy,
					});
					print(out, card, () => `plugged ${t(values.asset!)} as ${t(values.role ?? 'reference')}`);
					return 0;
				}
				throw new UsageError(`unknown command: ${command}`);
			}
			case 'asset used-in': {
				const usedIn = (await lib()).usedIn(oneId(rest, command));
				print(out, usedIn, () => usedIn.map((u) => `${t(u.launched_at)}  ${t(u.launch_id)}  ${t(u.project)}  ${t(u.role)} v${u.version}`).join('\n') || '(not used in any launch yet)');
				return 0;
			}
			default:
				throw new UsageError(`unknown command: ${positionals.join(' ')}`);
		}
	} catch (error) {
		if (error instanceof UsageError) {
			writeMessage(process.stderr, `desk: ${t(error.message)}\n\n${usage}`);
			return 64;
		}
		if (error instanceof DeskError) {
			if (out.json) {
				out.write(jsonForTerminal({ error: error.toJSON() }) + '\n');
			}
			writeMessage(process.stderr, `desk: ${t(describeError(error))}\n`);
			// The library folder is a file: the command line was pointed at the wrong place.
			return error.code === 'store.notAFolder' ? 64 : 2;
		}
		writeMessage(process.stderr, `desk: internal error: ${(error as Error).stack ?? String(error)}\n`);
		return 70;
	} finally {
		desk?.close();
	}
}

function projectPath(desk: Desk, name: string): string {
	const project = desk.library.listProjects().find((p) => p.name === name);
	if (!project || project.path === '') {
		throw new DeskError('project.notFound', `No project named ${JSON.stringify(name)} with a repository.`, { project: name });
	}
	return project.path;
}

/**
 * `top` when the desk keeps records of that repository (a project of the library, or a project
 * database a history import made); otherwise project.notFound, so that a read of a repository nobody
 * adopted creates nothing in it.
 */
function recordedTop(desk: Desk, top: string): string {
	if (desk.library.listProjects().some((p) => p.path === top) || fs.existsSync(path.join(top, projectDataFolder, 'project.db'))) {
		return top;
	}
	throw new DeskError('project.notFound', `The desk keeps no records of ${top}: adopt it first (desk asset import --dir ${top} --main), or bring its history in (desk history import).`, { dir: top });
}

async function repoTop(dir: string): Promise<string> {
	const top = await new RepositoryReader().findTop(path.resolve(dir));
	if (!top) {
		throw new DeskError('import.notRepoTop', `${dir} is in no git repository; pass --repo PATH.`, { dir });
	}
	return top;
}

function formatRecovery(r: StoreRecovery): string {
	const kept = r.keptAs ? `; the damaged copy stays at ${t(r.keptAs)}` : '';
	const lines = [
		r.choice === 'restore' ? `${t(r.file)}: the kept copy ${t(r.keptAs ?? "")} is back in use` : `${t(r.file)}: started ${r.choice === 'rebuild' ? 'again' : 'empty'}${kept}`,
	];
	if (r.rebuilt) {
		lines.push(`rebuilt from refs/desk/history: ${r.rebuilt.added} object${r.rebuilt.added === 1 ? '' : 's'}${r.rebuilt.refused.length ? `, ${r.rebuilt.refused.length} refused` : ''}`);
	}
	if (r.attachmentsKept) {
		lines.push(`${r.attachmentsKept} attachment file${r.attachmentsKept === 1 ? '' : 's'} no record names kept in .desk/attachments (never swept)`);
	}
	return lines.join('\n');
}

function formatRunSummary(r: RunSummary, title: string): string {
	const cost = r.cost_usd !== undefined ? ` $${r.cost_usd.toFixed(4)}` : '';
	const tokens = r.total_tokens !== undefined ? ` ${r.total_tokens} tokens` : '';
	return `${t(r.id)}  ${t(r.status)}  ${t(title)}  ${t(r.model ?? '-')}${tokens}${cost}${r.decision ? `  → ${t(r.decision)}` : ''}`;
}

function formatAttachment(row: AttachmentRow): string {
	return `${t(row.id.slice(0, 8))}  ${humanBytes(row.size).padStart(9)}  ${t(row.media_type).padEnd(24)} ${t(row.source).padEnd(6)} ${t(row.name)}${row.unavailable ? `  (unavailable: ${t(row.unavailable)})` : ''}`;
}

function formatRunDetail(detail: RunDetail): string {
	const lines = [formatRunSummary(detail.summary, detail.task.title)];
	if (detail.summary.error) {
		lines.push(`  error: ${t(detail.summary.error)}`);
	}
	for (const patch of detail.patchsets) {
		lines.push(`  patchset ${t(patch.object_id)} ${t(patch.apply_status)}: ${patch.touched.map((touched) => `${t(touched.path)} +${touched.lines_added} -${touched.lines_deleted}`).join(', ')}`);
	}
	for (const evidence of detail.evidence) {
		lines.push(`  check ${t(evidence.tags['desk.check'] ?? evidence.tool)}: ${t(evidence.summary ?? `exit ${evidence.exit_code}`)}`);
	}
	if (detail.decision) {
		lines.push(`  decision: ${t(detail.decision.decision_type)}${detail.decision.result_commit_sha ? ` ${t(detail.decision.result_commit_sha)}` : ''}`);
	} else if (detail.summary.at_gate) {
		lines.push(`  waiting at the gate: desk run decide ${t(detail.summary.id)} --decision commit|retry|abandon|checkpoint`);
	}
	return lines.join('\n');
}

function formatOverview(overview: RunsOverview): string {
	const lines: string[] = [];
	for (const view of overview.intents) {
		lines.push(`${t(view.status).padEnd(9)} ${t(view.intent.prompt)}`);
		for (const task of view.tasks) {
			lines.push(`  ${t(task.task.status).padEnd(9)} ${t(task.task.title)}`);
			for (const r of task.runs) {
				lines.push(`    ${formatRunSummary(r, '')}`);
			}
		}
	}
	for (const task of overview.tasks) {
		lines.push(`${t(task.task.status).padEnd(9)} ${t(task.task.title)}`);
	}
	return lines.join('\n') || '(no runs yet)';
}

function expectArgs(rest: string[], count: number, command: string): void {
	if (rest.length !== count) {
		throw new UsageError(`${command} takes ${count === 0 ? 'no arguments' : `${count} argument${count > 1 ? 's' : ''}`}`);
	}
}

function oneId(rest: string[], command: string): string {
	expectArgs(rest, 1, command);
	return rest[0]!;
}

function positiveInteger(text: string, what: string): number {
	const n = Number(text);
	if (!Number.isSafeInteger(n) || n < 1 || String(n) !== text.trim()) {
		throw new UsageError(`${what} must be a version number (1, 2, ...), not ${JSON.stringify(text)}`);
	}
	return n;
}

/** A settings file (JSON) named by --settings: bounded like the server's `settings` param. */
function readSettingsFile(file: string): Record<string, unknown> {
	const text = readInputText(file, 'the settings file', maxSettingsBytes);
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (error) {
		throw new DeskError('run.badSettings', `The settings file ${file} is not JSON: ${(error as Error).message}`, { file });
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		throw new DeskError('run.badSettings', `The settings file ${file} must hold a JSON object.`, { file });
	}
	return value as Record<string, unknown>;
}

/**
 * Every record and line of text the command line prints: JSON with --json (terminal-inert escapes),
 * else the human text through {@link writeMessage}. Formatters pass each untrusted field through
 * `t` (one line, every control shown as an escape); writeMessage is the guard behind them.
 */
function print(out: Output, value: unknown, human: () => string): void {
	if (out.json) {
		out.write(jsonForTerminal(value) + '\n');
	} else {
		writeMessage(out, human() + '\n');
	}
}

/**
 * The stored bytes of a file (`asset cat`, `task attachments cat`): as they are into a pipe or a
 * file; to a terminal as text with its controls escaped, since the terminal would obey them.
 */
function writeBytes(out: Output, bytes: Uint8Array): void {
	if (out.toTerminal ?? process.stdout.isTTY) {
		writeMessage(out, Buffer.from(bytes).toString('utf8'));
	} else {
		out.write(bytes);
	}
}

function formatSnapshot(result: { created: boolean; version: { version: number; file_count: number }; skipped?: Array<{ path: string; reason: string }> }): string {
	const { version, file_count: files } = result.version;
	// What the folder held that the version does not (links, names that are not UTF-8, temp files…), by name.
	const skipped = (result.skipped ?? []).map((s) => `\n  not stored: ${t(s.path)} (${t(s.reason)})`).join('');
	return (result.created ? `v${version}: ${files} file${files === 1 ? '' : 's'}` : `no changes: still v${version}`) + skipped;
}

function formatImport(result: ImportResult): string {
	const project = result.project ? ` (project ${t(result.project.name)}${result.project.main_asset === result.asset.id ? ', main asset' : ''})` : '';
	return `${result.created ? 'imported' : 'in the library'}: ${t(result.asset.id)} ${t(result.asset.name)} ${t(result.asset.working_dir)}${project}`;
}

function formatAsset(a: AssetSummary): string {
	const main = a.projects.some((p) => p.main) ? ' (main)' : '';
	const versions = a.engine === 'none' ? '' : ` ${a.version_count} version${a.version_count === 1 ? '' : 's'}`;
	const where = a.engine === 'none' ? t(a.url) || '(note)' : t(a.working_dir);
	return `${t(a.id)}  ${t(a.name)}${main}${a.retired ? ' (retired)' : ''}  ${t(a.kind) || '-'}  ${t(a.engine)}${a.branch ? ` ${t(a.branch)}` : ''}${versions}  ${where}`;
}

function formatVersion(v: AssetVersion): string {
	if (v.engine === 'snapshot') {
		return `v${v.version}  ${t(v.made_at)}  ${v.file_count} file${v.file_count === 1 ? '' : 's'}  ${t(v.made_by)}${v.note ? `  ${t(v.note)}` : ''}`;
	}
	const flags = [t(v.made_by), v.head_at ? `head ${t(v.head_at)}` : '', v.never_head ? 'never head' : ''].filter(Boolean).join(', ');
	return `v${v.version}  ${t(v.commit.slice(0, 12))}  ${t(v.made_at)}  ${t(v.subject)}  (${flags})`;
}

function formatAtGo(atGo: AtGo | { error: string }): string {
	if ('error' in atGo) {
		return t(atGo.error);
	}
	if (atGo.engine === 'git') {
		return `v${atGo.version} (${t(atGo.branch)} at ${t(atGo.commit.slice(0, 12))})`;
	}
	return atGo.working_changes ? `working changes: go would read them as v${atGo.version} (${atGo.changed} file${atGo.changed === 1 ? '' : 's'} changed)` : `v${atGo.version}`;
}

function formatDiff(diff: VersionDiff): string {
	const lines = [
		...diff.added.map((f) => `A  ${t(f.path)}`),
		...diff.removed.map((f) => `D  ${t(f.path)}`),
		...diff.modified.map((m) => `M  ${t(m.after.path)}`),
	];
	return lines.join('\n') || `(no changes from v${diff.from} to v${diff.to})`;
}


if (require.main === module) {
	main(process.argv.slice(2)).then(
		(code) => {
			process.exitCode = code;
		},
		(error: unknown) => {
			writeMessage(process.stderr, `desk: internal error: ${String(error)}\n`);
			process.exitCode = 70;
		},
	);
}
