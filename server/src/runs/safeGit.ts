import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DeskError } from '../core/errors';
import { adoptedLocation, adoptionOf, foreignGitDir, locateGitDir, type GitDirLocation } from '../git/gitDir';
import { ConfinedDir } from '../store/confinedDir';
import { removeTreeInFolder } from '../store/folderFiles';
import { findProgram, safePath } from './programs';

/** Paths git reports, with git's status letter. */
export interface TreeChange {
	path: string;
	change_type: 'added' | 'modified' | 'deleted';
	/** undefined for a binary file. */
	lines_added: number | undefined;
	lines_deleted: number | undefined;
}

/**
 * The git arguments of a PatchSet's diff from tree `from` to tree `to` (SafeGit.diff): every file,
 * binary ones included and full blob ids so it applies again, no renames, no external diff or
 * textconv program, no colour.
 */
export function diffArgs(from: string, to: string): string[] {
	return [
		'diff-tree',
		'-r',
		'-p',
		'--binary',
		'--full-index',
		'--no-renames',
		'--no-ext-diff',
		'--no-textconv',
		'--no-color',
		from,
		to,
	];
}

/**
 * Native git for the desk, run so that no program the repository (or anything else) configures
 * ever executes. Before each command the configured keys are listed (`git config --includes
 * --list`, in the same folder and with the same environment as the command, so includes and
 * conditional includes are followed as the command itself will follow them), and every key that
 * names a program — each filter driver's clean, smudge and process, each diff driver's textconv
 * and command, each merge driver, credential helper, gpg program, pager, protocol, config hook —
 * is overridden by its exact name through GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n,
 * which outrank every config file and, unlike `-c key=value`, never split a name at `=`. Keys
 * with fixed names (hooks, fsmonitor, diff.external, ssh, editors, askpass, signing) are
 * overridden always. Inherited GIT_* variables are dropped (all but the identity ones), git is
 * found on the absolute folders of PATH only, and only plumbing touches objects, indexes and
 * refs; a commit never goes through `git commit`.
 */
export class SafeGit {
	private constructor(
		/** The top of the work tree git runs on (the repository's, or a worktree's of it). */
		readonly cwd: string,
		/** Its git folder, given to git explicitly (`--git-dir`, `--work-tree`): git never looks for one. */
		readonly location: GitDirLocation,
		/** The configured keys listed at the start of one operation of several commands; undefined: listed before each command. */
		private readonly keys?: readonly string[],
	) {}

	/**
	 * Git on the work tree whose top is `cwd`, in the git folder `location` names (the one adopted:
	 * Library.gitLocation); without one, where `.git` points when the adoption rule takes it.
	 */
	static async open(cwd: string, location: GitDirLocation = adoptedLocation(cwd)): Promise<SafeGit> {
		gitProgram();
		return new SafeGit(cwd, location);
	}

	/**
	 * The same settings, run on a linked worktree of the same repository (a run's). Its `.git` is in
	 * an agent's reach: it must name a worktree folder of this repository that names it back, or
	 * `git.foreignGitDir`.
	 */
	at(cwd: string): SafeGit {
		if (cwd === this.cwd) {
			return new SafeGit(cwd, this.location);
		}
		const location = locateGitDir(cwd);
		if (
			!location ||
			location.commonDir !== this.location.commonDir ||
			location.gitDir === location.commonDir ||
			!adoptionOf(location, [this.location.commonDir]).adopted
		) {
			const found = location ?? {
				top: cwd,
				gitDir: '(none)',
				commonDir: '(none)',
				shape: 'file' as const,
				alternates: [],
			};
			throw foreignGitDir(found, {
				reason: `it is not a worktree of the repository at ${this.location.commonDir}`,
				outside: [found.gitDir],
			});
		}
		return new SafeGit(cwd, location);
	}

