import * as vscode from 'vscode';
import { ShowRun, type RunDetail } from '../../server/src/protocol/protocol';
import type { DeskClient } from './deskClient';
import { formatDuration } from './views/runsTree';

/** `desk-patch:/<patchset>/<before|after>/<path>`: one side of a PatchSet's file. */
export const patchScheme = 'desk-patch';

/**
 * The two sides of a PatchSet's files, as the server computed them, served read-only to VS Code's
 * diff editor. They are kept until the window closes (they never change: a PatchSet is immutable).
 */
export class PatchSides implements vscode.TextDocumentContentProvider {
	private readonly texts = new Map<string, string>();

	set(uri: vscode.Uri, text: string): void {
		this.texts.set(uri.toString(), text);
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.texts.get(uri.toString()) ?? '';
	}
}

export function patchSideUri(patchsetId: string, side: 'before' | 'after', filePath: string): vscode.Uri {
	return vscode.Uri.from({ scheme: patchScheme, path: `/${patchsetId}/${side}/${filePath}` });
}

function html(text: string | number | undefined): string {
	if (text === undefined || text === '') {
		return '—';
	}
	return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function table(headers: string[], rows: Array<Array<string | number | undefined>>): string {
	return `<table><thead><tr>${headers.map((h) => `<th>${html(h)}</th>`).join('')}</tr></thead><tbody>${rows
		.map((row) => `<tr>${row.map((cell) => `<td>${html(cell)}</td>`).join('')}</tr>`)
		.join('')}</tbody></table>`;
}

function facts(rows: Array<[string, string | number | undefined]>): string {
	return `<table class="facts"><tbody>${rows.map(([k, v]) => `<tr><th>${html(k)}</th><td>${html(v)}</td></tr>`).join('')}</tbody></table>`;
}

const kindName = (kind: string | { other: string }) => (typeof kind === 'string' ? kind : kind.other);

/** The body of a run's page: what a reviewer wants to know, in the order they ask it. Every value is escaped. */
export function renderRunBody(d: RunDetail): string {
	const s = d.summary;
	const parts: string[] = [];
	parts.push(`<h1>Run of “${html(d.task.title)}” <span class="status ${s.status}">${html(s.status)}</span></h1>`);
	parts.push(
		facts([
			['Started', s.started_at],
			['Duration', s.duration_ms !== undefined ? formatDuration(s.duration_ms) : undefined],
			['Baseline commit', d.run.commit],
			['Decision', d.decision ? `${d.decision.decision_type}${d.decision.result_commit_sha ? ` → ${d.decision.result_commit_sha.slice(0, 12)}` : ''}` : undefined],
			['Error', d.run.error],
			['Environment', d.run.environment ? `${d.run.environment.os}/${d.run.environment.arch} in ${d.run.environment.cwd}` : undefined],
			['Id', d.run.object_id],
		]),
	);
	if (d.intent) {
		parts.push(`<h2>Intent</h2><blockquote>${html(d.intent.prompt)}</blockquote>${d.intent.content ? `<p>${html(d.intent.content)}</p>` : ''}`);
	}
	parts.push('<h2>Provenance</h2>');
	if (d.provenance) {
		const u = d.provenance.token_usage;
		parts.push(
			table(
				['Provider', 'Model', 'Temperature', 'Max tokens', 'Input', 'Output', 'Total', 'Cost'],
				[[d.provenance.provider, d.provenance.model, d.provenance.temperature, d.provenance.max_tokens, u?.input_tokens, u?.output_tokens, u?.total_tokens, u?.cost_usd !== undefined ? `$${u.cost_usd.toFixed(4)}` : undefined]],
			),
		);
	} else {
		parts.push('<p>No provenance was recorded.</p>');
	}
	if (d.plan) {
		parts.push(
			'<h2>Plan</h2>',
			table(
				['#', 'Step', 'Status', 'Reads frames', 'Made frames'],
				d.plan.steps.map((step, i) => [i + 1, step.description, step.statuses[step.statuses.length - 1]?.status ?? 'pending', step.iframes.join(', '), step.oframes.join(', ')]),
			),
		);
	}
	if (d.snapshot) {
		parts.push(`<h2>Context snapshot (${html(d.snapshot.selection_strategy)})</h2>`, table(['Kind', 'Path', 'Blob', 'Preview'], d.snapshot.items.map((i) => [i.kind, i.path, i.blob?.slice(0, 12), i.preview?.slice(0, 80)])));
	}
	if (d.pipeline) {
		parts.push('<h2>Context pipeline</h2>', table(['Frame', 'Kind', 'Summary'], d.pipeline.frames.map((f) => [f.frame_id, kindName(f.kind), f.summary])));
	}
	parts.push(`<h2>PatchSets (${d.patchsets.length})</h2>`);
	for (const [i, p] of d.patchsets.entries()) {
		parts.push(`<h3>PatchSet ${i + 1} — ${html(p.apply_status)}</h3>`, p.rationale ? `<p>${html(p.rationale)}</p>` : '', table(['File', 'Change', '+', '−'], p.touched.map((f) => [f.path, f.change_type, f.lines_added, f.lines_deleted])));
	}
	parts.push(`<h2>Evidence (${d.evidence.length})</h2>`, table(['Kind', 'Tool', 'Command', 'Exit', 'Summary'], d.evidence.map((e) => [kindName(e.kind), e.tool, e.command, e.exit_code, e.summary])));
	if (d.decision) {
		parts.push('<h2>Decision</h2>', `<p><strong>${html(d.decision.decision_type)}</strong>${d.decision.rationale ? ` — ${html(d.decision.rationale)}` : ''}</p>`);
	}
	parts.push(
		`<h2>Tool calls (${d.tool_invocations.length})</h2>`,
		table(['Tool', 'Status', 'Read', 'Written', 'Result'], d.tool_invocations.map((t) => [t.tool_name, t.status, t.io_footprint?.paths_read.join(', '), t.io_footprint?.paths_written.join(', '), t.result_summary])),
	);
	return parts.join('\n');
}

/**
 * A run's page in an editor tab: a webview with no scripts at all (the CSP allows none), styled with
 * the theme's colours, made anew when the run changes.
 */
export class RunPages implements vscode.Disposable {
	private readonly panels = new Map<string, vscode.WebviewPanel>();

	constructor(private readonly desk: DeskClient) {}

	async open(project: string, runId: string): Promise<void> {
		const key = `${project}/${runId}`;
		const detail = await this.desk.request(ShowRun, { project, id: runId });
		let panel = this.panels.get(key);
		if (panel) {
			panel.reveal();
		} else {
			panel = vscode.window.createWebviewPanel('agentDesk.run', `Run: ${detail.task.title}`, vscode.ViewColumn.Active, { enableScripts: false, localResourceRoots: [] });
			panel.onDidDispose(() => this.panels.delete(key));
			this.panels.set(key, panel);
		}
		panel.webview.html = page(panel.webview, renderRunBody(detail));
	}

	/** Pages of runs that changed are made again. */
	async refresh(project: string): Promise<void> {
		for (const key of this.panels.keys()) {
			const [p, runId] = key.split('/') as [string, string];
			if (p === project) {
				await this.open(p, runId).catch(() => undefined);
			}
		}
	}

	dispose(): void {
		for (const panel of this.panels.values()) {
			panel.dispose();
		}
	}
}

function page(webview: vscode.Webview, body: string): string {
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource} 'unsafe-inline'; img-src ${webview.cspSource};">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 24px 24px; line-height: 1.45; }
h1 { font-size: 1.5em; font-weight: 600; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 4px; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 8px 0; } th, td { text-align: left; padding: 3px 12px 3px 0; vertical-align: top; border-bottom: 1px solid var(--vscode-editorWidget-border, transparent); }
th { color: var(--vscode-descriptionForeground); font-weight: 600; } table.facts th { width: 10em; }
blockquote { margin: 0; padding: 4px 12px; border-left: 3px solid var(--vscode-textBlockQuote-border); background: var(--vscode-textBlockQuote-background); }
.status { font-size: 0.6em; padding: 2px 8px; border-radius: 10px; vertical-align: middle; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.status.completed { background: var(--vscode-testing-iconPassed); color: var(--vscode-editor-background); } .status.failed { background: var(--vscode-testing-iconFailed); color: var(--vscode-editor-background); }
</style></head><body>${body}</body></html>`;
}
