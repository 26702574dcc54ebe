/**
 * A repository shaped like git.git, for the real-size git benchmark (issue 11) and the CI e2e test.
 *
 * What it makes (`git fast-import`, then `git repack -adF --window=10 --depth=50`, then a checkout):
 * - `commits` first-parent commits on `main`; every `mergeEvery`-th is a merge (`Merge branch
 *   'ab/topic'`) of a side branch that forked one to four commits earlier and has one or two
 *   commits of its own, touching files main did not touch since the fork. Annotated tags
 *   `v2.N.0` every `releaseEvery` commits (with a RelNotes file and a VERSION edit); `maint` at the
 *   last one.
 * - `files` files at the tip in about `folders` folders, depth up to 5, laid out like a C project
 *   with tests, docs, contrib, compat, translations and a web front end (`Makefile`, `builtin/*.c`,
 *   `src/…/*.c|h`, `t/t1234-name.sh`, `t/t4013/diff.*`, `Documentation/config/*.txt`, `po/*.po`,
 *   `web/src/components/…/*.tsx`, `contrib/…`). Sizes are long-tailed: most sources 1-20 KB, some
 *   over 100 KB (Makefile ~110 KB), the .po files 0.3-1.2 MB, `web/package-lock.json` ~0.9 MB,
 *   a few binary archives of 1.5-4 MB.
 * - Each commit changes a few files (1 to ~20, mean 2.3; near each other by folder), editing lines
 *   inside them (hunks that modify, insert or delete lines; now and then a larger rewrite); files
 *   are added (2,164 of the 5,253 in the first commit, the rest over the history), removed (~250)
 *   and renamed (~230); a translation round every `l10nEvery` commits rewrites part of some .po
 *   files; binary assets (images, fixture packs, fonts, archives) get new revisions, which git
 *   stores whole: `binaryRevisionBytes` over the history. That binary bulk stands in, in pack bytes,
 *   for git.git's three times longer history (75,000 commits in all against our 24,700), which a
 *   text history could only reach with tens of GB of stream.
 * - Authors with their own time zones (summer time where they have it), a maintainer who commits
 *   most of it, author dates before committer dates, subjects like `refs: fix a leak in
 *   ref_iterator_free()`, bodies with Signed-off-by; 2005 to 2024.
 * - All content comes from a seeded PRNG (sfc32; binaries from AES-CTR keyed by the seed): two
 *   generations with the same parameters give the same commits and the same pack, byte for byte.
 *
 * The pack: fast-import writes everything uncompressed and without deltas (`pack.compression=0
 * --depth=0`: its blob deltas would be against whichever blob came just before in the stream, and
 * its tree deltas double its time), blobs inline in the commits; then `git repack -adF --window=10
 * --depth=50` finds the deltas and compresses every object as a `git gc --aggressive`-like repack
 * does, leaving one pack of ofs-deltas (no ref-deltas) with chains up to 50. Binary paths are
 * marked `-delta` (`.git/info/attributes`, removed after) only while repacking: random bytes never
 * delta, so the pack is the same, and git does not spend a minute finding that out.
 *
 * Figures on a 2-core machine, idle (generator version 2; `node out/bench/generateGitLikeRepo.js
 * [--small]` prints them, and so does the benchmark, from its own generation):
 *   full:  24,000 first-parent commits, 480 of them merges (24,662 in all, with the side commits);
 *          48 tags;
 *          5,002 files at the tip in 361 folders (depth 5), 73 MB (400 under 1 KB, 4,026 of 1-20 KB,
 *          520 of 20-100 KB, 49 of 100 KB-1 MB, 7 over 1 MB); 1,178 MB streamed into fast-import;
 *          one pack of 441 MB, 200,695 objects (121,546 trees, 54,439 blobs), 160,048 ofs-deltas,
 *          no ref-deltas, chains mean 14.7, p50 10, p95 45, max 50; generated in 60 s (stream and
 *          fast-import 30 s, repack 26 s, checkout 2 s).
 *   small: the same shape with text at 0.6 of its size and 60 MB of binary revisions: 5,002 files,
 *          53 MB; 597 MB streamed; one pack of 121 MB, 197,292 objects, 157,466 ofs-deltas, chains
 *          mean 14.8, p95 45, max 50; generated in 34 s (stream 17-20 s, repack 12-13 s).
 *   With the machine busy (other tests running) the times grow by up to half.
 *
 * The repository is cached in the OS temp folder under a name made of the generator's version
 * and a hash of the parameters, so a second run reuses it; `gitLikeRepo()` says whether it did
 * and how long the generation took. Callers that write into it (a new commit, `.desk/`) work on
 * `linkedCopy()`, a hard-linked copy (git never rewrites a file in place).
 */
import { spawn, execFileSync } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Writable } from 'node:stream';
import { benchGitEnv } from './benchRepo';

/**
 * Bump when what the generator makes changes (content, layout, or the two parameter sets below):
 * caches of other versions are then removed instead of reused.
 */
export const generatorVersion = 2;

export interface GitLikeParams {
	/** First-parent commits on main. */
	commits: number;
	/** Every this many first-parent commits is a merge of a side branch with one or two commits. */
	mergeEvery: number;
	/** Files at the tip. */
	files: number;
	/** Folders at the tip (about). */
	folders: number;
	/** Bytes of binary revisions committed over the history (after the first version of each). */
	binaryRevisionBytes: number;
	/** First-parent commits between translation rounds. */
	l10nEvery: number;
	/** First-parent commits between releases (tag, RelNotes). */
	releaseEvery: number;
	/**
	 * Text files are born at this fraction of their planned size (1: git.git-like). Every version
	 * of every file goes through fast-import and the repack, so this sets most of the generation time.
	 */
	textScale: number;
	seed: number;
}

/** git.git-sized: a pack over 400 MB. */
export const fullSize: GitLikeParams = {
	commits: 24_000,
	mergeEvery: 50,
	files: 5_000,
	folders: 420,
	binaryRevisionBytes: 370 * 1024 * 1024,
	l10nEvery: 400,
	releaseEvery: 500,
	textScale: 1,
	seed: 11,
};

/**
 * For CI: the same shape (24,000 first-parent commits, 5,000 files, the same layout and kinds of
 * change) with text files at 0.6 of their size and less binary bulk: a pack of ~120 MB, still
 * far over what a reader that loads whole packs can read quickly, made in well under half the
 * stream of the full size.
 */
export const smallSize: GitLikeParams = { ...fullSize, binaryRevisionBytes: 60 * 1024 * 1024, textScale: 0.6 };

export interface PackFigures {
	packs: number;
	bytes: number;
	objects: number;
	byType: Record<string, number>;
	whole: number;
	ofsDeltas: number;
	refDeltas: number;
	/** Delta chain lengths over the deltified objects. */
	depthMean: number;
	depthP50: number;
	depthP95: number;
	depthMax: number;
	/** Deltified objects by chain length bucket. */
	depthBuckets: Record<string, number>;
}

export interface GitLikeFigures {
	generatorVersion: number;
	params: GitLikeParams;
	firstParentCommits: number;
	commits: number;
	merges: number;
	tags: number;
	filesAtTip: number;
	foldersAtTip: number;
	maxDepth: number;
	tipBytes: number;
	/** Files at the tip by size. */
	sizeBuckets: Record<string, number>;
	largest: Array<{ path: string; size: number }>;
	/** Bytes fed to fast-import (every version of every file). */
	streamBytes: number;
	pack: PackFigures;
	tip: string;
	/** A file at the tip for `cat`: the root Makefile. */
	catPath: string;
	timings: { streamMs: number; repackMs: number; checkoutMs: number; totalMs: number };
}

export interface GitLikeRepo {
	/** The repository (a checkout with its .git). */
	dir: string;
	figures: GitLikeFigures;
	/** True when an earlier run's generation was reused. */
	reused: boolean;
	cacheDir: string;
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness

class Rng {
	private a: number;
	private b: number;
	private c: number;
	private d: number;

	constructor(seed: number, stream = 0) {
		this.a = 0x9e3779b9 ^ seed;
		this.b = 0x243f6a88 ^ stream;
		this.c = 0xb7e15162;
		this.d = 1;
		for (let i = 0; i < 15; i++) {
			this.next();
		}
	}

	/** sfc32. */
	next(): number {
		const t = (((this.a + this.b) | 0) + this.d) | 0;
		this.d = (this.d + 1) | 0;
		this.a = this.b ^ (this.b >>> 9);
		this.b = (this.c + (this.c << 3)) | 0;
		this.c = (this.c << 21) | (this.c >>> 11);
		this.c = (this.c + t) | 0;
		return t >>> 0;
	}

	float(): number {
		return this.next() / 4294967296;
	}

	int(n: number): number {
		return Math.floor(this.float() * n);
	}

	range(lo: number, hi: number): number {
		return lo + this.int(hi - lo + 1);
	}

	chance(p: number): boolean {
		return this.float() < p;
	}

	pick<T>(items: readonly T[]): T {
		return items[this.int(items.length)]!;
	}

	normal(): number {
		const u = 1 - this.float();
		const v = this.float();
		return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
	}

	logNormal(median: number, sigma: number): number {
		return median * Math.exp(sigma * this.normal());
	}

	exponential(mean: number): number {
		return -mean * Math.log(1 - this.float());
	}

	weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
		let total = 0;
		for (const [, w] of items) {
			total += w;
		}
		let x = this.float() * total;
		for (const [item, w] of items) {
			x -= w;
			if (x < 0) {
				return item;
			}
		}
		return items[items.length - 1]![0];
	}
}

// ---------------------------------------------------------------------------------------------
// Words and text

const idWords = (
	'repo commit tree blob ref pack index object buf len path name entry list hash oid opts flags config remote diff merge status cache graph walk ' +
	'parse read write free init alloc strbuf item count err ret fd size offset data line cb ctx state mode type base head branch tag log rev file dir ' +
	'lock str arg prefix worktree submodule transport packet bitmap midx sparse attr ignore pathspec hook trace progress delta chunk table block record ' +
	'reader writer stack queue map set key value node child parent next prev first last result out src dst tmp pos nr refs odb loose promisor fetch ' +
	'push upload receive shallow bundle note reflog stash rebase cherry pick revert bisect blame grep archive describe notes replace filter sequencer ' +
	'todo author committer date ident signature gpg commit_graph bloom changed range lines hunk patch apply whitespace encoding utf8 quote escape ' +
	'color column pager editor prompt credential helper url http curl proxy socket server client protocol capability advertise negotiate want have ' +
	'ack done filespec pair queue rename copy score similarity break'
).split(' ');
const proseWords = (
	'the a an of to in for on with when that this it is are be by as at from or and not but if which can will should may must only also into ' +
	'than then there their they them its we you your our has have had was were been being do does did so such these those other more most some ' +
	'any each every all both no nor same own just over under again further once here where why how what who whom command option value file ' +
	'repository branch commit tree object reference history change patch series topic user users default behaviour behavior configuration ' +
	'variable setting output input message error warning documentation test tests case cases code function caller callers helper callback ' +
	'memory leak race condition loop path paths directory remote local server client protocol request response update updates new old ' +
	'instead because since while after before during without within between across through around rather simply correctly properly ' +
	'currently previously later earlier never always sometimes often usually rarely make makes made use uses used allow allows allowed avoid ' +
	'avoids fix fixes fixed add adds added remove removes removed teach teaches taught handle handles handled'
).split(' ');
const foreignWords = (
	'der die das und ist nicht mit für auf wird werden kann le la les des est pas avec pour sur sera peut el los las del es con para por ' +
	'será puede il lo gli della è non con per sarà può o os da é não com para será pode het de een is niet met voor wordt kan ' +
	'fichier dépôt branche révision Datei Zweig Archiv archivo rama confirmación ficheiro ramo revisão bestand tak versie'
).split(' ');
const gitCommands =
	'add am apply archive bisect blame branch bundle checkout cherry-pick clean clone commit config describe diff fetch format-patch fsck gc grep init log ls-files ls-tree merge mv notes pull push range-diff rebase reflog remote repack replace reset restore rev-list rev-parse revert rm show sparse-checkout stash status submodule switch tag worktree'.split(
		' ',
	);
