/**
 * `desk assets …` and `desk asset …`: the library's assets, their versions, files, tags, checks,
 * mounts and search.
 */
import * as path from 'node:path';
import type { ImportResult } from '../../assets/library';
import type { AssetSummary, AssetVersion, AtGo, VersionDiff } from '../../assets/types';
import { DeskError, describeError } from '../../core/errors';
import { maxJsonBytes } from '../../core/inputLimits';
import { answerOnce } from '../../store/clientRequests';
import {
	addLink,
	describeAsset,
	importAsset,
	putVersion,
	searchAssets,
	setTags,
	snapshotAsset,
} from '../../operations/assets';
import { operationCommand } from '../operationCommand';
import { expectArgs, oneId, positiveInteger, UsageError } from '../args';
import type { Command, CommandContext } from '../context';
import { readInputText } from '../files';
import { print, writeBytes } from '../output';
import { jsonForTerminal, terminalSafe as t, writeMessage } from '../terminal';

/** `desk assets list [--project NAME] [--all]` */
async function assetsList({ command, rest, values, out, lib }: CommandContext): Promise<number> {
	expectArgs(rest, 0, command);
	const assets = (await (await lib()).listAssets(values.project)).filter((a) => values.all || !a.retired);
	print(out, assets, () => assets.map(formatAsset).join('\n') || '(no assets)');
	return 0;
}

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
		if (values.asset !== undefined && !values.project) {
			throw new UsageError('asset import --asset ID needs --project NAME');
		}
		return {
			...(values.dir === undefined ? {} : { dir: path.resolve(values.dir) }),
			...(values.new === undefined ? {} : { newName: values.new }),
			...(values.asset === undefined ? {} : { assetId: values.asset }),
			...(values.project === undefined ? {} : { project: values.project }),
			...(values.main === undefined ? {} : { main: values.main }),
			...(values['allow-git-dir'] === undefined ? {} : { allowGitDir: values['allow-git-dir'] }),
		};
	},
	text: (result) => formatImport(result),
});

/** `desk asset show ID` */
async function assetShow({ command, rest, out, lib }: CommandContext): Promise<number> {
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
	print(
		out,
		show,
		() => `${formatAsset(asset)}\n  at go: ${formatAtGo(atGo)}${asset.about ? `\n  about: ${t(asset.about)}` : ''}`,
	);
	return 0;
}

/** `desk asset versions ID` */
async function assetVersions({ command, rest, out, lib }: CommandContext): Promise<number> {
	// Written a page at a time: a history of tens of thousands of versions in flat memory.
	let written = 0;
	for await (const page of (await lib()).versionsInPages(oneId(rest, command), 2000)) {
		if (out.json) {
			out.write(
				`${written === 0 ? '[\n' : ',\n'}${page.map((v) => jsonForTerminal(v).replace(/^/gm, '  ')).join(',\n')}`,
			);
		} else {
			writeMessage(out, `${page.map(formatVersion).join('\n')}\n`);
		}
		written += page.length;
	}
	out.write(out.json ? (written === 0 ? '[]\n' : '\n]\n') : written === 0 ? '(no versions)\n' : '');
	return 0;
}

/** `desk asset atgo ID` */
async function assetAtGo({ command, rest, out, lib }: CommandContext): Promise<number> {
	const atGo = await (await lib()).atGo(oneId(rest, command));
	print(out, atGo, () => formatAtGo(atGo));
	return 0;
}

/** `desk asset files ID [--version N]` */
async function assetFiles({ command, rest, out, version, lib }: CommandContext): Promise<number> {
	const files = await (await lib()).files(oneId(rest, command), version);
	print(
		out,
		files,
		() =>
			files.files.map((f) => `${f.size >= 0 ? String(f.size).padStart(10) : '         -'}  ${t(f.path)}`).join('\n') ||
			'(no files)',
	);
	return 0;
}

