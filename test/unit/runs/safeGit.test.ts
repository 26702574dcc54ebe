import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { SafeGit } from '../../../server/src/runs/safeGit';
import { commitFile, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

it('runs git with everything the repository configures to execute switched off: hooks, filters, fsmonitor', async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'r'), { commits: 1 });
	const witness = path.join(root, 'witness');
	const program = path.join(root, 'program.sh');
	fs.writeFileSync(program, `#!/bin/sh\necho ran "$@" >> ${witness}\ncat\n`, { mode: 0o755 });
	// A filter driver that would run on every file, a hook on every commit, an fsmonitor on every status.
	git(repo, 'config', 'filter.evil.clean', program);
	git(repo, 'config', 'filter.evil.smudge', program);
	git(repo, 'config', 'filter.evil.process', program);
	git(repo, 'config', 'core.fsmonitor', program);
	fs.writeFileSync(path.join(repo, '.gitattributes'), '* filter=evil\n');
	fs.mkdirSync(path.join(repo, '.git', 'hooks'), { recursive: true });
	for (const hook of ['pre-commit', 'post-checkout', 'post-commit', 'reference-transaction']) {
		fs.writeFileSync(path.join(repo, '.git', 'hooks', hook), `#!/bin/sh\necho hook ${hook} >> ${witness}\n`, {
			mode: 0o755,
		});
	}
	const safe = await SafeGit.open(repo);
	const base = await safe.resolveCommit('HEAD');
	fs.writeFileSync(path.join(repo, 'new.txt'), 'new\n');
	const tree = await safe.treeOfFolder(repo, base);
	const changes = await safe.changes(base, tree);
	assert.deepEqual(changes.map((c) => c.path).sort(), ['.gitattributes', 'new.txt']);
	const commit = await safe.commitTree(tree, [base], 'subject\n', {
		author: { name: 'A', email: 'a@x' },
		committer: { name: 'C', email: 'c@x' },
	});
	await safe.updateRef('refs/heads/main', commit, base, 'test');
	await safe.syncIndexPaths(commit, ['.gitattributes', 'new.txt']);
	await safe.addWorktree(path.join(root, 'wt'), 'desk/run-x', commit);
	assert.equal(fs.readFileSync(path.join(root, 'wt', 'new.txt'), 'utf8'), 'new\n');
	await safe.removeWorktree(path.join(root, 'wt'));
	assert.equal(
		fs.existsSync(witness),
		false,
		`nothing the repository configured ran: ${fs.existsSync(witness) ? fs.readFileSync(witness, 'utf8') : ''}`,
	);
	// The same steps in plain git do run them: the test would notice if the switches stopped working.
	fs.writeFileSync(path.join(repo, 'more.txt'), 'more\n');
	git(repo, 'add', 'more.txt');
	assert.ok(fs.existsSync(witness));
});

it('a change lands on a moved head when it still applies, and is refused when it does not', async () => {
	const repo = makeRepo(path.join(tempDir(), 'r'), { commits: 1 });
	commitFile(repo, 'a.txt', 'one\ntwo\nthree\n', 'a');
	const safe = await SafeGit.open(repo);
	const base = await safe.resolveCommit('HEAD');
	fs.writeFileSync(path.join(repo, 'a.txt'), 'one\nTWO\nthree\n');
	const tree = await safe.treeOfFolder(repo, base);
	const diff = await safe.diff(base, tree);
	git(repo, 'checkout', '-q', '--', 'a.txt');
	commitFile(repo, 'b.txt', 'b\n', 'b');
	const moved = await safe.resolveCommit('HEAD');
	assert.ok(await safe.applyToTree(moved, diff), 'an unrelated commit in between: it applies');
	commitFile(repo, 'a.txt', 'one\n2\nthree\n', 'conflict');
	assert.equal(await safe.applyToTree(await safe.resolveCommit('HEAD'), diff), undefined);
});

// ---------------------------------------------------------------------------------------------
// Every way a repository (or the environment) can name a program, through every operation the
// desk runs git for. Each row sets one up; the desk's operations must run none of it and still
// work; then plain git doing the same kind of work runs it (the control), so a row whose set-up
// went stale would be noticed.

