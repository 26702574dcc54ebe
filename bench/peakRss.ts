/**
 * Preload for benchmarks (`node --require out/bench/peakRss.js …`): Node cannot read a child's
 * rusage, so the child reports its own. When the process exits, its peak resident set
 * (`process.resourceUsage().maxRSS`, in KB) is written to the file named by DESK_BENCH_RSS_FILE.
 * A process killed by a signal writes nothing.
 */
import * as fs from 'node:fs';

const target = process.env['DESK_BENCH_RSS_FILE'];
if (target) {
	process.on('exit', () => {
		try {
			fs.writeFileSync(target, String(process.resourceUsage().maxRSS));
		} catch {
			// The measurement is lost; the benchmark reports the peak as unknown.
		}
	});
}
