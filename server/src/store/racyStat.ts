/**
 * A file changed this close to a look at its stat may change again within the same timestamp tick,
 * keeping its size and times: its stat vouches for nothing next time ("racy" files, as git calls
 * them). Timestamps here have millisecond resolution or better and tick every few milliseconds; on
 * a file system with whole-second timestamps the window is two seconds.
 */
const racyWindowMs = 100;
const coarseRacyWindowMs = 2_000;

/** Whether a file changed at `changedMs` (an mtime or ctime) too close to `lookedAtMs` for its stat to be trusted later. */
export function changedTooRecently(changedMs: number, lookedAtMs: number): boolean {
	const window = changedMs % 1000 === 0 ? coarseRacyWindowMs : racyWindowMs;
	return lookedAtMs - changedMs <= window;
}
