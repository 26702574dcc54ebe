import type { RunSettings } from './settings';

/** How a run is carried out, kept in run_control beside the Run. */
export interface RunPlacement {
	target: 'git' | 'snapshot';
	isolation: 'shared' | 'worktree' | 'folder';
	/** The folder the agent works in. */
	work_folder: string;
	/** The run's own folder in the library (worktree, target, materialised references). */
	run_folder: string;
	branch?: string;
	/** git: the tree the run started from (the shared checkout with its changes then, or the baseline). */
	start_tree?: string;
	/** snapshot: the target asset and the version the run began as. */
	target_asset?: string;
	target_version?: number;
	/** Paths the desk put into the work folder (installed skills), left out of the change and removed after. */
	installed: string[];
	/** The references' read-only folders: the only parts of the library the sandbox shows. */
	reference_folders: string[];
	agent: string;
	settings: RunSettings;
	isolated: boolean;
	isolation_note: string;
}

/** Where a run works, from its run_control row's JSON: undefined while the run is only claimed (the row names its isolation alone). */
export function placementOf(json: string): RunPlacement | undefined {
	const placement = JSON.parse(json) as Partial<RunPlacement>;
	return placement.work_folder ? (placement as RunPlacement) : undefined;
}

/** The isolation a run_control row names (a claim's or a placement's). */
export function isolationOf(json: string): RunPlacement['isolation'] | undefined {
	return (JSON.parse(json) as Partial<RunPlacement>).isolation;
}
