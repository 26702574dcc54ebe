/**
 * The PDF preview's page script: loads the pdf.js the extension ships (dist/pdfjs, named by the
 * script tag's data attributes), gets the PDF's bytes from the host, and draws every page on a canvas.
 * pdf.js is configured to run nothing the PDF carries and to fetch nothing: no XFA, no forms, no
 * annotation layer (so no links to follow and no scripts), no font, CMap or wasm URLs, no range or
 * stream loading; rendering on this page's thread, parsing in pdf.js's worker.
 */
import type * as PdfJs from 'pdfjs-dist';
import type { PDFDocumentLoadingTask, PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist';
import type { PdfHostToWebview, PdfWebviewToHost } from './pdfMessages';

declare function acquireVsCodeApi(): { postMessage(message: PdfWebviewToHost): void };

const vscode = acquireVsCodeApi();
const post = (message: PdfWebviewToHost) => vscode.postMessage(message);

const script = document.currentScript as HTMLScriptElement | null;
const moduleUrl = script?.dataset['pdfjs'] ?? '';
const workerUrl = script?.dataset['worker'] ?? '';

const pagesEl = document.getElementById('pages') as HTMLElement;
const countEl = document.getElementById('page-count') as HTMLElement;
const statusEl = document.getElementById('status') as HTMLElement;
const fitButton = document.getElementById('fit-width') as HTMLButtonElement;
const actualButton = document.getElementById('actual-size') as HTMLButtonElement;

type Zoom = 'fit' | 'actual';
let zoom: Zoom = 'fit';
let pdf: PDFDocumentProxy | undefined;
let loading: PDFDocumentLoadingTask | undefined;
let pages: PDFPageProxy[] = [];
/** Bumped by every new layout, so a render that a newer one overtook stops. */
let generation = 0;

for (const button of document.querySelectorAll<HTMLButtonElement>('[data-save-as]')) {
	button.addEventListener('click', () => post({ type: 'saveAs' }));
}
fitButton.addEventListener('click', () => setZoom('fit'));
actualButton.addEventListener('click', () => setZoom('actual'));

function setZoom(next: Zoom): void {
	zoom = next;
	fitButton.setAttribute('aria-pressed', String(next === 'fit'));
	actualButton.setAttribute('aria-pressed', String(next === 'actual'));
	void layout();
}

let resizeTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => {
	if (zoom === 'fit') {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(() => void layout(), 150);
	}
});

let pdfjs: typeof PdfJs | undefined;
let worker: PdfJs.PDFWorker | undefined;
/**
 * pdf.js and its worker, loaded once; undefined with the reason posted to the host when pdf.js cannot
 * be. Where no worker thread can start, pdf.js parses on this page's thread (its "fake worker"); the
 * page says which in `data-worker` on the page area.
 */
async function loadPdfJs(): Promise<typeof PdfJs | undefined> {
	if (pdfjs) {
		return pdfjs;
	}
	try {
		if (!moduleUrl || !workerUrl) {
			throw new Error('the page does not name pdf.js');
		}
		const loaded = (await import(/* webpackIgnore: true */ moduleUrl)) as typeof PdfJs;
		loaded.GlobalWorkerOptions.workerSrc = workerUrl;
		const started = new loaded.PDFWorker({ verbosity: 0 });
		await started.promise;
		pagesEl.dataset['worker'] = typeof Worker === 'function' && started.port instanceof Worker ? 'thread' : 'main';
		worker = started;
		pdfjs = loaded;
		return loaded;
	} catch (error) {
		post({ type: 'unavailable', reason: error instanceof Error ? error.message : String(error) });
		return undefined;
	}
}

function showError(message: string): void {
	pagesEl.replaceChildren();
	pagesEl.hidden = true;
	fitButton.hidden = true;
	actualButton.hidden = true;
	countEl.textContent = 'not readable';
	statusEl.hidden = false;
	const title = document.createElement('strong');
	title.textContent = 'pdf.js cannot read this file as a PDF.';
	const detail = document.createElement('p');
	detail.textContent = message;
	const offer = document.createElement('p');
	offer.append('It may be damaged, or not a PDF at all. ');
	const save = document.createElement('button');
	save.className = 'desk-button desk-primary';
	save.textContent = 'Save As…';
	save.addEventListener('click', () => post({ type: 'saveAs' }));
	offer.append(save, ' writes its bytes where you choose, to open with another program.');
	statusEl.replaceChildren(title, detail, offer);
}

