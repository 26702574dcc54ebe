import type { AgentMessageData, RunDetail } from '../../../server/src/protocol/protocol';
import { escapeHtml } from '../common/html';
import { visibleLines } from '../common/markdownText';
import { callUsageWords } from './runTooltips';
import { runState } from './runWords';

/*
 * A run's conversation (glossary: Conversation) as its page shows it, built from a RunDetail alone
 * (no VS Code import, tested in plain Node): the ticket, then what the agent said and the tool calls
 * it made in the order it made them — each call with its input, its output and the calls of a
 * subagent it started —, the changes it made and the checks that ran on them, node by node.
 */

export type ToolCall = RunDetail['tool_invocations'][number];
type Frame = NonNullable<RunDetail['pipeline']>['frames'][number];
type Evidence = RunDetail['evidence'][number];

/** A call and the calls its subagent made, in the order they were made. */
export interface CallNode {
	call: ToolCall;
	children: CallNode[];
}

/** One thing that happened in the run, in order. */
export type ConversationEntry =
	| { kind: 'ticket'; text: string }
	/** The agent began a node of the template (`plan`, `work`), or an attempt of it again. */
	| { kind: 'node'; node: string; attempt: number }
	| { kind: 'message'; frameId: number; message: AgentMessageData }
	/** One of the agent's own calls; `desk` is what the desk recorded of the same call when it was one of its tools. */
	| { kind: 'call'; node: CallNode; desk?: ToolCall }
	/** A desk tool call the agent's own output does not show. */
	| { kind: 'deskCall'; call: ToolCall }
	| { kind: 'change'; files: string[]; patchset?: string }
	| { kind: 'checks'; evidence: Evidence[] }
	| { kind: 'retry'; checks: string[]; attempt: number }
	| { kind: 'note'; text: string };

/** What the host read of a stored output so far (the page asks for it when a call is opened). */
export type TextPreview = { text: string; partial: boolean; bytes: number } | { error: string };

/** What opens a text of the run in an editor tab: a call's input or output, a check's log, a whole message. */
export type RunTextTarget = { call: string; part: 'input' | 'output' } | { evidence: string } | { message: number };

const isDeskCall = (t: ToolCall) => t.tags?.['desk.tool'] === 'desk';

/**
 * A run's tool calls in two: the desk tools the agent called through the desk (glossary: Desk
 * tools; tagged `desk.tool: desk`), and the agent's own (its shell, its file edits), as it reported them.
 */
export function splitToolCalls(calls: readonly ToolCall[]): { desk: ToolCall[]; own: ToolCall[] } {
	return { desk: calls.filter(isDeskCall), own: calls.filter((t) => !isDeskCall(t)) };
}

/**
 * The calls as a tree: each subagent's calls under the call that started it (`parent_invocation`),
 * in order. A call whose starter is not among them, or that would be its own ancestor, stays at the top.
 */
export function callTree(calls: readonly ToolCall[]): CallNode[] {
	const nodes = new Map(calls.map((call) => [call.object_id, { call, children: [] as CallNode[] }]));
	const top: CallNode[] = [];
	const isAncestor = (ancestor: string, of: string | undefined): boolean => {
		const seen = new Set<string>();
		for (let at = of; at !== undefined && !seen.has(at); at = nodes.get(at)?.call.parent_invocation) {
			if (at === ancestor) {
				return true;
			}
			seen.add(at);
		}
		return false;
	};
	for (const node of nodes.values()) {
		const parent = node.call.parent_invocation ? nodes.get(node.call.parent_invocation) : undefined;
		if (parent && !isAncestor(node.call.object_id, node.call.parent_invocation)) {
			parent.children.push(node);
		} else {
			top.push(node);
		}
	}
	return top;
}

/** A desk tool call's arguments on one line (`query: "retry", limit: 5`), at most `max` characters. */
export function argsSummary(args: unknown, max = 160): string {
	let text: string;
	if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
		text = Object.entries(args as Record<string, unknown>)
			.map(([key, value]) => `${key}: ${oneLine(value)}`)
			.join(', ');
	} else {
		text = args === undefined ? '' : oneLine(args);
	}
	return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function oneLine(value: unknown): string {
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}

