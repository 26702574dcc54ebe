import * as vscode from 'vscode';
import { visibleText } from './markdownText';
import type { DeskClient } from './deskClient';
import type { WindowProject } from './windowProjects';

/** The node of a project of the window, shown only when the window has several. */
export interface ProjectNode {
	type: 'project';
	project: WindowProject;
}

function isProjectNode(node: { type: string }): node is ProjectNode {
	return node.type === 'project';
}

/** The project a node names by its name, when it does; '' (one key for all) when it does not. */
function projectNameOf(node: object): string {
	const project = (node as { project?: unknown }).project;
	return typeof project === 'string' ? project : '';
}

/**
 * What the desk's trees share: one project per window folder (the tree shows the project's own
 * nodes at its top when the window has one, else a node per project), nothing while the desk is not
 * ready or the workspace is not trusted, a failure reported once per project and message, and refresh.
 */
export abstract class ProjectTreeProvider<T extends { type: string }>
	implements vscode.TreeDataProvider<T>, vscode.Disposable
{
	private readonly changeEmitter = new vscode.EventEmitter<T | undefined>();
	readonly onDidChangeTreeData = this.changeEmitter.event;
	protected projects: WindowProject[] = [];
	/** Per project and read (its list, or a kind of node under it), the message of the failure last reported, until that read succeeds. */
	private readonly reported = new Map<string, string>();
	/** The command each row shown runs (see openRowsBySelection), and the command its click runs instead. */
	private readonly rowCommands = new WeakMap<T, vscode.Command>();
	private rowCommandId: string | undefined;

	constructor(
		protected readonly desk: DeskClient,
		protected readonly onError: (error: unknown) => void,
	) {}

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

	/** Reads one node's children again; `node` must be the object the tree was given. */
	protected refreshNode(node: T): void {
		this.changeEmitter.fire(node);
	}

	async getChildren(node?: T): Promise<T[]> {
		if (this.desk.state !== 'ready' || !vscode.workspace.isTrusted) {
			return [];
		}
		// What a failure is reported under: the project, and whether its own list or a node under it was read.
		const project = !node
			? this.projects.length === 1
				? this.projects[0]!.name
				: undefined
			: isProjectNode(node)
				? node.project.name
				: projectNameOf(node);
		const key =
			project === undefined ? undefined : `${project}\n${!node || isProjectNode(node) ? 'project' : node.type}`;
		try {
			let children: T[];
			if (!node) {
				children =
					this.projects.length === 1
						? await this.projectChildren(this.projects[0]!)
						: this.projects.map((p) => this.projectNode(p));
			} else if (isProjectNode(node)) {
				children = await this.projectChildren(node.project);
			} else {
				children = await this.childrenOf(node);
			}
			if (key !== undefined) {
				// Read: a failure after this is news again.
				this.reported.delete(key);
			}
			return children;
		} catch (error) {
			this.report(key ?? '', error);
			return this.failed();
		}
	}

	/** A failure, reported unless the same message was already reported for that read of the project (every refresh would repeat it). */
	private report(key: string, error: unknown): void {
		const message = error instanceof Error ? error.message : String(error);
		if (this.reported.get(key) === message) {
			return;
		}
		this.reported.set(key, message);
		this.onError(error);
	}

	/** The row for a node; shown through {@link inertTreeItem}. */
	protected abstract makeTreeItem(node: T): vscode.TreeItem;

	getTreeItem(node: T): vscode.TreeItem {
		const item = inertTreeItem(this.makeTreeItem(node));
		const command = item.command;
		if (command?.arguments?.length && this.rowCommandId) {
			this.rowCommands.set(node, command);
			item.command = { command: this.rowCommandId, title: command.title };
		}
		return item;
	}

	/**
	 * Clicks on `view`'s rows run their commands from the view's selection, through `commandId`.
	 *
	 * VS Code keeps a row's command that has arguments in a cache of the extension host, which every
	 * refresh of the view empties: a click on a row drawn before the refresh reached the window then
	 * fails with "Actual command not found" (seen on the Runs view, which refreshes while a run works).
	 * The row's command here takes no argument, so nothing is cached; VS Code tells the extension
	 * host the selection before it runs a row's command, and a row's id finds its node across a
	 * refresh. A row clicked while its node is being read again does nothing.
	 */
	openRowsBySelection(view: vscode.TreeView<T>, commandId: string): vscode.Disposable {
		this.rowCommandId = commandId;
		return vscode.commands.registerCommand(commandId, async () => {
			const node = view.selection.length === 1 ? view.selection[0] : undefined;
			const command = node && this.commandOfRow(node);
			if (command) {
				await vscode.commands.executeCommand(command.command, ...(command.arguments ?? []));
			}
		});
	}

	/**
	 * The command a click on the row of `node` runs in the end (its row shows the selection's command).
	 * The row is made only for a node not shown yet: one a refresh made that the window has not drawn.
	 */
	commandOfRow(node: T): vscode.Command | undefined {
		const shown = this.rowCommands.get(node);
		if (shown) {
			return shown;
		}
		const item = this.getTreeItem(node);
		return this.rowCommands.get(node) ?? item.command;
	}

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

/**
 * Every row of the desk's trees shows names from repositories, folders and agents: its label,
 * description, plain tooltip and accessible label have their control, bidi and invisible characters
 * made visible (a right-to-left override would make `exe.txt` read as `txt.exe`), and a Markdown
 * tooltip is never trusted, so no `command:` link in it can run. (Markdown tooltips escape what they
 * quote with markdownText.)
 */
export function inertTreeItem(item: vscode.TreeItem): vscode.TreeItem {
	if (typeof item.label === 'string') {
		item.label = visibleText(item.label);
	} else if (item.label) {
		const shown = visibleText(item.label.label);
		item.label = shown === item.label.label ? item.label : { label: shown };
	}
	if (typeof item.description === 'string') {
		item.description = visibleText(item.description);
	}
	if (typeof item.tooltip === 'string') {
		item.tooltip = visibleText(item.tooltip);
	} else if (item.tooltip instanceof vscode.MarkdownString) {
		item.tooltip.isTrusted = false;
		item.tooltip.supportHtml = false;
		// markdownText escapes `$(` for a renderer that draws icons: every tooltip draws them.
		item.tooltip.supportThemeIcons = true;
	}
	if (item.accessibilityInformation) {
		item.accessibilityInformation = {
			...item.accessibilityInformation,
			label: visibleText(item.accessibilityInformation.label),
		};
	}
	return item;
}
