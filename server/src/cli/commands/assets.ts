/**
 * `desk assets …` and `desk asset …`: the library's assets, their versions, files, tags, checks,
 * mounts and search.
 */
import * as path from 'node:path';
import type { ImportResult } from '../../assets/library';
import type { AssetSummary, AssetVersion, AtGo, VersionDiff, VersionFile } from '../../assets/types';
import { DeskError } from '../../core/errors';
import { maxJsonBytes } from '../../core/inputLimits';
import {
	addLink,
	addNote,
	atGo,
	describeAsset,
	diffVersions,
	importAsset,
	listAssets,
	listFiles,
	listVersions,
	mountVersion,
	putVersion,
	readFile,
	searchAssets,
	setChecks,
	setRetired,
	setTags,
	showAsset,
	snapshotAsset,
	syncAsset,
	usedIn,
} from '../../operations/assets';
import { commandOf, invokeFromCommandLine, operationCommand } from '../operationCommand';
import { expectArgs, oneId, positiveInteger, UsageError } from '../args';
import type { Command } from '../context';
import { readInputText } from '../files';
import { writeBytes } from '../output';
import { jsonForTerminal, terminalSafe as t, writeMessage } from '../terminal';

/** `desk assets list [--project NAME] [--all]` */
const assetsList = operationCommand(listAssets, {
	params: ({ command, rest, values }) => {
		expectArgs(rest, 0, command);
		return values.project === undefined ? {} : { project: values.project };
	},
	json: ({ assets }, { values }) => assets.filter((a) => values.all || !a.retired),
	text: ({ assets }, { values }) =>
		assets
			.filter((a) => values.all || !a.retired)
			.map(formatAsset)
			.join('\n') || '(no assets)',
});

/** `desk asset import --dir PATH | --new NAME | --asset ID` */
const assetImport = operationCommand(importAsset, {
	params: ({ command, rest, values }) => {
		expectArgs(rest, 0, command);
		if (
			[
				values.dir !== undefined && values.new === undefined,
				values.new !== undefined,
				values.asset !== undefined,
			].filter(Boolean).length !== 1
		) {
			throw new UsageError('asset import takes one of --dir PATH, --new NAME or --asset ID');
		}
		if (values.skill !== undefined && values.new === undefined) {
			throw new UsageError('asset import --skill DESCRIPTION goes with --new NAME');
		}
		if (values.asset !== undefined && !values.project) {
			throw new UsageError('asset import --asset ID needs --project NAME');
		}
		return {
			...(values.dir === undefined ? {} : { dir: path.resolve(values.dir) }),
			...(values.new === undefined ? {} : { newName: values.new }),
			...(values.skill === undefined ? {} : { skillDescription: values.skill }),
			...(values.asset === undefined ? {} : { assetId: values.asset }),
			...(values.project === undefined ? {} : { project: values.project }),
			...(values.main === undefined ? {} : { main: values.main }),
			...(values['allow-git-dir'] === undefined ? {} : { allowGitDir: values['allow-git-dir'] }),
		};
	},
	text: (result) => formatImport(result),
});

/** `desk asset show ID` */
const assetShow = operationCommand(showAsset, {
	params: ({ command, rest }) => ({ id: oneId(rest, command) }),
	text: (show) =>
		`${formatAsset(show)}\n  at go: ${formatAtGo(show.at_go)}${show.about ? `\n  about: ${t(show.about)}${show.about_model_written ? ' (written by a model)' : ''}` : ''}`,
});

