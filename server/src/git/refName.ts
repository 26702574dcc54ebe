import { DeskError } from '../core/errors';

/** The longest ref name the desk takes from input (git has no limit; file systems do). */
export const maxRefNameLength = 1024;

/**
 * Why git would refuse `name` as a ref name, or undefined when `git check-ref-format <name>` (no
 * options) accepts it. The rules are git's own (`git help check-ref-format`, refs.c):
 * 1. no component begins with `.` or ends with `.lock`; no component is empty (no leading, trailing
 *    or doubled `/`);
 * 2. at least one `/` (the one-level names such as `HEAD` need `--allow-onelevel`);
 * 3. no `..`; 4. no control character, space, `~`, `^` or `:`; 5. no `?`, `*` or `[`;
 * 7. it does not end with `.`; 8. no `@{`; 9. it is not `@`; 10. no `\`.
 * Git works on bytes: a name whose UTF-16 does not round-trip through UTF-8 (a lone surrogate) is
 * refused too, since it would reach git altered.
 */
export function refNameProblem(name: string): string | undefined {
	if (name === '') {
		return 'it is empty';
	}
	if (Buffer.from(name, 'utf8').toString('utf8') !== name) {
		return 'it is not valid Unicode';
	}
	if (name === '@') {
		return 'it is "@"';
	}
	if (name.includes('@{')) {
		return 'it contains "@{"';
	}
	if (name.includes('..')) {
		return 'it contains ".."';
	}
	const bad = /[\x00-\x20\x7f~^:?*[\\]/.exec(name);
	if (bad) {
		return `it contains ${JSON.stringify(bad[0])}`;
	}
	if (name.endsWith('.')) {
		return 'it ends with "."';
	}
	const components = name.split('/');
	if (components.length < 2) {
		return 'it has no "/"';
	}
	for (const component of components) {
		if (component === '') {
			return 'it has an empty component (a leading, trailing or doubled "/")';
		}
		if (component.startsWith('.')) {
			return `its component ${JSON.stringify(component)} begins with "."`;
		}
		if (component.endsWith('.lock')) {
			return `its component ${JSON.stringify(component)} ends with ".lock"`;
		}
	}
	return undefined;
}

/**
 * `name` when it is a full ref name (`refs/…`) that git accepts and no longer than
 * `maxRefNameLength`; else `git.badRef` naming it (cut to 200 characters) and saying why.
 */
export function checkRefName(name: string): string {
	const problem =
		name.length > maxRefNameLength
			? `it is longer than ${maxRefNameLength} characters`
			: !name.startsWith('refs/')
				? 'it does not begin with "refs/"'
				: refNameProblem(name);
	if (problem !== undefined) {
		const shown = name.slice(0, 200);
		throw new DeskError('git.badRef', `${JSON.stringify(shown)} is not a ref name git allows: ${problem}.`, {
			ref: shown,
			reason: problem,
		});
	}
	return name;
}

/** `HEAD`-like names (capitals and underscores, at the top of a git folder) or a full ref name git accepts. */
export function isRefName(name: string): boolean {
	if (/^[A-Z][A-Z_]*$/.test(name)) {
		return true;
	}
	return name.length <= maxRefNameLength && name.startsWith('refs/') && refNameProblem(name) === undefined;
}