/** `desk asset cat ID PATH [--version N]` */
async function assetCat({ command, rest, out, version, lib }: CommandContext): Promise<number> {
	expectArgs(rest, 2, command);
	const bytes = await (await lib()).cat(rest[0]!, rest[1]!, version);
	if (out.json) {
		print(out, { path: rest[1], size: bytes.length, base64: Buffer.from(bytes).toString('base64') }, () => '');
	} else {
		writeBytes(out, bytes);
	}
	return 0;
}

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
async function assetNote({ command, rest, values, out, madeBy, open, requestOf }: CommandContext): Promise<number> {
	expectArgs(rest, 0, command);
	if (values.name === undefined || values.text === undefined) {
		throw new UsageError('asset note needs --name NAME and --text TEXT');
	}
	const opened = await open();
	const { request } = requestOf('desk asset note', { name: values.name, text: values.text, project: values.project });
	const { result: asset } = await answerOnce(opened.libraryRequests, request, async () =>
		opened.library.addNote({
			name: values.name!,
			text: values.text!,
			madeBy,
			project: values.project,
			...(request ? { clientRequest: request } : {}),
		}),
	);
	print(out, asset, () => `${t(asset.id)} ${t(asset.name)}`);
	return 0;
}

/** `desk asset retire ID | asset unretire ID` */
async function assetRetire({ command, verb, rest, out, lib }: CommandContext): Promise<number> {
	const asset = (await lib()).setRetired(oneId(rest, command), verb === 'retire');
	print(out, asset, () => `${t(asset.name)}: ${asset.retired ? 'retired' : 'in the lists again'}`);
	return 0;
}

/** `desk asset checks ID --file CHECKS.json` */
async function assetChecks({ command, rest, values, out, lib }: CommandContext): Promise<number> {
	const id = oneId(rest, command);
	if (!values.file) {
		throw new UsageError('asset checks needs --file CHECKS.json');
	}
	const text = readInputText(values.file, 'the checks file', maxJsonBytes);
	let checks: unknown;
	try {
		checks = JSON.parse(text);
	} catch (error) {
		throw new DeskError('asset.badChecks', `Could not read checks from ${values.file}: ${(error as Error).message}`, {
			file: values.file,
		});
	}
	const asset = (await lib()).setChecks(id, checks);
	print(out, asset, () => `${t(asset.name)}: ${asset.checks.length} check${asset.checks.length === 1 ? '' : 's'}`);
	return 0;
}

/** `desk asset mount ID N` */
async function assetMount({ command, rest, out, lib }: CommandContext): Promise<number> {
	expectArgs(rest, 2, command);
	const mounted = (await lib()).mount(rest[0]!, positiveInteger(rest[1]!, 'N'));
	print(out, { path: mounted }, () => t(mounted));
	return 0;
}

/** `desk asset diff ID A B` */
async function assetDiff({ command, rest, out, lib }: CommandContext): Promise<number> {
	expectArgs(rest, 3, command);
	const diff = await (await lib()).diff(rest[0]!, positiveInteger(rest[1]!, 'A'), positiveInteger(rest[2]!, 'B'));
	print(out, diff, () => formatDiff(diff));
	return 0;
}

/** `desk asset sync ID` */
async function assetSync({ command, rest, out, lib }: CommandContext): Promise<number> {
	const result = await (await lib()).sync(oneId(rest, command));
	print(out, result, () =>
		result.head
			? `${t(result.asset.name)}: head ${t(result.head.slice(0, 12))}${result.recorded ? ' recorded (sync)' : ' already observed'}`
			: `${t(result.asset.name)}: no commits`,
	);
	return 0;
}

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
async function assetUsedIn({ command, rest, out, lib }: CommandContext): Promise<number> {
	const usedIn = (await lib()).usedIn(oneId(rest, command));
	print(
		out,
		usedIn,
		() =>
			usedIn
				.map((u) => `${t(u.launched_at)}  ${t(u.launch_id)}  ${t(u.project)}  ${t(u.role)} v${u.version}`)
				.join('\n') || '(not used in any launch yet)',
	);
	return 0;
}

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
	// What the folder held that the version does not (links, names that are not UTF-8, temp files…), by name.
	const skipped = (result.skipped ?? []).map((s) => `\n  not stored: ${t(s.path)} (${t(s.reason)})`).join('');
	return (
		(result.created ? `v${version}: ${files} file${files === 1 ? '' : 's'}` : `no changes: still v${version}`) + skipped
	);
}

function formatImport(result: ImportResult): string {
	const project = result.project
		? ` (project ${t(result.project.name)}${result.project.main_asset === result.asset.id ? ', main asset' : ''})`
		: '';
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
	const flags = [t(v.made_by), v.head_at ? `head ${t(v.head_at)}` : '', v.never_head ? 'never head' : '']
		.filter(Boolean)
		.join(', ');
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
