import * as vscode from 'vscode';
import { pickText } from './markdownText';

/** A project of this window, as the trees group by it when the window has several. */
export interface WindowProject {
	name: string;
	path: string;
}

/**
 * The project a command acts on: the one a tree node names, else the window's only project, else
 * the one the person picks. Undefined when the window has none or the pick is dismissed.
 */
export async function chooseProject(
	projects: readonly WindowProject[],
	node: unknown,
	title = 'Which project?',
): Promise<WindowProject | undefined> {
	const named = node && typeof node === 'object' ? (node as { project?: unknown }).project : undefined;
	if (typeof named === 'string') {
		return projects.find((p) => p.name === named);
	}
	if (named && typeof named === 'object') {
		// A project node: only its name is taken, and only a project of this window answers to it.
		const name = (named as { name?: unknown }).name;
		return typeof name === 'string' ? projects.find((p) => p.name === name) : undefined;
	}
	if (projects.length <= 1) {
		return projects[0];
	}
	const picked = await vscode.window.showQuickPick(
		projects.map((p) => ({ label: pickText(p.name), description: pickText(p.path), project: p })),
		{ title },
	);
	return picked?.project;
}
