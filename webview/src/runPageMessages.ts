/**
 * Messages between a run's page (dist/runPage/runPage.js) and the extension host. The host builds
 * the page's body (every value escaped, runs/runPage.ts) and sends it anew as the run changes; the
 * page only lays it over what it shows, keeping its scroll and the tool calls a person opened, and
 * asks for the beginning of a call's output when one is opened.
 */
export type RunPageToWebview = { type: 'body'; html: string };

export type RunPageToHost =
	/** The page loaded (again, after it was hidden): it wants the body as it is now. */
	| { type: 'ready' }
	/** A tool call was opened whose output the page has not shown yet: its stored text's hash. */
	| { type: 'preview'; hash: string };

/** A message from the page, checked field by field (the page is not trusted to send what it should). */
export function parseRunPageMessage(message: unknown): RunPageToHost | undefined {
	if (typeof message !== 'object' || message === null) {
		return undefined;
	}
	const m = message as Record<string, unknown>;
	if (m['type'] === 'ready') {
		return { type: 'ready' };
	}
	if (m['type'] === 'preview' && typeof m['hash'] === 'string' && /^[0-9a-f]{64}$/.test(m['hash'])) {
		return { type: 'preview', hash: m['hash'] };
	}
	return undefined;
}
