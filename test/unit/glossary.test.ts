/**
 * The words of the code and docs/glossary.md agree: every `(glossary: A, B)` citation in the sources
 * names an entry (a `###` heading) of the glossary, and no comment cites the seed documents the
 * glossary replaced (they are not in the repository: `seed 000`, `§05`, the circled steps ①–⑨).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { findProjectRoot } from '../helpers/temp';

const root = findProjectRoot();

function sources(): string[] {
	const found: string[] = [];
	const walk = (folder: string) => {
		for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
			const full = path.join(folder, entry.name);
			if (entry.isDirectory()) {
				walk(full);
			} else if (/\.(ts|mjs)$/.test(entry.name)) {
				found.push(full);
			}
		}
	};
	for (const top of ['server/src', 'client/src', 'webview/src', 'test', 'bench', 'scripts']) {
		walk(path.join(root, top));
	}
	return found.filter((file) => !file.endsWith(path.join('test', 'unit', 'glossary.test.ts')));
}

it('every glossary citation in the code names an entry of docs/glossary.md, and none cites the seed documents', () => {
	const entries = new Set(
		[...fs.readFileSync(path.join(root, 'docs', 'glossary.md'), 'utf8').matchAll(/^### (.+)$/gm)].map((m) =>
			m[1]!.trim(),
		),
	);
	assert.ok(entries.size >= 20, `the glossary's entries were read (${entries.size})`);
	const unknown: string[] = [];
	const seedCitations: string[] = [];
	for (const file of sources()) {
		const lines = fs.readFileSync(file, 'utf8').split('\n');
		lines.forEach((line, i) => {
			const where = `${path.relative(root, file)}:${i + 1}`;
			for (const citation of line.matchAll(/\(glossary: ([^)]+)\)/g)) {
				for (const name of citation[1]!.split(/,\s*/)) {
					if (!entries.has(name.trim())) {
						unknown.push(`${where} cites "${name.trim()}"`);
					}
				}
			}
			if (/seed 00\d|§\d\d|[\u2460-\u2468]/.test(line)) {
				seedCitations.push(`${where}: ${line.trim().slice(0, 100)}`);
			}
		});
	}
	assert.deepEqual(unknown, [], 'citations of entries the glossary does not have');
	assert.deepEqual(
		seedCitations,
		[],
		'citations of the seed documents, which are not in the repository: cite the glossary',
	);
});
