/**
 * A least-recently-used map bounded by the bytes of its values rather than their number, so that
 * a cache of git objects holds many small trees or a few large blobs within the same memory.
 */
export class ByteLru<K, V> {
	private readonly entries = new Map<K, { value: V; bytes: number }>();
	private used = 0;

	/** `budget` bytes in all; a value larger than `budget / 4` is never kept (it would flush the rest). */
	constructor(readonly budget: number) {}

	get(key: K): V | undefined {
		const entry = this.entries.get(key);
		if (entry === undefined) {
			return undefined;
		}
		// Map keeps insertion order: re-inserting makes this the newest entry.
		this.entries.delete(key);
		this.entries.set(key, entry);
		return entry.value;
	}

	set(key: K, value: V, bytes: number): void {
		if (bytes > this.budget / 4) {
			return;
		}
		const old = this.entries.get(key);
		if (old) {
			this.used -= old.bytes;
			this.entries.delete(key);
		}
		this.entries.set(key, { value, bytes });
		this.used += bytes;
		for (const [oldest, entry] of this.entries) {
			if (this.used <= this.budget) {
				break;
			}
			this.entries.delete(oldest);
			this.used -= entry.bytes;
		}
	}

	delete(key: K): void {
		const entry = this.entries.get(key);
		if (entry) {
			this.entries.delete(key);
			this.used -= entry.bytes;
		}
	}

	clear(): void {
		this.entries.clear();
		this.used = 0;
	}

	get bytes(): number {
		return this.used;
	}

	get size(): number {
		return this.entries.size;
	}
}
