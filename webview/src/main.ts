/**
 * Bootstrap shared by the desk's webviews: registers the webview UI toolkit's components, restores
 * the state VS Code kept across hide and show, and runs the ready handshake with the host. The
 * launch card (a later capability) builds on it.
 */
import { allComponents, provideVSCodeDesignSystem } from '@vscode/webview-ui-toolkit';
import { isHostMessage, type HostToWebview, type WebviewToHost } from './messages';

interface VsCodeApi {
	postMessage(message: WebviewToHost): void;
	getState(): unknown;
	setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

provideVSCodeDesignSystem().register(allComponents);

const vscode = acquireVsCodeApi();
const pending = new Map<number, (message: Extract<HostToWebview, { type: 'response' }>) => void>();
let nextId = 1;

/** Asks the host for something; the host answers each request once. */
export function request(method: string, params: unknown): Promise<unknown> {
	const id = nextId++;
	return new Promise((resolve, reject) => {
		pending.set(id, (response) => (response.error ? reject(new Error(`${response.error.message} [${response.error.code}]`)) : resolve(response.result)));
		vscode.postMessage({ type: 'request', id, method, params });
	});
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
	const message = event.data;
	if (!isHostMessage(message)) {
		return;
	}
	if (message.type === 'response') {
		pending.get(message.id)?.(message);
		pending.delete(message.id);
	} else if (message.type === 'init' && vscode.getState() === undefined) {
		vscode.setState(message.state);
	}
});

vscode.postMessage({ type: 'ready' });
