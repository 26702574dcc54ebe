import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { isDeskError } from '../../../server/src/core/errors';
import { checkRefName, isRefName, refNameProblem } from '../../../server/src/git/refName';

/** Names around every rule of `git check-ref-format`, each on both sides of it. */
const names = [
	'refs/desk/history',
	'refs/heads/main',
	'refs/../x',
	'refs/a/../b',
	'refs/a..b',
	'refs/a.b',
	'refs/.a',
	'refs/a/.b',
	'refs/a.',
	'refs/a/b.',
	'refs/a.lock',
	'refs/a.lock/b',
	'refs/a.lockx',
	'refs/a/b.lock',
	'refs/lock',
	'refs/.lock',
	'refs/a/',
	'/refs/a',
	'refs//a',
	'refs',
	'HEAD',
	'refs/a b',
	'refs/a\tb',
	'refs/a\nb',
	'refs/a\x01b',
	'refs/a\x7fb',
	'refs/a~1',
	'refs/a^2',
	'refs/a:b',
	'refs/a?',
	'refs/a*',
	'refs/a[1]',
	'refs/a]',
	'refs/a\\b',
	'refs/a@{1}',
	'refs/a@b',
	'refs/@',
	'@',
	'refs/a{b}',
	'refs/a@',
	'refs/-a',
	'refs/a-',
	'refs/é/ü',
	'refs/日本',
	'refs/a/b/c/d/e',
	'refs/a!b',
	'refs/a"b',
	'refs/a#b',
	'refs/a$b',
	'refs/a%b',
	'refs/a&b',
	"refs/a'b",
	'refs/a(b)',
	'refs/a+b',
	'refs/a,b',
	'refs/a;b',
	'refs/a<b>',
	'refs/a=b',
	'refs/a|b',
	'refs/a`b',
	'refs/a/./b',
	'refs/./a',
	'refs/a/.',
	'refs/...',
	'refs/.',
	'a/b',
	'foo',
	'refs/heads/@{u}',
	'refs/heads/a.lock.lock',
	'refs/heads/.lock.b',
];

function gitAccepts(name: string): boolean {
	return (
		spawnSync('git', ['check-ref-format', name], {
			stdio: 'ignore',
			env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
		}).status === 0
	);
}

describe('ref names as git checks them', () => {
	it('refNameProblem agrees with `git check-ref-format` on every name of the table', () => {
		const disagreements = names
			.filter((name) => !name.includes('\0'))
			.filter((name) => (refNameProblem(name) === undefined) !== gitAccepts(name))
			.map(
				(name) =>
					`${JSON.stringify(name)}: git ${gitAccepts(name) ? 'accepts' : 'refuses'}, desk says ${refNameProblem(name) ?? 'fine'}`,
			);
		assert.deepEqual(disagreements, []);
	});

	it('checkRefName takes only full refs/ names git accepts, and names the refused one with git.badRef', () => {
		assert.equal(checkRefName('refs/desk/history'), 'refs/desk/history');
		for (const bad of ['refs/../x', 'a/b', 'HEAD', 'refs/a\0b', 'refs/p\ud800', `refs/${'a'.repeat(1100)}`]) {
			assert.throws(
				() => checkRefName(bad),
				(error: unknown) =>
					isDeskError(error, 'git.badRef') && (error.data as { ref: string }).ref === bad.slice(0, 200),
				bad,
			);
		}
		assert.equal(isRefName('HEAD'), true);
		assert.equal(isRefName('refs/../x'), false);
	});
});
