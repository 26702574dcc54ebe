import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findProgram, safePath } from './programs';

/** What a sandboxed process may see and write; every path absolute. */
export interface SandboxLayout {
	/** The one writable place of the run's files: the worktree, the shared checkout or the target folder. */
	workFolder: string;
	/** Folders inside workFolder that stay read-only (the repository's .git, .vscode) or hidden (.desk). */
	readOnlyInside: string[];
	hiddenInside: string[];
	/** The run's own home folder, shown as the home folder (writable, discarded with the run); an empty one when absent. */
	home?: string;
	/** Read-only mounts of the references, and what the agent's program needs to start. */
	readOnly: string[];
	/** Extra writable places the agent's settings name (they persist). */
	writable: string[];
	/** The task's outbox: writable, and visible even inside a hidden folder. */
	outbox?: string;
	/** The run's desk tools folder (its socket and wiring files), shown read-only at {@link sandboxIpcFolder}. */
	ipc?: string;
	network: boolean;
}

/** Where the desk tools folder is inside the sandbox: short, and the same for every run. */
export const sandboxIpcFolder = '/run/desk';

export interface SandboxStatus {
	available: boolean;
	/** Why not, when not: shown on the run record. */
	reason?: string;
	version?: string;
}

let probed: SandboxStatus | undefined;

/**
 * Is bubblewrap here and allowed to make namespaces? Checked once a process by running `true` in
 * a sandbox like the runs' own, so a machine where user namespaces are off says so plainly.
 */
export function sandboxStatus(): SandboxStatus {
	if (probed) {
		return probed;
	}
	try {
		const version = execFileSync(bwrap(), ['--version'], {
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'pipe'],
			timeout: 5000,
		}).trim();
		execFileSync(bwrap(), [...systemBinds(), '--unshare-all', '--die-with-parent', 'true'], {
			stdio: 'ignore',
			timeout: 10000,
		});
		probed = { available: true, version };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		probed = {
			available: false,
			reason:
				code === 'ENOENT'
					? 'bubblewrap (bwrap) is not installed'
					: `bubblewrap cannot make a sandbox here: ${firstLine((error as Error).message)}`,
		};
	}
	return probed;
}

/** The system folders every sandbox sees, read-only. */
function systemBinds(network = false): string[] {
	const args: string[] = [];
	for (const folder of ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/nix/store']) {
		if (fs.existsSync(folder)) {
			// /bin and /lib are links into /usr on merged-/usr systems; the link itself is recreated.
			const stat = fs.lstatSync(folder);
			if (stat.isSymbolicLink()) {
				args.push('--symlink', fs.readlinkSync(folder), folder);
			} else {
				args.push('--ro-bind', folder, folder);
			}
		}
	}
	args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', '/run');
	if (network) {
		// systemd-resolved systems link /etc/resolv.conf into /run: without it, no name resolves.
		try {
			if (fs.lstatSync('/etc/resolv.conf').isSymbolicLink()) {
				const real = fs.realpathSync('/etc/resolv.conf');
				if (real.startsWith('/run/')) {
					args.push('--ro-bind', path.dirname(real), path.dirname(real));
				}
			}
		} catch {
			// No resolver configured: nothing to show.
		}
	}
	return args;
}

/**
 * bwrap arguments that run `command` where the layout's folders are the only ones visible besides
 * the system's: the home folder is the run's own (or empty), the library and every other project
 * are absent, references are read-only and the network is cut unless allowed. Mount order matters
 * (a later mount covers an earlier one): extra folders first, then the work folder, then what is
 * read-only or hidden inside it, and the outbox last, since it lives inside the hidden `.desk/`.
 * A folder that would cover the home folder or the work folder is never bound.
 */
export function sandboxArgs(layout: SandboxLayout, env: Record<string, string>, command: string[]): string[] {
	const args = [
		...systemBinds(layout.network),
		'--unshare-user-try',
		'--unshare-pid',
		'--unshare-ipc',
		'--unshare-uts',
		'--unshare-cgroup-try',
		'--die-with-parent',
	];
	if (!layout.network) {
		args.push('--unshare-net');
	}
	if (layout.ipc) {
		// Over the sandbox's own /run (a tmpfs): the real folder's path, under the host's /tmp, is not shown.
		args.push('--ro-bind', layout.ipc, sandboxIpcFolder);
	}
	const home = os.homedir();
	if (layout.home) {
		args.push('--bind', layout.home, home);
	} else {
		args.push('--tmpfs', home);
	}
	const bindable = (folder: string) => exists(folder) && isSafeToBind(folder, layout.workFolder);
	for (const folder of layout.readOnly.filter(bindable)) {
		args.push('--ro-bind', folder, folder);
	}
	for (const folder of layout.writable.filter(bindable)) {
		args.push('--bind', folder, folder);
	}
	args.push('--bind', layout.workFolder, layout.workFolder);
	for (const folder of layout.readOnlyInside.filter(exists)) {
		args.push('--ro-bind', folder, folder);
	}
	for (const folder of layout.hiddenInside.filter(exists)) {
		args.push('--tmpfs', folder);
	}
	if (layout.outbox && exists(layout.outbox)) {
		args.push('--bind', layout.outbox, layout.outbox);
	}
	args.push('--clearenv');
	for (const [name, value] of Object.entries(env)) {
		args.push('--setenv', name, value);
	}
	args.push('--chdir', layout.workFolder, '--', ...command);
	return args;
}