type FrameData = Partial<AgentMessageData> & {
	tool_invocation?: unknown;
	patchset?: unknown;
	touched?: unknown;
	evidence?: unknown;
};

const frameData = (frame: Frame): FrameData =>
	typeof frame.data === 'object' && frame.data !== null ? (frame.data as FrameData) : {};
const kindOf = (frame: Frame) => (typeof frame.kind === 'string' ? frame.kind : frame.kind.other);

/** The run's conversation, in the order things happened. */
export function conversationOf(d: RunDetail): ConversationEntry[] {
	const runId = d.run.object_id;
	const { desk, own } = splitToolCalls(d.tool_invocations);
	const calls = new Map(own.map((c) => [c.object_id, c]));
	const tree = callTree(own);
	const topNodes = new Map(tree.map((n) => [n.call.object_id, n]));
	// A desk tool call and the agent's own record of it name the same call id of the agent's.
	const deskByCallId = new Map(
		desk.flatMap((c) => (c.external_ids?.tool_use_id ? [[c.external_ids.tool_use_id, c] as const] : [])),
	);
	const pairedDesk = new Set<string>();
	const startedAt = Date.parse(d.run.created_at ?? '') || 0;
	const endedAt = d.summary.finished_at ? Date.parse(d.summary.finished_at) : Infinity;
	// A frame is this run's when it says so; a frame from before frames named their run, when it was made while the run worked.
	const isThisRun = (frame: Frame, data: FrameData): boolean => {
		if (typeof data.run === 'string') {
			return data.run === runId;
		}
		if (typeof data.tool_invocation === 'string') {
			return calls.has(data.tool_invocation);
		}
		const at = Date.parse(frame.created_at);
		return kindOf(frame) !== 'intent_analysis' && at >= startedAt && at <= endedAt;
	};

	const timed: Array<{ at: number; entry: ConversationEntry; node?: string; attempt?: number }> = [];
	const shown = new Set<string>();
	const pushCall = (node: CallNode, at: number, where: FrameData) => {
		const callId = node.call.external_ids?.tool_use_id;
		const paired = callId !== undefined ? deskByCallId.get(callId) : undefined;
		if (paired) {
			pairedDesk.add(paired.object_id);
		}
		const mark = (n: CallNode) => {
			shown.add(n.call.object_id);
			n.children.forEach(mark);
		};
		mark(node);
		timed.push({
			at,
			entry: { kind: 'call', node, ...(paired ? { desk: paired } : {}) },
			...nodeOf(where),
		});
	};
	for (const frame of d.pipeline?.frames ?? []) {
		const data = frameData(frame);
		if (!isThisRun(frame, data)) {
			continue;
		}
		const at = Date.parse(frame.created_at);
		switch (kindOf(frame)) {
			case 'agent_message':
				if (typeof data.text === 'string') {
					timed.push({
						at,
						entry: { kind: 'message', frameId: frame.frame_id, message: data as AgentMessageData },
						...nodeOf(data),
					});
				}
				break;
			case 'tool_call': {
				// A subagent's call is shown inside the call that started it.
				const node = typeof data.tool_invocation === 'string' ? topNodes.get(data.tool_invocation) : undefined;
				if (node && !shown.has(node.call.object_id)) {
					pushCall(node, at, data);
				}
				break;
			}
			case 'code_change': {
				const files = Array.isArray(data.touched) ? data.touched.filter((f): f is string => typeof f === 'string') : [];
				const patchset = typeof data.patchset === 'string' ? data.patchset : undefined;
				timed.push({ at, entry: { kind: 'change', files, ...(patchset ? { patchset } : {}) }, ...nodeOf(data) });
				const evidence = d.evidence.filter((e) => patchset !== undefined && e.patchset_id === patchset);
				if (evidence.length > 0) {
					timed.push({ at, entry: { kind: 'checks', evidence }, ...nodeOf(data) });
				}
				break;
			}
			case 'error_recovery': {
				const failed = Array.isArray(data.evidence) ? data.evidence : [];
				const checks = d.evidence
					.filter((e) => failed.includes(e.object_id))
					.map((e) => e.tags['desk.check'] ?? e.tool);
				const attempt = (typeof data.attempt === 'number' ? data.attempt : 0) + 1;
				timed.push({ at, entry: { kind: 'retry', checks, attempt }, ...nodeOf(data) });
				break;
			}
			default:
				// The desk's own summaries of a node (its plan, its answer) repeat what the agent said.
				break;
		}
	}
	// Calls the frames do not show (evicted past the run's maxFrames, or made before frames named
	// them) and desk tool calls the agent's output does not show, where their time puts them.
	const unframed = [
		...tree
			.filter((n) => !shown.has(n.call.object_id))
			.map((node) => ({ at: Date.parse(node.call.created_at), entry: { kind: 'call', node } as ConversationEntry })),
		...desk
			.filter((c) => !pairedDesk.has(c.object_id))
			.map((call) => ({ at: Date.parse(call.created_at), entry: { kind: 'deskCall', call } as ConversationEntry })),
	].sort((a, b) => a.at - b.at);
	const merged: typeof timed = [];
	for (const item of timed) {
		while (unframed.length > 0 && unframed[0]!.at < item.at) {
			merged.push(unframed.shift()!);
		}
		merged.push(item);
	}
	merged.push(...unframed);

	const entries: ConversationEntry[] = [];
	const ticket = d.intent?.prompt ?? [d.task.title, d.task.description].filter(Boolean).join('\n\n');
	if (ticket) {
		entries.push({ kind: 'ticket', text: ticket });
	}
	const pipeline = d.pipeline;
	if (pipeline && pipeline.max_frames > 0 && pipeline.next_frame_id > pipeline.frames.length) {
		entries.push({
			kind: 'note',
			text: `Only the last ${pipeline.max_frames} steps of the intent are kept (the setting agentDesk.runs.maxFrames): what the agent said before them is gone; its tool calls are all here.`,
		});
	}
	let at: { node: string; attempt: number } | undefined;
	for (const item of merged) {
		if (item.node !== undefined && (item.node !== at?.node || item.attempt !== at?.attempt)) {
			at = { node: item.node, attempt: item.attempt ?? 1 };
			entries.push({ kind: 'node', ...at });
		}
		entries.push(item.entry);
	}
	return entries;
}

