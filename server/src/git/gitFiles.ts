import * as fs from 'node:fs';

/**
 * Small files of a repository's `.git` folder (HEAD, refs, packed-refs, config, alternates), read
 * as a person's checkout may hold them: anyone who can write the repository can put a FIFO, a
 * device or a huge file there. Such a file is treated as absent instead of hanging or flooding
 * the desk, and links are not followed unless the caller says so.
 */
export function readGitFile(
	file: string,
	options: { maxBytes?: number; followLinks?: boolean } = {},
): Buffer | undefined {
	let fd: number;
	try {
		fd = fs.openSync(
			file,
			fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (options.followLinks ? 0 : fs.constants.O_NOFOLLOW),
		);
	} catch {
		return undefined;
	}
	try {
		const stat = fs.fstatSync(fd);
		const maxBytes = options.maxBytes ?? 1024 * 1024;
		if (!stat.isFile() || stat.size > maxBytes) {
			return undefined;
		}
		const buffer = Buffer.allocUnsafe(stat.size);
		let done = 0;
		while (done < buffer.length) {
			const read = fs.readSync(fd, buffer, done, buffer.length - done, done);
			if (read === 0) {
				break;
			}
			done += read;
		}
		return buffer.subarray(0, done);
	} catch {
		return undefined;
	} finally {
		fs.closeSync(fd);
	}
}

/** The identity of a file, to tell whether a cached parse of it is still good. */
export function fileIdentity(file: string): string | undefined {
	try {
		const stat = fs.statSync(file, { bigint: true });
		return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
	} catch {
		return undefined;
	}
}

/**
 * Values of a git config file, by lowercased `section.subsection.key` (the subsection keeps its
 * case, as git's does). Enough of git's syntax for the keys the desk reads: sections with and
 * without subsections, quoted values with escapes, comments and line continuations. `include`
 * directives are not followed.
 */
export function parseGitConfig(text: string): Map<string, string[]> {
	const values = new Map<string, string[]>();
	let section = '';
	const lines = text.replace(/\\\r?\n/g, '').split(/\r?\n/);
	for (const raw of lines) {
		let line = raw.trim();
		if (line === '' || line.startsWith('#') || line.startsWith(';')) {
			continue;
		}
		if (line.startsWith('[')) {
			const match = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
			if (!match) {
				section = '';
				continue;
			}
			const [, name, subsection] = match;
			const dotted = name!.toLowerCase();
			section = subsection !== undefined ? `${dotted}.${subsection.replace(/\\(.)/g, '$1')}` : dotted;
			line = match[3]!.trim();
			if (line === '') {
				continue;
			}
		}
		if (section === '') {
			continue;
		}
		const eq = line.indexOf('=');
		const key = (eq < 0 ? line : line.slice(0, eq)).trim().toLowerCase();
		if (!/^[a-z][a-z0-9-]*$/.test(key)) {
			continue;
		}
		const value = eq < 0 ? 'true' : unquote(line.slice(eq + 1));
		const full = `${section}.${key}`;
		values.set(full, [...(values.get(full) ?? []), value]);
	}
	return values;
}

function unquote(raw: string): string {
	let out = '';
	let quoted = false;
	for (let i = 0; i < raw.length; i++) {
		const c = raw[i]!;
		if (c === '"') {
			quoted = !quoted;
		} else if (c === '\\' && i + 1 < raw.length) {
			const n = raw[++i]!;
			out += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'b' ? '\b' : n;
		} else if ((c === '#' || c === ';') && !quoted) {
			break;
		} else {
			out += c;
		}
	}
	return out.trim();
}
