import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { absolutePathEntries, findProgram, safePath } from '../../../server/src/runs/programs';
import { SafeGit } from '../../../server/src/runs/safeGit';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

it('a PATH keeps only its absolute folders; a program is found in those only, never through a relative path', () => {
	const root = tempDir();
	const bin = path.join(root, 'bin');
	fs.mkdirSync(bin);
	fs.writeFileSync(path.join(bin, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
	fs.writeFileSync(path.join(bin, 'plain'), 'not a program\n', { mode: 0o644 });
	const value = ['.', '', 'bin', bin, '/usr/bin', bin].join(path.delimiter);
	assert.deepEqual(absolutePathEntries(value), [bin, '/usr/bin']);
	assert.equal(safePath(value), [bin, '/usr/bin'].join(path.delimiter));
	assert.equal(
		safePath('.:bin:'),
		'/usr/local/bin:/usr/bin:/bin',
		'a PATH of relative entries only gives the system folders',
	);
	assert.equal(findProgram('tool', value), path.join(bin, 'tool'));
	assert.equal(findProgram('plain', value), undefined, 'a file that cannot be run is not a program');
	assert.equal(findProgram(path.join(bin, 'tool'), value), path.join(bin, 'tool'));
	const cwd = process.cwd();
	process.chdir(root);
	try {
		assert.equal(findProgram('bin/tool', value), undefined, 'a relative path depends on the folder it is started in');
		assert.equal(findProgram('./bin/tool', value), undefined);
		assert.equal(findProgram('tool', '.:bin'), undefined, 'relative entries are never searched');
	} finally {
		process.chdir(cwd);
	}
	assert.equal(findProgram('', value), undefined);
});

it("with no absolute folder on the PATH that holds git, the desk refuses by name and runs the repository's git never", async () => {
	const root = tempDir();
	const repo = makeRepo(path.join(root, 'r'), { commits: 1 });
	const marker = path.join(root, 'marker');
	fs.writeFileSync(path.join(repo, 'git'), `#!/bin/sh\necho ran >> '${marker}'\n`, { mode: 0o755 });
	const saved = process.env.PATH;
	process.env.PATH = `.${path.delimiter}`;
	try {
		await assert.rejects(
			SafeGit.open(repo),
			(e) => isDeskError(e, 'git.failed') && /git was not found on the PATH/.test((e as Error).message),
		);
	} finally {
		process.env.PATH = saved;
	}
	assert.equal(fs.existsSync(marker), false);
});
