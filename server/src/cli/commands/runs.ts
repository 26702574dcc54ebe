/**
 * `desk runs …` and `desk history …`: what the runs of a repository recorded, and the AI objects
 * carried to and from its `refs/desk/history`.
 */
import { runDetail, runsOverview } from '../../runs/runViews';
import type { RunDetail, RunSummary, RunsOverview } from '../../runs/types';
import { expectArgs, oneId } from '../args';
import type { Command, CommandContext } from '../context';
import { print } from '../output';
import { recordedTop, repoTop } from '../projects';
import { terminalSafe as t, writeMessage } from '../terminal';

/** `desk runs list`, `desk runs show ID`: a read, which never makes a project database. */
async function runsView({ command, rest, values, out, open }: CommandContext): Promise<number> {
	const opened = await open();
	const top = recordedTop(opened, await repoTop(values.repo ?? process.cwd()));
	const ai = await opened.projectAi(top);
	if (command === 'runs list') {
		expectArgs(rest, 0, command);
		const overview = runsOverview(ai);
		print(out, overview, () => formatOverview(overview));
		return 0;
	}
	const detail = runDetail(ai, oneId(rest, command));
	print(out, detail, () => formatRunSummary(detail.summary, detail.task.title));
	return 0;
}

/** `desk history export [--ref REF]`: a write (a ref), so it may make the project database. */
async function historyExport({ command, rest, values, out, open }: CommandContext): Promise<number> {
	const opened = await open();
	const top = await repoTop(values.repo ?? process.cwd());
	expectArgs(rest, 0, command);
	const result = await opened.exportHistory(top, values.ref);
	print(out, result, () =>
		result.commit
			? `${result.objects} objects written to ${t(values.ref ?? 'refs/desk/history')} (${t(result.commit.slice(0, 12))})`
			: 'no change since the last export',
	);
	return 0;
}

/** `desk history import [--ref REF]`: a fresh clone's history brought in, so it may make the project database. */
async function historyImport({ command, rest, values, out, open }: CommandContext): Promise<number> {
	const opened = await open();
	const top = await repoTop(values.repo ?? process.cwd());
	expectArgs(rest, 0, command);
	const result = await opened.importHistory(top, values.ref);
	print(
		out,
		result,
		() =>
			`${result.added} added, ${result.unchanged} already here${result.refused.length ? `, ${result.refused.length} refused` : ''}`,
	);
	for (const refused of result.refused) {
		writeMessage(process.stderr, `desk: refused ${t(refused.path)}: ${t(refused.reason)}\n`);
	}
	return result.refused.length > 0 ? 2 : 0;
}

export const runViewCommands: ReadonlyArray<[string, Command]> = [
	['runs list', runsView],
	['runs show', runsView],
	['history export', historyExport],
	['history import', historyImport],
];

export function formatRunSummary(r: RunSummary, title: string): string {
	const cost = r.cost_usd !== undefined ? ` $${r.cost_usd.toFixed(4)}` : '';
	const tokens = r.total_tokens !== undefined ? ` ${r.total_tokens} tokens` : '';
	return `${t(r.id)}  ${t(r.status)}  ${t(title)}  ${t(r.model ?? '-')}${tokens}${cost}${r.decision ? `  → ${t(r.decision)}` : ''}`;
}

export function formatRunDetail(detail: RunDetail): string {
	const lines = [formatRunSummary(detail.summary, detail.task.title)];
	if (detail.summary.error) {
		lines.push(`  error: ${t(detail.summary.error)}`);
	}
	for (const patch of detail.patchsets) {
		lines.push(
			`  patchset ${t(patch.object_id)} ${t(patch.apply_status)}: ${patch.touched.map((touched) => `${t(touched.path)} +${touched.lines_added} -${touched.lines_deleted}`).join(', ')}`,
		);
	}
	for (const evidence of detail.evidence) {
		lines.push(
			`  check ${t(evidence.tags['desk.check'] ?? evidence.tool)}: ${t(evidence.summary ?? `exit ${evidence.exit_code}`)}`,
		);
	}
	if (detail.decision) {
		lines.push(
			`  decision: ${t(detail.decision.decision_type)}${detail.decision.result_commit_sha ? ` ${t(detail.decision.result_commit_sha)}` : ''}`,
		);
	} else if (detail.summary.at_gate) {
		lines.push(
			`  waiting at the gate: desk run decide ${t(detail.summary.id)} --decision commit|retry|abandon|checkpoint`,
		);
	}
	return lines.join('\n');
}

function formatOverview(overview: RunsOverview): string {
	const lines: string[] = [];
	for (const view of overview.intents) {
		lines.push(`${t(view.status).padEnd(9)} ${t(view.intent.prompt)}`);
		for (const task of view.tasks) {
			lines.push(`  ${t(task.task.status).padEnd(9)} ${t(task.task.title)}`);
			for (const r of task.runs) {
				lines.push(`    ${formatRunSummary(r, '')}`);
			}
		}
	}
	for (const task of overview.tasks) {
		lines.push(`${t(task.task.status).padEnd(9)} ${t(task.task.title)}`);
	}
	return lines.join('\n') || '(no runs yet)';
}