const firstNames =
	'Alex Ana Ben Carla Chen Dan Dana Eli Emma Felipe Greta Hana Ivan Jana Jeff Jonas Kai Karin Lars Lea Luis Maja Marc Maria Mateo Mia Nina Noah Olga Omar Pat Paula Priya Raj Rosa Sam Sara Sven Taro Tess Tom Uma Vera Wei Yuki Zoe Ramsay Derrick Patrick Elijah Taylor Kristoffer Johannes Phillip Victoria Glen Calvin'.split(
		' ',
	);
const lastNames =
	'Abe Bauer Castro Duarte Eriksen Fischer Garcia Haas Ito Jensen Kowalski Larsen Moreau Nakamura Novak Olsen Petrov Quinn Rossi Schmidt Silva Tanaka Ueda Varga Weber Xu Yamada Zhang Brown Miller Davis Lopez Wilson Moore Martin Lee Walker Young King Scott Green Baker Nelson Hill Adams Campbell Mitchell Roberts Carter Phillips Evans'.split(
		' ',
	);
const domains =
	'gmail.com example.org example.com kernel.org mail.example.net users.noreply.example.com posteo.example web.example acm.example'.split(
		' ',
	);
/** UTC offsets in minutes, with whether the zone keeps summer time (north). */
const zones: ReadonlyArray<readonly [readonly [number, boolean], number]> = [
	[[-480, true], 14],
	[[-420, false], 2],
	[[-300, true], 10],
	[[-360, true], 4],
	[[-180, false], 3],
	[[0, true], 6],
	[[60, true], 20],
	[[120, true], 6],
	[[180, false], 3],
	[[330, false], 6],
	[[480, false], 8],
	[[540, false], 8],
	[[600, false], 3],
	[[0, false], 4],
];
const verbs =
	'fix add teach use drop avoid simplify refactor clarify document rename introduce make handle plug free stop allow remove convert optimize mark reuse support deprecate prepare'.split(
		' ',
	);
const l10nLanguages = 'bg ca de el es fr id it ko pl pt_PT ru sv tr uk vi zh_CN zh_TW'.split(' ');

function id(rng: Rng): string {
	return rng.chance(0.35) ? `${rng.pick(idWords)}_${rng.pick(idWords)}` : rng.pick(idWords);
}

function words(rng: Rng, n: number, list = proseWords): string {
	const out: string[] = [];
	for (let i = 0; i < n; i++) {
		out.push(rng.pick(list));
	}
	return out.join(' ');
}