/**
 * Starts bwrap with its arguments on a pipe (`--args 3`), not on its command line, so the secrets
 * in the environment it sets are not in its argv for every local user to read in /proc.
 */
export function spawnSandboxed(
	args: readonly string[],
	options: { cwd: string; env: Record<string, string>; stdin: 'pipe' | 'ignore' },
): ChildProcess {
	// bwrap reads options from the pipe; the command itself stays on its command line.
	const split = args.indexOf('--');
	const optionArgs = split < 0 ? args : args.slice(0, split);
	const command = split < 0 ? [] : args.slice(split);
	const child = spawn(bwrap(), ['--args', '3', ...command], {
		cwd: options.cwd,
		env: { ...options.env, PATH: safePath(options.env.PATH) },
		detached: true,
		stdio: [options.stdin, 'pipe', 'pipe', 'pipe'],
	});
	const argsPipe = child.stdio[3] as NodeJS.WritableStream | null;
	argsPipe?.on('error', () => undefined);
	argsPipe?.end(Buffer.from(optionArgs.map((a) => `${a}\0`).join(''), 'utf8'));
	return child;
}

/** Never bind the root, the home folder or a folder above it, or one that holds the work folder. */
function isSafeToBind(folder: string, workFolder: string): boolean {
	return !coversHome(folder) && !contains(path.resolve(folder), workFolder);
}

/** True when `p` is `folder` or inside it. */
export function contains(folder: string, p: string): boolean {
	return p === folder || p.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}

/** The root, the home folder or a folder above it: bound, it would cover the run's own home, so it never is. */
export function coversHome(folder: string, home = os.homedir()): boolean {
	const resolved = path.resolve(folder);
	return resolved === '/' || contains(resolved, home);
}

/**
 * Whether a file an agent's `homeFiles` names is copied into a run's home (which stands where the
 * home folder is): a regular file inside the home folder; a link is never followed.
 */
export function copiedIntoRunHome(file: string, home = os.homedir()): boolean {
	if (!insideHome(file, home)) {
		return false;
	}
	try {
		return fs.lstatSync(file).isFile();
	} catch {
		return false;
	}
}

/** True when `file` is below the home folder (not the home folder itself). */
export function insideHome(file: string, home = os.homedir()): boolean {
	const rel = path.relative(home, file);
	return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The paths of a setting (an agent's readPaths, writePaths, homeFiles), where `~` and `~/x` mean the home folder. */
export function expandHome(paths: readonly string[], home = os.homedir()): string[] {
	return paths.map((p) => (p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p));
}

/**
 * The folders a program needs visible to start when they are outside the system folders: the
 * folder its file really is in (a link on the PATH resolved), and the running Node's for scripts
 * that start with `#!/usr/bin/env node`. Never a parent of those: `~/.local` or the home folder
 * would show far more than the program.
 */
export function programFolders(command: string): string[] {
	const resolved = resolveCommand(command);
	if (!resolved) {
		return [];
	}
	const folders = new Set<string>([
		path.dirname(fs.realpathSync(resolved)),
		path.dirname(fs.realpathSync(process.execPath)),
	]);
	return [...folders].filter((f) => !isSystemFolder(f));
}

/** The file of an agent's or a check's program (see `findProgram`: absolute folders of PATH only). */
export function resolveCommand(command: string): string | undefined {
	return findProgram(command);
}

/** bubblewrap's file, found on the absolute folders of PATH (never in the folder the desk runs in). */
function bwrap(): string {
	const found = findProgram('bwrap');
	if (!found) {
		throw Object.assign(new Error('bwrap was not found'), { code: 'ENOENT' });
	}
	return found;
}

function isSystemFolder(folder: string): boolean {
	return ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/etc', '/opt', '/nix/store'].some(
		(s) => folder === s || folder.startsWith(`${s}/`),
	);
}

function exists(p: string): boolean {
	return fs.existsSync(p);
}

function firstLine(text: string): string {
	return (
		text
			.split('\n')
			.find((l) => l.trim() !== '')
			?.trim() ?? text
	);
}
