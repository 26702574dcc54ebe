import * as vscode from 'vscode';

/**
 * The run settings sent with Go and Retry, as the `agentDesk.*` settings give them for the project's
 * folder (the design's `desk.agents`, `desk.runs.*`, `desk.checks`, and `agentDesk.lineage.*` under `lineage`). The server checks every field and
 * refuses with `run.badSettings` or `run.unknownAgent`, naming the one that is wrong.
 */
export function runSettings(projectPath?: string): Record<string, unknown> {
	const scope = projectPath ? vscode.Uri.file(projectPath) : undefined;
	const config = vscode.workspace.getConfiguration('agentDesk', scope);
	return {
		agents: config.get<unknown[]>('agents', []),
		agent: config.get<string>('runs.agent', ''),
		isolation: config.get<string>('runs.isolation', 'shared'),
		maxAttempts: config.get<number>('runs.maxAttempts', 2),
		maxFrames: config.get<number>('runs.maxFrames', 0),
		sandbox: config.get<string>('runs.sandbox', 'auto'),
		checks: config.get<unknown[]>('checks', []),
		// Prices by model over the desk's table, to estimate a cost the agent does not report (prices.ts).
		prices: config.get<Record<string, unknown>>('runs.prices', {}),
		// How branches run and are bounded, and who memorizes landings (glossary: Lineage, Project memory).
		lineage: {
			branch: config.get<Record<string, unknown>>('lineage.branch', {}),
			limits: config.get<Record<string, unknown>>('lineage.limits', {}),
			summaryAgent: config.get<string>('lineage.summaryAgent', ''),
			memorizeOnLanding: config.get<boolean>('lineage.memorizeOnLanding', false),
		},
	};
}