function sentence(rng: Rng, list = proseWords): string {
	const s = words(rng, rng.range(4, 13), list);
	return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Prose wrapped at 72 columns. */
function paragraph(rng: Rng, sentences: number): string {
	const text: string[] = [];
	for (let i = 0; i < sentences; i++) {
		text.push(`${sentence(rng)}.`);
	}
	const lines: string[] = [];
	let line = '';
	for (const word of text.join(' ').split(' ')) {
		if (line.length + word.length + 1 > 72 && line !== '') {
			lines.push(line);
			line = word;
		} else {
			line = line === '' ? word : `${line} ${word}`;
		}
	}
	lines.push(line);
	return lines.join('\n');
}

type Style = 'c' | 'sh' | 'doc' | 'fixture' | 'script' | 'web' | 'css' | 'make' | 'po' | 'json' | 'bin';

/** One chunk (one or more whole lines) of text in a style. */
function chunk(rng: Rng, style: Exclude<Style, 'bin'>): string {
	const ident = () => id(rng);
	const fn = () => `${rng.pick(idWords)}_${rng.pick(idWords)}`;
	const args = () => Array.from({ length: rng.range(1, 3) }, ident).join(', ');
	switch (style) {
		case 'c':
			return rng.weighted<() => string>([
				[() => '', 10],
				[() => '}', 7],
				[() => '\t}', 5],
				[() => `\t${ident()} = ${fn()}(${args()});`, 15],
				[() => `\tif (${ident()} ${rng.pick(['<', '>', '==', '!=', '&&', '||'])} ${ident()})`, 8],
				[() => `\tif (!${ident()}) {`, 4],
				[() => `\t\treturn ${rng.pick(['0', '-1', ident(), `${fn()}(${ident()})`])};`, 5],
				[() => `\t\treturn error(_("${words(rng, rng.range(3, 8))} '%s'"), ${ident()});`, 3],
				[() => `\t\tdie(_("${words(rng, rng.range(3, 7))}"));`, 2],
				[() => `\tstruct ${ident()} *${ident()} = ${ident()}->${ident()};`, 6],
				[() => `\tint ${ident()} = ${rng.int(64)};`, 3],
				[() => `\tconst char *${ident()};`, 3],
				[() => `\tsize_t ${ident()};`, 2],
				[() => `\tfor (i = 0; i < ${ident()}->nr; i++) {`, 3],
				[() => `\twhile (${fn()}(&${ident()}, ${ident()}) > 0) {`, 1],
				[() => `/*\n * ${words(rng, rng.range(5, 11))}\n * ${words(rng, rng.range(5, 11))}.\n */`, 3],
				[() => `\t/* ${words(rng, rng.range(3, 9))} */`, 4],
				[() => `\nstatic int ${fn()}(struct ${ident()} *${ident()}, const char *${ident()})\n{`, 3],
				[() => `\nvoid ${fn()}(struct ${ident()} *${ident()}, unsigned flags)\n{`, 2],
				[() => `#include "${rng.pick(idWords)}.h"`, 2],
				[() => `\t${fn()}(${args()});`, 8],
				[() => `\t\tbreak;`, 2],
				[() => `\tcase ${rng.pick(idWords).toUpperCase()}_${rng.pick(idWords).toUpperCase()}:`, 2],
				[() => `\t\t${ident()}->${ident()} |= ${rng.pick(idWords).toUpperCase()}_FLAG;`, 2],
				[() => `\tstrbuf_addf(&${ident()}, "%s/%s", ${ident()}, ${ident()});`, 2],
			])();
		case 'sh':
			return rng.weighted<() => string>([
				[() => '', 8],
				[() => `test_expect_success '${words(rng, rng.range(3, 8))}' '`, 6],
				[
					() =>
						`\tgit ${rng.pick(gitCommands)} ${rng.pick(['', '-q ', '--all ', '--no-verify ', '-m msg '])}${ident()} >actual &&`,
					14,
				],
				[() => '\ttest_cmp expect actual', 6],
				[() => "'", 6],
				[() => `\techo ${ident()} >expect &&`, 6],
				[
					() =>
						`\tcat >expect <<-\\EOF &&\n\t${words(rng, rng.range(1, 4), idWords)}\n\t${words(rng, rng.range(1, 4), idWords)}\n\tEOF`,
					4,
				],
				[() => `\ttest_commit ${ident()} &&`, 5],
				[() => `\tgit rev-parse ${rng.pick(['HEAD', 'HEAD^', 'main', 'side', 'HEAD~2'])} >expect &&`, 3],
				[() => `\ttest_must_fail git ${rng.pick(gitCommands)} ${ident()} 2>err &&`, 3],
				[() => `\ttest_grep "${words(rng, rng.range(2, 5))}" err &&`, 2],
				[() => `# ${words(rng, rng.range(4, 10))}`, 3],
				[() => `\t(\n\t\tcd ${ident()} &&\n\t\tgit ${rng.pick(gitCommands)} ${ident()}\n\t) &&`, 2],
			])();
		case 'doc':
			return rng.weighted<() => string>([
				[() => '', 10],
				[() => paragraph(rng, rng.range(1, 3)), 12],
				[() => `--${rng.pick(idWords)}${rng.chance(0.5) ? `-${rng.pick(idWords)}` : ''}::`, 5],
				[() => `\t${sentence(rng)}.`, 4],
				[
					() => {
						const t = `${sentence(rng)}`.slice(0, 40);
						return `${t}\n${'~'.repeat(t.length)}`;
					},
					2,
				],
				[() => `* ${sentence(rng)}.`, 5],
				[() => `------------\n$ git ${rng.pick(gitCommands)} ${ident()}\n------------`, 2],
				[() => `${rng.pick(idWords)}.${rng.pick(idWords)}::`, 3],
			])();
		case 'fixture':
			return rng.weighted<() => string>([
				[
					() =>
						`$ git ${rng.pick(gitCommands)} ${rng.pick(['--stat', '-p', '--raw', '--name-status', '-M', '--cc'])} ${ident()}`,
					2,
				],
				[
					() =>
						`${rng.pick([':100644', ':000000', ':100755'])} 100644 ${rng.next().toString(16).padStart(8, '0')}... ${rng.next().toString(16).padStart(8, '0')}... M\t${ident()}`,
					3,
				],
				[() => ` ${ident()} | ${rng.range(1, 40)} ${'+'.repeat(rng.range(0, 20))}${'-'.repeat(rng.range(0, 10))}`, 4],
				[() => `@@ -${rng.range(1, 90)},${rng.range(1, 9)} +${rng.range(1, 90)},${rng.range(1, 9)} @@`, 2],
				[() => `${rng.pick(['+', '-', ' '])}${words(rng, rng.range(1, 5), idWords)}`, 8],
				[() => '', 2],
			])();
		case 'script':
			return rng.weighted<() => string>([
				[() => '', 8],
				[() => `\tmy $${ident()} = ${fn()}($${ident()});`, 10],
				[() => `sub ${fn()} {\n\tmy ($self, ${'$' + ident()}) = @_;`, 3],
				[() => '}', 6],
				[() => `\treturn $${ident()};`, 4],
				[
					() =>
						`\tif ($${ident()} ${rng.pick(['eq', 'ne', '==', '=~'])} ${rng.pick(["''", '0', '/^\\s*$/', '$' + ident()])}) {`,
					5,
				],
				[() => `def ${fn()}(${args()}):\n    """${sentence(rng)}."""`, 2],
				[() => `    ${ident()} = ${ident()}.${fn()}(${args()})`, 6],
				[() => `# ${words(rng, rng.range(4, 10))}`, 4],
				[() => `proc ${fn()} {${args().replace(/, /g, ' ')}} {\n\tglobal ${ident()}`, 1],
			])();
		case 'web':
			return rng.weighted<() => string>([
				[() => '', 8],
				[
					() =>
						`import { ${cap(rng.pick(idWords))}${cap(rng.pick(idWords))} } from '${rng.pick(['./', '../', '../../'])}${rng.pick(idWords)}';`,
					4,
				],
				[
					() =>
						`export function ${rng.pick(idWords)}${cap(rng.pick(idWords))}(${rng.pick(idWords)}: ${cap(rng.pick(idWords))}): ${rng.pick(['string', 'number', 'boolean', 'void', cap(rng.pick(idWords))])} {`,
					3,
				],
				[
					() =>
						`\tconst ${rng.pick(idWords)}${cap(rng.pick(idWords))} = ${rng.pick(idWords)}.${rng.pick(idWords)}(${rng.pick(idWords)});`,
					12,
				],
				[() => `\treturn ${rng.pick(idWords)}${cap(rng.pick(idWords))};`, 4],
				[() => '}', 6],
				[() => `\tif (!${rng.pick(idWords)}) {\n\t\treturn ${rng.pick(['null', 'undefined', '[]', "''"])};\n\t}`, 3],
				[
					() =>
						`\t\t<${cap(rng.pick(idWords))} ${rng.pick(idWords)}={${rng.pick(idWords)}} onClick={() => ${rng.pick(idWords)}(${rng.pick(idWords)})} />`,
					3,
				],
				[() => `// ${words(rng, rng.range(4, 10))}`, 3],
			])();
		case 'css':
			return `.${rng.pick(idWords)}-${rng.pick(idWords)} {\n\t${rng.pick(['margin', 'padding', 'color', 'display', 'font-size', 'border'])}: ${rng.pick(['0', '4px 8px', 'var(--fg)', 'flex', '12px', '1px solid var(--border)'])};\n}\n`;
		case 'make':
			return rng.weighted<() => string>([
				[() => '', 6],
				[
					() =>
						`${rng.pick(['LIB_OBJS', 'BUILTIN_OBJS', 'TEST_BUILTINS_OBJS', 'XDIFF_OBJS', 'REFTABLE_OBJS', 'SCRIPT_SH'])} += ${rng.pick(['', 'builtin/', 'src/', 'compat/'])}${rng.pick(idWords)}${rng.chance(0.4) ? `-${rng.pick(idWords)}` : ''}.o`,
					14,
				],
				[
					() =>
						`ifdef ${rng.pick(['NO', 'USE', 'HAVE', 'NEEDS'])}_${rng.pick(idWords).toUpperCase()}\n\t${rng.pick(['BASIC_CFLAGS', 'EXTLIBS', 'COMPAT_OBJS'])} += ${rng.pick(['-D', '-l', ''])}${rng.pick(idWords).toUpperCase()}\nendif`,
					5,
				],
				[() => `# ${words(rng, rng.range(4, 12))}`, 5],
				[() => `\t$(QUIET_CC)$(CC) -o $*.o -c $(dep_args) $(ALL_CFLAGS) $(EXTRA_CPPFLAGS) $<`, 1],
				[
					() =>
						`${rng.pick(idWords).toUpperCase()}_${rng.pick(idWords).toUpperCase()} = ${rng.pick(['YesPlease', '1', '$(prefix)/share', 'UnfortunatelyYes'])}`,
					4,
				],
			])();
		case 'po':
			return `#: ${rng.pick(['builtin', 'src', 't', 'compat'])}/${rng.pick(idWords)}.c:${rng.range(10, 3000)}\n#, c-format\nmsgid "${words(rng, rng.range(3, 10))}"\nmsgstr "${words(rng, rng.range(3, 11), foreignWords)}"\n`;
		case 'json':
			return `    "node_modules/${rng.pick(idWords)}-${rng.pick(idWords)}": {\n      "version": "${rng.int(12)}.${rng.int(30)}.${rng.int(20)}",\n      "resolved": "https://registry.npmjs.org/${rng.pick(idWords)}/-/${rng.pick(idWords)}-${rng.int(12)}.${rng.int(30)}.${rng.int(20)}.tgz",\n      "integrity": "sha512-${base64(rng, 64)}",\n      "dev": ${rng.chance(0.5)}\n    },`;
	}
}

function cap(s: string): string {
	return s.charAt(0).toUpperCase() + s.slice(1).replace(/_(.)/g, (_, c: string) => c.toUpperCase());
}

function base64(rng: Rng, bytes: number): string {
	const b = Buffer.alloc(bytes);
	for (let i = 0; i < bytes; i += 4) {
		b.writeUInt32LE(rng.next(), i);
	}
	return b.toString('base64');
}

/** Chunks of one style, each a line or a few, kept in one buffer. */
class Pool {
	readonly buf: Buffer;
	readonly starts: Uint32Array;
	readonly lens: Uint32Array;
	readonly average: number;

	constructor(
		rng: Rng,
		style: Exclude<Style, 'bin'>,
		readonly size: number,
	) {
		const parts: Buffer[] = [];
		this.starts = new Uint32Array(size);
		this.lens = new Uint32Array(size);
		let at = 0;
		for (let i = 0; i < size; i++) {
			const b = Buffer.from(`${chunk(rng, style)}\n`, 'utf8');
			parts.push(b);
			this.starts[i] = at;
			this.lens[i] = b.length;
			at += b.length;
		}
		this.buf = Buffer.concat(parts);
		this.average = at / size;
	}

	materialize(header: Buffer, ids: readonly number[]): Buffer {
		let total = header.length;
		for (const i of ids) {
			total += this.lens[i]!;
		}
		const out = Buffer.allocUnsafe(total);
		header.copy(out, 0);
		let at = header.length;
		const buf = this.buf;
		// A loop beats Buffer.copy's call overhead on chunks of a few dozen bytes.
		for (const i of ids) {
			const start = this.starts[i]!;
			const end = start + this.lens[i]!;
			for (let k = start; k < end; k++) {
				out[at++] = buf[k]!;
			}
		}
		return out;
	}
}

// ---------------------------------------------------------------------------------------------
// The files

interface FileSpec {
	index: number;
	path: string;
	style: Style;
	executable: boolean;
	/** Bytes when it is born. */
	size: number;
	/** Relative chance to be picked for an edit. */
	hot: number;
	/** First-parent commit that adds it (1: the first commit). */
	birth: number;
	/** First-parent commit that removes it, if any. */
	death: number;
	/** Set for release notes: born by the release commit. */
	release?: number;
}

interface Group {
	dir: string;
	/** Random subfolders to grow under dir (a share of the folder target). */
	subfolders: number;
	maxDepth: number;
	/** Share of the files. */
	share: number;
	style: Style;
	name: (rng: Rng) => string;
	sizeMedian: number;
	sigma: number;
	hot: number;
	executable?: boolean;
	words?: readonly string[];
}

const srcWords =
	'core net http util io crypto json parse store cache fs os proto wire codec index graph walk object refs hash mem alloc thread sync log trace config cli term color diff merge blame pack midx bitmap commit tree blob odb loose remote fetch push transport server client auth tls ssh url queue heap list map set str buf path attr ignore sparse submodule worktree hook editor pager progress bloom chunk table reader writer stack'.split(
		' ',
	);
const contribWords =
	'completion subtree credential libsecret osxkeychain wincred netrc buildsystems Generators Vcxproj templates diff-highlight fast-import hooks multimail emacs vscode coccinelle persistent-https remote-helpers svn-fe stats thunderbird-patch-inline workdir examples scripts lib test docs python perl shell cmake toolchains windows macos linux'.split(
		' ',
	);
const webWords =
	'components pages hooks utils styles api store state views layout forms buttons dialogs tables charts icons assets i18n router auth settings profile dashboard repo commits branches diff blame search editor toolbar sidebar panel modal toast theme tokens __tests__ fixtures mocks'.split(
		' ',
	);
const compatWords =
	'win32 mingw msvc nedmalloc regex fsmonitor simple-ipc vcbuild include sys poll linux darwin bsd posix zlib-uncompress precompose-utf8 stubs'.split(
		' ',
	);

function cName(words: readonly string[]) {
	return (rng: Rng) =>
		`${rng.pick(words)}${rng.chance(0.5) ? `-${rng.pick(words)}` : ''}.${rng.chance(0.72) ? 'c' : 'h'}`;
}

function groups(): Group[] {
	const cmd = (rng: Rng) => `${rng.pick(gitCommands)}${rng.chance(0.4) ? `-${rng.pick(idWords)}` : ''}.c`;
	return [
		{
			dir: '',
			subfolders: 0,
			maxDepth: 0,
			share: 0.012,
			style: 'c',
			name: cName(idWords),
			sizeMedian: 12_000,
			sigma: 1.1,
			hot: 1.2,
		},
		{
			dir: 'builtin',
			subfolders: 0,
			maxDepth: 1,
			share: 0.034,
			style: 'c',
			name: cmd,
			sizeMedian: 11_000,
			sigma: 0.9,
			hot: 1.2,
		},
		{
			dir: 'src',
			subfolders: 0.2,
			maxDepth: 4,
			share: 0.15,
			style: 'c',
			name: cName(srcWords),
			sizeMedian: 5_000,
			sigma: 1.05,
			hot: 1,
			words: srcWords,
		},
		{
			dir: 'lib',
			subfolders: 0.06,
			maxDepth: 3,
			share: 0.05,
			style: 'c',
			name: cName(srcWords),
			sizeMedian: 5_000,
			sigma: 1.0,
			hot: 0.8,
			words: srcWords,
		},
		{
			dir: 'xdiff',
			subfolders: 0,
			maxDepth: 1,
			share: 0.004,
			style: 'c',
			name: cName([
				'xdiff',
				'xemit',
				'xhistogram',
				'xmerge',
				'xpatience',
				'xprepare',
				'xutils',
				'xtypes',
				'xmacros',
				'xinclude',
			]),
			sizeMedian: 12_000,
			sigma: 0.7,
			hot: 0.5,
		},
		{
			dir: 'reftable',
			subfolders: 0,
			maxDepth: 1,
			share: 0.012,
			style: 'c',
			name: cName([
				'block',
				'blocksource',
				'iter',
				'merged',
				'pq',
				'reader',
				'record',
				'refname',
				'stack',
				'tree',
				'writer',
				'basics',
				'error',
				'system',
				'constants',
			]),
			sizeMedian: 8_000,
			sigma: 0.8,
			hot: 0.8,
		},
		{
			dir: 't',
			subfolders: 0,
			maxDepth: 1,
			share: 0.12,
			style: 'sh',
			name: (rng) =>
				`t${rng.range(0, 9)}${String(rng.int(1000)).padStart(3, '0')}-${rng.pick(gitCommands)}-${rng.pick(idWords)}.sh`,
			sizeMedian: 6_000,
			sigma: 0.9,
			hot: 0.7,
			executable: true,
		},
		{
			dir: 't/helper',
			subfolders: 0,
			maxDepth: 2,
			share: 0.02,
			style: 'c',
			name: (rng) => `test-${rng.pick(idWords)}${rng.chance(0.4) ? `-${rng.pick(idWords)}` : ''}.c`,
			sizeMedian: 4_000,
			sigma: 0.8,
			hot: 0.5,
		},
		{
			dir: 't/lib',
			subfolders: 0,
			maxDepth: 2,
			share: 0.006,
			style: 'sh',
			name: (rng) => `lib-${rng.pick(idWords)}.sh`,
			sizeMedian: 6_000,
			sigma: 0.9,
			hot: 0.6,
		},
		{
			dir: 't/perf',
			subfolders: 0.01,
			maxDepth: 3,
			share: 0.018,
			style: 'sh',
			name: (rng) => `p${rng.range(0, 9)}${String(rng.int(1000)).padStart(3, '0')}-${rng.pick(idWords)}.sh`,
			sizeMedian: 2_500,
			sigma: 0.7,
			hot: 0.3,
			executable: true,
			words: ['repos', 'aggregate', 'lib', 'run'],
		},
		{
			dir: 't/t4013',
			subfolders: 0,
			maxDepth: 2,
			share: 0.045,
			style: 'fixture',
			name: (rng) =>
				`diff.${rng.pick(gitCommands)}_${rng.pick(['--stat', '-p', '--raw', '--cc', '-M', '--root', '--patch-with-stat', '--name-status'])}_${rng.pick(['initial', 'side', 'master', 'HEAD'])}${rng.chance(0.3) ? `_${rng.pick(idWords)}` : ''}`,
			sizeMedian: 500,
			sigma: 1.0,
			hot: 0.04,
		},
		{
			dir: 't/t3900',
			subfolders: 0,
			maxDepth: 2,
			share: 0.008,
			style: 'doc',
			name: (rng) => `${rng.range(1, 12)}-${rng.pick(['UTF-8', 'ISO8859-1', 'EUCJP', 'ISO-2022-JP', 'UTF-16'])}.txt`,
			sizeMedian: 300,
			sigma: 0.6,
			hot: 0.02,
		},
		{
			dir: 't/fixtures',
			subfolders: 0.02,
			maxDepth: 3,
			share: 0.02,
			style: 'fixture',
			name: (rng) =>
				`${rng.pick(idWords)}-${rng.pick(idWords)}.${rng.pick(['txt', 'diff', 'expect', 'patch', 'mbox'])}`,
			sizeMedian: 1_500,
			sigma: 1.2,
			hot: 0.05,
			words: ['diff', 'apply', 'am', 'mailinfo', 'format-patch', 'blame', 'log', 'pack', 'bundle', 'svn', 'p4'],
		},
		{
			dir: 'Documentation',
			subfolders: 0,
			maxDepth: 1,
			share: 0.06,
			style: 'doc',
			name: (rng) => `git-${rng.pick(gitCommands)}${rng.chance(0.3) ? `-${rng.pick(idWords)}` : ''}.txt`,
			sizeMedian: 7_000,
			sigma: 0.9,
			hot: 0.6,
		},
		{
			dir: 'Documentation/config',
			subfolders: 0,
			maxDepth: 2,
			share: 0.025,
			style: 'doc',
			name: (rng) => `${rng.pick(idWords)}.txt`,
			sizeMedian: 2_500,
			sigma: 0.8,
			hot: 0.4,
		},
		{
			dir: 'Documentation/technical',
			subfolders: 0,
			maxDepth: 2,
			share: 0.012,
			style: 'doc',
			name: (rng) => `${rng.pick(idWords)}-${rng.pick(['format', 'protocol', 'api', 'design'])}.txt`,
			sizeMedian: 9_000,
			sigma: 0.9,
			hot: 0.3,
		},
		{
			dir: 'Documentation/howto',
			subfolders: 0,
			maxDepth: 2,
			share: 0.006,
			style: 'doc',
			name: (rng) => `${rng.pick(idWords)}-${rng.pick(idWords)}.txt`,
			sizeMedian: 5_000,
			sigma: 0.7,
			hot: 0.1,
		},
		{
			dir: 'Documentation/RelNotes',
			subfolders: 0,
			maxDepth: 2,
			share: 0.03,
			style: 'doc',
			name: (rng) => `1.${rng.range(5, 9)}.${rng.range(0, 6)}.${rng.range(1, 9)}.txt`,
			sizeMedian: 2_000,
			sigma: 0.7,
			hot: 0.02,
		},
		{
			dir: 'contrib',
			subfolders: 0.15,
			maxDepth: 5,
			share: 0.07,
			style: 'script',
			name: (rng) =>
				`${rng.pick(contribWords)}${rng.chance(0.4) ? `-${rng.pick(idWords)}` : ''}.${rng.pick(['perl', 'py', 'sh', 'c', 'el', 'txt', 'bash'])}`,
			sizeMedian: 5_000,
			sigma: 1.0,
			hot: 0.4,
			words: contribWords,
		},
		{
			dir: 'compat',
			subfolders: 0.06,
			maxDepth: 4,
			share: 0.03,
			style: 'c',
			name: cName(compatWords),
			sizeMedian: 6_000,
			sigma: 1.2,
			hot: 0.5,
			words: compatWords,
		},
		{
			dir: 'perl',
			subfolders: 0.025,
			maxDepth: 4,
			share: 0.01,
			style: 'script',
			name: (rng) => `${cap(rng.pick(idWords))}.pm`,
			sizeMedian: 8_000,
			sigma: 0.9,
			hot: 0.3,
			words: ['Git', 'SVN', 'Memoize', 'IO', 'LoadCPAN', 'Mail', 'Packet', 'Fetcher', 'Editor'],
		},
		{
			dir: 'gui',
			subfolders: 0.03,
			maxDepth: 3,
			share: 0.02,
			style: 'script',
			name: (rng) => `${rng.pick(idWords)}.tcl`,
			sizeMedian: 9_000,
			sigma: 0.9,
			hot: 0.4,
			words: ['lib', 'po', 'macosx', 'windows', 'images', 'glossary'],
		},
		{
			dir: 'templates',
			subfolders: 0.012,
			maxDepth: 3,
			share: 0.005,
			style: 'sh',
			name: (rng) =>
				`${rng.pick(['pre', 'post', 'prepare'])}-${rng.pick(['commit', 'receive', 'merge', 'rebase', 'push', 'update', 'applypatch'])}.sample`,
			sizeMedian: 2_000,
			sigma: 0.6,
			hot: 0.1,
			words: ['hooks', 'info', 'branches', 'description'],
		},
		{
			dir: 'ci',
			subfolders: 0.005,
			maxDepth: 2,
			share: 0.004,
			style: 'sh',
			name: (rng) => `${rng.pick(['install', 'run', 'print', 'check'])}-${rng.pick(idWords)}.sh`,
			sizeMedian: 2_500,
			sigma: 0.7,
			hot: 1.5,
			executable: true,
			words: ['util', 'config'],
		},
		{
			dir: 'refs',
			subfolders: 0,
			maxDepth: 1,
			share: 0.003,
			style: 'c',
			name: cName([
				'files-backend',
				'packed-backend',
				'reftable-backend',
				'iterator',
				'ref-cache',
				'debug',
				'refs-internal',
			]),
			sizeMedian: 20_000,
			sigma: 0.8,
			hot: 1.5,
		},
		{
			dir: 'mergetools',
			subfolders: 0,
			maxDepth: 1,
			share: 0.006,
			style: 'sh',
			name: (rng) =>
				`${rng.pick(['vim', 'emerge', 'kdiff3', 'meld', 'tortoise', 'xxdiff', 'bc', 'p4merge', 'vscode', 'nvim', 'gvim', 'winmerge', 'araxis', 'codecompare'])}${rng.chance(0.3) ? rng.range(2, 4) : ''}`,
			sizeMedian: 1_000,
			sigma: 0.6,
			hot: 0.2,
		},
		{
			dir: 'trace2',
			subfolders: 0,
			maxDepth: 1,
			share: 0.003,
			style: 'c',
			name: cName([
				'tr2_tgt_event',
				'tr2_tgt_normal',
				'tr2_tgt_perf',
				'tr2_sid',
				'tr2_tls',
				'tr2_tmr',
				'tr2_ctr',
				'tr2_sysenv',
				'tr2_cfg',
				'tr2_dst',
			]),
			sizeMedian: 8_000,
			sigma: 0.6,
			hot: 0.5,
		},
		{
			dir: 'ewah',
			subfolders: 0,
			maxDepth: 1,
			share: 0.0015,
			style: 'c',
			name: cName(['bitmap', 'ewah_bitmap', 'ewah_io', 'ewah_rlw', 'ewok', 'ewok_rlw']),
			sizeMedian: 6_000,
			sigma: 0.6,
			hot: 0.2,
		},
		{
			dir: 'oss-fuzz',
			subfolders: 0,
			maxDepth: 1,
			share: 0.0015,
			style: 'c',
			name: (rng) => `fuzz-${rng.pick(idWords)}.c`,
			sizeMedian: 1_500,
			sigma: 0.5,
			hot: 0.1,
		},
		{
			dir: 'scripts',
			subfolders: 0,
			maxDepth: 1,
			share: 0.003,
			style: 'script',
			name: (rng) => `${rng.pick(idWords)}-${rng.pick(idWords)}.${rng.pick(['sh', 'perl', 'py'])}`,
			sizeMedian: 3_000,
			sigma: 0.7,
			hot: 0.3,
		},
		{
			dir: 'web',
			subfolders: 0.2,
			maxDepth: 5,
			share: 0.075,
			style: 'web',
			name: (rng) =>
				rng.chance(0.2)
					? `${rng.pick(idWords)}.css`
					: `${cap(rng.pick(idWords))}${cap(rng.pick(idWords))}.${rng.pick(['tsx', 'tsx', 'ts', 'test.tsx'])}`,
			sizeMedian: 2_800,
			sigma: 0.9,
			hot: 0.9,
			words: webWords,
		},
		{ dir: 'po', subfolders: 0, maxDepth: 1, share: 0, style: 'po', name: () => '', sizeMedian: 0, sigma: 0, hot: 0 },
	];
}

/** Files every repository like this has, at the root and beside their folders. */
const fixedFiles: ReadonlyArray<{ path: string; style: Style; size: number; hot: number; executable?: boolean }> = [
	{ path: 'Makefile', style: 'make', size: 110_000, hot: 12 },
	{ path: 'README.md', style: 'doc', size: 3_500, hot: 0.3 },
	{ path: 'COPYING', style: 'doc', size: 18_000, hot: 0.01 },
	{ path: 'SECURITY.md', style: 'doc', size: 3_000, hot: 0.05 },
	{ path: 'CODE_OF_CONDUCT.md', style: 'doc', size: 5_000, hot: 0.05 },
	{ path: '.gitignore', style: 'fixture', size: 4_000, hot: 2 },
	{ path: '.mailmap', style: 'fixture', size: 20_000, hot: 0.8 },
	{ path: 'configure.ac', style: 'make', size: 40_000, hot: 0.8 },
	{ path: 'meson.build', style: 'make', size: 60_000, hot: 3 },
	{ path: 'config.mak.uname', style: 'make', size: 25_000, hot: 1.5 },
	{ path: 'GIT-VERSION-GEN', style: 'sh', size: 1_200, hot: 0.02, executable: true },
	{ path: 'VERSION', style: 'fixture', size: 20, hot: 0 },
	{ path: 't/test-lib.sh', style: 'sh', size: 60_000, hot: 5 },
	{ path: 't/test-lib-functions.sh', style: 'sh', size: 50_000, hot: 4 },
	{ path: 't/README', style: 'doc', size: 50_000, hot: 0.8 },
	{ path: 'Documentation/Makefile', style: 'make', size: 18_000, hot: 2 },
	{ path: 'Documentation/SubmittingPatches', style: 'doc', size: 35_000, hot: 0.6 },
	{ path: 'Documentation/config.txt', style: 'doc', size: 40_000, hot: 2 },
	{ path: 'po/README.md', style: 'doc', size: 16_000, hot: 0.05 },
	{ path: 'po/TEAMS', style: 'doc', size: 3_000, hot: 0.1 },
	{ path: 'web/package.json', style: 'json', size: 3_000, hot: 3 },
	{ path: 'web/package-lock.json', style: 'json', size: 900_000, hot: 1.5 },
	{ path: 'web/tsconfig.json', style: 'json', size: 800, hot: 0.1 },
	{ path: 'web/src/index.tsx', style: 'web', size: 2_000, hot: 1 },
];

/** Binary assets: where, name, size (median), how many. The first three kinds hold the MB-sized ones. */
const binaryKinds: ReadonlyArray<{
	dir: string;
	ext: string;
	magic: string;
	median: number;
	sigma: number;
	count: number;
	min?: number;
}> = [
	{
		dir: 'contrib/buildsystems/vendor',
		ext: 'zip',
		magic: 'PK\x03\x04',
		median: 2_500_000,
		sigma: 0.25,
		count: 2,
		min: 1_500_000,
	},
	{
		dir: 't/fixtures/pack',
		ext: 'pack',
		magic: 'PACK\x00\x00\x00\x02',
		median: 1_800_000,
		sigma: 0.3,
		count: 2,
		min: 1_400_000,
	},
	{ dir: 'web/assets/fonts', ext: 'woff2', magic: 'wOF2', median: 1_500_000, sigma: 0.3, count: 1, min: 1_200_000 },
	{ dir: 't/fixtures/pack', ext: 'bundle', magic: '# v2 git bundle\n', median: 120_000, sigma: 1.0, count: 8 },
	{ dir: 'Documentation/images', ext: 'png', magic: '\x89PNG\r\n\x1a\n', median: 60_000, sigma: 1.0, count: 10 },
	{ dir: 'web/assets/images', ext: 'png', magic: '\x89PNG\r\n\x1a\n', median: 40_000, sigma: 1.2, count: 12 },
	{ dir: 'web/assets/fonts', ext: 'woff2', magic: 'wOF2', median: 90_000, sigma: 0.5, count: 4 },
	{ dir: 't/fixtures/archive', ext: 'tar.gz', magic: '\x1f\x8b\x08\x00', median: 150_000, sigma: 0.8, count: 6 },
];
const binaryExtensions = [...new Set(binaryKinds.map((k) => k.ext))];

type CommitKind = 'first' | 'release' | 'merge' | 'l10n' | 'normal';

/** What first-parent commit i is: releases at 499, 999, …; merges every 50th; translations between. */
function kindOf(i: number, params: GitLikeParams): CommitKind {
	if (i === 1) {
		return 'first';
	}
	if (i % params.releaseEvery === params.releaseEvery - 1) {
		return 'release';
	}
	if (i % params.mergeEvery === 0) {
		return 'merge';
	}
	if (i % params.l10nEvery === Math.floor(params.l10nEvery / 2) + 3) {
		return 'l10n';
	}
	return 'normal';
}

interface Plan {
	specs: FileSpec[];
	folders: Set<string>;
}

/** Lays out every file the history will ever hold: its path, style, size, hotness, birth and death. */
function planFiles(params: GitLikeParams, rng: Rng): Plan {
	const deaths = Math.round(params.files * 0.05);
	const releases = Math.floor((params.commits + 1) / params.releaseEvery);
	const universe = params.files + deaths;
	const specs: FileSpec[] = [];
	const used = new Set<string>();
	const folders = new Set<string>(['']);
	const addSpec = (spec: Omit<FileSpec, 'index' | 'birth' | 'death'>): FileSpec | undefined => {
		if (used.has(spec.path)) {
			return undefined;
		}
		used.add(spec.path);
		const full: FileSpec = { ...spec, index: specs.length, birth: 1, death: 0 };
		specs.push(full);
		for (let d = path.posix.dirname(spec.path); d !== '.'; d = path.posix.dirname(d)) {
			folders.add(d);
		}
		return full;
	};
	for (const f of fixedFiles) {
		addSpec({ path: f.path, style: f.style, executable: f.executable ?? false, size: f.size, hot: f.hot });
	}
	for (const lang of l10nLanguages.slice(0, 14)) {
		addSpec({
			path: `po/${lang}.po`,
			style: 'po',
			executable: false,
			size: lang === 'de' ? 1_150_000 : Math.round(300_000 + rng.float() * 600_000),
			hot: 0,
		});
	}
	addSpec({ path: 'po/git.pot', style: 'po', executable: false, size: 380_000, hot: 0 });
	for (const kind of binaryKinds) {
		for (let i = 0; i < kind.count; i++) {
			const name =
				kind.ext === 'woff2'
					? `${rng.pick(['inter', 'mono', 'icons', 'serif', 'display'])}-${rng.pick(['regular', 'bold', 'italic', 'light'])}`
					: `${rng.pick(idWords)}-${rng.pick(idWords)}`;
			const size = Math.max(kind.min ?? 2_000, Math.round(rng.logNormal(kind.median, kind.sigma)));
			addSpec({
				path: `${kind.dir}/${name}.${kind.ext}`,
				style: 'bin',
				executable: false,
				size: Math.min(size, 4_200_000),
				hot: 0,
			});
		}
	}
	for (let r = 1; r <= releases; r++) {
		const spec = addSpec({
			path: `Documentation/RelNotes/2.${r}.0.txt`,
			style: 'doc',
			executable: false,
			size: Math.round(rng.logNormal(9_000, 0.4)),
			hot: 0.02,
		});
		if (spec) {
			spec.release = r;
		}
	}

	// The groups' folders: random trees under their base, named from the group's words.
	const all = groups();
	const remaining = universe - specs.length;
	const groupFolders = new Map<Group, string[]>();
	for (const g of all) {
		const list = [g.dir];
		if (g.dir !== '') {
			folders.add(g.dir);
		}
		const want = Math.round(g.subfolders * params.folders);
		const wordsOf = g.words ?? srcWords;
		for (let tries = 0; list.length < want + 1 && tries < want * 20; tries++) {
			const parent = rng.pick(list);
			const depth = parent === '' ? 0 : parent.split('/').length;
			if (depth >= g.maxDepth) {
				continue;
			}
			const child = `${parent}/${rng.pick(wordsOf)}`;
			if (!folders.has(child) && !used.has(child)) {
				folders.add(child);
				list.push(child);
			}
		}
		groupFolders.set(g, list);
	}
	// Files: each folder gets one, the rest by a long-tailed weight per folder.
	const shares = all.map((g) => g.share);
	const shareSum = shares.reduce((a, b) => a + b, 0);
	for (const g of all) {
		if (g.share === 0) {
			continue;
		}
		const count = Math.round((remaining * g.share) / shareSum);
		const list = groupFolders.get(g)!;
		const weights = list.map(() => rng.logNormal(1, 1));
		const weightSum = weights.reduce((a, b) => a + b, 0);
		let made = 0;
		for (let tries = 0; made < count && tries < count * 30; tries++) {
			let dir: string;
			if (made < list.length) {
				dir = list[made]!;
			} else {
				let x = rng.float() * weightSum;
				let k = 0;
				while (k < list.length - 1 && (x -= weights[k]!) >= 0) {
					k++;
				}
				dir = list[k]!;
			}
			const name = g.name(rng);
			const style: Style = g.style === 'web' && name.endsWith('.css') ? 'css' : g.style;
			const spec = addSpec({
				path: dir === '' ? name : `${dir}/${name}`,
				style,
				executable: g.executable ?? false,
				size: Math.round(Math.min(450_000, Math.max(150, rng.logNormal(g.sizeMedian, g.sigma)))),
				hot: g.hot * rng.logNormal(1, 1.2),
			});
			if (spec) {
				made++;
			}
		}
	}
	// Top up to the universe with sources under src (names may have collided above).
	while (specs.length < universe) {
		const dir = rng.pick(groupFolders.get(all[2]!)!);
		addSpec({
			path: `${dir}/${cName(srcWords)(rng)}`,
			style: 'c',
			executable: false,
			size: Math.round(rng.logNormal(7_000, 1.1)),
			hot: rng.logNormal(1, 1.2),
		});
	}

	// Births: the fixed files, translations, most binaries and ~40 % of the rest at the first commit;
	// the others spread over the history (never on a merge). Deaths: some of the ordinary files.
	const randomCommit = (from: number): number => {
		for (;;) {
			const c = from + rng.int(params.commits - from + 1);
			if (kindOf(c, params) === 'normal') {
				return c;
			}
		}
	};
	const fixedCount = fixedFiles.length;
	for (const spec of specs) {
		if (spec.release !== undefined) {
			spec.birth = spec.release * params.releaseEvery - 1;
		} else if (spec.index < fixedCount || spec.style === 'po' || (spec.style === 'bin' && rng.chance(0.7))) {
			spec.birth = 1;
		} else {
			spec.birth = rng.chance(0.4) ? 1 : randomCommit(2);
		}
	}
	const mortal = specs.filter(
		(s) =>
			s.index >= fixedCount &&
			s.style !== 'po' &&
			s.style !== 'bin' &&
			s.release === undefined &&
			s.birth < params.commits - 100,
	);
	for (let i = 0; i < deaths && mortal.length > 0; i++) {
		const spec = mortal.splice(rng.int(mortal.length), 1)[0]!;
		spec.death = randomCommit(spec.birth + 20);
	}
	return { specs, folders };
}

// ---------------------------------------------------------------------------------------------
// The history

interface Person {
	name: string;
	email: string;
	zone: number;
	dst: boolean;
}

function makePeople(rng: Rng, n: number): Person[] {
	const people: Person[] = [];
	const seen = new Set<string>();
	while (people.length < n) {
		const first = rng.pick(firstNames);
		const last = rng.pick(lastNames);
		const name = `${first} ${last}`;
		if (seen.has(name)) {
			continue;
		}
		seen.add(name);
		const [zone, dst] = rng.weighted(zones);
		people.push({
			name,
			email: `${rng.chance(0.5) ? `${first}.${last}` : `${first[0]}${last}`}`.toLowerCase() + `@${rng.pick(domains)}`,
			zone,
			dst,
		});
	}
	return people;
}

/** "Name <email> 1112911993 -0700", in the person's offset on that day (summer time Apr-Oct). */
function ident(person: Person, time: number): string {
	let offset = person.zone;
	if (person.dst) {
		const month = new Date(time * 1000).getUTCMonth();
		if (month >= 3 && month <= 9) {
			offset += 60;
		}
	}
	const sign = offset < 0 ? '-' : '+';
	const abs = Math.abs(offset);
	return `${person.name} <${person.email}> ${time} ${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

interface LiveFile {
	spec: FileSpec;
	path: string;
	/** Text: chunk ids into the style's pool. */
	chunks: number[];
	header: Buffer;
	/** Binary: its revision, and size. */
	revision: number;
	size: number;
	lastTouched: number;
	folder: string;
}

/** Weighted picks over files that come and go: a Fenwick tree of weights. */
class WeightedSet {
	private readonly tree: Float64Array;
	private readonly weights: Float64Array;
	total = 0;

	constructor(readonly size: number) {
		this.tree = new Float64Array(size + 1);
		this.weights = new Float64Array(size);
	}

	set(i: number, w: number): void {
		const delta = w - this.weights[i]!;
		if (delta === 0) {
			return;
		}
		this.weights[i] = w;
		this.total += delta;
		for (let k = i + 1; k <= this.size; k += k & -k) {
			this.tree[k] = this.tree[k]! + delta;
		}
	}

	/** The index at cumulative weight x (0 ≤ x < total). */
	find(x: number): number {
		let pos = 0;
		let step = 1;
		while (step * 2 <= this.size) {
			step *= 2;
		}
		for (; step > 0; step >>= 1) {
			const next = pos + step;
			if (next <= this.size && this.tree[next]! <= x) {
				pos = next;
				x -= this.tree[next]!;
			}
		}
		return Math.min(pos, this.size - 1);
	}
}

/** Writes to a child's stdin in large pieces, waiting when the pipe is full. */
class Feeder {
	private parts: Buffer[] = [];
	private pending = 0;
	bytes = 0;

	constructor(private readonly stream: Writable) {}

	push(data: string | Buffer): void {
		const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
		this.parts.push(b);
		this.pending += b.length;
		this.bytes += b.length;
	}

	async flush(force = false): Promise<void> {
		if (this.pending < 4 * 1024 * 1024 && !force) {
			return;
		}
		const data = Buffer.concat(this.parts, this.pending);
		this.parts = [];
		this.pending = 0;
		// Let up to 32 MB wait in the stream, so that this process makes the next piece while git reads.
		if (!this.stream.write(data) && this.stream.writableLength > 32 * 1024 * 1024) {
			await new Promise<void>((resolve, reject) => {
				const onDrain = () => {
					this.stream.off('error', onError);
					resolve();
				};
				const onError = (error: Error) => {
					this.stream.off('drain', onDrain);
					reject(error);
				};
				this.stream.once('drain', onDrain);
				this.stream.once('error', onError);
			});
		}
	}
}

function data(text: string): string {
	return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

/** Streams the whole history into `git fast-import` in `repo`. Returns the bytes streamed. */
async function importHistory(repo: string, params: GitLikeParams): Promise<{ streamBytes: number; tags: number }> {
	const rng = new Rng(params.seed, 1);
	const pools = new Map<Exclude<Style, 'bin'>, Pool>();
	const poolRng = new Rng(params.seed, 2);
	for (const [style, size] of [
		['c', 65536],
		['sh', 32768],
		['doc', 32768],
		['fixture', 8192],
		['script', 16384],
		['web', 16384],
		['css', 4096],
		['make', 8192],
		['po', 65536],
		['json', 8192],
	] as const) {
		pools.set(style, new Pool(poolRng, style, size));
	}
	const plan = planFiles(params, new Rng(params.seed, 3));
	const people = makePeople(new Rng(params.seed, 4), 320);
	const activity = people.map(() => rng.logNormal(1, 1.4));
	const pickPerson = (): Person => {
		const total = activity.reduce((a, b) => a + b, 0);
		let x = rng.float() * total;
		for (let i = 0; i < people.length; i++) {
			x -= activity[i]!;
			if (x < 0) {
				return people[i]!;
			}
		}
		return people[0]!;
	};
	const maintainer: Person = { name: 'Jun Hamano-Reyes', email: 'jhr@example.org', zone: -480, dst: true };
	const binaryKey = createHash('sha256').update(`desk-gitlike-${params.seed}`).digest().subarray(0, 16);

	const child = spawn('git', ['-c', 'pack.compression=0', 'fast-import', '--quiet', '--done', '--depth=0'], {
		cwd: repo,
		env: benchGitEnv,
		stdio: ['pipe', 'ignore', 'pipe'],
	});
	let stderr = '';
	child.stderr.setEncoding('utf8');
	child.stderr.on('data', (s: string) => (stderr += s));
	const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
	child.stdin.on('error', () => undefined); // Reported through the exit code and stderr.
	const out = new Feeder(child.stdin);

	let mark = 0;
	const live = new Map<number, LiveFile>();
	const byPath = new Map<string, LiveFile>();
	const byFolder = new Map<string, LiveFile[]>();
	const hot = new WeightedSet(plan.specs.length);
	const binaries: LiveFile[] = [];

	const folderOf = (p: string) => path.posix.dirname(p);
	const headerOf = (spec: FileSpec): Buffer => {
		switch (spec.style) {
			case 'c':
				return Buffer.from(
					`/*\n * ${path.posix.basename(spec.path)}: ${words(rng, rng.range(4, 9))}\n */\n\n#include "git-compat-util.h"\n#include "${rng.pick(idWords)}.h"\n\n`,
				);
			case 'sh':
				return spec.path.startsWith('t/t')
					? Buffer.from(`#!/bin/sh\n\ntest_description='${words(rng, rng.range(3, 8))}'\n\n. ./test-lib.sh\n\n`)
					: Buffer.from('#!/bin/sh\n\n');
			case 'po':
				return Buffer.from(
					`# ${path.posix.basename(spec.path)} translations for Git.\n# This file is distributed under the same license as the Git package.\nmsgid ""\nmsgstr ""\n"Project-Id-Version: Git\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n`,
				);
			case 'json':
				return Buffer.from(
					spec.path.endsWith('lock.json') ? '{\n  "name": "web",\n  "lockfileVersion": 3,\n  "packages": {\n' : '{\n',
				);
			default:
				return Buffer.alloc(0);
		}
	};
	const binaryContent = (file: LiveFile): Buffer => {
		const kind = binaryKinds.find((k) => file.path.endsWith(`.${k.ext}`))!;
		const iv = createHash('sha256').update(`${file.spec.index}/${file.revision}`).digest().subarray(0, 16);
		const body = createCipheriv('aes-128-ctr', binaryKey, iv).update(Buffer.alloc(file.size));
		Buffer.from(kind.magic, 'latin1').copy(body, 0);
		return body;
	};
	/**
	 * The file's content inline in the commit (`M <mode> inline <path>`): fast-import stores inline
	 * blobs without trying a delta against the blob before it in the stream (unrelated, here), and
	 * still deltas each tree against its previous version. Returns the blob's id when asked (a merge
	 * names the side branch's blobs by id).
	 */
	const putBlob = (changes: Array<string | Buffer>, file: LiveFile, withId = false): string | undefined => {
		const content =
			file.spec.style === 'bin'
				? binaryContent(file)
				: pools.get(file.spec.style as Exclude<Style, 'bin'>)!.materialize(file.header, file.chunks);
		changes.push(`M ${modeOf(file)} inline ${file.path}\ndata ${content.length}\n`, content, '\n');
		return withId ? createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex') : undefined;
	};
	const modeOf = (file: LiveFile) => (file.spec.executable ? '100755' : '100644');
	const setHot = (file: LiveFile | undefined, on: boolean) => {
		if (file) {
			hot.set(
				file.spec.index,
				on ? file.spec.hot * (0.7 + 0.3 * Math.sqrt(Math.min(file.spec.size, 16_000) / 8_000)) : 0,
			);
		}
	};
	const addToFolder = (file: LiveFile) => {
		let list = byFolder.get(file.folder);
		if (!list) {
			list = [];
			byFolder.set(file.folder, list);
		}
		list.push(file);
	};
	const removeFromFolder = (file: LiveFile) => {
		const list = byFolder.get(file.folder)!;
		list.splice(list.indexOf(file), 1);
	};
	const bear = (spec: FileSpec, commit: number): LiveFile => {
		const file: LiveFile = {
			spec,
			path: spec.path,
			chunks: [],
			header: Buffer.alloc(0),
			revision: 0,
			size: spec.size,
			lastTouched: commit,
			folder: folderOf(spec.path),
		};
		if (spec.style !== 'bin') {
			const pool = pools.get(spec.style)!;
			file.header = headerOf(spec);
			const n = Math.max(1, Math.round((spec.size * params.textScale - file.header.length) / pool.average));
			for (let i = 0; i < n; i++) {
				file.chunks.push(rng.int(pool.size));
			}
		} else {
			binaries.push(file);
		}
		live.set(spec.index, file);
		byPath.set(file.path, file);
		addToFolder(file);
		setHot(file, true);
		return file;
	};
	const kill = (file: LiveFile) => {
		live.delete(file.spec.index);
		byPath.delete(file.path);
		removeFromFolder(file);
		setHot(file, false);
		if (file.spec.style === 'bin') {
			binaries.splice(binaries.indexOf(file), 1);
		}
	};
	/** Edits lines inside a text file: a few hunks, now and then a larger rewrite. */
	const edit = (file: LiveFile, scale = 1) => {
		const pool = pools.get(file.spec.style as Exclude<Style, 'bin'>)!;
		const c = file.chunks;
		const fresh = () => rng.int(pool.size);
		if (rng.chance(0.02 * scale)) {
			const len = Math.max(1, Math.floor(c.length * (0.2 + rng.float() * 0.3)));
			const at = rng.int(Math.max(1, c.length - len));
			c.splice(at, len, ...Array.from({ length: Math.round(len * (0.8 + rng.float() * 0.5)) }, fresh));
			return;
		}
		const hunks = 1 + (rng.chance(0.45) ? 1 : 0) + (rng.chance(0.2) ? 1 : 0) + (rng.chance(0.1) ? rng.int(5) : 0);
		for (let h = 0; h < hunks; h++) {
			const at = rng.int(c.length + 1);
			const r = rng.float();
			let del: number;
			let ins: number;
			if (r < 0.5) {
				del = 1 + rng.int(4);
				ins = Math.max(0, del + rng.int(3) - 1);
			} else if (r < 0.75) {
				del = 0;
				ins = 2 + rng.int(15);
			} else if (r < 0.88) {
				del = 1 + rng.int(8);
				ins = 0;
			} else {
				del = 5 + rng.int(25);
				ins = 5 + rng.int(30);
			}
			c.splice(at, Math.min(del, c.length - at), ...Array.from({ length: ins }, fresh));
		}
		if (c.length === 0) {
			c.push(fresh());
		}
	};
	/** A translation round on one .po file: 3-10 % of its entries rewritten, 1-2 % new. */
	const translate = (file: LiveFile) => {
		const pool = pools.get('po')!;
		const c = file.chunks;
		const changes = Math.round(c.length * (0.03 + rng.float() * 0.07));
		for (let i = 0; i < changes; i++) {
			c[rng.int(c.length)] = rng.int(pool.size);
		}
		const added = Math.round(c.length * (0.01 + rng.float() * 0.01));
		for (let i = 0; i < added; i++) {
			c.splice(rng.int(c.length + 1), 0, rng.int(pool.size));
		}
	};
	const pickHot = (): LiveFile | undefined => (hot.total > 0 ? live.get(hot.find(rng.float() * hot.total)) : undefined);
	/** 1 to ~20 files, most often one or two, near each other. */
	const pickEditSet = (eligible: (f: LiveFile) => boolean): LiveFile[] => {
		const n = rng.weighted<number>([
			[1, 54],
			[2, 23],
			[3, 10],
			[4, 6],
			[rng.range(5, 8), 5],
			[rng.range(9, 20), 2],
		]);
		const set = new Set<LiveFile>();
		for (let tries = 0; set.size < n && tries < n * 6; tries++) {
			let file: LiveFile | undefined;
			const first = set.values().next().value as LiveFile | undefined;
			if (first && rng.chance(0.55)) {
				const near = byFolder.get(first.folder) ?? [];
				file = near.length > 0 ? rng.pick(near) : undefined;
			} else {
				file = pickHot();
			}
			if (file && file.spec.style !== 'bin' && file.spec.style !== 'po' && eligible(file)) {
				set.add(file);
			}
		}
		return [...set];
	};
	const areaOf = (p: string): string => {
		const parts = p.split('/');
		const base = path.posix.basename(p).replace(/\..*$/, '');
		if (parts[0] === 't') {
			return /^t\d{4}/.test(base) ? base.slice(0, 5) : parts.length > 2 ? `t/${parts[1]}` : 'tests';
		}
		if (parts[0] === 'Documentation') {
			return rng.chance(0.5) ? 'doc' : `Documentation/${base}`;
		}
		if (parts.length === 1) {
			return base;
		}
		return rng.chance(0.6) ? base.replace(/^git-/, '') : parts[parts.length - 2]!;
	};
	const subject = (files: LiveFile[]): string => {
		const area = files.length > 0 ? areaOf(files[0]!.path) : rng.pick(idWords);
		const object = rng.weighted<() => string>([
			[() => `a leak in ${rng.pick(idWords)}_${rng.pick(idWords)}()`, 3],
			[() => `--${rng.pick(idWords)}${rng.chance(0.5) ? `-${rng.pick(idWords)}` : ''} option`, 3],
			[() => `the ${rng.pick(idWords)} API`, 2],
			[() => `unused ${rng.pick(idWords)} parameter`, 2],
			[() => `${rng.pick(idWords)} handling of ${rng.pick(idWords)}`, 3],
			[() => `test for ${words(rng, rng.range(2, 5))}`, 2],
			[() => 'typo', 1],
			[() => `error message when ${words(rng, rng.range(2, 5))}`, 2],
			[() => `${rng.pick(idWords)}_${rng.pick(idWords)}() helper`, 2],
			[() => `${words(rng, rng.range(2, 6))}`, 4],
		])();
		return `${area}: ${rng.pick(verbs)} ${object}`;
	};
	const message = (subjectLine: string, author: Person): string => {
		if (rng.chance(0.25)) {
			return `${subjectLine}\n`;
		}
		const paragraphs = Array.from({ length: rng.range(1, 3) }, () => paragraph(rng, rng.range(1, 4)));
		return `${subjectLine}\n\n${paragraphs.join('\n\n')}\n\nSigned-off-by: ${author.name} <${author.email}>\n`;
	};

	const start = 1_112_911_993; // 2005-04-07
	const meanGap = (19 * 365.25 * 86_400) / params.commits;
	let now = start;
	const commitMarks: number[] = [0];
	const commitTimes: number[] = [0];
	const birthsAt = new Map<number, FileSpec[]>();
	const deathsAt = new Map<number, FileSpec[]>();
	for (const spec of plan.specs) {
		if (spec.birth > 1) {
			birthsAt.set(spec.birth, [...(birthsAt.get(spec.birth) ?? []), spec]);
		}
		if (spec.death > 0) {
			deathsAt.set(spec.death, [...(deathsAt.get(spec.death) ?? []), spec]);
		}
	}
	// Binary revisions: spread evenly over the history, so that their bytes add up to the budget.
	let binarySpent = 0;
	const renames = Math.round(params.files * 0.05);
	const renameEvery = Math.max(2, Math.floor(params.commits / Math.max(1, renames)));
	let tags = 0;
	let lastRelease = 0;

	for (let i = 1; i <= params.commits; i++) {
		now += Math.max(30, Math.round(rng.exponential(meanGap)));
		const changes: Array<string | Buffer> = [];
		const removed: string[] = [];
		const touched: LiveFile[] = [];
		let subjectLine: string | undefined;
		let author = pickPerson();
		let mergeLine = '';
		let body: string | undefined;
		const kind = kindOf(i, params);
		if (kind === 'first') {
			for (const spec of plan.specs) {
				if (spec.birth === 1) {
					const file = bear(spec, 1);
					putBlob(changes, file);
				}
			}
			subjectLine = 'Initial import of the tree as of the first public release';
			author = maintainer;
		} else if (kind === 'merge') {
			// A side branch forked a little earlier, with one or two commits of its own on files main left alone since.
			const fork = Math.max(1, i - 1 - rng.int(4));
			const sideAuthor = pickPerson();
			const topic = `${sideAuthor.name
				.split(' ')
				.map((w) => w[0]!.toLowerCase())
				.join('')}/${rng.pick(idWords)}-${rng.pick(idWords)}`.replace(/_/g, '-');
			const sideCommits = rng.chance(0.6) ? 1 : 2;
			const sideSubjects: string[] = [];
			const sideTouched = new Map<LiveFile, string>();
			let sideTime = commitTimes[fork]!;
			for (let s = 0; s < sideCommits; s++) {
				const files = pickEditSet((f) => f.lastTouched <= fork && f.spec.death === 0).slice(0, 3);
				const sideChanges: Array<string | Buffer> = [];
				for (const file of files) {
					edit(file);
					sideTouched.set(file, putBlob(sideChanges, file, true)!);
				}
				const sideSubject = subject(files);
				sideSubjects.push(sideSubject);
				sideTime = sideTime + Math.max(60, Math.floor((now - sideTime) / (sideCommits + 1)));
				const authored = sideTime - rng.int(3 * 86_400);
				const commitMark = ++mark;
				out.push(
					`commit refs/heads/topic\nmark :${commitMark}\nauthor ${ident(sideAuthor, authored)}\ncommitter ${ident(rng.chance(0.8) ? maintainer : sideAuthor, sideTime)}\n${data(message(sideSubject, sideAuthor))}${s === 0 ? `from :${commitMarks[fork]}\n` : ''}`,
				);
				for (const part of sideChanges) {
					out.push(part);
				}
				out.push('\n');
				mergeLine = `merge :${commitMark}\n`;
			}
			for (const [file, blobId] of sideTouched) {
				changes.push(`M ${modeOf(file)} ${blobId} ${file.path}\n`);
				touched.push(file);
			}
			subjectLine = `Merge branch '${topic}'`;
			body = `${subjectLine}\n\n* ${topic}:\n${sideSubjects.map((s) => `  ${s}\n`).join('')}`;
			author = maintainer;
		} else if (kind === 'release') {
			const r = (i + 1) / params.releaseEvery;
			for (const spec of birthsAt.get(i) ?? []) {
				const file = bear(spec, i);
				putBlob(changes, file);
			}
			const version = byPath.get('VERSION');
			if (version) {
				version.chunks = [];
				version.header = Buffer.from(`2.${r}.0\n`);
				putBlob(changes, version);
				touched.push(version);
			}
			subjectLine = `Git 2.${r}`;
			author = maintainer;
			lastRelease = i;
		} else if (kind === 'l10n') {
			const po = [...live.values()].filter((f) => f.spec.style === 'po');
			const round = po.filter(() => rng.chance(0.2));
			for (const file of round.length > 0 ? round : po.slice(0, 1)) {
				translate(file);
				putBlob(changes, file);
				touched.push(file);
			}
			subjectLine =
				round.length === 1
					? `l10n: ${path.posix.basename(round[0]!.path, '.po')}: update translation`
					: `l10n: update translations for the v2.${Math.floor((i + 1) / params.releaseEvery) + 1}.0 round (${rng.range(20, 200)} new messages)`;
		} else {
			for (const spec of deathsAt.get(i) ?? []) {
				const file = live.get(spec.index);
				if (file) {
					kill(file);
					changes.push(`D ${file.path}\n`);
					removed.push(file.path);
				}
			}
			const born: LiveFile[] = [];
			for (const spec of birthsAt.get(i) ?? []) {
				const file = bear(spec, i);
				putBlob(changes, file);
				born.push(file);
			}
			if (i % renameEvery === 0) {
				const file = pickHot();
				if (
					file &&
					file.spec.style !== 'po' &&
					file.spec.style !== 'bin' &&
					file.spec.index >= fixedFiles.length &&
					file.spec.death === 0
				) {
					const ext = path.posix.extname(file.path);
					const dir = rng.chance(0.5)
						? file.folder
						: (rng.pick(
								[...byFolder.keys()].filter(
									(d) => d.split('/')[0] === file.folder.split('/')[0] && (byFolder.get(d)?.length ?? 0) > 0,
								),
							) ?? file.folder);
					const newPath = `${dir === '.' ? '' : `${dir}/`}${rng.pick(idWords)}-${rng.pick(idWords)}${ext}`;
					if (!byPath.has(newPath) && !plan.folders.has(newPath)) {
						changes.push(`D ${file.path}\n`);
						byPath.delete(file.path);
						removeFromFolder(file);
						file.path = newPath;
						file.folder = folderOf(newPath);
						byPath.set(newPath, file);
						addToFolder(file);
						if (rng.chance(0.5)) {
							edit(file, 0);
						}
						putBlob(changes, file);
						touched.push(file);
						subjectLine = `${areaOf(newPath)}: move ${path.posix.basename(file.spec.path)} to ${path.posix.basename(newPath)}`;
					}
				}
			}
			if (binarySpent < (params.binaryRevisionBytes * i) / params.commits && binaries.length > 0) {
				const file = rng.pick(binaries);
				file.revision++;
				file.size = Math.max(1_000, Math.min(4_200_000, Math.round(file.spec.size * (0.8 + rng.float() * 0.45))));
				binarySpent += file.size;
				putBlob(changes, file);
				touched.push(file);
			}
			const edits = pickEditSet(() => true).slice(0, born.length > 0 ? rng.int(3) : 20);
			for (const file of edits) {
				if (touched.includes(file)) {
					continue;
				}
				edit(file);
				putBlob(changes, file);
				touched.push(file);
			}
			subjectLine ??=
				born.length > 0
					? `${areaOf(born[0]!.path)}: add ${path.posix.basename(born[0]!.path)}`
					: removed.length > 0 && touched.length === 0
						? `remove unused ${path.posix.basename(removed[0]!)}`
						: subject(touched);
		}
		for (const file of touched) {
			file.lastTouched = i;
		}
		const commitMark = ++mark;
		commitMarks.push(commitMark);
		commitTimes.push(now);
		const committer = author === maintainer || rng.chance(0.8) ? maintainer : author;
		const authored = author === maintainer ? now : now - rng.int(5 * 86_400);
		out.push(
			`commit refs/heads/main\nmark :${commitMark}\nauthor ${ident(author, authored)}\ncommitter ${ident(committer, now)}\n${data(body ?? message(subjectLine!, author))}${mergeLine}`,
		);
		for (const part of changes) {
			out.push(part);
		}
		out.push('\n');
		if (kind === 'release') {
			const r = (i + 1) / params.releaseEvery;
			tags++;
			out.push(`tag v2.${r}.0\nfrom :${commitMark}\ntagger ${ident(maintainer, now + 60)}\n${data(`Git 2.${r}\n`)}`);
		}
		await out.flush();
	}
	if (lastRelease > 0) {
		out.push(`reset refs/heads/maint\nfrom :${commitMarks[lastRelease]}\n\n`);
	}
	out.push('done\n');
	await out.flush(true);
	child.stdin.end();
	const code = await exited;
	if (code !== 0) {
		throw new Error(`git fast-import failed (${code}): ${stderr.trim()}`);
	}
	return { streamBytes: out.bytes, tags };
}