interface Setting {
	repo: string;
	root: string;
	/** A program that appends a line to the marker file and passes its input through (a filter can use it). */
	program: string;
	/** The same, but it exits at once (for programs git waits on: ssh, a credential helper). */
	quick: string;
	/** A folder of hooks, each one the program under the hook's name. */
	hooks: string;
}

interface Mechanism {
	name: string;
	setup(s: Setting): void;
	/** Variables in the desk's own environment while it works (as if inherited from the person's shell). */
	env?(s: Setting): Record<string, string>;
	/** Plain git running the program; absent where git runs it only on a terminal or over the network to a server. */
	control?(s: Setting): void;
}

const hookNames = [
	'pre-commit',
	'prepare-commit-msg',
	'commit-msg',
	'post-commit',
	'post-checkout',
	'post-merge',
	'reference-transaction',
	'post-index-change',
	'pre-auto-gc',
	'post-rewrite',
	'pre-push',
];

function attributes(repo: string, line: string): void {
	fs.appendFileSync(path.join(repo, '.gitattributes'), `${line}\n`);
	commitFile(repo, '.gitattributes', fs.readFileSync(path.join(repo, '.gitattributes'), 'utf8'), 'attributes');
}

/** Plain git, with the test's environment plus `env`; failures are fine (the program may have broken the command). */
function plain(cwd: string, args: string[], env: Record<string, string> = {}, input = ''): void {
	spawnSync('git', args, {
		cwd,
		env: { ...gitEnv(cwd), ...env },
		input,
		stdio: ['pipe', 'ignore', 'ignore'],
		timeout: 20_000,
	});
}

/** Plain git's clean filter: a changed file added. */
function cleanControl(s: Setting): void {
	fs.appendFileSync(path.join(s.repo, 'a.txt'), 'control\n');
	plain(s.repo, ['add', 'a.txt']);
}

/** Plain git's smudge filter: a checkout into a new worktree. */
function smudgeControl(branch = 'control') {
	return (s: Setting): void =>
		plain(s.repo, [
			'worktree',
			'add',
			'-b',
			branch,
			path.join(s.root, `control-${branch.replace(/\W/g, '-')}`),
			'HEAD',
		]);
}

function filterRow(name: string): Mechanism {
	return {
		name: `a filter driver named ${JSON.stringify(name)}`,
		setup: (s) => {
			for (const key of ['clean', 'smudge']) {
				git(s.repo, 'config', `filter.${name}.${key}`, s.program);
			}
			git(s.repo, 'config', `filter.${name}.required`, 'true');
			attributes(s.repo, `* filter=${name}`);
		},
		control: cleanControl,
	};
}

function includedFile(s: Setting, file: string, text: string): string {
	const full = path.join(s.root, file);
	fs.writeFileSync(full, text.split('PROGRAM').join(s.program));
	return full;
}

/** A filter driver `name` (clean and smudge the program) that git finds in a file the config `key` includes. */
function includeFilter(s: Setting, key: string, file: string, name: string): void {
	git(s.repo, 'config', key, includedFile(s, file, `[filter "${name}"]\n\tclean = PROGRAM\n\tsmudge = PROGRAM\n`));
	attributes(s.repo, `* filter=${name}`);
}

