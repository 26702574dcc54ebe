import * as fs from 'node:fs';
import { DeskError } from '../core/errors';

/**
 * One writer per store. The lock is a file created with O_EXCL holding the owner's pid; a lock
 * whose process is gone is stale and taken over. A second desk waits up to `timeoutMs` for the lock
 * and then fails with `store.locked`, naming the process that holds it.
 */
export class StoreLock {
	private constructor(private readonly file: string, private released = false) {}

	static async acquire(file: string, timeoutMs: number): Promise<StoreLock> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			try {
				const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
				fs.writeSync(fd, `${process.pid}\n`);
				fs.fsyncSync(fd);
				fs.closeSync(fd);
				return new StoreLock(file);
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
					throw new DeskError('store.io', `Could not create the lock ${file}: ${(error as Error).message}`, { file });
				}
			}
			const owner = readOwner(file);
			if (owner === undefined || !isAlive(owner)) {
				// The owner died without releasing it (SIGKILL, power cut). Take it over.
				fs.rmSync(file, { force: true });
				continue;
			}
			if (Date.now() >= deadline) {
				throw new DeskError('store.locked', `The store is in use by process ${owner} (lock ${file}).`, { file, pid: owner });
			}
			await new Promise((resolve) => setTimeout(resolve, 100));
		}
	}

	release(): void {
		if (this.released) {
			return;
		}
		this.released = true;
		if (readOwner(this.file) === process.pid) {
			fs.rmSync(this.file, { force: true });
		}
	}
}

function readOwner(file: string): number | undefined {
	try {
		const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
		return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
	} catch {
		return undefined;
	}
}

function isAlive(pid: number): boolean {
	if (pid === process.pid) {
		return true;
	}
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}
