/**
 * An attachment's kind (how the Attachments view and the previews group types), whether it can be
 * shown rendered, the VS Code language to open it in, and a safe name for a file the desk writes.
 * Pure: no VS Code here, so the unit tests run it in plain Node.
 */
import { baseName, sourceLanguages } from '../../../server/src/attachments/names';

/** How the Attachments view and the previews group types. */
export type AttachmentKind = 'image' | 'text' | 'code' | 'markdown' | 'table' | 'json' | 'pdf' | 'html' | 'other';

/** The lower-case extension of a file's base name ('' when it has none). */
export function extension(name: string): string {
	const base = baseName(name);
	const dot = base.lastIndexOf('.');
	return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** The kind of a media type (the recorded one for icons, the checked one for previews) for a file named `name`. */
export function attachmentKind(mediaType: string, name: string): AttachmentKind {
	switch (mediaType) {
		case 'text/html':
			return 'html';
		case 'text/markdown':
			return 'markdown';
		case 'text/csv':
		case 'text/tab-separated-values':
			return 'table';
		case 'application/json':
		case 'application/x-ndjson':
			return 'json';
		case 'application/pdf':
			return 'pdf';
		case 'application/xml':
		case 'application/yaml':
			return 'code';
	}
	if (mediaType.startsWith('image/')) {
		return 'image';
	}
	if (mediaType.startsWith('text/')) {
		return sourceLanguages[extension(name)] ? 'code' : 'text';
	}
	return 'other';
}

/** Types whose source can also be shown rendered (in a frame without scripts or network). */
export function renderable(mediaType: string): boolean {
	return mediaType === 'text/html' || mediaType === 'image/svg+xml';
}

/** The VS Code language to show a text attachment in, when its type or name says one. */
export function languageFor(mediaType: string, name: string): string | undefined {
	const byType: Record<string, string> = {
		'text/html': 'html',
		'image/svg+xml': 'xml',
		'application/xml': 'xml',
		'application/yaml': 'yaml',
		'application/json': 'json',
		'application/x-ndjson': 'jsonl',
		'text/markdown': 'markdown',
	};
	return byType[mediaType] ?? sourceLanguages[extension(name)];
}

/** A name fit for a file the desk writes itself: the base name with only safe characters, ending in `.ext`. */
export function safeFileName(name: string, ext: string): string {
	let base = baseName(name)
		.replace(/[^\p{L}\p{N} ._-]/gu, '_')
		.replace(/^[.\s]+/, '')
		.slice(-120);
	if (!base.toLowerCase().endsWith(`.${ext}`)) {
		base = `${base || 'attachment'}.${ext}`;
	}
	return base;
}
