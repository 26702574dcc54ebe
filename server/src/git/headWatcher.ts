import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Tells when a checkout's HEAD or refs may have moved: watches the work tree's git folder (HEAD),
 * the common folder (packed-refs) and its `refs/` recursively — for a linked worktree or a
 * submodule those are not `<top>/.git` — and calls back once per burst of changes (git writes
 * through lock files and renames, several events a command). What moved is read afterwards; the
 * watcher only says "look again".
 */
export class HeadWatcher {
	private readonly watchers: fs.FSWatcher[] = [];
	private timer: NodeJS.Timeout | undefined;

	constructor(
		folders: { gitDir: string; commonDir: string },
		private readonly onMove: () => void,
		private readonly debounceMs = 250,
	) {
		const watch = (target: string, recursive: boolean) => {
			try {
				const watcher = fs.watch(target, { recursive, persistent: false }, (_event, name) => {
					if (name === null || !String(name).endsWith('.lock')) {
						this.schedule();
					}
				});
				watcher.on('error', () => watcher.close());
				this.watchers.push(watcher);
			} catch {
				// Refs that do not exist yet: nothing to watch there.
			}
		};
		watch(folders.gitDir, false);
		if (folders.commonDir !== folders.gitDir) {
			watch(folders.commonDir, false);
		}
		watch(path.join(folders.commonDir, 'refs'), true);
	}

	close(): void {
		clearTimeout(this.timer);
		for (const watcher of this.watchers) {
			watcher.close();
		}
		this.watchers.length = 0;
	}

	private schedule(): void {
		clearTimeout(this.timer);
		this.timer = setTimeout(this.onMove, this.debounceMs);
		this.timer.unref();
	}
}
