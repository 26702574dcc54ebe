/**
 * Launch-card suggestions at scale (issue 5): a project of 200 member assets, each with 40 text
 * files filling the caps (64 KiB a file, 256 KiB an asset). Measures the index build (time and
 * memory), suggestions for 100-word tickets (median and p95 over 200 tickets once the index is
 * built; target p95 under 30 ms), and the update after one asset's new version (target under 100 ms).
 * The baseline of the same run is the cost of tokenizing one ticket, the floor of any suggestion.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../server/src/core/logger';
import { Desk } from '../server/src/desk';
import { ticketTerms } from '../server/src/search/tokenizer';
import { makeBenchRepo } from './benchRepo';

export interface SuggestBenchResult {
	members: number;
	textMb: number;
	buildMs: number;
	buildHeapMb: number;
	p50Ms: number;
	p95Ms: number;
	updateMs: number;
	tokenizeMs: number;
}

/** A pseudo-vocabulary with a Zipf-like spread, so some words are common and most are rare. */
function vocabulary(size: number, seed = 7): { words: string[]; pick: () => string } {
	let state = seed;
	const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
	const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'qui', 'del', 'nor', 'pha', 'zen', 'ul', 'gri', 'sto', 'be', 'cra'];
	const words = Array.from({ length: size }, () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join(''));
	return { words, pick: () => words[Math.floor(size * random() ** 3)]! };
}

const percentile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

export async function benchSuggest(members = 200, filesPerAsset = 40): Promise<SuggestBenchResult> {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-bench-suggest-'));
	try {
		const repo = makeBenchRepo(path.join(root, 'repo'));
		const desk = await Desk.open({ libraryDir: path.join(root, 'library'), logger: silentLogger });
		try {
			await desk.library.importDir({ dir: repo, project: 'bench', main: true });
			const vocab = vocabulary(6000);
			const fileBytes = Math.floor((256 * 1024) / filesPerAsset);
			let textBytes = 0;
			const ids: string[] = [];
			for (let a = 0; a < members; a++) {
				const { asset } = await desk.library.newAsset({ name: `asset-${a}`, project: 'bench', madeBy: 'user' });
				for (let f = 0; f < filesPerAsset; f++) {
					let text = '';
					while (text.length < fileBytes) {
						text += `${vocab.pick()} `;
					}
					fs.writeFileSync(path.join(asset.working_dir, `file-${f}.md`), text);
					textBytes += text.length;
				}
				await desk.library.snapshot(asset.id, { madeBy: 'user' });
				ids.push(asset.id);
			}
			const launches = await desk.launches(repo);
			const ticket = () => Array.from({ length: 100 }, () => vocab.pick()).join(' ');

			global.gc?.();
			const heapBefore = process.memoryUsage().heapUsed;
			let started = process.hrtime.bigint();
			await launches.suggest(ticket());
			const buildMs = Number(process.hrtime.bigint() - started) / 1e6;
			global.gc?.();
			const buildHeapMb = (process.memoryUsage().heapUsed - heapBefore) / (1024 * 1024);

			const times: number[] = [];
			const tokenizeTimes: number[] = [];
			for (let i = 0; i < 200; i++) {
				const text = ticket();
				started = process.hrtime.bigint();
				ticketTerms(text);
				tokenizeTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
				started = process.hrtime.bigint();
				await launches.suggest(text);
				times.push(Number(process.hrtime.bigint() - started) / 1e6);
			}

			// One asset gets a new version; the next suggestion brings the index up to date.
			const changed = desk.library.getAsset(ids[0]!);
			fs.writeFileSync(path.join(changed.working_dir, 'file-0.md'), 'zeppelin '.repeat(200));
			await desk.library.snapshot(changed.id, { madeBy: 'user' });
			started = process.hrtime.bigint();
			const after = await launches.suggest('zeppelin');
			const updateMs = Number(process.hrtime.bigint() - started) / 1e6;
			if (after[0]?.asset_id !== changed.id) {
				throw new Error('the updated asset was not found after its new version');
			}
			return {
				members,
				textMb: textBytes / (1024 * 1024),
				buildMs,
				buildHeapMb,
				p50Ms: percentile(times, 0.5),
				p95Ms: percentile(times, 0.95),
				updateMs,
				tokenizeMs: percentile(tokenizeTimes, 0.5),
			};
		} finally {
			desk.close();
		}
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
}

export function formatSuggest(r: SuggestBenchResult): string {
	return [
		`suggestions: ${r.members} members, ${r.textMb.toFixed(0)} MB of text`,
		`  index build ${r.buildMs.toFixed(0)} ms, heap +${r.buildHeapMb.toFixed(0)} MB`,
		`  suggestions for a 100-word ticket: p50 ${r.p50Ms.toFixed(1)} ms, p95 ${r.p95Ms.toFixed(1)} ms (target p95 < 30 ms: ${r.p95Ms < 30 ? 'met' : 'NOT met'}); tokenizing the ticket alone ${r.tokenizeMs.toFixed(2)} ms`,
		`  after one asset's new version: ${r.updateMs.toFixed(1)} ms (target < 100 ms: ${r.updateMs < 100 ? 'met' : 'NOT met'})`,
	].join('\n');
}
