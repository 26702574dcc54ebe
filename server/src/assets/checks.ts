import { DeskError } from '../core/errors';
import type { AssetCheck } from './types';

/** Checks (glossary: Checks): a list of { id, executable, args, cwd, timeout }, ids unique. */
export function validateChecks(value: unknown): AssetCheck[] {
	// `index` and `field` say which check and which of its fields, for callers that name them their own way.
	const fail = (why: string, index?: number, field?: string) =>
		new DeskError('asset.badChecks', `Checks are not valid: ${why}.`, {
			problem: why,
			...(index !== undefined ? { index } : {}),
			...(field ? { field } : {}),
		});
	if (!Array.isArray(value)) {
		throw fail('expected a list of checks');
	}
	const ids = new Set<string>();
	return value.map((item: unknown, index) => {
		const c = item as Partial<AssetCheck> | null;
		const at = `check ${index + 1}`;
		if (c === null || typeof c !== 'object') {
			throw fail(`${at} is not an object`, index);
		}
		const known = new Set(['id', 'executable', 'args', 'cwd', 'timeout']);
		const unknown = Object.keys(c).filter((k) => !known.has(k));
		if (unknown.length > 0) {
			throw fail(`${at} has unknown field ${unknown[0]}`, index, unknown[0]);
		}
		if (typeof c.id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(c.id)) {
			throw fail(`${at}: id must be 1 to 64 lowercase letters, digits, - or _`, index, 'id');
		}
		if (ids.has(c.id)) {
			throw fail(`${at}: id ${c.id} is used twice`, index, 'id');
		}
		ids.add(c.id);
		if (typeof c.executable !== 'string' || c.executable.trim() === '') {
			throw fail(`${at}: executable is required`, index, 'executable');
		}
		const args = c.args ?? [];
		if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
			throw fail(`${at}: args must be a list of strings`, index, 'args');
		}
		const cwd = c.cwd ?? '.';
		if (typeof cwd !== 'string' || cwd.startsWith('/') || cwd.split('/').includes('..')) {
			throw fail(`${at}: cwd must be a path inside the asset's folder`, index, 'cwd');
		}
		const timeout = c.timeout ?? 600;
		if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > 24 * 3600) {
			throw fail(`${at}: timeout must be seconds between 0 and 86400`, index, 'timeout');
		}
		return { id: c.id, executable: c.executable, args, cwd, timeout };
	});
}
