import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** What a sandboxed process may see and write; every path absolute. */
export interface SandboxLayout {
	/** The one writable place of the run's files: the worktree, the shared checkout or the target folder. */
	workFolder: string;
	/** Folders inside workFolder that stay read-only (the repository's .git) or hidden (.desk). */
	readOnlyInside: string[];
	hiddenInside: string[];
	/** Extra writable places: the outbox, the agent's own login folder. */
	writable: string[];
	/** Read-only mounts of the references, and what the agent's program needs to start. */
	readOnly: string[];
	network: boolean;
}

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
		const version = execFileSync('bwrap', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 }).trim();
		execFileSync('bwrap', [...systemBinds(), '--unshare-all', '--die-with-parent', 'true'], { stdio: 'ignore', timeout: 10000 });
		probed = { available: true, version };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		probed = { available: false, reason: code === 'ENOENT' ? 'bubblewrap (bwrap) is not installed' : `bubblewrap cannot make a sandbox here: ${firstLine((error as Error).message)}` };
	}
	return probed;
}

/** The system folders every sandbox sees, read-only. */
function systemBinds(): string[] {
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
	return args;
}

/**
 * bwrap arguments that run `command` where the layout's folders are the only ones visible besides
 * the system's: the home folder is an empty one (but for the agent's own paths), the library and
 * every other project are absent, references are read-only and the network is cut unless allowed.
 */
export function sandboxArgs(layout: SandboxLayout, env: Record<string, string>, command: string[]): string[] {
	const args = [...systemBinds(), '--unshare-user-try', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent'];
	if (!layout.network) {
		args.push('--unshare-net');
	}
	const home = os.homedir();
	args.push('--tmpfs', home);
	// Order matters: a later mount covers an earlier one. The work folder first, then what is
	// read-only or hidden inside it, then the extra folders (the outbox lives inside the hidden
	// .desk/ of a shared checkout and must show through it).
	args.push('--bind', layout.workFolder, layout.workFolder);
	for (const folder of layout.readOnlyInside.filter(exists)) {
		args.push('--ro-bind', folder, folder);
	}
	for (const folder of layout.hiddenInside.filter(exists)) {
		args.push('--tmpfs', folder);
	}
	// Parents of bound folders are made by bwrap as empty directories, so nothing beside them shows.
	for (const folder of layout.readOnly.filter(exists)) {
		args.push('--ro-bind', folder, folder);
	}
	for (const folder of layout.writable.filter(exists)) {
		args.push('--bind', folder, folder);
	}
	args.push('--clearenv');
	for (const [name, value] of Object.entries(env)) {
		args.push('--setenv', name, value);
	}
	args.push('--chdir', layout.workFolder, '--', ...command);
	return args;
}

/** `~` and `~/x` in settings mean the home folder. */
export function expandHome(p: string): string {
	return p === '~' ? os.homedir() : p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
}

/**
 * The folder a program's install lives in, when it is outside the system folders (a Node install
 * under the home folder, say): the sandbox must show it read-only or the agent cannot start.
 */
export function programFolders(command: string): string[] {
	const resolved = resolveCommand(command);
	if (!resolved) {
		return [];
	}
	const folders = new Set<string>();
	const real = fs.realpathSync(resolved);
	for (const file of [resolved, real]) {
		// bin/x → the prefix that holds bin/ and lib/ (node_modules of a global npm install).
		const bin = path.dirname(file);
		folders.add(path.basename(bin) === 'bin' ? path.dirname(bin) : bin);
	}
	// A script's interpreter (#!/usr/bin/env node) must be visible too: the running Node is a good guess.
	const nodeBin = path.dirname(process.execPath);
	folders.add(path.basename(nodeBin) === 'bin' ? path.dirname(nodeBin) : nodeBin);
	return [...folders].filter((f) => !isSystemFolder(f));
}

export function resolveCommand(command: string): string | undefined {
	if (command.includes('/')) {
		return fs.existsSync(command) ? path.resolve(command) : undefined;
	}
	for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
		const candidate = path.join(folder, command);
		try {
			fs.accessSync(candidate, fs.constants.X_OK);
			if (fs.statSync(candidate).isFile()) {
				return candidate;
			}
		} catch {
			// not here
		}
	}
	return undefined;
}

function isSystemFolder(folder: string): boolean {
	return ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/etc', '/opt', '/nix/store'].some((s) => folder === s || folder.startsWith(`${s}/`));
}

function exists(p: string): boolean {
	return fs.existsSync(p);
}

function firstLine(text: string): string {
	return text.split('\n').find((l) => l.trim() !== '')?.trim() ?? text;
}