/** `desk asset versions ID` */
const assetVersions = commandOf(listVersions, async (context) => {
	const { command, rest, out } = context;
	const id = oneId(rest, command);
	// Asked and written a page at a time: a history of tens of thousands of versions in flat memory.
	const pageSize = 5000;
	let written = 0;
	for (let from = 1; ; from += pageSize) {
		const page = await invokeFromCommandLine(listVersions, context, { id, from, to: from + pageSize - 1 });
		if (page.versions.length === 0) {
			break;
		}
		if (out.json) {
			// The page as one array, its brackets cut: the same text as each version indented, at a
			// fraction of the cost (one stringify and one escape pass for 2,000 versions).
			const items = jsonForTerminal(page.versions);
			out.write(`${written === 0 ? '[\n' : ',\n'}${items.slice(2, items.length - 2)}`);
		} else {
			writeMessage(out, `${page.versions.map(formatVersion).join('\n')}\n`);
		}
		written += page.versions.length;
		if (written >= page.total) {
			break;
		}
	}
	out.write(out.json ? (written === 0 ? '[]\n' : '\n]\n') : written === 0 ? '(no versions)\n' : '');
	return 0;
});

/** `desk asset atgo ID` */
const assetAtGo = operationCommand(atGo, {
	params: ({ command, rest }) => ({ id: oneId(rest, command) }),
	text: (result) => formatAtGo(result),
});

/** `desk asset files ID [--version N]` */
const assetFiles = operationCommand(listFiles, {
	params: ({ command, rest, version }) => ({ id: oneId(rest, command), ...(version === undefined ? {} : { version }) }),
	text: ({ files }) => files.map(formatFile).join('\n') || '(no files)',
});

/** One line of `asset files`: the size (`-` when not known), the path, and its kind when it is not a plain file. */
function formatFile(f: VersionFile): string {
	const what =
		f.kind === 'symlink'
			? ` -> ${t(f.target ?? '')}`
			: f.kind === 'submodule'
				? `  (submodule @ ${f.hash.slice(0, 7)})`
				: f.kind === 'executable'
					? '  (executable)'
					: '';
	return `${f.size >= 0 ? String(f.size).padStart(10) : '         -'}  ${t(f.path)}${what}`;
}

/** `desk asset cat ID PATH [--version N]` */
const assetCat = operationCommand(readFile, {
	params: ({ command, rest, version }) => {
		expectArgs(rest, 2, command);
		return { id: rest[0]!, path: rest[1]!, ...(version === undefined ? {} : { version }) };
	},
	json: ({ size, base64 }, { rest }) => ({ path: rest[1], size, base64 }),
	text: () => '',
	write: ({ base64 }, { out }) => writeBytes(out, Buffer.from(base64, 'base64')),
});

/** `desk asset snapshot ID [--note TEXT]` */
const assetSnapshot = operationCommand(snapshotAsset, {
	params: ({ command, rest, values }) => ({
		id: oneId(rest, command),
		...(values.note === undefined ? {} : { note: values.note }),
	}),
	text: (result) => formatSnapshot(result),
});

/** `desk asset version ID --put REL=SRC... [--note TEXT]` */
const assetVersion = operationCommand(putVersion, {
	params: ({ command, rest, values }) => {
		const id = oneId(rest, command);
		if (!values.put || values.put.length === 0) {
			throw new UsageError('asset version needs at least one --put REL=SRC');
		}
		const files = values.put.map((spec) => {
			const eq = spec.indexOf('=');
			if (eq <= 0 || eq === spec.length - 1) {
				throw new UsageError(`--put takes REL=SRC, not ${spec}`);
			}
			return { path: spec.slice(0, eq), from: path.resolve(spec.slice(eq + 1)) };
		});
		return { id, files, ...(values.note === undefined ? {} : { note: values.note }) };
	},
	text: (result) => formatSnapshot(result),
});

/** `desk asset tags ID [TAG...]` */
const assetTags = operationCommand(setTags, {
	params: ({ rest }) => {
		const [id, ...tags] = rest;
		if (!id) {
			throw new UsageError('asset tags takes an asset id and the tags');
		}
		return { id, tags };
	},
	text: (asset) => `${t(asset.name)}: ${asset.tags.map(t).join(' ') || '(no tags)'}`,
});