// ---------------------------------------------------------------------------------------------
// Pack figures

/** Reads every object's header in the repository's packs: types, deltas and chain lengths. */
export function packFigures(gitDir: string): PackFigures {
	const packDir = path.join(gitDir, 'objects', 'pack');
	const names = fs.readdirSync(packDir).filter((n) => n.endsWith('.pack'));
	const byType: Record<string, number> = { commit: 0, tree: 0, blob: 0, tag: 0 };
	const depths: number[] = [];
	let bytes = 0;
	let objects = 0;
	let whole = 0;
	let ofsDeltas = 0;
	let refDeltas = 0;
	const typeNames = ['', 'commit', 'tree', 'blob', 'tag'];
	for (const name of names) {
		const packFile = path.join(packDir, name);
		bytes += fs.statSync(packFile).size;
		const idx = fs.readFileSync(packFile.replace(/\.pack$/, '.idx'));
		if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) {
			throw new Error(`${name}: not a v2 pack index`);
		}
		const count = idx.readUInt32BE(8 + 255 * 4);
		const namesAt = 8 + 256 * 4;
		const offsetsAt = namesAt + count * 20 + count * 4;
		const largeAt = offsetsAt + count * 4;
		const offsets = new Float64Array(count);
		const byName = new Map<string, number>();
		for (let i = 0; i < count; i++) {
			const o = idx.readUInt32BE(offsetsAt + i * 4);
			offsets[i] = o & 0x80000000 ? Number(idx.readBigUInt64BE(largeAt + (o & 0x7fffffff) * 8)) : o;
			byName.set(idx.toString('hex', namesAt + i * 20, namesAt + i * 20 + 20), offsets[i]!);
		}
		const sorted = Array.from(offsets).sort((a, b) => a - b);
		const info = new Map<number, { type: number; base: number }>();
		const fd = fs.openSync(packFile, 'r');
		const head = Buffer.alloc(64);
		try {
			for (const offset of sorted) {
				fs.readSync(fd, head, 0, 64, offset);
				let at = 0;
				let c = head[at++]!;
				const type = (c >> 4) & 7;
				while (c & 0x80) {
					c = head[at++]!;
				}
				let base = -1;
				if (type === 6) {
					c = head[at++]!;
					let rel = c & 0x7f;
					while (c & 0x80) {
						c = head[at++]!;
						rel = (rel + 1) * 128 + (c & 0x7f);
					}
					base = offset - rel;
				} else if (type === 7) {
					base = byName.get(head.toString('hex', at, at + 20)) ?? -1;
				}
				info.set(offset, { type, base });
			}
		} finally {
			fs.closeSync(fd);
		}
		const depthOf = new Map<number, { depth: number; type: number }>();
		const resolve = (offset: number): { depth: number; type: number } => {
			const known = depthOf.get(offset);
			if (known) {
				return known;
			}
			const chain: number[] = [];
			let at = offset;
			let found: { depth: number; type: number } | undefined;
			for (;;) {
				const k = depthOf.get(at);
				if (k) {
					found = k;
					break;
				}
				const o = info.get(at)!;
				if (o.type < 6) {
					found = { depth: 0, type: o.type };
					depthOf.set(at, found);
					break;
				}
				chain.push(at);
				at = o.base;
			}
			let depth = found.depth;
			for (let k = chain.length - 1; k >= 0; k--) {
				depth++;
				depthOf.set(chain[k]!, { depth, type: found.type });
			}
			return depthOf.get(offset)!;
		};
		for (const offset of sorted) {
			const o = info.get(offset)!;
			const r = resolve(offset);
			byType[typeNames[r.type] ?? 'other'] = (byType[typeNames[r.type] ?? 'other'] ?? 0) + 1;
			objects++;
			if (o.type === 6) {
				ofsDeltas++;
			} else if (o.type === 7) {
				refDeltas++;
			} else {
				whole++;
			}
			if (r.depth > 0) {
				depths.push(r.depth);
			}
		}
	}
	depths.sort((a, b) => a - b);
	const at = (q: number) => depths[Math.min(depths.length - 1, Math.floor(q * depths.length))] ?? 0;
	const depthBuckets: Record<string, number> = {
		'1': 0,
		'2-5': 0,
		'6-10': 0,
		'11-20': 0,
		'21-35': 0,
		'36-50': 0,
		'>50': 0,
	};
	for (const d of depths) {
		const key =
			d === 1
				? '1'
				: d <= 5
					? '2-5'
					: d <= 10
						? '6-10'
						: d <= 20
							? '11-20'
							: d <= 35
								? '21-35'
								: d <= 50
									? '36-50'
									: '>50';
		depthBuckets[key]!++;
	}
	return {
		packs: names.length,
		bytes,
		objects,
		byType,
		whole,
		ofsDeltas,
		refDeltas,
		depthMean: depths.length ? depths.reduce((a, b) => a + b, 0) / depths.length : 0,
		depthP50: at(0.5),
		depthP95: at(0.95),
		depthMax: depths[depths.length - 1] ?? 0,
		depthBuckets,
	};
}

