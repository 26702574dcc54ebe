import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Finding the programs the desk starts by name (git, bwrap, an agent, a check). A PATH entry that
 * is relative (`.`, `bin`, or empty, which means the current folder) names a folder relative to
 * wherever the program is started — for the desk that is the repository or a run's work folder,
 * so a `git` or `claude` file committed there would run in place of the real one. Only absolute
 * entries are searched, and the PATH handed to every child keeps only those.
 */

const fallbackPath = '/usr/local/bin:/usr/bin:/bin';

/** The absolute entries of a PATH value, in order, without duplicates. */
export function absolutePathEntries(value: string | undefined = process.env.PATH): string[] {
	const entries = (value ?? '').split(path.delimiter).filter((entry) => path.isAbsolute(entry));
	return [...new Set(entries)];
}

/** The PATH for a child process: the desk's own, relative entries removed. */
export function safePath(value: string | undefined = process.env.PATH): string {
	const entries = absolutePathEntries(value);
	return entries.length > 0 ? entries.join(path.delimiter) : fallbackPath;
}

/**
 * What every program a run starts (the agent, a check) finds in its environment before its own
 * additions: the safe PATH, HOME, the desk's LANG (else C.UTF-8), a dumb terminal and no colours.
 */
export function baseChildEnv(): Record<string, string> {
	return {
		PATH: safePath(),
		HOME: os.homedir(),
		LANG: process.env.LANG ?? 'C.UTF-8',
		TERM: 'dumb',
		NO_COLOR: '1',
	};
}

/**
 * The absolute file of `command`: an absolute path as it is; a bare name looked up in the absolute
 * folders of PATH. A relative path with a slash (`./agent`, `bin/agent`) names no file the desk can
 * know (it depends on the folder the program is started in) and is never found.
 */
export function findProgram(command: string, pathValue: string | undefined = process.env.PATH): string | undefined {
	if (command === '') {
		return undefined;
	}
	if (command.includes('/')) {
		return path.isAbsolute(command) && isExecutableFile(command) ? command : undefined;
	}
	for (const folder of absolutePathEntries(pathValue)) {
		const candidate = path.join(folder, command);
		if (isExecutableFile(candidate)) {
			return candidate;
		}
	}
	return undefined;
}

function isExecutableFile(file: string): boolean {
	try {
		fs.accessSync(file, fs.constants.X_OK);
		return fs.statSync(file).isFile();
	} catch {
		return false;
	}
}
