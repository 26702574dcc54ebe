/**
 * Text for a terminal. Names, notes, model names and summaries come from repositories, snapshot
 * folders and agents: a terminal obeys the control sequences inside them (ESC sets the title, clears
 * the screen, rewrites what was printed above; BEL rings; a right-to-left override makes
 * `exe.txt` read as `txt.exe`). Everything the command line prints goes through this module, so such
 * characters reach the terminal as inert, visible escapes (`\x1b`, `\u202e`).
 */

/**
 * Characters a terminal does not show as themselves: C0 and C1 controls and DEL (`Cc`), invisible
 * format characters such as bidi overrides and isolates, zero-width characters, the BOM and tag
 * characters (`Cf`), the line and paragraph separators (`Zl`, `Zp`), and lone surrogates (`Cs`).
 */
const unsafe =
	/(?<=\p{Extended_Pictographic}[\p{M}\p{Emoji_Modifier}]*)(\u200d)(?=\p{Extended_Pictographic})|[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
/** The same without newline and tab: for text the desk laid out itself in lines. */
const unsafeInLines =
	/(?<=\p{Extended_Pictographic}[\p{M}\p{Emoji_Modifier}]*)(\u200d)(?=\p{Extended_Pictographic})|(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
// (The first alternative of each: a zero-width joiner between two pictographs is part of one emoji,
// 👩‍💻, and is kept.)

const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One character as a visible escape: `\n`, `\x1b`, `\u202e`, `\u{e0041}`. */
export function escapeCharacter(c: string): string {
	const name = named[c];
	if (name) {
		return name;
	}
	const code = c.codePointAt(0)!;
	if (code < 0x100) {
		return `\\x${code.toString(16).padStart(2, '0')}`;
	}
	if (code <= 0xffff) {
		return `\\u${code.toString(16).padStart(4, '0')}`;
	}
	return `\\u{${code.toString(16)}}`;
}

function escapeAll(text: string, pattern: RegExp, keepsLines: boolean): string {
	// Most text is printable ASCII, which neither pattern matches: answered by one pass over its
	// code units instead of a Unicode regular expression (a listing of 24,000 versions escapes
	// 100,000 values).
	let i = 0;
	for (; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code < 0x20 ? !keepsLines || (code !== 0x0a && code !== 0x09) : code >= 0x7f) {
			break;
		}
	}
	return i === text.length
		? text
		: text.replace(pattern, (c: string, joiner: string | undefined) => joiner ?? escapeCharacter(c));
}

/**
 * One untrusted value (a name, a note, a model name) for a terminal: every control and invisible
 * format character, newlines and tabs included, shown as an escape. The result is one line.
 */
export function terminalSafe(text: string): string {
	return escapeAll(String(text), unsafe, false);
}

/** Text the desk laid out in lines: escapes like {@link terminalSafe} but keeps newlines and tabs. */
export function terminalSafeLines(text: string): string {
	return escapeAll(String(text), unsafeInLines, true);
}

/** JSON escapes every C0 control already; these it leaves raw, and a terminal would act on them. */
const unsafeInJson = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * JSON for `--json` output: `JSON.stringify` with DEL, C1 controls and invisible format characters
 * also written as `\uXXXX` escapes, so the text parses to exactly the same value and a terminal shows
 * it inert. (Outside strings JSON is ASCII, so every replacement is inside a string.)
 */
export function jsonForTerminal(value: unknown, indent = 2): string {
	const json = JSON.stringify(value, null, indent);
	// Looking costs a tenth of replacing (which copies the whole text even when nothing matches), and
	// text that is ASCII without DEL needs no look: its UTF-8 is as long as it is, a count done in
	// native code at a fifth of the pattern's cost (a listing of 24,000 versions is 5 MB of JSON).
	if (Buffer.byteLength(json, 'utf8') === json.length && !json.includes('\u007f')) {
		return json;
	}
	unsafeInJson.lastIndex = 0;
	if (!unsafeInJson.test(json)) {
		return json;
	}
	return json.replace(unsafeInJson, (c) => {
		let escaped = '';
		for (let i = 0; i < c.length; i += 1) {
			escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
		}
		return escaped;
	});
}

export interface TextSink {
	write(chunk: string | Uint8Array): unknown;
}

/** The one way the command line writes text to stdout or stderr: {@link terminalSafeLines} first. */
export function writeMessage(sink: TextSink, text: string): void {
	sink.write(terminalSafeLines(text));
}
