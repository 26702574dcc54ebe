/**
 * ARCHITECTURE.md's import table as a test. The table (section "server/src": folder | what is in it |
 * may import) is read from the document, so the document and the check cannot drift apart; every
 * import of every file in server/src and client/src is read with the TypeScript parser and checked:
 *
 * - a server module imports only what its row allows: its own folder, the rows' backticked entries
 *   (`core/`: any module of that folder; `store/confinedDir.ts`: that module; `type store/`: types
 *   only, `import type` or every name marked `type`; `node:fs`: a Node module, whether written `fs` or
 *   `node:fs`; `sql.js`: a package), and what the `*` row allows every module. A file with a row of
 *   its own (`desk.ts`, `git/isoGitWriter.ts`) follows that row instead of its folder's;
 * - the client imports from the server only the modules of the `client/src/` row, and those (but
 *   protocol.ts, which the client needs for its types and method names) import nothing themselves;
 * - no module takes part in an import cycle (types included), server or client, and the client's
 *   feature folders (`assets/`, `runs/`, …) do not import each other in a cycle.
 *
 * A failure names the file and the import, or the cycle's path.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { findProjectRoot } from '../helpers/temp';

const root = findProjectRoot();
const serverSrc = path.join(root, 'server', 'src');
const clientSrc = path.join(root, 'client', 'src');

/**
 * Imports the table forbids that other work in progress is removing (issue 13): each names the
 * importing file (from the repository's top) and what it imports (a module from the repository's top,
 * or a Node module or package). Remove an entry when its import is gone; the test fails on an entry
 * that no longer matches anything, so the list only shrinks.
 */
const knownExceptions: ReadonlyArray<{ file: string; imports: string; why: string }> = [];

/** Cycles being broken by work in progress: each as the sorted list of its modules. */
const knownCycles: ReadonlyArray<{ modules: string[]; why: string }> = [];

interface Import {
	/** The module written, as written. */
	specifier: string;
	/** What it names: a file from the repository's top (`server/src/core/errors.ts`), `node:fs`, or a package name. */
	target: string;
	/** Only types are imported: erased at build time. */
	typeOnly: boolean;
	line: number;
}

interface Rule {
	/** Modules of a folder (`core/`) or one module (`desk.ts`), relative to server/src; `*`: every module. */
	key: string;
	/** What is allowed with values and types. */
	values: string[];
	/** What is allowed for types only (the table's `type X`). */
	types: string[];
}

/** The import table of ARCHITECTURE.md's section `## <title>`: one rule per row. */
function readTable(title = 'server/src'): Rule[] {
	const doc = fs.readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');
	const section = doc.split(/^## /m).find((s) => s.startsWith(`${title}\n`));
	assert.ok(section, `ARCHITECTURE.md has a section "## ${title}"`);
	const rows = section
		.split('\n')
		.filter((line) => line.startsWith('|'))
		.map((line) =>
			line
				.split('|')
				.slice(1, -1)
				.map((cell) => cell.trim()),
		);
	assert.deepEqual(
		rows[0],
		['folder', 'what is in it', 'may import'],
		`the table of "${title}" has the columns folder | what is in it | may import`,
	);
	const ticks = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
	return rows.slice(2).map(([folder, , mayImport]) => {
		const keys = ticks(folder ?? '');
		assert.equal(keys.length, 1, `a row of the import table names one folder or file in backticks: ${folder}`);
		const entries = ticks(mayImport ?? '');
		return {
			key: keys[0]!,
			values: entries.filter((e) => !e.startsWith('type ')),
			types: entries.filter((e) => e.startsWith('type ')).map((e) => e.slice('type '.length)),
		};
	});
}

function sourceFiles(dir: string): string[] {
	// Relative paths, not Dirents: Dirent.parentPath needs Node 20.12.
	return fs
		.readdirSync(dir, { encoding: 'utf8', recursive: true })
		.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
		.map((name) => path.join(dir, name))
		.filter((file) => fs.statSync(file).isFile())
		.sort();
}

const fromTop = (file: string) => path.relative(root, file).split(path.sep).join('/');

/** The package or Node module a bare specifier names: `node:fs` for `fs` and `node:fs/promises`. */
function moduleName(specifier: string): string {
	const bare = specifier.startsWith('node:') ? specifier.slice('node:'.length) : specifier;
	const first = bare.split('/')[0]!;
	if (specifier.startsWith('node:') || builtinModules.includes(first)) {
		return `node:${first}`;
	}
	return specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : first;
}

function resolveRelative(from: string, specifier: string): string {
	const base = path.resolve(path.dirname(from), specifier);
	// `./isoGitWriter.js` names the module `isoGitWriter.ts` (Node16 resolution).
	for (const candidate of [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), path.join(base, 'index.ts')]) {
		if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
			return fromTop(candidate);
		}
	}
	assert.fail(`${fromTop(from)} imports ${specifier}, which is no file`);
}