	/** The config keys git sees in this folder (every scope, includes followed), as git spells them. */
	async configuredKeys(): Promise<string[]> {
		const listed = await spawnGit(
			this.cwd,
			this.location,
			['config', '--includes', '--null', '--name-only', '--list'],
			gitEnvironment(neutralisers([])),
			{},
		);
		return listed
			.toString('utf8')
			.split('\0')
			.filter((key) => key !== '');
	}

	/**
	 * The same folder with its keys listed once, for the commands of one operation that change
	 * neither config, nor HEAD, nor the files config is read from (a temporary index, objects).
	 */
	async pinned(): Promise<SafeGit> {
		return new SafeGit(this.cwd, this.location, await this.configuredKeys());
	}

	async run(
		args: string[],
		options: { input?: string | Buffer | readonly Buffer[]; env?: Record<string, string>; okCodes?: number[] } = {},
	): Promise<Buffer> {
		const env = gitEnvironment(neutralisers(this.keys ?? (await this.configuredKeys())), options.env);
		return spawnGit(this.cwd, this.location, args, env, options);
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
	 * so the checkout's own index is never touched. Paths under one of `exclude` (what the desk itself
	 * put there, such as installed skills) are left out.
	 *
	 * Git never opens a file of the folder: every file is read here through folder descriptors
	 * (ConfinedDir: one component at a time, never through a link), so a folder the agent swaps for a
	 * link while the tree is made leads nowhere, and its path counts as deleted. The bytes read are the
	 * blob, without filters (what `git hash-object --no-filters` stores); blobs the base does not
	 * already hold at that path are handed to `git fast-import`, which never reads a path either.
	 */
	async treeOfFolder(folder: string, base: string, exclude: readonly string[] = []): Promise<string> {
		const git = await this.at(folder).pinned();
		const format = await git.text(['rev-parse', '--show-object-format']);
		if (format !== 'sha1' && format !== 'sha256') {
			throw new DeskError('git.failed', `The repository's object format ${JSON.stringify(format)} is not known.`, {
				format,
			});
		}
		return withTemporaryIndex(async (env) => {
			await git.run(['read-tree', base], { env });
			const staged = await git.run(['ls-files', '-z', '-s'], { env });
			const untracked = await git.run(['ls-files', '-z', '--others', '--exclude-standard'], { env });
			const entries = new Map<string, { mode: string; oid: string }>();
			for (const record of splitZ(staged)) {
				const tab = record.indexOf('\t');
				const [mode, oid] = record.slice(0, tab).split(' ');
				entries.set(record.slice(tab + 1), { mode: mode!, oid: oid! });
			}
			const paths = [...entries.keys(), ...splitZ(untracked)].filter(
				(p) => !exclude.some((e) => p === e || p.startsWith(`${e}/`)),
			);
			const lines: string[] = [];
			const blobs = new BlobWriter(git, format);
			const folders = new ConfinedFolders(folder);
			try {
				for (const rel of paths) {
					if (entries.get(rel)?.mode === '160000') {
						continue; // A submodule stays as the base has it.
					}
					// A file reached through a folder that is now a link (an agent's `ln -s ~ pkg`, even
					// one swapped in while this runs) is not read: the path counts as deleted, the link
					// itself appears as an untracked entry of its own.
					const found = folders.read(rel);
					if (found.kind === 'folder') {
						continue;
					}
					if (found.kind === 'none') {
						lines.push(`0 ${'0'.repeat(format === 'sha1' ? 40 : 64)}\t${rel}`);
						continue;
					}
					const oid = await blobs.add(found.bytes, entries.get(rel)?.oid);
					lines.push(`${found.kind === 'link' ? '120000' : found.executable ? '100755' : '100644'} ${oid}\t${rel}`);
				}
				await blobs.flush();
			} finally {
				folders.close();
			}
			if (lines.length > 0) {
				await git.run(['update-index', '-z', '--index-info'], { env, input: lines.map((l) => `${l}\0`).join('') });
			}
			return git.text(['write-tree'], { env });
		});
	}

