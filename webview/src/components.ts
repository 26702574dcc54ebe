/**
 * The launch card's own components. The product's design names the webview UI toolkit
 * (`@vscode/webview-ui-toolkit`: it follows the theme and works from the keyboard), and this is the
 * only module that knows it: the card asks for a button, a text area, a tag or a badge here, so
 * another implementation of these few components replaces this file and nothing else.
 */
import { allComponents, provideVSCodeDesignSystem } from '@vscode/webview-ui-toolkit';

/** Registers the components' custom elements; call once, before making any of them. */
export function registerComponents(): void {
	provideVSCodeDesignSystem().register(allComponents);
}

/** A plain element with attributes and children. */
export function el(tag: string, props: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElement {
	const node = document.createElement(tag);
	for (const [key, value] of Object.entries(props)) {
		node.setAttribute(key, value);
	}
	node.append(...children);
	return node;
}

/** How a button looks: the main action, a secondary one, or an icon alone. */
export type ButtonAppearance = 'primary' | 'secondary' | 'icon';

/** A button; `props` adds attributes (id, aria-label, title). Disable it with `setDisabled`. */
export function button(label: string, appearance: ButtonAppearance, props: Record<string, string> = {}): HTMLElement {
	return el('vscode-button', { ...props, appearance }, label);
}

/** Disables or enables a button made by `button`. */
export function setDisabled(node: HTMLElement, disabled: boolean): void {
	if (disabled) {
		node.setAttribute('disabled', '');
	} else {
		node.removeAttribute('disabled');
	}
}

/** A multi-line text editor; read and write what it holds with `textValue` and `setTextValue`. */
export function textArea(props: Record<string, string>): HTMLElement {
	return el('vscode-text-area', props);
}

/** What a text area made by `textArea` holds. */
export function textValue(node: HTMLElement): string {
	return (node as unknown as { value: string }).value;
}

/** Replaces what a text area made by `textArea` holds. */
export function setTextValue(node: HTMLElement, value: string): void {
	(node as unknown as { value: string }).value = value;
}

/** A short label (a plug's role). */
export function tag(text: string): HTMLElement {
	return el('vscode-tag', {}, text);
}

/** A small count or score, with a tooltip saying what it is. */
export function badge(text: string, title: string): HTMLElement {
	return el('vscode-badge', { title }, text);
}
