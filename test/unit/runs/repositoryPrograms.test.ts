import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { isAtGate } from '../../../server/src/runs/runViews';
import type { RunSettings } from '../../../server/src/runs/settings';
import { openDesk } from '../../helpers/deskFixture';
import { commitFile, git, gitEnv, makeRepo } from '../../helpers/gitRepo';
import { scriptedAgentSettings } from '../../helpers/scriptedAgent';
import { tempDir } from '../../helpers/temp';

/** Who decides in these tests: a person, as the gate records them. */
const decider = { kind: 'human' as const, id: 'Tess Tester <tess@example.com>' };

/**
 * A whole run, from Go to the landed commit, in a repository that names programs every way it
 * can at once: none of them runs, and the run lands what the agent wrote. (Each way alone, with
 * a control that plain git does run it, is in safeGit.test.ts.)
 */

interface Hostile {
	root: string;
	repo: string;
	marker: string;
}

function hostileRepository(): Hostile {
	const root = tempDir();
	const marker = path.join(root, 'marker');
	const program = path.join(root, 'program.sh');
	fs.writeFileSync(program, `#!/bin/sh\necho "ran $0 $*" >> '${marker}'\nexec cat\n`, { mode: 0o755 });
	const repo = makeRepo(path.join(root, 'shop'), { commits: 1 });
	commitFile(repo, 'src/cart.ts', 'export const total = 0;\n', 'cart');
	fs.writeFileSync(path.join(repo, '.gitattributes'), '*.ts filter=a=b diff=t=c\n*.md filter=onbranch\n');
	commitFile(repo, '.gitattributes', fs.readFileSync(path.join(repo, '.gitattributes'), 'utf8'), 'attributes');
	const included = path.join(root, 'included.cfg');
	fs.writeFileSync(included, `[filter "a=b"]\n\tclean = ${program}\n\tsmudge = ${program}\n\trequired = true\n`);
	const onbranch = path.join(root, 'onbranch.cfg');
	fs.writeFileSync(onbranch, `[filter "onbranch"]\n\tclean = ${program}\n\tsmudge = ${program}\n`);
	git(repo, 'config', 'include.path', included);
	git(repo, 'config', 'includeIf.onbranch:desk/**.path', onbranch);
	git(repo, 'config', 'diff.t=c.textconv', program);
	git(repo, 'config', 'diff.external', program);
	git(repo, 'config', 'core.fsmonitor', program);
	git(repo, 'config', 'gpg.program', program);
	git(repo, 'config', 'log.showSignature', 'true');
	for (const hook of ['pre-commit', 'post-commit', 'post-checkout', 'reference-transaction', 'post-index-change']) {
		fs.writeFileSync(path.join(repo, '.git', 'hooks', hook), `#!/bin/sh\necho "hook ${hook}" >> '${marker}'\n`, {
			mode: 0o755,
		});
	}
	// The head carries a signature: reading its message back (as landing does) would verify it.
	const tree = git(repo, 'rev-parse', 'HEAD^{tree}');
	const signed = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
		cwd: repo,
		env: gitEnv(repo),
		input: `tree ${tree}\nparent ${git(repo, 'rev-parse', 'HEAD')}\nauthor A <a@x> 1700000000 +0000\ncommitter C <c@x> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n c2lnbmVk\n -----END PGP SIGNATURE-----\n\nsigned\n`,
		encoding: 'utf8',
	}).trim();
	git(repo, 'update-ref', 'refs/heads/main', signed);
	fs.rmSync(marker, { force: true });
	return { root, repo, marker };
}

