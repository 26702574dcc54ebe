import * as path from 'node:path';
import type { FileKind } from '../assets/types';
import { DeskError } from '../core/errors';
import { fileIdentity, parseGitConfig, readGitFile } from './gitFiles';
import { GitObjectStore, type GitObject, type ObjectType } from './objectStore';
import { parseCommit, parseTag, parseTree, type ParsedCommit, type TreeEntry } from './objects';
import { isRefName } from './refName';
import { adoptedLocation, locateGitDir, type GitDirLocation } from './gitDir';

/** An entry of a tree that is not a folder, with its path and kind (see FileKind). */
export interface TreeFile {
	path: string;
	oid: string;
	executable: boolean;
	kind: FileKind;
}

export interface TreeChange {
	path: string;
	/** undefined for an added file. */
	before?: TreeFile;
	/** undefined for a removed file. */
	after?: TreeFile;
}

/**
 * A repository read without the git binary and without isomorphic-git: its folders (a `.git`
 * folder, or a `.git` file naming one, with a worktree's `commondir`), its format (SHA-1 or
 * SHA-256 object names; the reftable ref format is refused with `git.unsupported`), refs (loose,
 * packed, symbolic) and objects through one GitObjectStore. Nothing the repository configures runs.
 */
export class GitRepository {
	private packedRefs: { identity: string | undefined; refs: Map<string, string> } | undefined;
	private config: { identity: string | undefined; values: Map<string, string[]> } | undefined;
	private readonly peeled = new Map<string, string>();

	private constructor(
		/** The work tree's top. */
		readonly top: string,
		/** This work tree's git folder (HEAD and per-worktree refs). */
		readonly gitDir: string,
		/** The folder shared by all work trees (objects, refs, config). */
		readonly commonDir: string,
		readonly hashLength: 20 | 32,
		readonly objects: GitObjectStore,
	) {}

	/**
	 * The repository whose work tree's top is `top`, read from the git folder `location` names (see
	 * gitDir.ts: the one adopted), never from what `.git` says now; without one, from where `.git`
	 * points when the adoption rule takes it (`git.foreignGitDir` when not). `git.unreadable` when
	 * there is none.
	 */
	static open(top: string, location: GitDirLocation = adoptedLocation(top)): GitRepository {
		const gitDir = location.gitDir;
		const commonDir = location.commonDir;
		const config = parseGitConfig(readGitFile(path.join(commonDir, 'config'))?.toString('utf8') ?? '');
		const objectFormat = (config.get('extensions.objectformat')?.at(-1) ?? 'sha1').toLowerCase();
		if (objectFormat !== 'sha1' && objectFormat !== 'sha256') {
			throw new DeskError(
				'git.unsupported',
				`${top} names its objects with ${objectFormat}; this reader knows sha1 and sha256.`,
				{ dir: top, objectFormat },
			);
		}
		const refStorage = (config.get('extensions.refstorage')?.at(-1) ?? 'files').toLowerCase();
		if (refStorage !== 'files') {
			throw new DeskError(
				'git.unsupported',
				`${top} keeps its refs in the ${refStorage} format; this reader knows the files format (git's default).`,
				{ dir: top, refStorage },
			);
		}
		const hashLength = objectFormat === 'sha256' ? 32 : 20;
		return new GitRepository(
			top,
			gitDir,
			commonDir,
			hashLength,
			new GitObjectStore(path.join(commonDir, 'objects'), hashLength),
		);
	}

	close(): void {
		this.objects.close();
	}

	/** A value of the repository's config (the last one wins, as in git), e.g. `remote.origin.url`. */
	configValue(key: string): string | undefined {
		const file = path.join(this.commonDir, 'config');
		const identity = fileIdentity(file);
		if (!this.config || this.config.identity !== identity) {
			this.config = { identity, values: parseGitConfig(readGitFile(file)?.toString('utf8') ?? '') };
		}
		const dot = key.lastIndexOf('.');
		const first = key.indexOf('.');
		// Section and key are case-insensitive, a subsection is not.
		const normal =
			first === dot
				? key.toLowerCase()
				: `${key.slice(0, first).toLowerCase()}${key.slice(first, dot)}${key.slice(dot).toLowerCase()}`;
		return this.config.values.get(normal)?.at(-1);
	}

