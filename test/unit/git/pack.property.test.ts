/**
 * The pack reader against `git cat-file`: repositories with generated histories (text files edited a
 * little per commit so they delta well, binary files, noise that does not compress, large files) are written by
 * `git fast-import` and then repacked by git with generated depth and window, as ofs-deltas or
 * ref-deltas, in SHA-1 or SHA-256; GitObjectStore with generated (often tiny) cache budgets must read
 * every object byte for byte as git does. fast-check prints the seed and the smallest failing history.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { GitObjectStore } from '../../../server/src/git/objectStore';
import { emptyScan, holdsSubject, scanCommit, walkFields } from '../../../server/src/git/objects';
import { allObjectsByGit, packEntryTypes } from '../../helpers/gitPack';
import { git, gitEnv } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/temp';

const paths = ['a.txt', 'bin', 'dir/b.md', 'dir/sub/big'];

/** A file's next content, made from its last one: edited text lines, random bytes, or a large run. */
const contentStep = fc.oneof(
	{
		weight: 5,
		arbitrary: fc.record({
			kind: fc.constant('edit' as const),
			at: fc.nat(200),
			line: fc.string({ unit: 'grapheme', maxLength: 40 }),
			remove: fc.nat(3),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 2000 }) }),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			kind: fc.constant('large' as const),
			seed: fc.nat(1000),
			size: fc.integer({ min: 70_000, max: 300_000 }),
		}),
	},
	// Bytes that do not compress, so packs grow past a window (16 KiB) and entries straddle two.
	{
		weight: 2,
		arbitrary: fc.record({
			kind: fc.constant('noise' as const),
			seed: fc.nat(),
			size: fc.integer({ min: 1, max: 12_000 }),
		}),
	},
);
type Step = typeof contentStep extends fc.Arbitrary<infer S> ? S : never;

function nextContent(last: Buffer, step: Step): Buffer {
	switch (step.kind) {
		case 'edit': {
			const lines = last.toString('utf8').split('\n');
			const at = step.at % (lines.length + 1);
			lines.splice(at, step.remove, step.line);
			return Buffer.from(lines.join('\n'));
		}
		case 'bytes':
			return Buffer.from(step.bytes);
		case 'noise': {
			const out = Buffer.alloc(step.size);
			let state = step.seed | 1;
			for (let i = 0; i < out.length; i++) {
				state ^= state << 13;
				state ^= state >>> 17;
				state ^= state << 5;
				out[i] = state & 0xff;
			}
			return out;
		}
		case 'large': {
			// Mostly repeated lines, so it deltas against its last version too.
			const line = `line ${step.seed} of a large file that changes a little\n`;
			return Buffer.from(line.repeat(Math.ceil(step.size / line.length)).slice(0, step.size));
		}
	}
}

const history = fc.record({
	commits: fc.array(fc.array(fc.tuple(fc.nat(paths.length - 1), contentStep), { minLength: 1, maxLength: 4 }), {
		minLength: 1,
		maxLength: 12,
	}),
	objectFormat: fc.constantFrom('sha1' as const, 'sha256' as const),
	/** How git packs it: as fast-import left it, or repacked with ofs-deltas or ref-deltas. */
	packing: fc.constantFrom('fast-import', 'ofs', 'ref'),
	depth: fc.integer({ min: 1, max: 50 }),
	window: fc.integer({ min: 2, max: 20 }),
	/** Cache budgets down to a few hundred bytes, so eviction and re-reading run too. */
	caches: fc.record({
		objectCacheBytes: fc.integer({ min: 256, max: 1 << 22 }),
		indexCacheBytes: fc.integer({ min: 256, max: 1 << 20 }),
		windowCacheBytes: fc.integer({ min: 256, max: 1 << 22 }),
		/** Also through inflateSync alone, as on a Node whose zlib handle is not as expected. */
		reuseZlibState: fc.boolean(),
	}),
	/** Each commit's message past its subject: none, short, or long enough that a walk stops inflating early. */
	bodies: fc.array(fc.oneof(fc.constant(''), fc.string({ maxLength: 40 }), fc.integer({ min: 500, max: 20_000 })), {
		maxLength: 12,
	}),
});
type History = typeof history extends fc.Arbitrary<infer H> ? H : never;

