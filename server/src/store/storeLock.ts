import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { DeskError } from '../core/errors';
import { isAlive } from '../core/processes';

/**
 * The write lock of a store, shared by every process that opens it (the desk servers of several
 * VS Code windows, the `desk` command line). It is held only for the length of one write or
 * checkpoint, so writers take turns instead of shutting each other out.
 *
 * The lock is a file created with O_EXCL holding the owner's pid. A lock whose process is gone,
 * or that is older than any write could take, was left by a killed writer and is taken over.
 * Within one process the lock is re-entrant.
 */
export class StoreLock {
	private depth = 0;
	/** What this holder wrote into the lock file (pid and a random token), so that release never
	 * removes another holder's lock: an inode number can be reused at once, a token cannot. */
	private heldContent: string | undefined;

	constructor(
		private readonly file: string,
		private readonly timeoutMs: number,
		/** A lock older than this was left behind: no write or checkpoint holds it that long. */
		private readonly staleAfterMs = 60_000,
	) {}

	/** Runs `body` holding the lock, waiting up to the timeout for another process to release it. */
	withLock<T>(body: () => T): T {
		this.acquire();
		try {
			return body();
		} finally {
			this.release();
		}
	}

	private acquire(): void {
		if (this.depth > 0) {
			this.depth++;
			return;
		}
		const deadline = Date.now() + this.timeoutMs;
		let pause = 0.25;
		for (;;) {
			try {
				const fd = fs.openSync(
					this.file,
					fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
					0o600,
				);
				const content = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
				fs.writeSync(fd, content);
				this.heldContent = content;
				fs.closeSync(fd);
				this.depth = 1;
				return;
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
					throw new DeskError('store.io', `Could not create the lock ${this.file}: ${(error as Error).message}`, {
						file: this.file,
					});
				}
			}
			const owner = readOwner(this.file);
			if (owner.state === 'gone') {
				continue;
			}
			// A lock whose process lives is never taken, however old: that process may only be slow.
			// One with no readable pid after a while was left by a writer killed before it wrote it.
			if (
				owner.state === 'stale' ||
				(owner.pid !== undefined && !isAlive(owner.pid)) ||
				(owner.pid === undefined && owner.ageMs > this.staleAfterMs)
			) {
				// Left by a writer that was killed while holding it.
				takeOver(this.file, owner);
				continue;
			}
			if (Date.now() >= deadline) {
				throw new DeskError('store.locked', `The store is busy: process ${owner.pid ?? '?'} holds ${this.file}.`, {
					file: this.file,
					pid: owner.pid,
				});
			}
			sleepSync(pause);
			// Writes hold the lock for about a millisecond: poll often, so no waiter starves.
			pause = Math.min(pause * 2, 2);
		}
	}

	private release(): void {
		if (--this.depth === 0) {
			try {
				if (fs.readFileSync(this.file, 'utf8') === this.heldContent) {
					fs.rmSync(this.file, { force: true });
				}
			} catch {
				// Gone already.
			}
			this.heldContent = undefined;
		}
	}
}

interface Owner {
	state: 'gone' | 'stale' | 'held';
	pid?: number;
	ageMs: number;
	/** Identity of the lock file that was read, so that a takeover moves only that one. */
	ino?: number;
}

function readOwner(file: string): Owner {
	let text: string;
	let stat: fs.Stats;
	try {
		stat = fs.statSync(file);
		text = fs.readFileSync(file, 'utf8');
	} catch {
		return { state: 'gone', ageMs: 0 };
	}
	const ageMs = Date.now() - stat.mtimeMs;
	const pid = Number.parseInt(text.trim(), 10);
	if (text.endsWith('\n') && Number.isSafeInteger(pid) && pid > 0) {
		return { state: 'held', pid, ageMs, ino: stat.ino };
	}
	// Created but its pid not written yet (a writer between open and write), or written by one
	// killed in between: give it a moment before calling it stale.
	return { state: ageMs > 1_000 ? 'stale' : 'held', ageMs, ino: stat.ino };
}

/**
 * Removes a stale lock. It is renamed aside under a unique name first and checked to be the file
 * judged stale; if another process replaced it in between with a live lock, that lock is put back.
 */
function takeOver(file: string, judged: Owner): void {
	const aside = `${file}.stale-${process.pid}-${Date.now()}`;
	try {
		fs.renameSync(file, aside);
	} catch {
		return; // Someone else took it over first.
	}
	if (fs.statSync(aside).ino !== judged.ino) {
		try {
			fs.linkSync(aside, file);
		} catch {
			// A third process created a lock meanwhile; it holds the lock now.
		}
	}
	fs.rmSync(aside, { force: true });
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Writes are synchronous (sql.js is), so waiting for the lock is too; it is short by design. */
function sleepSync(ms: number): void {
	Atomics.wait(sleeper, 0, 0, ms);
}
