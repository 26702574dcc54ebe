/** The CSV/TSV reader of the table preview. Pure: no VS Code, no imports. */

export interface DelimitedTable {
	/** The rows read, at most the cap; the first is the header. */
	rows: string[][];
	/** Every row in the file, including those past the cap. */
	total: number;
	/** A quoted field ran to the end of the file. */
	unterminated: boolean;
}

/**
 * Reads CSV (RFC 4180: quoted fields may hold the delimiter, quotes doubled, and line breaks) or TSV;
 * CRLF, LF and CR end rows; a byte order mark is dropped. Rows past `maxRows` are counted, not kept.
 */
export function parseDelimited(text: string, delimiter: string, maxRows: number): DelimitedTable {
	const rows: string[][] = [];
	let total = 0;
	let row: string[] = [];
	let field = '';
	let quoted = false;
	let started = false;
	const endField = () => {
		row.push(field);
		field = '';
		started = false;
	};
	const endRow = () => {
		endField();
		if (total < maxRows) {
			rows.push(row);
		}
		total += 1;
		row = [];
	};
	let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
	while (i < text.length) {
		if (quoted) {
			const quote = text.indexOf('"', i);
			if (quote < 0) {
				field += text.slice(i);
				break;
			}
			field += text.slice(i, quote);
			if (text[quote + 1] === '"') {
				field += '"';
				i = quote + 2;
			} else {
				quoted = false;
				i = quote + 1;
			}
			continue;
		}
		const c = text[i]!;
		if (c === '"' && !started) {
			quoted = true;
			started = true;
			i += 1;
		} else if (c === delimiter) {
			endField();
			i += 1;
		} else if (c === '\n' || c === '\r') {
			endRow();
			i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
		} else {
			// Up to the next character that means something, in one slice.
			let end = i + 1;
			while (end < text.length) {
				const d = text[end]!;
				if (d === delimiter || d === '\n' || d === '\r' || d === '"') {
					break;
				}
				end += 1;
			}
			field += text.slice(i, end);
			started = true;
			i = end;
		}
	}
	const unterminated = quoted;
	if (started || field !== '' || row.length > 0) {
		endRow();
	}
	return { rows, total, unterminated };
}