async function runAndLand(h: Hostile, settings: RunSettings) {
	const desk = await openDesk(path.join(h.root, 'library'));
	const [boot] = await desk.openWorkspace([{ name: 'shop', path: h.repo }]);
	assert.ok(boot?.outcome === 'adopted');
	const launches = await desk.launches(h.repo);
	launches.setTicket('Add a discount');
	const record = await launches.go();
	const { executor, gate } = await desk.runs(h.repo);
	const run = await executor.execute(record, record.run, settings);
	assert.ok(isAtGate(run), `${run.status}: ${run.error ?? ''}`);
	const result = await gate.decide(run.object_id, { by: decider, decision: 'commit' });
	assert.ok(result.commit);
	return { run, commit: result.commit };
}

function ran(h: Hostile): string {
	return fs.existsSync(h.marker) ? fs.readFileSync(h.marker, 'utf8') : '';
}

const writes = [
	{ path: 'src/cart.ts', content: 'export const total = 0;\nexport const discount = 0.1;\n' },
	{ path: 'NOTES.md', content: 'discount\n' },
];

it('a run in its own worktree of a repository that names programs everywhere: none runs, the change lands on the run branch', async () => {
	const h = hostileRepository();
	const { run, commit } = await runAndLand(
		h,
		scriptedAgentSettings({ format: 'desk', writes }, { isolation: 'worktree' }),
	);
	assert.equal(ran(h), '', 'no program of the repository ran');
	assert.equal(git(h.repo, 'rev-parse', `desk/run-${run.object_id}`), commit);
	assert.equal(git(h.repo, 'cat-file', 'blob', `${commit}:src/cart.ts`), writes[0]!.content.trim());
	assert.equal(git(h.repo, 'cat-file', 'blob', `${commit}:NOTES.md`), 'discount');
});

it('a run on the shared checkout of a repository that names programs everywhere: none runs, the change lands on the branch', async () => {
	const h = hostileRepository();
	const { commit } = await runAndLand(
		h,
		scriptedAgentSettings(
			{ format: 'desk', writes },
			{ checks: [{ id: 'unit', executable: 'sh', args: ['-c', 'test -f NOTES.md'], cwd: '.', timeout: 30 }] },
		),
	);
	assert.equal(ran(h), '', 'no program of the repository ran');
	assert.equal(git(h.repo, 'rev-parse', 'refs/heads/main'), commit);
	assert.equal(git(h.repo, 'cat-file', 'blob', `${commit}:src/cart.ts`), writes[0]!.content.trim());
});

for (const [label, entry] of [
	['`.`', '.'],
	['an empty entry', ''],
	['a relative folder', 'src/..'],
] as const) {
	it(`with ${label} on the PATH, no program of the repository runs in place of git, the agent or a check`, async () => {
		const h = hostileRepository();
		// Programs of the repository's, named like the ones the desk starts by name.
		for (const name of ['git', 'deskagent', 'sh']) {
			fs.writeFileSync(
				path.join(h.repo, name),
				`#!/bin/sh\necho "the repository's ${name} $*" >> '${h.marker}'\nexit 1\n`,
				{ mode: 0o755 },
			);
			commitFile(h.repo, name, fs.readFileSync(path.join(h.repo, name), 'utf8'), `add ${name}`);
		}
		fs.rmSync(h.marker, { force: true });
		// The real agent program, in a folder of its own on the PATH.
		const bin = tempDir();
		fs.writeFileSync(path.join(bin, 'deskagent'), `#!/bin/sh\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
		const settings = scriptedAgentSettings(
			{ format: 'desk', writes },
			{
				sandbox: 'off',
				checks: [{ id: 'unit', executable: 'sh', args: ['-c', 'test -f NOTES.md'], cwd: '.', timeout: 30 }],
			},
		);
		settings.agents[0]!.command = 'deskagent';
		const saved = process.env.PATH;
		process.env.PATH = [entry, bin, saved].join(path.delimiter);
		let commit: string;
		try {
			({ commit } = await runAndLand(h, settings));
		} finally {
			process.env.PATH = saved;
		}
		assert.equal(ran(h), '', 'no program of the repository ran');
		assert.equal(git(h.repo, 'cat-file', 'blob', `${commit}:NOTES.md`), 'discount');
	});
}