function nodeOf(data: FrameData): { node?: string; attempt?: number } {
	return typeof data.node === 'string'
		? { node: data.node, ...(typeof data.attempt === 'number' ? { attempt: data.attempt } : {}) }
		: {};
}

// ---------------------------------------------------------------------------------------------
// The conversation as HTML

function html(text: string | number | undefined): string {
	if (text === undefined || text === '') {
		return '';
	}
	// What the agent said and printed: controls and bidi overrides shown as escapes, markup as text.
	return escapeHtml(visibleLines(String(text)));
}

/** The first `maxLines` lines and `maxChars` characters of `text`, and whether that is all of it. */
export function previewOf(text: string, maxLines = 20, maxChars = 2000): { text: string; cut: boolean } {
	let shown = text.length > maxChars ? text.slice(0, maxChars) : text;
	const lines = shown.split('\n');
	if (lines.length > maxLines) {
		shown = lines.slice(0, maxLines).join('\n');
	}
	return { text: shown.replace(/\n+$/, ''), cut: shown.length < text.replace(/\n+$/, '').length };
}

/** A size in words: "830 bytes", "4.2 KB", "1.5 MB". */
export function sizeText(bytes: number): string {
	return bytes < 1000
		? `${bytes} byte${bytes === 1 ? '' : 's'}`
		: bytes < 1_000_000
			? `${(bytes / 1000).toFixed(1)} KB`
			: `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/**
 * What a call was about, on one line: its command, else the files it read or wrote (as the run
 * names them, inside the work folder), else the path, pattern or query it named, else its arguments.
 */
export function callBrief(call: ToolCall): string {
	const args = call.args;
	const record =
		args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
	const command = record['command'] ?? record['cmd'];
	const files = [...(call.io_footprint?.paths_written ?? []), ...(call.io_footprint?.paths_read ?? [])];
	if (typeof command !== 'string' && !Array.isArray(command) && files.length > 0) {
		return firstLine(files.join(', '), 120);
	}
	if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
		for (const key of [
			'command',
			'cmd',
			'file_path',
			'path',
			'notebook_path',
			'pattern',
			'url',
			'query',
			'description',
			'prompt',
		]) {
			const value = record[key];
			if (typeof value === 'string' && value.trim() !== '') {
				return firstLine(value, 120);
			}
			if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
				return firstLine(value.join(' '), 120);
			}
		}
	}
	return argsSummary(args, 120);
}

function firstLine(text: string, max: number): string {
	const line = text.trim().split('\n', 1)[0]!;
	const more = line.length < text.trim().length;
	return line.length > max ? `${line.slice(0, max - 1)}…` : more ? `${line} …` : line;
}

/**
 * A tool's name as a person reads it: an MCP tool as Claude Code names it (`mcp__desk__attach`) by
 * its own name (`attach`) and the server it comes from (`desk`); any other as it is.
 */
export function toolWords(tool: string): { name: string; server?: string } {
	const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
	return mcp ? { name: mcp[2]!, server: mcp[1]! } : { name: tool };
}

/** A call's input as a person reads it: a shell command as a command, a file written with its content, else the arguments as JSON. */
export function inputText(call: ToolCall): string {
	const args = call.args;
	if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
		const record = args as Record<string, unknown>;
		const command = record['command'] ?? record['cmd'];
		if (typeof command === 'string' || (Array.isArray(command) && command.every((c) => typeof c === 'string'))) {
			const rest = Object.entries(record).filter(([key]) => key !== 'command' && key !== 'cmd');
			const shown = typeof command === 'string' ? command : command.join(' ');
			return `$ ${shown}${rest.length > 0 ? `\n\n${rest.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : oneLine(v)}`).join('\n')}` : ''}`;
		}
	}
	try {
		return JSON.stringify(args, null, 2) ?? '';
	} catch {
		return String(args);
	}
}