/** A `git fast-import` stream of the history: one commit per entry, each setting some files. */
function fastImportStream(commits: History['commits'], bodies: History['bodies'] = []): Buffer {
	const parts: Buffer[] = [];
	const current = new Map<number, Buffer>();
	commits.forEach((changes, i) => {
		const body = bodies[i] ?? '';
		const message = Buffer.from(
			`commit ${String(i).padStart(2, '0')}${typeof body === 'number' ? `\n\n${'a line of the body\n'.repeat(body / 19)}` : body ? `\n\n${body}` : ''}`,
		);
		const lines = [
			`commit refs/heads/main`,
			`mark :${i + 1}`,
			`committer Test <test@example.com> ${1_700_000_000 + i * 60} +0000`,
			`data ${message.length}`,
			message.toString(),
		];
		if (i > 0) {
			lines.push(`from :${i}`);
		}
		parts.push(Buffer.from(`${lines.join('\n')}\n`));
		for (const [file, step] of changes) {
			const content = nextContent(current.get(file) ?? Buffer.alloc(0), step);
			current.set(file, content);
			parts.push(Buffer.from(`M 100644 inline ${paths[file]}\ndata ${content.length}\n`), content, Buffer.from('\n'));
		}
	});
	return Buffer.concat(parts);
}

describe('the pack reader against git cat-file (property)', () => {
	const root = tempDir();
	after(() => fs.rmSync(root, { recursive: true, force: true }));
	let made = 0;
	const seen = { ofs: 0, ref: 0 };

	it('reads every object of a generated, packed repository as git does', () => {
		fc.assert(
			fc.property(history, (h) => {
				const repo = path.join(root, `r${made++}`);
				fs.mkdirSync(repo);
				git(repo, 'init', '-q', `--object-format=${h.objectFormat}`);
				execFileSync('git', ['fast-import', '--quiet'], {
					cwd: repo,
					env: gitEnv(repo),
					input: fastImportStream(h.commits, h.bodies),
				});
				if (h.packing !== 'fast-import') {
					git(
						repo,
						'-c',
						`repack.useDeltaBaseOffset=${h.packing === 'ofs'}`,
						'repack',
						'-a',
						'-d',
						'-f',
						'-q',
						`--depth=${h.depth}`,
						`--window=${h.window}`,
					);
				}
				const types = packEntryTypes(repo, h.objectFormat);
				seen.ofs += types.filter((t) => t === 6).length;
				seen.ref += types.filter((t) => t === 7).length;
				const store = new GitObjectStore(
					path.join(repo, '.git', 'objects'),
					h.objectFormat === 'sha1' ? 20 : 32,
					h.caches,
				);
				try {
					const objects = allObjectsByGit(repo);
					// Twice, so the second pass reads through whatever the caches kept.
					for (let pass = 0; pass < 2; pass++) {
						for (const [oid, object] of objects) {
							const got = store.read(oid);
							assert.equal(got.type, object.type, `type of ${oid}`);
							assert.ok(got.data.equals(object.data), `bytes of ${oid} (${object.type}, ${object.data.length} bytes)`);
						}
					}
					// A walk's reads: whole objects, or a commit's start up to its subject, as git has them.
					for (const [oid, object] of objects) {
						const key = Buffer.from(oid, 'hex');
						const peeked = store.peek(key);
						assert.equal(peeked?.type, object.type, `peeked type of ${oid}`);
						assert.ok(peeked.data.equals(object.data), `peeked bytes of ${oid}`);
						if (object.type === 'commit') {
							const start = store.peek(key, holdsSubject)!;
							assert.ok(
								holdsSubject(start.data) || start.data.length === object.data.length,
								`the start of ${oid} holds its subject, or is all of it`,
							);
							assert.ok(start.data.equals(object.data.subarray(0, start.data.length)), `the start of ${oid}`);
							const scan = emptyScan();
							assert.ok(scanCommit(start.data, h.objectFormat === 'sha1' ? 20 : 32, scan));
							assert.deepEqual(
								walkFields(start.data, h.objectFormat === 'sha1' ? 20 : 32),
								walkFields(object.data, h.objectFormat === 'sha1' ? 20 : 32),
							);
						}
					}
				} finally {
					store.close();
					fs.rmSync(repo, { recursive: true, force: true });
				}
			}),
			{ numRuns: 40, includeErrorInReport: true, interruptAfterTimeLimit: 30_000 },
		);
		assert.ok(
			seen.ofs > 0 && seen.ref > 0,
			`the generated packs held ofs-deltas (${seen.ofs}) and ref-deltas (${seen.ref})`,
		);
	});
});