const mechanisms: Mechanism[] = [
	filterRow('a=b'),
	filterRow('x.y=z'),
	filterRow('dotted.name'),
	filterRow('q"u\'ote'),
	filterRow('fïltér-ünicode'),
	filterRow('back\\slash'),
	filterRow('=='),
	{
		name: 'a filter driver with a long-running process',
		setup: (s) => {
			git(s.repo, 'config', 'filter.p=q.process', s.program);
			attributes(s.repo, '* filter=p=q');
		},
		control: cleanControl,
	},
	{
		name: 'a filter driver brought in by include.path',
		setup: (s) => includeFilter(s, 'include.path', 'included.cfg', 'inc=luded'),
		control: cleanControl,
	},
	{
		name: 'a filter driver brought in by includeIf "gitdir:"',
		setup: (s) => includeFilter(s, `includeIf.gitdir:${s.repo}/.git.path`, 'gitdir.cfg', 'gitdir=if'),
		control: cleanControl,
	},
	{
		// Only the run's own worktree sees it: a listing made in the checkout would miss it.
		name: 'a filter driver brought in by includeIf "gitdir:" of the linked worktrees only',
		setup: (s) => includeFilter(s, 'includeIf.gitdir:**/worktrees/**.path', 'worktrees.cfg', 'onlyworktrees'),
		control: smudgeControl(),
	},
	{
		name: 'a filter driver brought in by includeIf "onbranch:" for the run branches',
		setup: (s) => includeFilter(s, 'includeIf.onbranch:desk/**.path', 'onbranch.cfg', 'onbranch'),
		control: smudgeControl('desk/control'),
	},
	{
		name: 'hooks in .git/hooks',
		setup: (s) => {
			for (const hook of hookNames) {
				fs.copyFileSync(path.join(s.hooks, hook), path.join(s.repo, '.git', 'hooks', hook));
				fs.chmodSync(path.join(s.repo, '.git', 'hooks', hook), 0o755);
			}
		},
		control: (s) => plain(s.repo, ['commit', '--allow-empty', '-m', 'control']),
	},
	{
		name: 'hooks through core.hooksPath',
		setup: (s) => git(s.repo, 'config', 'core.hooksPath', s.hooks),
		control: (s) => plain(s.repo, ['commit', '--allow-empty', '-m', 'control']),
	},
	{
		name: 'core.fsmonitor',
		setup: (s) => git(s.repo, 'config', 'core.fsmonitor', s.program),
		control: (s) => plain(s.repo, ['status']),
	},
	{
		name: 'diff.external',
		setup: (s) => git(s.repo, 'config', 'diff.external', s.program),
		control: (s) => plain(s.repo, ['diff', 'HEAD^', 'HEAD']),
	},
	{
		name: 'a textconv program',
		setup: (s) => {
			git(s.repo, 'config', 'diff.t=c.textconv', s.program);
			attributes(s.repo, '* diff=t=c');
		},
		control: (s) => plain(s.repo, ['log', '-p', '-2']),
	},
	{
		name: 'a diff driver command',
		setup: (s) => {
			git(s.repo, 'config', 'diff.d=c.command', s.program);
			attributes(s.repo, '* diff=d=c');
		},
		control: (s) => plain(s.repo, ['diff', 'HEAD^', 'HEAD']),
	},
	{
		name: 'a merge driver',
		setup: (s) => {
			git(s.repo, 'config', 'merge.m=d.driver', s.program);
			attributes(s.repo, '* merge=m=d');
		},
		control: (s) => {
			const base = git(s.repo, 'rev-parse', 'HEAD');
			commitFile(s.repo, 'a.txt', 'ours\n', 'ours');
			plain(s.repo, ['checkout', '-q', '-b', 'theirs', base]);
			commitFile(s.repo, 'a.txt', 'theirs\n', 'theirs');
			plain(s.repo, ['merge', '-q', '-m', 'merge', 'main']);
		},
	},
	{
		name: 'core.sshCommand',
		setup: (s) => {
			git(s.repo, 'config', 'core.sshCommand', s.quick);
			git(s.repo, 'config', 'protocol.ssh.allow', 'always');
		},
		control: (s) => plain(s.repo, ['ls-remote', 'ssh://example.invalid/x']),
	},
	{
		name: 'credential.helper (also for one URL)',
		setup: (s) => {
			git(s.repo, 'config', 'credential.helper', s.quick);
			git(s.repo, 'config', 'credential.https://example.invalid.helper', s.quick);
		},
		control: (s) =>
			plain(s.repo, ['credential', 'fill'], { GIT_TERMINAL_PROMPT: '0' }, 'protocol=https\nhost=example.invalid\n\n'),
	},
	{
		name: 'gpg.program with commit.gpgSign and log.showSignature, on a signed head',
		setup: (s) => {
			git(s.repo, 'config', 'gpg.program', s.program);
			git(s.repo, 'config', 'gpg.ssh.program', s.program);
			git(s.repo, 'config', 'commit.gpgSign', 'true');
			git(s.repo, 'config', 'log.showSignature', 'true');
			// A head whose commit carries a signature: showing it asks the gpg program to verify it.
			const head = git(s.repo, 'rev-parse', 'HEAD');
			const tree = git(s.repo, 'rev-parse', 'HEAD^{tree}');
			const signed = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
				cwd: s.repo,
				env: gitEnv(s.repo),
				input: `tree ${tree}\nparent ${head}\nauthor A <a@x> 1700000000 +0000\ncommitter C <c@x> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n c2lnbmVk\n -----END PGP SIGNATURE-----\n\nsigned\n`,
				encoding: 'utf8',
			}).trim();
			git(s.repo, 'update-ref', 'refs/heads/main', signed);
		},
		control: (s) => plain(s.repo, ['log', '-1', '--format=%B', 'HEAD^']),
	},
	{
		name: 'core.pager and pager.<command>',
		setup: (s) => {
			git(s.repo, 'config', 'core.pager', s.program);
			for (const command of ['log', 'diff-tree', 'config', 'ls-files', 'cat-file', 'ls-tree']) {
				git(s.repo, 'config', `pager.${command}`, s.program);
			}
		},
	},
	{
		name: 'uploadpack.packObjectsHook, core.alternateRefsCommand, core.editor and sequence.editor',
		setup: (s) => {
			for (const key of [
				'uploadpack.packObjectsHook',
				'core.alternateRefsCommand',
				'core.editor',
				'sequence.editor',
				'core.askPass',
				'interactive.diffFilter',
			]) {
				git(s.repo, 'config', key, s.program);
			}
		},
		control: (s) => plain(s.repo, ['commit', '--amend']),
	},
	{
		name: 'config-based hooks (git 2.54 and later)',
		setup: (s) => {
			git(s.repo, 'config', 'hook.h=k.command', s.program);
			for (const event of hookNames) {
				git(s.repo, 'config', '--add', 'hook.h=k.event', event);
			}
		},
	},
	{
		name: 'GIT_EXEC_PATH inherited from the environment',
		setup: () => undefined,
		env: (s) => ({
			GIT_EXEC_PATH: s.hooks,
			GIT_ASKPASS: s.quick,
			GIT_PAGER: s.quick,
			GIT_EDITOR: s.quick,
			GIT_PROXY_COMMAND: s.quick,
		}),
		control: (s) =>
			plain(s.repo, ['worktree', 'add', '--no-checkout', '-b', 'control', path.join(s.root, 'control-exec'), 'HEAD'], {
				GIT_EXEC_PATH: s.hooks,
			}),
	},
	{
		name: 'GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_EXTERNAL_DIFF and GIT_SSH_COMMAND inherited from the environment',
		setup: (s) => attributes(s.repo, '* filter=envfilter'),
		env: (s) => ({
			GIT_CONFIG_PARAMETERS: `'filter.envfilter.smudge'='${s.program}' 'filter.envfilter.clean'='${s.program}'`,
			GIT_CONFIG_COUNT: '1',
			GIT_CONFIG_KEY_0: 'core.fsmonitor',
			GIT_CONFIG_VALUE_0: s.program,
			GIT_EXTERNAL_DIFF: s.program,
			GIT_SSH_COMMAND: s.program,
		}),
		control: (s) =>
			plain(s.repo, ['status'], {
				GIT_CONFIG_COUNT: '1',
				GIT_CONFIG_KEY_0: 'core.fsmonitor',
				GIT_CONFIG_VALUE_0: s.program,
			}),
	},
	{
		name: 'GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE inherited from the environment (another repository)',
		setup: (s) => {
			const other = makeRepo(path.join(s.root, 'other'), { commits: 1 });
			fs.copyFileSync(
				path.join(s.hooks, 'reference-transaction'),
				path.join(other, '.git', 'hooks', 'reference-transaction'),
			);
			fs.chmodSync(path.join(other, '.git', 'hooks', 'reference-transaction'), 0o755);
		},
		env: (s) => ({
			GIT_DIR: path.join(s.root, 'other', '.git'),
			GIT_WORK_TREE: path.join(s.root, 'other'),
			GIT_INDEX_FILE: path.join(s.root, 'other', '.git', 'index'),
		}),
		control: (s) =>
			plain(s.repo, ['commit', '--allow-empty', '-m', 'control'], { GIT_DIR: path.join(s.root, 'other', '.git') }),
	},
	{
		name: 'a `git` program in the repository with `.` on the PATH',
		setup: (s) => fs.copyFileSync(path.join(s.hooks, 'git'), path.join(s.repo, 'git')),
		env: () => ({ PATH: `.${path.delimiter}${process.env.PATH}` }),
		control: (s) =>
			void spawnSync('git', ['status'], {
				cwd: s.repo,
				env: { ...process.env, PATH: `.${path.delimiter}${process.env.PATH}` },
				stdio: 'ignore',
			}),
	},
	{
		name: 'a `git` program in the repository with an empty entry on the PATH',
		setup: (s) => fs.copyFileSync(path.join(s.hooks, 'git'), path.join(s.repo, 'git')),
		env: () => ({ PATH: `${path.delimiter}${process.env.PATH}` }),
		control: (s) =>
			void spawnSync('git', ['status'], {
				cwd: s.repo,
				env: { ...process.env, PATH: `${path.delimiter}${process.env.PATH}` },
				stdio: 'ignore',
			}),
	},
];