// ---------------------------------------------------------------------------------------------
// Generation and the cache

function git(repo: string, ...args: string[]): string {
	return execFileSync('git', args, { cwd: repo, env: benchGitEnv, encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 });
}

/** Makes the repository in `repo` (an empty or missing folder) and measures it. */
export async function generateGitLikeRepo(
	repo: string,
	params: GitLikeParams,
	log: (line: string) => void = () => undefined,
): Promise<GitLikeFigures> {
	const started = Date.now();
	fs.mkdirSync(repo, { recursive: true });
	git(repo, 'init', '-q', '-b', 'main');
	log(
		`  generating: ${params.commits} first-parent commits, ${params.files} files, ${(params.binaryRevisionBytes / 1048576).toFixed(0)} MB of binary revisions (git fast-import)…`,
	);
	const { streamBytes, tags } = await importHistory(repo, params);
	const streamMs = Date.now() - started;
	git(repo, 'update-ref', '-d', 'refs/heads/topic');
	log(
		`  streamed ${(streamBytes / 1048576).toFixed(0)} MB in ${(streamMs / 1000).toFixed(1)} s; repacking (git repack -adF --window=10 --depth=50)…`,
	);
	const attributes = path.join(repo, '.git', 'info', 'attributes');
	fs.mkdirSync(path.dirname(attributes), { recursive: true });
	fs.writeFileSync(attributes, binaryExtensions.map((ext) => `*.${ext} -delta\n`).join(''));
	const repackStarted = Date.now();
	git(repo, 'repack', '-adF', '--window=10', '--depth=50', '-q');
	const repackMs = Date.now() - repackStarted;
	fs.rmSync(attributes);
	git(repo, 'pack-refs', '--all');
	const checkoutStarted = Date.now();
	git(repo, 'reset', '-q', '--hard', 'main');
	const checkoutMs = Date.now() - checkoutStarted;

	const count = (...args: string[]) => Number(git(repo, 'rev-list', '--count', ...args, 'main').trim());
	const tree = git(repo, 'ls-tree', '-r', '-l', 'HEAD')
		.split('\n')
		.filter(Boolean)
		.map((line) => {
			const tab = line.indexOf('\t');
			return { path: line.slice(tab + 1), size: Number(line.slice(0, tab).trim().split(/\s+/)[3]) };
		});
	const folders = new Set<string>();
	let maxDepth = 0;
	for (const f of tree) {
		const parts = f.path.split('/');
		maxDepth = Math.max(maxDepth, parts.length - 1);
		for (let k = 1; k < parts.length; k++) {
			folders.add(parts.slice(0, k).join('/'));
		}
	}
	const sizeBuckets: Record<string, number> = {
		'<1 KB': 0,
		'1-20 KB': 0,
		'20-100 KB': 0,
		'100 KB-1 MB': 0,
		'≥1 MB': 0,
	};
	for (const f of tree) {
		const key =
			f.size < 1024
				? '<1 KB'
				: f.size < 20 * 1024
					? '1-20 KB'
					: f.size < 100 * 1024
						? '20-100 KB'
						: f.size < 1024 * 1024
							? '100 KB-1 MB'
							: '≥1 MB';
		sizeBuckets[key]!++;
	}
	const figures: GitLikeFigures = {
		generatorVersion,
		params,
		firstParentCommits: count('--first-parent'),
		commits: count(),
		merges: count('--merges'),
		tags,
		filesAtTip: tree.length,
		foldersAtTip: folders.size,
		maxDepth,
		tipBytes: tree.reduce((a, f) => a + f.size, 0),
		sizeBuckets,
		largest: [...tree].sort((a, b) => b.size - a.size).slice(0, 5),
		streamBytes,
		pack: packFigures(path.join(repo, '.git')),
		tip: git(repo, 'rev-parse', 'main').trim(),
		catPath: 'Makefile',
		timings: { streamMs, repackMs, checkoutMs, totalMs: Date.now() - started },
	};
	return figures;
}

