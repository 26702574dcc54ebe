import type {
	AssetSummary,
	AssetVersion,
	AtGo,
	ImportResultJson,
	RetireProposal,
	VersionFile,
} from '../../../server/src/protocol/protocol';
import { humanBytes } from '../../../server/src/attachments/names';
import { markdownLines, markdownText as escapeMarkdown } from '../common/markdownText';

/*
 * What the Assets view says of an asset and a version: its group, what Go would read, and its
 * tooltips as Markdown, every name, note and path from a repository or folder escaped. No VS Code
 * import: tested in plain Node.
 */

/** The Assets view's groups under a project, after its main asset. */
export type AssetGroup = 'folders' | 'repos' | 'links' | 'skills';

/** The group an asset is listed in. */
export function groupOf(asset: AssetSummary): AssetGroup {
	if (asset.kind === 'skill') {
		return 'skills';
	}
	if (asset.engine === 'git') {
		return 'repos';
	}
	return asset.engine === 'none' ? 'links' : 'folders';
}

/** What Go would read of the asset, in words; undefined while not known. */
export function atGoText(atGo: AtGo | { error: string } | undefined): string | undefined {
	if (!atGo) {
		return undefined;
	}
	if ('error' in atGo) {
		return `AtGo: ${atGo.error}`;
	}
	if (atGo.engine === 'snapshot' && atGo.working_changes) {
		return `working changes: go would read them as v${atGo.version}`;
	}
	return `go would read v${atGo.version}`;
}

/** What a folder held that its version does not store, the first three by name (the log has them all). */
export function notStoredText(skipped: ReadonlyArray<{ path: string; reason: string }>): string {
	const named = skipped
		.slice(0, 3)
		.map((s) => `${s.path} (${s.reason})`)
		.join('; ');
	return `not stored: ${named}${skipped.length > 3 ? ` and ${skipped.length - 3} more (see the log)` : ''}`;
}

/**
 * What Add Folder says of a folder it imported: what was added and, as a snapshot says it, what the
 * folder held that its first version does not store (links, FIFOs, sockets…); `notStored` when
 * something was left out, which the person is told of rather than shown in passing.
 */
export function addedFolderText(result: ImportResultJson): { text: string; notStored: boolean } {
	const { asset } = result;
	return withNotStored(
		`Agent Desk: ${result.created ? 'added' : 'already in the library:'} ${asset.name} (${asset.engine})`,
		result.skipped,
	);
}

/** What Add Skill says of a folder it imported, and what its first version does not store, as addedFolderText. */
export function addedSkillText(result: ImportResultJson): { text: string; notStored: boolean } {
	const { asset } = result;
	return withNotStored(
		asset.kind === 'skill'
			? `Agent Desk: ${result.created ? 'added skill' : 'already in the library: skill'} ${asset.name}`
			: `Agent Desk: ${asset.name} was in the library already as a folder; its kind was set when it was added`,
		result.skipped,
	);
}

function withNotStored(
	said: string,
	skipped: ReadonlyArray<{ path: string; reason: string }> = [],
): { text: string; notStored: boolean } {
	return skipped.length > 0
		? { text: `${said} (${notStoredText(skipped)}).`, notStored: true }
		: { text: `${said}.`, notStored: false };
}

/** Said of an about a model wrote (glossary: Tags and about): the person may want to read it again. */
export const aboutByModel = 'about written by a model';

/**
 * The tooltip of an asset's row, as Markdown (theme icons on: `$(warning)` before a problem): `main`
 * when it is the main asset of `project`, `atGo` what Go would read of it, `proposal` an open proposal
 * to retire it (first: it waits for the person's answer).
 */