const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

function setting(): Setting & { marker: string } {
	const root = tempDir();
	const marker = path.join(root, 'marker');
	const program = path.join(root, 'program.sh');
	// It passes its input through, so that a clean or smudge filter it stands for keeps the content.
	fs.writeFileSync(
		program,
		`#!/bin/sh\necho "ran $0 $* by $(tr "\\0" " " < /proc/$PPID/cmdline)" >> '${marker}'\nexec cat\n`,
		{ mode: 0o755 },
	);
	const quick = path.join(root, 'quick.sh');
	fs.writeFileSync(quick, `#!/bin/sh\necho "ran $0 $*" >> '${marker}'\nexit 1\n`, { mode: 0o755 });
	const hooks = path.join(root, 'hooks');
	fs.mkdirSync(hooks);
	for (const hook of [...hookNames, 'git']) {
		fs.writeFileSync(
			path.join(hooks, hook),
			`#!/bin/sh\necho "${hook} $*" >> '${marker}'\n${hook === 'git' ? `exec '${realGit}' "$@"` : 'exit 0'}\n`,
			{ mode: 0o755 },
		);
	}
	const repo = makeRepo(path.join(root, 'repo'), { commits: 1 });
	commitFile(repo, 'a.txt', 'one\ntwo\n', 'a');
	return { root, marker, program, quick, hooks, repo };
}

