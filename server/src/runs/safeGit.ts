import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DeskError } from '../core/errors';
import { hasNoLinkOnTheWay } from '../store/folderFiles';

/** Paths git reports, with git's status letter. */
export interface TreeChange {
	path: string;
	change_type: 'added' | 'modified' | 'deleted';
	/** undefined for a binary file. */
	lines_added: number | undefined;
	lines_deleted: number | undefined;
}

/**
 * Native git for the runs, run so that nothing the repository configures executes: hooks, the
 * fsmonitor, filter drivers (clean, smudge, process), external diff and textconv programs and
 * signing are all switched off on the command line, which outranks every config file. Only
 * plumbing touches objects, indexes and refs; a commit never goes through `git commit`.
 */
export class SafeGit {
	private constructor(
		/** Any folder inside the repository (its top, or a worktree of it). */
		readonly cwd: string,
		private readonly overrides: string[],
	) {}

	static async open(cwd: string): Promise<SafeGit> {
		const base = new SafeGit(cwd, baseOverrides);
		// Filter drivers are named by the repository; each one found is switched off by name.
		const listed = await base.run(['config', '--name-only', '--get-regexp', '^filter\\.'], { okCodes: [0, 1] });
		const drivers = new Set<string>();
		for (const key of listed.toString('utf8').split('\n')) {
			const match = /^filter\.(.+)\.[^.]+$/.exec(key.trim());
			if (match) {
				drivers.add(match[1]!);
			}
		}
		const filterOverrides = [...drivers].flatMap((name) => ['-c', `filter.${name}.clean=`, '-c', `filter.${name}.smudge=`, '-c', `filter.${name}.process=`, '-c', `filter.${name}.required=false`]);
		return new SafeGit(cwd, [...baseOverrides, ...filterOverrides]);
	}

	/** The same settings, run from another folder of the repository (a worktree). */
	at(cwd: string): SafeGit {
		return new SafeGit(cwd, this.overrides);
	}

	async run(args: string[], options: { input?: string | Buffer; env?: Record<string, string>; okCodes?: number[] } = {}): Promise<Buffer> {
		const okCodes = options.okCodes ?? [0];
		return new Promise<Buffer>((resolve, reject) => {
			const child = spawn('git', [...this.overrides, ...args], {
				cwd: this.cwd,
				env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', ...options.env },
				stdio: ['pipe', 'pipe', 'pipe'],
			});
			const out: Buffer[] = [];
			const err: Buffer[] = [];
			child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
			child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
			child.on('error', (error) => reject(new DeskError('git.failed', `git could not be started: ${error.message}`, { args })));
			child.on('close', (code) => {
				if (code !== null && okCodes.includes(code)) {
					resolve(Buffer.concat(out));
				} else {
					const stderr = Buffer.concat(err).toString('utf8').trim();
					reject(new DeskError('git.failed', `git ${args[0]} failed${stderr ? `: ${stderr.split('\n').slice(-3).join(' ')}` : ` (exit ${code})`}`, { args, exit: code, stderr }));
				}
			});
			child.stdin.on('error', () => undefined);
			child.stdin.end(options.input ?? '');
		});
	}

	async text(args: string[], options: { input?: string | Buffer; env?: Record<string, string> } = {}): Promise<string> {
		return (await this.run(args, options)).toString('utf8').trim();
	}

	async resolveCommit(rev: string): Promise<string> {
		return this.text(['rev-parse', '--verify', '--end-of-options', `${rev}^{commit}`]);
	}

	/** The checked-out branch's ref, or undefined on a detached HEAD. */
	async currentBranch(): Promise<string | undefined> {
		const ref = (await this.run(['symbolic-ref', '-q', 'HEAD'], { okCodes: [0, 1] })).toString('utf8').trim();
		return ref === '' ? undefined : ref;
	}

