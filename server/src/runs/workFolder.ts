import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Run } from '../ai/types';
import { isText } from '../attachments/names';
import type { AssetRecord } from '../assets/types';
import type { LaunchRecord } from '../launch/types';
import { removeTreeInFolder, writeInFolder } from '../store/folderFiles';
import type { RunPlacement } from './placement';
import type { RunnerPorts } from './ports';
import { globMatches, type PromptReference, type PromptSkill } from './prompt';
import { sandboxStatus } from './sandbox';
import { SafeGit } from './safeGit';
import type { AgentSettings, RunSettings } from './settings';
import { prepareTargetFolder, type TargetMarker } from './targetFolder';

/** The folder of project memory files in a checkout (lineage/memory.ts's memoryFolderName; runs/ imports no lineage value). */
export const memoryFolder = '.desk-memory';

/**
 * The work folder of a run, before and after the agent: where it works (the shared checkout, a
 * worktree, a snapshot target's folder), the plugs' copied files, the references as read-only
 * folders, and the instructions installed as skills (and removed after).
 */

/** A reference plug as the run shows it: its read-only folder and inlined files, for the nodes it reaches. */
export interface RunReference {
	plugNodes: string[];
	prompt: PromptReference;
	asset: AssetRecord;
	blob: string;
}

/** An instructions plug: installed as a skill, or its body for the prompt. */
export interface RunSkill {
	plugNodes: string[];
	prompt: PromptSkill;
	/** False for an agent whose `skills` is `none`: its prompts leave the skill out, and the run records it was not given. */
	given: boolean;
}

/**
 * Prepares where the run's agent works: a snapshot target's own folder, a worktree on a branch of
 * the run's, or the shared checkout (its tree at the start recorded); then the plugs' `copy` files.
 */