async function open(bytes: Uint8Array): Promise<void> {
	const lib = await loadPdfJs();
	if (!lib) {
		return;
	}
	// A reload of the same bytes: the document before goes, with its worker.
	await loading?.destroy();
	loading = undefined;
	pdf = undefined;
	pages = [];
	statusEl.hidden = true;
	pagesEl.hidden = false;
	fitButton.hidden = false;
	actualButton.hidden = false;
	countEl.textContent = 'Loading…';
	// `isEvalSupported` is gone from this pdf.js (it compiles nothing); it stays off should an older one be dropped in.
	const parameters: NonNullable<Parameters<typeof PdfJs.getDocument>[0]> & { isEvalSupported: boolean } = {
		data: bytes,
		...(worker ? { worker } : {}),
		isEvalSupported: false,
		enableXfa: false,
		disableAutoFetch: true,
		disableStream: true,
		disableRange: true,
		disableWorkerRendering: true,
		useWorkerFetch: false,
		useWasm: false,
		stopAtErrors: false,
		verbosity: 0,
	};
	try {
		loading = lib.getDocument(parameters);
		const doc = await loading.promise;
		pdf = doc;
		pages = [];
		for (let n = 1; n <= doc.numPages; n += 1) {
			pages.push(await doc.getPage(n));
		}
		countEl.textContent = `${doc.numPages} page${doc.numPages === 1 ? '' : 's'}`;
		await layout();
		post({ type: 'rendered', pages: doc.numPages });
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		showError(message);
		post({ type: 'failed', reason: message });
	}
}

/** Every page on a canvas of its own, at the zoom chosen, sharp on high-density screens. */
async function layout(): Promise<void> {
	if (!pdf || !pdfjs) {
		return;
	}
	const mine = (generation += 1);
	const cssUnits = pdfjs.PixelsPerInch.PDF_TO_CSS_UNITS;
	const available = Math.max(100, pagesEl.clientWidth - 2 * 24);
	const ratio = window.devicePixelRatio || 1;
	const figures: HTMLElement[] = [];
	const jobs: Array<() => Promise<void>> = [];
	for (const page of pages) {
		const natural = page.getViewport({ scale: cssUnits });
		const scale = zoom === 'fit' ? (cssUnits * available) / natural.width : cssUnits;
		const viewport = page.getViewport({ scale });
		const canvas = document.createElement('canvas');
		canvas.width = Math.floor(viewport.width * ratio);
		canvas.height = Math.floor(viewport.height * ratio);
		canvas.style.width = `${Math.floor(viewport.width)}px`;
		canvas.style.height = `${Math.floor(viewport.height)}px`;
		canvas.setAttribute('aria-label', `Page ${page.pageNumber}`);
		const figure = document.createElement('figure');
		figure.className = 'pdf-page';
		const caption = document.createElement('figcaption');
		caption.textContent = `${page.pageNumber} / ${pages.length}`;
		figure.append(canvas, caption);
		figures.push(figure);
		jobs.push(async () => {
			await page.render({
				canvas,
				viewport,
				// Appearance streams drawn on the canvas; no form fields, no annotation layer: nothing to click, nothing run.
				annotationMode: pdfjs!.AnnotationMode.ENABLE,
				...(ratio !== 1 ? { transform: [ratio, 0, 0, ratio, 0, 0] } : {}),
			}).promise;
		});
	}
	pagesEl.replaceChildren(...figures);
	pagesEl.dataset['zoom'] = zoom;
	for (const job of jobs) {
		if (mine !== generation) {
			return;
		}
		await job();
	}
	if (mine === generation) {
		pagesEl.dataset['rendered'] = String(pages.length);
	}
}

window.addEventListener('message', (event: MessageEvent<PdfHostToWebview>) => {
	const message = event.data;
	if (message?.type === 'pdf') {
		const bytes =
			message.bytes instanceof Uint8Array ? message.bytes : new Uint8Array(message.bytes as ArrayBufferLike);
		void open(bytes);
	}
});

// pdf.js first, so that a page where it cannot run falls back before the bytes are sent.
void loadPdfJs().then((lib) => {
	if (lib) {
		post({ type: 'ready' });
	}
});
