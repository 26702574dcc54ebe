import { isSafeRelativePath } from '../assets/manifest';
import type { AssetRecord, ProjectRecord } from '../assets/types';
import { DeskError } from '../core/errors';
import { plugRoles, type AssetPlug, type LaunchCard, type PlugRole, type Suggestion } from './types';

export interface PlugContext {
	asset: AssetRecord;
	project: ProjectRecord;
	/** The asset's SKILL.md front matter when it is valid; undefined otherwise. */
	skill: { name: string; description: string } | undefined;
	/**
	 * For a git asset plugged as target: its checkout and the one a run of the project writes (the
	 * project's own), as git finds them. Undefined otherwise.
	 */
	checkouts?: { target: CheckoutPlace; project: CheckoutPlace } | undefined;
}

/** A checkout as git finds it: its work tree's top and its git folders, as real paths (links followed, `.git` files and `commondir` read). */
export interface CheckoutPlace {
	top: string;
	/** The work tree's own git folder (HEAD, index). */
	gitDir: string;
	/** The folder its repository's work trees share (objects, refs). */
	commonDir: string;
}

/**
 * The rules of plugging (glossary: Plug), each refusal naming its rule:
 * - a role is reference, target or instructions;
 * - a retired asset is plugged in no role;
 * - a card has at most one target, a snapshot or git asset, and a git target is the checkout a run
 *   of the project writes (checkGitTarget);
 * - files and copy apply to a reference only;
 * - instructions need kind skill and a valid SKILL.md;
 * - nodes name nodes of the card's template (empty: its reading nodes).
 */
export function checkPlug(card: LaunchCard, plug: AssetPlug, context: PlugContext): void {
	const { asset, project } = context;
	if (!plugRoles.includes(plug.role as PlugRole)) {
		throw new DeskError(
			'launch.badRole',
			`A plug's role is reference, target or instructions; not ${JSON.stringify(plug.role)}.`,
			{ role: plug.role },
		);
	}
	if (asset.retired) {
		throw new DeskError('launch.retired', `${asset.name} is retired; it is plugged into no card.`, { id: plug.id });
	}
	if (card.plugs.some((p) => p.id === plug.id)) {
		throw new DeskError('launch.alreadyPlugged', `${asset.name} is plugged into this card already.`, { id: plug.id });
	}
	if (plug.role === 'target') {
		const other = card.plugs.find((p) => p.role === 'target');
		if (other) {
			throw new DeskError('launch.secondTarget', `A card has at most one target, and ${other.id} is it already.`, {
				target: other.id,
			});
		}
		if (asset.engine !== 'snapshot' && asset.engine !== 'git') {
			throw new DeskError(
				'launch.badTarget',
				`A target is a snapshot or git asset; ${asset.name} is a ${asset.kind || asset.engine} asset with no files to write.`,
				{ id: asset.id },
			);
		}
		if (asset.engine === 'git') {
			checkGitTarget(asset, project, context.checkouts);
		}
	}
	if (plug.role !== 'reference' && (plug.files.length > 0 || Object.keys(plug.copy).length > 0)) {
		throw new DeskError(
			'launch.referenceOnly',
			`files and copy apply to a reference only, not to ${plug.role === 'target' ? 'a target' : 'instructions'}.`,
			{ role: plug.role },
		);
	}
	if (plug.role === 'instructions' && (asset.kind !== 'skill' || !context.skill)) {
		throw new DeskError(
			'launch.notSkill',
			asset.kind !== 'skill'
				? `Instructions are a skill; ${asset.name} is of kind ${asset.kind || 'none'}.`
				: `${asset.name} has no valid SKILL.md (front matter with name and description).`,
			{ id: asset.id },
		);
	}
	const unknownNode = plug.nodes.find((n) => !card.template.nodes.includes(n));
	if (unknownNode !== undefined) {
		throw new DeskError(
			'launch.badNode',
			`The template ${card.template.name} has no node ${JSON.stringify(unknownNode)}; it has ${card.template.nodes.join(', ')}.`,
			{ node: unknownNode },
		);
	}
	for (const [from, to] of Object.entries(plug.copy)) {
		if (!isSafeRelativePath(from) || !isSafeRelativePath(to)) {
			throw new DeskError(
				'launch.badCopy',
				`copy maps a path inside the asset to a path inside the repository; ${JSON.stringify(from)} → ${JSON.stringify(to)} is not.`,
				{ from, to },
			);
		}
	}
	for (const pattern of plug.files) {
		if (pattern.startsWith('/') || pattern.split('/').includes('..') || pattern === '') {
			throw new DeskError(
				'launch.badCopy',
				`files are paths or globs inside the asset; ${JSON.stringify(pattern)} is not.`,
				{ pattern },
			);
		}
	}
}

/**
 * A git target must be the checkout a run of the project writes: the project's own (its shared
 * checkout, or the repository its worktrees are made from), whichever asset is the project's main
 * one. The two are compared by their git folders as git finds them, never by how their paths are
 * spelled: a path through a link is the same checkout; another repository, or another work tree of
 * the same one (its HEAD and index are not the ones a run writes), is refused with
 * `launch.foreignRepo` naming both.
 */
export function checkGitTarget(asset: AssetRecord, project: ProjectRecord, checkouts: PlugContext['checkouts']): void {
	if (checkouts && checkouts.target.gitDir === checkouts.project.gitDir) {
		return;
	}
	const what = !checkouts
		? 'a checkout the desk could not compare with it'
		: checkouts.target.commonDir === checkouts.project.commonDir
			? `another work tree of that repository (${checkouts.target.top}, git folder ${checkouts.target.gitDir})`
			: `another repository (${checkouts.target.top}, git folder ${checkouts.target.gitDir})`;
	throw new DeskError(
		'launch.foreignRepo',
		`A git target must be the checkout a run of ${project.name} writes, ${checkouts?.project.top ?? project.path} (git folder ${checkouts?.project.gitDir ?? 'unknown'}); ${asset.name} is ${what}.`,
		{
			id: asset.id,
			project: project.name,
			checkout: checkouts?.project.top ?? project.path,
			...(checkouts
				? {
						checkout_git_dir: checkouts.project.gitDir,
						target: checkouts.target.top,
						target_git_dir: checkouts.target.gitDir,
					}
				: {}),
		},
	);
}

/** A plug as a card holds it, with its defaults filled. */
export function newPlug(
	id: string,
	role: PlugRole,
	options: Partial<Pick<AssetPlug, 'nodes' | 'files' | 'copy'>> = {},
): AssetPlug {
	return { id, role, nodes: options.nodes ?? [], files: options.files ?? [], copy: options.copy ?? {} };
}

/** Plugs `plug` into a copy of `card`, after the rules. */
export function plugInto(card: LaunchCard, plug: AssetPlug, context: PlugContext): LaunchCard {
	checkPlug(card, plug, context);
	return { ...card, plugs: [...card.plugs, plug] };
}

/** launchKeep: a new card that plugs the kept suggestion as a reference, or as instructions for a skill. */
export function launchKeep(card: LaunchCard, suggestion: Suggestion, context: PlugContext): LaunchCard {
	return plugInto(card, newPlug(suggestion.asset_id, suggestion.role), context);
}

/** The nodes a plug reaches: its own, or the template's reading nodes (glossary: Plug). */
export function plugNodes(card: LaunchCard, plug: AssetPlug): string[] {
	return plug.nodes.length > 0 ? plug.nodes : card.template.nodes;
}
