import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { findProjectRoot, tempDir } from '../../helpers/temp';

const script = path.join(findProjectRoot(), 'scripts', 'carry-git-identity.sh');

/** The script as launch.sh runs it, for a person whose home is `home`, into the workbench's `target`. */
function carry(home: string, target: string): void {
	const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')));
	execFileSync('bash', [script, target], {
		env: { ...env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' },
	});
}

function gitConfig(file: string, key: string): string {
	return execFileSync('git', ['config', '--file', file, '--get', key], { encoding: 'utf8' }).trim();
}

it("launch.sh's workbench home gets the person's git identity, and nothing when they have none", () => {
	const home = tempDir('desk-person-');
	fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n');
	const target = path.join(tempDir('desk-workbench-'), 'home');
	carry(home, target);
	const config = path.join(target, '.gitconfig');
	assert.equal(gitConfig(config, 'user.name'), 'Ada Lovelace');
	assert.equal(gitConfig(config, 'user.email'), 'ada@example.com');
	// A later launch follows a change of the person's identity.
	fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Ada King\n\temail = ada@example.com\n');
	carry(home, target);
	assert.equal(gitConfig(config, 'user.name'), 'Ada King');

	const nobody = tempDir('desk-nobody-');
	const empty = path.join(tempDir('desk-workbench-'), 'home');
	carry(nobody, empty);
	assert.equal(fs.existsSync(path.join(empty, '.gitconfig')), false, 'no identity is made up');
});