/** `desk asset describe ID TEXT` */
const assetDescribe = operationCommand(describeAsset, {
	params: ({ command, rest }) => {
		expectArgs(rest, 2, command);
		return { id: rest[0]!, about: rest[1]! };
	},
	text: (asset) => `${t(asset.name)}: ${t(asset.about)}`,
});

/** `desk asset link --name NAME --url URL [--project NAME] [--from ID]` */
const assetLink = operationCommand(addLink, {
	params: ({ command, rest, values }) => {
		expectArgs(rest, 0, command);
		if (values.name === undefined || values.url === undefined) {
			throw new UsageError('asset link needs --name NAME and --url URL');
		}
		return {
			name: values.name,
			url: values.url,
			...(values.project === undefined ? {} : { project: values.project }),
			...(values.from === undefined ? {} : { from: values.from }),
		};
	},
	text: (asset) => `${t(asset.id)} ${t(asset.name)} ${t(asset.url)}`,
});

/** `desk asset note --name NAME --text TEXT [--project NAME]` */
const assetNote = operationCommand(addNote, {
	params: ({ command, rest, values }) => {
		expectArgs(rest, 0, command);
		if (values.name === undefined || values.text === undefined) {
			throw new UsageError('asset note needs --name NAME and --text TEXT');
		}
		return {
			name: values.name,
			text: values.text,
			...(values.project === undefined ? {} : { project: values.project }),
		};
	},
	text: (asset) => `${t(asset.id)} ${t(asset.name)}`,
});

/** `desk asset retire ID | asset unretire ID` */
const assetRetire = operationCommand(setRetired, {
	params: ({ command, verb, rest }) => ({ id: oneId(rest, command), retired: verb === 'retire' }),
	text: (asset) => `${t(asset.name)}: ${asset.retired ? 'retired' : 'in the lists again'}`,
});

/** `desk asset checks ID --file CHECKS.json` */
const assetChecks = operationCommand(setChecks, {
	params: ({ command, rest, values }) => {
		const id = oneId(rest, command);
		if (!values.file) {
			throw new UsageError('asset checks needs --file CHECKS.json');
		}
		const text = readInputText(values.file, 'the checks file', maxJsonBytes);
		try {
			return { id, checks: JSON.parse(text) as unknown };
		} catch (error) {
			throw new DeskError('asset.badChecks', `Could not read checks from ${values.file}: ${(error as Error).message}`, {
				file: values.file,
			});
		}
	},
	text: (asset) => `${t(asset.name)}: ${asset.checks.length} check${asset.checks.length === 1 ? '' : 's'}`,
});

/** `desk asset mount ID N` */
const assetMount = operationCommand(mountVersion, {
	params: ({ command, rest }) => {
		expectArgs(rest, 2, command);
		return { id: rest[0]!, version: positiveInteger(rest[1]!, 'N') };
	},
	text: ({ path: mounted }) => t(mounted),
});

/** `desk asset diff ID A B` */
const assetDiff = operationCommand(diffVersions, {
	params: ({ command, rest }) => {
		expectArgs(rest, 3, command);
		return { id: rest[0]!, from: positiveInteger(rest[1]!, 'A'), to: positiveInteger(rest[2]!, 'B') };
	},
	text: (diff) => formatDiff(diff),
});

/** `desk asset sync ID` */
const assetSync = operationCommand(syncAsset, {
	params: ({ command, rest }) => ({ id: oneId(rest, command) }),
	text: (result) =>
		result.head
			? `${t(result.asset.name)}: head ${t(result.head.slice(0, 12))}${result.recorded ? ' recorded (sync)' : ' already observed'}`
			: `${t(result.asset.name)}: no commits`,
});

/** `desk asset search WORDS...` */
const assetSearch = operationCommand(searchAssets, {
	params: ({ rest, values }) => {
		if (rest.length === 0) {
			throw new UsageError('asset search takes the words to look for');
		}
		return { query: rest.join(' '), ...(values.project === undefined ? {} : { project: values.project }) };
	},
	text: ({ hits }) =>
		hits.map((h) => `${h.score.toFixed(2).padStart(7)}  ${t(h.id)}  ${t(h.name)}  (${t(h.reason)})`).join('\n') ||
		'(no matches)',
});

