/**
 * The launch card (glossary: Suggestion, Plug): the ticket editor, the suggestions with their reasons and
 * scores (updated as the ticket is typed), Keep on each, the plugs with the version go would freeze,
 * and Go. Built from the webview's own components (`components.ts`, over the webview UI toolkit), so
 * it follows the theme and works from the keyboard.
 */
import {
	badge,
	button,
	el,
	registerComponents,
	setDisabled,
	setTextValue,
	tag,
	textArea,
	textValue,
} from './components';
import { isHostMessage, type AgentStatusView, type CardState, type WebviewToHost } from './messages';

interface VsCodeApi {
	postMessage(message: WebviewToHost): void;
	getState(): unknown;
	setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

registerComponents();

const vscode = acquireVsCodeApi();
const root = document.getElementById('app')!;
let state: CardState | undefined = vscode.getState() as CardState | undefined;
let typing: number | undefined;

// The ticket editor is made once and kept: re-making it on every update would lose the cursor
// and what was typed since the last save.
const title = el('h1');
const ticket = textArea({
	id: 'ticket',
	rows: '6',
	resize: 'vertical',
	placeholder:
		'What should the agent do? The first line is the title; "## Acceptance criteria" and "## Constraints" sections list the task\'s. Name assets by id or path to plug them.',
	'aria-label': 'Ticket',
});
const dynamic = el('div');
root.replaceChildren(title, ticket, dynamic);
/** What is in the editor; it wins over an older saved ticket while the person types. */
let draft = state?.ticket ?? '';
ticket.addEventListener('input', () => {
	draft = textValue(ticket);
	if (state) {
		vscode.setState({ ...state, ticket: draft });
	}
	updateGo();
	window.clearTimeout(typing);
	typing = window.setTimeout(() => {
		typing = undefined;
		vscode.postMessage({ type: 'setTicket', ticket: draft });
	}, 300);
});

// VS Code passes every key pressed in a webview on to the workbench, which answers Ctrl+A (Cmd+A)
// with a select-all of its own, sent back a few milliseconds later. The editor has selected all by
// then; a key typed in between was selected again and replaced by the next one ("ocument" for
// "Document"). The workbench need not hear of this key.
ticket.addEventListener('keydown', (event) => {
	if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'a') {
		event.stopPropagation();
	}
	// Ctrl+Enter (Cmd+Enter) presses Go from the ticket, as it sends in a chat box.
	if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key === 'Enter') {
		event.preventDefault();
		event.stopPropagation();
		if (go && !go.hasAttribute('disabled')) {
			goNow();
		}
	}
});

/** Go with the ticket as typed: a change still waiting for the typing pause is sent first. */
function goNow(): void {
	if (typing !== undefined) {
		window.clearTimeout(typing);
		typing = undefined;
		vscode.postMessage({ type: 'setTicket', ticket: draft });
	}
	vscode.postMessage({ type: 'go' });
}

let go: HTMLElement | undefined;
function updateGo(): void {
	if (!go) {
		return;
	}
	// An agent that is not installed: Go would be refused (run.agentMissing); the agent line says why.
	setDisabled(go, Boolean(state?.busy) || draft.trim() === '' || state?.agent?.state === 'missing');
}

const agentMarks: Record<AgentStatusView['state'], string> = {
	ready: '✓',
	unknown: '?',
	signIn: '!',
	missing: '✕',
	checking: '…',
};

/** The agent line (glossary: Agent check): whether the agent Go would start can start, its fixes, Check Again. */
function agentLine(agent: AgentStatusView): HTMLElement {
	const fixes = agent.fixes.map((fix, index) => {
		const fixButton = button(fix.title, 'secondary', fix.hint ? { title: fix.hint } : {});
		fixButton.addEventListener('click', () => vscode.postMessage({ type: 'fixAgent', index }));
		return fixButton;
	});
	const again = button('↻', 'icon', { 'aria-label': 'Check the agent again', title: 'Check again' });
	again.addEventListener('click', () => vscode.postMessage({ type: 'checkAgent' }));
	const hints = agent.fixes.filter((f) => f.hint).map((f) => f.hint!);
	return el(
		'section',
		{ class: `agent ${agent.state}`, 'aria-label': 'Agent' },
		el(
			'div',
			{ class: 'agent-line', role: 'status' },
			el('span', { class: 'agent-mark', 'aria-hidden': 'true' }, agentMarks[agent.state]),
			el('span', { class: 'agent-text' }, agent.text),
			...fixes,
			agent.state === 'checking' ? '' : again,
		),
		agent.detail ? el('div', { class: 'muted agent-detail' }, agent.detail) : '',
		...hints.map((hint) => el('div', { class: 'muted agent-detail' }, hint)),
	);
}

