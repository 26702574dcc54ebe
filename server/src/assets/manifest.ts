import { DeskError } from '../core/errors';
import type { Manifest, ManifestEntry } from './types';

/**
 * Snapshot manifests (format 1): the files of a version, sorted by path, each with the sha256 of
 * its content. A manifest is stored as a blob of its canonical JSON, so two equal manifests have
 * the same hash, which is how "nothing changed" is recognised.
 */

const hashPattern = /^[0-9a-f]{64}$/;

/** A relative `/`-separated path with no empty, `.` or `..` component and no NUL (a backslash is a plain character here). */
export function isSafeRelativePath(value: string): boolean {
	if (value.length === 0 || value.length > 4096 || value.startsWith('/') || value.includes('\0')) {
		return false;
	}
	return value.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

export function canonicalManifest(files: ManifestEntry[]): Manifest {
	const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
	return {
		format: 1,
		files: sorted.map((f) => ({ path: f.path, hash: f.hash, size: f.size, executable: f.executable })),
	};
}

/** The canonical bytes of a manifest; `manifest` must already be canonical (canonicalManifest). */
export function encodeManifest(manifest: Manifest): Buffer {
	return Buffer.from(JSON.stringify(manifest), 'utf8');
}

export function decodeManifest(bytes: Buffer, hash: string): Manifest {
	const fail = (why: string) =>
		new DeskError('manifest.corrupt', `Manifest ${hash} is not valid: ${why}.`, { hash, problem: why });
	let value: unknown;
	try {
		value = JSON.parse(bytes.toString('utf8'));
	} catch {
		throw fail('not JSON');
	}
	const manifest = value as Partial<Manifest> | null;
	if (manifest === null || typeof manifest !== 'object') {
		throw fail('not an object');
	}
	if (manifest.format !== 1) {
		throw fail(`unknown format ${JSON.stringify(manifest.format)}`);
	}
	if (!Array.isArray(manifest.files)) {
		throw fail('no file list');
	}
	for (const entry of manifest.files as unknown[]) {
		const e = entry as Partial<ManifestEntry>;
		if (typeof e.path !== 'string' || !isSafeRelativePath(e.path)) {
			throw fail(`unsafe path ${JSON.stringify(e.path)}`);
		}
		if (
			typeof e.hash !== 'string' ||
			!hashPattern.test(e.hash) ||
			!Number.isSafeInteger(e.size) ||
			(e.size as number) < 0 ||
			typeof e.executable !== 'boolean'
		) {
			throw fail(`bad entry for ${e.path}`);
		}
	}
	return manifest as Manifest;
}

export interface ManifestDiff {
	added: ManifestEntry[];
	removed: ManifestEntry[];
	modified: Array<{ before: ManifestEntry; after: ManifestEntry }>;
}

/** What changed from `before` to `after`, by path. */
export function diffManifests(before: Manifest, after: Manifest): ManifestDiff {
	const old = new Map(before.files.map((f) => [f.path, f]));
	const diff: ManifestDiff = { added: [], removed: [], modified: [] };
	for (const file of after.files) {
		const was = old.get(file.path);
		if (!was) {
			diff.added.push(file);
		} else {
			old.delete(file.path);
			if (was.hash !== file.hash || was.executable !== file.executable) {
				diff.modified.push({ before: was, after: file });
			}
		}
	}
	diff.removed = [...old.values()];
	return diff;
}