export async function placeRun(
	ports: RunnerPorts,
	run: Run,
	record: LaunchRecord,
	settings: RunSettings,
	agent: AgentSettings,
): Promise<RunPlacement> {
	const runFolder = path.join(ports.libraryDir, 'runs', run.object_id);
	fs.mkdirSync(runFolder, { recursive: true });
	const sandbox =
		settings.sandbox === 'off'
			? { available: false, reason: 'the sandbox is turned off in the settings' }
			: sandboxStatus();
	const isolationNote = sandbox.available
		? `isolated (${sandbox.version ?? 'bubblewrap'})`
		: `not isolated: ${sandbox.reason}`;
	const base = {
		run_folder: runFolder,
		installed: [],
		reference_folders: [],
		agent: agent.name,
		settings,
		isolated: sandbox.available,
		isolation_note: isolationNote,
	};
	const targetPlug = record.plugs.find((p) => p.role === 'target');
	const targetAsset = targetPlug ? ports.library.getAsset(targetPlug.id) : undefined;
	let placement: RunPlacement;
	if (targetAsset && targetPlug && targetAsset.engine === 'snapshot') {
		const folder = path.join(runFolder, 'target');
		const { files } = await ports.library.files(targetAsset.id, targetPlug.version);
		const marker: TargetMarker = {
			format: 1,
			asset_id: targetAsset.id,
			asset_name: targetAsset.name,
			version: targetPlug.version,
			files: files.map((f) => ({ path: f.path, hash: f.hash, size: f.size, executable: f.executable })),
		};
		prepareTargetFolder(folder, marker, (hash) => ports.blobs.get(hash), path.join(runFolder, 'target.json'));
		placement = {
			...base,
			target: 'snapshot',
			isolation: 'folder',
			work_folder: folder,
			target_asset: targetAsset.id,
			target_version: targetPlug.version,
		};
	} else {
		const top = ports.project.path;
		const git = await SafeGit.open(top, await ports.library.gitLocation(top));
		if (settings.isolation === 'worktree') {
			const folder = path.join(runFolder, 'worktree');
			const branch = `desk/run-${run.object_id}`;
			await git.addWorktree(folder, branch, run.commit);
			placement = {
				...base,
				target: 'git',
				isolation: 'worktree',
				work_folder: folder,
				branch,
				start_tree: await git.text(['rev-parse', `${run.commit}^{tree}`]),
			};
		} else {
			// The shared checkout may hold changes of the person's already: the run's change is
			// what differs from the checkout as it was at the start.
			const branchRef = await git.currentBranch();
			placement = {
				...base,
				target: 'git',
				isolation: 'shared',
				work_folder: top,
				...(branchRef ? { branch: branchRef.replace(/^refs\/heads\//, '') } : {}),
				// Memory the desk wrote and nobody committed yet is not the run's: left out before and after.
				start_tree: await git.treeOfFolder(top, run.commit, [memoryFolder]),
			};
		}
	}
	// copy plugs: reference files copied byte for byte into the work folder at go (glossary: Plug).
	for (const plug of record.plugs) {
		for (const [from, to] of Object.entries(plug.copy)) {
			const bytes = await ports.library.cat(plug.id, from, plug.version);
			writeInside(placement.work_folder, to, bytes);
		}
	}
	return placement;
}

/** Each reference's files where the agent can read them (read-only), and its `files` inlined. */
export async function mountReferences(
	ports: RunnerPorts,
	record: LaunchRecord,
	placement: RunPlacement,
): Promise<RunReference[]> {
	const result = [];
	for (const plug of record.plugs.filter((p) => p.role === 'reference')) {
		const asset = ports.library.getAsset(plug.id);
		let mountPath: string;
		if (asset.engine === 'snapshot') {
			mountPath = ports.library.mount(asset.id, plug.version);
		} else if (asset.engine === 'git') {
			mountPath = path.join(
				placement.run_folder,
				'references',
				`${safeName(asset.name)}-${safeName(asset.id)}-v${plug.version}`,
			);
			if (!fs.existsSync(mountPath)) {
				const { files } = await ports.library.files(asset.id, plug.version);
				for (const file of files) {
					if (file.kind === 'submodule') {
						// Another repository's commit: an empty folder, as git checks out a submodule not cloned.
						fs.mkdirSync(path.join(mountPath, ...file.path.split('/')), { recursive: true });
					} else {
						// A link is written as a file holding its target (git's core.symlinks=false): nothing is followed.
						writeInside(mountPath, file.path, await ports.library.cat(asset.id, file.path, plug.version));
					}
				}
				fs.mkdirSync(mountPath, { recursive: true });
				makeReadOnly(mountPath);
			}
		} else {
			// A link or notes asset: its text is the reference.
			mountPath = path.join(
				placement.run_folder,
				'references',
				`${safeName(asset.name)}-${safeName(asset.id)}-v${plug.version}`,
			);
			writeInside(
				mountPath,
				asset.kind === 'notes' ? 'NOTES.md' : 'LINK.txt',
				Buffer.from(asset.kind === 'notes' ? asset.notes : `${asset.url}\n${asset.about}\n`, 'utf8'),
			);
			makeReadOnly(mountPath);
		}
		placement.reference_folders.push(mountPath);
		const inlined: PromptReference['inlined'] = [];
		const notInlined: PromptReference['notInlined'] = [];
		if (plug.files.length > 0) {
			const { files } = await ports.library.files(asset.id, plug.version);
			for (const pattern of plug.files) {
				const matched = files.filter((f) => globMatches(pattern, f.path));
				if (matched.length === 0) {
					notInlined.push({ path: pattern, reason: 'matches no file of this version' });
				}
				for (const file of matched) {
					const bytes = Buffer.from(await ports.library.cat(asset.id, file.path, plug.version));
					if (!isText(bytes)) {
						notInlined.push({ path: file.path, reason: `not text (${bytes.length} bytes); read it from the folder` });
					} else {
						inlined.push({ path: file.path, text: bytes.toString('utf8') });
					}
				}
			}
		}
		// The item's content id: the version's manifest (snapshot) or commit (git); the text itself otherwise.
		const version =
			asset.engine === 'none'
				? undefined
				: (await ports.library.assetVersions(asset.id)).find((v) => v.version === plug.version);
		const blob = version
			? version.engine === 'git'
				? version.commit
				: version.manifest
			: gitBlobId(Buffer.from(asset.kind === 'notes' ? asset.notes : asset.url, 'utf8'));
		result.push({
			plugNodes: plug.nodes,
			prompt: { name: asset.name, version: plug.version, mountPath, inlined, notInlined },
			asset,
			blob,
		});
	}
	return result;
}

/**
 * Instructions plugs, as the agent's `skills` setting says (instructions.ts): installed as Claude Code
 * skills in the work folder, inlined in its prompts, or not given at all.
 */
export async function installSkills(
	ports: RunnerPorts,
	record: LaunchRecord,
	placement: RunPlacement,
	agent: AgentSettings,
): Promise<RunSkill[]> {
	const result = [];
	for (const plug of record.plugs.filter((p) => p.role === 'instructions')) {
		const asset = ports.library.getAsset(plug.id);
		const { files } = await ports.library.files(asset.id, plug.version);
		const skillFile = files.find((f) => f.path === 'SKILL.md');
		const body = skillFile
			? Buffer.from(await ports.library.cat(asset.id, 'SKILL.md', plug.version)).toString('utf8')
			: '';
		const front = /^---\n([\s\S]*?)\n---/.exec(body)?.[1] ?? '';
		const name = /^name:\s*(.+)$/m.exec(front)?.[1]?.trim() ?? asset.name;
		const description = /^description:\s*(.+)$/m.exec(front)?.[1]?.trim() ?? asset.about;
		const folderName = safeName(name);
		const installAt = `.claude/skills/${folderName}`;
		if (agent.skills === 'claude' && !fs.existsSync(path.join(placement.work_folder, ...installAt.split('/')))) {
			for (const file of files) {
				writeInside(
					placement.work_folder,
					`${installAt}/${file.path}`,
					await ports.library.cat(asset.id, file.path, plug.version),
				);
			}
			placement.installed.push(installAt);
			result.push({ plugNodes: plug.nodes, prompt: { name, description, installedAt: installAt }, given: true });
		} else if (agent.skills === 'none') {
			result.push({ plugNodes: plug.nodes, prompt: { name, description }, given: false });
		} else {
			result.push({
				plugNodes: plug.nodes,
				prompt: { name, description, body: body.replace(/^---\n[\s\S]*?\n---\n?/, '') },
				given: true,
			});
		}
	}
	return result;
}

/** The skills the desk installed go from the work folder (after the run, or when it stops). */
export function removeInstalled(ports: RunnerPorts, placement: RunPlacement): void {
	for (const rel of placement.installed) {
		// Through folder descriptors only: an agent may have made .claude a link to somewhere else,
		// even while this runs. The .claude/skills folders the desk made go too when empty now.
		if (!removeTreeInFolder(placement.work_folder, rel, rel.split('/').length - 1)) {
			ports.logger.warn(`the installed skill ${rel} was not removed: it is no longer the folder the desk made`);
		}
	}
}

/** A file written inside `folder` (made when missing) through checked folders, never through a link. */
function writeInside(folder: string, rel: string, bytes: Uint8Array): void {
	fs.mkdirSync(folder, { recursive: true });
	writeInFolder(folder, rel, bytes, { replaceLink: true });
}

function makeReadOnly(folder: string): void {
	for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
		const full = path.join(folder, entry.name);
		if (entry.isDirectory()) {
			makeReadOnly(full);
			fs.chmodSync(full, 0o555);
		} else if (entry.isFile()) {
			fs.chmodSync(full, 0o444);
		}
	}
	fs.chmodSync(folder, 0o555);
}

function safeName(name: string): string {
	return (
		name
			.replace(/[^A-Za-z0-9._-]+/g, '-')
			.replace(/^[.-]+/, '')
			.slice(0, 64) || 'asset'
	);
}

export function gitBlobId(bytes: Buffer): string {
	return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}