function render(current: CardState): void {
	title.textContent = `Launch card — ${current.project}`;
	if (typing === undefined && document.activeElement !== ticket) {
		draft = current.ticket;
		setTextValue(ticket, current.ticket);
	}

	const suggestions = el('section', { 'aria-label': 'Suggestions' }, el('h2', {}, 'Suggestions'));
	if (current.indexing) {
		// The index is still being built: these come from the assets indexed so far, and the card refreshes as it grows.
		suggestions.append(
			el(
				'p',
				{ class: 'muted indexing', role: 'status' },
				`indexing ${current.indexing.indexed} of ${current.indexing.total} assets…`,
			),
		);
	}
	if (current.suggestions.length === 0) {
		suggestions.append(
			el(
				'p',
				{ class: 'muted' },
				draft.trim() ? 'No asset matches this ticket yet.' : 'Suggestions appear as you write the ticket.',
			),
		);
	}
	// Scores are BM25 weights, meaningful only against each other: each is shown as a share of the best.
	const bestScore = Math.max(...current.suggestions.map((s) => s.score ?? 0), Number.MIN_VALUE);
	for (const s of current.suggestions) {
		const keep = button('Keep', 'secondary', { 'aria-label': `Keep ${s.name} as ${s.role}` });
		keep.addEventListener('click', () => vscode.postMessage({ type: 'keep', id: s.id, role: s.role }));
		suggestions.append(
			el(
				'div',
				{ class: 'row suggestion', 'data-id': s.id },
				el('span', { class: 'name' }, s.name),
				tag(s.role),
				el('span', { class: 'reason' }, s.reason),
				s.score !== undefined
					? badge(
							`${Math.max(1, Math.round((100 * s.score) / bestScore))}%`,
							`How well the ticket's words match it, the best suggestion 100% (BM25 weight ${s.score.toFixed(2)})`,
						)
					: '',
				keep,
			),
		);
	}

	const plugs = el('section', { 'aria-label': 'Plugged' }, el('h2', {}, 'Plugged'));
	if (current.plugs.length === 0) {
		plugs.append(
			el(
				'p',
				{ class: 'muted' },
				'Nothing plugged yet. Keep a suggestion, or use “Plug into Launch Card” on an asset.',
			),
		);
	}
	for (const p of current.plugs) {
		const remove = button('✕', 'icon', { 'aria-label': `Unplug ${p.name}`, title: 'Unplug' });
		remove.addEventListener('click', () => vscode.postMessage({ type: 'unplug', id: p.id }));
		plugs.append(
			el(
				'div',
				{ class: 'row plug', 'data-id': p.id },
				el('span', { class: 'name' }, p.name),
				tag(p.role),
				el('span', { class: p.workingChanges ? 'changes' : 'version' }, p.atGo),
				remove,
			),
		);
	}

	go = button('Go', 'primary', { id: 'go' });
	go.addEventListener('click', goNow);
	go.setAttribute('title', 'Go (Ctrl+Enter in the ticket)');
	updateGo();
	const footer = el('div', { class: 'footer' }, go);
	if (current.runWith) {
		footer.append(el('span', { class: 'muted run-with' }, current.runWith));
	}
	if (current.launched?.notStarted !== undefined) {
		const retry = button('Retry', 'secondary', { id: 'retry-launched' });
		retry.addEventListener('click', () => vscode.postMessage({ type: 'retryLaunched' }));
		footer.append(
			el(
				'span',
				{ class: 'error not-started', role: 'alert' },
				`Run ${current.launched.runId.slice(0, 8)}… never started: ${current.launched.notStarted}. Once the agent is ready, retry it.`,
			),
			retry,
		);
	} else if (current.launched) {
		footer.append(
			el(
				'span',
				{ class: 'launched', role: 'status' },
				`Launched: run ${current.launched.runId.slice(0, 8)}… with ${current.launched.plugs} plug${current.launched.plugs === 1 ? '' : 's'} frozen; follow it in the Runs view.`,
			),
		);
	}
	if (current.error) {
		footer.append(el('span', { class: 'error', role: 'alert' }, current.error));
	}
	dynamic.replaceChildren(suggestions, plugs, current.agent ? agentLine(current.agent) : '', footer);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
	if (!isHostMessage(event.data)) {
		return;
	}
	state = event.data.state;
	vscode.setState(typing === undefined ? state : { ...state, ticket: draft });
	render(state);
});

if (state) {
	render(state);
}
vscode.postMessage({ type: 'ready' });
