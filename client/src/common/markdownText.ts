/**
 * Untrusted text (asset and file names, notes, commit subjects, an agent's model name and summaries,
 * attachment names) for the places VS Code shows text, each of which interprets something:
 * - a MarkdownString (tooltips) renders Markdown: links (a `command:` link runs a command where the
 *   string is trusted), images, HTML entities, `$(icon)` syntax, tables a newline can break;
 * - a notification (`show*Message`) turns `[label](command:…)`, `[label](https://…)` and
 *   `[label](file:…)` into links that run or open when clicked;
 * - a QuickPick item's label, description and detail render `$(icon)`;
 * - every one of them shows control, bidi and invisible format characters as they act: a right-to-left
 *   override makes `exe.txt` read as `txt.exe`.
 * Each function here makes text for one of those places show as itself. No VS Code import: the
 * functions are tested on their own.
 */
import { terminalSafe, terminalSafeLines } from '../../../server/src/cli/terminal';

/** Control, bidi and invisible format characters as visible escapes (`\x1b`, `\u202e`); one line. */
export function visibleText(text: string): string {
	return terminalSafe(text);
}

/** Like {@link visibleText} but keeps newlines and tabs: for text laid out in lines (a page). */
export function visibleLines(text: string): string {
	return terminalSafeLines(text);
}

/**
 * Text for a MarkdownString, shown as itself on one line: controls made visible first (a newline
 * too, so it cannot end a table row or start a block), then every ASCII punctuation character
 * backslash-escaped, which CommonMark allows for each of them. No link, image, autolink, entity,
 * emphasis, HTML or `$(icon)` can start inside it. For a MarkdownString with supportThemeIcons on.
 */
export function markdownText(text: string): string {
	// Leading spaces would make an indented code block of a line: they are dropped. VS Code renders
	// `$(name)` in the text Markdown leaves (where supportThemeIcons is on, as it is on every tooltip
	// of the desk), unless it reads `\$(name)`: that backslash is written first, escaped with the rest.
	return visibleText(text)
		.trimStart()
		.replace(/\$\(/g, '\\$(')
		.replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/**
 * Several lines of untrusted text (a note) for a MarkdownString: each line as {@link markdownText},
 * joined by hard line breaks (an empty line still starts a paragraph), at most `maxLines` of them.
 */
export function markdownLines(text: string, maxLines = 40): string {
	const lines = String(text).split(/\r?\n/);
	const shown = lines.slice(0, maxLines).map((line) => markdownText(line));
	return (lines.length > maxLines ? [...shown, '…'] : shown).join('  \n');
}

/** Text for a QuickPick label, description or detail: controls made visible, `$(name)` shown as text. */
export function pickText(text: string): string {
	return visibleText(text).replace(/\$\(/g, '\\$(');
}

/**
 * A notification's message (`show*Message`): controls and invisible characters made visible (the
 * desk's own line breaks kept), and every `[label](target)` broken apart so no link can be made of
 * the names inside it. The desk's own messages hold no links.
 */
export function messageText(text: string): string {
	return terminalSafeLines(text).replace(/\]\s*\(/g, '] (');
}