	/**
	 * The object id a ref names, following symbolic refs; undefined when it does not exist. `name` is
	 * `HEAD` or a full name (`refs/heads/main`). A name git would refuse throws `git.badRef`.
	 */
	resolveRef(name: string): string | undefined {
		let current = name;
		for (let depth = 0; depth < 6; depth++) {
			const value = this.readRef(current);
			if (value === undefined) {
				return undefined;
			}
			if (value.startsWith('ref: ')) {
				current = value.slice(5).trim();
				continue;
			}
			return value;
		}
		throw new DeskError('git.badRef', `${name} is a chain of more than five symbolic refs.`, { ref: name });
	}

	/** The ref a symbolic ref points at (HEAD's branch, origin/HEAD's), undefined for a detached or missing one. */
	symbolicTarget(name: string): string | undefined {
		const value = this.readRef(name);
		return value?.startsWith('ref: refs/') ? value.slice(5).trim() : undefined;
	}

	/** The commit a commit-ish object names, following annotated tags. */
	peelToCommit(oid: string): string {
		// Objects never change: a tip asked for again (every suggestion asks each git member's) is not read again.
		const known = this.peeled.get(oid);
		if (known !== undefined) {
			return known;
		}
		const commit = this.peelOnce(oid);
		if (this.peeled.size >= 1024) {
			this.peeled.clear();
		}
		this.peeled.set(oid, commit);
		return commit;
	}

	private peelOnce(oid: string): string {
		let current = oid;
		for (let depth = 0; depth < 16; depth++) {
			const object = this.objects.read(current);
			if (object.type === 'commit') {
				return current;
			}
			const tag = object.type === 'tag' ? parseTag(object.data) : undefined;
			if (!tag) {
				throw new DeskError('git.badRef', `${oid} names a ${object.type}, not a commit.`, { oid, type: object.type });
			}
			current = tag.object;
		}
		throw new DeskError('git.corrupt', `Tag ${oid} is a chain of more than 16 tags.`, { oid });
	}

	/** A commit's fields; `git.missingObject` when it is not there, `git.corrupt` when it is not a commit. */
	commit(oid: string): ParsedCommit {
		return this.parsedCommit(oid, this.objects.read(oid));
	}

	/** The commit, or undefined when the object is not in the repository (the end of a shallow clone). */
	tryCommit(oid: string): ParsedCommit | undefined {
		const object = this.objects.tryRead(oid);
		return object ? this.parsedCommit(oid, object) : undefined;
	}

	/** The tree a commit or tree id names. */
	treeOf(oid: string): string {
		const object = this.objects.read(oid);
		return object.type === 'tree' ? oid : this.parsedCommit(oid, object).tree;
	}

	tree(oid: string): TreeEntry[] {
		return parseTree(this.typed(oid, 'tree').data, this.hashLength, oid);
	}

	blob(oid: string): Buffer {
		return this.typed(oid, 'blob').data;
	}

	/**
	 * Every entry of a tree (a commit's or a tree id) that is not a folder, depth first, with its
	 * path and kind: files, executables, links and submodules, the entries `git ls-tree -r` lists.
	 */
	treeFiles(treeOrCommit: string): TreeFile[] {
		const files: TreeFile[] = [];
		const walk = (oid: string, prefix: string, depth: number) => {
			if (depth > 4096) {
				throw new DeskError('git.corrupt', `Trees in ${this.top} nest deeper than 4096 levels.`, { oid });
			}
			for (const entry of this.tree(oid)) {
				const entryPath = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
				if (entry.kind === 'tree') {
					walk(entry.oid, entryPath, depth + 1);
				} else {
					files.push(fileOf(entry, entryPath));
				}
			}
		};
		walk(this.treeOf(treeOrCommit), '', 0);
		return files;
	}