function cacheKey(params: GitLikeParams): string {
	const hash = createHash('sha256').update(JSON.stringify({ generatorVersion, params })).digest('hex').slice(0, 12);
	return `desk-gitlike-v${generatorVersion}-${hash}`;
}

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}

/**
 * The repository for `params`, generated once and cached in the OS temp folder: a second call (or
 * run) reuses it. Caches of other generator versions and half-made ones of processes that died are
 * removed on the way.
 */
export async function gitLikeRepo(
	params: GitLikeParams,
	log: (line: string) => void = () => undefined,
): Promise<GitLikeRepo> {
	const tmp = os.tmpdir();
	const key = cacheKey(params);
	const cacheDir = path.join(tmp, key);
	for (const name of fs.readdirSync(tmp)) {
		const stale = /^desk-gitlike-v(\d+)-[0-9a-f]{12}(?:\.tmp-(\d+))?$/.exec(name);
		if (stale && (Number(stale[1]) !== generatorVersion || (stale[2] !== undefined && !isAlive(Number(stale[2]))))) {
			fs.rmSync(path.join(tmp, name), { recursive: true, force: true });
		}
	}
	const figuresFile = path.join(cacheDir, 'figures.json');
	if (fs.existsSync(figuresFile)) {
		const figures = JSON.parse(fs.readFileSync(figuresFile, 'utf8')) as GitLikeFigures;
		if (
			figures.generatorVersion === generatorVersion &&
			git(path.join(cacheDir, 'repo'), 'rev-parse', 'main').trim() === figures.tip
		) {
			return { dir: path.join(cacheDir, 'repo'), figures, reused: true, cacheDir };
		}
		fs.rmSync(cacheDir, { recursive: true, force: true });
	}
	const building = `${cacheDir}.tmp-${process.pid}`;
	fs.rmSync(building, { recursive: true, force: true });
	try {
		const figures = await generateGitLikeRepo(path.join(building, 'repo'), params, log);
		fs.writeFileSync(path.join(building, 'figures.json'), JSON.stringify(figures, null, '\t'));
		try {
			fs.renameSync(building, cacheDir);
		} catch (error) {
			// Another run finished the same generation first: use its copy.
			if (!fs.existsSync(figuresFile)) {
				throw error;
			}
			fs.rmSync(building, { recursive: true, force: true });
		}
		return { dir: path.join(cacheDir, 'repo'), figures, reused: false, cacheDir };
	} catch (error) {
		fs.rmSync(building, { recursive: true, force: true });
		throw error;
	}
}