	/**
	 * The tree of a folder as it is now, as git would see it with every change added: the files of
	 * `base` plus untracked files that are not ignored, minus deleted ones. Built in a temporary index
	 * so the checkout's own index is never touched; files are hashed without filters. Paths under one
	 * of `exclude` (what the desk itself put there, such as installed skills) are left out.
	 */
	async treeOfFolder(folder: string, base: string, exclude: readonly string[] = []): Promise<string> {
		const git = this.at(folder);
		return withTemporaryIndex(async (env) => {
			await git.run(['read-tree', base], { env });
			const staged = await git.run(['ls-files', '-z', '-s'], { env });
			const untracked = await git.run(['ls-files', '-z', '--others', '--exclude-standard'], { env });
			const entries = new Map<string, string>();
			for (const record of splitZ(staged)) {
				const tab = record.indexOf('\t');
				const [mode] = record.slice(0, tab).split(' ');
				entries.set(record.slice(tab + 1), mode!);
			}
			const paths = [...entries.keys(), ...splitZ(untracked)].filter((p) => !exclude.some((e) => p === e || p.startsWith(`${e}/`)));
			const toHash: Array<{ path: string; mode: string }> = [];
			const lines: string[] = [];
			for (const rel of paths) {
				if (entries.get(rel) === '160000') {
					continue; // A submodule stays as the base has it.
				}
				let stat: fs.Stats;
				try {
					// A file reached through a folder that is now a link (an agent's `ln -s ~ pkg`) is not
					// read: git would hash what the link points to. The path counts as deleted, the link
					// itself appears as an untracked entry of its own.
					if (!hasNoLinkOnTheWay(folder, rel)) {
						throw new Error('a link on the way');
					}
					stat = fs.lstatSync(path.join(folder, rel));
				} catch {
					lines.push(`0 0000000000000000000000000000000000000000\t${rel}`);
					continue;
				}
				if (stat.isSymbolicLink()) {
					const target = fs.readlinkSync(path.join(folder, rel), { encoding: 'buffer' });
					const oid = await git.text(['hash-object', '-w', '--stdin'], { input: target });
					lines.push(`120000 ${oid}\t${rel}`);
				} else if (stat.isFile() && rel.includes('\n')) {
					// --stdin-paths is line-based: such a name is hashed from its own descriptor.
					const oid = await git.text(['hash-object', '-w', '--no-filters', '--stdin'], { input: readNoFollow(path.join(folder, rel)) });
					lines.push(`${stat.mode & 0o111 ? '100755' : '100644'} ${oid}\t${rel}`);
				} else if (stat.isFile()) {
					toHash.push({ path: rel, mode: stat.mode & 0o111 ? '100755' : '100644' });
				} else if (!stat.isDirectory()) {
					lines.push(`0 0000000000000000000000000000000000000000\t${rel}`);
				}
			}
			if (toHash.length > 0) {
				const oids = (await git.text(['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: toHash.map((f) => f.path).join('\n') + '\n' })).split('\n');
				toHash.forEach((file, i) => lines.push(`${file.mode} ${oids[i]}\t${file.path}`));
			}
			if (lines.length > 0) {
				await git.run(['update-index', '-z', '--index-info'], { env, input: lines.map((l) => `${l}\0`).join('') });
			}
			return git.text(['write-tree'], { env });
		});
	}

	/** Files that differ between two trees (or commits), with line counts; renames are a delete and an add. */
	async changes(from: string, to: string): Promise<TreeChange[]> {
		const status = splitZ(await this.run(['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to]));
		const numstat = splitZ(await this.run(['diff-tree', '-r', '-z', '--no-renames', '--numstat', from, to]));
		const counts = new Map<string, [number | undefined, number | undefined]>();
		for (let i = 0; i < numstat.length; i += 1) {
			const [added, deleted, rel] = numstat[i]!.split('\t');
			counts.set(rel!, [added === '-' ? undefined : Number(added), deleted === '-' ? undefined : Number(deleted)]);
		}
		const result: TreeChange[] = [];
		for (let i = 0; i + 1 < status.length; i += 2) {
			const letter = status[i]!;
			const rel = status[i + 1]!;
			const [added, deleted] = counts.get(rel) ?? [0, 0];
			result.push({ path: rel, change_type: letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified', lines_added: added, lines_deleted: deleted });
		}
		return result;
	}

	/** The unified diff between two trees, binary files included so it can be applied again. */
	async diff(from: string, to: string): Promise<Buffer> {
		return this.run(['diff-tree', '-r', '-p', '--binary', '--full-index', '--no-renames', '--no-ext-diff', '--no-textconv', '--no-color', from, to]);
	}

	/** A tree made by applying `patch` to the tree of `base`, or undefined when it does not apply. */
	async applyToTree(base: string, patch: Buffer): Promise<string | undefined> {
		if (patch.length === 0) {
			return this.text(['rev-parse', `${base}^{tree}`]);
		}
		return withTemporaryIndex(async (env) => {
			await this.run(['read-tree', base], { env });
			try {
				await this.run(['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], { env, input: patch });
			} catch {
				return undefined;
			}
			return this.text(['write-tree'], { env });
		});
	}

	async commitTree(tree: string, parents: string[], message: string, identity: CommitIdentity): Promise<string> {
		return this.text(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], {
			input: message,
			env: {
				GIT_AUTHOR_NAME: identity.author.name,
				GIT_AUTHOR_EMAIL: identity.author.email,
				GIT_COMMITTER_NAME: identity.committer.name,
				GIT_COMMITTER_EMAIL: identity.committer.email,
			},
		});
	}

	/** Moves `ref` to `to` only if it still points at `from` (all zeros: only if it does not exist). */
	async updateRef(ref: string, to: string, from: string, reason: string): Promise<void> {
		await this.run(['update-ref', '-m', reason, ref, to, from]);
	}

	/** The person's git identity (user.name and user.email), or undefined when none is configured. */
	async personIdentity(): Promise<{ name: string; email: string } | undefined> {
		const ident = (await this.run(['var', 'GIT_COMMITTER_IDENT'], { okCodes: [0, 128] }).catch(() => Buffer.alloc(0))).toString('utf8').trim();
		const match = /^(.*) <([^>]*)> \d+ [+-]\d{4}$/.exec(ident);
		return match && match[1] && match[2] ? { name: match[1], email: match[2] } : undefined;
	}

	/**
	 * Puts the index entries of `paths` at their state in `commit` (removed when absent there), so a
	 * checkout whose files already hold a landed change does not show it as staged in reverse.
	 */
	async syncIndexPaths(commit: string, paths: readonly string[]): Promise<void> {
		if (paths.length === 0) {
			return;
		}
		const listed = splitZ(await this.run(['ls-tree', '-z', '-r', '--full-tree', commit, '--', ...paths]));
		const present = new Set<string>();
		const lines = listed.map((record) => {
			const tab = record.indexOf('\t');
			const [mode, , oid] = record.slice(0, tab).split(' ');
			present.add(record.slice(tab + 1));
			return `${mode} ${oid}\t${record.slice(tab + 1)}\0`;
		});
		for (const rel of paths) {
			if (!present.has(rel)) {
				lines.push(`0 0000000000000000000000000000000000000000\t${rel}\0`);
			}
		}
		await this.run(['update-index', '-z', '--index-info'], { input: lines.join('') });
		// Refresh the stat data of those entries so `git status` is clean for them at once.
		await this.run(['update-index', '-q', '--refresh'], { okCodes: [0, 1] });
	}

	/** Adds a linked worktree for a new branch at `base`, its files written by read-tree without filters or hooks. */
	async addWorktree(folder: string, branch: string, base: string): Promise<void> {
		await this.run(['worktree', 'add', '--no-checkout', '-b', branch, folder, base]);
		await this.at(folder).run(['read-tree', '-u', '--reset', 'HEAD']);
	}

	/** Removes a linked worktree's folder and git's record of it; the branch stays. */
	async removeWorktree(folder: string): Promise<void> {
		fs.rmSync(folder, { recursive: true, force: true });
		await this.run(['worktree', 'prune'], { okCodes: [0, 1, 128] }).catch(() => undefined);
	}
}

export interface CommitIdentity {
	author: { name: string; email: string };
	committer: { name: string; email: string };
}

const baseOverrides = [
	'-c', 'core.hooksPath=/dev/null',
	'-c', 'core.fsmonitor=false',
	'-c', 'core.untrackedCache=false',
	'-c', 'commit.gpgSign=false',
	'-c', 'diff.external=',
	'-c', 'core.pager=cat',
	'-c', 'protocol.allow=never',
];

function readNoFollow(file: string): Buffer {
	const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
	try {
		if (!fs.fstatSync(fd).isFile()) {
			return Buffer.alloc(0);
		}
		return fs.readFileSync(fd);
	} finally {
		fs.closeSync(fd);
	}
}

function splitZ(bytes: Buffer): string[] {
	const text = bytes.toString('utf8');
	const parts = text.split('\0');
	if (parts[parts.length - 1] === '') {
		parts.pop();
	}
	return parts.map((p) => p.replace(/^\n/, ''));
}

async function withTemporaryIndex<T>(work: (env: Record<string, string>) => Promise<T>): Promise<T> {
	const file = path.join(os.tmpdir(), `agent-desk-index-${process.pid}-${randomBytes(6).toString('hex')}`);
	try {
		return await work({ GIT_INDEX_FILE: file });
	} finally {
		fs.rmSync(file, { force: true });
		fs.rmSync(`${file}.lock`, { force: true });
	}
}
