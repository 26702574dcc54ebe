/**
 * A run's page script: lays each body the host sends over the page in place, so that the page
 * follows the run live without a reload — its scroll, the tool calls a person opened and the text
 * they selected stay as they were — and keeps which calls are open across a reload of the page,
 * and the run it shows (named on its body by the host), so that a window reload restores the tab.
 * It builds no text of its own: the host's HTML is the page (every value escaped there).
 */
import type { RunPageToHost, RunPageToWebview } from './runPageMessages';

interface PageState {
	/** Ids of the `<details>` a person opened, and of those they closed. */
	opened: string[];
	closed: string[];
	scrollY: number;
	/** The run the page shows: what the host's serializer restores the tab with after a window reload. */
	project?: string;
	run?: string;
}

declare function acquireVsCodeApi(): {
	postMessage(message: RunPageToHost): void;
	getState(): PageState | undefined;
	setState(state: PageState): void;
};

const vscode = acquireVsCodeApi();
const post = (message: RunPageToHost) => vscode.postMessage(message);
const state: PageState = {
	opened: [],
	closed: [],
	scrollY: 0,
	...vscode.getState(),
	project: document.body.dataset['project'],
	run: document.body.dataset['run'],
};

/** Opened and closed as the person left them (the host's HTML opens nothing by itself). */
function applyOpenState(root: ParentNode): void {
	for (const details of root.querySelectorAll<HTMLDetailsElement>('details[id]')) {
		if (state.opened.includes(details.id)) {
			details.open = true;
		} else if (state.closed.includes(details.id)) {
			details.open = false;
		}
	}
}

function remember(): void {
	vscode.setState(state);
}

/** A call opened whose output preview is not on the page yet: the host is asked for it. */
function askPreviews(root: ParentNode): void {
	for (const details of root.querySelectorAll<HTMLDetailsElement>('details[open][data-preview]')) {
		const hash = details.dataset['preview'];
		if (hash && !details.dataset['asked']) {
			details.dataset['asked'] = 'yes';
			post({ type: 'preview', hash });
		}
	}
}

document.addEventListener(
	'toggle',
	(event) => {
		const details = event.target;
		if (!(details instanceof HTMLDetailsElement) || !details.id) {
			return;
		}
		const [add, remove] = details.open ? [state.opened, state.closed] : [state.closed, state.opened];
		if (!add.includes(details.id)) {
			add.push(details.id);
		}
		const at = remove.indexOf(details.id);
		if (at >= 0) {
			remove.splice(at, 1);
		}
		remember();
		askPreviews(document);
	},
	true,
);

let scrollTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('scroll', () => {
	clearTimeout(scrollTimer);
	scrollTimer = setTimeout(() => {
		state.scrollY = window.scrollY;
		remember();
	}, 200);
});

/** Two nodes are the same place on the page: the same element (by id where it has one) or both text. */
function samePlace(a: Node, b: Node): boolean {
	if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) {
		return false;
	}
	return !(a instanceof Element && b instanceof Element) || a.id === b.id;
}

/** `current` made like `next`, changing only what differs; a `<details>` keeps whether it is open. */
function morph(current: Node, next: Node): void {
	if (!(current instanceof Element) || !(next instanceof Element)) {
		if (current.nodeValue !== next.nodeValue) {
			current.nodeValue = next.nodeValue;
		}
		return;
	}
	const keepsOpen = (name: string) => name === 'open' && current instanceof HTMLDetailsElement;
	// What the page learnt since (a preview asked for) stays until the host's HTML shows it.
	const own = (name: string) => name === 'data-asked';
	for (const { name, value } of [...next.attributes]) {
		if (!keepsOpen(name) && current.getAttribute(name) !== value) {
			current.setAttribute(name, value);
		}
	}
	for (const { name } of [...current.attributes]) {
		if (!keepsOpen(name) && !own(name) && !next.hasAttribute(name)) {
			current.removeAttribute(name);
		}
	}
	morphChildren(current, next);
}

function morphChildren(current: Element, next: Element): void {
	const wanted = [...next.childNodes];
	for (const [index, node] of wanted.entries()) {
		const here = current.childNodes[index];
		if (here && samePlace(here, node)) {
			morph(here, node);
			continue;
		}
		// An element with an id further down (the rows before it went) is moved up rather than made again.
		const later =
			node instanceof Element && node.id
				? [...current.childNodes].slice(index + 1).find((c) => c instanceof Element && c.id === node.id)
				: undefined;
		if (later) {
			current.insertBefore(later, here ?? null);
			morph(later, node);
		} else {
			const made = document.importNode(node, true);
			if (made instanceof Element) {
				applyOpenState(made);
			}
			current.insertBefore(made, here ?? null);
		}
	}
	while (current.childNodes.length > wanted.length) {
		current.lastChild!.remove();
	}
}

window.addEventListener('message', (event: MessageEvent<RunPageToWebview>) => {
	const message = event.data;
	if (message?.type !== 'body' || typeof message.html !== 'string') {
		return;
	}
	const next = document.createElement('body');
	next.innerHTML = message.html;
	morphChildren(document.body, next);
	askPreviews(document);
});

applyOpenState(document);
// Kept at once: a tab nobody scrolled or opened a call on is restored too.
remember();
if (state.scrollY > 0) {
	window.scrollTo(0, state.scrollY);
}
askPreviews(document);
post({ type: 'ready' });
