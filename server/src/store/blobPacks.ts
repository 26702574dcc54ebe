import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isDeskError, type DeskError } from '../core/errors';
import { PackReader } from './blobPack';

const packName = /^pack-[0-9a-z]+-[0-9a-f]{16}\.pack$/;
/**
 * A listing of the pack folder taken this soon after the folder last changed may have missed a
 * change made within the same timestamp tick (the kernel stamps folders with a clock that ticks
 * every few milliseconds), so it is not trusted on its own; on file systems with whole-second
 * timestamps the window is two seconds. The same reasoning as git's "racy" index entries.
 */
const racyWindowMs = 100;
const coarseRacyWindowMs = 2_000;

export function newPackName(): string {
	return `pack-${Date.now().toString(36)}-${randomBytes(8).toString('hex')}.pack`;
}

/**
 * The packs of one store, as this process last listed them. Other processes add packs (their
 * batches) and remove them (consolidation) at any time; a lookup that misses lists the folder
 * again, but only when the folder changed since the last listing (one stat), so the misses of a
 * snapshot's many new files stay cheap. A pack removed after this process opened it stays readable
 * through its descriptor until the next listing drops it.
 */
export class PackFolder {
	private readonly readers = new Map<string, PackReader>();
	/** Largest first: most lookups that hit, hit there. */
	private ordered: PackReader[] = [];
	private readonly damaged = new Map<string, DeskError>();
	/** Identity and mtime of the folder when it was last listed, and whether that listing is racy. */
	private listed: { key: string; racy: boolean } | undefined;

	constructor(readonly dir: string) {}

	/** The known packs, largest first. */
	get packs(): readonly PackReader[] {
		this.ensureListed();
		return this.ordered;
	}

	/** A damaged pack seen by this process, if any: a blob not found elsewhere may be in it. */
	get damage(): DeskError | undefined {
		return this.damaged.values().next().value;
	}

	/** Looks a blob up in the known packs (no listing). */
	find(hash: string): { pack: PackReader; offset: number; size: number } | undefined {
		this.ensureListed();
		if (this.ordered.length === 0) {
			return undefined;
		}
		const name = Buffer.from(hash, 'hex');
		for (const pack of this.ordered) {
			let found: { offset: number; size: number } | undefined;
			try {
				found = pack.find(name);
			} catch (error) {
				if (isDeskError(error, 'store.corrupt')) {
					this.markDamaged(pack, error);
					return this.find(hash);
				}
				throw error;
			}
			if (found) {
				return { pack, ...found };
			}
		}
		return undefined;
	}

	/**
	 * Lists the folder again when it changed since the last listing (or always, with `force`).
	 * Returns whether it listed.
	 */
	refresh(force = false): boolean {
		for (let attempt = 0; ; attempt++) {
			const before = Date.now();
			let key: string;
			let mtimeMs: number;
			let coarse = false;
			try {
				const stat = fs.statSync(this.dir, { bigint: true });
				key = `${stat.ino}:${stat.mtimeNs}`;
				mtimeMs = Number(stat.mtimeNs / 1_000_000n);
				coarse = stat.mtimeNs % 1_000_000_000n === 0n;
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
					throw error;
				}
				key = 'none';
				mtimeMs = 0;
			}
			if (!force && attempt === 0 && this.listed && this.listed.key === key && !this.listed.racy) {
				return false;
			}
			const vanished = this.list();
			this.listed = { key, racy: before - mtimeMs < (coarse ? coarseRacyWindowMs : racyWindowMs) };
			// A pack removed between the listing and its opening was consolidated into a pack that the
			// listing may have missed: list again (bounded: consolidations are rare).
			if (!vanished || attempt >= 8) {
				return true;
			}
		}
	}

	/** Takes a pack this process just published into the listing. */
	adopt(fileName: string): void {
		if (this.readers.has(fileName)) {
			return;
		}
		try {
			this.readers.set(fileName, PackReader.open(path.join(this.dir, fileName)));
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
				throw error;
			}
			// Another process merged it into a pack of its own already: list that one.
			this.refresh(true);
			return;
		}
		this.order();
	}

	/** Drops a pack this process removed. */
	forget(pack: PackReader): void {
		const name = path.basename(pack.file);
		if (this.readers.get(name) === pack) {
			this.readers.delete(name);
			pack.close();
			this.order();
		}
	}

	markDamaged(pack: PackReader, error: DeskError): void {
		this.forget(pack);
		this.damaged.set(path.basename(pack.file), error);
	}

	close(): void {
		for (const pack of this.readers.values()) {
			pack.close();
		}
		this.readers.clear();
		this.ordered = [];
		this.listed = undefined;
	}

	private ensureListed(): void {
		if (!this.listed) {
			this.refresh(true);
		}
	}

	/** Opens new packs, closes removed ones; returns whether a listed pack vanished before it was opened. */
	private list(): boolean {
		let names: string[];
		try {
			names = fs.readdirSync(this.dir).filter((name) => packName.test(name));
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
				throw error;
			}
			names = [];
		}
		const present = new Set(names);
		let vanished = false;
		for (const name of names) {
			if (this.readers.has(name) || this.damaged.has(name)) {
				continue;
			}
			try {
				this.readers.set(name, PackReader.open(path.join(this.dir, name)));
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
					vanished = true;
				} else if (isDeskError(error, 'store.corrupt')) {
					this.damaged.set(name, error);
				} else {
					throw error;
				}
			}
		}
		for (const [name, pack] of this.readers) {
			if (!present.has(name)) {
				pack.close();
				this.readers.delete(name);
			}
		}
		for (const name of this.damaged.keys()) {
			if (!present.has(name)) {
				this.damaged.delete(name);
			}
		}
		this.order();
		return vanished;
	}

	private order(): void {
		this.ordered = [...this.readers.values()].sort((a, b) => b.count - a.count);
	}
}

/**
 * Which packs to merge so that the packs left form a geometric progression (each at least twice
 * the size of all smaller ones together, as `git repack --geometric=2` keeps them): the largest `j`
 * whose pack is smaller than twice the packs below it, and every pack up to it. Every byte is then
 * rewritten O(log n) times over the life of the store, and the number of packs stays O(log n).
 * At least the two smallest are merged.
 */
export function packsToMerge<T extends { bytes: number }>(packs: readonly T[]): T[] {
	const sorted = [...packs].sort((a, b) => a.bytes - b.bytes);
	let below = 0;
	let split = 1;
	for (let j = 1; j < sorted.length; j++) {
		below += sorted[j - 1]!.bytes;
		if (sorted[j]!.bytes < 2 * below) {
			split = j;
		}
	}
	return sorted.slice(0, Math.min(split + 1, sorted.length));
}
