// Bundles the extension (client), the desk server, the `desk` command line and the webviews with
// esbuild, copies sql.js's wasm beside the server and pdf.js (its module, its worker and its licence)
// for the PDF preview, and compiles tests and benchmarks to out/.
// Type checking is `tsc -b` (npm run typecheck); esbuild only strips types.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const production = process.argv.includes('--production');
const root = new URL('..', import.meta.url).pathname;

rmSync(join(root, 'dist'), { recursive: true, force: true });
mkdirSync(join(root, 'dist'), { recursive: true });

const common = {
	bundle: true,
	platform: 'node',
	target: 'node20',
	format: 'cjs',
	sourcemap: production ? false : 'linked',
	minify: production,
	logLevel: 'warning',
	absWorkingDir: root,
	// The desk's version, for what it says of itself (the MCP server's name and version).
	define: { DESK_VERSION: JSON.stringify(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version) },
};

// A part of the bundle kept in a bundle of its own beside it and loaded when first needed: its
// `import()` becomes a require of that file at run time (a require, not an import: the command line
// runs from a code cache through node:vm, where import() needs an experimental flag).
function apart(name, filter) {
	return {
		name: `${name}-apart`,
		setup(build) {
			const namespace = `apart-${name}`;
			build.onResolve({ filter }, (args) =>
				args.namespace === namespace ? { path: `./${name}`, external: true } : { path: name, namespace },
			);
			build.onLoad({ filter: /.*/, namespace }, () => ({
				contents: `module.exports = require(${JSON.stringify(`./${name}`)});`,
				loader: 'js',
			}));
		},
	};
}

// isomorphic-git (only for writing run history): parsing it costs every start of the desk tens of
// milliseconds otherwise.
const isoGitWriterApart = apart('isoGitWriter.js', /(^\.|\/)isoGitWriter(\.js)?$/);

// The MCP server of `desk mcp` likewise (the SDK and zod are half the command line's size, and build
// their schemas as they load): the one command that serves MCP loads it.
const mcpServerApart = apart('mcpServer.js', /(\/mcp\/server(\.js)?|^\.\/mcpServer\.js)$/);

// `import * as fs from 'node:fs'` compiles to a copy of the module's properties in every module that
// imports it (esbuild's __toESM): ninety copies, a tenth of the command line's start. Each builtin
// becomes one bundled module instead, whose namespace every importer shares.
const builtinsOnce = {
	name: 'builtins-once',
	setup(build) {
		build.onResolve({ filter: /^node:/ }, (args) =>
			args.namespace === 'builtin' || args.kind !== 'import-statement'
				? undefined
				: { path: args.path, namespace: 'builtin' },
		);
		build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({
			contents: `export * from ${JSON.stringify(args.path)}; export { default } from ${JSON.stringify(args.path)};`,
			loader: 'js',
		}));
	},
};

// The processes Node starts (the server, the command line): without comments or indentation their
// source is ASCII, which V8 reads and compiles faster than a two-byte string (a comment with a dash
// or an ellipsis made the whole file two-byte); names stay as written, so stacks read as the source.
const nodeBundle = {
	...common,
	minifyWhitespace: true,
	plugins: [builtinsOnce],
};

