/**
 * What in a text attachment an editor's language service would fetch from the network (a remote JSON
 * `$schema`, an external DTD or entity, a remote XML schema or model), so the desk can open it inert.
 * Pure: no VS Code here.
 */
import { extension } from './kinds';

/** The scheme of a reference that has one (`http`, `file`, …), lower case; '' for a relative one; undefined for one that leaves the document's host (`//host/…`). */
function referenceScheme(value: string): string | undefined {
	const v = value.trim();
	if (v.startsWith('//') || v.startsWith('\\\\')) {
		return undefined;
	}
	return /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase() ?? '';
}

/** A reference an editor's language service would resolve without the network: relative, or a file: URI. */
function isLocalReference(value: string): boolean {
	const scheme = referenceScheme(value);
	return scheme === '' || scheme === 'file';
}

/** The string values of every top-level `key` of valid JSON (all of them: a repeated key counts each time); a value that is not a string is left out. */
function topLevelStrings(source: string, key: string): string[] {
	const values: string[] = [];
	const stack: string[] = [];
	const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
	const stringEnd = (at: number) => {
		let j = at + 1;
		while (source[j] !== '"') {
			j += source[j] === '\\' ? 2 : 1;
		}
		return j + 1;
	};
	let i = 0;
	while (i < source.length) {
		const c = source[i]!;
		if (c === '"') {
			const end = stringEnd(i);
			if (stack.length === 1 && stack[0] === '{') {
				let j = end;
				while (space(source[j])) {
					j += 1;
				}
				if (source[j] === ':' && JSON.parse(source.slice(i, end)) === key) {
					j += 1;
					while (space(source[j])) {
						j += 1;
					}
					if (source[j] === '"') {
						const valueEnd = stringEnd(j);
						values.push(JSON.parse(source.slice(j, valueEnd)) as string);
						i = valueEnd;
						continue;
					}
				}
			}
			i = end;
		} else if (c === '{' || c === '[') {
			stack.push(c);
			i += 1;
		} else if (c === '}' || c === ']') {
			stack.pop();
			i += 1;
		} else {
			i += 1;
		}
	}
	return values;
}

/** Extensions and languages VS Code reads as JSON (its language service then follows a `$schema`). */
const jsonLanguages = new Set(['json', 'jsonc', 'jsonl', 'json5', 'snippets']);
const jsonExtensions = new Set([
	'json',
	'jsonc',
	'jsonl',
	'json5',
	'ndjson',
	'geojson',
	'jsonld',
	'webmanifest',
	'har',
	'topojson',
	'code-workspace',
	'code-snippets',
	'babelrc',
	'eslintrc',
	'jshintrc',
	'jscsrc',
	'swcrc',
]);

/**
 * What in a text attachment an editor's language service would fetch from the network when the
 * text is opened with its language: a JSON `"$schema"` that is not a local/file reference, an XML
 * document's external DTD (a DOCTYPE or ENTITY with PUBLIC, or SYSTEM naming a remote URI), an XML
 * schema location or xml-model on another host. Undefined when there is none. `language` is the one
 * the desk would set, `name` the file's name (VS Code also goes by its extension).
 */
export function externalReference(text: string, language: string | undefined, name: string): string | undefined {
	const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	const ext = extension(name);
	const jsonish = (language !== undefined && jsonLanguages.has(language)) || jsonExtensions.has(ext);
	const documents =
		language === 'jsonl' || ext === 'jsonl' || ext === 'ndjson'
			? source.split(/\r?\n/).filter((line) => line.trim() !== '')
			: [source];
	let parsedAll = true;
	for (const document of documents) {
		try {
			JSON.parse(document);
		} catch {
			parsedAll = false;
			continue;
		}
		const schema = topLevelStrings(document, '$schema').find((value) => !isLocalReference(value));
		if (schema !== undefined) {
			return `a JSON schema at ${schema}`;
		}
	}
	if (jsonish && !parsedAll && /\$schema|\\u0024/i.test(source)) {
		// Not JSON as written (comments, a slip): a lenient reader could still find a "$schema" in it.
		return 'a "$schema" the desk cannot read exactly (the JSON does not parse)';
	}
	if (language === 'html' || language === 'markdown') {
		return undefined;
	}
	for (const match of source.matchAll(/<!(DOCTYPE|ENTITY)\b[^>[]*?\b(PUBLIC|SYSTEM)\b\s*(?:(["'])([^"']*)\3)?/gi)) {
		if (match[2]!.toUpperCase() === 'PUBLIC' || !isLocalReference(match[4] ?? '//')) {
			return `an external ${match[1]!.toUpperCase() === 'DOCTYPE' ? 'DTD' : 'entity'} (${match[2]!.toUpperCase()}${match[4] ? ` ${match[4]}` : ''})`;
		}
	}
	for (const match of source.matchAll(/\b(?:noNamespaceSchemaLocation|schemaLocation)\s*=\s*(["'])([^"']*)\1/gi)) {
		const remote = match[2]!
			.split(/\s+/)
			.find((part) => part !== '' && !isLocalReference(part) && referenceScheme(part) !== 'urn');
		// schemaLocation pairs a namespace (often an http URI, never fetched) with a location: any remote part counts.
		if (remote !== undefined) {
			return `an XML schema at ${remote}`;
		}
	}
	const model = /<\?xml-model\b[^>]*\bhref\s*=\s*(["'])([^"']*)\1/i.exec(source);
	if (model && !isLocalReference(model[2]!)) {
		return `an XML model at ${model[2]!}`;
	}
	return undefined;
}