/** What the desk does with git for a run: every SafeGit operation, as the runner and the gate use them. */
async function deskOperations(s: Setting): Promise<{ commit: string; landed: string }> {
	const safe = await SafeGit.open(s.repo);
	const base = await safe.resolveCommit('HEAD');
	assert.equal(await safe.currentBranch(), 'refs/heads/main');
	await safe.personIdentity();
	// A change in the shared checkout: its tree, what changed, the diff, applied again.
	fs.writeFileSync(path.join(s.repo, 'a.txt'), 'one\nTWO\n');
	fs.writeFileSync(path.join(s.repo, 'new.txt'), 'new\n');
	const tree = await safe.treeOfFolder(s.repo, base);
	const changes = await safe.changes(base, tree);
	assert.deepEqual(
		changes.map((c) => [c.path, c.change_type]).filter(([p]) => p !== 'git'),
		[
			['a.txt', 'modified'],
			['new.txt', 'added'],
		],
	);
	const diff = await safe.diff(base, tree);
	assert.match(diff.toString('utf8'), /^-two\n\+TWO$/m);
	assert.equal(await safe.applyToTree(base, diff), tree);
	// Landing: a commit, the branch moved, the log read back, the index brought up to date.
	const commit = await safe.commitTree(tree, [base], 'subject\n\nDesk-Run: r-1\n', {
		author: { name: 'A', email: 'a@x' },
		committer: { name: 'C', email: 'c@x' },
	});
	await safe.updateRef('refs/heads/main', commit, base, 'test');
	assert.match(await safe.text(['log', '-1', '--format=%B', 'HEAD']), /Desk-Run: r-1$/);
	await safe.text(['log', '-1', '--format=%B', base]);
	await safe.syncIndexPaths(commit, ['a.txt', 'new.txt']);
	await safe.run(['update-index', '-q', '--refresh'], { okCodes: [0, 1] });
	assert.equal((await safe.run(['cat-file', 'blob', `${commit}:a.txt`])).toString('utf8'), 'one\nTWO\n');
	await safe.run(['ls-tree', '-z', '--full-tree', commit, '--', 'a.txt']);
	// A run in its own worktree: created, changed, read back, landed on its branch, removed.
	const wt = path.join(s.root, 'wt');
	await safe.addWorktree(wt, 'desk/run-x', commit);
	assert.equal(
		fs.readFileSync(path.join(wt, 'a.txt'), 'utf8'),
		'one\nTWO\n',
		'the worktree holds the files as committed',
	);
	const inWorktree = safe.at(wt);
	assert.equal(await inWorktree.currentBranch(), 'refs/heads/desk/run-x');
	fs.writeFileSync(path.join(wt, 'a.txt'), 'one\nTWO\nthree\n');
	const wtTree = await inWorktree.treeOfFolder(wt, commit);
	assert.deepEqual(
		(await inWorktree.changes(commit, wtTree)).map((c) => c.path),
		['a.txt'],
	);
	await inWorktree.diff(commit, wtTree);
	const landed = await safe.commitTree(wtTree, [commit], 'run\n', {
		author: { name: 'A', email: 'a@x' },
		committer: { name: 'C', email: 'c@x' },
	});
	await safe.updateRef('refs/heads/desk/run-x', landed, commit, 'test');
	await safe.updateRef('refs/desk/checkpoints/r-1', landed, '0'.repeat(40), 'test');
	await safe.removeWorktree(wt);
	return { commit, landed };
}

