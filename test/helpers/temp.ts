import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const cleanups: Array<() => void> = [];
process.on('exit', () => {
	for (const cleanup of cleanups.reverse()) {
		try {
			cleanup();
		} catch {
			// Best effort: the test outcome is already decided.
		}
	}
});

/** Runs `cleanup` when the test process exits (after every test in the file). */
export function atExit(cleanup: () => void): void {
	cleanups.push(cleanup);
}

/** A fresh temp folder, removed when the test file's process exits. */
export function tempDir(prefix = 'desk-test-'): string {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
	atExit(() => removeTree(dir));
	return dir;
}

/** Removes `dir`, giving its folders their write bit back when a read-only one (a mount) is in the way. */
function removeTree(dir: string): void {
	try {
		fs.rmSync(dir, { recursive: true, force: true });
	} catch {
		const writable = (folder: string): void => {
			fs.chmodSync(folder, 0o755);
			for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
				if (entry.isDirectory()) {
					writable(path.join(folder, entry.name));
				}
			}
		};
		writable(dir);
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** The project's root folder: the nearest one above this file with a package.json. */
export function findProjectRoot(): string {
	let dir = __dirname;
	while (!fs.existsSync(path.join(dir, 'package.json'))) {
		const parent = path.dirname(dir);
		if (parent === dir) {
			throw new Error('package.json not found above ' + __dirname);
		}
		dir = parent;
	}
	return dir;
}