	/** Files that differ between two trees (or commits), with line counts; renames are a delete and an add. */
	async changes(from: string, to: string): Promise<TreeChange[]> {
		const git = await this.pinned();
		const status = splitZ(await git.run(['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to]));
		const numstat = splitZ(await git.run(['diff-tree', '-r', '-z', '--no-renames', '--numstat', from, to]));
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
			result.push({
				path: rel,
				change_type: letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified',
				lines_added: added,
				lines_deleted: deleted,
			});
		}
		return result;
	}

	/** The unified diff between two trees, binary files included so it can be applied again. */
	async diff(from: string, to: string): Promise<Buffer> {
		return this.run(diffArgs(from, to));
	}

	/** A tree made by applying `patch` to the tree of `base`, or undefined when it does not apply. */
	async applyToTree(base: string, patch: Buffer): Promise<string | undefined> {
		if (patch.length === 0) {
			return this.text(['rev-parse', `${base}^{tree}`]);
		}
		const git = await this.pinned();
		return withTemporaryIndex(async (env) => {
			await git.run(['read-tree', base], { env });
			try {
				await git.run(['apply', '--cached', '--binary', '--whitespace=nowarn', '-'], { env, input: patch });
			} catch {
				return undefined;
			}
			return git.text(['write-tree'], { env });
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

	/**
	 * The tree of `base` (none: the empty tree) with `rel` a regular file of `bytes`, or without it
	 * (undefined), made in a temporary index: the blob is written from the bytes given, so git opens
	 * no file of the work tree and runs no filter.
	 */
	async treeWithFile(base: string | undefined, rel: string, bytes: Buffer | undefined): Promise<string> {
		const git = await this.pinned();
		return withTemporaryIndex(async (env) => {
			await git.run(base === undefined ? ['read-tree', '--empty'] : ['read-tree', base], { env });
			if (bytes === undefined) {
				await git.run(['update-index', '--force-remove', '--', rel], { env });
			} else {
				const oid = await git.text(['hash-object', '-w', '--no-filters', '--stdin'], { input: bytes });
				await git.run(['update-index', '--add', '--cacheinfo', `100644,${oid},${rel}`], { env });
			}
			return git.text(['write-tree'], { env });
		});
	}

	/** Moves `ref` to `to` only if it still points at `from` (all zeros: only if it does not exist). */
	async updateRef(ref: string, to: string, from: string, reason: string): Promise<void> {
		await this.run(['update-ref', '-m', reason, ref, to, from]);
	}

	/** The person's git identity (user.name and user.email), or undefined when none is configured. */
	/**
	 * Who a commit of the desk's (a landing, a checkpoint, a rollback) is by: git's own identity here
	 * (the repository's configuration, else the person's, else GIT_COMMITTER_NAME/EMAIL), else `given`
	 * (what the person told the editor once). Neither: `run.noIdentity`, never a made-up one.
	 */
	async commitPerson(given?: { name: string; email: string }): Promise<{ name: string; email: string }> {
		const person = (await this.personIdentity()) ?? given;
		if (!person) {
			throw new DeskError(
				'run.noIdentity',
				'Git has no identity to commit with here: set your name and email (git config --global user.name "…" and user.email "…", or in this repository without --global), or give them to the editor when it asks.',
				{},
			);
		}
		return person;
	}

	async personIdentity(): Promise<{ name: string; email: string } | undefined> {
		const ident = (await this.run(['var', 'GIT_COMMITTER_IDENT'], { okCodes: [0, 128] }).catch(() => Buffer.alloc(0)))
			.toString('utf8')
			.trim();
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
		// The zero id has the length of the repository's ids (40 for sha1, 64 for sha256).
		const zero = paths.some((rel) => !present.has(rel)) ? '0'.repeat((await this.resolveCommit(commit)).length) : '';
		for (const rel of paths) {
			if (!present.has(rel)) {
				lines.push(`0 ${zero}\t${rel}\0`);
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
		// Through folder descriptors, never following a folder of it swapped for a link.
		removeTreeInFolder(path.dirname(folder), path.basename(folder));
		await this.run(['worktree', 'prune'], { okCodes: [0, 1, 128] }).catch(() => undefined);
	}
}

export interface CommitIdentity {
	author: { name: string; email: string };
	committer: { name: string; email: string };
}

/** Inherited variables git reads that are kept: who the person is, and when. */
const keptGitVariables = new Set([
	'GIT_AUTHOR_NAME',
	'GIT_AUTHOR_EMAIL',
	'GIT_AUTHOR_DATE',
	'GIT_COMMITTER_NAME',
	'GIT_COMMITTER_EMAIL',
	'GIT_COMMITTER_DATE',
]);

/** Other inherited variables that name a program git may start; git's own variables set below outrank most of them. */
const droppedVariables = new Set(['PAGER', 'EDITOR', 'VISUAL', 'SSH_ASKPASS']);

/** Variables the desk sets for every git command. */
const fixedVariables: Record<string, string> = {
	GIT_TERMINAL_PROMPT: '0',
	GIT_OPTIONAL_LOCKS: '0',
	// Replace refs would make git read other objects than the desk's own reader of the repository.
	GIT_NO_REPLACE_OBJECTS: '1',
	// Set (even empty) each of these outranks its config key: no pager, no editor, no askpass, no
	// ssh or proxy program, and an allow-list of protocols that names none.
	GIT_PAGER: '',
	GIT_EDITOR: ':',
	GIT_SEQUENCE_EDITOR: ':',
	GIT_ASKPASS: '',
	GIT_SSH_COMMAND: '',
	GIT_PROXY_COMMAND: '',
	GIT_ALLOW_PROTOCOL: '',
	LC_ALL: 'C',
};

/** Keys with fixed names that name a program (or turn one on): overridden for every command. */
const fixedOverrides: Array<[string, string]> = [
	['core.hooksPath', '/dev/null'],
	['core.fsmonitor', 'false'],
	['core.untrackedCache', 'false'],
	['core.pager', ''],
	['core.editor', ':'],
	['sequence.editor', ':'],
	['core.askPass', ''],
	['core.sshCommand', ''],
	['core.alternateRefsCommand', ''],
	['diff.external', ''],
	['interactive.diffFilter', ''],
	['commit.gpgSign', 'false'],
	['tag.gpgSign', 'false'],
	['log.showSignature', 'false'],
	['gpg.program', ''],
	['gpg.openpgp.program', ''],
	['gpg.x509.program', ''],
	['gpg.ssh.program', ''],
	['gpg.ssh.defaultKeyCommand', ''],
	// An empty value empties the list of helpers collected so far.
	['credential.helper', ''],
	['uploadpack.packObjectsHook', ''],
	['submodule.recurse', 'false'],
	['protocol.allow', 'never'],
	...['file', 'git', 'ssh', 'http', 'https', 'ext'].map((name): [string, string] => [
		`protocol.${name}.allow`,
		'never',
	]),
];

/**
 * Per section of `section.<name>.variable` keys: the variables that name a program, and the value
 * that switches each off (filter drivers and config hooks are handled whole, in `neutralisers`).
 */
// Maps, not objects: the section and variable names come from the repository's config, and a name
// such as `constructor` must find nothing.
const programVariables: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(
	Object.entries({
		diff: { textconv: '', command: '' },
		merge: { driver: '' },
		credential: { helper: '' },
		gpg: { program: '', defaultkeycommand: '' },
		protocol: { allow: 'never' },
		remote: { uploadpack: 'git-upload-pack', receivepack: 'git-receive-pack', vcs: '' },
		difftool: { cmd: '', path: '' },
		mergetool: { cmd: '', path: '' },
		browser: { cmd: '', path: '' },
		man: { cmd: '', path: '' },
		guitool: { cmd: '' },
		sendemail: { tocmd: '', cccmd: '', sendmailcmd: '', smtpserver: '' },
	}).map(([section, variables]) => [section, new Map(Object.entries(variables))]),
);

/**
 * The overrides for a list of configured keys: the fixed ones, then one for each key (or driver)
 * the config names that runs a program, by its exact name. A key is `section.variable` or
 * `section.<subsection>.variable`; the subsection is the part between the first and the last dot
 * and may hold anything but a newline (`=`, dots, spaces, quotes).
 */
export function neutralisers(keys: readonly string[]): Array<[string, string]> {
	const result = new Map<string, string>(fixedOverrides);
	const set = (key: string, value: string) => result.set(key, value);
	for (const key of keys) {
		const first = key.indexOf('.');
		const last = key.lastIndexOf('.');
		if (first < 0) {
			continue;
		}
		const section = key.slice(0, first).toLowerCase();
		const variable = key.slice(last + 1).toLowerCase();
		const sub = first === last ? undefined : key.slice(first + 1, last);
		if (sub === undefined) {
			if (section === 'pager') {
				set(key, 'false');
			} else if (section === 'sendemail' && programVariables.get('sendemail')!.has(variable)) {
				set(key, '');
			}
			continue;
		}
		const prefix = `${section}.${sub}.`;
		if (section === 'filter') {
			// Every driver named, whatever key of it is set: an empty program is no filter.
			set(`${prefix}clean`, '');
			set(`${prefix}smudge`, '');
			set(`${prefix}process`, '');
			set(`${prefix}required`, 'false');
		} else if (section === 'hook') {
			// Hooks named in config (git 2.54 and later): no command, and switched off.
			set(`${prefix}command`, '');
			set(`${prefix}enabled`, 'false');
		} else {
			const value = programVariables.get(section)?.get(variable);
			if (value !== undefined) {
				set(key, value);
			}
		}
	}
	return [...result];
}

/** The environment of one git command: the desk's own minus inherited GIT_* variables, plus the overrides. */
export function gitEnvironment(
	overrides: ReadonlyArray<readonly [string, string]>,
	extra: Record<string, string> = {},
): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [name, value] of Object.entries(process.env)) {
		if (
			value !== undefined &&
			!(name.startsWith('GIT_') && !keptGitVariables.has(name)) &&
			!droppedVariables.has(name)
		) {
			env[name] = value;
		}
	}
	Object.assign(env, fixedVariables, { PATH: safePath() });
	env.GIT_CONFIG_COUNT = String(overrides.length);
	overrides.forEach(([key, value], i) => {
		env[`GIT_CONFIG_KEY_${i}`] = key;
		env[`GIT_CONFIG_VALUE_${i}`] = value;
	});
	for (const [name, value] of Object.entries(extra)) {
		// The callers' own: a temporary index and a commit's identity, never config.
		if (!name.startsWith('GIT_CONFIG')) {
			env[name] = value;
		}
	}
	return env;
}

/** git's file, found on the absolute folders of PATH. */
function gitProgram(): string {
	const git = findProgram('git');
	if (!git) {
		throw new DeskError('git.failed', 'git was not found on the PATH (only its absolute folders are searched).', {
			program: 'git',
		});
	}
	return git;
}

/** Git in `cwd`, on the git folder of `location` and the work tree `cwd`, named on the command line. */
function spawnGit(
	cwd: string,
	location: GitDirLocation,
	args: string[],
	env: Record<string, string>,
	options: { input?: string | Buffer | readonly Buffer[]; okCodes?: number[] },
): Promise<Buffer> {
	const okCodes = options.okCodes ?? [0];
	return new Promise<Buffer>((resolve, reject) => {
		const child = spawn(gitProgram(), ['--no-pager', '--git-dir', location.gitDir, '--work-tree', cwd, ...args], {
			cwd,
			env,
			stdio: ['pipe', 'pipe', 'pipe'],
		});
		const out: Buffer[] = [];
		const err: Buffer[] = [];
		child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
		child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
		child.on('error', (error) =>
			reject(new DeskError('git.failed', `git could not be started: ${error.message}`, { args })),
		);
		child.on('close', (code) => {
			if (code !== null && okCodes.includes(code)) {
				resolve(Buffer.concat(out));
			} else {
				const stderr = Buffer.concat(err).toString('utf8').trim();
				reject(
					new DeskError(
						'git.failed',
						`git ${args[0]} failed${stderr ? `: ${stderr.split('\n').slice(-3).join(' ')}` : ` (exit ${code})`}`,
						{ args, exit: code, stderr },
					),
				);
			}
		});
		child.stdin.on('error', () => undefined);
		if (Array.isArray(options.input)) {
			for (const chunk of options.input as readonly Buffer[]) {
				child.stdin.write(chunk);
			}
			child.stdin.end();
		} else {
			child.stdin.end((options.input as string | Buffer | undefined) ?? '');
		}
	});
}

/**
 * The entries of one folder reached through descriptors only: each folder on a path is opened
 * from its parent's descriptor with O_NOFOLLOW (ConfinedDir), and each file is read through the
 * descriptor that was checked. A link, or anything missing, on the way gives `none`; any other
 * failure (no permission, too many open files, an I/O error) fails the tree — it never makes a file
 * look deleted. At most `maxOpen` folders stay open: the paths come sorted, so those off the current
 * path are closed as the walk moves on.
 */
class ConfinedFolders {
	private readonly open = new Map<string, ConfinedDir | undefined>();
	private static readonly maxOpen = 128;

	/**
	 * `top` is the caller's (a checkout's top, a run's worktree), reached as git reached it, a link
	 * at its end included; a top that cannot be opened fails the tree rather than deleting every file.
	 */
	constructor(top: string) {
		this.open.set('', ConfinedDir.open(top, true));
	}

	read(
		rel: string,
		attempt = 1,
	):
		| { kind: 'file'; bytes: Buffer; executable: boolean }
		| { kind: 'link'; bytes: Buffer }
		| { kind: 'folder' }
		| { kind: 'none' } {
		const slash = rel.lastIndexOf('/');
		const dir = this.folder(slash < 0 ? '' : rel.slice(0, slash));
		const name = rel.slice(slash + 1);
		if (!dir || name === '' || name === '.' || name === '..') {
			return { kind: 'none' };
		}
		const stat = goneIsUndefined(() => fs.lstatSync(dir.statPath(name)), rel);
		if (!stat) {
			return { kind: 'none' };
		}
		if (stat.isDirectory()) {
			return { kind: 'folder' };
		}
		if (stat.isSymbolicLink()) {
			let target: Buffer | undefined;
			try {
				target = goneIsUndefined(() => fs.readlinkSync(dir.statPath(name), { encoding: 'buffer' }), rel);
			} catch (error) {
				// No longer a link since the lstat (EINVAL: swapped for a folder or a file): read what is there
				// now, a few times at most; an entry that keeps changing under the walk is left out.
				if (error instanceof DeskError && error.data['errno'] === 'EINVAL') {
					return attempt < 3 ? this.read(rel, attempt + 1) : { kind: 'none' };
				}
				throw error;
			}
			return target ? { kind: 'link', bytes: target } : { kind: 'none' };
		}
		if (!stat.isFile()) {
			return { kind: 'none' };
		}
		// Swapped for a link (or anything else) since the lstat: none.
		const opened = linkOrGoneIsUndefined(() => dir.openFile(name));
		if (!opened) {
			return { kind: 'none' };
		}
		try {
			return { kind: 'file', bytes: fs.readFileSync(opened.fd), executable: (opened.stat.mode & 0o111) !== 0 };
		} finally {
			fs.closeSync(opened.fd);
		}
	}

	close(): void {
		for (const dir of this.open.values()) {
			dir?.close();
		}
		this.open.clear();
	}

	private folder(rel: string): ConfinedDir | undefined {
		if (this.open.has(rel)) {
			return this.open.get(rel);
		}
		this.closeOffPath(rel);
		const slash = rel.lastIndexOf('/');
		const parent = this.folder(slash < 0 ? '' : rel.slice(0, slash));
		const name = rel.slice(slash + 1);
		// A link, or no folder: nothing below it is read.
		const dir = parent && name !== '.' && name !== '..' ? linkOrGoneIsUndefined(() => parent.child(name)) : undefined;
		this.open.set(rel, dir);
		return dir;
	}

	/** Past `maxOpen`, closes the folders that are neither `rel` nor above it (the top stays). */
	private closeOffPath(rel: string): void {
		if (this.open.size < ConfinedFolders.maxOpen) {
			return;
		}
		for (const [key, dir] of this.open) {
			if (key !== '' && !(rel === key || rel.startsWith(`${key}/`))) {
				dir?.close();
				this.open.delete(key);
			}
		}
	}
}

/** What ConfinedDir refuses as a link on the way or a missing entry becomes undefined; any other failure is thrown. */
function linkOrGoneIsUndefined<T>(open: () => T | undefined): T | undefined {
	try {
		return open();
	} catch (error) {
		if (
			error instanceof DeskError &&
			(error.code === 'attachment.notRegular' || error.code === 'attachment.unavailable')
		) {
			return undefined;
		}
		throw error;
	}
}

/** A path that is gone (or whose folder is no longer one) becomes undefined; any other failure is `store.io` naming it. */
function goneIsUndefined<T>(read: () => T, rel: string): T | undefined {
	try {
		return read();
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === 'ENOENT' || code === 'ENOTDIR') {
			return undefined;
		}
		throw new DeskError('store.io', `${rel}: ${(error as Error).message}`, { path: rel, errno: code });
	}
}

/** Batches of blobs passed to `git fast-import` at most this large (bytes), so memory stays bounded. */
const blobBatchBytes = 64 * 1024 * 1024;

/**
 * Writes blobs from bytes the desk read itself: their ids are computed here (`blob <size>\0` and
 * the bytes, hashed with the repository's object format), the ones the base does not already hold
 * at their path are written by `git fast-import` in batches, and the ids git reports back must be
 * the ones computed.
 */
class BlobWriter {
	private pending: Array<{ oid: string; bytes: Buffer }> = [];
	private pendingBytes = 0;
	private readonly written = new Set<string>();

	constructor(
		private readonly git: SafeGit,
		private readonly format: 'sha1' | 'sha256',
	) {}

	/** The blob id of `bytes`, queued for writing unless it is `known` (the base's blob at that path). */
	async add(bytes: Buffer, known: string | undefined): Promise<string> {
		const oid = createHash(this.format).update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
		if (oid === known || this.written.has(oid)) {
			return oid;
		}
		this.written.add(oid);
		this.pending.push({ oid, bytes });
		this.pendingBytes += bytes.length;
		if (this.pendingBytes >= blobBatchBytes) {
			await this.flush();
		}
		return oid;
	}

	async flush(): Promise<void> {
		const batch = this.pending;
		if (batch.length === 0) {
			return;
		}
		this.pending = [];
		this.pendingBytes = 0;
		const input: Buffer[] = [];
		batch.forEach(({ bytes }, i) =>
			input.push(Buffer.from(`blob\nmark :${i + 1}\ndata ${bytes.length}\n`), bytes, Buffer.from('\n')),
		);
		batch.forEach((_, i) => input.push(Buffer.from(`get-mark :${i + 1}\n`)));
		input.push(Buffer.from('done\n'));
		const reported = (await this.git.run(['fast-import', '--quiet', '--done'], { input })).toString('utf8').split('\n');
		batch.forEach(({ oid }, i) => {
			if (reported[i] !== oid) {
				throw new DeskError(
					'git.failed',
					`git fast-import stored a blob as ${reported[i] ?? '(nothing)'}, not as ${oid}.`,
					{ expected: oid, reported: reported[i] },
				);
			}
		});
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
