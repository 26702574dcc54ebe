import * as vscode from 'vscode';
import type { DeskClient } from '../deskClient';

/** A project of this window, as the trees group by it when the window has several. */
export interface WindowProject {
	name: string;
	path: string;
}

/** The node of a project of the window, shown only when the window has several. */
export interface ProjectNode {
	type: 'project';
	project: WindowProject;
}

function isProjectNode(node: { type: string }): node is ProjectNode {
	return node.type === 'project';
}

/**
 * What the desk's trees share: one project per window folder (the tree shows the project's own
 * nodes at its top when the window has one, else a node per project), nothing while the desk is not
 * ready or the workspace is not trusted, a failure reported once, and refresh.
 */
export abstract class ProjectTreeProvider<T extends { type: string }> implements vscode.TreeDataProvider<T>, vscode.Disposable {
	private readonly changeEmitter = new vscode.EventEmitter<T | undefined>();
	readonly onDidChangeTreeData = this.changeEmitter.event;
	protected projects: WindowProject[] = [];

	constructor(protected readonly desk: DeskClient, protected readonly onError: (error: unknown) => void) {}

	get windowProjects(): readonly WindowProject[] {
		return this.projects;
	}

	setProjects(projects: WindowProject[]): void {
		this.projects = projects;
		this.refresh();
	}

	refresh(): void {
		this.changeEmitter.fire(undefined);
	}

	async getChildren(node?: T): Promise<T[]> {
		if (this.desk.state !== 'ready' || !vscode.workspace.isTrusted) {
			return [];
		}
		try {
			if (!node) {
				return this.projects.length === 1 ? await this.projectChildren(this.projects[0]!) : this.projects.map((project) => this.projectNode(project));
			}
			if (isProjectNode(node)) {
				return await this.projectChildren(node.project);
			}
			return await this.childrenOf(node);
		} catch (error) {
			this.onError(error);
			return this.failed();
		}
	}

	abstract getTreeItem(node: T): vscode.TreeItem;

	dispose(): void {
		this.changeEmitter.dispose();
	}

	/** The node of a project (`{ type: 'project', project }`). */
	protected abstract projectNode(project: WindowProject): T;

	/** What a project's node holds (the whole tree when the window has one project). */
	protected abstract projectChildren(project: WindowProject): Promise<T[]>;

	/** The children of any other node. */
	protected abstract childrenOf(node: T): Promise<T[]> | T[];

	/** What the tree shows after a failure that was reported. */
	protected failed(): T[] {
		return [];
	}
}