/** `desk asset used-in ID` */
const assetUsedIn = operationCommand(usedIn, {
	params: ({ command, rest }) => ({ id: oneId(rest, command) }),
	json: (result) => result.usedIn,
	text: (result) =>
		result.usedIn
			.map((u) => `${t(u.launched_at)}  ${t(u.launch_id)}  ${t(u.project)}  ${t(u.role)} v${u.version}`)
			.join('\n') || '(not used in any launch yet)',
});

export const assetCommands: ReadonlyArray<[string, Command]> = [
	['assets list', assetsList],
	['asset import', assetImport],
	['asset show', assetShow],
	['asset versions', assetVersions],
	['asset atgo', assetAtGo],
	['asset files', assetFiles],
	['asset cat', assetCat],
	['asset snapshot', assetSnapshot],
	['asset version', assetVersion],
	['asset tags', assetTags],
	['asset describe', assetDescribe],
	['asset link', assetLink],
	['asset note', assetNote],
	['asset retire', assetRetire],
	['asset unretire', assetRetire],
	['asset checks', assetChecks],
	['asset mount', assetMount],
	['asset diff', assetDiff],
	['asset sync', assetSync],
	['asset search', assetSearch],
	['asset used-in', assetUsedIn],
];

function formatSnapshot(result: {
	created: boolean;
	version: { version: number; file_count: number };
	skipped?: Array<{ path: string; reason: string }>;
}): string {
	const { version, file_count: files } = result.version;
	return (
		(result.created ? `v${version}: ${files} file${files === 1 ? '' : 's'}` : `no changes: still v${version}`) +
		notStoredLines(result.skipped)
	);
}

/** What a folder held that its version does not (links, names that are not UTF-8, temp files…), by name. */
function notStoredLines(skipped: ReadonlyArray<{ path: string; reason: string }> | undefined): string {
	return (skipped ?? []).map((s) => `\n  not stored: ${t(s.path)} (${t(s.reason)})`).join('');
}

function formatImport(result: ImportResult): string {
	const project = result.project
		? ` (project ${t(result.project.name)}${result.project.main_asset === result.asset.id ? ', main asset' : ''})`
		: '';
	return `${result.created ? 'imported' : 'in the library'}: ${t(result.asset.id)} ${t(result.asset.name)} ${t(result.asset.working_dir)}${project}${notStoredLines(result.skipped)}`;
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
	// (Concatenated rather than an array of flags joined: a listing formats tens of thousands.)
	const madeBy = t(v.made_by);
	let flags = v.head_at ? (madeBy ? `${madeBy}, head ${t(v.head_at)}` : `head ${t(v.head_at)}`) : madeBy;
	if (v.never_head) {
		flags = flags ? `${flags}, never head` : 'never head';
	}
	return `v${v.version}  ${t(v.commit.slice(0, 12))}  ${t(v.made_at)}  ${t(v.subject)}  (${flags})`;
}

function formatAtGo(atGo: AtGo | { error: string }): string {
	if ('error' in atGo) {
		return t(atGo.error);
	}
	if (atGo.engine === 'git') {
		return `v${atGo.version} (${t(atGo.branch)} at ${t(atGo.commit.slice(0, 12))})`;
	}
	return atGo.working_changes
		? `working changes: go would read them as v${atGo.version} (${atGo.changed} file${atGo.changed === 1 ? '' : 's'} changed)`
		: `v${atGo.version}`;
}

function formatDiff(diff: VersionDiff): string {
	const lines = [
		...diff.added.map((f) => `A  ${t(f.path)}`),
		...diff.removed.map((f) => `D  ${t(f.path)}`),
		...diff.modified.map((m) => `M  ${t(m.after.path)}`),
	];
	return lines.join('\n') || `(no changes from v${diff.from} to v${diff.to})`;
}
