/**
 * Which project a command acts on: a project of the library by name (--project), or the repository
 * at --repo PATH or around the current folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DeskError } from '../core/errors';
import { projectDataFolder, type Desk } from '../desk';
import { RepositoryReader } from '../git/repositoryReader';

export function projectPath(desk: Desk, name: string): string {
	const project = desk.library.listProjects().find((p) => p.name === name);
	if (!project || project.path === '') {
		throw new DeskError('project.notFound', `No project named ${JSON.stringify(name)} with a repository.`, {
			project: name,
		});
	}
	return project.path;
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

export async function repoTop(dir: string): Promise<string> {
	const top = await new RepositoryReader().findTop(path.resolve(dir));
	if (!top) {
		throw new DeskError('import.notRepoTop', `${dir} is in no git repository; pass --repo PATH.`, { dir });
	}
	return top;
}
