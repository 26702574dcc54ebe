import * as fs from 'node:fs';
import * as path from 'node:path';

/** The longest a burst of events delays a look. */
const maxBurstMs = 1000;

/**
 * Tells when another process (the `desk` command line, a second window) wrote a durable database
 * this process has open: watches the database's folder for its file and journal, and once a burst
 * of events is over compares the database's outside version (moved by other processes' writes only,
 * so this process's own writes tell nobody). Nothing runs while nobody writes: no timer, no poll.
 * The watch does not keep the process alive.
 */
export class OutsideChangeWatcher {
	private watcher: fs.FSWatcher | undefined;
	private timer: NodeJS.Timeout | undefined;
	private seen: number | undefined;
	private burstStart = 0;

	constructor(
		file: string,
		/** The database's outside version; undefined while it is not open here. */
		private readonly version: () => number | undefined,
		private readonly onChange: () => void,
		private readonly onError: (error: unknown) => void,
		private readonly debounceMs = 200,
	) {
		this.seen = this.read();
		const name = path.basename(file);
		try {
			this.watcher = fs.watch(path.dirname(file), { persistent: false }, (_event, changed) => {
				// The journal, and the base file a checkpoint replaces; not the lock, nor other files there.
				if (changed === null || (String(changed).startsWith(name) && !String(changed).endsWith('.lock'))) {
					this.schedule();
				}
			});
			this.watcher.on('error', () => this.close());
		} catch (error) {
			onError(error);
		}
	}

	close(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
		this.watcher?.close();
		this.watcher = undefined;
	}

	private schedule(): void {
		const now = Date.now();
		// A process writing without a pause (an agent at work in another window) is looked at once a
		// second, not only when it stops.
		if (this.timer !== undefined && now - this.burstStart >= maxBurstMs) {
			return;
		}
		if (this.timer === undefined) {
			this.burstStart = now;
		}
		clearTimeout(this.timer);
		this.timer = setTimeout(() => this.look(), this.debounceMs);
		this.timer.unref();
	}

	private look(): void {
		this.timer = undefined;
		const now = this.read();
		if (now === undefined || now === this.seen) {
			return;
		}
		this.seen = now;
		this.onChange();
	}

	private read(): number | undefined {
		try {
			return this.version();
		} catch (error) {
			// A database found damaged says so on its next use; the watcher only misses this look.
			this.onError(error);
			return undefined;
		}
	}
}