async function tryRow(mechanism: Mechanism): Promise<void> {
	const s = setting();
	mechanism.setup(s);
	// Setting it up with plain git may have run it already: only what the desk runs counts.
	fs.rmSync(s.marker, { force: true });
	const saved = { ...process.env };
	Object.assign(process.env, mechanism.env?.(s) ?? {});
	let landed: { commit: string; landed: string };
	try {
		landed = await deskOperations(s);
	} finally {
		for (const name of Object.keys(process.env)) {
			if (!(name in saved)) {
				delete process.env[name];
			}
		}
		Object.assign(process.env, saved);
	}
	assert.equal(
		fs.existsSync(s.marker),
		false,
		`ran: ${fs.existsSync(s.marker) ? fs.readFileSync(s.marker, 'utf8') : ''}`,
	);
	assert.equal(git(s.repo, 'rev-parse', 'refs/heads/main'), landed.commit, 'the commit landed in this repository');
	assert.equal(git(s.repo, 'rev-parse', 'refs/heads/desk/run-x'), landed.landed);
	assert.equal(
		git(s.repo, 'worktree', 'list', '--porcelain')
			.split('\n')
			.filter((l) => l.startsWith('worktree ')).length,
		1,
		"the run's worktree is gone",
	);
	if (mechanism.control) {
		mechanism.control(s);
		assert.ok(fs.existsSync(s.marker), 'plain git runs the program set up this way (the row is live)');
	}
}

// Rows that change the process's environment run one at a time; the others side by side.
describe("no program the repository names runs, and the desk's git still works", { concurrency: true }, () => {
	for (const mechanism of mechanisms.filter((m) => !m.env)) {
		it(mechanism.name, () => tryRow(mechanism));
	}
});

describe("no program the environment names runs, and the desk's git still works", () => {
	for (const mechanism of mechanisms.filter((m) => m.env)) {
		it(mechanism.name, () => tryRow(mechanism));
	}
});