export function assetTooltip(
	asset: AssetSummary,
	main: boolean,
	project: string,
	atGo: AtGo | { error: string } | undefined,
	proposal?: RetireProposal,
): string {
	let text = `**${escapeMarkdown(asset.name)}**${main ? ` — main asset of ${escapeMarkdown(project)}` : ''}${asset.retired ? ' (retired)' : ''}\n\n`;
	if (proposal) {
		text += `${proposalText(proposal)}\n\n`;
	}
	if (asset.about) {
		text += `${escapeMarkdown(asset.about)}${asset.about_model_written ? ` *(${aboutByModel})*` : ''}\n\n`;
	}
	text += `| | |\n|---|---|\n`;
	text += `| Id | \`${asset.id}\` |\n| Kind | ${escapeMarkdown(asset.kind || '—')} |\n| Engine | ${asset.engine} |\n`;
	if (asset.engine === 'git') {
		text += `| Branch | ${escapeMarkdown(asset.branch || '(detached HEAD)')} |\n| Remote | ${escapeMarkdown(asset.remote || '—')} |\n`;
	}
	if (asset.engine === 'snapshot') {
		text += `| Picked version | v${asset.picked_version} |\n`;
	}
	const goText = atGoText(atGo);
	if (goText) {
		text += `| At go | ${escapeMarkdown(goText)} |\n`;
	}
	if (asset.engine !== 'none') {
		text += `| Versions | ${asset.version_count} |\n| Files | ${asset.file_count} |\n| Folder | ${escapeMarkdown(asset.working_dir)} |\n`;
	} else if (asset.url) {
		text += `| URL | ${escapeMarkdown(asset.url)} |\n`;
	}
	text += `| Tags | ${asset.tags.length > 0 ? asset.tags.map(escapeMarkdown).join(', ') : '—'} |\n`;
	text += `| Added | ${escapeMarkdown(asset.created_at)} by ${escapeMarkdown(asset.created_by)} |\n`;
	if (asset.notes) {
		text += `\n---\n\n${markdownLines(asset.notes.slice(0, 1000))}`;
	}
	if (asset.problem) {
		text += `\n$(warning) ${escapeMarkdown(asset.problem)}`;
	}
	return text;
}

/**
 * An open proposal to retire an asset, as Markdown (theme icons on): who proposed it and when, and
 * their reason as they wrote it (an agent's words: escaped, a few lines at most), then what to do.
 */
export function proposalText(proposal: RetireProposal): string {
	const when = proposal.created_at.slice(0, 16).replace('T', ' ');
	return `$(lightbulb) **Retirement proposed** by ${escapeMarkdown(proposal.proposed_by)} on ${escapeMarkdown(when)}:\n\n${markdownLines(proposal.reason.slice(0, 2000), 8)}\n\n*Accept Retirement* retires it; *Decline* keeps it.`;
}

/** The tooltip of a version's row, as Markdown. */
export function versionTooltip(asset: AssetSummary, version: AssetVersion): string {
	const title = version.engine === 'git' ? version.subject : version.note;
	let text = `**v${version.version}** of ${escapeMarkdown(asset.name)}\n\n${title ? `${escapeMarkdown(title)}\n\n` : ''}`;
	if (version.engine === 'git') {
		text += `Commit \`${version.commit}\`  \nMade ${version.made_at} (${version.made_by})`;
		if (version.head_at) {
			text += `  \nFirst seen as the checkout's head ${version.head_at}`;
		}
		if (version.never_head) {
			text += `  \nNever observed as the checkout's head`;
		}
	} else {
		text += `${version.file_count} files, ${humanBytes(version.bytes)}  \nMade ${version.made_at} (${version.made_by})  \nManifest \`${version.manifest.slice(0, 16)}…\``;
	}
	return text;
}

/**
 * What a file's row in a version says of it, by its kind: the theme icon, the description (a size,
 * a link's target, a submodule's commit) and the plain tooltip. Names and targets come from a
 * repository: the tree row makes them inert (`inertTreeItem`).
 */
export function versionFileRow(
	file: VersionFile,
	version: number,
): { icon: string; description?: string; tooltip: string } {
	const at = `${file.path} at v${version}`;
	switch (file.kind) {
		case 'symlink':
			return {
				icon: 'file-symlink-file',
				description: `→ ${file.target ?? ''}`,
				tooltip: `${at}: a symbolic link to ${file.target ?? '(target not read)'} (its target is its content; never followed)`,
			};
		case 'submodule':
			return {
				icon: 'file-submodule',
				description: `submodule @ ${file.hash.slice(0, 7)}`,
				tooltip: `${at}: a submodule at commit ${file.hash} (another repository; its files are not part of this version)`,
			};
		default:
			return {
				icon: 'file',
				...(file.size >= 0 ? { description: humanBytes(file.size) } : {}),
				tooltip: `${at}${file.kind === 'executable' ? ' (executable)' : ''}`,
			};
	}
}
