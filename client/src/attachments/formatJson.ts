/** JSON re-indented for the JSON preview without reading its numbers. Pure: no VS Code, no imports. */

/**
 * Valid JSON re-indented by two spaces, every string and number copied as written (parsing and
 * printing again would round numbers past 2^53). A parse failure comes back as its message.
 */
export function formatJson(text: string): { text: string } | { error: string } {
	const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	try {
		JSON.parse(source);
	} catch (error) {
		return { error: (error as Error).message };
	}
	const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
	const parts: string[] = [];
	let depth = 0;
	const newline = () => parts.push(`\n${'  '.repeat(depth)}`);
	let i = 0;
	while (i < source.length) {
		const c = source[i]!;
		if (space(c)) {
			i += 1;
		} else if (c === '"') {
			let j = i + 1;
			while (source[j] !== '"') {
				j += source[j] === '\\' ? 2 : 1;
			}
			parts.push(source.slice(i, j + 1));
			i = j + 1;
		} else if (c === '{' || c === '[') {
			let j = i + 1;
			while (space(source[j])) {
				j += 1;
			}
			if (source[j] === (c === '{' ? '}' : ']')) {
				parts.push(c, source[j]!);
				i = j + 1;
			} else {
				depth += 1;
				parts.push(c);
				newline();
				i += 1;
			}
		} else if (c === '}' || c === ']') {
			depth -= 1;
			newline();
			parts.push(c);
			i += 1;
		} else if (c === ',') {
			parts.push(',');
			newline();
			i += 1;
		} else if (c === ':') {
			parts.push(': ');
			i += 1;
		} else {
			let j = i + 1;
			while (j < source.length && !space(source[j]) && !',:]}'.includes(source[j]!)) {
				j += 1;
			}
			parts.push(source.slice(i, j));
			i = j;
		}
	}
	return { text: `${parts.join('')}\n` };
}