await Promise.all([
	esbuild.build({
		...common,
		entryPoints: ['client/src/extension.ts'],
		outfile: 'dist/client.js',
		external: ['vscode'],
	}),
	esbuild.build({
		...nodeBundle,
		entryPoints: ['server/src/main.ts'],
		outfile: 'dist/server.js',
		plugins: [builtinsOnce, isoGitWriterApart],
	}),
	// `desk` is a launcher that runs the command line (deskMain.js) from V8's code cache.
	esbuild.build({
		...nodeBundle,
		entryPoints: ['server/src/cli/main.ts'],
		outfile: 'dist/deskMain.js',
		plugins: [builtinsOnce, isoGitWriterApart, mcpServerApart],
	}),
	esbuild.build({
		...nodeBundle,
		entryPoints: ['server/src/cli/launcher.ts'],
		outfile: 'dist/desk.js',
		banner: { js: '#!/usr/bin/env node' },
	}),
	esbuild.build({ ...common, entryPoints: ['server/src/mcp/server.ts'], outfile: 'dist/mcpServer.js' }),
	esbuild.build({ ...common, entryPoints: ['server/src/git/isoGitWriter.ts'], outfile: 'dist/isoGitWriter.js' }),
	// The desk tools inside a run's sandbox: the stdio MCP proxy and the shell fallback, each over the
	// run's socket. Bundles of their own: the agent starts them with the desk's Node, next to nothing else.
	esbuild.build({ ...common, entryPoints: ['server/src/mcp/proxy.ts'], outfile: 'dist/desk-mcp.js' }),
	esbuild.build({ ...common, entryPoints: ['server/src/mcp/toolCli.ts'], outfile: 'dist/desk-tool.js' }),
	esbuild.build({
		...common,
		platform: 'browser',
		format: 'iife',
		target: 'es2022',
		entryPoints: ['webview/src/main.ts'],
		outfile: 'dist/webview.js',
	}),
	esbuild.build({
		...common,
		platform: 'browser',
		format: 'iife',
		target: 'es2022',
		entryPoints: ['webview/src/pdfViewer.ts'],
		// A folder of its own: the PDF page may load this and dist/pdfjs, nothing else of dist/.
		outfile: 'dist/pdfViewer/pdfViewer.js',
	}),
	esbuild.build({
		...common,
		platform: 'browser',
		format: 'iife',
		target: 'es2022',
		entryPoints: ['webview/src/runPage.ts'],
		// A folder of its own: a run's page may load this and nothing else.
		outfile: 'dist/runPage/runPage.js',
	}),
]);
// The command line runs through node:vm (see server/src/cli/launcher.ts), where import() needs an
// experimental flag: its bundle must load everything with require.
if (/\bimport\(/.test(readFileSync(join(root, 'dist/deskMain.js'), 'utf8'))) {
	throw new Error('dist/deskMain.js calls import(), which fails when desk.js runs it from the code cache');
}
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), join(root, 'dist/sql-wasm.wasm'));
chmodSync(join(root, 'dist/desk.js'), 0o755);

// pdf.js as its package ships it, loaded by dist/pdfViewer/pdfViewer.js at run time: the legacy build (it carries
// the polyfills the Chromium of older VS Code releases needs; the modern one uses APIs from 2025 on),
// minified, and nothing else of the package (no sandbox, viewer, fonts, cmaps or wasm).
const pdfjs = join(root, 'dist/pdfjs');
mkdirSync(pdfjs, { recursive: true });
copyFileSync(require.resolve('pdfjs-dist/legacy/build/pdf.min.mjs'), join(pdfjs, 'pdf.min.mjs'));
copyFileSync(require.resolve('pdfjs-dist/legacy/build/pdf.worker.min.mjs'), join(pdfjs, 'pdf.worker.min.mjs'));
copyFileSync(join(dirname(require.resolve('pdfjs-dist/package.json')), 'LICENSE'), join(pdfjs, 'LICENSE'));

if (!production) {
	// Tests and benchmarks: one file per entry, their own imports bundled, packages left to node_modules.
	rmSync(join(root, 'out/test'), { recursive: true, force: true });
	rmSync(join(root, 'out/bench'), { recursive: true, force: true });
	const entries = [...findTs('test'), ...findTs('bench')].filter(
		(f) => !f.includes('/fixtures/') && !f.endsWith('.d.ts'),
	);
	await esbuild.build({
		...common,
		sourcemap: 'inline',
		entryPoints: entries,
		outdir: 'out',
		outbase: '.',
		packages: 'external',
		external: ['vscode'],
	});
}

function findTs(dir) {
	const out = [];
	const walk = (d) => {
		for (const name of readdirSync(join(root, d))) {
			const rel = join(d, name);
			if (statSync(join(root, rel)).isDirectory()) {
				walk(rel);
			} else if (name.endsWith('.ts')) {
				out.push(relative(root, join(root, rel)));
			}
		}
	};
	walk(dir);
	return out;
}