/** Every import and re-export of a file, and every `import()` and `require()` of a literal. */
function importsOf(file: string): Import[] {
	const text = fs.readFileSync(file, 'utf8');
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const found: Import[] = [];
	const add = (literal: ts.StringLiteralLike, typeOnly: boolean) => {
		const specifier = literal.text;
		found.push({
			specifier,
			target: specifier.startsWith('.') ? resolveRelative(file, specifier) : moduleName(specifier),
			typeOnly,
			line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1,
		});
	};
	const visit = (node: ts.Node) => {
		if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
			const clause = node.importClause;
			const named = clause?.namedBindings;
			const typeOnly =
				clause !== undefined &&
				(clause.isTypeOnly ||
					(!clause.name &&
						named !== undefined &&
						ts.isNamedImports(named) &&
						named.elements.length > 0 &&
						named.elements.every((e) => e.isTypeOnly)));
			add(node.moduleSpecifier, typeOnly);
		} else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
			const named = node.exportClause;
			add(
				node.moduleSpecifier,
				node.isTypeOnly ||
					(named !== undefined &&
						ts.isNamedExports(named) &&
						named.elements.length > 0 &&
						named.elements.every((e) => e.isTypeOnly)),
			);
		} else if (
			ts.isImportEqualsDeclaration(node) &&
			ts.isExternalModuleReference(node.moduleReference) &&
			ts.isStringLiteral(node.moduleReference.expression)
		) {
			add(node.moduleReference.expression, node.isTypeOnly);
		} else if (
			ts.isImportTypeNode(node) &&
			ts.isLiteralTypeNode(node.argument) &&
			ts.isStringLiteral(node.argument.literal)
		) {
			add(node.argument.literal, true);
		} else if (
			ts.isCallExpression(node) &&
			node.arguments.length === 1 &&
			ts.isStringLiteralLike(node.arguments[0]!) &&
			(node.expression.kind === ts.SyntaxKind.ImportKeyword ||
				(ts.isIdentifier(node.expression) && node.expression.text === 'require'))
		) {
			add(node.arguments[0], false);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

const serverFiles = sourceFiles(serverSrc);
const clientFiles = sourceFiles(clientSrc);
const imports = new Map([...serverFiles, ...clientFiles].map((file) => [fromTop(file), importsOf(file)]));
const serverPrefix = 'server/src/';

/** Whether a table entry (`core/`, `desk.ts`, `node:fs`, `sql.js`) names the import's target. */
function entryNames(entry: string, target: string): boolean {
	if (!target.startsWith(serverPrefix)) {
		return entry === target;
	}
	const inServer = target.slice(serverPrefix.length);
	return entry.endsWith('/') ? inServer.startsWith(entry) : inServer === entry;
}

/** Imports no row allows, as `file:line imports target ('specifier')`. */
function serverViolations(rules: Rule[]): Array<{ file: string; imports: string; message: string }> {
	const everyModule = rules.find((r) => r.key === '*');
	const violations: Array<{ file: string; imports: string; message: string }> = [];
	for (const [file, list] of imports) {
		if (!file.startsWith(serverPrefix)) {
			continue;
		}
		const inServer = file.slice(serverPrefix.length);
		const folder = inServer.includes('/') ? `${inServer.split('/')[0]}/` : undefined;
		const rule = rules.find((r) => r.key === inServer) ?? rules.find((r) => r.key === folder);
		if (!rule) {
			violations.push({ file, imports: '', message: `${file} has no row in ARCHITECTURE.md's import table` });
			continue;
		}
		for (const imported of list) {
			const own = folder !== undefined && imported.target.startsWith(serverPrefix + folder);
			const allowed = [
				...rule.values,
				...(everyModule?.values ?? []),
				...(imported.typeOnly ? [...rule.types, ...(everyModule?.types ?? [])] : []),
			];
			if (!own && !allowed.some((entry) => entryNames(entry, imported.target))) {
				violations.push({
					file,
					imports: imported.target,
					message: `${file}:${imported.line} imports ${imported.typeOnly ? 'types of ' : ''}${imported.target} ('${imported.specifier}'); ${rule.key} may import ${[...rule.values, ...rule.types.map((t) => `type ${t}`)].join(', ') || 'nothing'}`,
				});
			}
		}
	}
	return violations;
}

/** Cycles in a graph, one path per strongly connected component of more than one node (or a node importing itself). */
function cycles(graph: Map<string, Set<string>>): string[][] {
	let counter = 0;
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const components: string[][] = [];
	const connect = (node: string) => {
		index.set(node, counter);
		low.set(node, counter);
		counter++;
		stack.push(node);
		onStack.add(node);
		for (const next of graph.get(node) ?? []) {
			if (!index.has(next)) {
				connect(next);
				low.set(node, Math.min(low.get(node)!, low.get(next)!));
			} else if (onStack.has(next)) {
				low.set(node, Math.min(low.get(node)!, index.get(next)!));
			}
		}
		if (low.get(node) === index.get(node)) {
			const component: string[] = [];
			let member: string;
			do {
				member = stack.pop()!;
				onStack.delete(member);
				component.push(member);
			} while (member !== node);
			if (component.length > 1 || graph.get(node)?.has(node)) {
				components.push(component);
			}
		}
	};
	for (const node of [...graph.keys()].sort()) {
		if (!index.has(node)) {
			connect(node);
		}
	}
	// One cycle through each component, from its first member in name order: a shortest way back.
	return components.map((component) => {
		const members = new Set(component);
		const start = [...component].sort()[0]!;
		const previous = new Map<string, string>();
		const queue = [start];
		for (let i = 0; i < queue.length; i++) {
			for (const next of graph.get(queue[i]!) ?? []) {
				if (next === start) {
					const path = [start];
					for (let at = queue[i]!; at !== start; at = previous.get(at)!) {
						path.splice(1, 0, at);
					}
					return [...path, start];
				}
				if (members.has(next) && !previous.has(next)) {
					previous.set(next, queue[i]!);
					queue.push(next);
				}
			}
		}
		return [...component, component[0]!];
	});
}

function moduleGraph(prefix: string): Map<string, Set<string>> {
	const graph = new Map<string, Set<string>>();
	for (const [file, list] of imports) {
		if (file.startsWith(prefix)) {
			graph.set(file, new Set(list.filter((i) => i.target.startsWith(prefix)).map((i) => i.target)));
		}
	}
	return graph;
}

const known = (cycle: string[]) =>
	knownCycles.some((k) => k.modules.join(' ') === [...new Set(cycle)].sort().join(' '));

describe('the import table of ARCHITECTURE.md', () => {
	const rules = readTable();

	it('has a row for every folder and top-level file of server/src, and names only what exists', () => {
		const names = fs
			.readdirSync(serverSrc, { withFileTypes: true })
			.map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
		const keys = rules.map((r) => r.key);
		assert.deepEqual(
			names.filter((n) => !keys.includes(n)).sort(),
			[],
			'folders and files of server/src without a row',
		);
		for (const rule of rules) {
			for (const entry of [rule.key, ...rule.values, ...rule.types]) {
				if (
					entry === '*' ||
					entry === 'client/src/' ||
					(/^(node:|[@a-z0-9])/.test(entry) && !/\.ts$|\/$/.test(entry))
				) {
					continue;
				}
				assert.ok(
					fs.existsSync(path.join(serverSrc, entry)),
					`the import table names ${entry}, which is not in server/src`,
				);
			}
		}
	});

	it('allows every import of the server', () => {
		const violations = serverViolations(rules);
		const unexpected = violations.filter(
			(v) => !knownExceptions.some((k) => k.file === v.file && k.imports === v.imports),
		);
		const stale = knownExceptions.filter((k) => !violations.some((v) => v.file === k.file && v.imports === k.imports));
		assert.deepEqual(
			unexpected.map((v) => v.message),
			[],
			'imports the table does not allow',
		);
		assert.deepEqual(stale, [], 'known exceptions that no longer happen: remove them from the list');
	});

	it('lets the client import from the server only the modules the table names, and those import nothing of their own', () => {
		const client = rules.find((r) => r.key === 'client/src/');
		assert.ok(client, 'the import table has a row for client/src/');
		const wrong: string[] = [];
		for (const [file, list] of imports) {
			if (!file.startsWith('client/src/')) {
				continue;
			}
			for (const imported of list) {
				if (
					imported.target.startsWith(serverPrefix) &&
					!client.values.some((entry) => entryNames(entry, imported.target)) &&
					!(imported.typeOnly && client.types.some((entry) => entryNames(entry, imported.target)))
				) {
					wrong.push(
						`${file}:${imported.line} imports ${imported.target}; the client may import from the server ${client.values.join(', ')}`,
					);
				}
			}
		}
		assert.deepEqual(wrong, [], 'server modules the client may not import');
		const impure = client.values
			.filter((entry) => entry !== 'protocol/protocol.ts')
			.flatMap((entry) =>
				(imports.get(serverPrefix + entry) ?? []).map((i) => `${serverPrefix}${entry}:${i.line} imports ${i.target}`),
			);
		assert.deepEqual(
			impure,
			[],
			'a server module the client imports must import nothing: the client bundle would take it along',
		);
	});

	it('finds no import cycle between the modules of the server', () => {
		const found = cycles(moduleGraph(serverPrefix)).filter((c) => !known(c));
		assert.deepEqual(
			found.map((c) => c.join(' → ')),
			[],
			'import cycles',
		);
	});

	it("lets a client folder import another only as the client's table allows", () => {
		// The entries of the client's table that name a folder or a module of client/src; the others
		// (`protocol.ts`, the server's `attachments/names.ts`, webview/src) are the server row's and the webview's.
		const clientRules = readTable('client/src and webview/src');
		const inClient = (entry: string) =>
			!entry.startsWith('server/') &&
			!entry.startsWith('webview/') &&
			fs.existsSync(path.join(clientSrc, entry)) &&
			(entry.endsWith('/') || entry.endsWith('.ts'));
		const wrong: string[] = [];
		for (const [file, list] of imports) {
			const rest = file.slice('client/src/'.length);
			if (!file.startsWith('client/src/') || !rest.includes('/')) {
				continue; // extension.ts, the entry, wires every feature
			}
			const folder = `${rest.split('/')[0]}/`;
			const rule = clientRules.find((r) => r.key === folder);
			if (!rule) {
				wrong.push(`${file}: client/src/${folder} has no row in the client's table`);
				continue;
			}
			const allowed = [...rule.values, ...(rule.types ?? [])].filter(inClient);
			for (const imported of list) {
				if (!imported.target.startsWith('client/src/') || imported.target.startsWith(`client/src/${folder}`)) {
					continue;
				}
				const target = imported.target.slice('client/src/'.length);
				if (!allowed.some((entry) => (entry.endsWith('/') ? target.startsWith(entry) : target === entry))) {
					wrong.push(
						`${file}:${imported.line} imports ${imported.target}; ${folder} may import of the client ${allowed.join(', ') || 'nothing'}`,
					);
				}
			}
		}
		assert.deepEqual(wrong, [], "imports between client folders the client's table does not allow");
	});

	it('finds no import cycle between the modules of the client, nor between its feature folders', () => {
		const graph = moduleGraph('client/src/');
		const found = cycles(graph).filter((c) => !known(c));
		assert.deepEqual(
			found.map((c) => c.join(' → ')),
			[],
			'import cycles',
		);
		const folderOf = (file: string) => {
			const rest = file.slice('client/src/'.length);
			return rest.includes('/') ? `client/src/${rest.split('/')[0]}/` : file;
		};
		const folders = new Map<string, Set<string>>();
		for (const [file, targets] of graph) {
			const from = folderOf(file);
			const set = folders.get(from) ?? new Set<string>();
			folders.set(from, set);
			for (const target of targets) {
				if (folderOf(target) !== from) {
					set.add(folderOf(target));
				}
			}
		}
		const folderCycles = cycles(folders).filter((c) => !known(c));
		const witness = (from: string, to: string) =>
			[...graph].find(
				([file, targets]) => folderOf(file) === from && [...targets].some((t) => folderOf(t) === to),
			)?.[0];
		assert.deepEqual(
			folderCycles.map((c) =>
				c.map((folder, i) => (i + 1 < c.length ? `${folder} (${witness(folder, c[i + 1]!)})` : folder)).join(' → '),
			),
			[],
			"cycles between the client's folders (each with a file that makes the step)",
		);
	});

	it('lists no known cycle that is gone', () => {
		const all = [...cycles(moduleGraph(serverPrefix)), ...cycles(moduleGraph('client/src/'))];
		assert.deepEqual(
			knownCycles.filter((k) => !all.some((c) => [...new Set(c)].sort().join(' ') === k.modules.join(' '))),
			[],
			'known cycles that no longer happen: remove them from the list',
		);
	});
});