/**
 * A call's whole input for a tab: a shell command as a command, then each argument on its own, a
 * text of several lines (a file's new content, an edit) below its name as it is, else JSON.
 */
export function inputDocument(call: ToolCall): string {
	const args = call.args;
	if (args === null || typeof args !== 'object' || Array.isArray(args)) {
		return `${oneLine(args)}\n`;
	}
	const lines: string[] = [];
	for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
		if ((key === 'command' || key === 'cmd') && (typeof value === 'string' || Array.isArray(value))) {
			lines.push(`$ ${typeof value === 'string' ? value : value.map(String).join(' ')}`, '');
		} else if (typeof value === 'string' && value.includes('\n')) {
			lines.push(`${key}:`, value.replace(/\n$/, ''), '');
		} else {
			lines.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}`);
		}
	}
	return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}

/** Where the page's links lead: the run's project and id, for the commands that open a text in a tab. */
export interface PageLinks {
	project: string;
	runId: string;
}

function openLink(links: PageLinks | undefined, target: RunTextTarget, label: string): string {
	if (!links) {
		return '';
	}
	const args = encodeURIComponent(JSON.stringify([links.project, links.runId, target]));
	return `<a class="open" href="command:agentDesk.openRunText?${escapeHtml(args)}">${html(label)}</a>`;
}

/**
 * An element id for an object's id: the page keeps a call open by it across updates. An id from
 * another desk's history may hold anything: what is not a letter, digit, `-` or `_` is spelled out.
 */
export function domId(prefix: string, id: string): string {
	return `${prefix}-${id.replace(/[^A-Za-z0-9_-]/gu, (c) => `_${c.codePointAt(0)!.toString(16)}_`)}`;
}

/** The run's conversation as HTML: every value escaped; the calls as `<details>` a person opens. */
export function renderConversation(
	d: RunDetail,
	links: PageLinks | undefined,
	previews: ReadonlyMap<string, TextPreview> = new Map(),
): string {
	const entries = conversationOf(d);
	const running = runState(d.summary) === 'running';
	const parts = entries.map((entry) => renderEntry(entry, links, previews, running));
	if (running) {
		parts.push(
			`<div class="working"><span class="pulse"></span>${d.summary.status === 'validating' ? 'The checks are running…' : 'The agent is working…'}</div>`,
		);
	}
	const said = entries.filter((e) => e.kind === 'message').length;
	const calls = (n: CallNode): number => 1 + n.children.reduce((sum, c) => sum + calls(c), 0);
	const called = entries.reduce(
		(sum, e) => sum + (e.kind === 'call' ? calls(e.node) : e.kind === 'deskCall' ? 1 : 0),
		0,
	);
	const heading = `<h2 id="conversation">Conversation <span class="count">${said} message${said === 1 ? '' : 's'}, ${called} tool call${called === 1 ? '' : 's'}</span></h2>`;
	return `${heading}<div class="conversation">${parts.join('')}</div>`;
}

const nodeWords = (node: string, attempt: number) => {
	const name =
		node === 'plan' ? 'Planning' : node === 'work' ? 'Working' : `${node.charAt(0).toUpperCase()}${node.slice(1)}`;
	return attempt > 1 ? `${name} — attempt ${attempt}` : name;
};

function renderEntry(
	entry: ConversationEntry,
	links: PageLinks | undefined,
	previews: ReadonlyMap<string, TextPreview>,
	running: boolean,
): string {
	switch (entry.kind) {
		case 'ticket':
			return `<div class="turn ticket"><div class="who">Ticket</div><div class="text">${html(entry.text.trim())}</div></div>`;
		case 'node':
			return `<div class="node"><span>${html(nodeWords(entry.node, entry.attempt))}</span></div>`;
		case 'message': {
			const { message } = entry;
			const whole =
				message.chars !== undefined
					? `<div class="more">${html(`The message goes on (${message.chars.toLocaleString('en-US')} characters in all).`)} ${openLink(links, { message: entry.frameId }, 'Open the whole message')}</div>`
					: '';
			return `<div class="turn agent" id="${domId('message', String(entry.frameId))}"><div class="who">Agent</div><div class="text">${html(message.text.trim())}</div>${whole}</div>`;
		}
		case 'call':
			return renderCall(entry.node, entry.desk, links, previews, running);
		case 'deskCall':
			return renderCall({ call: entry.call, children: [] }, undefined, links, previews, running);
		case 'change':
			return `<div class="event change">${html(entry.files.length === 0 ? 'Changed no file.' : `Changed ${entry.files.length} file${entry.files.length === 1 ? '' : 's'}: ${entry.files.join(', ')}`)}</div>`;
		case 'checks':
			return `<div class="event checks">${entry.evidence.map((e) => checkLine(e, links)).join('')}</div>`;
		case 'retry':
			return `<div class="event retry">${html(`${entry.checks.length > 0 ? `The check${entry.checks.length === 1 ? '' : 's'} ${entry.checks.join(', ')} failed` : 'Checks failed'}: the agent tries again (attempt ${entry.attempt}) with the failure in its prompt.`)}</div>`;
		case 'note':
			return `<p class="muted">${html(entry.text)}</p>`;
	}
}

/** The link that opens a check's whole log in a tab; none for a check that stored none. */
export function logLink(e: Evidence, links: PageLinks | undefined): string {
	return e.report_artifacts?.[0] ? openLink(links, { evidence: e.object_id }, 'Open log') : '';
}

/** A check on one line: passed or failed, its summary, and its log. */
function checkLine(e: Evidence, links: PageLinks | undefined): string {
	const passed = e.exit_code === 0;
	const mark =
		e.exit_code === undefined
			? '<span class="mark">?</span>'
			: `<span class="mark ${passed ? 'ok' : 'error'}">${passed ? '✓' : '✗'}</span>`;
	return `<div class="check">${mark}<span class="tool">${html(e.tags['desk.check'] ?? e.tool)}</span><span class="result">${html(e.summary ?? '')}</span>${logLink(e, links)}</div>`;
}

function renderCall(
	node: CallNode,
	desk: ToolCall | undefined,
	links: PageLinks | undefined,
	previews: ReadonlyMap<string, TextPreview>,
	running: boolean,
): string {
	const { call, children } = node;
	const busy = running && call.result_summary === 'running' && call.artifacts.length === 0;
	const status = busy ? 'running' : call.status === 'ok' ? 'ok' : 'error';
	const mark = busy
		? '<span class="mark running"></span>'
		: `<span class="mark ${status}">${status === 'ok' ? '✓' : '✗'}</span>`;
	const output = call.artifacts[0];
	const hash = output?.hash;
	const preview = hash ? previews.get(hash) : undefined;
	const tool = toolWords(call.tool_name);
	const server = isDeskCall(call) ? 'desk' : tool.server;
	const badge = server !== undefined ? `<span class="badge">${html(`${server} tool`)}</span>` : '';
	const result = busy ? 'running…' : (call.result_summary ?? '');
	const summary = `<summary>${mark}<span class="tool">${html(tool.name)}</span>${badge}<span class="brief">${html(callBrief(call))}</span><span class="result">${html(firstLine(result, 160))}</span></summary>`;
	const input = previewOf(inputText(call), 12, 1200);
	const parts = [
		`<div class="part"><div class="part-head">Input${openLink(links, { call: call.object_id, part: 'input' }, 'Open in a tab')}</div><pre class="io">${html(input.text)}${input.cut ? '\n…' : ''}</pre></div>`,
	];
	if (output) {
		let shown: string;
		if (!preview) {
			shown = `<pre class="io muted">${html(call.result_summary ?? '')}</pre>`;
		} else if ('error' in preview) {
			shown = `<p class="warning">${html(`The output cannot be shown: ${preview.error}`)}</p>`;
		} else {
			const cut = previewOf(preview.text);
			shown = `<pre class="io">${html(cut.text)}${cut.cut || preview.partial ? '\n…' : ''}</pre>`;
		}
		const size = output.size_bytes !== undefined ? ` · ${sizeText(output.size_bytes)}` : '';
		parts.push(
			`<div class="part"><div class="part-head">Output${html(size)}${openLink(links, { call: call.object_id, part: 'output' }, 'Open in a tab')}</div>${shown}</div>`,
		);
	} else if (!busy) {
		parts.push(
			`<div class="part"><div class="part-head">Output</div><pre class="io muted">${html(call.result_summary || 'no output')}</pre></div>`,
		);
	}
	const read = call.io_footprint?.paths_read ?? [];
	const written = call.io_footprint?.paths_written ?? [];
	const files = [
		read.length > 0 ? `Read ${read.join(', ')}` : '',
		written.length > 0 ? `Wrote ${written.join(', ')}` : '',
	]
		.filter(Boolean)
		.join(' · ');
	if (files) {
		parts.push(`<div class="files">${html(files)}</div>`);
	}
	if (desk) {
		parts.push(
			`<div class="files">${html(`Through the desk: ${desk.tool_name} ${desk.status === 'ok' ? 'answered' : 'refused'} — ${desk.result_summary ?? ''}`)}</div>`,
		);
	}
	if (call.token_usage) {
		parts.push(`<div class="files">${html(`Its subagent spent ${callUsageWords(call.token_usage)}.`)}</div>`);
	}
	if (children.length > 0) {
		parts.push(
			`<div class="subagent"><div class="part-head">${html(`Its subagent's ${children.length} call${children.length === 1 ? '' : 's'}`)}</div>${children.map((child) => renderCall(child, undefined, links, previews, running)).join('')}</div>`,
		);
	}
	// The page asks the host for the output's beginning when the call is opened (webview/src/runPage.ts).
	const wants = hash && !preview ? ` data-preview="${escapeHtml(hash)}"` : '';
	return `<details class="call ${status}" id="${domId('call', call.object_id)}"${wants}>${summary}<div class="call-body">${parts.join('')}</div></details>`;
}

/** The styles of the conversation (the run page's and the theme's colours). */
export const conversationStyle = `
.conversation { display: flex; flex-direction: column; gap: 6px; max-width: 980px; }
.turn { padding: 8px 12px; border-radius: 6px; }
.turn .who { font-size: 0.85em; font-weight: 600; color: var(--vscode-descriptionForeground); margin-bottom: 2px; }
.turn .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.turn.ticket { background: var(--vscode-textBlockQuote-background); border-left: 3px solid var(--vscode-textBlockQuote-border); }
.turn.agent { border-left: 3px solid var(--vscode-charts-blue); background: var(--vscode-editorWidget-background); }
.turn .more { margin-top: 6px; color: var(--vscode-descriptionForeground); }
.node { display: flex; align-items: center; gap: 8px; margin: 12px 0 2px; color: var(--vscode-descriptionForeground); font-size: 0.85em; text-transform: uppercase; letter-spacing: 0.06em; }
.node::after { content: ''; flex: 1; border-top: 1px solid var(--vscode-panel-border); }
details.call { border: 1px solid var(--vscode-panel-border); border-radius: 6px; background: var(--vscode-editor-background); }
details.call > summary { display: flex; align-items: baseline; gap: 8px; padding: 5px 10px; cursor: pointer; list-style: none; min-width: 0; }
details.call > summary::-webkit-details-marker { display: none; }
details.call > summary::before { content: '›'; color: var(--vscode-descriptionForeground); width: 0.6em; transition: transform 0.1s; }
details.call[open] > summary::before { transform: rotate(90deg); }
details.call > summary:hover { background: var(--vscode-list-hoverBackground); }
details.call > summary:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
summary .tool, .check .tool { font-weight: 600; white-space: nowrap; }
summary .brief { font-family: var(--vscode-editor-font-family); font-size: 0.92em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 0 1 auto; }
summary .result, .check .result { color: var(--vscode-descriptionForeground); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 1 1 0; }
.check .result { flex: 0 1 auto; }
.mark { width: 1em; text-align: center; flex: none; }
.mark.ok { color: var(--vscode-testing-iconPassed); } .mark.error { color: var(--vscode-testing-iconFailed); }
.mark.running, .working .pulse { display: inline-block; width: 0.6em; height: 0.6em; border-radius: 50%; background: var(--vscode-charts-blue); animation: pulse 1.2s ease-in-out infinite; }
@keyframes pulse { 0%, 100% { opacity: 0.25; } 50% { opacity: 1; } }
.badge { font-size: 0.8em; padding: 0 6px; border-radius: 8px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); white-space: nowrap; }
.call-body { padding: 4px 12px 10px 28px; display: flex; flex-direction: column; gap: 8px; }
.part-head { font-size: 0.85em; color: var(--vscode-descriptionForeground); display: flex; gap: 12px; align-items: baseline; }
a.open { color: var(--vscode-textLink-foreground); text-decoration: none; white-space: nowrap; } a.open:hover { text-decoration: underline; }
a.open:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: 1px; }
pre.io { margin: 2px 0 0; padding: 6px 10px; max-height: 28em; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); background: var(--vscode-textCodeBlock-background); border-radius: 4px; }
.files { font-size: 0.9em; color: var(--vscode-descriptionForeground); }
.subagent { border-left: 2px solid var(--vscode-panel-border); padding-left: 10px; display: flex; flex-direction: column; gap: 4px; }
.event { padding: 2px 12px; color: var(--vscode-descriptionForeground); }
.event.retry { color: var(--vscode-editorWarning-foreground); }
.check { display: flex; align-items: baseline; gap: 8px; min-width: 0; }
.working { display: flex; align-items: center; gap: 8px; padding: 6px 12px; color: var(--vscode-descriptionForeground); }
h2 .count { font-weight: normal; font-size: 0.8em; color: var(--vscode-descriptionForeground); margin-left: 8px; }
`;
