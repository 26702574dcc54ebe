import { randomBytes } from 'node:crypto';

/** Text for HTML content or a quoted attribute value: every character that could end either is escaped. */
export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A fresh nonce for one page's Content-Security-Policy (128 random bits). */
export function newNonce(): string {
	return randomBytes(16).toString('base64');
}
