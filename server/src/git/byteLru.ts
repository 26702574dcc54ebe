/**
 * A cache bounded by the bytes of its values rather than their number, so that a cache of git
 * objects holds many small trees or a few large blobs within the same memory. Eviction is by
 * second chance (CLOCK): a lookup only marks its entry used, which keeps lookups as cheap as a
 * Map's (a pack walk makes hundreds of thousands), and the oldest entries not used since they were
 * last passed over go first.
 */
export class ByteLru<K, V> {
	private readonly entries = new Map<K, { value: V; bytes: number; used: boolean }>();
	private used = 0;

	/** `budget` bytes in all; a value larger than `budget / 4` is never kept (it would flush the rest). */
	constructor(readonly budget: number) {}

	get(key: K): V | undefined {
		const entry = this.entries.get(key);
		if (entry === undefined) {
			return undefined;
		}
		entry.used = true;
		return entry.value;
	}

	set(key: K, value: V, bytes: number): void {
		if (bytes > this.budget / 4) {
			return;
		}
		this.delete(key);
		this.entries.set(key, { value, bytes, used: false });
		this.used += bytes;
		// Each entry is passed over at most twice: once to clear its mark (and go to the back), then evicted.
		let budgetOfSteps = this.entries.size * 2;
		while (this.used > this.budget && budgetOfSteps-- > 0) {
			const [oldest, entry] = this.entries.entries().next().value as [K, { value: V; bytes: number; used: boolean }];
			this.entries.delete(oldest);
			if (entry.used && oldest !== key) {
				entry.used = false;
				this.entries.set(oldest, entry);
			} else {
				this.used -= entry.bytes;
			}
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
