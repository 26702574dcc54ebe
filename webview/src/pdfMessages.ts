/**
 * Messages between the PDF preview webview (dist/pdfViewer/pdfViewer.js) and the extension host. The page
 * fetches nothing: the host sends the PDF's stored bytes after the page says `ready` (again after
 * every reload of the page), and runs the commands the page's buttons ask for.
 */
export type PdfHostToWebview = { type: 'pdf'; bytes: Uint8Array };

export type PdfWebviewToHost =
	| { type: 'ready' }
	/** The page's Save As… button. */
	| { type: 'saveAs' }
	/** pdf.js itself could not be loaded here: the host shows the download page instead. */
	| { type: 'unavailable'; reason: string }
	/** pdf.js read the file: its page count. */
	| { type: 'rendered'; pages: number }
	/** pdf.js could not read the file; the page says so itself. */
	| { type: 'failed'; reason: string };

/** A message from the page, checked field by field (the page is not trusted to send what it should). */
export function parsePdfMessage(message: unknown): PdfWebviewToHost | undefined {
	if (typeof message !== 'object' || message === null) {
		return undefined;
	}
	const m = message as Record<string, unknown>;
	const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 500) : '');
	switch (m['type']) {
		case 'ready':
		case 'saveAs':
			return { type: m['type'] };
		case 'unavailable':
		case 'failed':
			return { type: m['type'], reason: text(m['reason']) };
		case 'rendered':
			return typeof m['pages'] === 'number' && Number.isInteger(m['pages']) && m['pages'] >= 0
				? { type: 'rendered', pages: m['pages'] }
				: undefined;
		default:
			return undefined;
	}
}