	/** The entry at `filePath` in a commit's or tree's tree, reading only the trees on the way. */
	entryAt(treeOrCommit: string, filePath: string): TreeEntry | undefined {
		const parts = filePath.split('/').filter((p) => p !== '');
		if (parts.length === 0) {
			return undefined;
		}
		let tree = this.treeOf(treeOrCommit);
		for (const [index, part] of parts.entries()) {
			const entry = this.tree(tree).find((e) => e.name === part);
			if (!entry) {
				return undefined;
			}
			if (index === parts.length - 1) {
				return entry;
			}
			if (entry.kind !== 'tree') {
				return undefined;
			}
			tree = entry.oid;
		}
		return undefined;
	}

	/** The entries of the folder at `folderPath` ('' is the top), or undefined when there is no such folder. */
	folderAt(treeOrCommit: string, folderPath: string): TreeEntry[] | undefined {
		if (folderPath.split('/').every((p) => p === '')) {
			return this.tree(this.treeOf(treeOrCommit));
		}
		const entry = this.entryAt(treeOrCommit, folderPath);
		return entry?.kind === 'tree' ? this.tree(entry.oid) : undefined;
	}

	/** The bytes of the file at `filePath` (a blob; not a link or submodule), or undefined. */
	fileAt(treeOrCommit: string, filePath: string): Buffer | undefined {
		const entry = this.entryAt(treeOrCommit, filePath);
		return entry?.kind === 'blob' ? this.blob(entry.oid) : undefined;
	}

	/**
	 * What the entry at `filePath` holds, for a reader of a version's files: a file's bytes, a
	 * link's target as its blob holds it (never followed), a submodule's commit id and a newline (its
	 * commit is another repository's). Undefined for a folder or no entry.
	 */
	contentAt(treeOrCommit: string, filePath: string): Buffer | undefined {
		const entry = this.entryAt(treeOrCommit, filePath);
		if (entry === undefined || entry.kind === 'tree') {
			return undefined;
		}
		return entry.kind === 'submodule' ? Buffer.from(`${entry.oid}\n`) : this.blob(entry.oid);
	}

	/**
	 * The files that differ between two trees (commits or trees), by path. Subtrees with the same id
	 * are skipped unread, so a diff of neighbouring versions reads a handful of trees.
	 */
	diffTrees(from: string, to: string): TreeChange[] {
		const changes: TreeChange[] = [];
		const files = (oid: string, prefix: string) =>
			this.treeFiles(oid).map((f) => ({ ...f, path: `${prefix}${f.path}` }));
		const walk = (a: string | undefined, b: string | undefined, prefix: string) => {
			if (a === b) {
				return;
			}
			const before = new Map((a ? this.tree(a) : []).map((e) => [e.name, e]));
			const after = new Map((b ? this.tree(b) : []).map((e) => [e.name, e]));
			for (const name of new Set([...before.keys(), ...after.keys()])) {
				const x = before.get(name);
				const y = after.get(name);
				const entryPath = `${prefix}${name}`;
				if (x?.oid === y?.oid && x?.mode === y?.mode) {
					continue;
				}
				if (x?.kind === 'tree' && y?.kind === 'tree') {
					walk(x.oid, y.oid, `${entryPath}/`);
					continue;
				}
				// A tree on one side only: its files appear or disappear whole.
				const removed =
					x === undefined ? [] : x.kind === 'tree' ? files(x.oid, `${entryPath}/`) : [fileOf(x, entryPath)];
				const added = y === undefined ? [] : y.kind === 'tree' ? files(y.oid, `${entryPath}/`) : [fileOf(y, entryPath)];
				const addedByPath = new Map(added.map((f) => [f.path, f]));
				for (const file of removed) {
					const now = addedByPath.get(file.path);
					addedByPath.delete(file.path);
					changes.push(now ? { path: file.path, before: file, after: now } : { path: file.path, before: file });
				}
				for (const file of addedByPath.values()) {
					changes.push({ path: file.path, after: file });
				}
			}
		};
		walk(this.treeOf(from), this.treeOf(to), '');
		return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
	}