/**
 * A copy of the repository at `target` whose files are hard links to the cached ones (git writes
 * new files and renames them into place, never into an existing file), so a benchmark can commit
 * and write `.desk/` without touching the cache. Falls back to a plain copy across file systems.
 */
export function linkedCopy(repo: string, target: string): string {
	try {
		execFileSync('cp', ['-al', repo, target]);
	} catch {
		fs.rmSync(target, { recursive: true, force: true });
		fs.cpSync(repo, target, { recursive: true });
	}
	return target;
}

const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
const thousands = (n: number) => n.toLocaleString('en-US');

/** The figures, as the benchmark prints them. */
export function formatGitLikeRepo(r: { figures: GitLikeFigures; reused: boolean; cacheDir?: string }): string {
	const f = r.figures;
	const p = f.pack;
	const t = f.timings;
	return [
		`  repository (generator v${f.generatorVersion}, seed ${f.params.seed}): ${r.reused ? 'reused from an earlier run' : 'generated now'}; its generation took ${(t.totalMs / 1000).toFixed(0)} s (stream + fast-import ${(t.streamMs / 1000).toFixed(0)} s, repack ${(t.repackMs / 1000).toFixed(0)} s, checkout ${(t.checkoutMs / 1000).toFixed(0)} s)`,
		`    ${thousands(f.firstParentCommits)} first-parent commits (${thousands(f.commits)} in all, ${thousands(f.merges)} merges, ${f.tags} tags); ${thousands(f.filesAtTip)} files at the tip in ${f.foldersAtTip} folders (depth ≤ ${f.maxDepth}), ${mb(f.tipBytes)}`,
		`    tip sizes: ${Object.entries(f.sizeBuckets)
			.map(([k, v]) => `${k} ${v}`)
			.join(', ')}; largest ${f.largest
			.slice(0, 3)
			.map((l) => `${l.path} ${(l.size / 1048576).toFixed(1)} MB`)
			.join(', ')}`,
		`    ${p.packs} pack${p.packs === 1 ? '' : 's'}, ${mb(p.bytes)}, ${thousands(p.objects)} objects (${Object.entries(
			p.byType,
		)
			.map(([k, v]) => `${thousands(v)} ${k}s`)
			.join(
				', ',
			)}); ${thousands(p.ofsDeltas)} ofs-deltas, ${thousands(p.refDeltas)} ref-deltas, ${thousands(p.whole)} whole`,
		`    delta chains: mean ${p.depthMean.toFixed(1)}, p50 ${p.depthP50}, p95 ${p.depthP95}, max ${p.depthMax} (${Object.entries(
			p.depthBuckets,
		)
			.filter(([, v]) => v > 0)
			.map(([k, v]) => `${k}: ${thousands(v)}`)
			.join(', ')}); ${mb(f.streamBytes)} streamed into fast-import`,
	].join('\n');
}
