/**
 * Messages between a desk webview and the extension host. Every message names its type; requests
 * carry an id that the host answers exactly once. The webview never talks to the desk server: the
 * host relays what it needs. The host waits for `ready` before it sends anything.
 */
export type WebviewToHost =
	| { type: 'ready' }
	| { type: 'request'; id: number; method: string; params: unknown };

export type HostToWebview =
	| { type: 'init'; state: unknown }
	| { type: 'response'; id: number; result?: unknown; error?: { code: string; message: string } };

export function isHostMessage(value: unknown): value is HostToWebview {
	return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}