	private typed(oid: string, type: ObjectType): GitObject {
		const object = this.objects.read(oid);
		if (object.type !== type) {
			throw new DeskError('git.corrupt', `${oid} is a ${object.type} where a ${type} was expected.`, {
				oid,
				type: object.type,
				expected: type,
			});
		}
		return object;
	}

	private parsedCommit(oid: string, object: GitObject): ParsedCommit {
		const commit = object.type === 'commit' ? parseCommit(object.data) : undefined;
		if (!commit) {
			throw new DeskError(
				'git.corrupt',
				`${oid} is ${object.type === 'commit' ? 'a commit without a valid tree line' : `a ${object.type}, not a commit`}.`,
				{ oid, type: object.type },
			);
		}
		return commit;
	}

	/** The raw value of a ref: an object id or `ref: <name>`; undefined when there is none. */
	private readRef(name: string): string | undefined {
		if (!isRefName(name)) {
			throw new DeskError('git.badRef', `${JSON.stringify(name.slice(0, 200))} is not a ref name git allows.`, {
				ref: name.slice(0, 200),
			});
		}
		// HEAD and a worktree's own refs live in its git folder; every other ref in the common one.
		const perWorktree =
			!name.startsWith('refs/') ||
			name.startsWith('refs/worktree/') ||
			name.startsWith('refs/bisect/') ||
			name.startsWith('refs/rewritten/');
		const loose = readGitFile(path.join(perWorktree ? this.gitDir : this.commonDir, name), { maxBytes: 4096 });
		if (loose !== undefined) {
			const value = loose.toString('utf8').trim();
			if (value.startsWith('ref: ')) {
				return value;
			}
			if (this.isOid(value)) {
				return value;
			}
			throw new DeskError('git.badRef', `The ref ${name} holds neither an object id nor a symbolic ref.`, {
				ref: name,
			});
		}
		return name.startsWith('refs/') ? this.packed().get(name) : undefined;
	}

	private packed(): Map<string, string> {
		const file = path.join(this.commonDir, 'packed-refs');
		const identity = fileIdentity(file);
		if (this.packedRefs && this.packedRefs.identity === identity) {
			return this.packedRefs.refs;
		}
		const refs = new Map<string, string>();
		const text = readGitFile(file, { maxBytes: 1024 * 1024 * 1024 })?.toString('utf8') ?? '';
		for (const line of text.split('\n')) {
			const space = line.indexOf(' ');
			// `^<oid>` lines peel the tag above them; the desk peels itself when it needs to.
			if (space > 0 && !line.startsWith('#') && !line.startsWith('^')) {
				const oid = line.slice(0, space);
				if (this.isOid(oid)) {
					refs.set(line.slice(space + 1).trim(), oid);
				}
			}
		}
		this.packedRefs = { identity, refs };
		return refs;
	}

	/** An object id of this repository's format: lowercase hex of its hash's length. */
	isOid(value: string): boolean {
		return value.length === this.hashLength * 2 && /^[0-9a-f]+$/.test(value);
	}
}

/** The git folder of a work tree's top, wherever `.git` points (see gitDir.ts), or undefined. */
export function gitDirOf(top: string): string | undefined {
	return locateGitDir(top)?.gitDir;
}

/** A tree entry that is not a folder as a TreeFile at `entryPath`, its kind read from its mode. */
export function fileOf(entry: TreeEntry, entryPath: string): TreeFile {
	const executable = entry.mode === '100755';
	const kind: FileKind =
		entry.kind === 'link' ? 'symlink' : entry.kind === 'submodule' ? 'submodule' : executable ? 'executable' : 'file';
	return { path: entryPath, oid: entry.oid, executable, kind };
}
