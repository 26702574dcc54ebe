/**
 * Which project a command acts on: a project of the library by name (--project), or the repository
 * at --repo PATH or around the current folder.
 */
import { projectTop, recordedTop, repoTop } from '../operations/runs';
import type { CommandContext } from './context';

export { recordedTop, repoTop };

/** The repository top of the project named `name`. */
export const projectPath = projectTop;

/**
 * The name of the project a command acts on: `named` (a positional), else --project, else the
 * project of the library whose repository holds --repo PATH or the current folder.
 */
export async function projectOfCommand(context: CommandContext, named?: string): Promise<string> {
	const name = named ?? context.values.project;
	if (name !== undefined) {
		return name;
	}
	const top = await repoTop(context.values.repo ?? process.cwd());
	return (await context.open()).projectAt(top).name;
}

/** Where a command on a project's records acts: --project NAME, else the repository at --repo PATH or around the current folder. */
export async function placeOfCommand(context: CommandContext): Promise<{ project: string } | { repo: string }> {
	return context.values.project !== undefined
		? { project: context.values.project }
		: { repo: await repoTop(context.values.repo ?? process.cwd()) };
}
